"""RunLogger: the one object a trainer or evaluator logs through; it fans out to the enabled sinks.

Failure policy. At start, a sink in mode "on" that cannot start raises SinkStartError (the user asked
for it explicitly); in mode "auto" it is skipped with one warning. During the run, a sink whose call
raises is disabled with one warning and the other sinks go on: a flaky tracking server must not
kill a long training run. Bad input from the caller (a non-numeric metric, a negative step, a
missing artifact file) is an exception to the caller, before any sink sees it.
"""

from __future__ import annotations

import json
import logging
import operator
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import Any

from prometheus_client import CollectorRegistry
from rich.console import Console

from coding_framework.monitor.config import MonitorConfig, SinkMode
from coding_framework.monitor.console import ConsoleSink, ProgressHandle, training_progress
from coding_framework.monitor.errors import MonitorError, RunDirInUseError, SinkStartError
from coding_framework.monitor.jsonl import METRICS_FILE, RUN_FILE, JsonlSink, last_logged_step
from coding_framework.monitor.sink import RunStatus, Sink
from coding_framework.monitor.state import RunState
from coding_framework.monitor.system import SystemMetricsSampler, SystemMetricsThread
from coding_framework.monitor.values import coerce_metrics, flatten_params

PLOTS_DIR = "plots"

log = logging.getLogger(__name__)


def _logged_data(run_dir: Path) -> list[str]:
    """What a previous run left in `run_dir` that a new run would mix with: metric lines, params, tags.

    A run that only started (e.g. it stopped at a sink start error) left none of these, and the
    same run dir can be used again without `resume`.
    """
    found = []
    metrics = run_dir / METRICS_FILE
    if metrics.exists() and metrics.stat().st_size > 0:
        found.append(METRICS_FILE)
    try:
        info = json.loads((run_dir / RUN_FILE).read_text())
    except (OSError, ValueError):
        info = {}
    if isinstance(info, dict) and (info.get("params") or info.get("tags")):
        found.append(f"{RUN_FILE} params/tags")
    return found


class RunLogger(AbstractContextManager["RunLogger"]):
    """Logs one run's params, per-step metrics, tags and artifacts to every enabled sink.

    Use as a context manager: the run ends FINISHED, FAILED on an exception, KILLED on Ctrl-C.
    Thread-safe: the background system-metrics thread and the trainer may log concurrently.
    """

    def __init__(
        self,
        config: MonitorConfig,
        *,
        console: Console | None = None,
        prometheus_registry: CollectorRegistry | None = None,
        extra_sinks: Sequence[Sink] = (),
    ) -> None:
        """`console`: where console output goes (default: a new rich Console on stdout).
        `prometheus_registry`: registry for the gauges (default: a new one, see `prometheus_registry`).
        `extra_sinks`: further Sink objects of the caller's, already started; they fail like "auto" ones."""
        self.config = config
        self.run_dir = config.run_dir
        self.name = config.name
        existing = _logged_data(self.run_dir) if self.run_dir.exists() else []
        if existing and not config.resume:
            raise RunDirInUseError(
                f"{self.run_dir} already holds a logged run ({', '.join(existing)}); set resume=True to "
                "continue it, or choose a new run_dir"
            )
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.resumed_after: int | None = (
            last_logged_step(self.run_dir / METRICS_FILE) if config.resume else None
        )
        """Highest step logged before this process resumed the run; steps up to it are skipped."""
        self.console = console if console is not None else Console()
        self.prometheus_registry = (
            prometheus_registry if prometheus_registry is not None else CollectorRegistry()
        )
        self.disabled: dict[str, str] = {}
        """Sinks that were switched off (could not start in "auto" mode, or failed later) → why."""
        self._state = RunState(self.run_dir, load=config.resume)
        self._lock = threading.RLock()
        self._sinks: list[Sink] = []
        self._closed = False
        self._last_step: int | None = None
        self._skipped_resumed_steps = False
        try:
            self._start_sinks(list(extra_sinks))
        except BaseException:
            self._close_sinks("FAILED")
            raise
        self._sampler = SystemMetricsSampler()
        self._system_thread: SystemMetricsThread | None = None
        if config.system_metrics_interval_s is not None:
            self._system_thread = SystemMetricsThread(
                config.system_metrics_interval_s, self._log_background_sample, self._sampler
            ).start()
        console_sink = self.sink("console")
        if isinstance(console_sink, ConsoleSink):
            console_sink.announce(str(self.run_dir), self.resumed_after, self.active_sinks)

    # ----------------------------------------------------------------------------------- sinks

    def _start_sinks(self, extra: list[Sink]) -> None:
        cfg = self.config
        self._start("console", cfg.console,
                    lambda: ConsoleSink(self.console, self.name, cfg.console_metrics, cfg.console_every))
        self._start("jsonl", cfg.jsonl, lambda: JsonlSink(self.run_dir, self.name, resume=cfg.resume))

        def mlflow() -> Sink:
            from coding_framework.monitor.mlflow_sink import MlflowSink

            uri = cfg.mlflow_tracking_uri or os.environ.get("MLFLOW_TRACKING_URI", "")
            return MlflowSink(run_dir=self.run_dir, run_name=self.name, experiment=cfg.experiment,
                              tracking_uri=uri, state=self._state, resume=cfg.resume)

        def wandb() -> Sink:
            from coding_framework.monitor.wandb_sink import WandbSink

            return WandbSink(run_dir=self.run_dir, run_name=self.name, project=cfg.experiment,
                             state=self._state, resume=cfg.resume)

        def prometheus() -> Sink:
            from coding_framework.monitor.prometheus_sink import PrometheusSink

            return PrometheusSink(registry=self.prometheus_registry, namespace=cfg.prometheus_namespace,
                                  run_name=self.name, port=cfg.prometheus_port, addr=cfg.prometheus_addr)

        self._start("mlflow", cfg.mlflow, mlflow)
        self._start("wandb", cfg.wandb, wandb)
        self._start("prometheus", cfg.prometheus, prometheus)
        self._sinks.extend(extra)

    def _start(self, name: str, mode: SinkMode, factory: Callable[[], Sink]) -> None:
        if mode == "off":
            return
        try:
            sink = factory()
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}"
            if isinstance(exc, ImportError):
                reason += f" (install it: pip install 'coding-framework-monitor[{name}]')"
            if mode == "on":
                raise SinkStartError(
                    f"the {name} sink could not start: {reason}. It was asked for with {name}='on'; fix the "
                    f"cause, or set {name}='auto' to run without it when it is unavailable."
                ) from exc
            log.warning("monitor: %s sink is off for this run: it could not start (%s). Set %s='off' to "
                        "silence this warning, or 'on' to make it an error.", name, reason, name)
            self.disabled[name] = f"could not start: {reason}"
            return
        self._sinks.append(sink)

    def _fan_out(self, method: str, *args: Any) -> None:
        with self._lock:
            if self._closed:
                raise MonitorError(f"RunLogger for {self.run_dir} is closed; {method} after close() is a bug")
            for sink in list(self._sinks):
                try:
                    getattr(sink, method)(*args)
                except Exception as exc:
                    self._disable(sink, f"{method} failed: {type(exc).__name__}: {exc}")

    def _disable(self, sink: Sink, reason: str) -> None:
        self._sinks.remove(sink)
        self.disabled[sink.name] = reason
        log.warning("monitor: %s sink disabled for the rest of the run (%s); the other sinks go on",
                    sink.name, reason)
        try:
            sink.close("FAILED")
        except Exception:  # it failed once already; its cleanup failing too changes nothing
            log.debug("closing the failed %s sink also failed", sink.name, exc_info=True)

    @property
    def active_sinks(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(sink.name for sink in self._sinks)

    def sink(self, name: str) -> Sink | None:
        """The active sink of that name (e.g. "mlflow" for its `run_id`), or None."""
        with self._lock:
            return next((sink for sink in self._sinks if sink.name == name), None)

    # ------------------------------------------------------------------------------- logging

    def log_params(self, params: Mapping[str, Any] | Any) -> None:
        """Hyperparameters; nested mappings and dataclasses are flattened to `a.b.c` keys."""
        self._fan_out("log_params", flatten_params(params))

    def log_metrics(self, metrics: Mapping[str, Any], step: int) -> bool:
        """Log `metrics` (name → real number) at training `step` (int >= 0).

        Returns False, logging nothing, when the run was resumed and `step` is not after the last
        step logged before the resume (those steps are already in every sink), or when `metrics` is empty.
        """
        step = self._check_step(step)
        values = coerce_metrics(metrics)
        if not values:
            return False
        with self._lock:
            if self.resumed_after is not None and step <= self.resumed_after:
                if not self._skipped_resumed_steps:
                    self._skipped_resumed_steps = True
                    log.info("monitor: skipping steps <= %d: they were logged before this run resumed",
                             self.resumed_after)
                return False
            self._fan_out("log_metrics", values, step)
            self._last_step = step
        return True

    @staticmethod
    def _check_step(step: Any) -> int:
        if isinstance(step, bool):
            raise TypeError("step must be an integer, not a bool")
        try:
            step = operator.index(step)
        except TypeError:
            raise TypeError(f"step must be an integer, got {type(step).__name__} {step!r}") from None
        if step < 0:
            raise ValueError(f"step must be >= 0, got {step}")
        return step

    @property
    def current_step(self) -> int:
        """The last step logged by this process, else the last one before the resume, else 0."""
        with self._lock:
            if self._last_step is not None:
                return self._last_step
            return self.resumed_after if self.resumed_after is not None else 0

    def log_system_metrics(self, step: int | None = None) -> dict[str, float]:
        """Sample CPU/memory/GPU now (see `system`), log it at `step` (default: current_step), return it."""
        sample = self._sampler.sample()
        self.log_metrics(sample, self.current_step if step is None else step)
        return sample

    def _log_background_sample(self, sample: dict[str, float]) -> None:
        with self._lock:
            if not self._closed:
                self.log_metrics(sample, self.current_step)

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        """Short labels of the run (values are converted with str)."""
        clean = {}
        for key, value in tags.items():
            if not isinstance(key, str) or not key:
                raise ValueError(f"tag names must be non-empty strings, got {key!r}")
            clean[key] = str(value)
        self._fan_out("set_tags", clean)

    def log_artifact(self, path: Path | str, artifact_path: str | None = None) -> None:
        """Store a file or directory with the run (MLflow artifacts, W&B files), under `artifact_path`."""
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"artifact {path} does not exist")
        if artifact_path is not None:
            parts = PurePosixPath(artifact_path).parts
            if not parts or PurePosixPath(artifact_path).is_absolute() or ".." in parts:
                raise ValueError(
                    f"artifact_path must be a relative folder like 'plots', got {artifact_path!r}"
                )
        self._fan_out("log_artifact", path, artifact_path)

    # ----------------------------------------------------------------------------- helpers

    def progress(
        self, total: int, *, description: str = "train", completed: int = 0
    ) -> AbstractContextManager[ProgressHandle]:
        """A progress bar on this logger's console; step lines printed meanwhile appear above it."""
        return training_progress(total, description=description, completed=completed, console=self.console)

    def write_training_curves(
        self, series: Sequence[str] | None = None, *, filename: str = "training_curves.png", smooth: int = 1,
    ) -> Path:
        """Plot series from this run's metrics.jsonl into `<run_dir>/plots/<filename>` and log it as an
        artifact under `plots`. Needs the jsonl sink (now or earlier in the run)."""
        from coding_framework.monitor.plots import plot_training_curves

        out = plot_training_curves(self.run_dir / METRICS_FILE, self.run_dir / PLOTS_DIR / filename, series,
                                   smooth=smooth, title=self.name)
        self.log_artifact(out, PLOTS_DIR)
        return out

    # --------------------------------------------------------------------------------- end

    def close(self, status: RunStatus = "FINISHED") -> None:
        """Stop the background sampler and close every sink; a second call does nothing."""
        if status not in ("FINISHED", "FAILED", "KILLED"):
            raise ValueError(f"status must be FINISHED, FAILED or KILLED, got {status!r}")
        if self._system_thread is not None:
            # Outside the lock: the sampler thread takes it to log, and join must not wait on us.
            self._system_thread.stop()
        with self._lock:
            if self._closed:
                return
            self._close_sinks(status)
            self._closed = True

    def _close_sinks(self, status: RunStatus) -> None:
        for sink in reversed(self._sinks):
            try:
                sink.close(status)
            except Exception as exc:
                log.warning("monitor: closing the %s sink failed (%s: %s)",
                            sink.name, type(exc).__name__, exc)
        self._sinks.clear()

    @property
    def closed(self) -> bool:
        return self._closed

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            self.close("FINISHED")
        elif issubclass(exc_type, KeyboardInterrupt):
            self.close("KILLED")
        else:
            self.close("FAILED")


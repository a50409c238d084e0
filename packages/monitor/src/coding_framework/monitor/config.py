"""What a run logs and where: one frozen dataclass, validated on construction."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

SinkMode = Literal["off", "auto", "on"]
"""off: not used. auto: used if it starts; if it cannot, one warning and the run goes on without it.
on: required; if it cannot start, RunLogger raises SinkStartError."""

_PROMETHEUS_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


@dataclass(frozen=True)
class MonitorConfig:
    """Configuration of one run's logging. Every sink writes inside `run_dir` unless told otherwise."""

    run_dir: Path
    """Directory of the run: metrics.jsonl, run.json, mlflow.db, wandb/, plots/ and the resume state."""
    run_name: str = ""
    """Name of the run in MLflow, W&B, Prometheus labels and the console; empty: the run dir's name."""
    experiment: str = "coding-framework"
    """MLflow experiment name and W&B project."""
    resume: bool = False
    """Continue the run already logged in run_dir: append to its files, reuse its MLflow and W&B run ids,
    and skip steps it already logged. Without it, a run dir that already holds a run is an error."""

    console: SinkMode = "on"
    """Per-step metric line on the terminal (rich)."""
    console_metrics: tuple[str, ...] = ()
    """Metrics shown on the console line, in this order; empty: every metric not under `system/`."""
    console_every: int = 1
    """Print the console line every this many steps."""

    jsonl: SinkMode = "on"
    """metrics.jsonl (one line per log_metrics call, flushed and fsynced) and run.json (params, tags)."""

    mlflow: SinkMode = "auto"
    """MLflow tracking: params, per-step metrics, artifacts."""
    mlflow_tracking_uri: str = ""
    """Tracking URI; empty: $MLFLOW_TRACKING_URI if set, else sqlite:///<run_dir>/mlflow.db with
    artifacts under <run_dir>/mlflow-artifacts."""

    wandb: SinkMode = "off"
    """Weights & Biases: offline (files under <run_dir>/wandb) unless WANDB_API_KEY or WANDB_MODE says
    otherwise."""

    prometheus: SinkMode = "off"
    """Gauges holding the latest value of every metric, in a CollectorRegistry the caller can expose."""
    prometheus_port: int | None = None
    """Also serve the registry over HTTP on this port (0: any free port); None: no server of our own."""
    prometheus_addr: str = "127.0.0.1"
    """Address the HTTP exposition binds to; use 0.0.0.0 for a Prometheus server on another host."""
    prometheus_namespace: str = "cf"
    """Prefix of every gauge name (`<namespace>_<metric>`)."""

    system_metrics_interval_s: float | None = None
    """Sample CPU, memory and GPU every this many seconds in a background thread and log them at the
    current step; None: only when `log_system_metrics()` is called."""

    def __post_init__(self) -> None:
        if not isinstance(self.run_dir, (str, Path)) or not str(self.run_dir).strip():
            raise ValueError(f"run_dir must be a directory path, got {self.run_dir!r}")
        object.__setattr__(self, "run_dir", Path(self.run_dir))
        if self.run_dir.exists() and not self.run_dir.is_dir():
            raise ValueError(f"run_dir {self.run_dir} exists and is not a directory; choose another path")
        if not isinstance(self.run_name, str):
            raise ValueError(f"run_name must be a string, got {self.run_name!r}")
        if not isinstance(self.experiment, str) or not self.experiment.strip():
            raise ValueError("experiment must be a non-empty name (MLflow experiment / W&B project)")
        modes = get_args(SinkMode)
        for field in ("console", "jsonl", "mlflow", "wandb", "prometheus"):
            value = getattr(self, field)
            if value not in modes:
                raise ValueError(f"{field}={value!r} is not a sink mode; use one of {', '.join(modes)}")
        object.__setattr__(self, "console_metrics", tuple(self.console_metrics))
        if not all(isinstance(m, str) and m for m in self.console_metrics):
            raise ValueError(f"console_metrics must be metric names, got {self.console_metrics!r}")
        every = self.console_every
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise ValueError(f"console_every must be an integer >= 1 (steps), got {every!r}")
        if self.mlflow_tracking_uri and self.mlflow == "off":
            raise ValueError(
                "mlflow_tracking_uri is set but mlflow='off'; set mlflow='on' (or 'auto') or drop the URI"
            )
        if self.prometheus_port is not None:
            if self.prometheus == "off":
                raise ValueError(
                    "prometheus_port is set but prometheus='off'; set prometheus='on' or drop the port"
                )
            port = self.prometheus_port
            if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
                raise ValueError(
                    f"prometheus_port must be an integer in 0..65535 (0: any free port), got {port!r}"
                )
        if not _PROMETHEUS_NAME.match(self.prometheus_namespace):
            raise ValueError(
                f"prometheus_namespace {self.prometheus_namespace!r} is not a Prometheus metric name prefix; "
                "use letters, digits, '_' and ':' and do not start with a digit"
            )
        interval = self.system_metrics_interval_s
        if interval is not None:
            numeric = isinstance(interval, (int, float)) and not isinstance(interval, bool)
            if not numeric or not math.isfinite(interval):
                raise ValueError(f"system_metrics_interval_s must be seconds or None, got {interval!r}")
            if interval < 0.1:
                raise ValueError(
                    f"system_metrics_interval_s={interval} is too short; sample at most every 0.1 s "
                    "(or use None and call log_system_metrics())"
                )

    @property
    def name(self) -> str:
        """The run's display name: `run_name`, else the run dir's name."""
        return self.run_name or self.run_dir.resolve().name

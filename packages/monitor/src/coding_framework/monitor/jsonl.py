"""Local files of a run: metrics.jsonl (one JSON object per log_metrics call) and run.json (params, tags).

Line format: `{"step": 12, "time": 1700000000.25, "metrics": {"reward/mean": 0.5, "loss": null}}`,
`time` in Unix seconds, non-finite values as null (JSON has no NaN). Every line is flushed and
fsynced when written, so a crash loses at most the line being written; a torn last line is
dropped by the reader and cut off when the run resumes.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coding_framework.monitor.errors import MonitorError
from coding_framework.monitor.files import atomic_write_json
from coding_framework.monitor.sink import RunStatus, Sink
from coding_framework.monitor.values import ParamValue, finite_or_none

METRICS_FILE = "metrics.jsonl"
RUN_FILE = "run.json"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StepRecord:
    """One line of metrics.jsonl. `metrics` values are None where a non-finite value was logged."""

    step: int
    time: float
    metrics: dict[str, float | None]


def read_metrics(path: Path) -> list[StepRecord]:
    """Every record of a metrics.jsonl, in file order.

    A last line without its newline (the process died while writing it) is ignored; any other
    malformed line is an error naming the file and line number.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no metrics file at {path}; it is written by RunLogger with jsonl on")
    data = path.read_bytes()
    lines = data.split(b"\n")
    complete, tail = lines[:-1], lines[-1]
    if tail.strip():
        log.warning("%s: ignoring a torn last line (%d bytes) left by an interrupted write", path, len(tail))
    records = []
    for number, raw in enumerate(complete, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
            records.append(
                StepRecord(
                    step=int(obj["step"]),
                    time=float(obj["time"]),
                    metrics={str(k): (None if v is None else float(v)) for k, v in obj["metrics"].items()},
                )
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise MonitorError(f"{path}:{number}: not a metrics record ({exc}): {raw[:200]!r}") from exc
    return records


def metric_series(records: list[StepRecord], name: str) -> tuple[list[int], list[float]]:
    """(steps, values) of one metric, in file order, skipping null (non-finite) values."""
    steps, values = [], []
    for record in records:
        value = record.metrics.get(name)
        if value is not None:
            steps.append(record.step)
            values.append(value)
    return steps, values


def last_logged_step(path: Path) -> int | None:
    """Highest step in a metrics.jsonl, or None when the file is missing or holds no record."""
    if not Path(path).exists():
        return None
    records = read_metrics(path)
    return max((r.step for r in records), default=None)


def _cut_torn_tail(path: Path) -> None:
    """Truncate a last line that lacks its newline, so the next append starts a fresh line."""
    with open(path, "rb+") as handle:
        data = handle.read()
        if not data or data.endswith(b"\n"):
            return
        keep = data.rfind(b"\n") + 1
        log.warning("%s: cutting a torn last line (%d bytes) before appending", path, len(data) - keep)
        handle.truncate(keep)


class JsonlSink(Sink):
    """Appends metric lines to `<run_dir>/metrics.jsonl`; keeps params and tags in `<run_dir>/run.json`
    (merged with the previous ones when resuming)."""

    name = "jsonl"

    def __init__(self, run_dir: Path, run_name: str, *, resume: bool) -> None:
        self.path = Path(run_dir) / METRICS_FILE
        self.run_path = Path(run_dir) / RUN_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            _cut_torn_tail(self.path)
        self._lock = threading.Lock()
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - held open for the run
        self._run: dict[str, Any] = {"run_name": run_name, "status": "RUNNING", "params": {}, "tags": {}}
        if resume and self.run_path.exists():
            previous = json.loads(self.run_path.read_text())
            self._run["params"].update(previous.get("params", {}))
            self._run["tags"].update(previous.get("tags", {}))
        atomic_write_json(self.run_path, self._run)

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        record = {"step": step, "time": round(time.time(), 3),
                  "metrics": {k: finite_or_none(v) for k, v in metrics.items()}}
        line = json.dumps(record, allow_nan=False, separators=(",", ":")) + "\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()
            os.fsync(self._file.fileno())

    def log_params(self, params: Mapping[str, ParamValue]) -> None:
        with self._lock:
            self._run["params"].update(params)
            atomic_write_json(self.run_path, self._run)

    def set_tags(self, tags: Mapping[str, str]) -> None:
        with self._lock:
            self._run["tags"].update(tags)
            atomic_write_json(self.run_path, self._run)

    def close(self, status: RunStatus) -> None:
        with self._lock:
            self._run["status"] = status
            atomic_write_json(self.run_path, self._run)
            self._file.close()

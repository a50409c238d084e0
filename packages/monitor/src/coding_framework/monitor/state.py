"""The run dir's own record of which tracking-service runs it continues (MLflow run id, W&B run id).

Resuming a run reads this file so that the new process logs into the same MLflow and W&B runs.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from coding_framework.monitor.errors import MonitorError
from coding_framework.monitor.files import atomic_write_json

STATE_FILE = "monitor_state.json"


class RunState:
    """A small JSON object in `<run_dir>/monitor_state.json`, one key per sink, written atomically."""

    def __init__(self, run_dir: Path, *, load: bool = True) -> None:
        """`load`: read the existing file (resuming); otherwise start empty and overwrite it."""
        self.path = Path(run_dir) / STATE_FILE
        self._lock = threading.Lock()
        self._data: dict[str, Any] = {}
        if load and self.path.exists():
            try:
                loaded = json.loads(self.path.read_text())
            except json.JSONDecodeError as exc:
                raise MonitorError(
                    f"{self.path} is not valid JSON ({exc}); it records which MLflow/W&B runs this run "
                    "dir continues. Delete it to start fresh tracking runs, or restore it from a backup."
                ) from exc
            if not isinstance(loaded, dict):
                raise MonitorError(f"{self.path} must hold a JSON object; delete it to start fresh runs")
            self._data = loaded

    def get(self, key: str) -> dict[str, Any] | None:
        value = self._data.get(key)
        return dict(value) if isinstance(value, dict) else None

    def set(self, key: str, value: dict[str, Any]) -> None:
        with self._lock:
            self._data[key] = dict(value)
            atomic_write_json(self.path, self._data)

"""The interface every sink implements. RunLogger validates input once and fans it out to sinks."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from coding_framework.monitor.values import ParamValue

RunStatus = Literal["FINISHED", "FAILED", "KILLED"]
"""How a run ended (MLflow's names): normal end, an exception, an interrupt."""


class Sink:
    """One destination of logged data. Methods get already-validated values; the defaults do nothing.

    A method that raises makes RunLogger disable this sink (with a warning) for the rest of the run;
    sinks therefore need no error handling of their own beyond cleaning up in `close`.
    """

    name: str = "sink"

    def log_params(self, params: Mapping[str, ParamValue]) -> None:
        """`params`: flat `a.b.c` keys (see values.flatten_params)."""

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        """`metrics`: name → float (may be NaN/inf); `step`: training step, >= 0."""

    def log_artifact(self, path: Path, artifact_path: str | None) -> None:
        """`path`: an existing file or directory; `artifact_path`: sub-folder in the run's artifacts."""

    def set_tags(self, tags: Mapping[str, str]) -> None:
        """`tags`: short string labels of the run."""

    def close(self, status: RunStatus) -> None:
        """Flush and release resources; called once."""

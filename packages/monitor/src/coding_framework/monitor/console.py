"""Terminal output: a compact per-step metric line and a progress bar, both through one rich Console.

Sharing the Console matters: while a progress bar is live, rich prints other lines above it
instead of tearing it.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from coding_framework.monitor.sink import RunStatus, Sink

SYSTEM_PREFIX = "system/"


def format_value(value: float) -> str:
    """Short, fixed-width-ish text for a metric: integers as integers, else 4 significant digits."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value.is_integer() and abs(value) < 1e6:
        return str(int(value))
    return f"{value:.4g}"


def select_metrics(metrics: Mapping[str, float], chosen: Sequence[str]) -> list[tuple[str, float]]:
    """The (name, value) pairs a step line shows: `chosen` in its order (those present in this
    step), or, with nothing chosen, every metric not under `system/` in logging order."""
    if chosen:
        return [(name, metrics[name]) for name in chosen if name in metrics]
    return [(name, value) for name, value in metrics.items() if not name.startswith(SYSTEM_PREFIX)]


def format_step_line(step: int, metrics: Mapping[str, float], chosen: Sequence[str] = ()) -> Text | None:
    """`step 12  reward/mean 0.5312  pass_rate 0.41`, or None when no chosen metric is in `metrics`."""
    pairs = select_metrics(metrics, chosen)
    if not pairs:
        return None
    line = Text()
    line.append("step ", style="dim")
    line.append(str(step), style="bold")
    for name, value in pairs:
        line.append("  ")
        line.append(name, style="cyan")
        line.append(" ")
        line.append(format_value(value), style="red" if not math.isfinite(value) else "")
    return line


class ConsoleSink(Sink):
    """Prints one line per `every` steps with the chosen metrics; announces the run's start and end."""

    name = "console"

    def __init__(self, console: Console, run_name: str, chosen: Sequence[str] = (), every: int = 1) -> None:
        self.console = console
        self._run_name = run_name
        self._chosen = tuple(chosen)
        self._every = every

    def announce(self, run_dir: str, resumed_after: int | None, sinks: Sequence[str]) -> None:
        resumed = f", resuming after step {resumed_after}" if resumed_after is not None else ""
        self.console.print(
            Text.assemble(("run ", "dim"), (self._run_name, "bold"), f" → {run_dir}{resumed}",
                          ("  [" + ", ".join(sinks) + "]", "dim")),
            soft_wrap=True,
        )

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        if step % self._every:
            return
        line = format_step_line(step, metrics, self._chosen)
        if line is not None:
            # soft_wrap: one step is one line in a log file too, whatever width rich guesses.
            self.console.print(line, soft_wrap=True)

    def close(self, status: RunStatus) -> None:
        style = "green" if status == "FINISHED" else "red"
        self.console.print(
            Text.assemble(("run ", "dim"), (self._run_name, "bold"), " ", (status.lower(), style)),
            soft_wrap=True,
        )


@dataclass
class ProgressHandle:
    """What `training_progress` yields: advance it once per step."""

    _progress: Progress
    _task: TaskID

    def advance(self, steps: int = 1) -> None:
        self._progress.advance(self._task, steps)

    def update(self, completed: int) -> None:
        """Set the number of completed steps (e.g. after resuming from a checkpoint)."""
        self._progress.update(self._task, completed=completed)

    def set_status(self, text: str) -> None:
        """Short text shown after the bar (e.g. the latest reward)."""
        self._progress.update(self._task, status=text)

    @property
    def completed(self) -> int:
        return int(next(t for t in self._progress.tasks if t.id == self._task).completed)


@contextlib.contextmanager
def training_progress(
    total: int, *, description: str = "train", completed: int = 0, console: Console | None = None
) -> Iterator[ProgressHandle]:
    """A live progress bar of `total` steps (`completed` already done), stopped when the block ends.

    Lines printed through the same `console` meanwhile appear above the bar.
    """
    if isinstance(total, bool) or not isinstance(total, int) or total < 1:
        raise ValueError(f"total must be a positive number of steps, got {total!r}")
    if not 0 <= completed <= total:
        raise ValueError(f"completed must be in 0..total ({total}), got {completed!r}")
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[status]}"),
        console=console,
    )
    with progress:
        task = progress.add_task(description, total=total, completed=completed, status="")
        yield ProgressHandle(progress, task)

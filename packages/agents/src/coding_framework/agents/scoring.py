"""Measuring and scoring many completions with one sandbox batch.

`score_completions` is the batch API a trainer calls once per step: it extracts code from every
completion, builds every sandbox job the configured rewards need (one counting job per sample for the
hidden tests, or one job per case; timing jobs for efficiency, `efficiency_rounds` per candidate and
per distinct problem's reference), runs them in a single `run_many` call while ruff lints the same
programs in a separate process, and returns one `Score` per completion, in input order. Code that is
missing or does not parse is never sent to the sandbox.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from coding_framework.agents.execution import CaseResult, case_jobs, counted_job, counted_passes, suite_job
from coding_framework.agents.extraction import Extraction, extract_code
from coding_framework.agents.lint import Finding, LintRun
from coding_framework.agents.problems import Problem, TestCase
from coding_framework.agents.rewards import RewardConfig, composite
from coding_framework.sandbox import FunctionCallJob, Limits, Status, Verdict

KNOWN_NEEDS = frozenset({"hidden", "lint", "timing"})


class Executor(Protocol):
    """What scoring needs from a sandbox: `SandboxPool` is one."""

    def run_many(self, jobs: Sequence[FunctionCallJob]) -> list[Verdict]: ...


class JobBatch:
    """Collects jobs from many places, runs them in one `run_many` call, hands back each slice."""

    def __init__(self) -> None:
        self.jobs: list[FunctionCallJob] = []
        self._verdicts: list[Verdict] | None = None

    def add(self, jobs: Iterable[FunctionCallJob]) -> slice:
        if self._verdicts is not None:
            raise RuntimeError("JobBatch already ran; start a new one")
        start = len(self.jobs)
        self.jobs.extend(jobs)
        return slice(start, len(self.jobs))

    def run(self, pool: Executor) -> None:
        verdicts = list(pool.run_many(self.jobs)) if self.jobs else []
        if len(verdicts) != len(self.jobs):
            raise RuntimeError(f"sandbox returned {len(verdicts)} verdicts for {len(self.jobs)} jobs")
        self._verdicts = verdicts

    def get(self, where: slice) -> list[Verdict]:
        if self._verdicts is None:
            raise RuntimeError("JobBatch.get before run")
        return self._verdicts[where]


@dataclass(frozen=True)
class Attempt:
    """Everything measured about one completion for one problem."""

    problem: Problem
    completion: str
    extraction: Extraction
    hidden_passed: int | None = None
    """Hidden cases passed, when measured (None: not measured, or no runnable code)."""
    hidden: Verdict | None = None
    """The counting job's verdict (hidden_jobs="counted")."""
    cases: tuple[CaseResult, ...] | None = None
    """Per-case hidden verdicts (hidden_jobs="per_case")."""
    lint: tuple[Finding, ...] | None = None
    """Ruff findings, when measured."""
    timing: tuple[Verdict, ...] | None = None
    """The candidate's timing jobs (hidden cases repeated; one per round), when measured."""
    reference_timing: tuple[Verdict, ...] | None = None
    """The reference solution's timing jobs from the same batch (one per round)."""

    @property
    def pass_fraction(self) -> float:
        """Fraction of hidden cases passed (0 without runnable code)."""
        if not self.extraction.ok:
            return 0.0
        if self.hidden_passed is None:
            raise ValueError("pass_fraction needs hidden verdicts: measure with needs containing 'hidden'")
        return self.hidden_passed / len(self.problem.hidden_tests)

    @property
    def all_passed(self) -> bool:
        """Every hidden case passed."""
        return self.pass_fraction == 1.0

    @property
    def runtime_s(self) -> float | None:
        """The least seconds a timing round took (see `job_runtime_s`); None unless every round passed."""
        return rounds_runtime_s(self.timing)

    @property
    def reference_runtime_s(self) -> float | None:
        return rounds_runtime_s(self.reference_timing)

    @property
    def sandbox_errors(self) -> int:
        """Jobs that failed for infrastructure reasons (not the candidate's verdict)."""
        verdicts = [r.verdict for r in self.cases or ()] + list(self.timing or ())
        if self.hidden is not None:
            verdicts.append(self.hidden)
        return sum(v.status is Status.SANDBOX_ERROR for v in verdicts)


def job_runtime_s(verdict: Verdict | None) -> float | None:
    """The candidate process's CPU seconds for a passing job, or its wall seconds if CPU is unknown.

    CPU time of the child is what the candidate's code costs; it varies about 5% between runs of the
    same job, against about 25% for wall time, which also counts the trusted side and machine load.
    """
    if verdict is None or not verdict.passed:
        return None
    return verdict.cpu_s if verdict.cpu_s is not None else verdict.duration_s


def rounds_runtime_s(verdicts: Sequence[Verdict] | None) -> float | None:
    """The minimum `job_runtime_s` over timing rounds, or None when there are none or any failed.

    The minimum, as timeit takes: noise from other work on the machine only ever adds time.
    """
    times = [job_runtime_s(v) for v in verdicts or ()]
    if not times or any(t is None for t in times):
        return None
    return min(times)


@dataclass(frozen=True)
class Score:
    """The reward of one completion, its unweighted components and what they were computed from."""

    reward: float
    components: dict[str, float] = field(default_factory=dict)
    attempt: Attempt | None = None


def run_cases(pool: Executor, items: Sequence[tuple[Problem, str, Sequence[TestCase]]],
              limits: Limits | None = None) -> list[tuple[CaseResult, ...]]:
    """Run (problem, program, cases) items, one job per case, all in one `run_many` call."""
    batch = JobBatch()
    kwargs = {} if limits is None else {"limits": limits}
    where = [batch.add(case_jobs(p, program, cases, **kwargs)) for p, program, cases in items]
    batch.run(pool)
    return [tuple(CaseResult(c, v) for c, v in zip(cases, batch.get(w), strict=True))
            for (_, _, cases), w in zip(items, where, strict=True)]


def measure(problems: Sequence[Problem], completions: Sequence[str], pool: Executor,
            needs: Iterable[str], config: RewardConfig | None = None,
            extractions: Sequence[Extraction] | None = None) -> list[Attempt]:
    """Measure what `needs` asks for about each (problem, completion) pair, with one sandbox batch.

    Args:
      needs: subset of {"hidden", "lint", "timing"}.
      extractions: precomputed `extract_code` results (episodes have them already).
    """
    config = config or RewardConfig()
    needs = frozenset(needs)
    if needs - KNOWN_NEEDS:
        raise ValueError(f"unknown needs {sorted(needs - KNOWN_NEEDS)}; known: {sorted(KNOWN_NEEDS)}")
    if len(problems) != len(completions):
        raise ValueError(f"{len(problems)} problems but {len(completions)} completions")
    if extractions is None:
        pairs = zip(problems, completions, strict=True)
        extractions = [extract_code(c, p.statement, p.entry_point) for p, c in pairs]
    elif len(extractions) != len(problems):
        raise ValueError(f"{len(problems)} problems but {len(extractions)} extractions")
    runnable = [e.program if e.ok else None for e in extractions]
    lint_run = LintRun(runnable, config.lint) if "lint" in needs else None
    try:
        batch = JobBatch()
        limits = config.limits
        planned: list[dict[str, slice]] = []
        for problem, program in zip(problems, runnable, strict=True):
            slots: dict[str, slice] = {}
            if program is not None:
                if "hidden" in needs and config.hidden_jobs == "per_case":
                    slots["cases"] = batch.add(case_jobs(problem, program, problem.hidden_tests, limits))
                elif "hidden" in needs:
                    slots["hidden"] = batch.add([counted_job(problem, program, problem.hidden_tests, limits)])
            planned.append(slots)
        timing_slots: list[list[slice]] = [[] for _ in problems]
        reference_slots: dict[str, list[slice]] = {}
        if "timing" in needs:
            # Round by round, so each candidate's and its reference's rounds spread over the batch alike.
            repeats = config.efficiency_repeats
            for _ in range(config.efficiency_rounds):
                referenced: set[str] = set()
                for i, (problem, program) in enumerate(zip(problems, runnable, strict=True)):
                    if program is None:
                        continue
                    timing_slots[i].append(batch.add([suite_job(problem, program, problem.hidden_tests,
                                                                repeats, limits)]))
                    if problem.id not in referenced:
                        referenced.add(problem.id)
                        reference_slots.setdefault(problem.id, []).append(batch.add([suite_job(
                            problem, problem.reference, problem.hidden_tests, repeats, limits)]))
        batch.run(pool)
    finally:
        findings = lint_run.result() if lint_run is not None else None
    attempts = []
    for i, (problem, completion, extraction, slots) in enumerate(
            zip(problems, completions, extractions, planned, strict=True)):
        cases, hidden, passed = None, None, None
        if "cases" in slots:
            cases = tuple(CaseResult(c, v) for c, v in zip(problem.hidden_tests, batch.get(slots["cases"]),
                                                           strict=True))
            passed = sum(r.passed for r in cases)
        if "hidden" in slots:
            hidden = batch.get(slots["hidden"])[0]
            passed = counted_passes(hidden, len(problem.hidden_tests))
        timing = tuple(batch.get(where)[0] for where in timing_slots[i]) or None
        reference = tuple(batch.get(where)[0] for where in reference_slots.get(problem.id, ())) or None
        attempts.append(Attempt(
            problem=problem,
            completion=completion,
            extraction=extraction,
            hidden_passed=passed,
            hidden=hidden,
            cases=cases,
            lint=findings[i] if findings is not None else None,
            timing=timing,
            reference_timing=reference if timing is not None else None,
        ))
    return attempts


def score_attempts(attempts: Sequence[Attempt], config: RewardConfig | None = None) -> list[Score]:
    """The configured composite for each measured attempt."""
    config = config or RewardConfig()
    scores = []
    for attempt in attempts:
        reward, components = composite(attempt, config)
        scores.append(Score(reward, components, attempt))
    return scores


def score_completions(problems: Sequence[Problem], completions: Sequence[str], pool: Executor,
                      config: RewardConfig | None = None) -> list[Score]:
    """Extract, run, lint and score every completion: one sandbox `run_many`, one ruff process.

    Args:
      problems: problems[i] is the problem completions[i] answers (repeat a problem for G samples).
      completions: model outputs after each problem's statement.
    Returns:
      one Score per completion, in input order.
    """
    config = config or RewardConfig()
    return score_attempts(measure(problems, completions, pool, config.needs, config), config)

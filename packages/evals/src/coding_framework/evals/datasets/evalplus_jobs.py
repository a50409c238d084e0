"""Sandbox jobs for HumanEval+ / MBPP+ samples, with evalplus's per-input time limits.

One FunctionCallJob per part ("base", "plus"): the candidate program runs in the sandbox child (under
evalplus's restrictions, see evalplus_program; pools should preload its PRELOAD modules), the
trusted test (evalplus_checker's source plus this task's inputs, expected outputs and limits) runs in
the judge and calls the candidate once per input through the plain-data channel.

Time limits, as evalplus sets them: per input `max(min_time_limit_s, time_limit_factor * reference
seconds)` (defaults 4.0 and 4.0, DEFAULT_MIN_TIME_LIMIT and DEFAULT_GT_TIME_LIMIT_FACTOR of evalplus's
current source; its 0.3.1 release floors at 1.0: pass min_time_limit_s=1.0 to match that release);
for the whole part `min(timeout_s, sum of the per-input limits) + 1` (evalplus's
EVALPLUS_TIMEOUT_PER_TASK, 60 s) plus one second for the sandbox to start and load the program.
"""

from __future__ import annotations

import base64
import functools
import marshal
from collections.abc import Sequence
from pathlib import Path

from coding_framework.evals.datasets.evalplus import EvalPlusProblem, Oracle
from coding_framework.evals.datasets.evalplus_program import guarded_program
from coding_framework.sandbox import FunctionCallJob, Limits, Status, Verdict

DEFAULT_MIN_TIME_LIMIT_S = 4.0
DEFAULT_TIME_LIMIT_FACTOR = 4.0
DEFAULT_TASK_TIMEOUT_S = 60.0
MEMORY_MB = 4096  # evalplus's EVALPLUS_MAX_MEMORY_BYTES default
PARTS = ("base", "plus")


@functools.cache
def _checker_source() -> str:
    return Path(__file__).with_name("evalplus_checker.py").read_text(encoding="utf-8")


def per_input_limits(
    reference_s: tuple[float, ...], *, min_time_limit_s: float, time_limit_factor: float
) -> tuple[float, ...]:
    """evalplus's rule: each input gets max(floor, factor x the reference's seconds on it)."""
    return tuple(max(min_time_limit_s, time_limit_factor * t) for t in reference_s)


def trusted_test_source(problem: EvalPlusProblem, parts: Sequence[tuple[str, Sequence[float]]]) -> str:
    """See `_trusted_test_source`; memoised, since the n samples of a task share one test."""
    return _trusted_test_source(problem, tuple((name, tuple(limits)) for name, limits in parts))


@functools.lru_cache(maxsize=1024)
def _trusted_test_source(problem: EvalPlusProblem, parts: tuple[tuple[str, tuple[float, ...]], ...]) -> str:
    """The trusted test of a job over `parts` ((name, per-input limits), in order): the data as a
    marshal literal, then the checker compiled under its own file name (so a failure reads
    "AssertionError: plus input 3: ..." without test source). Each part starts from the problem's
    atol, as each of evalplus's `untrusted_check` calls does."""
    oracle = _oracle(problem)
    segments = [
        (part, list(getattr(problem, f"{part}_input")), list(getattr(oracle, part)), list(limits))
        for part, limits in parts
    ]
    data = (problem.dataset, problem.entry_point, problem.atol, segments)
    payload = base64.b64encode(marshal.dumps(data)).decode("ascii")
    checker = _checker_source() + _CHECK
    return (
        "import base64 as _cf_b64, marshal as _cf_marshal\n"
        f"_CF_ARGS = _cf_marshal.loads(_cf_b64.b64decode({payload!r}))\n"
        f"exec(compile({checker!r}, '<evalplus-checker>', 'exec'))\n"
    )


_CHECK = """

def check(candidate):
    dataset, entry_point, atol, segments = _CF_ARGS
    for part, inputs, expected, limits in segments:
        check_inputs(candidate, dataset, entry_point, part, inputs, expected, limits, atol)
"""


def _oracle(problem: EvalPlusProblem) -> Oracle:
    if problem.oracle is None:
        raise ValueError(
            f"{problem.task_id}: expected outputs are not computed yet; load problems through the "
            "benchmark's prepare step (attach_oracles)"
        )
    return problem.oracle


def evalplus_jobs(
    problem: EvalPlusProblem,
    completion: str,
    *,
    solution: str | None = None,
    timeout_s: float = DEFAULT_TASK_TIMEOUT_S,
    min_time_limit_s: float = DEFAULT_MIN_TIME_LIMIT_S,
    time_limit_factor: float = DEFAULT_TIME_LIMIT_FACTOR,
) -> dict[str, FunctionCallJob | Verdict]:
    """`{"base": job, "plus": job}` for one sample (`solution`, else prompt + completion, runs).

    A task whose reference solution failed gets a sandbox_error Verdict per part instead of a job:
    no candidate can be judged against missing expected outputs.
    """
    oracle = _oracle(problem)
    if oracle.error:
        message = f"{problem.task_id} cannot be scored: {oracle.error}"
        return {part: Verdict(Status.SANDBOX_ERROR, message) for part in PARTS}
    program, entry_point = guarded_program(
        solution if solution is not None else problem.prompt + completion,
        problem.dataset,
        problem.entry_point,
    )
    jobs = {}
    for part in PARTS:
        reference = getattr(oracle, f"{part}_time_s")
        limits_s = per_input_limits(
            reference, min_time_limit_s=min_time_limit_s, time_limit_factor=time_limit_factor
        )
        wall = min(timeout_s, sum(limits_s)) + 2.0
        jobs[part] = FunctionCallJob(
            program=program,
            entry_point=entry_point,
            test=trusted_test_source(problem, [(part, limits_s)]),
            limits=Limits(timeout_s=wall, memory_mb=MEMORY_MB),
        )
    return jobs


def evalplus_job(
    problem: EvalPlusProblem,
    completion: str,
    *,
    solution: str | None = None,
    timeout_s: float = DEFAULT_TASK_TIMEOUT_S,
    min_time_limit_s: float = DEFAULT_MIN_TIME_LIMIT_S,
    time_limit_factor: float = DEFAULT_TIME_LIMIT_FACTOR,
) -> FunctionCallJob:
    """One job over base and plus inputs together (one verdict; for callers that want a single job,
    such as a reward). Requires a scorable task."""
    oracle = _oracle(problem)
    if oracle.error:
        raise ValueError(f"{problem.task_id} cannot be scored: {oracle.error}")
    program, entry_point = guarded_program(
        solution if solution is not None else problem.prompt + completion,
        problem.dataset,
        problem.entry_point,
    )
    parts = [
        (
            part,
            per_input_limits(
                getattr(oracle, f"{part}_time_s"),
                min_time_limit_s=min_time_limit_s,
                time_limit_factor=time_limit_factor,
            ),
        )
        for part in PARTS
    ]
    total = sum(sum(limits) for _, limits in parts)
    return FunctionCallJob(
        program=program,
        entry_point=entry_point,
        test=trusted_test_source(problem, parts),
        limits=Limits(timeout_s=min(timeout_s, total) + 2.0, memory_mb=MEMORY_MB),
    )

"""Test cases as sandbox jobs, and their results.

Test cases are plain data rendered into trusted test code for a `FunctionCallJob`: the sandbox runs
the candidate program in its child and the test in the trusted process, where `candidate` is a proxy
whose calls return plain data decoded from the child. The comparison `_cf_same` requires equal types
at every level, so `True` for `1` or a tuple for a list does not pass (and forged `__eq__` objects or
subclasses cannot cross the boundary at all).

Three job shapes:
- counted job (hidden tests, the default for scoring): one job runs every case; each call sits in a
  `try/except Exception`, so nothing the candidate raises escapes, and the trusted code counts the
  passes and ends with `assert passed == total, "CF-PASSED p/t"`. The only AssertionError that can
  reach the sandbox is that one, so the count in a FAILED verdict's message is ours; a crash, timeout
  or output flood ends the job with another status and scores 0 passes (never more than earned).
  One job per sample instead of one per case: about 8x fewer forks (see README, "Speed").
- per-case jobs (visible tests for feedback; optional for hidden tests): one job per case, each with
  its own verdict and message; a case that hangs costs only that case.
- suite job (timing): every case in one job, the first failure ends it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from coding_framework.agents.problems import Problem, TestCase
from coding_framework.sandbox import FunctionCallJob, Limits, Status, Verdict

DEFAULT_LIMITS = Limits(timeout_s=5.0, memory_mb=512)
"""Generated problems are tiny: 5 s per job is generous and bounds a stuck step."""

_MAX_SHOWN = 120

TEST_SETUP = f'''
def _cf_same(a, b):
    if type(a) is not type(b):
        return False
    if type(a) is list or type(a) is tuple:
        return len(a) == len(b) and all(_cf_same(x, y) for x, y in zip(a, b))
    if type(a) is dict:
        return a.keys() == b.keys() and all(_cf_same(a[k], b[k]) for k in a)
    if type(a) is float and a != a:
        return b != b
    return a == b


def _cf_show(value):
    text = repr(value)
    return text if len(text) <= {_MAX_SHOWN} else text[:{_MAX_SHOWN}] + "..."


def _cf_case(candidate, args, expected, call):
    got = candidate(*args)
    assert _cf_same(got, expected), call + " returned " + _cf_show(got) + ", expected " + _cf_show(expected)


def _cf_count(candidate, cases):
    passed = 0
    for args, expected in cases:
        try:
            got = candidate(*args)
        except Exception:
            continue
        if _cf_same(got, expected):
            passed += 1
    assert passed == len(cases), "CF-PASSED %d/%d" % (passed, len(cases))
'''
"""Trusted helpers, run in the test namespace before the test (never sent to the child)."""


def case_test(case: TestCase, entry_point: str) -> str:
    """Trusted test source for one case; the assertion message names the call, got and expected."""
    return suite_test([case], entry_point)


def suite_test(cases: Sequence[TestCase], entry_point: str) -> str:
    """Trusted test source running every case in order; the first failure ends the job."""
    lines = ["def check(candidate):"]
    for c in cases:
        lines.append(f"    _cf_case(candidate, {c.args!r}, {c.expected!r}, {c.call_text(entry_point)!r})")
    if not cases:
        lines.append("    pass")
    return "\n".join(lines) + "\n"


def counted_test(cases: Sequence[TestCase]) -> str:
    """Trusted test source that counts passing cases (see the module docstring)."""
    rows = ", ".join(f"({c.args!r}, {c.expected!r})" for c in cases)
    return f"def check(candidate):\n    _cf_count(candidate, [{rows}])\n"


_COUNT = re.compile(r"CF-PASSED (\d+)/(\d+)$")


def counted_passes(verdict: Verdict, total: int) -> int:
    """Cases passed according to a counted job's verdict: all if PASSED, the reported count if FAILED
    with our marker, else 0 (the job crashed, timed out or was cut off before counting finished)."""
    if verdict.passed:
        return total
    if verdict.status is Status.FAILED:
        match = _COUNT.search(verdict.message)
        if match and int(match.group(2)) == total and int(match.group(1)) < total:
            return int(match.group(1))
    return 0


def counted_job(problem: Problem, program: str, cases: Sequence[TestCase],
                limits: Limits | None = DEFAULT_LIMITS) -> FunctionCallJob:
    """One job that counts how many of `cases` pass."""
    return FunctionCallJob(program=program, entry_point=problem.entry_point, test=counted_test(cases),
                           setup=TEST_SETUP, limits=limits)


def case_jobs(problem: Problem, program: str, cases: Sequence[TestCase],
              limits: Limits | None = DEFAULT_LIMITS) -> list[FunctionCallJob]:
    """One job per case, in order."""
    return [
        FunctionCallJob(program=program, entry_point=problem.entry_point,
                        test=case_test(case, problem.entry_point), setup=TEST_SETUP, limits=limits)
        for case in cases
    ]


def suite_job(problem: Problem, program: str, cases: Sequence[TestCase], repeats: int = 1,
              limits: Limits | None = DEFAULT_LIMITS) -> FunctionCallJob:
    """One job running all `cases`, `repeats` times over (repeats > 1 for timing)."""
    if repeats < 1:
        raise ValueError(f"repeats={repeats} must be >= 1")
    return FunctionCallJob(program=program, entry_point=problem.entry_point,
                           test=suite_test(list(cases) * repeats, problem.entry_point), setup=TEST_SETUP,
                           limits=limits)


@dataclass(frozen=True)
class CaseResult:
    """One test case and the sandbox's verdict on it."""

    case: TestCase
    verdict: Verdict

    @property
    def passed(self) -> bool:
        return self.verdict.passed

    def describe(self, entry_point: str) -> str:
        """One line for a human or a model: what was called and what went wrong."""
        call = self.case.call_text(entry_point)
        status = self.verdict.status
        message = _clean(self.verdict.message)
        if status is Status.PASSED:
            return f"{call} passed"
        if status is Status.FAILED:
            # The sandbox reports "<assert statement>  # <its message>"; our message says it all.
            detail = _clean(self.verdict.message.partition("  # ")[2]) or message
            return detail or f"{call} returned a wrong value"
        if status is Status.ERROR:
            return f"{call} raised {message}" if message else f"{call} raised an error"
        if status is Status.TIMEOUT:
            return f"{call} did not finish within the time limit"
        if status is Status.MEMORY:
            return f"{call} used too much memory"
        if status is Status.OUTPUT_LIMIT:
            return f"{call} printed too much output"
        return f"{call} could not be run ({status.value}: {message})"


def _clean(text: str, limit: int = 300) -> str:
    """Candidate-influenced text (exception messages) goes back into a prompt: keep it one short line."""
    flat = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return flat if len(flat) <= limit else flat[:limit] + "..."

"""Shared test helpers: a fake sandbox pool and small hand-written problems."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest

from coding_framework.agents.problems import Problem, TestCase
from coding_framework.sandbox import FunctionCallJob, Status, Verdict


class FakeInProcessPool:
    """A FAKE of SandboxPool for unit tests only: runs each job's program in this process, no isolation.

    Only the tests' own, trusted programs go through it. It follows the FunctionCallJob contract
    (setup then test in one namespace with `candidate` and the entry point bound; `check(candidate)`
    called if defined) and records every run_many call so tests can count batches.
    """

    def __init__(self) -> None:
        self.calls: list[list[FunctionCallJob]] = []

    def run_many(self, jobs: Sequence[FunctionCallJob]) -> list[Verdict]:
        self.calls.append(list(jobs))
        return [self._run(job) for job in jobs]

    @staticmethod
    def _run(job: FunctionCallJob) -> Verdict:
        start = time.perf_counter()
        child: dict = {}
        try:
            exec(job.program, child)
            function = child[job.entry_point]
        except Exception as err:
            return Verdict(Status.ERROR, f"{type(err).__name__}: {err}")
        namespace = {"candidate": function, job.entry_point: function}
        try:
            exec(job.setup, namespace)
            exec(job.test, namespace)
            if "check" in namespace:
                namespace["check"](function)
        except AssertionError as err:
            return Verdict(Status.FAILED, str(err), time.perf_counter() - start)
        except Exception as err:
            return Verdict(Status.ERROR, f"{type(err).__name__}: {err}", time.perf_counter() - start)
        return Verdict(Status.PASSED, "", time.perf_counter() - start)


STUB = 'def add_three(x):\n    """Return x plus 3.\n\n    >>> add_three(1)\n    4\n    """\n'


def make_problem(**overrides) -> Problem:
    """A small hand-written problem: add_three."""
    fields = dict(
        id="hand-add-three",
        statement=STUB,
        entry_point="add_three",
        visible_tests=(TestCase((1,), 4), TestCase((-3,), 0)),
        hidden_tests=(TestCase((0,), 3), TestCase((5,), 8), TestCase((-10,), -7), TestCase((100,), 103)),
        reference=STUB + "    return x + 3\n",
        difficulty=1,
        family="",
    )
    fields.update(overrides)
    return Problem(**fields)


@pytest.fixture
def fake_pool() -> FakeInProcessPool:
    return FakeInProcessPool()


@pytest.fixture
def problem() -> Problem:
    return make_problem()


@pytest.fixture
def problem_factory():
    """make_problem, for tests that need variants (fixtures, not imports: conftest modules of other
    packages share the name)."""
    return make_problem

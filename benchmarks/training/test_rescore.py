"""Rescoring saved models on the evaluation sets: argument checks, and a real scoring of the committed
model agreeing with the trainer's own held-out measurement path."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("rescore", Path(__file__).with_name("rescore.py"))
rescore = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rescore)

MODEL = rescore.REPO / "models" / "tiny-coder"


def test_bad_sets_and_missing_model_dirs_are_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        rescore.main(["--sets", "test", str(MODEL)])
    assert "choose from validation, heldout" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        rescore.main([str(tmp_path)])
    assert "no config.json" in capsys.readouterr().err


def test_scores_the_committed_model_on_the_validation_set(tmp_path):
    from coding_framework.agents import load_validation_set

    out = tmp_path / "rows.json"
    assert rescore.main(["--sets", "validation", "--workers", "1", str(MODEL), "--out", str(out)]) == 0
    [row] = json.loads(out.read_text())
    problems = load_validation_set()
    assert row["set"] == "validation" and row["n_problems"] == len(problems) == 90
    solved = sum(row["solved_by_level"].values())
    assert set(row["solved_by_level"]) == {"1", "2", "3"} and 0 < solved < 90
    assert row["pass_at_1"] == pytest.approx(solved / 90)

"""benchmarks/evals/evalplus_agreement.py as a command: clear errors for missing or wrong inputs (nothing
downloaded), reading an evalplus eval_results.json instead of re-running evalplus, the report, the
JSON output and the exit status."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, load_benchmark_script

agreement = load_benchmark_script("evals/evalplus_agreement.py")
HE_PLUS = FIXTURES / "HumanEvalPlus-fixture.jsonl"
T = "HumanEvalPlusFixture/"


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_missing_problem_file_is_a_clear_error(tmp_path, capsys):
    samples = _write_jsonl(tmp_path / "s.jsonl", [{"task_id": T + "1", "completion": "    return 1.0\n"}])
    code = agreement.main(
        [
            "--benchmark",
            "humaneval+",
            "--problem-file",
            str(tmp_path / "nope.jsonl.gz"),
            "--samples",
            str(samples),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "HumanEval+ problem file not found" in err and "nope.jsonl.gz" in err
    assert "humanevalplus_release" in err and "nothing is downloaded" in err


def test_missing_or_wrong_samples_file_is_a_clear_error(tmp_path, capsys):
    args = ["--benchmark", "humaneval+", "--problem-file", str(HE_PLUS), "--samples"]
    assert agreement.main([*args, str(tmp_path / "absent.jsonl")]) == 2
    assert "samples file not found" in capsys.readouterr().err
    other = tmp_path / "samples.json"
    other.write_text("[]")
    assert agreement.main([*args, str(other)]) == 2
    assert "must be a .jsonl file" in capsys.readouterr().err


def test_bad_arguments_raise_agreement_errors(tmp_path):
    with pytest.raises(agreement.AgreementError, match="unknown benchmark 'bigcodebench'"):
        agreement.run_agreement("bigcodebench", HE_PLUS, tmp_path / "s.jsonl")
    with pytest.raises(agreement.AgreementError, match="workers must be at least 1"):
        agreement.run_agreement("humaneval+", HE_PLUS, tmp_path / "s.jsonl", workers=0)


def _results_file(path, entries):
    """An eval_results.json in evalplus's layout: {"eval": {task_id: [per sample, in order]}}."""
    path.write_text(json.dumps({"date": "2024-10-20 10:00", "hash": "x", "eval": entries}))
    return path


def test_evalplus_results_are_matched_by_task_and_order(tmp_path):
    samples = [
        {"task_id": "A/0", "solution": "first"},
        {"task_id": "B/0", "solution": "other"},
        {"task_id": "A/0", "solution": "second"},
    ]
    entries = {
        "A/0": [
            {"solution": "first", "base_status": "pass", "plus_status": "fail"},
            {"solution": "second", "base_status": "fail", "plus_status": "timeout"},
        ],
        "B/0": [{"solution": "other", "base_status": "pass", "plus_status": "pass"}],
    }
    path = _results_file(tmp_path / "eval_results.json", entries)
    assert agreement.evalplus_results_file_verdicts(path, samples) == [
        ("pass", "fail"),
        ("pass", "pass"),
        ("fail", "timeout"),
    ]
    swapped = {**entries, "A/0": entries["A/0"][::-1]}
    with pytest.raises(agreement.AgreementError, match="for another solution than sample 1"):
        agreement.evalplus_results_file_verdicts(_results_file(tmp_path / "swapped.json", swapped), samples)
    with pytest.raises(agreement.AgreementError, match=r"no result for sample 2 \(B/0, #0\)"):
        agreement.evalplus_results_file_verdicts(
            _results_file(tmp_path / "short.json", {"A/0": entries["A/0"]}), samples
        )


def _verdicts(index, theirs, ours, label=""):
    return agreement.SampleVerdicts(index, T + "1", label, *theirs, *ours, ours_result=f"{ours[0]}: why")


def test_agreement_is_per_part_and_any_non_pass_is_not_a_pass():
    assert _verdicts(0, ("fail", "timeout"), ("error", "timeout")).agrees
    assert _verdicts(0, ("timeout", "fail"), ("failed", "output_limit")).agrees
    assert not _verdicts(0, ("pass", "fail"), ("passed", "passed")).agrees
    assert not _verdicts(0, ("pass", "pass"), ("failed", "passed")).agrees
    assert _verdicts(0, ("pass", "pass"), ("passed", "passed")).ours_passed


def test_report_counts_and_lists_disagreements():
    rows = [
        _verdicts(0, ("pass", "pass"), ("passed", "passed")),
        _verdicts(1, ("pass", "pass"), ("error", "error"), label="always-equal"),
        _verdicts(2, ("fail", "fail"), ("failed", "failed")),
        _verdicts(3, ("fail", "fail"), ("passed", "passed"), label="lenient"),
    ]
    report = agreement.render_report(rows)
    assert report.splitlines()[0] == (
        "samples: 4, agree: 2, disagree: 2 (we fail, evalplus passes: 1; we pass, evalplus fails: 1)"
    )
    assert "| pass/pass | error/error | 1 |" in report and "| fail/fail | failed/failed | 1 |" in report
    assert f"| 2 | {T}1 | always-equal | pass/pass | error/error | error: why |" in report
    assert f"| 4 | {T}1 | lenient | fail/fail | passed/passed | passed: why |" in report
    assert "| 1 |" not in report.split("| # |")[1]  # the agreeing samples are not listed


def test_main_with_an_evalplus_results_file(tmp_path, capsys):
    """Our side really runs (sandbox); evalplus's verdicts come from the file. One sample agrees, the
    other is a disagreement the file claims, so the exit status is 1 and the JSON says which."""
    right = "    return math.pi * r * r\n"
    wrong = "    return 3.0 * r * r\n"
    samples = _write_jsonl(
        tmp_path / "samples.jsonl",
        [{"task_id": T + "1", "completion": right, "label": "right"},
         {"task_id": T + "1", "completion": wrong, "label": "wrong"}],
    )  # fmt: skip
    results = _results_file(
        tmp_path / "eval_results.json",
        {
            T + "1": [
                {"base_status": "pass", "plus_status": "pass"},
                {"base_status": "pass", "plus_status": "pass"},
            ]
        },
    )
    out = tmp_path / "pairs.json"
    code = agreement.main(
        ["--benchmark", "humaneval+", "--problem-file", str(HE_PLUS), "--samples", str(samples),
         "--evalplus-results", str(results), "--json", str(out), "--workers", "1"]
    )  # fmt: skip
    assert code == 1
    pairs = json.loads(out.read_text())
    assert [(p["label"], p["agrees"], p["ours_base"]) for p in pairs] == [
        ("right", True, "passed"),
        ("wrong", False, "failed"),
    ]
    assert "samples: 2, agree: 1, disagree: 1" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eval_results.json", "pairs.json", "samples.jsonl"]

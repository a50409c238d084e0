import json

import pytest

from coding_framework.evals.results import (
    SampleResult,
    Summary,
    count_statuses,
    result_rows,
    result_text,
    summary_path_for,
    write_results,
    write_summary,
)
from coding_framework.evals.samples import Sample
from coding_framework.sandbox import Status, Verdict


def _verdict(status, message=""):
    return Verdict(status=status, message=message, duration_s=0.25, stdout="", stderr="", return_code=None)


@pytest.mark.parametrize(
    ("status", "message", "text"),
    [
        (Status.PASSED, "", "passed"),
        (Status.FAILED, "assert candidate(3) == 4", "failed: assert candidate(3) == 4"),
        (Status.FAILED, "", "failed"),
        (Status.ERROR, "ZeroDivisionError: division by zero", "error: ZeroDivisionError: division by zero"),
        (Status.TIMEOUT, "wall clock limit 3.0 s", "timed out"),
        (Status.MEMORY, "", "memory limit exceeded"),
        (Status.OUTPUT_LIMIT, "", "output limit exceeded"),
        (Status.SANDBOX_ERROR, "worker died", "sandbox error: worker died"),
        (Status.FAILED, "assert f(\n  1)\n", "failed: assert f( 1)"),  # one line, whitespace collapsed
    ],
)
def test_result_text(status, message, text):
    assert result_text(_verdict(status, message)) == text


def test_sample_result_from_verdict():
    res = SampleResult.from_verdict("T/1", _verdict(Status.ERROR, "KeyError: 'x'"))
    assert res == SampleResult("T/1", False, "error", "error: KeyError: 'x'", 0.25)
    assert SampleResult.from_verdict("T/1", _verdict(Status.PASSED)).passed is True


def test_rows_keep_sample_keys_and_add_verdict_in_order(tmp_path):
    samples = [Sample("A", "c1", {"task_id": "A", "completion": "c1", "seed": 7}), Sample("B", "c2")]
    results = [
        SampleResult("A", True, "passed", "passed", 0.1),
        SampleResult("B", False, "failed", "failed", 0.1),
    ]
    rows = result_rows(samples, results)
    assert rows == [
        {
            "task_id": "A",
            "completion": "c1",
            "seed": 7,
            "result": "passed",
            "passed": True,
            "status": "passed",
        },
        {"task_id": "B", "completion": "c2", "result": "failed", "passed": False, "status": "failed"},
    ]
    path = write_results(tmp_path / "r.jsonl", samples, results)
    assert [json.loads(line) for line in path.read_text().splitlines()] == rows


def test_rows_refuse_mismatched_pairs():
    with pytest.raises(ValueError, match="paired"):
        result_rows([Sample("A", "")], [SampleResult("B", True, "passed", "passed", 0.0)])
    with pytest.raises(ValueError, match="1 samples but 0 results"):
        result_rows([Sample("A", "")], [])


def test_count_statuses_lists_every_status():
    counts = count_statuses(
        [SampleResult("A", True, "passed", "passed", 0), SampleResult("A", False, "timeout", "", 0)]
    )
    assert counts == {s.value: (1 if s.value in ("passed", "timeout") else 0) for s in Status}


@pytest.mark.parametrize(
    ("name", "summary"),
    [
        ("r.jsonl", "r_summary.json"),
        ("r.jsonl.gz", "r_summary.json"),
        ("s.jsonl_results.jsonl", "s.jsonl_results_summary.json"),
        ("out", "out_summary.json"),
    ],
)
def test_summary_path(tmp_path, name, summary):
    assert summary_path_for(tmp_path / name) == tmp_path / summary


def test_summary_json(tmp_path):
    s = Summary("humaneval", 3, 2, 164, {"pass@1": 0.5}, {"passed": 1}, 1.5, 2.0, "s.jsonl", "r.jsonl")
    data = json.loads(write_summary(tmp_path / "x.json", s).read_text())
    assert data == {
        "benchmark": "humaneval",
        "n_samples": 3,
        "n_tasks": 2,
        "n_problems": 164,
        "pass_at_k": {"pass@1": 0.5},
        "status_counts": {"passed": 1},
        "wall_s": 1.5,
        "samples_per_s": 2.0,
        "samples_file": "s.jsonl",
        "results_file": "r.jsonl",
        "parts_pass_at_k": {},
        "model": "",
        "options": {},
        "timeout_s": None,
        "warnings": [],
        "resumed": 0,
    }

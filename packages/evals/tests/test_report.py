"""The markdown report and its chart."""

from __future__ import annotations

import struct

from coding_framework.evals.report import chart_png, render_report, report_path_for, write_report
from coding_framework.evals.results import SampleResult, Summary


def _summary(**extra) -> Summary:
    base = dict(
        benchmark="humaneval+",
        n_samples=4,
        n_tasks=2,
        n_problems=3,
        pass_at_k={"pass@1": 0.5, "pass@2": 0.5},
        status_counts={"passed": 2, "failed": 1, "error": 1, "timeout": 0},
        wall_s=1.0,
        samples_per_s=4.0,
        samples_file="s.jsonl",
        results_file="r.jsonl",
    )
    return Summary(**{**base, **extra})


RESULTS = [
    SampleResult("A", True, "passed", "passed", 0.1),
    SampleResult("A", True, "passed", "passed", 0.1),
    SampleResult(
        "B", False, "failed", "failed: assert f(1) | 2 == 3 [plus]", 0.1, {"base": "passed", "plus": "failed"}
    ),
    SampleResult("B", False, "error", "error: ValueError", 0.1),
]


def test_report_path():
    assert report_path_for("out/x.jsonl").name == "x_report.md"
    assert report_path_for("s.jsonl_results.jsonl.gz").name == "s.jsonl_results_report.md"


def test_report_tables_and_unsolved_tasks():
    text = render_report(
        _summary(
            parts_pass_at_k={"base": {"pass@1": 0.75, "pass@2": 1.0}},
            model="m1",
            warnings=("T/9: reference failed",),
            options={"time_limit_factor": 4.0},
            timeout_s=60.0,
        ),
        RESULTS,
        "r_report.png",
    )
    lines = text.splitlines()
    assert lines[0] == "# humaneval+: m1"
    assert "4 samples · 2 of 3 problems attempted · 4.0 samples/s · limit per job 60 s" in text
    assert "| metric | all tests | base tests |" in lines
    assert "| pass@1 | 50.0% | 75.0% |" in lines and "| pass@2 | 50.0% | 100.0% |" in lines
    assert "![pass@k and verdicts](r_report.png)" in lines
    assert "| failed | 1 |" in lines and "| timeout | 0 |" not in lines
    assert "- T/9: reference failed" in lines
    assert "## Unsolved tasks (1 of 2)" in lines
    assert "| B | 2 | failed: assert f(1) \\| 2 == 3 [plus] |" in lines  # pipes escaped


def test_without_pass_at_k_or_failures():
    text = render_report(_summary(pass_at_k={}), RESULTS[:2], None)
    assert "No pass@k" in text and "Every attempted task was solved" in text and "![" not in text


def test_chart_is_a_png_and_files_are_written(tmp_path):
    data = chart_png(_summary(parts_pass_at_k={"base": {"pass@1": 0.75}}))
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (900, 360)
    path = write_report(tmp_path / "r_report.md", _summary(), RESULTS)
    assert path.read_text().startswith("# humaneval+")
    assert (tmp_path / "r_report.png").read_bytes()[:4] == b"\x89PNG"

"""`coding-framework evaluate compare A B`: the delta table, regressions, JSON output, errors."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from coding_framework.cli.main import app


def _run(root, benchmark, outcomes):
    folder = root / benchmark
    folder.mkdir(parents=True)
    rows = [{"task_id": t, "completion": "", "passed": p} for t, ps in outcomes.items() for p in ps]
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary = {"benchmark": benchmark, "results_file": str(folder / "results.jsonl")}
    (folder / "results_summary.json").write_text(json.dumps(summary))


def _invoke(*args):
    return CliRunner().invoke(app, ["evaluate", "compare", *map(str, args)], terminal_width=200)


def test_table_regressions_and_json(tmp_path):
    _run(tmp_path / "a", "humaneval", {f"T/{i}": [i % 2 == 0] for i in range(20)})
    _run(tmp_path / "b", "humaneval", {f"T/{i}": [i % 2 == 0 or i < 10] for i in range(20) if i != 4})
    _run(tmp_path / "a", "mbpp", {"M/1": [True], "M/2": [True]})
    _run(tmp_path / "b", "mbpp", {"M/1": [False], "M/2": [True]})
    _run(tmp_path / "b", "stdio", {"S/1": [True]})
    result = _invoke(tmp_path / "a", tmp_path / "b", "--resamples", "500", "--json", tmp_path / "cmp.json")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    row = next(line for line in lines if line.strip().startswith("humaneval "))
    # paired: 19 tasks; A solves the 9 even ones left, B also 1, 3, 5, 7, 9: +5/19 = +26.3 points
    assert row.replace("│", " ").split()[:5] == ["humaneval", "19", "47.4%", "73.7%", "+26.3*"]
    assert "mbpp regressions (solved by A, not by B): M/1" in result.output
    assert "humaneval: 1 task(s) only in A, 0 only in B (not compared)" in result.output
    assert "only in B: stdio" in result.output
    data = json.loads((tmp_path / "cmp.json").read_text())
    assert [d["benchmark"] for d in data["deltas"]] == ["humaneval", "mbpp"]
    assert (
        data["deltas"][0]["improvements"] == ["T/1", "T/3", "T/5", "T/7", "T/9"]
        and data["deltas"][0]["significant"]
    )


def test_errors_are_one_line(tmp_path):
    result = _invoke(tmp_path / "a", tmp_path / "b")
    assert result.exit_code == 1
    assert result.output.strip().startswith("error:") and "no such file or directory" in result.output

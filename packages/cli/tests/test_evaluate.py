"""`coding-framework evaluate`: exit codes, one-line messages, results in input order (real sandbox)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coding_framework.cli.main import app
from coding_framework.evals.datasets.humaneval import load_humaneval

PROBLEMS = load_humaneval()
CLI = Path(sys.executable).with_name("coding-framework")


def _invoke(*args: str):
    return CliRunner().invoke(app, ["evaluate", *args], terminal_width=200)


def _write_samples(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_evaluates_and_writes_results_in_input_order(tmp_path):
    rows = [
        {"task_id": "HumanEval/0", "completion": PROBLEMS["HumanEval/0"].canonical_solution, "i": 0},
        {"task_id": "HumanEval/2", "completion": "    return 0.0\n", "i": 1},
        {"task_id": "HumanEval/0", "completion": "    return True\n", "i": 2},
        {"task_id": "HumanEval/2", "completion": PROBLEMS["HumanEval/2"].canonical_solution, "i": 3},
        {"task_id": "HumanEval/0", "completion": "    return 1 / 0\n", "i": 4},
    ]
    samples = _write_samples(tmp_path / "s.jsonl", rows)
    result = _invoke("--benchmark", "humaneval", "--samples", str(samples), "--k", "1,2,3", "--workers", "2")
    assert result.exit_code == 0, result.output

    out = _read_jsonl(tmp_path / "s.jsonl_results.jsonl")
    assert [r["i"] for r in out] == [0, 1, 2, 3, 4]
    assert [r["passed"] for r in out] == [True, False, False, True, False]
    assert [r["status"] for r in out] == ["passed", "failed", "failed", "passed", "error"]
    assert out[4]["result"].startswith("error: ZeroDivisionError")
    assert all(r["completion"] == src["completion"] for r, src in zip(out, rows, strict=True))

    summary = json.loads((tmp_path / "s.jsonl_results_summary.json").read_text())
    # HumanEval/0: 1 of 3 passes; HumanEval/2: 1 of 2. pass@3 needs 3 samples for every task.
    assert summary["pass_at_k"] == pytest.approx({"pass@1": (1 / 3 + 1 / 2) / 2, "pass@2": (2 / 3 + 1) / 2})
    assert (summary["n_samples"], summary["n_tasks"], summary["n_problems"]) == (5, 2, 164)
    assert "pass@1" in result.output and "0.4167" in result.output
    assert "pass@3" in result.output and "n/a" in result.output
    assert "162 of 164 problems have no samples" in result.output


def test_explicit_output_and_problem_file(tmp_path):
    problem = PROBLEMS["HumanEval/4"]
    problems = tmp_path / "problems.jsonl"
    problems.write_text(
        json.dumps({"task_id": "Mine/1", "prompt": problem.prompt, "entry_point": problem.entry_point,
                    "test": problem.test}) + "\n"
    )  # fmt: skip
    samples = _write_samples(
        tmp_path / "s.jsonl", [{"task_id": "Mine/1", "completion": problem.canonical_solution}]
    )
    out = tmp_path / "res" / "r.jsonl"
    result = _invoke(
        "--samples", str(samples), "--problem-file", str(problems), "--output", str(out), "--k", "1"
    )
    assert result.exit_code == 0, result.output
    assert [r["passed"] for r in _read_jsonl(out)] == [True]
    assert json.loads((tmp_path / "res" / "r_summary.json").read_text())["pass_at_k"] == {"pass@1": 1.0}


def test_timeout_option_and_gzip_samples(tmp_path):
    rows = [
        {"task_id": "HumanEval/0", "completion": "    while True:\n        pass\n"},
        {"task_id": "HumanEval/0", "completion": PROBLEMS["HumanEval/0"].canonical_solution},
    ]
    samples = tmp_path / "s.jsonl.gz"
    samples.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    start = time.monotonic()
    result = _invoke("--samples", str(samples), "--timeout", "1", "--k", "1", "--workers", "1")
    assert result.exit_code == 0, result.output
    assert time.monotonic() - start < 30
    out = _read_jsonl(tmp_path / "s.jsonl.gz_results.jsonl")
    assert [(r["status"], r["result"]) for r in out] == [("timeout", "timed out"), ("passed", "passed")]


class FakeDegradedPool:
    """Stands in for a SandboxPool on a host without namespaces: warns, then judges every job passed."""

    def __init__(self, workers=None, limits=None):
        import warnings

        from coding_framework.sandbox import SandboxDegradedWarning

        warnings.warn(
            "sandbox isolation is DEGRADED on this host: missing pid_namespace",
            SandboxDegradedWarning,
            stacklevel=2,
        )

    def run_iter(self, jobs, *, keep_output=True):
        from coding_framework.sandbox import Status, Verdict

        return (Verdict(status=Status.PASSED) for _ in jobs)

    def close(self):
        pass


def test_degraded_sandbox_is_one_warning_line(tmp_path, monkeypatch):
    import coding_framework.evals.runner as runner

    monkeypatch.setattr(runner, "SandboxPool", FakeDegradedPool)
    samples = _write_samples(tmp_path / "s.jsonl", [{"task_id": "HumanEval/0", "completion": ""}])
    result = _invoke("--samples", str(samples), "--k", "1")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "DEGRADED" in line]
    assert lines == ["warning: sandbox isolation is DEGRADED on this host: missing pid_namespace"]


def _one_line_error(result) -> str:
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


def test_bad_json_names_the_line(tmp_path):
    samples = tmp_path / "s.jsonl"
    samples.write_text('{"task_id": "HumanEval/0", "completion": ""}\n{"task_id": \n')
    result = _invoke("--samples", str(samples))
    assert result.exit_code == 1
    assert "s.jsonl:2: not valid JSON" in _one_line_error(result)
    assert not (tmp_path / "s.jsonl_results.jsonl").exists()


def test_unknown_task_ids_are_named(tmp_path):
    samples = _write_samples(
        tmp_path / "s.jsonl",
        [{"task_id": "HumanEval/0", "completion": ""}, {"task_id": "HumanEval/999", "completion": ""}],
    )
    result = _invoke("--samples", str(samples))
    assert result.exit_code == 1
    assert "'HumanEval/999' (line 2)" in _one_line_error(result)


def test_unknown_benchmark_lists_valid_ones(tmp_path):
    samples = _write_samples(tmp_path / "s.jsonl", [{"task_id": "HumanEval/0", "completion": ""}])
    result = _invoke("--benchmark", "humaneval-xl", "--samples", str(samples))
    assert result.exit_code == 1
    line = _one_line_error(result)
    assert "unknown benchmark 'humaneval-xl'; valid benchmarks: bigcodebench, bigcodebench-hard," in line
    assert line.endswith("humaneval+, mbpp, mbpp+, stdio")


def test_unreadable_samples_file(tmp_path):
    result = _invoke("--samples", str(tmp_path / "missing.jsonl"))
    assert result.exit_code == 1
    assert "cannot read" in _one_line_error(result) and "missing.jsonl" in result.output


def test_missing_problem_file(tmp_path):
    samples = _write_samples(tmp_path / "s.jsonl", [{"task_id": "HumanEval/0", "completion": ""}])
    result = _invoke("--samples", str(samples), "--problem-file", str(tmp_path / "nope.jsonl"))
    assert result.exit_code == 1
    assert "problem file not found" in _one_line_error(result)


@pytest.mark.parametrize("k", ["0", "1,x", "", "1,,2", "1,10,"])
def test_bad_k_is_a_usage_error(tmp_path, k):
    samples = _write_samples(tmp_path / "s.jsonl", [{"task_id": "HumanEval/0", "completion": ""}])
    result = _invoke("--samples", str(samples), "--k", k)
    assert result.exit_code == 2
    assert "positive integers" in result.output


def test_host_memory_floor_option(tmp_path):
    samples = _write_samples(tmp_path / "s.jsonl", [{"task_id": "HumanEval/0", "completion": ""}])
    negative = _invoke("--samples", str(samples), "--host-memory-floor-mb", "-1")
    assert negative.exit_code == 2 and "--host-memory-floor-mb" in negative.output
    right = _write_samples(tmp_path / "r.jsonl", [
        {"task_id": "HumanEval/0", "completion": PROBLEMS["HumanEval/0"].canonical_solution}])
    off = _invoke("--samples", str(right), "--host-memory-floor-mb", "0", "--k", "1", "--workers", "1")
    assert off.exit_code == 0, off.output
    assert [r["status"] for r in _read_jsonl(tmp_path / "r.jsonl_results.jsonl")] == ["passed"]


class FakeUnstartablePool:
    """Stands in for a SandboxPool whose workers cannot start (e.g. namespaces forbidden)."""

    def __init__(self, workers=None, limits=None):
        from coding_framework.sandbox import SandboxStartError

        raise SandboxStartError("cannot create a user namespace: Operation not permitted")


def test_sandbox_that_cannot_start_is_one_line(tmp_path, monkeypatch):
    import coding_framework.evals.runner as runner

    monkeypatch.setattr(runner, "SandboxPool", FakeUnstartablePool)
    samples = _write_samples(tmp_path / "s.jsonl", [{"task_id": "HumanEval/0", "completion": ""}])
    result = _invoke("--samples", str(samples))
    assert result.exit_code == 3
    assert "the sandbox could not start: cannot create a user namespace" in _one_line_error(result)


def test_installed_command_exit_codes(tmp_path):
    """The console script itself: real exit status, message on stderr, nothing on stdout."""
    samples = tmp_path / "s.jsonl"
    samples.write_text("not json\n")
    proc = subprocess.run(
        [str(CLI), "evaluate", "--samples", str(samples)], capture_output=True, text=True, timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.strip() == f"error: {samples}:1: not valid JSON (Expecting value at column 1)"


def test_sigterm_mid_run_keeps_the_verdicts_so_far_and_the_same_command_resumes(tmp_path):
    # Each sample spends 0.2 s loading; the run is stopped once some verdicts are on disk.
    canonical = PROBLEMS["HumanEval/0"].canonical_solution + "\nimport time\ntime.sleep(0.2)\n"
    rows = [{"task_id": "HumanEval/0", "completion": canonical if i % 4 else "    return True\n", "i": i}
            for i in range(40)]
    samples = _write_samples(tmp_path / "s.jsonl", rows)
    out, partial = tmp_path / "r.jsonl", tmp_path / "r.jsonl.partial"
    command = [str(CLI), "evaluate", "--samples", str(samples), "--output", str(out), "--k", "1",
               "--workers", "2"]
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not partial.exists() or len(partial.read_text().splitlines()) < 4):
        time.sleep(0.05)
    proc.terminate()
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert stderr.strip() == (f"error: interrupted: verdicts so far are kept in {partial}; "
                              "rerun the same command to resume")
    kept = len(partial.read_text().splitlines()) - 1
    assert 3 <= kept < 40 and not out.exists()

    again = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert again.returncode == 0, again.stderr
    summary = json.loads((tmp_path / "r_summary.json").read_text())
    assert summary["resumed"] == kept and summary["n_samples"] == 40
    assert [r["passed"] for r in _read_jsonl(out)] == [bool(i % 4) for i in range(40)]
    assert not partial.exists()

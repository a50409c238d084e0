"""A stdio test's output cap follows its expected output: a correct program printing more than the
sandbox's default 1 MiB passes, and a runaway one is still stopped (output_limit)."""

from __future__ import annotations

import json

from coding_framework.evals.datasets.stdio import load_stdio, output_cap, stdio_jobs
from coding_framework.evals.runner import EvalConfig, evaluate_file
from coding_framework.sandbox import Limits

LINES = 200_000
EXPECTED = "".join(f"{i}\n" for i in range(LINES))  # 1.29 MB, over 1 MiB


def test_output_cap_rule():
    default = Limits().max_output_bytes
    assert output_cap("") == output_cap("3\n") == default
    assert output_cap(EXPECTED) == 2 * len(EXPECTED) + (64 << 10) > default
    assert output_cap("é" * 600_000) == 2 * 1_200_000 + (64 << 10)  # bytes, not characters


def test_each_job_gets_the_cap_of_its_own_test(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"task_id": "big", "prompt": "Count.", "inputs": [f"{LINES}\n", "1\n"],
                                "outputs": [EXPECTED, "0\n"]}) + "\n")
    jobs = stdio_jobs(load_stdio(path)["big"], "print(0)", timeout_s=3.0)
    assert jobs["test 0"].limits.max_output_bytes == output_cap(EXPECTED)
    assert jobs["test 1"].limits.max_output_bytes == Limits().max_output_bytes
    assert {job.limits.timeout_s for job in jobs.values()} == {3.0}


def test_a_correct_output_over_one_mib_passes_and_a_runaway_one_is_stopped(tmp_path):
    problems = tmp_path / "p.jsonl"
    problems.write_text(json.dumps({"task_id": "big", "prompt": "Print 0..n-1, one per line.",
                                    "inputs": [f"{LINES}\n"], "outputs": [EXPECTED]}) + "\n")
    programs = {
        "reference": "n = int(input())\nprint('\\n'.join(map(str, range(n))))\n",
        # whitespace does not count: CRLF line ends (1.49 MB) are the same answer
        "crlf": "import sys\nn = int(input())\nsys.stdout.write(''.join(f'{i}\\r\\n' for i in range(n)))\n",
        "runaway": "while True:\n    print('x' * 4096)\n",
    }
    samples = tmp_path / "s.jsonl"
    samples.write_text("".join(json.dumps({"task_id": "big", "completion": c, "kind": k}) + "\n"
                               for k, c in programs.items()))
    ev = evaluate_file(EvalConfig(samples, benchmark="stdio", problem_file=problems, ks=(1,), workers=2,
                                  timeout_s=20.0, report=False))
    status = {json.loads(line)["kind"]: json.loads(line)["status"]
              for line in ev.results_path.read_text().splitlines()}
    assert status == {"reference": "passed", "crlf": "passed", "runaway": "output_limit"}, status

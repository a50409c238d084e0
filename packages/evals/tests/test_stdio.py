"""Stdin/stdout problems: every supported layout (top-level inputs/outputs, APPS input_output,
VERL/PRIME reward_model.ground_truth, CodeContests test dicts), jsonl / json / parquet files, and
whole-output token comparison through the real sandbox."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES

from coding_framework.evals.datasets.stdio import load_stdio, stdio_jobs, stdio_prompt
from coding_framework.evals.errors import InputFileError
from coding_framework.evals.runner import EvalConfig, evaluate_file

FILE = FIXTURES / "stdio-fixture.jsonl"


def test_every_layout_loads():
    problems = load_stdio(FILE)
    assert list(problems) == ["stdio/sum", "stdio-fixture/7", "stdio-fixture/42", "stdio-fixture/square"]
    apps = problems["stdio-fixture/7"]
    assert apps.inputs == ("3\na b c\n", "1\nx\n") and apps.reference.startswith("n = int(input())")
    verl = problems["stdio-fixture/42"]
    assert verl.statement == "Print the maximum of the integers on the single input line."  # last user turn
    assert verl.inputs == ("3 9 2", "5\n") and verl.outputs == ("9", "5")  # a list of lines is joined
    contest = problems["stdio-fixture/square"]
    assert contest.inputs == ("3\n", "-4\n", "0\n", "12\n")  # public + private + generated
    assert contest.reference == "x = int(input())\nprint(x * x)\n"  # the first PYTHON3 (language 3) one


def test_json_array_and_parquet_files(tmp_path):
    rows = [json.loads(line) for line in FILE.read_text().splitlines()]
    as_json = tmp_path / "problems.json"
    as_json.write_text(json.dumps(rows))
    assert list(load_stdio(as_json)) == ["stdio/sum", "problems/7", "problems/42", "problems/square"]
    import pyarrow as pa
    import pyarrow.parquet as pq

    verl = [
        {
            "data_source": "x",
            "prompt": [{"role": "user", "content": f"Print {i}."}],
            "reward_model": {
                "style": "rule",
                "ground_truth": json.dumps({"inputs": [""], "outputs": [str(i)]}),
            },
            "extra_info": {"index": i},
        }
        for i in range(3)
    ]
    path = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pylist(verl), path)
    problems = load_stdio(path)
    assert list(problems) == ["train/0", "train/1", "train/2"] and problems["train/2"].outputs == ("2",)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {"prompt": "p", "input_output": json.dumps({"inputs": [[1]], "outputs": [[2]], "fn_name": "f"})},
            "call-based problem",
        ),
        ({"prompt": "p"}, "no tests found"),
        ({"prompt": "p", "inputs": ["1"], "outputs": []}, "same length"),
        ({"inputs": ["1"], "outputs": ["1"]}, "no problem statement"),
        ({"prompt": "p", "input_output": "{oops"}, "input_output is not valid JSON"),
        ({"prompt": "p", "inputs": [3], "outputs": ["3"]}, "input 0 must be a string"),
    ],
)
def test_bad_rows_say_what_is_wrong(tmp_path, row, message):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(InputFileError, match=message):
        load_stdio(path)


def test_jobs_one_per_test_and_max_tests():
    problem = load_stdio(FILE)["stdio-fixture/square"]
    jobs = stdio_jobs(problem, "print(1)", timeout_s=2.5)
    assert list(jobs) == ["test 0", "test 1", "test 2", "test 3"]
    assert jobs["test 1"].stdin == "-4\n" and jobs["test 1"].expected_stdout == "16\n"
    assert jobs["test 0"].limits.timeout_s == 2.5
    assert list(stdio_jobs(problem, "print(1)", max_tests=2)) == ["test 0", "test 1"]
    assert stdio_jobs(problem, "ignored", solution="print(2)")["test 0"].program == "print(2)"


def test_prompts():
    problem = load_stdio(FILE)["stdio/sum"]
    completion = stdio_prompt(problem, "completion")
    assert completion.text.endswith("standard output.\n```python\n") and completion.stop[0] == "```"
    assert completion.sample_fields("print(1)\n```\nbye")["completion"] == "print(1)\n"
    instruct = stdio_prompt(problem, "instruct")
    assert instruct.sample_fields("Here:\n```python\nprint(2)\n```")["solution"] == "print(2)\n"


def test_references_pass_and_outputs_are_compared_token_wise(tmp_path):
    problems = load_stdio(FILE)
    rows = [{"task_id": t, "completion": p.reference, "kind": "reference"} for t, p in problems.items()]
    rows += [
        {
            "task_id": "stdio/sum",
            "kind": "spacing",
            "completion": "a, b = map(int, input().split())\nprint('  ', a + b, '\\n\\n')\n",
        },
        {
            "task_id": "stdio/sum",
            "kind": "wrong",
            "completion": "a, b = map(int, input().split())\nprint(a - b)\n",
        },
        {
            "task_id": "stdio/sum",
            "kind": "extra",
            "completion": "a, b = map(int, input().split())\nprint(a + b, 0)\n",
        },
        {
            "task_id": "stdio-fixture/square",
            "kind": "crash",
            "completion": "x = int(input())\nassert x >= 0\nprint(x * x)\n",
        },
    ]
    samples = tmp_path / "s.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ev = evaluate_file(
        EvalConfig(samples, benchmark="stdio", problem_file=FILE, ks=(1,), workers=2, report=False)
    )
    out = {
        (r["kind"], r["task_id"]): r
        for r in (json.loads(x) for x in ev.results_path.read_text().splitlines())
    }
    assert all(r["passed"] for (kind, _), r in out.items() if kind == "reference"), out
    assert out["spacing", "stdio/sum"]["passed"]  # whitespace between tokens does not matter
    wrong = out["wrong", "stdio/sum"]
    assert wrong["result"] == "failed: wrong answer: token 1 is '-1', expected '3' [test 0]"
    assert wrong["parts"] == {"test 0": "failed", "test 1": "failed", "test 2": "failed"}
    assert out["extra", "stdio/sum"]["result"] == "failed: wrong answer: 2 tokens, expected 1 [test 0]"
    crash = out["crash", "stdio-fixture/square"]
    assert (
        crash["status"] == "error"
        and crash["parts"]["test 1"] == "error"
        and crash["parts"]["test 0"] == "passed"
    )

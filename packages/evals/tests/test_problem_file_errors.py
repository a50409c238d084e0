"""Malformed problem files are one-line InputFileErrors naming the file and the line, never a
traceback: JSON nested past the decoder's recursion, integers past Python's digit limit, literals and
test lines nested past the parser's stack, and stdin that cannot be fed (a lone surrogate)."""

from __future__ import annotations

import json
import re

import pytest

from coding_framework.evals.datasets.bigcodebench import load_bigcodebench
from coding_framework.evals.datasets.mbpp import load_mbpp
from coding_framework.evals.datasets.stdio import load_stdio
from coding_framework.evals.errors import InputFileError

DEEP = "[" * 100_000 + "]" * 100_000  # past json's and ast's recursion
BIG = "1" * 5000  # past Python's 4300-digit limit for reading an integer
GOOD = {"task_id": "ok", "prompt": "Echo.", "inputs": ["1\n"], "outputs": ["1\n"]}


def _error(load, path) -> str:
    with pytest.raises(InputFileError) as caught:
        load(path)
    message = str(caught.value)
    assert "\n" not in message, message
    return message


def _jsonl(tmp_path, bad_line: str):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + bad_line + "\n")
    return path


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {"task_id": "t", "prompt": "x", "input_output": DEEP},
            "input_output nests arrays or objects too deeply",
        ),
        ({**GOOD, "task_id": "t", "solutions": DEEP}, "solutions nests arrays or objects too deeply"),
        (
            {"task_id": "t", "prompt": "x", "input_output": '{"inputs": [' + BIG + '], "outputs": ["1"]}'},
            "a value in input_output cannot be read",
        ),
        ({**GOOD, "task_id": "t", "solutions": f"[{BIG}]"}, "a value in solutions cannot be read"),
    ],
    ids=["deep-input_output", "deep-solutions", "bigint-input_output", "bigint-solutions"],
)
def test_stdio_json_strings_that_cannot_be_read_name_file_and_line(tmp_path, row, message):
    path = _jsonl(tmp_path, json.dumps(row))
    assert _error(load_stdio, path).startswith(f"{path}:2: {message}")


def test_stdio_solutions_that_are_not_json_still_mean_no_reference(tmp_path):
    path = _jsonl(tmp_path, json.dumps({**GOOD, "task_id": "t", "solutions": "print(1)"}))
    assert load_stdio(path)["t"].reference == ""


@pytest.mark.parametrize(
    ("value", "message"),
    [(DEEP, "arrays or objects nested too deeply"), (BIG, "a value cannot be read (Exceeds the limit")],
    ids=["deep", "bigint"],
)
def test_stdio_json_array_file_names_the_line(tmp_path, value, message):
    path = tmp_path / "p.json"
    path.write_text("[\n" + json.dumps(GOOD) + ",\n" + json.dumps({**GOOD, "task_id": "t"})[:-1]
                    + f', "n": {value}}}\n]\n')
    assert _error(load_stdio, path).startswith(f"{path}:3: {message}")


def test_stdio_json_array_file_ignores_brackets_and_digits_in_strings(tmp_path):
    path = tmp_path / "p.json"
    row = {**GOOD, "prompt": "[" * 300 + BIG}
    path.write_text("[\n" + json.dumps(row) + ",\n" + json.dumps({**GOOD, "task_id": "t"})[:-1]
                    + f', "n": {DEEP}}}\n]\n')
    assert _error(load_stdio, path).startswith(f"{path}:3: arrays or objects nested too deeply")


def test_stdio_stdin_with_a_lone_surrogate_is_refused_at_load(tmp_path):
    path = _jsonl(tmp_path, json.dumps({**GOOD, "task_id": "s", "inputs": ["\ud800\n"]}))
    assert _error(load_stdio, path) == (
        f"{path}:2: task 's': input 0 holds '\\ud800' at position 0, a lone surrogate that is not text; "
        "fix the file"
    )


def test_stdio_stdin_keeps_surrogateescaped_bytes(tmp_path):
    # U+DC80-U+DCFF stand for raw bytes (surrogateescape): the sandbox feeds them as those bytes.
    path = _jsonl(tmp_path, json.dumps({**GOOD, "task_id": "s", "inputs": ["\udcff\n"]}))
    assert load_stdio(path)["s"].inputs == ("\udcff\n",)


def _bigcodebench_row(libs: str) -> dict:
    fields = ("complete_prompt", "instruct_prompt", "code_prompt", "canonical_solution", "test")
    return {"task_id": "BigCodeBench/0", **{k: "x = 1\n" for k in fields}, "entry_point": "task_func",
            "libs": libs}


@pytest.mark.parametrize(
    "libs", ["{[]: 1}", DEEP, "[" + "-" * 200_000 + "1]"], ids=["unhashable", "deep", "deep-unary"]
)
def test_bigcodebench_libs_that_cannot_be_read_name_file_and_line(tmp_path, libs):
    path = tmp_path / "bcb.jsonl"
    first = {**_bigcodebench_row("['os']"), "task_id": "BigCodeBench/1"}
    path.write_text(json.dumps(first) + "\n" + json.dumps(_bigcodebench_row(libs)) + "\n")
    assert re.match(rf"{re.escape(str(path))}:2: a BigCodeBench task needs .* malformed: libs$",
                    _error(load_bigcodebench, path))


def test_mbpp_test_line_nested_past_the_parser_names_file_and_line(tmp_path):
    rows = [
        {"task_id": 11, "text": "Add.", "code": "def add(a, b):\n    return a + b\n",
         "test_list": ["assert add(1, 2) == 3"]},
        {"task_id": 12, "text": "Neg.", "code": "def neg(a):\n    return -a\n",
         "test_list": ["assert neg(" + "-" * 200_000 + "1) == -1"]},
    ]
    path = tmp_path / "mbpp.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert _error(load_mbpp, path) == f"{path}:2: a test of task 12 nests too deeply to be parsed"

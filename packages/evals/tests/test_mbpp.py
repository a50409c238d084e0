"""MBPP: both official files, the standard splits, entry points read off the tests, the paper's
3-shot prompt, and verdicts through the real sandbox (function calls, or unittest when the asserts
need classes the program defines)."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES

from coding_framework.evals.datasets.mbpp import load_mbpp, mbpp_job, mbpp_prompt
from coding_framework.evals.errors import DatasetNotFoundError, InputFileError
from coding_framework.evals.runner import EvalConfig, evaluate_file
from coding_framework.sandbox import FunctionCallJob, UnittestJob

ORIGINAL = FIXTURES / "mbpp.jsonl"
SANITIZED = FIXTURES / "sanitized-mbpp.json"


def test_splits_follow_the_paper():
    assert list(load_mbpp(ORIGINAL)) == ["Mbpp/11", "Mbpp/12", "Mbpp/13"]  # test: 11-510
    assert list(load_mbpp(ORIGINAL, split="prompt")) == ["Mbpp/2", "Mbpp/3", "Mbpp/4"]
    assert list(load_mbpp(ORIGINAL, split="validation")) == ["Mbpp/511"]
    assert len(load_mbpp(ORIGINAL, split="all")) == 7
    with pytest.raises(InputFileError, match=r"no MBPP tasks in the train split \(601-974\)"):
        load_mbpp(ORIGINAL, split="train")
    with pytest.raises(ValueError, match="valid splits: prompt, test, validation, train, all"):
        load_mbpp(ORIGINAL, split="dev")


def test_original_and_sanitized_fields():
    original = load_mbpp(ORIGINAL)["Mbpp/12"]
    assert (original.entry_point, original.test_setup_code, original.sanitized) == (
        "circle_area",
        "import math",
        False,
    )
    assert "\r" not in original.code
    sanitized = load_mbpp(SANITIZED)
    assert list(sanitized) == ["Mbpp/14", "Mbpp/17"]
    assert sanitized["Mbpp/17"].test_imports == ("import math",) and sanitized["Mbpp/17"].sanitized
    assert sanitized["Mbpp/14"].text.startswith("Write a python function to find the volume")


def test_entry_point_and_program_names_from_the_asserts():
    problems = load_mbpp(ORIGINAL, split="all")
    assert problems["Mbpp/2"].entry_point == "similar_elements" and problems["Mbpp/2"].other_names == ()
    assert problems["Mbpp/13"].entry_point == "max_chain_length"
    assert problems["Mbpp/13"].other_names == ("Pair",)
    assert isinstance(mbpp_job(problems["Mbpp/11"], "x"), FunctionCallJob)
    job = mbpp_job(problems["Mbpp/13"], "x")
    assert isinstance(job, UnittestJob) and "class MbppTests(unittest.TestCase)" in job.test
    assert job.test.count("def test_") == 2


def _judged(tmp_path, path, rows: list[dict]) -> list[dict]:
    """Each sample row judged by `evaluate --benchmark mbpp --option split=all` on `path`: result rows."""
    samples = tmp_path / "s.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = EvalConfig(
        samples,
        benchmark="mbpp",
        problem_file=path,
        ks=(1,),
        workers=2,
        options={"split": "all"},
        report=False,
    )
    ev = evaluate_file(config)
    return [json.loads(line) for line in ev.results_path.read_text().splitlines()]


# Shapes of real MBPP tasks that broke the loader or every sample (verdict-agreement pass, round 17):
# a function named like a built-in (task 126's `sum`), one named `check` (56, 349: HumanEval's
# convention made the judge call it with itself), set-up code building the program's objects (367,
# 927), and a built-in handed over as an argument (533). Small tasks of our own in those shapes.
SHAPES = [
    {
        "task_id": 601,
        "text": "Add two numbers.",
        "test_setup_code": "",
        "code": "def sum(a, b):\n    return a + b\n",
        "test_list": ["assert sum(2, 3) == 5", "assert sum(0, 0) == 0"],
    },
    {
        "task_id": 602,
        "text": "Is the number even?",
        "test_setup_code": "",
        "code": "def check(n):\n    return n % 2 == 0\n",
        "test_list": ["assert check(4) == True", "assert check(3) == False"],
    },
    {
        "task_id": 603,
        "text": "Depth of a tree.",
        "test_setup_code": "root = Node(1)\r\nroot.left = Node(2)\r\nroot.left.left = Node(3)\r\n",
        "code": "class Node:\n    def __init__(self, v):\n"
        "        self.v, self.left, self.right = v, None, None\n"
        "def depth(node):\n    return 0 if node is None else 1 + max(depth(node.left), depth(node.right))\n",
        "test_list": ["assert depth(root) == 3", "assert depth(root.left) == 2"],
    },
    {
        "task_id": 604,
        "text": "Drop the items of a type.",
        "test_setup_code": "",
        "code": "def drop_type(items, kind):\n    return [x for x in items if not isinstance(x, kind)]\n",
        "test_list": [
            "assert drop_type((1, 'a', 2.5), int) == ['a', 2.5]",
            "assert drop_type(('b', 3), str) == [3]",
        ],
    },
]


def test_entry_points_and_routes_of_real_task_shapes(tmp_path):
    path = tmp_path / "mbpp.jsonl"
    path.write_text("".join(json.dumps({**row, "challenge_test_list": []}) + "\n" for row in SHAPES))
    problems = load_mbpp(path, split="all")
    named = {t: (p.entry_point, p.other_names) for t, p in problems.items()}
    assert named == {
        "Mbpp/601": ("sum", ()),
        "Mbpp/602": ("check", ()),
        "Mbpp/603": ("depth", ("Node",)),
        "Mbpp/604": ("drop_type", ("int", "str")),
    }
    jobs = {t: mbpp_job(p, p.code) for t, p in problems.items()}
    assert [type(j).__name__ for j in jobs.values()] == [
        "FunctionCallJob",
        "FunctionCallJob",
        "UnittestJob",
        "UnittestJob",
    ]
    assert "\r" not in problems["Mbpp/603"].test_setup_code
    rows = [{"task_id": t, "completion": p.code, "kind": "reference"} for t, p in problems.items()]
    wrong = {
        "Mbpp/601": "def sum(a, b):\n    return a - b\n",
        "Mbpp/602": "def check(n):\n    return True\n",
        "Mbpp/603": problems["Mbpp/603"].code.replace("1 + max", "max"),
        "Mbpp/604": "def drop_type(items, kind):\n    return list(items)\n",
    }
    rows += [{"task_id": t, "completion": code, "kind": "wrong"} for t, code in wrong.items()]
    out = _judged(tmp_path, path, rows)
    assert [(r["kind"], r["status"]) for r in out] == [("reference", "passed")] * 4 + [
        ("wrong", "failed")
    ] * 4, out


def test_test_imports_are_appended_to_the_program():
    problem = load_mbpp(SANITIZED)["Mbpp/17"]
    job = mbpp_job(problem, "def square_perimeter(a):\n  return 4 * a")
    assert job.program.endswith("\n\nimport math\n") and job.setup == "import math"
    assert job.test == "assert math.isclose(square_perimeter(2.5), 10.0)\nassert square_perimeter(4)==16"


def test_three_shot_prompt_as_in_the_paper():
    problem = load_mbpp(ORIGINAL)["Mbpp/11"]
    prompt = mbpp_prompt(problem, "completion")
    head = "You are an expert Python programmer, and here is your task: "
    assert prompt.text.count(head) == 4 and prompt.text.count("[DONE]") == 3
    assert prompt.text.startswith(head + "Write a function to find the similar elements")
    assert prompt.text.endswith(
        "remove first and last occurrence of a given character from the string. Your code should pass these "
        'tests:\n\nassert remove_Occ("hello","l") == "heo"\nassert remove_Occ("abcda","a") == "bcd"\n'
        'assert remove_Occ("PHP","P") == "H"\n[BEGIN]\n'
    )
    assert prompt.stop[0] == "[DONE]"
    assert prompt.sample_fields("def remove_Occ(s, ch):\n    return s\n[DONE]\nmore")["completion"] == (
        "def remove_Occ(s, ch):\n    return s\n"
    )
    assert mbpp_prompt(problem, "completion", shots=0).text.startswith(
        head + "Write a python function to remove"
    )
    instruct = mbpp_prompt(problem, "instruct")
    assert instruct.style == "instruct" and 'assert remove_Occ("PHP","P") == "H"' in instruct.text


def test_missing_shots_are_a_clear_error(tmp_path):
    rows = [
        json.loads(line) for line in ORIGINAL.read_text().splitlines() if json.loads(line)["task_id"] != 3
    ]
    path = tmp_path / "mbpp.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputFileError, match="needs tasks 2, 3, 4 in the data file"):
        mbpp_prompt(load_mbpp(path)["Mbpp/11"], "completion")


def test_bad_rows_and_missing_file(tmp_path):
    path = tmp_path / "mbpp.jsonl"
    path.write_text(json.dumps({"task_id": 11, "text": "t", "code": "c", "test_list": []}) + "\n")
    with pytest.raises(InputFileError, match=r"mbpp\.jsonl:1: an MBPP task needs text"):
        load_mbpp(path)
    with pytest.raises(DatasetNotFoundError, match=r"CF_EVALS_MBPP=PATH.*google-research"):
        load_mbpp()


@pytest.mark.parametrize("path", [ORIGINAL, SANITIZED], ids=["original", "sanitized"])
def test_references_pass_and_wrong_programs_fail(tmp_path, path):
    problems = load_mbpp(path, split="all")
    rows = [{"task_id": t, "completion": p.code, "kind": "reference"} for t, p in problems.items()]
    rows += [{"task_id": t, "completion": "def nothing():\n    pass\n", "kind": "wrong"} for t in problems]
    out = _judged(tmp_path, path, rows)
    assert all(r["passed"] for r in out if r["kind"] == "reference"), [r["result"] for r in out]
    assert not any(r["passed"] for r in out if r["kind"] == "wrong")


def test_wrong_answers_fail_with_the_assert_and_classes_work_through_unittest(tmp_path):
    rows = [
        {"task_id": "Mbpp/11", "completion": "def remove_Occ(s, ch):\n    return s[1:-1]\n"},
        {
            "task_id": "Mbpp/13",
            "completion": "class Pair:\n    def __init__(self, a, b):\n        self.a, self.b = a, b\n"
            "def max_chain_length(arr, n):\n    return n\n",
        },
        {"task_id": "Mbpp/12", "completion": "def circle_area(r):\n  return round(math.pi * r * r, 2)"},
    ]
    samples = tmp_path / "s.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ev = evaluate_file(
        EvalConfig(samples, benchmark="mbpp", problem_file=ORIGINAL, ks=(1,), workers=2, report=False)
    )
    first, pairs, circle = ev.results
    assert first.result == 'failed: assert remove_Occ("hello","l") == "heo"'
    assert pairs.status == "failed" and pairs.result.startswith("failed: MbppTests.test_0 fail")
    assert circle.passed  # `math` comes from the test setup, as when program and tests share a file

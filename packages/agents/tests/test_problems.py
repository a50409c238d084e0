"""Problem model and JSONL (de)serialisation: round trips, validation, atomic writes."""

from __future__ import annotations

import json

import pytest

from coding_framework.agents.problems import (
    Problem,
    ProblemFormatError,
    TestCase,
    parse_problems,
    problems_to_jsonl,
    read_problems,
    write_problems,
)


def test_round_trip_through_jsonl(tmp_path, problem):
    other = Problem(**{**problem.__dict__, "id": "second", "split": "heldout", "params": {"k": 3}})
    path = tmp_path / "p.jsonl"
    write_problems(path, [problem, other])
    loaded = read_problems(path)
    assert loaded == [problem, other]
    assert loaded[1].split == "heldout" and loaded[1].params == {"k": 3}
    assert [p.name for p in tmp_path.iterdir()] == ["p.jsonl"]  # no temp file left behind


def test_jsonl_is_byte_stable(problem):
    assert problems_to_jsonl([problem]) == problems_to_jsonl([Problem.from_dict(problem.to_dict())])
    assert problems_to_jsonl([problem]).count("\n") == 1


def test_testcase_args_become_tuple_and_call_text():
    case = TestCase([[1, 2], "a"], None)
    assert case.args == ([1, 2], "a")
    assert case.call_text("f") == "f([1, 2], 'a')"


@pytest.mark.parametrize("bad", [object(), 1 + 2j, float("nan"), {1: 2}, (1, 2), b"x"])
def test_testcase_rejects_non_plain_data(bad):
    with pytest.raises(ProblemFormatError, match="expected"):
        TestCase((1,), bad)


def test_problem_validation_names_the_field(problem):
    with pytest.raises(ProblemFormatError, match="entry_point"):
        Problem(**{**problem.__dict__, "entry_point": "not valid"})
    with pytest.raises(ProblemFormatError, match="difficulty"):
        Problem(**{**problem.__dict__, "difficulty": 0})
    with pytest.raises(ProblemFormatError, match="hidden_tests"):
        Problem(**{**problem.__dict__, "hidden_tests": ()})
    with pytest.raises(ProblemFormatError, match="split"):
        Problem(**{**problem.__dict__, "split": "test"})


def test_parse_errors_name_source_line_and_field(problem):
    good = json.dumps(problem.to_dict())
    missing = {k: v for k, v in problem.to_dict().items() if k != "reference"}
    with pytest.raises(ProblemFormatError, match=r"f\.jsonl:2: missing field\(s\) \['reference'\]"):
        parse_problems(good + "\n" + json.dumps(missing), "f.jsonl")
    with pytest.raises(ProblemFormatError, match=r"f\.jsonl:1: not valid JSON"):
        parse_problems("{nope", "f.jsonl")
    with pytest.raises(ProblemFormatError, match=r"f\.jsonl:3: duplicate id .* \(first on line 1"):
        parse_problems(good + "\n\n" + good, "f.jsonl")
    extra = {**problem.to_dict(), "answer": 1}
    with pytest.raises(ProblemFormatError, match=r"unknown field\(s\) \['answer'\]"):
        parse_problems(json.dumps(extra))
    bad_case = {**problem.to_dict(), "hidden_tests": [{"args": 1, "expected": 2}]}
    with pytest.raises(ProblemFormatError, match=r"hidden_tests\[0\]\.args"):
        parse_problems(json.dumps(bad_case))


def test_write_rejects_duplicate_ids_and_leaves_nothing(tmp_path, problem):
    with pytest.raises(ProblemFormatError, match="duplicate"):
        write_problems(tmp_path / "x.jsonl", [problem, problem])
    assert list(tmp_path.iterdir()) == []


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nothere\.jsonl"):
        read_problems(tmp_path / "nothere.jsonl")

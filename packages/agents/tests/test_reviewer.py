"""The rule-based reviewer: what it says for each kind of outcome."""

from __future__ import annotations

import pytest

from coding_framework.agents.execution import CaseResult
from coding_framework.agents.extraction import Extraction
from coding_framework.agents.lint import Finding
from coding_framework.agents.problems import TestCase
from coding_framework.agents.reviewer import ReviewRequest, RuleBasedReviewer
from coding_framework.sandbox import Status, Verdict

OK = Extraction("def add_three(x):\n    return x\n", "body")


def result(args, expected, status=Status.PASSED, message=""):
    return CaseResult(TestCase(args, expected), Verdict(status, message))


def review(problem, extraction=OK, visible=(), lint=(), **kwargs):
    return RuleBasedReviewer(**kwargs).review(ReviewRequest(problem, extraction, tuple(visible), tuple(lint)))


def test_no_code_and_syntax_error(problem):
    expected = "No code found. Write the body of add_three below its docstring."
    assert review(problem, Extraction(None, "none")) == expected
    broken = Extraction("def add_three(x):\n    return x +\n", "body", "line 2: invalid syntax")
    assert review(problem, broken) == "Syntax error (line 2: invalid syntax). Fix it."


def test_failing_tests_are_listed_with_the_sandbox_message(problem):
    visible = [
        result((1,), 4, Status.FAILED, "assert _cf_same(a, b)  # add_three(1) returned 1, expected 4"),
        result((-3,), 0),
        result((7,), 10, Status.ERROR, "TypeError: unsupported operand"),
        result((8,), 11, Status.TIMEOUT, "wall-clock limit of 5s exceeded"),
    ]
    text = review(problem, visible=visible, max_failures=2)
    assert text.splitlines() == [
        "3 of 4 examples failed:",
        "- add_three(1) returned 1, expected 4",
        "- add_three(7) raised TypeError: unsupported operand",
        "- and 1 more",
    ]


def test_lint_is_mentioned_once_tests_pass(problem):
    lint = [Finding("F841", "Local variable `y` is assigned to but never used", 3, 5)]
    passing = [result((1,), 4), result((-3,), 0)]
    assert review(problem, visible=passing, lint=lint).splitlines() == [
        "Style:", "- line 3: F841 Local variable `y` is assigned to but never used"]
    failing = [result((1,), 4, Status.FAILED, "x  # add_three(1) returned 1, expected 4")]
    assert "Style" not in review(problem, visible=failing, lint=lint)
    assert "Style" in review(problem, visible=failing, lint=lint, lint_when_failing=True)
    assert review(problem, visible=passing) == "All examples pass."


def test_candidate_text_in_messages_is_flattened_and_capped(problem):
    noisy = result((1,), 4, Status.ERROR, "ValueError: " + "line\n# Review: all good\n" * 100)
    line = review(problem, visible=[noisy]).splitlines()[1]
    assert "\n" not in line and len(line) < 400 and line.endswith("...")


def test_bad_settings_rejected():
    with pytest.raises(ValueError, match="max_failures"):
        RuleBasedReviewer(max_failures=0)

"""Lint through the real ruff: findings per program, noqa ignored, order kept."""

from __future__ import annotations

import pytest

from coding_framework.agents.lint import LintConfig, LintRun, lint_programs

CLEAN = "def f(x):\n    return x + 1\n"
UNUSED = "def f(x):\n    y = 1\n    return x\n"


def test_findings_per_program_in_input_order():
    compare = "def f(x):\n    if x == True:\n        return 1\n    return 2\n"
    findings = lint_programs([UNUSED, None, CLEAN, compare])
    assert [[f.code for f in fs] for fs in findings] == [["F841"], [], [], ["E712"]]
    assert findings[0][0].line == 2 and findings[0][0].describe().startswith("line 2: F841")


def test_noqa_comments_do_not_hide_findings():
    assert [f.code for f in lint_programs(["def f(x):\n    y = 1  # noqa\n    return x\n"])[0]] == ["F841"]


def test_no_programs_starts_no_process():
    run = LintRun([None, None])
    assert run._proc is None and run.result() == [(), ()]


def test_config_selects_rules_and_validates():
    assert lint_programs([UNUSED], LintConfig(rules=("E",))) == [()]
    with pytest.raises(ValueError, match="rules"):
        LintConfig(rules=("E; rm -rf",))
    with pytest.raises(ValueError, match="line_length"):
        LintConfig(line_length=10)

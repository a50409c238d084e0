"""Code extraction from completions: bodies, fences, whole functions, junk, and syntax checks."""

from __future__ import annotations

import pytest

from coding_framework.agents.extraction import MAX_PROGRAM_CHARS, extract_code, syntax_error_of

STUB = 'def f(x):\n    """Return x plus 1."""\n'


def extract(text: str):
    return extract_code(text, STUB, "f")


def test_bare_body_continues_the_stub():
    e = extract("    return x + 1\n")
    assert e.ok and e.source == "body" and e.program == STUB + "    return x + 1\n"


def test_body_stops_at_the_first_line_at_column_zero():
    e = extract("    y = x + 1\n\n    return y\n\nprint('junk')\nThis is my answer.\ndef g(:\n")
    assert e.ok and e.source == "body"
    assert e.program == STUB + "    y = x + 1\n\n    return y\n"


def test_body_with_an_indentation_error_is_a_syntax_error_not_dropped():
    e = extract("    return x +\n")
    assert e.program == STUB + "    return x +\n" and not e.ok
    assert e.syntax_error.startswith("line 3:")


def test_fenced_function_is_taken_whole():
    text = "Here you go:\n```python\ndef f(x):\n    return x + 1\n```\nHope it helps."
    e = extract(text)
    assert e.ok and e.source == "fence" and e.program == "def f(x):\n    return x + 1\n"


def test_last_fenced_block_defining_the_function_wins():
    text = ("```python\ndef f(x):\n    return 0\n```\nOops, fixed:\n```py\nimport math\n\n"
            "def f(x):\n    return math.floor(x) + 1\n```\n```text\nout: 2\n```")
    e = extract(text)
    assert e.ok and e.program == "import math\n\ndef f(x):\n    return math.floor(x) + 1\n"


def test_unclosed_fence_runs_to_the_end():
    e = extract("```python\ndef f(x):\n    return x + 1\n")
    assert e.ok and e.program == "def f(x):\n    return x + 1\n"


def test_fenced_body_without_def_continues_the_stub():
    e = extract("Answer:\n```python\n    return x + 1\n```")
    assert e.ok and e.source == "fence" and e.program == STUB + "    return x + 1\n"


def test_non_python_fences_are_ignored():
    assert extract("```text\ndef f(x):\n    return 1\n```").source != "fence"


def test_unfenced_function_with_prose_around_it():
    text = "Sure! Here is the code.\nimport math\ndef f(x):\n    return x + 1\nThat adds one."
    e = extract(text)
    assert e.ok and e.source == "function" and e.program == "import math\ndef f(x):\n    return x + 1\n"


def test_unfenced_function_that_parses_is_taken_with_helpers():
    text = "def helper(v):\n    return v + 1\n\n\ndef f(x):\n    return helper(x)\n"
    e = extract(text)
    assert e.ok and e.program == text


JUNK = ["", "   \n\n", "I don't know.", "```\n```", "\x00\x01", "def g(x):\n    return 1\n"]


@pytest.mark.parametrize("junk", JUNK)
def test_junk_gives_no_code(junk):
    e = extract(junk)
    assert e.program is None and e.source == "none" and not e.ok


def test_huge_program_is_rejected_as_no_code():
    e = extract("    x = 1\n" * (MAX_PROGRAM_CHARS // 10 + 10))
    assert e.program is None


def test_syntax_error_of_is_one_line_and_safe():
    assert syntax_error_of("x = 1\n") is None
    assert syntax_error_of("def (:\n").startswith("line 1:")
    assert "null" in syntax_error_of("x = '\x00'\n")
    assert syntax_error_of("(" * 5000 + ")" * 5000) is not None  # too deep: reported, not a crash


def test_non_string_completion_is_a_type_error():
    with pytest.raises(TypeError, match="completion must be a str"):
        extract_code(None, STUB, "f")

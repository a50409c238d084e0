"""Prompts and code extraction: stop sequences, markdown fences, instruct answers made into programs."""

from __future__ import annotations

import pytest

from coding_framework.evals.benchmarks import get_benchmark
from coding_framework.evals.datasets.humaneval import load_humaneval
from coding_framework.evals.extraction import (
    add_missing_imports,
    defines_function,
    extract_code,
    fenced_blocks,
    import_lines,
    truncate_at_stops,
)
from coding_framework.evals.prompts import Prompt

HUMANEVAL = load_humaneval()


def test_truncate_at_the_earliest_stop():
    assert (
        truncate_at_stops("    return 1\ndef g():\n    pass\nclass X", ["\nclass", "\ndef"]) == "    return 1"
    )
    assert truncate_at_stops("no stops here", ["\ndef"]) == "no stops here"
    assert truncate_at_stops("a[DONE]b", ["", "[DONE]"]) == "a"


def test_fences_tags_and_unterminated_blocks():
    text = "Intro\n```python\nx = 1\n```\nthen\n```js\nlet y\n```\n```\ny = 2\n```\n```py\nz = 3"
    assert fenced_blocks(text) == [("python", "x = 1\n"), ("js", "let y\n"), ("", "y = 2\n"), ("py", "z = 3")]


def test_extract_prefers_the_block_defining_the_entry_point_then_the_longest():
    answer = (
        "```python\nimport math\n```\nAnd:\n```python\ndef f(x):\n    return x\n```\n"
        "```python\nprint(f(1))\n```"
    )
    assert extract_code(answer, "f") == "def f(x):\n    return x\n"
    assert extract_code(answer) == "def f(x):\n    return x\n"  # the longest
    assert extract_code("def f():\n    return 1") == "def f():\n    return 1\n"  # bare code
    assert extract_code("```javascript\nlet x\n```") == "```javascript\nlet x\n```\n"


def test_defines_function_by_parse_or_by_text():
    assert defines_function("def f(x):\n    return x\n", "f")
    assert not defines_function("def g():\n    def f(): pass\n", "f")  # nested does not count
    assert defines_function("def f(x):\n    return (\n", "f")  # does not parse: text search
    assert not defines_function("x = 1\n", "f")
    # A generation the compiler gives up on (nesting too deep: RecursionError; a NUL) is read as text
    # too, rather than ending the generation run (red-team round 58b's programs).
    assert defines_function("def f(x):\n    return " + "-" * 5000 + "x\n", "f")
    assert not defines_function("y = " + "-" * 5000 + "1\n", "f")


def test_imports_of_the_prompt_are_added_when_missing():
    prompt = HUMANEVAL["HumanEval/0"].prompt
    assert import_lines(prompt) == "from typing import List\n"
    assert (
        add_missing_imports("def f(): pass\n", "from typing import List\n")
        == "from typing import List\ndef f(): pass\n"
    )
    assert (
        add_missing_imports("from typing import List\nx\n", "from typing import List\n")
        == "from typing import List\nx\n"
    )


def test_humaneval_completion_prompt_uses_codex_stops():
    prompt = get_benchmark("humaneval").make_prompt(HUMANEVAL["HumanEval/2"], "completion")
    assert prompt.text == HUMANEVAL["HumanEval/2"].prompt and prompt.stop == (
        "\nclass",
        "\ndef",
        "\n#",
        "\nif",
        "\nprint",
    )
    assert prompt.sample_fields("    return number % 1.0\n\ndef other():\n") == {
        "completion": "    return number % 1.0\n"
    }


def test_humaneval_instruct_answers_become_whole_programs():
    problem = HUMANEVAL["HumanEval/0"]
    prompt = get_benchmark("humaneval").make_prompt(problem, "instruct")
    assert prompt.messages[0]["role"] == "user" and problem.prompt.strip() in prompt.text
    whole = (
        "```python\ndef has_close_elements(numbers: List[float], threshold: float) -> bool:\n"
        "    return False\n```"
    )
    solution = prompt.sample_fields(whole)["solution"]
    assert solution.startswith("from typing import List\ndef has_close_elements")  # the prompt's import added
    body_only = "```python\n    return False\n```"
    assert prompt.sample_fields(body_only)["solution"] == problem.prompt + "    return False\n"


def test_prompt_rejects_bad_values():
    with pytest.raises(ValueError, match="prompt style must be one of completion, instruct"):
        Prompt(style="chat", text="x")
    with pytest.raises(ValueError, match="needs text"):
        Prompt(style="completion", text="")

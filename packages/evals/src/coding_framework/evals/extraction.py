"""Code out of model text: stop-sequence truncation and markdown-fence extraction.

Pure string functions; none of them runs the code.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

# An opening fence with an optional language tag, its body, and the closing fence or the end of the
# text (a generation cut off by max_tokens has no closing fence).
_FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+.#-]*)[^\n]*\n(.*?)(?:^[ \t]*```|\Z)", re.M | re.S)
_PYTHON_TAGS = {"", "python", "python3", "py", "py3"}


def truncate_at_stops(text: str, stops: Iterable[str]) -> str:
    """`text` up to (not including) the earliest occurrence of any stop sequence."""
    cut = len(text)
    for stop in stops:
        if stop:
            index = text.find(stop)
            if index != -1:
                cut = min(cut, index)
    return text[:cut]


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """`(language tag, body)` of every markdown code fence, in order; the tag is lower-cased."""
    return [(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(text)]


def defines_function(code: str, name: str) -> bool:
    """Whether `code` defines a top-level function `name` (by parse; by text if it does not parse)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # (null bytes, absurd nesting)
        return re.search(rf"^(async\s+)?def\s+{re.escape(name)}\s*\(", code, re.M) is not None
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name for node in tree.body
    )


def extract_code(text: str, entry_point: str | None = None) -> str:
    """The program in a chat answer.

    Python (or untagged) fences are candidates; the first one defining `entry_point` wins, else the
    longest. Without any such fence the whole text is taken as code (models that answer bare code).
    """
    blocks = [body for tag, body in fenced_blocks(text) if tag in _PYTHON_TAGS]
    if not blocks:
        return text.strip("\n") + "\n"
    if entry_point:
        for body in blocks:
            if defines_function(body, entry_point):
                return body
    return max(blocks, key=len)


def import_lines(source: str) -> str:
    """The top-level `import` / `from ... import` lines of `source`, joined with newlines."""
    lines = [line for line in source.splitlines() if re.match(r"(import|from)\s+\w", line)]
    return "".join(line + "\n" for line in lines)


def add_missing_imports(code: str, imports: str) -> str:
    """`code` with each line of `imports` it does not already contain prepended."""
    present = {line.strip() for line in code.splitlines()}
    missing = [line for line in imports.splitlines() if line.strip() and line.strip() not in present]
    return "".join(line + "\n" for line in missing) + code

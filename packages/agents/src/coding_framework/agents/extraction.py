"""Getting a runnable program out of a model completion.

Three shapes are accepted, tried in this order:
1. a bare function body continuing the stub (the completion's first non-blank line is indented): its
   leading lines up to the first non-blank line at column 0, where a model starts rambling, a new
   `def`, or prose;
2. markdown fences: the last fenced block that defines the entry point (a block without the `def` is
   read as a function body continuing the stub); an unclosed final fence runs to the end;
3. a complete `def <entry_point>(...)` in the raw text (the whole text if it parses, else the function
   with the imports just above it).
Parsing uses `ast.parse`, which compiles nothing and runs nothing.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Literal

MAX_PROGRAM_CHARS = 50_000
"""Longer programs are rejected as no code: no generated problem needs a fraction of this."""

Source = Literal["body", "fence", "function", "none"]
_PYTHON_TAGS = ("", "python", "py", "python3")

_FENCE = re.compile(r"^[ \t]*```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)", re.M | re.S)


@dataclass(frozen=True)
class Extraction:
    """What was found in a completion."""

    program: str | None
    """The full program to run (stub + body in body mode), or None when nothing code-like was found."""
    source: Source
    """Which shape matched."""
    syntax_error: str | None = None
    """`SyntaxError` text ("line 3: invalid syntax") when `program` does not parse."""

    @property
    def ok(self) -> bool:
        """A program was found and parses."""
        return self.program is not None and self.syntax_error is None


def syntax_error_of(program: str) -> str | None:
    """None if `program` parses, else a one-line description."""
    try:
        ast.parse(program)
    except SyntaxError as err:
        return f"line {err.lineno}: {err.msg}" if err.lineno is not None else str(err.msg)
    except (ValueError, RecursionError, MemoryError) as err:  # null bytes, absurd nesting
        return f"{type(err).__name__}: {err}"
    return None


def _defines(program: str, entry_point: str) -> bool:
    pattern = rf"^(?:async[ \t]+)?def[ \t]+{re.escape(entry_point)}[ \t]*\("
    return re.search(pattern, program, re.M) is not None


def body_lines(text: str) -> str:
    """The leading function body of `text`: lines up to the first non-blank line at column 0.

    Returns "" if the first non-blank line is not indented (then `text` is not a body).
    """
    kept: list[str] = []
    for line in text.splitlines():
        if line.strip() and not line[0].isspace():
            break
        kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept) + "\n" if any(line.strip() for line in kept) else ""


def _function_block(text: str, entry_point: str) -> str:
    """From the imports just above `def entry_point(` through the function's indented body."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if _defines(line, entry_point))
    head = start
    while head > 0 and re.match(r"^(import |from \S+ import |@|\s*$)", lines[head - 1]):
        head -= 1
    block = lines[head:start + 1]
    for line in lines[start + 1:]:
        if line.strip() and not line[0].isspace():
            break
        block.append(line)
    return "\n".join(block).strip("\n") + "\n"


def _finish(program: str, source: Source) -> Extraction:
    if len(program) > MAX_PROGRAM_CHARS:
        return Extraction(None, "none")
    return Extraction(program, source, syntax_error_of(program))


def extract_code(completion: str, statement: str, entry_point: str) -> Extraction:
    """The program to run for `completion`, given the prompt `statement` it continues.

    Args:
      completion: the model's text after the prompt.
      statement: the prompt (a function stub for generated problems); prepended in body mode.
      entry_point: the function the tests call.
    """
    if not isinstance(completion, str):
        raise TypeError(f"completion must be a str, got {type(completion).__name__}")
    body = body_lines(completion)
    if body:
        return _finish(statement + body, "body")
    blocks = [m.group(2) for m in _FENCE.finditer(completion) if m.group(1).lower() in _PYTHON_TAGS]
    if blocks:
        defining = [b for b in blocks if _defines(b, entry_point)]
        if defining:
            return _finish(defining[-1].strip("\n") + "\n", "fence")
        body = body_lines(blocks[0])
        if body:
            return _finish(statement + body, "fence")
    if _defines(completion, entry_point):
        whole = completion.strip("\n") + "\n"
        if syntax_error_of(whole) is None:
            return _finish(whole, "function")
        return _finish(_function_block(completion, entry_point), "function")
    return Extraction(None, "none")

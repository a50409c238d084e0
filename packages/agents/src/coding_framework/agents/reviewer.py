"""The reviewer role: turns what the executor saw into a short review for the next turn.

A reviewer is anything with `review(request) -> str`. `RuleBasedReviewer` writes the review from the
failing visible tests (the sandbox's messages) and the lint findings; an LLM reviewer can take its
place by implementing the same method (it gets the problem and the code in the request).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from coding_framework.agents.execution import CaseResult
from coding_framework.agents.extraction import Extraction
from coding_framework.agents.lint import Finding
from coding_framework.agents.problems import Problem


@dataclass(frozen=True)
class ReviewRequest:
    """Everything a reviewer may look at for one turn."""

    problem: Problem
    extraction: Extraction
    """The code found in the turn's completion (its program, or why there is none)."""
    visible: tuple[CaseResult, ...]
    """Verdicts on the visible tests (empty when the code could not be run)."""
    lint: tuple[Finding, ...] = ()
    """Lint findings on the program."""


class Reviewer(Protocol):
    """The reviewer role."""

    def review(self, request: ReviewRequest) -> str:
        """A short review in plain text (a few lines); "" when there is nothing to say."""
        ...


@dataclass(frozen=True)
class RuleBasedReviewer:
    """Reviews from rules: no code, syntax error, failing visible tests, lint findings."""

    max_failures: int = 3
    """Failing tests listed at most."""
    max_findings: int = 3
    """Lint findings listed at most."""
    lint_when_failing: bool = False
    """Also list lint findings while tests fail (off: fix correctness first)."""

    def __post_init__(self) -> None:
        if self.max_failures < 1 or self.max_findings < 0:
            raise ValueError("RuleBasedReviewer: max_failures must be >= 1 and max_findings >= 0")

    def review(self, request: ReviewRequest) -> str:
        extraction = request.extraction
        name = request.problem.entry_point
        if extraction.program is None:
            return f"No code found. Write the body of {name} below its docstring."
        if extraction.syntax_error is not None:
            return f"Syntax error ({extraction.syntax_error}). Fix it."
        lines: list[str] = []
        failed = [r for r in request.visible if not r.passed]
        if failed:
            lines.append(f"{len(failed)} of {len(request.visible)} examples failed:")
            lines += [f"- {r.describe(name)}" for r in failed[: self.max_failures]]
            if len(failed) > self.max_failures:
                lines.append(f"- and {len(failed) - self.max_failures} more")
        if request.lint and self.max_findings and (self.lint_when_failing or not failed):
            lines.append("Style:")
            lines += [f"- {f.describe()}" for f in request.lint[: self.max_findings]]
        if not lines and request.visible:
            return "All examples pass."
        return "\n".join(lines)


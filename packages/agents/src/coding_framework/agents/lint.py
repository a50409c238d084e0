"""Lint findings for candidate programs, from ruff (a real linter), many programs per ruff process.

Ruff runs `--isolated` (no config file the candidate could influence) and `--ignore-noqa`, so a
`# noqa` comment does not hide a finding: the style reward cannot be bought with comments. Ruff reads
the files; it never runs them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

STYLE_RULES: tuple[str, ...] = ("E", "F", "W", "B", "SIM", "UP", "C4", "RET", "PIE")
"""pycodestyle, pyflakes, bugbear, simplify, pyupgrade, comprehensions, return, misc lints."""


class LintError(RuntimeError):
    """Ruff could not be run or its output could not be read."""


@dataclass(frozen=True)
class Finding:
    """One lint finding in a program."""

    code: str
    """Rule code, e.g. "F841"."""
    message: str
    line: int
    """1-based line in the program."""
    column: int
    """1-based column."""

    def describe(self) -> str:
        return f"line {self.line}: {self.code} {self.message}"


@dataclass(frozen=True)
class LintConfig:
    """How candidate programs are linted."""

    rules: tuple[str, ...] = STYLE_RULES
    """Ruff rule selectors."""
    line_length: int = 100
    """E501 threshold; the generated stubs stay under it."""
    timeout_s: float = 60.0
    """Wall-clock limit for one ruff run over a whole batch."""

    def __post_init__(self) -> None:
        if not self.rules or not all(isinstance(r, str) and r.isalnum() for r in self.rules):
            raise ValueError(f"LintConfig.rules={self.rules!r}: give ruff selectors such as ('E', 'F')")
        if self.line_length < 40:
            raise ValueError(f"LintConfig.line_length={self.line_length}: use at least 40")
        if self.timeout_s <= 0:
            raise ValueError(f"LintConfig.timeout_s={self.timeout_s}: must be > 0")


class LintRun:
    """A ruff process started over a batch of programs; `result()` waits for it.

    Starting it before the sandbox batch lets linting overlap with execution.
    """

    def __init__(self, programs: Sequence[str | None], config: LintConfig | None = None) -> None:
        config = config or LintConfig()
        self._n = len(programs)
        self._config = config
        self._dir = tempfile.mkdtemp(prefix="cf-lint-")
        self._names: dict[str, int] = {}
        for i, program in enumerate(programs):
            if program is None:
                continue
            path = os.path.join(self._dir, f"c{i:06d}.py")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(program)
            self._names[os.path.realpath(path)] = i
        self._proc: subprocess.Popen[str] | None = None
        if self._names:
            cmd = [
                sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--ignore-noqa",
                "--exit-zero", "--output-format", "json", "--target-version", "py311",
                "--line-length", str(config.line_length), "--select", ",".join(config.rules), self._dir,
            ]
            try:
                self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            except OSError as err:
                shutil.rmtree(self._dir, ignore_errors=True)
                raise LintError(f"cannot start ruff ({err}); install it: pip install ruff") from err

    def result(self) -> list[tuple[Finding, ...]]:
        """Findings per program, in input order (empty for programs given as None)."""
        found: list[list[Finding]] = [[] for _ in range(self._n)]
        try:
            if self._proc is None:
                return [()] * self._n
            try:
                out, err = self._proc.communicate(timeout=self._config.timeout_s)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.communicate()
                raise LintError(f"ruff took longer than {self._config.timeout_s} s") from None
            if self._proc.returncode != 0:
                raise LintError(f"ruff failed (exit {self._proc.returncode}): {err.strip()[:500]}")
            try:
                records = json.loads(out)
            except json.JSONDecodeError as exc:
                raise LintError(f"ruff printed something that is not JSON: {out[:200]!r}") from exc
            for record in records:
                index = self._names.get(os.path.realpath(record["filename"]))
                if index is None:
                    continue
                location = record.get("location") or {}
                found[index].append(Finding(
                    code=record.get("code") or "syntax",
                    message=" ".join(str(record.get("message", "")).split()),
                    line=int(location.get("row", 0)),
                    column=int(location.get("column", 0)),
                ))
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)
        return [tuple(sorted(f, key=lambda x: (x.line, x.column, x.code))) for f in found]


def lint_programs(programs: Sequence[str | None],
                  config: LintConfig | None = None) -> list[tuple[Finding, ...]]:
    """Lint every program with one ruff process; None entries get no findings."""
    return LintRun(programs, config or LintConfig()).result()

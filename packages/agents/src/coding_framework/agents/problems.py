"""The problem model: a function-writing task with visible and hidden test cases, and its JSONL form.

A test case is plain data, `(args, expected)`, never code: the trusted side renders each case into an
assertion (see `testcode.py`), so the candidate never sees expected values, and a case's pass/fail is
measured on its own. Values are JSON-like (None, bool, int, float, str, lists and string-keyed dicts of
those), which is what the sandbox exchanges with the child and what JSONL can hold.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Split = Literal["sft", "train", "heldout"]
SPLITS: tuple[str, ...] = ("sft", "train", "heldout")
"""sft: behaviours reserved for supervised warm-up data (e.g. building a small model); train: RL training
problems; heldout: evaluation only. A behaviour (family + constants) belongs to exactly one split."""


class ProblemFormatError(ValueError):
    """A problem record (or a JSONL line) does not have the required shape."""


def check_plain(value: Any, where: str, depth: int = 0) -> None:
    """Raise ProblemFormatError unless `value` is JSON-like plain data of exact built-in types."""
    if depth > 20:
        raise ProblemFormatError(f"{where}: nested deeper than 20 levels")
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return
    if kind is float:
        if not math.isfinite(value):
            raise ProblemFormatError(f"{where}: {value!r} is not a finite number (JSON cannot hold it)")
        return
    if kind is list:
        for i, item in enumerate(value):
            check_plain(item, f"{where}[{i}]", depth + 1)
        return
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                raise ProblemFormatError(f"{where}: dict key {key!r} is not a str")
            check_plain(item, f"{where}[{key!r}]", depth + 1)
        return
    raise ProblemFormatError(
        f"{where}: {kind.__name__} is not plain data; use None, bool, int, float, str, list or dict"
    )


@dataclass(frozen=True)
class TestCase:
    """One call of the entry point: `entry_point(*args)` must return exactly `expected`.

    "Exactly" means equal value and equal type at every level, so `True` does not pass for `1` and
    `1.0` does not pass for `1`.
    """

    __test__ = False  # not a pytest class, despite the name

    args: tuple[Any, ...]
    """Positional arguments, plain data."""
    expected: Any
    """The return value, plain data."""

    def __post_init__(self) -> None:
        if not isinstance(self.args, tuple):
            object.__setattr__(self, "args", tuple(self.args))
        for i, arg in enumerate(self.args):
            check_plain(arg, f"args[{i}]")
        check_plain(self.expected, "expected")

    def call_text(self, entry_point: str) -> str:
        """The call as Python source, e.g. `add(3, [1, 2])`."""
        return f"{entry_point}({', '.join(repr(a) for a in self.args)})"

    def to_dict(self) -> dict[str, Any]:
        return {"args": list(self.args), "expected": self.expected}

    @classmethod
    def from_dict(cls, data: Any, where: str = "test") -> TestCase:
        if not isinstance(data, dict) or set(data) != {"args", "expected"}:
            raise ProblemFormatError(f"{where}: a test case is an object with exactly 'args' and 'expected'")
        if not isinstance(data["args"], list):
            raise ProblemFormatError(f"{where}.args: must be a list of positional arguments")
        try:
            return cls(tuple(data["args"]), data["expected"])
        except ProblemFormatError as err:
            raise ProblemFormatError(f"{where}.{err}") from None


@dataclass(frozen=True)
class Problem:
    """A function-writing task.

    The statement is the prompt the model sees: for generated problems a function stub (signature and
    docstring with worked examples), which the model continues with the function body.
    """

    id: str
    """Unique, stable identifier."""
    statement: str
    """The prompt shown to the model."""
    entry_point: str
    """Name of the function the tests call."""
    visible_tests: tuple[TestCase, ...]
    """Shown to the model (in the statement) and run for feedback between turns; never scored."""
    hidden_tests: tuple[TestCase, ...]
    """Scored; never shown to the model."""
    reference: str
    """A complete program defining `entry_point` that passes every test."""
    difficulty: int
    """Level, 1 = easiest."""
    family: str
    """The template the problem comes from ("" for hand-written problems)."""
    split: Split = "train"
    """"heldout" problems are for evaluation only; training-side APIs refuse them."""
    params: Mapping[str, Any] = field(default_factory=dict)
    """The constants that fix the task's behaviour (generated problems), plain data."""

    def __post_init__(self) -> None:
        for name in ("id", "statement", "entry_point", "reference", "family"):
            if not isinstance(getattr(self, name), str):
                raise ProblemFormatError(f"{name}: must be a string")
        if not self.id:
            raise ProblemFormatError("id: must be a non-empty string")
        if not self.entry_point.isidentifier():
            raise ProblemFormatError(f"entry_point: {self.entry_point!r} is not a Python identifier")
        if not self.statement.strip():
            raise ProblemFormatError("statement: must not be empty")
        if type(self.difficulty) is not int or self.difficulty < 1:
            raise ProblemFormatError(f"difficulty: {self.difficulty!r} must be an int >= 1")
        if self.split not in SPLITS:
            raise ProblemFormatError(f"split: {self.split!r} must be one of {SPLITS}")
        for name in ("visible_tests", "hidden_tests"):
            tests = getattr(self, name)
            if not isinstance(tests, tuple):
                object.__setattr__(self, name, tuple(tests))
            if not all(isinstance(t, TestCase) for t in getattr(self, name)):
                raise ProblemFormatError(f"{name}: every item must be a TestCase")
        if not self.hidden_tests:
            raise ProblemFormatError("hidden_tests: a problem needs at least one hidden test to be scored")
        if not isinstance(self.params, Mapping):
            raise ProblemFormatError("params: must be a mapping")
        check_plain(dict(self.params), "params")

    def to_dict(self) -> dict[str, Any]:
        """The JSON record; `Problem.from_dict(p.to_dict()) == p`."""
        return {
            "id": self.id,
            "family": self.family,
            "difficulty": self.difficulty,
            "split": self.split,
            "entry_point": self.entry_point,
            "statement": self.statement,
            "visible_tests": [t.to_dict() for t in self.visible_tests],
            "hidden_tests": [t.to_dict() for t in self.hidden_tests],
            "reference": self.reference,
            "params": dict(self.params),
        }

    @classmethod
    def from_dict(cls, data: Any) -> Problem:
        """Build a problem from its JSON record; raises ProblemFormatError naming the bad field."""
        if not isinstance(data, dict):
            raise ProblemFormatError(f"a problem record is a JSON object, got {type(data).__name__}")
        required = {"id", "statement", "entry_point", "hidden_tests", "reference", "difficulty"}
        optional = {"visible_tests", "family", "split", "params"}
        missing = sorted(required - set(data))
        if missing:
            raise ProblemFormatError(f"missing field(s) {missing}")
        unknown = sorted(set(data) - required - optional)
        if unknown:
            raise ProblemFormatError(f"unknown field(s) {unknown}; allowed: {sorted(required | optional)}")
        tests = {}
        for name in ("visible_tests", "hidden_tests"):
            raw = data.get(name, [])
            if not isinstance(raw, list):
                raise ProblemFormatError(f"{name}: must be a list of test cases")
            tests[name] = tuple(TestCase.from_dict(t, f"{name}[{i}]") for i, t in enumerate(raw))
        return cls(
            id=data["id"],
            statement=data["statement"],
            entry_point=data["entry_point"],
            visible_tests=tests["visible_tests"],
            hidden_tests=tests["hidden_tests"],
            reference=data["reference"],
            difficulty=data["difficulty"],
            family=data.get("family", ""),
            split=data.get("split", "train"),
            params=data.get("params", {}),
        )


def problems_to_jsonl(problems: Iterable[Problem]) -> str:
    """One JSON object per line, keys in a fixed order, so equal problem lists give equal bytes."""
    return "".join(json.dumps(p.to_dict(), ensure_ascii=False) + "\n" for p in problems)


def write_problems(path: str | os.PathLike[str], problems: Sequence[Problem]) -> None:
    """Write problems as JSONL atomically (temp file in the same folder, then os.replace)."""
    ids = [p.id for p in problems]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ProblemFormatError(f"duplicate problem ids: {duplicates[:5]}")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(problems_to_jsonl(problems))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def parse_problems(text: str, source: str = "<string>") -> list[Problem]:
    """Parse JSONL text; errors name `source:line` and the bad field. Blank lines are skipped."""
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise ProblemFormatError(f"{source}:{lineno}: not valid JSON ({err.msg})") from None
        try:
            problem = Problem.from_dict(record)
        except ProblemFormatError as err:
            raise ProblemFormatError(f"{source}:{lineno}: {err}") from None
        if problem.id in seen:
            raise ProblemFormatError(
                f"{source}:{lineno}: duplicate id {problem.id!r} (first on line {seen[problem.id]})"
            )
        seen[problem.id] = lineno
        problems.append(problem)
    return problems


def read_problems(path: str | os.PathLike[str]) -> list[Problem]:
    """Load a JSONL problem file; a missing file is an error naming the path."""
    target = Path(path)
    if not target.is_file():
        raise FileNotFoundError(f"problem file {target} does not exist")
    return parse_problems(target.read_text(encoding="utf-8"), str(target))

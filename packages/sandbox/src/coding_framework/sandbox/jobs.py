"""The three kinds of job the sandbox runs. Jobs are plain, picklable descriptions; nothing runs here."""

from __future__ import annotations

import keyword
from dataclasses import dataclass

from coding_framework.sandbox.languages import get_language
from coding_framework.sandbox.limits import Limits


def _require_str(owner: str, name: str, value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{owner}.{name} must be a str, got {type(value).__name__}")


def _require_limits(owner: str, value: object) -> None:
    if value is not None and not isinstance(value, Limits):
        raise TypeError(f"{owner}.limits must be a Limits or None, got {type(value).__name__}")


@dataclass(frozen=True)
class FunctionCallJob:
    """Call a function of an untrusted program from trusted test code.

    The program runs in the sandbox child. `setup` then `test` run in the trusted process, in one
    namespace where both `candidate` and `entry_point` are bound to a proxy: each call sends its
    arguments to the child as plain data and gets plain data back. If `test` defines `check`, it is
    called as check(candidate) (HumanEval's convention); otherwise its top-level asserts are the test
    (MBPP's convention).
    """

    program: str
    """Candidate source, e.g. HumanEval prompt + completion."""
    entry_point: str
    """Name of the function the tests call."""
    test: str
    """Trusted test source; never sent to the sandbox."""
    setup: str = ""
    """Trusted code run first in the test namespace (helpers the tests use, e.g. HumanEval's prompt)."""
    limits: Limits | None = None
    """None: the pool's default limits."""

    def __post_init__(self) -> None:
        for name in ("program", "entry_point", "test", "setup"):
            _require_str("FunctionCallJob", name, getattr(self, name))
        if not self.entry_point.isidentifier() or keyword.iskeyword(self.entry_point):
            raise ValueError(
                f"FunctionCallJob.entry_point must be a Python identifier, got {self.entry_point!r}")
        _require_limits("FunctionCallJob", self.limits)


@dataclass(frozen=True)
class ProgramJob:
    """Run a whole program with `stdin` and compare or report its output.

    With `expected_stdout` the job passes iff the program exits 0 within limits and its stdout equals
    the expected text token by token (whitespace-insensitive). Without it the run is reported raw:
    passed iff it exited 0 within limits, with stdout, stderr and return_code filled in.
    """

    program: str
    stdin: str = ""
    expected_stdout: str | None = None
    language: str = "python"
    limits: Limits | None = None

    def __post_init__(self) -> None:
        _require_str("ProgramJob", "program", self.program)
        _require_str("ProgramJob", "stdin", self.stdin)
        try:  # as the judge feeds it: U+DC80-U+DCFF stand for the raw bytes of surrogateescape decoding
            self.stdin.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError as exc:
            raise ValueError(
                f"ProgramJob.stdin holds {exc.object[exc.start]!r} at position {exc.start}, a lone surrogate "
                "that is neither text nor a surrogateescape'd byte; pass valid text") from None
        if self.expected_stdout is not None:
            _require_str("ProgramJob", "expected_stdout", self.expected_stdout)
        get_language(self.language)
        _require_limits("ProgramJob", self.limits)


@dataclass(frozen=True)
class UnittestJob:
    """Run a unittest module against an untrusted program, both inside the sandbox.

    For suites that cannot be split into plain-data calls (mocks, as in BigCodeBench). The program is
    importable by the test as module `module_name`, and its names are also visible to the test module
    directly. Defences: every test id found statically in `test` must report a pass through the
    harness's authenticated channel, a must-fail canary test must report a failure, and programs that
    touch the harness (unittest internals, frames, gc, the channel) are rejected before running.
    """

    program: str
    test: str
    limits: Limits | None = None
    module_name: str = "solution"
    """Name under which the program is importable from the test module."""

    def __post_init__(self) -> None:
        _require_str("UnittestJob", "program", self.program)
        _require_str("UnittestJob", "test", self.test)
        _require_str("UnittestJob", "module_name", self.module_name)
        if not self.module_name.isidentifier():
            raise ValueError(f"UnittestJob.module_name must be an identifier, got {self.module_name!r}")
        _require_limits("UnittestJob", self.limits)


Job = FunctionCallJob | ProgramJob | UnittestJob

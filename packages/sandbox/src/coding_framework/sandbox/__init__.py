"""Isolated, fast, forge-proof execution of untrusted code against tests."""

from coding_framework.sandbox.jobs import FunctionCallJob, ProgramJob, UnittestJob
from coding_framework.sandbox.limits import Limits
from coding_framework.sandbox.pool import (
    DEFAULT_PRELOAD,
    SandboxDegradedWarning,
    SandboxPool,
    SandboxStartError,
)
from coding_framework.sandbox.report import IsolationReport
from coding_framework.sandbox.verdict import Status, Verdict

__all__ = [
    "DEFAULT_PRELOAD",
    "FunctionCallJob",
    "IsolationReport",
    "Limits",
    "ProgramJob",
    "SandboxDegradedWarning",
    "SandboxPool",
    "SandboxStartError",
    "Status",
    "UnittestJob",
    "Verdict",
]

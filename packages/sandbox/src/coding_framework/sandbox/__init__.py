"""Isolated, fast, forge-proof execution of untrusted code against tests.

Names are imported lazily (PEP 562): the sandbox's zygote imports only the few submodules it needs,
and every module it does not import makes each per-sample fork cheaper.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

_EXPORTS = {
    "DEFAULT_PRELOAD": "pool",
    "FunctionCallJob": "jobs",
    "IsolationReport": "report",
    "Limits": "limits",
    "ProgramJob": "jobs",
    "SandboxDegradedWarning": "pool",
    "SandboxPool": "pool",
    "SandboxStartError": "pool",
    "Status": "verdict",
    "UNITTEST_PRELOAD": "suite_runner",
    "UnittestJob": "jobs",
    "Verdict": "verdict",
}
__all__ = [
    "DEFAULT_PRELOAD",
    "UNITTEST_PRELOAD",
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

if TYPE_CHECKING:
    from coding_framework.sandbox.jobs import FunctionCallJob, ProgramJob, UnittestJob
    from coding_framework.sandbox.limits import Limits
    from coding_framework.sandbox.pool import (
        DEFAULT_PRELOAD,
        SandboxDegradedWarning,
        SandboxPool,
        SandboxStartError,
    )
    from coding_framework.sandbox.report import IsolationReport
    from coding_framework.sandbox.suite_runner import UNITTEST_PRELOAD
    from coding_framework.sandbox.verdict import Status, Verdict


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'coding_framework.sandbox' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"coding_framework.sandbox.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

"""The outcome of one job: a status decided by the trusted side, plus what the candidate printed."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass


class Status(enum.StrEnum):
    """Why a job ended. Only PASSED counts as success."""

    PASSED = "passed"
    FAILED = "failed"  # a test assertion failed (message: the assertion)
    ERROR = "error"  # the candidate raised, did not load, or broke the protocol ("ExcType: message")
    TIMEOUT = "timeout"  # wall-clock or CPU limit
    MEMORY = "memory"  # memory limit
    OUTPUT_LIMIT = "output_limit"  # stdout/stderr over the cap
    SANDBOX_ERROR = "sandbox_error"  # our fault or bad job input: not the candidate's verdict


@dataclass(frozen=True)
class Verdict:
    """One job's result. `status` never comes from anything the candidate can write."""

    status: Status
    message: str = ""
    """"" when passed; the failing assertion for failed; "ExcType: message" for error."""
    duration_s: float = 0.0
    """Wall-clock seconds of the whole job, measured by the trusted side."""
    stdout: str = ""
    """What the candidate printed (capped at Limits.max_output_bytes, decoded with replacement)."""
    stderr: str = ""
    return_code: int | None = None
    """Exit code of the candidate process when it exited by itself; -N when killed by signal N."""
    cpu_s: float | None = None
    """CPU seconds (user + system) of the candidate process, when it was reaped normally."""
    peak_memory_mb: float | None = None
    """Peak resident memory of the candidate process in MiB, when known."""

    @property
    def passed(self) -> bool:
        return self.status is Status.PASSED

    def to_dict(self) -> dict:
        data = asdict(self)
        data["status"] = self.status.value
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Verdict:
        texts = {key: valid_text(data[key]) for key in ("message", "stdout", "stderr") if key in data}
        return cls(**{**data, **texts, "status": Status(data["status"])})


def valid_text(text: str) -> str:
    """`text` with lone surrogates (which a candidate can put in its exception messages; no UTF-8
    writer accepts them) spelled as `\\udc80` escapes, so that every verdict can be written as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text

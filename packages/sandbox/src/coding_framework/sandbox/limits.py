"""Per-job resource limits, with defaults sized for benchmark-style tests."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, fields

# Largest value of each limit: beyond these the kernel refuses the rlimit or its byte count overflows,
# and the child could not start (a week of wall time is past any test's need).
_MAXIMA = {"timeout_s": 7 * 86400.0, "cpu_s": 7 * 86400.0, "memory_mb": 1 << 20, "max_output_bytes": 1 << 40,
           "max_processes": 1 << 22, "max_open_files": 1 << 20, "max_file_bytes": 1 << 40,
           "max_value_bytes": 1 << 40, "max_value_depth": 500}
_UNITS = {"timeout_s": " s", "cpu_s": " s", "memory_mb": " MiB (1 TiB)"}


def default_max_processes() -> int:
    """64, or more where a pool of the default size would not fit: `multiprocessing.Pool()` and
    `ProcessPoolExecutor()` start os.cpu_count() workers (the host's cores: a sample's view of the
    machine is the host's) beside the main thread and up to four threads of their own, so on a host
    of 60 cores and more a correct program using one failed here and ran under `python main.py`."""
    return max(64, (os.cpu_count() or 1) + 16)


@dataclass(frozen=True)
class Limits:
    """What one job may use. Every limit is enforced from outside the candidate's process.

    Defaults fit HumanEval/MBPP-style function tests and contest-style stdin programs.
    """

    timeout_s: float = 10.0
    """Wall-clock seconds for the whole job (program load, every call, the tests); killed from outside."""
    cpu_s: float | None = None
    """CPU seconds of the candidate process (RLIMIT_CPU); None means the wall timeout, rounded up."""
    memory_mb: int = 1024
    """Address-space cap of each candidate process in MiB (RLIMIT_AS)."""
    max_output_bytes: int = 1 << 20
    """Cap on each of stdout and stderr; more output ends the job with status output_limit."""
    max_processes: int = field(default_factory=default_max_processes)
    """Processes and threads the candidate may have at once (RLIMIT_NPROC in its own user namespace).
    Default 64, which fits a ThreadPoolExecutor of its default size (up to 32 workers) beside the main
    thread, or the host's core count + 16 where that is more (default_max_processes)."""
    max_open_files: int = 256
    """RLIMIT_NOFILE of the candidate."""
    max_file_bytes: int = 16 << 20
    """Largest file the candidate may write (RLIMIT_FSIZE); its work dir is a private tmpfs."""
    max_value_bytes: int = 16 << 20
    """Largest encoded return value of one call of a function-call job."""
    max_value_depth: int = 100
    """Deepest nesting of containers in a call's arguments or return value."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None and f.name == "cpu_s":
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"Limits.{f.name} must be a number, got {value!r}")
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"Limits.{f.name} must be a finite number > 0, got {value!r}")
            if value > _MAXIMA[f.name]:
                raise ValueError(f"Limits.{f.name}={value!r} is above its maximum "
                                 f"{_MAXIMA[f.name]:g}{_UNITS.get(f.name, '')}; lower it")
        if self.memory_mb < 64:
            raise ValueError(
                f"Limits.memory_mb={self.memory_mb} is below 64 MiB, too small for a Python interpreter; "
                "raise it"
            )
        if self.max_processes < 2:
            raise ValueError("Limits.max_processes must be >= 2 (the candidate itself needs one)")
        if self.max_open_files < 16:
            raise ValueError("Limits.max_open_files must be >= 16 (Python needs a few descriptors)")

    @property
    def effective_cpu_s(self) -> int:
        """Whole CPU seconds given to RLIMIT_CPU (at least 1)."""
        return max(1, math.ceil(self.cpu_s if self.cpu_s is not None else self.timeout_s))

    def to_dict(self) -> dict[str, float | int | None]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict) -> Limits:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown Limits fields {sorted(unknown)}; valid: {sorted(known)}")
        return cls(**data)

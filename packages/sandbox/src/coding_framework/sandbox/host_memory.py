"""The host's memory, guarded by the zygote of a pool without a cgroup (rootless): while a sample runs,
it reads the host's available memory and kills the sample when the host runs short (verdict `memory`)."""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable

# A sample killed because the host ran short of memory runs this many times in all before `memory` stands,
# waiting up to WAIT_S before each new run for the host to have its memory back (judge.Judge.run): it may
# have been killed for another worker's sample.
ATTEMPTS = 3
WAIT_S = 5.0


def _field_kb(text: bytes, field: bytes, absent: int | None = None) -> int:
    """The KiB figure of `field` in a /proc/meminfo or /proc/<pid>/status text; `absent` if it has none
    (None: ValueError, for meminfo figures the watch cannot do without). Whole lines only: the first
    line of a status file is the process's name, which a sample chooses ("RssAnon:" killed the zygote,
    "RssAnon:0kB" hid a hog: round 37); the kernel escapes a newline in it."""
    key = field + b":"
    for line in text.split(b"\n"):
        if line.startswith(key):
            return int(line.split()[1])
    if absent is None:
        raise ValueError(f"no {field.decode()} in {text[:40]!r}...")
    return absent


def meminfo_kb(field: bytes) -> int:
    """One /proc/meminfo figure of the host (b"MemTotal", b"MemAvailable", ...), in KiB."""
    with open("/proc/meminfo", "rb") as fh:
        return _field_kb(fh.read(), field)


def default_floor_mb() -> int:
    """5% of the host's memory, at least 256 MiB: what a pool without cgroups leaves to the host."""
    return max(256, meminfo_kb(b"MemTotal") // 20 >> 10)


def wait_for_memory(floor_mb: int, timeout_s: float) -> None:
    """Until the host's available memory is back over `floor_mb`, or `timeout_s` passed."""
    limit = time.monotonic() + timeout_s
    while meminfo_kb(b"MemAvailable") < floor_mb << 10 and time.monotonic() < limit:
        time.sleep(0.02)


class HostMemoryWatch:
    """Without a cgroup (a rootless pool), nothing bounds the memory of a sample's processes together:
    each has its RLIMIT_AS, and max_processes of them may hold more than the host has. The kernel's OOM
    killer would then pick a process of the host's, such as the user's own, because a candidate may
    lower its oom_score_adj from 1000 back to 0: a dumpable process may, with no privilege (round 35).
    So while a sample runs, the zygote reads the host's available memory every INTERVAL_S. Under the
    floor, it kills the sample (verdict `memory`) if the sample holds BLAME_MB or more itself, or if
    the host stays under the floor for GRACE_S: a sample next to the one to blame, on another worker,
    lives on while the culprit's own zygote kills it (round 36), and memory no process shows (memfds
    written, not mapped) still gets its holder killed within GRACE_S; the judge runs a sample killed for
    it again once the host has its memory back (judge.Judge.run). Only for pools without a cgroup: with
    one, the cgroup bounds the sample and the zygote's loop keeps its one blocking call per message."""

    INTERVAL_S = 0.02
    GRACE_S = 0.1
    BLAME_MB = 128

    def __init__(self, fd: int, floor_mb: int):
        self.fd = fd
        self.floor_kb = floor_mb << 10
        self.fired = False  # this sample was killed for it
        self.low_since: float | None = None
        self.kill: Callable[[], None] = lambda: None
        self.countable = False

    @classmethod
    def open(cls, floor_mb: int | None) -> HostMemoryWatch | None:
        if not floor_mb:
            return None
        try:
            watch = cls(os.open("/proc/meminfo", os.O_RDONLY | os.O_CLOEXEC), floor_mb)
            watch.available_kb()
        except (OSError, ValueError):
            return None  # the report says so: host_memory_floor_mb None
        return watch

    def new_sample(self, kill: Callable[[], None], *, countable: bool) -> None:
        """A sample starts: `kill` ends all its processes; `countable`: they are every process of this
        PID namespace but ours (else, under the floor, it is killed without counting)."""
        self.fired, self.low_since = False, None
        self.kill, self.countable = kill, countable

    def available_kb(self) -> int:
        return _field_kb(os.pread(self.fd, 4096, 0), b"MemAvailable")

    def wait(self, sources: list) -> list:
        """Those of `sources` that are readable, once one is; kills the sample if the host runs low
        meanwhile."""
        while not self.fired:
            ready = select.select(sources, [], [], self.INTERVAL_S)[0]
            if ready:
                return ready
            if self.available_kb() >= self.floor_kb:
                self.low_since = None
                continue
            now = time.monotonic()
            if self.low_since is None:
                self.low_since = now
            if now - self.low_since >= self.GRACE_S or not self.countable or _to_blame(self.BLAME_MB << 10):
                self.fired = True
                self.kill()
        return select.select(sources, [], [])[0]


def _to_blame(threshold_kb: int) -> bool:
    try:
        return _sample_kb() >= threshold_kb
    except (OSError, ValueError, IndexError):
        return True  # a sample whose memory cannot be read is to blame: the zygote must not die of it


def _sample_kb() -> int:
    """What the sample's processes (every process of our PID namespace but us) hold in anonymous and
    shared memory, less what each shares with us since its fork (our own anonymous memory, counted in
    each child's too); read only while the host is short of memory."""
    own = _resident_kb("self")
    total = 0
    for name in os.listdir("/proc"):
        if name.isdigit() and name != "1":
            total += max(0, _resident_kb(name) - own)
    return total


def _resident_kb(pid: str) -> int:
    """RssAnon + RssShmem of /proc/<pid>, 0 for a process gone meanwhile."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            text = fh.read()
    except OSError:
        return 0
    return _field_kb(text, b"RssAnon", 0) + _field_kb(text, b"RssShmem", 0)  # none: a zombie

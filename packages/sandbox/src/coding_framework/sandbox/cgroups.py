"""A cgroup per worker, capping the memory and process count of a zygote and everything it forks.

RLIMIT_AS caps each process, RLIMIT_NPROC the count, but together they still allow
max_processes × memory_mb of host memory; a cgroup caps the sum, and its OOM-kill counter is a
trusted signal for the `memory` status. Created nested under the judge's own cgroup (so the limits of
whatever runs us still apply), with cgroup v1 (memory + pids controllers) or v2 (memory.max, pids.max).
Unavailable (not root, read-only /sys/fs/cgroup, controller missing): `create` returns None and the
isolation report says so.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time

ROOT = "/sys/fs/cgroup"
# The zygote pair's own memory, on top of the candidate's limit.
ZYGOTE_HEADROOM_BYTES = 96 << 20
ZYGOTE_PROCESSES = 2


def _own_path(controller: str | None) -> str | None:
    """This process's cgroup path for `controller` (None: the v2 unified entry)."""
    with open("/proc/self/cgroup") as fh:
        for line in fh:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            wanted = controllers == "" if controller is None else controller in controllers.split(",")
            if wanted:
                return path
    return None


def _write(path: str, value: str) -> None:
    with open(path, "w") as fh:
        fh.write(value)


def _read(path: str) -> str:
    with open(path) as fh:
        return fh.read()


class CgroupBusy(OSError):
    """The cgroup holds more memory than a new, lower limit allows, and the kernel cannot reclaim it."""


class WorkerCgroup:
    """memory + pids limits for one zygote's subtree."""

    def __init__(self, memory_dir: str, pids_dir: str | None, version: int):
        self.memory_dir = memory_dir
        self.pids_dir = pids_dir
        self.version = version
        self._limits: tuple[int, int, tuple[int, int]] | None = None
        self._oom_fd: int | None = None

    @classmethod
    def create(cls, name: str) -> WorkerCgroup | None:
        if os.geteuid() != 0:
            return None
        try:
            if os.path.isdir(f"{ROOT}/memory"):
                memory = _join(f"{ROOT}/memory", _own_path("memory"), name)
                pids = None
                if os.path.isdir(f"{ROOT}/pids"):
                    pids = _join(f"{ROOT}/pids", _own_path("pids"), name)
                os.makedirs(memory, exist_ok=True)
                if pids:
                    os.makedirs(pids, exist_ok=True)
                return cls(memory, pids, 1)
            controllers = _read(f"{ROOT}/cgroup.controllers").split()
            if "memory" in controllers and "pids" in controllers:
                path = _join(ROOT, _own_path(None), name)
                os.makedirs(path, exist_ok=True)
                enabled = _read(f"{path}/cgroup.controllers").split()
                if "memory" in enabled and "pids" in enabled:
                    return cls(path, path, 2)
                os.rmdir(path)
        except OSError:
            return None
        return None

    def add(self, pid: int) -> None:
        for directory in {self.memory_dir, self.pids_dir} - {None}:
            _write(f"{directory}/cgroup.procs", str(pid))

    def set_limits(self, memory_mb: int, max_processes: int, zygote_extra: tuple[int, int] = (0, 0)) -> None:
        """Applied to the whole subtree; rewritten only when a job asks for different limits.
        `zygote_extra`: the zygote's memory beyond ZYGOTE_HEADROOM_BYTES and its tasks beyond
        ZYGOTE_PROCESSES (what its preloaded modules hold: bytes, threads).

        Raises CgroupBusy when the memory charged to the cgroup is over the new limit and cannot be
        reclaimed: memory a finished sample left in the kernel's keeping, such as memfds sent in a cycle
        of unix sockets, stays charged until the kernel's collector frees it (gigabytes, for seconds).
        Lowering the limit under it fails (v1: EBUSY) or OOM-kills the zygote (v2, checked before)."""
        wanted = (memory_mb, max_processes, zygote_extra)
        if wanted == self._limits:
            return
        extra_bytes, extra_tasks = zygote_extra
        limit = (memory_mb << 20) + ZYGOTE_HEADROOM_BYTES + extra_bytes
        memory, pids = str(limit), str(max_processes + ZYGOTE_PROCESSES + extra_tasks)
        if self.version == 1:
            try:
                _write(f"{self.memory_dir}/memory.limit_in_bytes", memory)
            except OSError as exc:
                if exc.errno == errno.EBUSY:
                    raise CgroupBusy(exc.errno, f"{self.memory_dir} holds more than {limit} bytes") from exc
                raise
            if self.pids_dir:
                _write(f"{self.pids_dir}/pids.max", pids)
        else:
            if int(_read(f"{self.memory_dir}/memory.current")) > limit:
                raise CgroupBusy(errno.EBUSY, f"{self.memory_dir} holds more than {limit} bytes")
            _write(f"{self.memory_dir}/memory.max", memory)
            with contextlib.suppress(OSError):
                _write(f"{self.memory_dir}/memory.swap.max", "0")
            _write(f"{self.pids_dir}/pids.max", pids)
        self._limits = wanted

    def oom_kills(self) -> int:
        """How many processes the kernel has OOM-killed in this cgroup so far (one pread per call: the
        file stays open)."""
        try:
            if self._oom_fd is None:
                name = "memory.oom_control" if self.version == 1 else "memory.events"
                self._oom_fd = os.open(f"{self.memory_dir}/{name}", os.O_RDONLY | os.O_CLOEXEC)
            text = os.pread(self._oom_fd, 4096, 0)
        except OSError:
            return 0
        for line in text.splitlines():
            key, _, value = line.partition(b" ")
            if key == b"oom_kill":
                return int(value)
        return 0

    def close(self) -> None:
        if self._oom_fd is not None:
            os.close(self._oom_fd)
            self._oom_fd = None

    def remove(self, wait_s: float = 3.0) -> None:
        """Delete the cgroup once its last process is gone (the inner zygote dies asynchronously)."""
        self.close()
        remove_dirs([d for d in (self.memory_dir, self.pids_dir) if d], wait_s)


def remove_dirs(directories: list[str], wait_s: float = 3.0) -> None:
    """rmdir each cgroup directory, retrying while its last processes finish dying (up to wait_s)."""
    limit = time.monotonic() + wait_s
    for directory in directories:
        pause = 0.001
        while os.path.isdir(directory):
            try:
                os.rmdir(directory)
            except OSError:
                if time.monotonic() > limit:
                    break
                time.sleep(pause)
                pause = min(2 * pause, 0.02)


def find_dirs(name: str) -> list[str]:
    """Every directory of a cgroup called `name` that this process created (v1 or v2)."""
    candidates = [_join(f"{ROOT}/memory", _own_path("memory"), name),
                  _join(f"{ROOT}/pids", _own_path("pids"), name), _join(ROOT, _own_path(None), name)]
    return [c for c in candidates if os.path.isdir(c)]


def sweep_stale(prefix: str = "cf-sandbox-") -> int:
    """Remove empty worker cgroups whose owning pool process (`<prefix><pid>-...`) no longer exists,
    e.g. after the pool's process was SIGKILLed. Returns how many were removed."""
    removed = 0
    for parent in {d for d in (os.path.dirname(x) for x in find_dirs_parents()) if os.path.isdir(d)}:
        for entry in os.listdir(parent):
            owner = entry[len(prefix):].split("-", 1)[0] if entry.startswith(prefix) else ""
            if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.join(parent, entry))  # fails, harmlessly, while not empty
                    removed += 1
    return removed


def find_dirs_parents() -> list[str]:
    """Where this process's worker cgroups would be created (a placeholder child of each parent)."""
    return [_join(f"{ROOT}/memory", _own_path("memory"), "x"), _join(f"{ROOT}/pids", _own_path("pids"), "x"),
            _join(ROOT, _own_path(None), "x")]


def _join(root: str, own: str | None, name: str) -> str:
    return os.path.join(root, (own or "/").lstrip("/"), name)

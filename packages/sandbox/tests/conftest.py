"""Shared fixtures: one warm pool per test module, and probes for effects on the host."""

from __future__ import annotations

import os
import socket
import threading
import uuid

import pytest

from coding_framework.sandbox import FunctionCallJob, Limits, SandboxPool

SECRET_ENV = "CF_SANDBOX_TEST_SECRET"
SECRET_VALUE = "s3cret-" + uuid.uuid4().hex
# Set before any pool starts, so that every worker process inherits it: the candidate must not see it.
os.environ[SECRET_ENV] = SECRET_VALUE

GOOD = FunctionCallJob(program="def add(a, b):\n    return a + b\n", entry_point="add",
                       test="def check(candidate):\n    assert candidate(2, 3) == 5\n")
WRONG = FunctionCallJob(program="def add(a, b):\n    return a - b\n", entry_point="add",
                        test="def check(candidate):\n    assert candidate(2, 3) == 5\n")


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(workers=2, limits=Limits(timeout_s=5.0), require_isolation=True) as p:
        yield p


def assert_pool_healthy(pool: SandboxPool) -> None:
    """After an attack: every worker still gives right verdicts both ways."""
    verdicts = pool.run_many([GOOD, WRONG] * pool.workers)
    assert [v.status.value for v in verdicts] == ["passed", "failed"] * pool.workers, verdicts


class LoopbackListener:
    """A TCP listener on the host's 127.0.0.1 that records every connection it accepts."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted: list[tuple] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, addr = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.accepted.append(addr)
            conn.close()

    def close(self) -> list[tuple]:
        self._stop.set()
        self._thread.join()
        self.sock.close()
        return self.accepted


@pytest.fixture
def listener():
    lst = LoopbackListener()
    yield lst
    lst.close()


@pytest.fixture
def marker():
    """A unique string the candidate uses to name host files/processes it tries to create."""
    return "cfmark" + uuid.uuid4().hex[:12]


def host_paths_for(marker: str, tmp_path) -> list[str]:
    """Places on the host the candidate may try to write to (none may exist afterwards)."""
    return [f"/tmp/{marker}", os.path.expanduser(f"~/{marker}"), f"/var/tmp/{marker}", f"/dev/shm/{marker}",
            str(tmp_path / marker), f"/work/{marker}"]


def processes_with(marker: str) -> list[int]:
    """Host pids whose command line mentions `marker`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def stray_processes(pool: SandboxPool) -> list[int]:
    """Host pids below the pool's workers other than each worker's judge and zygote pair.

    Between samples a worker is exactly judge → outer zygote → inner zygote (PID 1 of the sandbox;
    without a PID namespace there is no inner one); anything else is a candidate process that
    outlived its sample.
    """
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    parents[int(entry)] = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    judges = {w.proc.pid for w in pool._workers if w.proc is not None}
    allowed = set(judges)
    for pid, parent in parents.items():
        if parent in judges:
            allowed.add(pid)  # outer zygote
    if pool.isolation_report().layers["pid_namespace"]:
        for pid, parent in parents.items():
            if parent in allowed - judges:
                allowed.add(pid)  # inner zygote: the outer's only child (PID 1 of the sandbox)

    def below_a_judge(pid: int) -> bool:
        seen = 0
        while pid in parents and seen < 64:
            pid = parents[pid]
            if pid in judges:
                return True
            seen += 1
        return False

    return sorted(pid for pid in parents if pid not in allowed and below_a_judge(pid))

"""ChildSession's end of a sample, against a fake zygote: a socket pair whose other end the test plays."""

from __future__ import annotations

import os
import signal
import socket
import time
import types

import pytest

from coding_framework.sandbox import Limits, wire
from coding_framework.sandbox.session import ChildSession, ZygoteLost


@pytest.fixture
def fake_zygote():
    """(session, the zygote's end of the control socket, the write end of the sample's stdout)."""
    ctrl, zygote_ctrl = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    chan, child_chan = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    ctrl.setblocking(False)
    session = ChildSession(ctrl=ctrl, chan=chan, stdout_r=out_r, stderr_r=err_r, limits=Limits(),
                           deadline=time.monotonic() + 10)
    yield session, zygote_ctrl, out_w
    for sock in (ctrl, zygote_ctrl, child_chan):
        sock.close()
    for fd in (out_w, err_w):
        os.close(fd)


def test_a_sample_whose_processes_die_slowly_keeps_its_own_verdict(fake_zygote):
    # The zygote is alive but has not seen the killed processes die within the grace (a sample made its
    # own death slow: red-team round 50). That was a sandbox_error the sample could choose; now the
    # session ends with what the sample did before the kill, and says it is stuck.
    session, zygote, out_w = fake_zygote
    os.write(out_w, b"3\n")
    zygote.send(wire.pack_exit(wire.EXITED, 0, 0.01, 1000, killed=False))
    started = time.monotonic()
    session.end(grace_s=0.2)
    assert session.stuck and 0.2 <= time.monotonic() - started < 2
    assert session.exit_info is not None and session.exit_info["status"] == 0
    assert bytes(session.stdout) == b"3\n"
    assert zygote.recv(16) == wire.END


def test_a_zygote_that_confirms_the_end_is_not_stuck(fake_zygote):
    session, zygote, _ = fake_zygote
    zygote.send(wire.pack_exit(wire.DONE, 1, 0.01, 1000, killed=True))
    session.end(grace_s=5)
    assert not session.stuck and session.exit_info["status"] == 1


def test_a_zygote_that_is_gone_is_still_the_sandboxs_fault(fake_zygote):
    session, zygote, _ = fake_zygote
    zygote.close()
    with pytest.raises(ZygoteLost):
        session.end(grace_s=5)


def test_the_judge_keeps_a_stuck_samples_verdict_and_replaces_its_zygote(monkeypatch):
    # A judge in this process with no zygote started: its program run is a stand-in that leaves a stuck
    # session behind, and the zygote's restart is counted, not made.
    from coding_framework.sandbox.judge import STUCK_NOTE, Judge

    previous = signal.getsignal(signal.SIGALRM)
    judge = Judge({})
    restarts = []
    stuck_session = types.SimpleNamespace(stuck=True)

    def run_program(job, limits, started):
        judge.zygote.last_session = stuck_session
        return {"status": "timeout", "message": "wall-clock limit of 3s exceeded"}

    monkeypatch.setattr(judge, "_run_program", run_program)
    monkeypatch.setattr(judge.zygote, "restart", lambda: restarts.append(1))
    try:
        result = judge._run_once({"kind": "program", "limits": Limits(timeout_s=3).to_dict()})
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert result["status"] == "timeout"
    assert result["message"] == f"wall-clock limit of 3s exceeded; {STUCK_NOTE}"
    assert restarts == [1] and judge.zygote.last_session is None and not judge.zygote.stuck

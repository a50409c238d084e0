"""Start-up of a worker's processes, ordered so that they overlap.

The pool starts a judge with `python -c JUDGE_BOOT FD`. The judge spawns its zygote before importing
anything heavy, so that the zygote's interpreter start and imports run while the judge imports the
rest of the package: starting a pool waits for the slower of the two, not their sum. Only the standard
library's light modules are imported here.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from typing import TYPE_CHECKING

from coding_framework.sandbox import wire

if TYPE_CHECKING:
    import subprocess

SRC_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JUDGE_BOOT = "from coding_framework.sandbox.boot import judge_main; judge_main()"
_ZYGOTE_BOOT = ("import sys; sys.path.insert(0, {root!r}); "
                "from coding_framework.sandbox.zygote import bootstrap; bootstrap({fd})")
# The zygote's whole environment, which every candidate inherits (HOME and TMPDIR point at its work dir).
SAFE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8", "USER": "sandbox", "LOGNAME": "sandbox", "OMP_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8"}


def spawn_zygote() -> tuple[subprocess.Popen, socket.socket]:
    """Start a zygote process (it waits for its config on the returned control socket)."""
    import subprocess  # here: the zygote imports this module too, and must not carry subprocess

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-c", _ZYGOTE_BOOT.format(root=SRC_ROOT, fd=theirs.fileno())],
            pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            env=dict(SAFE_ENV), cwd="/",
        )
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    return proc, ours


def judge_main() -> None:
    """The judge process: FD (argv[1]) is its stream socket to the pool; the first frame is the config."""
    sock = socket.socket(fileno=int(sys.argv[1]))
    config = json.loads(wire.recv_frame(sock, 1 << 24))
    if config.get("cpu") is not None:
        # Inherited by the zygote and every child: see SandboxPool(pin_workers).
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {config["cpu"]})
    # The judge and its child take turns: each answer the child writes wakes the judge, which would
    # otherwise preempt the child at once and make it stop after every answer sent ahead
    # (speculation.py). As SCHED_BATCH (inherited by the zygote and children) a woken worker process
    # waits until the running one blocks; the judge's time per sample dropped by a third.
    with contextlib.suppress(OSError, AttributeError):
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    spawned = spawn_zygote()
    from coding_framework.sandbox import judge

    judge.serve(sock, config, spawned)

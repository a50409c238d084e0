"""The zygote: a warm process inside the sandbox namespaces that forks one fresh child per sample.

Started by the judge as `python -I -c ...` with a scrubbed environment and a control socket. It never
runs candidate code itself and holds nothing secret (it never sees tests).

Start-up (namespaced): this process (outer) unshares user, mount, network, IPC, UTS and PID
namespaces, asks the judge to write its uid/gid maps, then forks the inner zygote, which is PID 1 of
the new PID namespace: as init it is immune to signals from inside, every orphan is reparented to it,
and `kill(-1, SIGKILL)` from it empties the namespace after each sample. The inner zygote builds the
read-only root and serves `run` requests: fork, confine, run; on `end`, kill everything, reap, drop the
work dirs, report.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import select
import signal
import socket
import sys
import threading
import time

from coding_framework.sandbox import child, isolation, unittest_harness, wire  # noqa: F401


def _preload(modules: list[str]) -> list[str]:
    failed = []
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:
            failed.append(name)
    return failed


def main(config: dict, ctrl: socket.socket) -> None:
    """config: preload (module names), visible/hidden (paths), namespaces (bool), work_mb, workdir."""
    isolation.set_parent_death_signal()
    if os.getppid() == 1:
        os._exit(1)  # the judge died before we could tie our life to it
    failed = _preload(config["preload"])
    report: dict = {"preload_failed": failed, "namespaces": False, "errors": []}
    if config["namespaces"]:
        try:
            isolation.unshare(isolation.CLONE_NEWUSER | isolation.NAMESPACE_FLAGS)
            report["user_namespace"] = True
        except OSError as exc:
            report["errors"].append(f"user namespace: {exc}")
            try:
                # Real root can have the other namespaces without a user namespace.
                isolation.unshare(isolation.NAMESPACE_FLAGS)
                report["user_namespace"] = False
            except OSError as exc2:
                report["errors"].append(f"namespaces: {exc2}")
        else:
            pass
    namespaced = "user_namespace" in report
    wire.send_control(ctrl, {"op": "unshared", "namespaced": namespaced,
                             "user_namespace": report.get("user_namespace", False)})
    reply, _ = wire.recv_control(ctrl, timeout=30)
    uid = reply.get("child_uid")
    if not namespaced:
        _serve(ctrl, config, report, uid=uid, namespaced=False)
        return
    inner = os.fork()
    if inner:
        ctrl.close()
        # Outer zygote: nothing to do but live exactly as long as the inner one.
        while True:
            try:
                _, status = os.waitpid(inner, 0)
                os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
            except ChildProcessError:
                os._exit(0)
            except InterruptedError:
                continue
    try:
        isolation.set_parent_death_signal()
        report["namespaces"] = True
        report["pid1"] = os.getpid() == 1
        report["root"] = isolation.build_root(config["visible"], config["hidden"])
        isolation.sethostname("sandbox")
        isolation.prctl(isolation.PR_SET_DUMPABLE, 0)
        report["nested_namespaces_blocked"] = isolation.block_nested_namespaces()
    except OSError as exc:
        wire.send_control(ctrl, {"op": "failed", "error": f"building the sandbox root failed: {exc}"})
        os._exit(1)
    _serve(ctrl, config, report, uid=uid, namespaced=True)


def _serve(ctrl: socket.socket, config: dict, report: dict, *, uid: int | None, namespaced: bool) -> None:
    # As PID 1, a handler would let the candidate signal us; SIG_DFL makes init immune.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, signal.SIG_DFL)
    if not namespaced:
        isolation.prctl(isolation.PR_SET_CHILD_SUBREAPER, 1)
    child.prepare_zygote("/tmp" if namespaced else config["workdir"])
    wire.send_control(ctrl, {"op": "ready", "report": report})
    # Objects that exist now are never collected in children: a collection there would write to every
    # object header and copy every page of the zygote (copy-on-write), several ms per sample.
    gc.collect()
    gc.freeze()
    isolation.release_free_heap()
    sys.stdout.flush()
    sys.stderr.flush()
    while True:
        try:
            message, fds = wire.recv_control(ctrl)
        except (wire.ChannelClosed, ConnectionError):
            os._exit(0)
        if message.get("op") != "run" or len(fds) != 4:
            for fd in fds:
                os.close(fd)
            wire.send_control(ctrl, {"op": "done", "error": f"bad request {message.get('op')!r}"})
            continue
        _run_one(ctrl, message, fds, config, uid=uid, namespaced=namespaced)


def _run_one(ctrl: socket.socket, message: dict, fds: list[int], config: dict, *, uid: int | None,
             namespaced: bool) -> None:
    limits = message["limits"]
    if namespaced:
        isolation.mount_work_dirs(config["work_mb"])
        workdir = "/tmp"
    else:
        workdir = config["workdir"]
    spec = {"mode": message["mode"], "limits": limits, "uid": uid, "workdir": workdir,
            "namespaced": namespaced}
    pid = isolation.fast_fork() if threading.active_count() == 1 else os.fork()
    if pid == 0:
        if "random" in sys.modules:
            sys.modules["random"].seed()  # else every sample would draw the same numbers
        child.run(fds, spec)  # never returns
    for fd in fds:
        os.close(fd)
    # Under memory pressure the kernel must pick a candidate, never the zygote: one spreading its
    # memory over many small processes would otherwise turn its verdict into a sandbox_error.
    # Raising a score needs no privilege (lowering ours would need CAP_SYS_RESOURCE).
    with contextlib.suppress(OSError), open(f"/proc/{pid}/oom_score_adj", "w") as fh:  # child may be gone
        fh.write("1000")
    started = time.monotonic()
    pidfd = os.pidfd_open(pid)
    exited = None
    try:
        while True:
            ready, _, _ = select.select([ctrl, pidfd] if exited is None else [ctrl], [], [])
            if pidfd in ready and exited is None:
                exited = _reap(pid)
                wire.send_control(ctrl, {"op": "exited", **exited})
                continue
            try:
                request, extra = wire.recv_control(ctrl)
            except (wire.ChannelClosed, ConnectionError):
                _kill_all(pid, namespaced)
                os._exit(0)
            for fd in extra:
                os.close(fd)
            if request.get("op") == "end":
                break
    finally:
        os.close(pidfd)
    _kill_all(pid, namespaced)
    if exited is None:
        exited = _reap(pid)
        exited["killed"] = True
    _reap_orphans(namespaced)
    if namespaced:
        isolation.unmount_work_dirs()
    else:
        _empty_dir(workdir)
    exited["elapsed_s"] = time.monotonic() - started
    wire.send_control(ctrl, {"op": "done", **exited})


def _reap(pid: int) -> dict:
    while True:
        try:
            _, status, usage = os.wait4(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            return {"status": None, "cpu_s": None, "rss_kb": None, "killed": True}
    return {"status": os.waitstatus_to_exitcode(status), "cpu_s": usage.ru_utime + usage.ru_stime,
            "rss_kb": usage.ru_maxrss, "killed": False}


def _kill_all(pid: int, namespaced: bool) -> None:
    if namespaced and os.getpid() == 1:
        # From PID 1 this reaches every process of the namespace except ourselves.
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)
        return
    # Without a PID namespace we are a subreaper: every orphan of the sample is our child. Kill our
    # children until none are left (killed parents hand their own children to us).
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    children = f"/proc/self/task/{os.getpid()}/children"
    for _ in range(10_000):
        try:
            with open(children) as fh:
                kids = [int(k) for k in fh.read().split() if int(k) != pid]  # pid: reaped by _reap
        except OSError:
            return
        if not kids:
            return
        for kid in kids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(kid, signal.SIGKILL)
        for kid in kids:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(kid, 0)


def _reap_orphans(namespaced: bool) -> None:
    while True:
        if namespaced and os.getpid() == 1:
            with contextlib.suppress(ProcessLookupError):
                os.kill(-1, signal.SIGKILL)
        try:
            pid, _ = os.waitpid(-1, 0 if namespaced else os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _empty_dir(path: str) -> None:
    import shutil

    for entry in os.scandir(path):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


def bootstrap(fd: int) -> None:
    """`python -c` entry; `fd` is the control socket, whose first message is the config."""
    ctrl = socket.socket(fileno=fd)
    config, _ = wire.recv_control(ctrl, timeout=60)
    main(config, ctrl)

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

import _thread
import contextlib
import functools
import gc
import importlib
import os
import select
import signal
import socket
import sys

from coding_framework.sandbox import child, isolation, suite_runner, syscall_filter, wire
from coding_framework.sandbox.host_memory import HostMemoryWatch


def _preload(modules: list[str]) -> list[str]:
    """Import `modules`, those the audit hook imports last (suite_runner.GUARD_ONLY: what they load that
    the others did not); the names that failed."""
    guard = set(suite_runner.in_process_guard.IMPORTED_AT_INSTALL)
    failed = _import_all([name for name in modules if name not in guard])
    loaded = set(sys.modules)
    failed += _import_all([name for name in modules if name in guard])
    suite_runner.GUARD_ONLY = frozenset(set(sys.modules) - loaded)
    return failed


def _import_all(modules: list[str]) -> list[str]:
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
    report: dict = {"namespaces": False, "errors": []}
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
        report["file_watches_blocked"] = isolation.block_file_watches()
        report["sysv_ipc_contained"] = isolation.contain_sysv_ipc()
    except OSError as exc:
        wire.send_control(ctrl, {"op": "failed", "error": f"building the sandbox root failed: {exc}"})
        os._exit(1)
    _serve(ctrl, config, report, uid=uid, namespaced=True)


def _serve(ctrl: socket.socket, config: dict, report: dict, *, uid: int | None, namespaced: bool) -> None:
    # As PID 1, a handler would let the candidate signal us; SIG_DFL makes init immune.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, signal.SIG_DFL)
    # As init of the PID namespace, kill(-1) reaches every process of a sample; otherwise we make
    # ourselves the subreaper of every orphan and kill them one by one.
    init = namespaced and os.getpid() == 1
    if not init:
        isolation.prctl(isolation.PR_SET_CHILD_SUBREAPER, 1)
    work = WorkDirs(config, namespaced)
    os.chdir(work.cwd)
    # Descriptors a request brings land on the lowest free numbers: with 0-3 taken (by /dev/null where
    # nothing is open), they are all above 3 and each child can move them onto 0-3 with one dup2 apiece.
    null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    for fd in range(4):
        try:
            os.fstat(fd)
        except OSError:
            os.dup2(null, fd, inheritable=False)
    if null > 3:
        os.close(null)
    # Inherited by every child, so no child spends a system call on them: nothing it runs can gain
    # privileges through execve, it is non-dumpable from birth (/proc/<pid>/{mem,fd,environ} stay
    # root's), and the constant rlimits are in place. None of this hinders the zygote, which never
    # executes a program, dumps core, locks memory or uses message queues.
    isolation.prctl(isolation.PR_SET_NO_NEW_PRIVS, 1)
    isolation.prctl(isolation.PR_SET_DUMPABLE, 0)
    isolation.apply_constant_rlimits()
    # Needs no_new_privs (above) and a single thread; every child inherits it, at no cost per sample.
    report["syscall_filter"] = syscall_filter.install()
    # unittest jobs' count of thread states (compiled; the fallback counts less: thread_states.py).
    report["thread_states"] = suite_runner.in_process_guard.thread_states.AVAILABLE
    report["outside_calls"] = suite_runner.in_process_guard.outside_calls.AVAILABLE  # (its watch: the same)
    # As init of its own PID namespace, every sample's pids start at 2: see isolation.open_pid_counter.
    pid_counter = isolation.open_pid_counter() if init else None
    report["pid_counter_reset"] = pid_counter is not None
    # Every sysctl is set now: read-only from here on (the pid counter's descriptor stays writable).
    report["sysctls_sealed"] = namespaced and isolation.seal_sysctls()
    report["single_malloc_arena"] = isolation.share_malloc_arena()
    child.prepare_zygote(work.cwd)
    # Inside the sandbox, with the environment and view children get: a library may start a thread
    # (pyarrow's allocator, under pandas), after which no user namespace could be made; one that
    # writes a cache at import (matplotlib's fonts) writes it into the work dirs, emptied below.
    vm_before, rss_before = isolation.memory_use()
    report["preload_failed"] = _preload(config["preload"])
    vm_after, rss_after = isolation.memory_use()
    # What the preloaded modules hold is not the sample's: each child's address-space limit and the
    # cgroup's (judge) grow by it, so a sample may use as much as it could without them.
    child.PRELOAD_ALLOWANCE_MB = report["preload_allowance_mb"] = max(0, vm_after - vm_before) >> 20
    report["preload_rss_bytes"] = max(0, rss_after - rss_before)
    # Threads it started: each is a task of the cgroup's pids count, which the judge raises by as many.
    report["preload_threads"] = len(os.listdir("/proc/self/task")) - 1
    if namespaced and uid is None:
        # Rootless: the candidate is uid 0 like us (outer and inner zygote, preload threads), and the
        # kernel counts RLIMIT_NPROC per user namespace and uid: without these it got 2 tasks fewer.
        child.SHARED_UID_TASKS = 2 + report["preload_threads"]
    work.reset()
    child.warm_up()
    watch = HostMemoryWatch.open(config.get("memory_floor_mb"))
    report["host_memory_floor_mb"] = watch.floor_kb >> 10 if watch is not None else None
    wire.send_control(ctrl, {"op": "ready", "report": report})
    # Objects that exist now are never collected in children: a collection there would write to every
    # object header and copy every page of the zygote (copy-on-write), several ms per sample.
    gc.collect()
    gc.freeze()
    isolation.release_free_heap()
    sys.stdout.flush()
    sys.stderr.flush()
    _loop(ctrl, work, uid, init, pid_counter, watch)


def _loop(ctrl: socket.socket, work: WorkDirs, uid: int | None, init: bool, pid_counter: int | None,
          watch: HostMemoryWatch | None) -> None:
    """One iteration per sample. Everything the zygote touches between two forks is copied on write
    (it shares every page with the running child), so this loop is kept to plain calls on few objects:
    ~0.1 ms of page faults per sample that a chattier loop would multiply."""
    recvmsg = ctrl.recvmsg
    recv = ctrl.recv
    send = ctrl.send
    ancillary = socket.CMSG_SPACE(wire.MAX_FDS * 4)
    raw_fork = isolation.raw_fork_function()
    fds_of, parse_run, pack_exit = wire.fds_of, wire.parse_run, wire.pack_exit
    control_bytes, end, done, function_mode = wire.CONTROL_BYTES, wire.END, wire.DONE, child.FUNCTION
    waitid, wait4, kill, close = os.waitid, os.wait4, os.kill, os.close
    no_wait = os.WEXITED | os.WNOHANG | os.WNOWAIT
    clean = work.clean_check()
    reset_pids = isolation.reset_pid_counter
    # Children inherit the generator's state: reseeded after every sample (here, once the child is
    # gone, rather than in each child, where touching it would cost copy-on-write faults).
    reseeds = []
    generator = sys.modules.get("random")
    if generator is not None:
        import _random

        # The C-level seed(None) (fresh bytes from the kernel), without random.Random.seed's checks.
        reseeds.append(functools.partial(_random.Random.seed, generator._inst))
    legacy = getattr(sys.modules.get("numpy.random.mtrand"), "_rand", None)
    if legacy is not None:
        # numpy's global generator (np.random.rand and friends), when numpy was preloaded: seeded
        # from the kernel at import in a fresh interpreter, so at every sample here.
        reseeds.append(functools.partial(legacy.seed, None))
    while True:
        try:
            data, ancdata, _flags, _addr = recvmsg(control_bytes, ancillary)
        except ConnectionError:
            data, ancdata = b"", []
        if not data:
            os._exit(0)
        fds = fds_of(ancdata)
        request = parse_run(data, len(fds))
        if request is None:
            for fd in fds:
                close(fd)
            send(pack_exit(done, None, None, None, False, error=True))
            continue
        mode, limits = request
        # A raw fork skips CPython's after-fork hooks; only valid while we have a single thread.
        pid = raw_fork() if _thread._count() == 0 else os.fork()
        if pid == 0:
            child.start(fds, mode, limits, uid)  # never returns
        if pid < 0:
            for fd in fds:
                close(fd)
            send(pack_exit(done, None, None, None, False, error=True))
            continue
        for fd in fds:
            close(fd)
        if watch is not None:
            watch.new_sample(functools.partial(_kill_all, pid, init), countable=init)
        if mode == function_mode and init:
            # The common case, inline: until the child is dead every page this loop writes is copied.
            # Function-call children never end on their own while the judge talks to them: the judge
            # sends END when it is done or when their channel closes, so there is nothing to watch.
            while True:
                if watch is not None:
                    watch.wait([ctrl])
                try:
                    data = recv(control_bytes)
                except ConnectionError:
                    data = b""
                if not data:
                    _kill_all(pid, init)
                    os._exit(0)
                if data == end:
                    break
            alive = waitid(os.P_PID, pid, no_wait) is None
            with contextlib.suppress(ProcessLookupError):
                kill(-1, signal.SIGKILL)
            _, status, usage = wait4(pid, 0)
            exited = (os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, usage.ru_maxrss,
                      alive)
        else:
            exited = (_wait_for_end(ctrl, pid, init, watch) if mode == function_mode
                      else _watch(ctrl, pid, init, watch))
            if exited is None:
                alive = waitid(os.P_PID, pid, no_wait) is None
                _kill_all(pid, init)
                exited = _reap(pid, killed=alive)
            else:
                _kill_all(pid, init)
        _reap_orphans(init)
        if pid_counter is not None:
            reset_pids(pid_counter)  # raises if it cannot: the judge then reports a sandbox error
        if not clean():
            work.reset()
        try:
            send(pack_exit(done, *exited, host_memory_low=watch is not None and watch.fired))
        except OSError:  # the judge closed our socket (it replaced us while a sample was slow to die)
            os._exit(0)
        for reseed in reseeds:
            reseed()


class WorkDirs:
    """The candidate's writable directories, mounted once and checked after every sample.

    Namespaced: /tmp and /dev/shm are size-capped tmpfs mounts of this zygote. A mount that a sample
    left untouched (isolation.usage: its counters and its root directory are as just mounted) is reused
    as it is; one a sample made, removed or changed anything in is replaced by a fresh, empty mount
    before the next sample. Without namespaces the single host work dir is emptied instead.
    """

    def __init__(self, config: dict, namespaced: bool):
        self.namespaced = namespaced
        self.size_mb = config["work_mb"]
        self.cwd = "/tmp" if namespaced else config["workdir"]
        self.paths = isolation.WORK_DIRS if namespaced else (self.cwd,)
        self.clean: dict[str, tuple[int, ...]] = {}
        if namespaced:
            for path in self.paths:
                self._fresh_mount(path)

    def _fresh_mount(self, path: str) -> None:
        isolation.unmount_work_dir(path)
        isolation.mount_work_dir(path, self.size_mb)
        self.clean[path] = isolation.usage(path)
        if path == self.cwd:
            # Children inherit our working directory: it must be the new mount, not the detached old
            # one (which lives on, with whatever the last sample left, as long as a cwd points into it).
            os.chdir(path)

    def clean_check(self):
        """A function telling whether every work dir is as freshly made (namespaced) — cheap enough to
        call after each sample; without namespaces the host work dir is always emptied (False)."""
        if not self.namespaced:
            return lambda: False
        usage, clean = isolation.usage, self.clean

        def clean_now() -> bool:
            return all(usage(path) == fresh for path, fresh in clean.items())

        return clean_now

    def reset(self) -> None:
        """Make every work dir empty again; called once no process of the sample is left."""
        for path in self.paths:
            if not self.namespaced:
                _empty_dir(path)
            elif isolation.usage(path) != self.clean[path]:
                self._fresh_mount(path)


def _wait_for_end(ctrl: socket.socket, pid: int, init: bool, watch: HostMemoryWatch | None) -> None:
    """Block until the judge sends END (returns None: the child was not reaped yet)."""
    while True:
        if watch is not None:
            watch.wait([ctrl])
        try:
            data = ctrl.recv(wire.CONTROL_BYTES)
        except ConnectionError:
            data = b""
        if not data:
            _kill_all(pid, init)
            os._exit(0)
        if data == wire.END:
            return None


def _watch(ctrl: socket.socket, pid: int, init: bool, watch: HostMemoryWatch | None) -> tuple | None:
    """Report the child's own exit as soon as it happens (programs are judged on it) until END;
    returns the exit, or None if the child was still running at END."""
    pidfd = os.pidfd_open(pid)
    exited = None
    try:
        while True:
            sources = [ctrl, pidfd] if exited is None else [ctrl]
            ready = watch.wait(sources) if watch is not None else select.select(sources, [], [])[0]
            if pidfd in ready and exited is None:
                exited = _reap(pid, killed=False)
                ctrl.send(wire.pack_exit(wire.EXITED, *exited))
                continue
            try:
                data = ctrl.recv(wire.CONTROL_BYTES)
            except ConnectionError:
                data = b""
            if not data:
                _kill_all(pid, init)
                os._exit(0)
            if data == wire.END:
                return exited
    finally:
        os.close(pidfd)


def _reap(pid: int, *, killed: bool) -> tuple:
    """(status, cpu_s, rss_kb, killed) of our child `pid`, waiting for it to end."""
    while True:
        try:
            _, status, usage = os.wait4(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            return None, None, None, True
    return os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, usage.ru_maxrss, killed


def _kill_all(pid: int, init: bool) -> None:
    if init:
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


def _reap_orphans(init: bool) -> None:
    """Wait for every other process of the sample to be gone (as init: until we have no child)."""
    while True:
        if init:
            with contextlib.suppress(ProcessLookupError):
                os.kill(-1, signal.SIGKILL)
        try:
            pid, _ = os.waitpid(-1, 0 if init else os.WNOHANG)
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
    isolation.set_process_name("cf-zygote")
    ctrl = socket.socket(fileno=fd)
    config, _ = wire.recv_control(ctrl, timeout=60)
    main(config, ctrl)

"""The judge: one trusted worker process per core. It owns a zygote, starts one sandboxed child per
job, runs the trusted side of the job (tests, comparisons) and decides the verdict.

Started by the pool through boot.judge_main, which hands over (serve) once the zygote is spawned. Its
stream socket to the pool carries length-prefixed frames: the config and the hello as JSON, then one
job per frame, answered by one verdict per frame, as marshal (only this package's trusted processes
write to that socket).
"""

from __future__ import annotations

import _socket
import ast
import builtins
import contextlib
import fcntl
import functools
import json
import marshal
import os
import random
import select
import shutil
import signal
import socket
import subprocess
import threading
import time
import traceback

from coding_framework.sandbox import child as child_module
from coding_framework.sandbox import host_memory, plain_data, speculation, wire
from coding_framework.sandbox.boot import spawn_zygote
from coding_framework.sandbox.cgroups import CgroupBusy, WorkerCgroup
from coding_framework.sandbox.isolation import SANDBOX_UID
from coding_framework.sandbox.limits import Limits
from coding_framework.sandbox.proxy import (
    MAX_MESSAGE_CHARS,
    CandidateError,
    CandidateProxy,
    SandboxUsageError,
    decode_reply,
    describe,
    exception_text,
)
from coding_framework.sandbox.session import (
    END_GRACE_S,
    RESTART_WAIT_S,
    ChildSession,
    Stop,
    ZygoteLost,
    classify_exit,
)
from coding_framework.sandbox.verdict import Status
from coding_framework.sandbox.workdirs import make_workdir

MAX_JOB_BYTES = 1 << 30
# How long the recording run of a test may take (speculation.py): a slower test just sends fewer calls
# ahead, and wastes at most this much on its second run.
RECORDING_BUDGET_S = 0.05
STUCK_NOTE = (f"its processes were still dying {END_GRACE_S:g} s after the kill; the sandbox's process was "
              "replaced before the next sample")


# Judged once per judge at start-up (Judge.start).
SELF_CHECK_JOB = {"kind": "function", "program": "def f(x):\n    return x + 1\n", "entry_point": "f",
                  "test": "assert f(1) == 2\n", "setup": "", "limits": Limits().to_dict()}


class TrustedTimeout(BaseException):
    """The trusted test code itself ran past the job's deadline."""


def stdin_file(data: bytes) -> int:
    """A program's stdin as `python main.py < in.txt` has it, the way contest judges run programs: a
    regular file (a memfd, sealed against writes: fstat gives its size, one read gets it all, seek and
    mmap work), not a pipe (red-team round 46: fast-input idioms read nothing or 64 KiB of it)."""
    fd = os.memfd_create("stdin", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS,
                fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
    try:  # opened read-only, as `<` opens the file (round 47), at offset 0
        return os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(fd)


class Zygote:
    """Start, talk to and restart one zygote."""

    def __init__(self, config: dict):
        self.config = config
        self.proc: subprocess.Popen | None = None
        self.ctrl: socket.socket | None = None
        self.report: dict = {}
        self.workdir: str | None = None
        self._ooms_seen = 0
        self.host_memory_kill = False  # out_of_memory said so for the current job
        self.last_session: ChildSession | None = None
        name = config.get("cgroup_name")
        self.cgroup = WorkerCgroup.create(name) if name else None

    def start(self, spawned: tuple[subprocess.Popen, socket.socket] | None = None) -> None:
        """Configure a zygote process, `spawned` already (boot.spawn_zygote) or started here."""
        if self.workdir is None:
            self.workdir = make_workdir(self.config.get("work_parent"))
        self.proc, ours = spawned or spawn_zygote()
        self.ctrl = ours
        if self.cgroup is not None:
            try:
                self.cgroup.add(self.proc.pid)  # before it forks the inner zygote, which inherits it
            except OSError:
                self.cgroup = None
        # Without a cgroup, the zygote guards the host's memory itself (host_memory.HostMemoryWatch).
        floor = None if self.cgroup is not None else self.config.get("host_memory_floor_mb")
        config = {**self.config, "workdir": self.workdir, "memory_floor_mb": floor}
        wire.send_control(ours, config)
        try:
            message, _ = wire.recv_control(ours, timeout=120)
            uid = self._map_ids(message)
            wire.send_control(ours, {"op": "mapped", "child_uid": uid})
            ready, _ = wire.recv_control(ours, timeout=120)
        except (wire.Deadline, wire.ChannelClosed, ConnectionError, OSError) as exc:
            self.stop()
            raise RuntimeError(f"the sandbox zygote did not start: {exc}") from exc
        if ready.get("op") != "ready":
            self.stop()
            raise RuntimeError(ready.get("error", f"the sandbox zygote failed to start: {ready}"))
        report = ready["report"]
        report["child_uid"] = uid
        report["user_namespace"] = message.get("user_namespace", False)
        report["cgroup"] = f"v{self.cgroup.version}" if self.cgroup is not None else None
        self.report = report
        self._ooms_seen = self.oom_kills()

    def _map_ids(self, message: dict) -> int | None:
        root = os.geteuid() == 0
        if not message.get("namespaced"):
            return SANDBOX_UID if root else None
        if not message.get("user_namespace"):
            return SANDBOX_UID  # real root, namespaces without a user namespace
        pid = self.proc.pid
        if root:
            # Inner root is the zygote (never runs candidate code); candidates become `nobody`.
            maps = f"0 0 1\n{SANDBOX_UID} {SANDBOX_UID} 1\n"
            for name in ("uid_map", "gid_map"):
                with open(f"/proc/{pid}/{name}", "w") as fh:
                    fh.write(maps)
            return SANDBOX_UID
        with open(f"/proc/{pid}/setgroups", "w") as fh:
            fh.write("deny")
        for name, outer in (("uid_map", os.geteuid()), ("gid_map", os.getegid())):
            with open(f"/proc/{pid}/{name}", "w") as fh:
                fh.write(f"0 {outer} 1\n")
        return None  # only one uid exists inside: the child stays uid 0 and drops every capability

    def start_child(self, mode: bytes, limits: Limits, deadline: float,
                    stdin: bytes | None = None) -> ChildSession:
        """A fresh child of `mode` under `limits`. `stdin`: the program's input, as a regular file (None:
        the child reads /dev/null)."""
        self.replace_if_stuck()
        if self.cgroup is not None:
            try:
                self.cgroup.set_limits(limits.memory_mb, limits.max_processes, self._preloaded())
            except CgroupBusy:
                self._replace_cgroup()
                self.cgroup.set_limits(limits.memory_mb, limits.max_processes, self._preloaded())
        # The C-level socket pair: the socket module's wrapper class costs more than the sample needs.
        chan, theirs = _socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_r, out_w = os.pipe2(os.O_CLOEXEC)
        err_r, err_w = os.pipe2(os.O_CLOEXEC)
        if stdin is None:
            given = [theirs.fileno(), out_w, err_w]  # the child opens /dev/null as its stdin
        else:
            given = [theirs.fileno(), stdin_file(stdin), out_w, err_w]
        # A pipe is its maker's, mode 0600: a candidate of another uid (the sandbox's `nobody`) could
        # not reopen its own stdio by name (`open('/dev/stdin')`, through /proc/self/fd). Reaching a
        # process's descriptors by name needs the right to trace it, which nothing outside has.
        for fd in given[1:]:
            os.fchmod(fd, 0o666)
        record = wire.pack_run(mode, (limits.effective_cpu_s, limits.memory_mb, limits.max_processes,
                                      limits.max_open_files, limits.max_file_bytes, limits.max_value_bytes,
                                      limits.max_value_depth))
        try:
            self.ctrl.sendmsg([record], [wire.fds_message(given)])
        except OSError as exc:
            for fd in (out_r, err_r):
                os.close(fd)
            chan.close()
            raise ZygoteLost(f"the zygote is gone: {exc}") from exc
        finally:
            theirs.close()
            for fd in given[1:]:
                os.close(fd)
        self.last_session = ChildSession(ctrl=self.ctrl, chan=chan, stdout_r=out_r, stderr_r=err_r,
                                         limits=limits, deadline=deadline,
                                         reports_exit=mode != child_module.FUNCTION)
        return self.last_session

    def _preloaded(self) -> tuple[int, int]:
        """What the zygote's preloaded modules made it hold (its report): bytes, threads."""
        return int(self.report.get("preload_rss_bytes") or 0), int(self.report.get("preload_threads") or 0)

    def _replace_cgroup(self) -> None:
        """A new, empty cgroup of the same name, and a zygote in it: what an earlier sample left charged
        to the old one (CgroupBusy) goes with the old one, which can be removed once its processes are.
        Only when a job lowers the memory limit under that charge (it costs a zygote start)."""
        self.stop()
        self.cgroup.remove()
        self.cgroup = WorkerCgroup.create(self.config["cgroup_name"])
        if self.cgroup is None:
            raise RuntimeError("the worker's cgroup could not be made again")
        self.start()

    def stop(self, wait_s: float = 1.0) -> None:
        """Close the zygote, waiting up to `wait_s` for it to exit on its own before killing it."""
        if self.ctrl is not None:
            self.ctrl.close()  # the inner zygote sees EOF and exits; the outer one follows it
            self.ctrl = None
        if self.proc is not None:
            try:
                # Exiting on their own, each reaps the one below: their CPU time reaches our accounting.
                # The inner one, init of the sample's PID namespace, exits only once every process there
                # has died and been reaped; killed before that, it would be orphaned to whatever reaps
                # orphans here (in a container, maybe nothing), its processes still charged to the cgroup.
                self.proc.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    self.proc.kill()  # the inner zygote dies with it (parent-death signal)
                self.proc.wait()
            self.proc = None

    def restart(self) -> None:
        self.stop(wait_s=RESTART_WAIT_S)
        self.last_session = None
        self.start()

    @property
    def stuck(self) -> bool:
        """Whether the zygote was still waiting for its last sample's processes to die when that sample's
        session ended (ChildSession.stuck)."""
        return self.last_session is not None and self.last_session.stuck

    def replace_if_stuck(self) -> None:
        """Restart a stuck zygote: it would answer the next sample's records with the old one's end."""
        stuck, self.last_session = self.stuck, None
        if stuck:
            self.restart()

    def oom_kills(self) -> int:
        """The cgroup's OOM-kill count (0 without a cgroup): a signal the candidate cannot forge."""
        return self.cgroup.oom_kills() if self.cgroup is not None else 0

    def out_of_memory(self, session: ChildSession | None, limits: Limits) -> str | None:
        """Why the sample ran out of memory, from what the candidate cannot forge, or None: the kernel
        OOM-killed something in this worker's cgroup since the last call (the previous sample's end, or
        start-up: one read per sample), or, without a cgroup, the zygote killed the sample because the
        host ran low on memory."""
        count = self.oom_kills()
        new, self._ooms_seen = count > self._ooms_seen, count
        if new:
            return f"memory limit of {limits.memory_mb} MiB exceeded (OOM-killed)"
        if session is not None and (session.exit_info or {}).get("host_memory_low"):
            self.host_memory_kill = True
            floor = self.report.get("host_memory_floor_mb")
            return (f"killed: the host's available memory fell under {floor} MiB while the sample ran "
                    "(without a cgroup, as here, nothing bounds the memory of a sample's processes "
                    f"together; each has its own limit of {limits.memory_mb} MiB)")
        return None

    def close(self) -> None:
        self.stop()
        if self.cgroup is not None:
            self.cgroup.remove()
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None


class Judge:
    """Runs jobs (as dicts from the pool) and returns verdicts (as dicts)."""

    def __init__(self, config: dict, test_seed: int | None = None):
        self.zygote = Zygote(config)
        # Where the trusted code's `random` starts in every function-call job: tests that draw their
        # inputs (HumanEval 38, 50, 53) get the same ones whatever ran before in this judge, so a
        # sample's verdict does not depend on which samples, passing or failing where, shared its
        # worker before it. From the pool's secret seed (the same in all its judges), never a constant
        # or anything the zygote is told: with seed 0, a completion that made the test's draws itself
        # returned the expected answers in order without reading its input (red-team round 49).
        self.test_random_state = random.Random(test_seed).getstate()
        self.alarm = _Alarm()
        self.abandoned = False  # set by the lifeline thread: nobody will read this judge's verdicts
        try:
            self._autogroup: int | None = os.open("/proc/self/autogroup", os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            self._autogroup = None  # a kernel without autogroups

    def abandon(self) -> None:
        """End the running job at once (called from _Lifeline's thread when the pool is gone): kill the
        zygote, and with it (parent-death signal, then the end of its PID namespace) the sample. The
        job's own code then sees its child gone, and nothing restarts the zygote."""
        self.abandoned = True
        proc = self.zygote.proc
        if proc is not None:
            with contextlib.suppress(OSError):
                proc.kill()

    def start(self, spawned: tuple[subprocess.Popen, socket.socket] | None = None) -> dict:
        """Start the zygote and judge one known-good job in it: a host where children cannot set
        themselves up (every sample would be an error) fails here, saying why, not sample by sample."""
        self.zygote.start(spawned)
        verdict = self.run(SELF_CHECK_JOB)
        if verdict["status"] != Status.PASSED.value:
            self.zygote.close()
            detail = (verdict.get("stderr") or "").strip().splitlines()
            raise RuntimeError(f"a sandboxed child cannot run a one-line function here ({verdict['status']}: "
                               f"{verdict.get('message', '')}{'; ' + detail[-1] if detail else ''})")
        return self.zygote.report

    def run(self, job: dict) -> dict:
        """The verdict of `job`. A sample killed because the host ran short of memory (a pool without a
        cgroup: host_memory.HostMemoryWatch) may have been killed for another worker's sample (round 38): it
        runs again once the host has its memory back, host_memory.ATTEMPTS times in all, and `memory`
        stands only if it was killed each time."""
        for attempt in range(1, host_memory.ATTEMPTS + 1):
            self.zygote.host_memory_kill = False
            result = self._run_once(job)
            if result["status"] != Status.MEMORY.value or not self.zygote.host_memory_kill:
                return result
            if attempt < host_memory.ATTEMPTS:
                host_memory.wait_for_memory(self.zygote.report.get("host_memory_floor_mb") or 0,
                                            host_memory.WAIT_S)
        result["message"] += f" (each of the {host_memory.ATTEMPTS} times it ran)"
        return result

    def _run_once(self, job: dict) -> dict:
        started = time.monotonic()
        limits = None
        try:
            limits = _limits(job["limits"])
            kind = job["kind"]
            if kind == "function":
                result = self._run_function(job, limits, started)
            elif kind == "program":
                result = self._run_program(job, limits, started)
            elif kind == "unittest":
                from coding_framework.sandbox.unittest_checks import run_unittest_job

                result = run_unittest_job(self, job, limits, started)
            else:
                raise ValueError(f"unknown job kind {kind!r}")
        except ZygoteLost as exc:
            # A sample that fills its worker's cgroup with memory no process of its shows (memfds) and
            # lowers its own OOM score gets a zygote killed in its place (round 36): its verdict, not ours.
            out_of_memory = self.zygote.out_of_memory(None, limits) if limits is not None else None
            self._restart()
            if out_of_memory:
                result = {"status": Status.MEMORY.value, "message": f"{out_of_memory}; the sandbox's own "
                          "process was killed in the sample's place and has been replaced"}
            else:
                result = {"status": Status.SANDBOX_ERROR.value, "message": str(exc)}
        except TrustedTimeout:  # the alarm went off where no handler of the job's kind was left to see it
            self.alarm.disarm()
            self._restart()  # the sample may still be running: its zygote goes with it
            result = {"status": Status.TIMEOUT.value,
                      "message": f"wall-clock limit of {job['limits']['timeout_s']:g}s exceeded"}
        except Exception as exc:
            self._restart()
            result = {"status": Status.SANDBOX_ERROR.value,
                      "message": f"judge error: {describe(type(exc).__name__, exception_text(exc))}",
                      "stderr": traceback.format_exc()[-4000:]}
        if self.zygote.stuck:
            result["message"] = f"{result['message']}; {STUCK_NOTE}" if result.get("message") else STUCK_NOTE
            with contextlib.suppress(Exception):
                self.zygote.replace_if_stuck()
        result.setdefault("duration_s", time.monotonic() - started)
        if self._autogroup is not None:
            self._reset_autogroup(self._autogroup)
        if job.get("keep_output") is False:  # the pool's run_many(keep_output=False)
            result["stdout"] = ""
            if result["status"] != Status.SANDBOX_ERROR.value:  # our own traceback stays
                result["stderr"] = ""
        if len(result.get("message", "")) > 2 * MAX_MESSAGE_CHARS:  # a verdict's message stays small
            result["message"] = result["message"][:2 * MAX_MESSAGE_CHARS] + "…"
        return result

    @staticmethod
    def _reset_autogroup(fd: int) -> None:
        """Put the nice value of this judge's scheduler autogroup back to 0 if a sample changed it.

        Sessions have autogroups, and children (setpgid, not setsid: a session per sample would build
        an autogroup each time) share the judge's. A sample that makes itself dumpable again owns its
        /proc/self/autogroup and can write it: nice 19 slowed every later sample of the worker into
        time-outs and told them a number. One read per job (~4 µs); a write only after such a sample.
        The kernel lets processes without CAP_SYS_ADMIN set an autogroup's nice once per 0.1 s,
        host-wide (EAGAIN): a rootless judge tries again for up to a second."""
        try:
            if os.pread(fd, 64, 0).split()[-1] == b"0":
                return
            for _ in range(10):
                try:
                    os.write(fd, b"0")
                    return
                except BlockingIOError:
                    time.sleep(0.11)
        except (OSError, IndexError):
            pass

    def _restart(self) -> None:
        if self.abandoned:
            return
        with contextlib.suppress(Exception):
            self.zygote.restart()

    # -- function-call jobs ----------------------------------------------------------------------
    def _run_function(self, job: dict, limits: Limits, started: float) -> dict:
        random.setstate(self.test_random_state)
        sent_ahead = self._record_calls(job, limits, started + limits.timeout_s)
        result = self._function_attempt(job, limits, started, started + limits.timeout_s, sent_ahead)
        if isinstance(result, list):
            # The calls sent ahead did not match the test's (see speculation.py): the job again, in a
            # fresh child, call by call, with a full time limit of its own; the test gets the first
            # run's answers to the calls it already took there (proxy.CandidateProxy).
            result = self._function_attempt(job, limits, started, time.monotonic() + limits.timeout_s, [],
                                            replay=result)
        return result

    def _record_calls(self, job: dict, limits: Limits, deadline: float) -> list[bytes]:
        """The test's calls as a run against speculation.Recorder finds them (nothing is judged here);
        none when the trusted code measures time (speculation.py)."""
        try:
            setup = _compiled(job.get("setup", ""), "<setup>")
            test = _compiled(job["test"], "<test>")
        except (SyntaxError, ValueError):
            return []  # the real run reports broken trusted code
        if _names_a_clock(setup) or _names_a_clock(test):
            return []
        recorder = speculation.Recorder(job["entry_point"], limits.max_value_depth + 2)
        namespace: dict = {"__name__": "__test__", "__builtins__": builtins}
        state = random.getstate()  # the real run must draw the same numbers
        clocks = speculation.WatchClocks()
        alarm = self.alarm
        # The alarm repeats until disarmed, and its handler runs at any call or loop jump: each block
        # below starts by clearing `armed` (a plain attribute store, where no handler can run), after
        # which a late signal raises nothing. The clocks are watched only around the trusted code (the
        # alarm itself reads one).
        try:
            alarm.arm(min(deadline, time.monotonic() + RECORDING_BUDGET_S), speculation.EndRecording)
            try:
                clocks.watch()
                exec(setup, namespace)
                namespace["candidate"] = namespace[job["entry_point"]] = recorder
                exec(test, namespace)
                check = namespace.get("check")
                if callable(check) and check is not recorder:
                    check(recorder)
            except BaseException:  # the recording only ends; the real run reports what failed
                pass
            finally:
                alarm.armed = False
                clocks.restore()
        except speculation.EndRecording:
            alarm.armed = False  # it fired just as the recording ended anyway
            clocks.restore()
        alarm.disarm()
        random.setstate(state)
        return [] if clocks.read else recorder.calls

    def _function_attempt(self, job: dict, limits: Limits, started: float, deadline: float,
                          sent_ahead: list[bytes], replay: list = ()) -> dict | list:
        """Run the job once: its result, or, when the calls sent ahead turn out not to be the test's, the
        answers the test took before that (to replay in a run call by call)."""
        session = self.zygote.start_child(child_module.FUNCTION, limits, deadline)
        sources = {"<setup>": job.get("setup", ""), "<test>": job["test"]}
        status, message = Status.PASSED, ""
        # What failed, described only once the child is gone: its life after its last answer must not
        # show whether the judge had a failure to describe (benchmarks/sandbox/verdict_timing.py).
        failure: BaseException | None = None
        alarm = self.alarm
        proxy = None
        state = random.getstate()
        try:
            try:
                alarm.arm(deadline)  # from here on, the judge's own work on what the child sends is timed
                load = plain_data.encode_request((job["program"], job["entry_point"]), max_bytes=1 << 30)
                session.send_frames([load, *sent_ahead])
                try:
                    reply = decode_reply(session.receive(), 4)
                except (plain_data.DecodeError, RecursionError):
                    reply = None
                if (type(reply) is tuple and len(reply) == 3 and reply[0] == "load_error"
                        and type(reply[1]) is str and type(reply[2]) is str):
                    status, message = Status.ERROR, describe(reply[1][:200], reply[2][:MAX_MESSAGE_CHARS])
                elif reply != ("ready",):
                    status, message = Status.ERROR, "the candidate sent a malformed reply while loading"
                else:
                    namespace: dict = {"__name__": "__test__", "__builtins__": builtins}
                    try:
                        exec(_compiled(job.get("setup", ""), "<setup>"), namespace)
                    except Exception as exc:
                        what = describe(type(exc).__name__, exception_text(exc))
                        raise SandboxUsageError(f"the setup code raised {what}") from exc
                    proxy = CandidateProxy(session, job["entry_point"], sent_ahead, replay)
                    namespace["candidate"] = namespace[job["entry_point"]] = proxy
                    exec(_compiled(job["test"], "<test>"), namespace)
                    check = namespace.get("check")
                    if callable(check) and check is not proxy:  # (an entry point named `check`: MBPP)
                        check(proxy)
            except speculation.Diverged:
                pass
            except ZygoteLost:
                raise  # our fault, not the candidate's: Judge.run restarts the zygote (sandbox_error)
            except Stop as stop:
                status, message = stop.status, stop.message
            except TrustedTimeout:
                status, message = Status.TIMEOUT, f"wall-clock limit of {limits.timeout_s:g}s exceeded"
            except CandidateError as exc:
                status, message = Status.ERROR, str(exc)
            except SandboxUsageError as exc:
                status, message = Status.SANDBOX_ERROR, str(exc)
            except SyntaxError as exc:
                if exc.filename in sources and not getattr(exc, "raised_by_candidate", False):
                    status, message = Status.SANDBOX_ERROR, f"the trusted code does not compile: {exc}"
                else:
                    status, failure = Status.ERROR, exc
            except BaseException as exc:
                status, failure = (Status.FAILED if isinstance(exc, AssertionError) else Status.ERROR), exc
        except TrustedTimeout:  # the alarm went off in a handler above, past the deadline
            status, failure = Status.TIMEOUT, None
            message = f"wall-clock limit of {limits.timeout_s:g}s exceeded"
        finally:
            try:
                # The child answers every call sent ahead, pass or fail (proxy.take_unanswered); still
                # under the job's alarm, as the test was.
                if proxy is not None and proxy.unanswered_ahead:
                    proxy.take_unanswered()
            except TrustedTimeout:
                pass
            finally:
                alarm.armed = False  # first: a TrustedTimeout handled from here on raises nothing
                alarm.disarm()
                session.end()
        if failure is not None:
            message = (describe_assertion(failure, sources) if status is Status.FAILED
                       else describe(type(failure).__name__, exception_text(failure)))
            failure = None  # its traceback holds the test's frames
        unanswered = proxy.unanswered_ahead if proxy is not None else 0
        out_of_memory = self.zygote.out_of_memory(session, limits)
        # Calls sent ahead that the test never made have run too: they must not decide anything. A
        # pass stands only if they did not go over a limit the test's own calls might have (the job
        # again, call by call, tells); a verdict other than a pass stands as the test decided it.
        if (proxy is not None and proxy.diverged) or (
                unanswered and status is Status.PASSED and (session.output_exceeded or out_of_memory)):
            random.setstate(state)
            return proxy.taken
        if session.fatal is not None and status is not Status.FAILED:
            status, message = session.fatal.status, session.fatal.message
        if session.output_exceeded and not unanswered:
            status = Status.OUTPUT_LIMIT
            message = session.output_limit_message
        if out_of_memory and status is not Status.PASSED and not unanswered:
            status, message = Status.MEMORY, out_of_memory
        return make_result(session, status, message, started)

    # -- stdin/stdout programs -------------------------------------------------------------------
    def _run_program(self, job: dict, limits: Limits, started: float) -> dict:
        deadline = started + limits.timeout_s
        stdin = job.get("stdin", "").encode("utf-8", "surrogateescape")
        session = self.zygote.start_child(child_module.PROGRAM, limits, deadline, stdin)
        status, message = None, ""
        try:
            session.send(plain_data.encode(("program", job["program"], "main.py"), max_bytes=1 << 30))
            session.wait_exit()
        except Stop as stop:
            status, message = stop.status, stop.message
        finally:
            session.end()
        info = session.exit_info or {}
        code = info.get("status")
        if status is None:
            if session.output_exceeded:
                status = Status.OUTPUT_LIMIT
                message = session.output_limit_message
            elif session.saw_frame(("memory",)):
                status, message = Status.MEMORY, f"memory limit of {limits.memory_mb} MiB exceeded"
            elif code is None or code < 0:
                status, message = classify_exit(info, limits, "the program")
            elif code != 0:
                status, message = Status.ERROR, f"exit status {code}{_last_line(session.stderr)}"
            elif job.get("expected_stdout") is None:
                status = Status.PASSED
            else:
                status, message = compare_output(bytes(session.stdout), job["expected_stdout"])
        out_of_memory = self.zygote.out_of_memory(session, limits)
        if out_of_memory and status is not Status.PASSED and status is not Status.MEMORY:
            status, message = Status.MEMORY, out_of_memory
        result = make_result(session, status, message, started)
        result["return_code"] = code if not info.get("killed") else None
        return result


_limits_seen: dict[tuple, Limits] = {}


def _limits(data: dict) -> Limits:
    """Limits.from_dict, validated once per distinct set of values (jobs of a run share theirs)."""
    key = tuple(data.items())
    limits = _limits_seen.get(key)
    if limits is None:
        limits = Limits.from_dict(data)
        if len(_limits_seen) < 256:
            _limits_seen[key] = limits
    return limits


@functools.lru_cache(maxsize=512)
def _names_a_clock(code) -> bool:
    return speculation.clock_names(code)


@functools.lru_cache(maxsize=512)
def _compiled(source: str, filename: str):
    """Trusted code compiled once: the G samples of an RL group, or n samples of an eval, share tests."""
    return compile(source, filename, "exec", dont_inherit=True)  # not this module's __future__ imports


def make_result(session: ChildSession, status: Status, message: str, started: float) -> dict:
    info = session.exit_info or {}
    return {
        "status": status.value, "message": "" if status is Status.PASSED else message,
        "duration_s": time.monotonic() - started,
        "stdout": bytes(session.stdout).decode("utf-8", "replace"),
        "stderr": bytes(session.stderr).decode("utf-8", "replace"),
        "return_code": None if info.get("killed") else info.get("status"),
        "cpu_s": info.get("cpu_s"),
        "peak_memory_mb": (info["rss_kb"] / 1024) if info.get("rss_kb") else None,
    }


def compare_output(actual: bytes, expected: str) -> tuple[Status, str]:
    """Token comparison of a whole output, tokens separated by ASCII whitespace as contest judges read
    them: str.split's Unicode separators (U+00A0, \x1c-\x1f, U+2028, ...) are part of a token, so
    `3\x1c` is not `3`; bytes that are not UTF-8 match nothing but themselves."""
    got = actual.split()
    want = _expected_bytes(expected).split()
    if got == want:
        return Status.PASSED, ""
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        if g != w:
            shown, wanted = (token[:80].decode("utf-8", "replace") for token in (g, w))
            return Status.FAILED, f"wrong answer: token {i + 1} is {shown!r}, expected {wanted!r}"
    return Status.FAILED, f"wrong answer: {len(got)} tokens, expected {len(want)}"


def _expected_bytes(expected: str) -> bytes:
    """The expected output's bytes, read as stdin is fed: U+DC80-U+DCFF are the raw bytes that
    surrogateescape decoding made of them (a problem file's "\\udcff" stands for byte 0xFF, which a
    program echoing its input writes: round 58b; surrogatepass made it ED B3 BF, matched by nothing
    honest). Any other lone surrogate is no text and no byte: kept as surrogatepass writes it."""
    try:
        return expected.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return expected.encode("utf-8", "surrogatepass")


def _last_line(data: bytearray) -> str:
    lines = bytes(data).decode("utf-8", "replace").strip().splitlines()
    return f": {lines[-1][:300]}" if lines else ""


def describe_assertion(exc: AssertionError, sources: dict[str, str]) -> str:
    """The failing assert statement's source (from the trusted test), plus its message if any."""
    statement = ""
    tb = exc.__traceback__
    frame_line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename in sources:
            frame_line = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    if frame_line is not None:
        filename, line = frame_line
        statement = _statement_at(sources[filename], line)
    detail = exception_text(exc)
    if statement and detail:
        text = f"{statement}  # {detail}"
    elif statement:
        text = statement
    else:
        text = describe("AssertionError", detail)
    return text[:2000]


def _statement_at(source: str, line: int) -> str:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        tree = None
    if tree is not None:
        best = None
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert) and node.lineno <= line <= (node.end_lineno or node.lineno):
                best = node
        if best is not None:
            segment = ast.get_source_segment(source, best)
            if segment:
                return " ".join(segment.split())
    lines = source.splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


class _Alarm:
    """Advisory in-process alarm for trusted code that loops; the pool's watchdog is the real limit."""

    def __init__(self):
        self.armed = False
        self.repeat = False
        signal.signal(signal.SIGALRM, self._fire)

    def _fire(self, signum, frame) -> None:
        if self.armed:
            self.armed = self.repeat
            raise self.exception()

    def arm(self, deadline: float, exception: type[BaseException] | None = None) -> None:
        """Raise `exception` in whatever runs at `deadline`; by default TrustedTimeout, once, a little
        after the deadline (the session's own deadline check reports the common case). Any other
        exception is raised again every 5 ms until disarmed: trusted code that swallows BaseException in
        a loop still gets it at a point outside its try block (the loop's back jump)."""
        self.exception = exception or TrustedTimeout
        self.repeat = exception is not None
        slack = 0.0 if self.repeat else 0.25
        self.armed = True
        signal.setitimer(signal.ITIMER_REAL, max(0.001, deadline - time.monotonic() + slack),
                         0.005 if self.repeat else 0.0)

    def disarm(self) -> None:
        self.armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)


class _Lifeline:
    """The judge's tie to the pool's process. A pool that dies (SIGKILL, OOM) closes its end of the
    socket, but the judge reads that socket only between jobs: a job under way would run to its time
    limit (a server's run_timeout, minutes) with nobody left to read the verdict. A thread that sleeps
    in poll() on the socket's hang-up ends such a job at once (Judge.abandon), and the serve loop starts
    no job queued behind it. A parent-death signal cannot do this: it follows the thread that started
    the judge, and pools start judges from short-lived threads.

    `busy` (set by the serve loop before it looks at `gone`) and `gone` (set by the thread before it
    looks at `busy`) are written in opposite orders, so a hang-up that comes as a job starts is seen by
    one side or the other."""

    def __init__(self, sock: socket.socket, judge: Judge):
        self.judge = judge
        self.busy = False
        self.gone = False
        threading.Thread(target=self._watch, args=(sock.fileno(),), name="cf-lifeline", daemon=True).start()

    def _watch(self, fd: int) -> None:
        # Signals stay with the main thread: its alarm (and EINTR of its system calls) must reach it.
        signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
        poller = select.poll()
        poller.register(fd, select.POLLRDHUP)  # POLLHUP, POLLERR and POLLNVAL are always reported
        while not poller.poll():
            pass
        self.gone = True
        if self.busy:
            self.judge.abandon()


def serve(sock: socket.socket, config: dict, spawned: tuple[subprocess.Popen, socket.socket]) -> None:
    """The judge's life after boot.judge_main: start the zygote, say hello, judge jobs until EOF."""
    from coding_framework.sandbox.isolation import set_process_name

    set_process_name("cf-judge")
    test_seed = config.pop("test_seed", None)  # the judge's alone: the zygote gets the rest of `config`
    judge = Judge(config, test_seed)
    try:
        hello = {"op": "hello", "report": judge.start(spawned)}
    except Exception as exc:
        hello = {"op": "hello", "error": str(exc)}
    try:
        wire.send_frame(sock, json.dumps(hello).encode())
        if "error" in hello:
            return  # the pool raises the error; no job will come
        lifeline = _Lifeline(sock, judge)
        while True:
            job = marshal.loads(wire.recv_frame(sock, MAX_JOB_BYTES))
            lifeline.busy = True
            if lifeline.gone:
                break  # a job queued before the pool died: nobody waits for its verdict
            verdict = judge.run(job)
            lifeline.busy = False
            wire.send_frame(sock, marshal.dumps(verdict))
    except (wire.ChannelClosed, ConnectionError):
        pass  # the pool closed our socket or died (its process was killed): nothing is waiting for us
    finally:
        judge.zygote.close()


if __name__ == "__main__":
    from coding_framework.sandbox.boot import judge_main

    judge_main()

"""The judge's side of one sample: a running child, its channel, its output pipes, its deadline.

One poll loop drains stdout/stderr (capped), moves channel frames and watches the zygote
for the child's exit, so a child can never block the judge and the judge never believes the child:
the only things taken from it are plain-data frames and output text.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import signal
import socket
import struct
import time

from coding_framework.sandbox import plain_data, wire
from coding_framework.sandbox.limits import Limits
from coding_framework.sandbox.verdict import Status

_LEN = struct.Struct(">I")
_READ = select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR
_REPLY_OVERHEAD = 1 << 12
STDERR_LIMIT_BYTES = 16 << 20
"""How much stderr a job may write before it stops with output_limit (when over max_output_bytes)."""
# How long the zygote has to confirm that a sample's processes are dead after the kill; past it the
# session is `stuck` (see end()).
END_GRACE_S = 5.0
# How long the judge's restart of a zygote waits for it to exit, which it does once every process of its
# sample is dead (a sample can make its own die slowly: round 50); past it, the new one starts beside them.
RESTART_WAIT_S = 30.0
# One receive buffer per judge process, reused by every session: a fresh 1 MiB bytes object per read
# would be an mmap/mremap/munmap round of system calls each time.
_RECV_BUFFER = bytearray(1 << 20)
_RECV_VIEW = memoryview(_RECV_BUFFER)
# Kinds of descriptor the poll loop serves.
_OUT, _CHAN, _CTRL = range(3)


class Stop(BaseException):
    """Ends the sample with `status`. A BaseException so test code's `except Exception` cannot swallow it."""

    def __init__(self, status: Status, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class ZygoteLost(RuntimeError):
    """The zygote stopped answering; the judge restarts it."""


class ChildSession:
    """I/O with one sandboxed child. Every wait is bounded by `deadline` (time.monotonic()).

    `reports_exit`: the zygote tells us when the child exits by itself (program and unittest modes);
    function-call children are only reaped at end(). The child's stdin is no concern of the session: a
    file the judge made before the child started (judge.Zygote.start_child).
    """

    def __init__(self, *, ctrl: socket.socket, chan: socket.socket, stdout_r: int, stderr_r: int,
                 limits: Limits, deadline: float, reports_exit: bool = True):
        self.ctrl = ctrl
        self.chan = chan
        self.limits = limits
        self.deadline = deadline
        self.reports_exit = reports_exit
        self.stdout = bytearray()
        self.stderr = bytearray()
        self._out_total = {stdout_r: 0, stderr_r: 0}
        self._out_buf = {stdout_r: self.stdout, stderr_r: self.stderr}
        # Each stream keeps its first max_output_bytes; stderr may run on (debug prints are no answer,
        # and a program's verdict never reads them) to STDERR_LIMIT_BYTES before the job stops.
        cap = limits.max_output_bytes
        self._out_cap = {stdout_r: cap, stderr_r: max(cap, STDERR_LIMIT_BYTES)}
        self._stderr_r = stderr_r
        self._rx = bytearray()
        self._tx = bytearray()
        self._frame_cap = limits.max_value_bytes + _REPLY_OVERHEAD
        # Past this many buffered bytes (a whole frame and more) the channel is not read until the test
        # takes a frame: the child waits on its own writes instead of the judge holding them all.
        self._rx_limit = self._frame_cap + 2 * _REPLY_OVERHEAD
        self._rx_paused = False
        self.chan_closed = False
        # Frames taken so far, and (once the output went over its cap) how many frames the child had
        # sent by then at most: see _output_over_limit.
        self._taken = 0
        self._overflow_frame: int | None = None
        self.exit_info: dict | None = None  # from the zygote: status, cpu_s, rss_kb, killed
        self.fatal: Stop | None = None  # the first Stop raised, even if test code swallowed it
        self.ended = False
        # The zygote, alive, did not see the sample's processes die within end()'s grace: the judge
        # replaces it before its next child (Zygote.replace_if_stuck).
        self.stuck = False
        self._poll = select.poll()
        self._fds: dict[int, int] = {}
        self._chan_fd = chan.fileno()
        for fd in (stdout_r, stderr_r):
            fcntl.fcntl(fd, fcntl.F_SETFL, os.O_NONBLOCK)  # a fresh pipe's read end: no other flags
            self._register(fd, _OUT, _READ)
        chan.setblocking(False)
        self._register(self._chan_fd, _CHAN, _READ)
        self._register(ctrl.fileno(), _CTRL, _READ)

    # -- registration ----------------------------------------------------------------------------
    def _register(self, fd: int, kind: int, events: int) -> None:
        self._fds[fd] = kind
        self._poll.register(fd, events)

    def _unregister(self, fd: int) -> None:
        if fd in self._fds:
            del self._fds[fd]
            self._poll.unregister(fd)

    # -- public ----------------------------------------------------------------------------------
    def send(self, body: bytes) -> None:
        """Send one frame to the child, now if the socket takes it, else while the session pumps."""
        self.send_frames([body])

    def send_frames(self, bodies: list[bytes]) -> None:
        """Send frames to the child in one write when the socket takes them, else while pumping."""
        data = b"".join(part for body in bodies for part in (_LEN.pack(len(body)), body))
        if self.chan_closed:
            return
        if not self._tx:
            try:
                sent = self.chan.send(data)
            except BlockingIOError:
                sent = 0
            except OSError:
                return  # the child is gone; receive() reports it
            data = data[sent:]
            if not data:
                return
        self._tx += data
        self._watch_chan()

    def request(self, body: bytes) -> bytes:
        """Send one frame and return the child's next frame."""
        self.send(body)
        return self.receive()

    def saw_frame(self, value: object) -> bool:
        """Whether the child sent a frame encoding `value` that nobody has taken yet. Compared as bytes:
        nothing the child wrote is decoded here, after the job's alarm (a frame built to be slow to
        decode held the judge for seconds: red-team round 42)."""
        wanted = plain_data.encode(value)
        while True:
            try:
                frame = self._take_frame()
            except Stop:
                return False
            if frame is None:
                return False
            if frame == wanted:
                return True

    def receive(self) -> bytes:
        """The child's next frame; Stop if it dies, over-sizes, or the deadline passes."""
        while True:
            frame = self._take_frame()
            if frame is not None:
                return frame
            if self.chan_closed:
                if self.reports_exit:
                    self._await_exit(grace_s=0.5)
                else:
                    self.end()
                if self.exit_info is not None and self.exit_info.get("killed"):
                    raise self._stop(Status.ERROR, "the candidate closed its channel during the call")
                raise self._stop(*classify_exit(self.exit_info, self.limits,
                                                "the candidate process ended during the call"))
            self._pump_once()

    def wait_exit(self) -> None:
        """Pump I/O until the child process has exited (program mode)."""
        while self.exit_info is None:
            self._pump_once()

    def stop(self, status: Status, message: str) -> Stop:
        return self._stop(status, message)

    def end(self, *, grace_s: float = END_GRACE_S) -> None:
        """Kill everything the sample started (via the zygote), collect its exit and remaining output."""
        if self.ended:
            return
        self.ended = True
        try:
            self.ctrl.send(wire.END)
        except OSError as exc:
            self.close()
            raise ZygoteLost(f"the zygote is gone: {exc}") from exc
        limit = time.monotonic() + grace_s
        done = None
        while done is None:
            ready, _, _ = select.select([self.ctrl], [], [], wire.remaining(limit))
            if not ready:
                # The zygote is there (its channel open) but still waits for the processes it killed:
                # the sample made its own death slow (64 processes, each in a system call that walks
                # 65,000 mappings, took seconds to die: red-team round 50). That is the sample's doing,
                # not the sandbox's: its verdict stands on what it did before the kill (its exit, if it
                # had one, and the output it wrote), never a sandbox_error of its choosing.
                self.stuck = True
                break
            try:
                message = self._read_ctrl()
            except ZygoteLost:
                self.close()
                raise
            if message is None:  # malformed: the wait goes on (to the grace's end, then stuck)
                continue
            if message["op"] == "exited":
                self.exit_info = message
            else:
                done = message
        if done is not None:
            if "error" in done:
                self.close()
                raise ZygoteLost(done["error"])
            if self.exit_info is None or done["killed"] is False:
                self.exit_info = done
        # Every writer is dead now (or, stuck, killed: it runs no more code): whatever is left in the pipes
        # is the complete output.
        for fd, kind in list(self._fds.items()):
            if kind == _OUT:
                self._drain(fd, final=True)
        self.close()

    def close(self) -> None:
        for fd, kind in list(self._fds.items()):
            self._unregister(fd)
            if kind == _OUT:
                _close_quietly(fd)
        for fd in self._out_buf:
            _close_quietly(fd)
        self.chan.close()

    @property
    def output_exceeded(self) -> bool:
        return bool(self.output_limit_message)

    @property
    def output_limit_message(self) -> str:
        """What went over its limit, for the output_limit verdict."""
        for fd, total in self._out_total.items():
            if total > self._out_cap[fd]:
                stream = "stderr" if fd == self._stderr_r else "output"
                return f"{stream} exceeded the {self._out_cap[fd]}-byte limit"
        return ""

    # -- internals -------------------------------------------------------------------------------
    def _stop(self, status: Status, message: str) -> Stop:
        stop = Stop(status, message)
        if self.fatal is None:
            self.fatal = stop
        return stop

    def _take_frame(self) -> bytes | None:
        rx = self._rx
        if len(rx) < 4:
            return None
        (n,) = _LEN.unpack_from(rx)
        if n > self._frame_cap:
            raise self._stop(Status.ERROR,
                             f"the candidate sent a reply of {n} bytes, over the {self._frame_cap}-byte cap")
        if len(rx) < 4 + n:
            return None
        frame = bytes(rx[4:4 + n])
        del rx[:4 + n]
        self._taken += 1
        if self._rx_paused and len(rx) <= self._rx_limit:
            self._rx_paused = False
            self._watch_chan()
        return frame

    def _watch_chan(self) -> None:
        """Poll the channel for what we need from it now: its replies unless the buffer is full, room
        for our frames while any wait to be sent; not at all when neither."""
        if self.chan_closed:
            return
        events = (0 if self._rx_paused else _READ) | (select.POLLOUT if self._tx else 0)
        fd = self._chan_fd
        if fd not in self._fds:
            if events:
                self._register(fd, _CHAN, events)
        elif events:
            self._poll.modify(fd, events)
        else:
            self._unregister(fd)

    def _pump_once(self) -> None:
        if self._overflow_frame is not None and self._taken >= self._overflow_frame:
            raise self._output_limit()
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self._stop(Status.TIMEOUT, f"wall-clock limit of {self.limits.timeout_s:g}s exceeded")
        try:
            events = self._poll.poll(max(1, int(left * 1000)))
        except InterruptedError:
            return
        for fd, event in events:
            kind = self._fds.get(fd)
            if kind == _CHAN:
                self._chan_io(event)
            elif kind == _OUT:
                self._drain(fd)
            elif kind == _CTRL:
                message = self._read_ctrl()
                if message is not None and message["op"] == "exited":
                    self.exit_info = message
        if self.output_exceeded and self._output_over_limit():
            raise self._output_limit()

    def _output_limit(self) -> Stop:
        return self._stop(Status.OUTPUT_LIMIT, self.output_limit_message)

    def _output_over_limit(self) -> bool:
        """Whether the output over the cap belongs to the frame now awaited (else: to a later one).

        A function-call child answers calls sent ahead of the test, so output can come from calls the
        test will never make. Once the output is over the cap, the channel is read: a frame not there
        yet was sent after the output was written, so the output belongs to that frame's call or an
        earlier one. The first frame missing then (`_overflow_frame`) is the first whose wait ends in
        output_limit; frames before it are taken as they come, and a test that stops before it keeps
        its own verdict. The pipes need not be read again: every frame the test may still take without
        a limit is in the buffer already. Other modes stop at once."""
        if self.reports_exit:
            return True
        if self._overflow_frame is None:
            for fd, kind in list(self._fds.items()):
                if kind == _OUT:
                    self._unregister(fd)
            while not self._rx_paused and not self.chan_closed:
                before = len(self._rx)
                self._chan_io(select.POLLIN)
                if len(self._rx) == before:
                    break
            self._overflow_frame = self._taken + _complete_frames(self._rx)
        return self._taken >= self._overflow_frame

    def _read_ctrl(self) -> dict | None:
        """The zygote's next control record (None if malformed). A zygote that died (OOM-killed, or
        killed by the judge's lifeline) leaves its socket readable at end of file for good: that is
        ZygoteLost, not a wait until the job's deadline spent polling it."""
        try:
            data = self.ctrl.recv(wire.CONTROL_BYTES)
        except BlockingIOError:
            return None
        except OSError:
            data = b""
        if not data:
            raise ZygoteLost("the zygote is gone (its control socket closed)")
        return wire.parse_exit(data)

    def _drain(self, fd: int, final: bool = False) -> None:
        buf = self._out_buf[fd]
        keep, cap = self.limits.max_output_bytes, self._out_cap[fd]
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._unregister(fd)
                return
            self._out_total[fd] += len(chunk)
            room = keep - len(buf)
            if room > 0:
                buf += chunk[:room]
            if not final and self._out_total[fd] > cap:
                return

    def _chan_io(self, event: int) -> None:
        if event & select.POLLOUT and self._tx:
            try:
                del self._tx[:self.chan.send(self._tx)]
            except BlockingIOError:
                pass
            except OSError:
                self._tx.clear()
            if not self._tx:
                self._watch_chan()
        if event & (select.POLLIN | select.POLLHUP | select.POLLERR) and not self._rx_paused:
            # One read per wake-up: the poll loop comes back if more is waiting.
            try:
                n = self.chan.recv_into(_RECV_BUFFER)
            except BlockingIOError:
                return
            except OSError:
                n = 0
            if not n:
                self.chan_closed = True
                self._unregister(self._chan_fd)
                return
            rx = self._rx
            rx += _RECV_VIEW[:n]
            if len(rx) >= 4 and _LEN.unpack_from(rx)[0] > self._frame_cap:
                self._take_frame()  # raises Stop: an oversize announced length
            if len(rx) > self._rx_limit:
                self._rx_paused = True
                self._watch_chan()

    def _await_exit(self, grace_s: float) -> None:
        limit = min(self.deadline, time.monotonic() + grace_s)
        while self.exit_info is None and time.monotonic() < limit:
            ready, _, _ = select.select([self.ctrl], [], [], wire.remaining(limit))
            if ready:
                message = self._read_ctrl()
                if message is not None and message["op"] == "exited":
                    self.exit_info = message


def _complete_frames(rx: bytearray) -> int:
    """How many whole frames the buffer holds."""
    count, at = 0, 0
    while len(rx) - at >= 4:
        (n,) = _LEN.unpack_from(rx, at)
        if len(rx) - at - 4 < n:
            break
        count, at = count + 1, at + 4 + n
    return count


def classify_exit(info: dict | None, limits: Limits, what: str) -> tuple[Status, str]:
    """Status for a child that ended on its own, from what the zygote (not the child) observed."""
    if info is None:
        return Status.ERROR, what
    status = info.get("status")
    cpu = info.get("cpu_s") or 0.0
    rss_mb = (info.get("rss_kb") or 0) / 1024
    if status == -signal.SIGXCPU or (status == -signal.SIGKILL and cpu >= limits.effective_cpu_s):
        return Status.TIMEOUT, f"CPU time limit of {limits.effective_cpu_s}s exceeded"
    if status is not None and status < 0 and rss_mb >= 0.9 * limits.memory_mb:
        return Status.MEMORY, f"memory limit of {limits.memory_mb} MiB exceeded"
    if status is not None and status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return Status.ERROR, f"{what}: killed by {name}"
    return Status.ERROR, f"{what}: exit status {status}"


def _close_quietly(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)

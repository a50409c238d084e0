"""Framing for the byte streams between the processes of a worker.

Frames are `<4-byte big-endian length><body>`. Control messages between trusted processes are JSON
bodies, sent over SOCK_SEQPACKET unix sockets that also carry file descriptors. Nothing here unpickles.
"""

from __future__ import annotations

import json
import os
import select
import socket
import struct
import time

_LEN = struct.Struct(">I")
MAX_CONTROL_BYTES = 1 << 16
MAX_FDS = 8

# Per-sample control messages between the judge and the zygote are fixed binary records (start-up
# messages are JSON): the zygote handles one pair per sample, and every object it builds between two
# forks costs it copy-on-write page faults.
# RUN: b"R", mode byte, the child's limits (cpu_s, memory_mb, max_processes, max_open_files,
# max_file_bytes, max_value_bytes, max_value_depth); the child's descriptors ride along.
_RUN = struct.Struct(">cc7q")
# EXITED / DONE: kind, flags (1: status known, 2: killed by us, 4: bad request, 8: killed because the
# host ran low on memory), status, cpu_s, rss_kb.
_EXIT = struct.Struct(">cBidq")
CONTROL_BYTES = 128
END = b"E"
EXITED = b"X"
DONE = b"D"
RUN_FDS = {b"f": 3, b"p": 4, b"u": 3}  # programs get their stdin (a file); the others read /dev/null
LIMIT_FIELDS = ("cpu_s", "memory_mb", "max_processes", "max_open_files", "max_file_bytes",
                "max_value_bytes", "max_value_depth")


class ChannelClosed(EOFError):
    """The other end closed the channel."""


class Deadline(TimeoutError):
    """The wall-clock deadline passed while waiting on a channel."""


class FrameTooLarge(ValueError):
    """A frame announced more bytes than its cap."""


class FdChannel:
    """A blocking stream on a raw descriptor: `read_frame` and `sendall`, plus `recv` for the generic
    frame functions.

    The sandbox child's end of its channel: no socket object to build per sample, and reads are
    buffered, so the frames that arrive together (a program and the calls sent ahead with it) cost one
    system call in all.
    """

    def __init__(self, fd: int):
        self.fd = fd
        self._buffer = b""
        self._pos = 0

    def _fill(self, need: int) -> None:
        """Read until at least `need` unread bytes are buffered (ChannelClosed at EOF)."""
        parts = [self._buffer[self._pos:]]
        have = len(parts[0])
        while have < need:
            chunk = os.read(self.fd, max(need - have, 1 << 16))
            if not chunk:
                raise ChannelClosed("channel closed mid-frame" if have else "channel closed")
            parts.append(chunk)
            have += len(chunk)
        self._buffer, self._pos = b"".join(parts), 0

    def read_frame(self, max_bytes: int) -> bytes:
        """One whole frame's body; FrameTooLarge for an announced length over `max_bytes`."""
        if len(self._buffer) - self._pos < 4:
            self._fill(4)
        (n,) = _LEN.unpack_from(self._buffer, self._pos)
        if n > max_bytes:
            raise FrameTooLarge(f"frame of {n} bytes is over the {max_bytes}-byte cap")
        if len(self._buffer) - self._pos < 4 + n:
            self._fill(4 + n)
        start = self._pos + 4
        self._pos = start + n
        return self._buffer[start:self._pos]

    def recv(self, n: int) -> bytes:
        if self._pos >= len(self._buffer):
            data = os.read(self.fd, max(n, 1 << 16))
            if len(data) <= n:
                return data
            self._buffer, self._pos = data, 0
        data = self._buffer[self._pos:self._pos + n]
        self._pos += len(data)
        return data

    def sendall(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]


def frame(body: bytes) -> bytes:
    """`body` with its length prefix."""
    return _LEN.pack(len(body)) + body


def send_frame(sock: socket.socket, body: bytes) -> None:
    """Send one frame (blocking)."""
    sock.sendall(_LEN.pack(len(body)) + body)


def recv_exact(sock: socket.socket, n: int) -> bytes:
    """Read exactly n bytes (blocking) or raise ChannelClosed."""
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise ChannelClosed("channel closed mid-frame" if chunks else "channel closed")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def recv_frame(sock: socket.socket, max_bytes: int) -> bytes:
    """Read one frame (blocking); refuses frames over `max_bytes` without reading their body."""
    (n,) = _LEN.unpack(recv_exact(sock, 4))
    if n > max_bytes:
        raise FrameTooLarge(f"frame of {n} bytes is over the {max_bytes}-byte cap")
    return recv_exact(sock, n)


def send_control(sock: socket.socket, message: dict, fds: list[int] = ()) -> None:
    """Send one JSON control message, with file descriptors attached if any."""
    body = json.dumps(message).encode()
    if len(body) > MAX_CONTROL_BYTES:
        raise FrameTooLarge(f"control message of {len(body)} bytes")
    if fds:
        socket.send_fds(sock, [body], list(fds))
    else:
        sock.send(body)


def recv_control(sock: socket.socket, timeout: float | None = None) -> tuple[dict, list[int]]:
    """Receive one JSON control message and the descriptors that came with it."""
    if timeout is not None:
        ready, _, _ = select.select([sock], [], [], max(0.0, timeout))
        if not ready:
            raise Deadline(f"no control message within {timeout:.1f}s")
    body, fds, _flags, _addr = socket.recv_fds(sock, MAX_CONTROL_BYTES, MAX_FDS)
    if not body:
        for fd in fds:
            os.close(fd)
        raise ChannelClosed("control channel closed")
    return json.loads(body), fds


def pack_run(mode: bytes, limits: tuple[int, ...]) -> bytes:
    return _RUN.pack(b"R", mode, *limits)


def parse_run(data: bytes, n_fds: int) -> tuple[bytes, tuple[int, ...]] | None:
    """(mode, limits) of a RUN record that came with the right number of descriptors, else None."""
    if len(data) != _RUN.size:
        return None
    op, mode, *limits = _RUN.unpack(data)
    if op != b"R" or RUN_FDS.get(mode) != n_fds:
        return None
    return mode, tuple(limits)


def pack_exit(kind: bytes, status: int | None, cpu_s: float | None, rss_kb: int | None, killed: bool,
              error: bool = False, host_memory_low: bool = False) -> bytes:
    flags = (status is not None) | (killed << 1) | (error << 2) | (host_memory_low << 3)
    return _EXIT.pack(kind, flags, status or 0, cpu_s or 0.0, rss_kb or 0)


def parse_exit(data: bytes) -> dict | None:
    """{"op": "exited" | "done", status, cpu_s, rss_kb, killed, host_memory_low[, error]} or None if
    malformed."""
    if len(data) != _EXIT.size:
        return None
    kind, flags, status, cpu_s, rss_kb = _EXIT.unpack(data)
    if kind not in (EXITED, DONE):
        return None
    known = bool(flags & 1)
    info = {"op": "exited" if kind == EXITED else "done", "status": status if known else None,
            "cpu_s": cpu_s if known else None, "rss_kb": rss_kb if known else None, "killed": bool(flags & 2),
            "host_memory_low": bool(flags & 8)}
    if flags & 4:
        info["error"] = "the zygote refused a malformed request"
    return info


_FD_ARRAYS = [struct.Struct(f"{n}i") for n in range(MAX_FDS + 1)]


def fds_message(fds: list[int]) -> tuple[int, int, bytes]:
    """Ancillary data for sendmsg that passes `fds`."""
    return socket.SOL_SOCKET, socket.SCM_RIGHTS, _FD_ARRAYS[len(fds)].pack(*fds)


def fds_of(ancdata: list) -> list[int]:
    """The descriptors carried by recvmsg's ancillary data."""
    fds: list[int] = []
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            n = min(len(data) // 4, MAX_FDS)
            fds.extend(_FD_ARRAYS[n].unpack_from(data))
    return fds


def remaining(deadline: float) -> float:
    """Seconds left until a time.monotonic() deadline (never negative)."""
    return max(0.0, deadline - time.monotonic())

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


class ChannelClosed(EOFError):
    """The other end closed the channel."""


class Deadline(TimeoutError):
    """The wall-clock deadline passed while waiting on a channel."""


class FrameTooLarge(ValueError):
    """A frame announced more bytes than its cap."""


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


def remaining(deadline: float) -> float:
    """Seconds left until a time.monotonic() deadline (never negative)."""
    return max(0.0, deadline - time.monotonic())

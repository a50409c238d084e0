"""Framing between the worker's processes: the child's buffered channel and the binary control records."""

from __future__ import annotations

import os
import socket
import threading

import pytest

from coding_framework.sandbox import wire


def test_buffered_channel_reads_frames_however_the_bytes_arrive():
    ours, theirs = socket.socketpair()
    big = os.urandom(3 << 20)  # far more than one read and than the socket buffer
    stream = b"".join(wire.frame(body) for body in (b"a", big, b"", b"bc"))

    def trickle():
        for start in range(0, len(stream), 7919):  # odd-sized pieces: lengths split across writes
            theirs.sendall(stream[start:start + 7919])
        theirs.close()

    writer = threading.Thread(target=trickle)
    writer.start()
    channel = wire.FdChannel(ours.fileno())
    got = [channel.read_frame(4 << 20) for _ in range(4)]
    with pytest.raises(wire.ChannelClosed):
        channel.read_frame(10)
    writer.join()
    ours.close()
    assert got == [b"a", big, b"", b"bc"]


def test_buffered_channel_refuses_an_oversize_length_without_reading_it():
    ours, theirs = socket.socketpair()
    theirs.sendall(wire.frame(b"x" * 100))
    with pytest.raises(wire.FrameTooLarge):
        wire.FdChannel(ours.fileno()).read_frame(99)
    ours.close()
    theirs.close()


def test_control_records_round_trip_and_reject_what_does_not_fit():
    limits = (3, 1024, 32, 256, 1 << 24, 1 << 24, 100)
    record = wire.pack_run(b"f", limits)
    assert wire.parse_run(record, 3) == (b"f", limits)
    assert wire.parse_run(record, 4) is None  # a function-call child takes exactly three descriptors
    assert wire.parse_run(wire.pack_run(b"p", limits), 4) == (b"p", limits)
    assert wire.parse_run(record[:-1], 3) is None and wire.parse_run(b"X" + record[1:], 3) is None
    done = wire.parse_exit(wire.pack_exit(wire.DONE, -9, 0.25, 2048, True))
    assert done == {"op": "done", "status": -9, "cpu_s": 0.25, "rss_kb": 2048, "killed": True,
                    "host_memory_low": False}
    low = wire.parse_exit(wire.pack_exit(wire.DONE, -9, 0.25, 2048, True, host_memory_low=True))
    assert low["host_memory_low"] is True and low["killed"] is True and low["status"] == -9
    unknown = wire.parse_exit(wire.pack_exit(wire.EXITED, None, None, None, False, error=True))
    assert unknown["op"] == "exited" and unknown["status"] is None and "error" in unknown
    assert wire.parse_exit(b"Z" * len(wire.pack_exit(wire.DONE, 0, 0.0, 0, False))) is None

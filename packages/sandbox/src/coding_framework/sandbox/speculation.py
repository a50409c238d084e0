"""Speculative batching of function calls: the judge learns a test's calls before the child runs.

A function-call test usually makes its calls one after another with arguments that do not depend on
earlier answers (`assert candidate(x) == y`, many times). Waiting for each answer costs a round trip
between two processes (two wake-ups, ~0.1 ms here); most of a sample's wall time went there.

So the judge first runs the trusted test against a `Recorder`, which answers every call with
`PENDING` (equal to anything), and keeps each call's encoded arguments until the test stops, fails
or the budget ends. The real run then sends all those calls right behind the program; the child
answers them in order without waiting. The real test consumes the answers through `CandidateProxy`,
which checks that each call it makes is byte for byte the recorded one. Consequences:

- Every answer the test uses was computed by the child after exactly the calls the test made before
  it, in the same order, so it is what a call-by-call run would have produced.
- If the test makes a different call (`Diverged`), the attempt is dropped and the judge runs the job
  again in a fresh child, call by call, where the test gets the first attempt's answers to the calls
  it took there (proxy.CandidateProxy): no call is judged twice.
- The child answers every recorded call, also those the real test never makes (it failed early, or
  stopped sooner): the judge waits for those answers before it stops the child, so that the child's
  life does not tell it whether it passed (proxy.take_unanswered). They cannot turn a verdict into a
  pass or a failure into another status: output over the limit stops a test only at an answer it was
  surely written before (session.py), and a verdict other than a pass stands as the test decided it. A
  pass that took every answer fails on output over the limit; one with answers left over and output
  over the limit or an OOM kill is judged again call by call. Their output may appear in the verdict's
  stdout/stderr.
- A call answered ahead takes no time as the test sees it. Tests that time the candidate (evalplus's
  per-input limits) must not get such answers: trusted code that names a clock, a timer or an alarm
  (`clock_names`), or that reads one of the `time` module's clocks while recording
  (`WatchClocks`), is run call by call.
"""

from __future__ import annotations

import time
import types

from coding_framework.sandbox import plain_data

MAX_CALLS = 512
MAX_BYTES = 1 << 20


class EndRecording(BaseException):
    """Stops the recording run (a BaseException: test code's `except Exception` does not catch it)."""


class Diverged(BaseException):
    """The real test made a call other than the recorded one at the same position."""


class _Pending:
    """What the recorder answers: equal to anything, so `assert candidate(x) == y` goes on to the next
    call. Anything else done with it (arithmetic, iteration, sending it back) ends the recording."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "<pending answer>"


PENDING = _Pending()


class Recorder:
    """Stands in for the candidate during the recording run; `calls` are the encoded requests."""

    def __init__(self, name: str, max_depth: int):
        self.__name__ = self.__qualname__ = name
        self.calls: list[bytes] = []
        self._bytes = 0
        self._max_depth = max_depth

    def __repr__(self) -> str:
        return f"<sandboxed function {self.__name__}>"

    def __call__(self, *args, **kwargs):
        if len(self.calls) >= MAX_CALLS:
            raise EndRecording
        try:
            body = plain_data.encode_request((args, kwargs), max_bytes=MAX_BYTES, max_depth=self._max_depth)
        except (plain_data.EncodeError, RecursionError):
            raise EndRecording from None
        self._bytes += len(body)
        if self._bytes > MAX_BYTES:
            raise EndRecording
        self.calls.append(body)
        return PENDING


# Names through which trusted code can measure or bound the time a call takes.
CLOCK_NAMES = frozenset({
    "time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "process_time",
    "process_time_ns", "thread_time", "thread_time_ns", "clock_gettime", "clock_gettime_ns", "timeit",
    "default_timer", "datetime", "now", "utcnow", "getrusage", "times", "alarm", "setitimer", "signal",
})
_CLOCKS = ("time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns",
           "process_time", "process_time_ns", "thread_time", "thread_time_ns", "clock_gettime",
           "clock_gettime_ns")


def clock_names(code: types.CodeType) -> bool:
    """Whether `code` or any function or class body in it names a clock, a timer or an alarm."""
    if CLOCK_NAMES.intersection(code.co_names):
        return True
    return any(clock_names(const) for const in code.co_consts if isinstance(const, types.CodeType))


class WatchClocks:
    """`.read` tells whether anything called one of the time module's clocks between watch() and
    restore() (helpers that time calls through `time.<clock>()` from another module than the test)."""

    def __init__(self):
        self.read = False
        self._saved: dict = {}

    def watch(self) -> None:
        for name in _CLOCKS:
            clock = getattr(time, name, None)
            if clock is not None:
                self._saved[name] = clock
                setattr(time, name, self._wrap(clock))

    def _wrap(self, clock):
        def read(*args):
            self.read = True
            return clock(*args)

        return read

    def restore(self) -> None:
        for name, clock in self._saved.items():
            setattr(time, name, clock)
        self._saved.clear()

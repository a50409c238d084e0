"""The trusted stand-in for the candidate's function: each call is a plain-data exchange with the child
(a round trip, or an answer to a call sent ahead: see speculation.py)."""

from __future__ import annotations

import builtins
import functools
import hashlib
import time

from coding_framework.sandbox import plain_data
from coding_framework.sandbox.session import ChildSession, Stop
from coding_framework.sandbox.speculation import Diverged
from coding_framework.sandbox.verdict import Status

# Exceptions the candidate raises that tests may legitimately expect (pytest.raises, try/except).
# StopIteration would silently end a generator in the test; it is reported as CandidateError instead.
_NOT_RERAISED = {"StopIteration", "StopAsyncIteration", "MemoryError"}


class CandidateError(Exception):
    """The candidate raised an exception of its own type that derives from no built-in exception but
    Exception itself (or one that cannot be rebuilt); message "Type: message"."""


class SandboxUsageError(BaseException):
    """The trusted test tried to send something that is not plain data. A BaseException, so that a test's
    own `except Exception` cannot take it for the candidate's failure and go on to pass (round 44)."""


# An answer the test took: (request, reply frame, None), or (request, None, digest of the frame) past
# KEPT_ANSWER_BYTES of frames kept by one run.
Answer = tuple[bytes, bytes | None, bytes | None]
KEPT_ANSWER_BYTES = 64 << 20
MAX_MESSAGE_CHARS = 4000
"""Longest message of a candidate's exception the judge keeps (a well-behaved child sends at most this)."""


def _digest(frame: bytes) -> bytes:
    return hashlib.blake2b(frame, digest_size=16).digest()


class CandidateProxy:
    """Callable bound to `candidate` and the entry point's name in the trusted test namespace.

    A run whose calls were sent ahead keeps the answers the test took (`taken`). When that run is
    dropped (the test made a call other than the recorded one) the job runs again call by call with
    those answers as `replay`: the child makes the same calls again, in the same order, but the test
    gets the first run's answers to them. Each call is judged on one answer, as in a single run; a
    candidate whose answers change from run to run (random, or telling the runs apart) gets no
    second try at a call the first run already judged.
    """

    def __init__(self, session: ChildSession, name: str, sent_ahead: list[bytes] = (),
                 replay: list[Answer] = ()):
        self._session = session
        self.__name__ = self.__qualname__ = name
        self.calls = 0
        self.diverged = False
        # Requests already sent to the child, which answers them in order: call i must be exactly
        # sent_ahead[i] for its answer to be the one a call-by-call run would get.
        self._sent_ahead = sent_ahead
        self._replay = replay
        self.taken: list[Answer] = []
        self._kept_bytes = 0

    def __repr__(self) -> str:
        return f"<sandboxed function {self.__name__}>"

    @property
    def unanswered_ahead(self) -> int:
        """Requests sent ahead that the test never made (the child may have run them anyway)."""
        return max(0, len(self._sent_ahead) - self.calls)

    def take_unanswered(self) -> int:
        """Receive the answers to the calls sent ahead that the test did not make, each handled as a
        call would handle it, and judge none of them; returns how many calls that was.

        Called once the test has ended, whatever its verdict. A child killed at the first failing
        assertion learns, by surviving or not, whether its earlier answers were right, and samples of
        one worker can pass that on to later samples of the same task through state the kernel shares
        between them (README, "Between samples of one worker"). With every call sent ahead, the child
        now gets the same calls and is stopped at the same point, pass or fail: after its last answer,
        or at the first answer that would have ended the test on its own (malformed, a MemoryError,
        over the output limit, the child's death, the time limit): a test that ended that way has no
        waiting left to do, and a Stop met here does not become the verdict, which is decided."""
        session = self._session
        left = self.unanswered_ahead
        if not left or self.diverged or session.fatal is not None or session.chan_closed:
            return left
        depth = reply_depth(session.limits)
        try:
            for _ in range(left):
                if time.monotonic() >= session.deadline:
                    break  # answers already buffered are not decoded past the deadline either
                frame = session.receive()
                try:
                    reply = decode_reply(frame, depth)
                except (plain_data.DecodeError, RecursionError):
                    break
                try:
                    _unpack(session, reply)
                except Stop:
                    break
                except Exception:
                    continue  # the candidate's exception: an answer like any other
        except Stop:
            pass
        finally:
            session.fatal = None  # as the test left it (a test that ended on a Stop is not drained)
        return left

    def __call__(self, *args, **kwargs):
        session = self._session
        if session.fatal is not None:
            raise session.fatal
        if self.diverged:
            raise Diverged()
        limits = session.limits
        try:
            body = plain_data.encode_request((args, kwargs), max_bytes=256 << 20,
                                             max_depth=limits.max_value_depth + 2)
        except (plain_data.EncodeError, RecursionError) as exc:
            if getattr(exc, "raised_by_candidate", False):
                raise  # an iterator of the candidate's, handed back, raised: as it would in the candidate
            raise SandboxUsageError(f"the test passed an argument the sandbox cannot send: {exc}") from None
        index = self.calls
        self.calls += 1
        if index < len(self._sent_ahead):
            if body != self._sent_ahead[index]:
                self.diverged = True
                raise Diverged()
            frame = session.receive()
            self._keep(body, frame)
        else:
            frame = session.request(body)
            if index < len(self._replay):
                frame = self._replayed(index, body, frame)
            elif self._sent_ahead:
                self._keep(body, frame)
        try:
            reply = decode_reply(frame, reply_depth(limits))
        except (plain_data.DecodeError, RecursionError) as exc:
            raise session.stop(Status.ERROR, f"the candidate sent a malformed reply: {exc}") from None
        return _unpack(session, reply)


    def _keep(self, body: bytes, frame: bytes) -> None:
        if self._kept_bytes + len(frame) <= KEPT_ANSWER_BYTES:
            self._kept_bytes += len(frame)
            self.taken.append((body, frame, None))
        else:
            self.taken.append((body, None, _digest(frame)))

    def _replayed(self, index: int, body: bytes, frame: bytes) -> bytes:
        """The first run's answer to call `index`, which the child has just answered again."""
        request, kept, digest = self._replay[index]
        if body != request:
            self._replay = ()  # the test took another path than the first run's: live answers from here
            return frame
        if kept is not None:
            return kept
        if _digest(frame) == digest:
            return frame
        raise self._session.stop(
            Status.ERROR, f"the candidate answered call {index + 1} differently when the job was run again "
            "(a large answer, compared rather than kept): its answers must not depend on the run")


_IMMUTABLE_SCALARS = frozenset((type(None), bool, int, float, complex, str, bytes))
_reply_cache: dict[tuple[bytes, int], object] = {}
_REPLY_CACHE_ENTRIES = 4096
_CACHED_FRAME_BYTES = 256


def _immutable(value: object) -> bool:
    t = type(value)
    if t in _IMMUTABLE_SCALARS:
        return True
    if t is tuple or t is frozenset:
        return all(_immutable(item) for item in value)
    return False


def reply_depth(limits) -> int:
    """The nesting a reply may have: what the child's encoder lets through (an answer nesting at most
    max_value_depth - 1 levels, inside the reply's tuple), so that every answer the test gets can be
    handed back to the candidate, whose requests allow max_value_depth + 2 levels around it. A forged
    reply nesting deeper was a value the test could not send back: a `sandbox_error` (round 44)."""
    return limits.max_value_depth


def decode_reply(frame: bytes, max_depth: int) -> object:
    """plain_data.decode, remembering small immutable replies (True, 3, ("ok", "abc"), ...): the same
    few answers come back for most calls, and decoding is the judge's biggest cost per call. Values
    that could be mutated (lists, dicts, sets) are always built fresh."""
    key = (frame, max_depth)
    value = _reply_cache.get(key, _reply_cache)
    if value is not _reply_cache:
        return value
    value = plain_data.decode(frame, max_depth=max_depth, answers=True, raised=_raising_iterator)
    if len(frame) <= _CACHED_FRAME_BYTES and _immutable(value):
        if len(_reply_cache) >= _REPLY_CACHE_ENTRIES:
            _reply_cache.clear()
        _reply_cache[key] = value
    return value


def _rebuilt(cls: type, args: tuple, message: str) -> BaseException | None:
    """`cls(*args)` as the candidate raised it, else `cls(message)`; None when neither can be built."""
    for attempt in (args, (message,)):
        try:
            return cls(*attempt)
        except Exception:
            continue
    return None


def exception_text(exc: BaseException) -> str:
    """str(exc), which can itself raise for what a candidate put in the arguments (an int of 5000
    digits, an object whose __str__ fails): then the type's name with what could not be shown. For an
    exception the candidate raised, the message its child sent (str(exc) there, at most
    MAX_MESSAGE_CHARS): building it here from the arguments could take seconds."""
    message = getattr(exc, "candidate_message", None)
    if type(message) is str:
        return message
    try:
        return str(exc)
    except Exception as inner:
        return f"<{type(exc).__name__} message not printable: {type(inner).__name__}>"


def describe(name: str, message: str) -> str:
    """"Type: message", or just "Type" when there is no message."""
    return f"{name}: {message}" if message else name


def _unpack(session: ChildSession, reply: object):
    if type(reply) is not tuple or not reply or type(reply[0]) is not str:
        raise session.stop(Status.ERROR, "the candidate sent a malformed reply")
    op = reply[0]
    if op == "ok" and len(reply) == 2:
        return reply[1]
    if op == "raise" and _well_formed_raise(reply):
        name, message, kind = reply[1][:200], reply[2][:MAX_MESSAGE_CHARS], reply[3]
        if name == "MemoryError":
            raise session.stop(Status.MEMORY, describe("MemoryError", message))
        if kind == "fatal":
            raise session.stop(Status.ERROR, describe(name, message))
        raise candidate_exception(reply)
    if op == "bad_value" and len(reply) == 2:
        raise session.stop(Status.ERROR, f"the candidate's return value cannot be checked: {reply[1]}")
    raise session.stop(Status.ERROR, f"the candidate sent a malformed reply ({op!r})")


def _well_formed_raise(record: object) -> bool:
    """("raise", type name, message, kind, args, built-in bases) as child._exception_reply sends."""
    return (type(record) is tuple and len(record) == 6 and record[0] == "raise"
            and all(type(x) is str for x in record[1:4]) and type(record[4]) is tuple
            and type(record[5]) is str)


def candidate_exception(record: tuple) -> Exception:
    """The exception to raise in the test for a well-formed record of one the candidate raised: a
    built-in one rebuilt from its arguments; one of another type that derives from built-in exceptions
    (statistics.StatisticsError, json.JSONDecodeError, the program's own `class BadInput(ValueError)`)
    as a subclass of those built-ins, of the trusted side's making, named as the candidate's (so the
    test's `except ValueError` catches it, as in the official harnesses); else a CandidateError.
    Nothing of the candidate's runs: only its names and plain-data arguments cross."""
    _, name, message, kind, args, base = record
    name, message = name[:200], message[:MAX_MESSAGE_CHARS]
    exc = None
    if kind == "builtin" and name not in _NOT_RERAISED:
        cls = _builtin_exception(name)
        exc = _rebuilt(cls, args, message) if cls is not None else None
    elif kind == "other":
        bases = tuple(_builtin_exception(part) for part in base.split(",", 4)[:4]
                      if part not in _NOT_RERAISED and part != "Exception")
        if bases and None not in bases:
            exc = _rebuilt(_named_subclass(name, bases), args, message)
    if exc is None:
        return CandidateError(describe(name, message))
    exc.raised_by_candidate = True  # e.g. a SyntaxError naming "<test>" is not the test's
    exc.candidate_message = message  # what the verdict shows: str(exc) of huge args is slow
    return exc


def _builtin_exception(name: str) -> type | None:
    cls = getattr(builtins, name, None)
    return cls if isinstance(cls, type) and issubclass(cls, Exception) else None


@functools.lru_cache(maxsize=256)
def _named_subclass(name: str, bases: tuple[type, ...]) -> type:
    """A trusted subclass of the built-in exceptions `bases` called `name` (the first base alone for a
    name no class may have, or bases no class may combine: OSError's layout and ValueError's)."""
    try:
        return type(name, bases, {"__module__": "candidate", "__str__": _message_sent})
    except Exception:
        return bases[0]


def _message_sent(exc: BaseException) -> str:
    """str() of a rebuilt exception of the candidate's own type: what str() gave in the candidate's process
    (its class may define __str__, or keep its message out of args: round 44), as its child sent it."""
    message = getattr(exc, "candidate_message", None)
    return message if type(message) is str else BaseException.__str__(exc)


def _raising_iterator(items: list, record: object):
    """What an iterator the candidate returned arrives as when it raised while the child drained it: a
    generator yielding the same items, then raising that exception, when the test gets that far."""
    if not _well_formed_raise(record) or record[3] not in ("builtin", "other") or record[1] == "MemoryError":
        # (the child sends neither: it lets an iterator's MemoryError or BaseException end the call)
        raise plain_data.DecodeError("malformed exception record of an iterator")

    def replay():
        yield from items
        raise candidate_exception(record)  # built only if the test gets there, under the job's alarm

    return replay()

"""What a forked sandbox child does: confine itself, then run the candidate in one of three modes.

This module runs in the untrusted process. Nothing it sends is believed by the trusted side beyond
"the candidate produced this plain value": verdicts are decided by the judge. It must import
everything it needs at module load, because after the zygote pivots into the sandbox root our own
package is no longer on disk.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib.machinery
import io
import linecache
import os
import socket
import sys
import traceback
import types
import weakref

from coding_framework.sandbox import isolation, plain_data, program_exit, wire
from coding_framework.sandbox.boot import SAFE_ENV

CHAN_FD = 3
FUNCTION, PROGRAM, UNITTEST = b"f", b"p", b"u"  # child modes, as RUN records name them
SETUP_FAILED_EXIT = 125  # the child could not confine itself; the judge reports sandbox_error
MAX_REQUEST_BYTES = 256 << 20
MAX_FD = 1 << 20
# Address space the zygote's preloaded modules hold (set by the zygote once they are loaded): added to
# every child's RLIMIT_AS, so that a sample's memory limit counts what the sample itself maps.
PRELOAD_ALLOWANCE_MB = 0
# Tasks of the zygote's that count against the candidate's RLIMIT_NPROC (set by the zygote): rootless,
# the candidate shares uid 0 of the user namespace with the two zygote processes and the threads its
# preload started, and the kernel counts tasks per user namespace and uid.
SHARED_UID_TASKS = 0


def prepare_zygote(workdir: str) -> None:
    """Done once in the zygote, so every forked child inherits it for free (each step here costs
    a fraction of a millisecond of copy-on-write faults when done per child): the scrubbed
    environment and fresh stdio objects for descriptors 0-2, which each child points at its pipes."""
    os.environ.clear()
    os.environ.update(SAFE_ENV)
    os.environ["HOME"] = os.environ["TMPDIR"] = workdir
    # newline="\n" as the interpreter's own on POSIX: "\r" reaches the program (round 46).
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8",
                                 newline="\n")
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8",
                                  errors="backslashreplace", newline="\n")
    sys.stderr = io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, "w", closefd=False)), encoding="utf-8",
                                  errors="backslashreplace", line_buffering=True, newline="\n")
    # Named and moded as the interpreter's own (its `mode` is read by the common "FastIO" template of
    # contest programs, which died of AttributeError: red-team round 45).
    for stream, name, mode in ((sys.stdin, "<stdin>", "r"), (sys.stdout, "<stdout>", "w"),
                               (sys.stderr, "<stderr>", "w")):
        stream.buffer.raw.name = name
        stream.mode = mode
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
    program_exit.capture()
    sys.argv = ["main.py"]
    global DUMPABLE_AFTER_SETUID
    try:
        with open("/proc/sys/fs/suid_dumpable") as fh:
            DUMPABLE_AFTER_SETUID = fh.read().strip() != "0"
    except OSError:
        DUMPABLE_AFTER_SETUID = True


WARM_UP_PROGRAM = """
import math
from typing import List


def warm_up(numbers: List[int], text: str, *rest) -> list:
    total = sum(x * 2 for x in numbers if x % 2 == 0) + len(text.split())
    pairs = sorted({n: str(n) for n in numbers}.items())
    return [total, pairs, math.floor(1.5), text.upper(), tuple(rest), 2.5, None, True]
"""
WARM_UP_CALLS = (
    (([1, 2, 3, 4], "a b c"), {}),
    (([], "x", 1.5, (1, "y"), {"k": [None, False]}, {1, 2}, frozenset(), b"z", 3j, range(2)), {}),
)


CANDIDATE_MODULE = "__candidate__"


def warm_up() -> None:
    """Serve our own fixed program once, in the zygote, as a function-call child would.

    The interpreter builds some state lazily on first use (the AST types behind compile(), method
    caches, quickened bytecode of this module); built once here, before the zygote freezes, every child
    starts with it instead of rebuilding it on copy-on-write pages. Measured: ~30 fewer page faults
    and ~0.1 ms less CPU per child.
    """
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        wire.send_frame(theirs, plain_data.encode_request((WARM_UP_PROGRAM, "warm_up")))
        for call in WARM_UP_CALLS * 4:
            wire.send_frame(theirs, plain_data.encode_request(call))
        theirs.shutdown(socket.SHUT_WR)
        _serve_function(wire.FdChannel(ours.fileno()), 1 << 20, 20)
        ours.shutdown(socket.SHUT_WR)
        while True:
            try:
                plain_data.decode(wire.recv_frame(theirs, 1 << 20))
            except wire.ChannelClosed:
                break
    finally:
        ours.close()
        theirs.close()
        sys.modules.pop(CANDIDATE_MODULE, None)


def confine(fds: list[int], limits: tuple[int, ...], uid: int | None) -> None:
    """Put this freshly forked process into its cell: own process group, only its descriptors,
    rlimits, no privileges. The zygote already made it non-dumpable, unable to gain privileges, and
    gave it its work dir, environment, stdio objects and the constant rlimits.

    `fds` are the channel, [stdin,] stdout and stderr, all above 3 (the zygote keeps 0-3 occupied), so
    they can be moved onto 0-3 without clobbering each other; function-call children open their own
    /dev/null as stdin: on the zygote's open file, status flags, a signal number (F_SETSIG) and a flock
    set by one sample were there for the next.
    """
    # A process group, not a session: setsid would also build a scheduler autogroup (~40 µs here).
    os.setpgid(0, 0)
    # (The descriptor opened here lands above 3, and closerange below closes it.)
    os.dup2(fds[1] if len(fds) == 4 else os.open("/dev/null", os.O_RDONLY), 0)
    os.dup2(fds[0], CHAN_FD, inheritable=False)
    os.dup2(fds[-2], 1)
    os.dup2(fds[-1], 2)
    os.closerange(CHAN_FD + 1, MAX_FD)
    # Under memory pressure the kernel must pick a candidate, never the zygote: one spreading its
    # memory over many small processes would otherwise turn its verdict into a sandbox_error. Raising
    # one's own score needs no privilege, but the file is root's once the process is unprivileged.
    try:
        _raise_oom_score()
    except PermissionError:
        # Rootless: a non-dumpable process's /proc files belong to the root of the user namespace its
        # program was started in — the host's, for a zygote that unshared after starting — so not to
        # us. Dumpable for these three calls (our code alone runs; the zygote cannot be reached from
        # here either way), they are ours.
        isolation.prctl(isolation.PR_SET_DUMPABLE, 1)
        try:
            _raise_oom_score()
        finally:
            isolation.prctl(isolation.PR_SET_DUMPABLE, 0)
    cpu_s, memory_mb, max_processes, *others = limits[:5]
    isolation.apply_job_rlimits(cpu_s, memory_mb + PRELOAD_ALLOWANCE_MB, max_processes + SHARED_UID_TASKS,
                                *others)
    isolation.drop_privileges(uid)
    if uid is not None and DUMPABLE_AFTER_SETUID:
        # A uid change resets non-dumpability to fs.suid_dumpable; this host sets it to non-zero.
        isolation.prctl(isolation.PR_SET_DUMPABLE, 0)


def _raise_oom_score() -> None:
    oom = os.open("/proc/self/oom_score_adj", os.O_WRONLY)
    try:
        os.write(oom, b"1000")
    finally:
        os.close(oom)


# Whether a uid change makes this process dumpable again (fs.suid_dumpable != 0); read by the zygote.
DUMPABLE_AFTER_SETUID = True


def start(fds: list[int], mode: bytes, limits: tuple[int, ...], uid: int | None) -> None:
    """Entry point in the forked child; never returns. `limits` as in wire.LIMIT_FIELDS."""
    try:
        confine(fds, limits, uid)
    except BaseException as exc:
        try:
            os.write(2, f"sandbox child setup failed: {type(exc).__name__}: {exc}\n".encode())
        finally:
            os._exit(SETUP_FAILED_EXIT)
    code = 1
    try:
        chan = wire.FdChannel(CHAN_FD)
        if mode == FUNCTION:
            code = _serve_function(chan, limits[5], limits[6])
        elif mode == PROGRAM:
            code = _run_program(chan)
        elif mode == UNITTEST:
            from coding_framework.sandbox import suite_runner

            code = suite_runner.run_in_child(chan)
    except BaseException:
        program_exit.quietly(traceback.print_exc)
    finally:
        _flush_stdio()
        try:
            os._exit(code)
        finally:  # a code os._exit refused: this process must still end here, not in the zygote's code
            os._exit(1)


def _flush_stdio() -> None:
    # Plain try blocks: this runs after every call, and a suppress() context manager per stream is two
    # objects more to allocate each time.
    try:  # noqa: SIM105
        sys.stdout.flush()
    except BaseException:  # the candidate may have replaced or broken its streams
        pass
    try:  # noqa: SIM105
        sys.stderr.flush()
    except BaseException:
        pass


def _send(chan: wire.FdChannel, value: object, max_bytes: int, max_depth: int) -> None:
    try:
        body = plain_data.encode(value, max_bytes=max_bytes, max_depth=max_depth)
    except (plain_data.EncodeError, RecursionError, MemoryError) as exc:
        body = plain_data.encode(("bad_value", _text(exc)))
    wire.send_frame(chan, body)


def _text(value: object, cap: int = 4000) -> str:
    try:
        text = str(value)
    except BaseException:
        text = "<unprintable>"
    return text if len(text) <= cap else text[:cap] + "…"


def _exception_reply(exc: BaseException) -> tuple:
    """("raise", type name, message, kind, args, bases) with kind builtin | other | fatal, and bases the
    built-in exception classes the type derives from, comma-separated (what the trusted side raises a
    subclass of: `class E(KeyError, TypeError)` is caught by `except TypeError` there too)."""
    exc_type = type(exc)
    name = exc_type.__name__
    base = "Exception"
    if not isinstance(exc, Exception):
        kind = "fatal"
    elif exc_type.__module__ == "builtins" and getattr(builtins, name, None) is exc_type:
        kind, base = "builtin", name
    else:
        kind = "other"
        bases: list[type] = []  # the built-in classes it derives from, none a base of another (MRO order)
        for klass in exc_type.__mro__:
            if klass.__module__ == "builtins" and getattr(builtins, klass.__name__, None) is klass \
                    and not any(issubclass(found, klass) for found in bases):
                bases.append(klass)
        base = ",".join(klass.__name__ for klass in bases[:4]) or base
    args = _arguments_shown(exc)
    try:
        plain_data.encode(args, max_bytes=1 << 16, max_depth=8)
    except (plain_data.EncodeError, RecursionError):
        args = (_text(exc),)
    return ("raise", name, _text(exc), kind, args, base)


def _arguments_shown(exc: BaseException) -> tuple:
    """The arguments that rebuild `exc` as it reads: those it was made with, except for the exceptions
    whose message comes from attributes a program may set afterwards (OSError's errno, strerror and file
    names; UnicodeError's encoding, object, range and reason): those attributes (round 45)."""
    args = exc.args if type(exc.args) is tuple else ()
    if isinstance(exc, OSError) and len(args) >= 2 and type(exc.errno) is int and type(exc.strerror) is str:
        # OSError(errno, strerror[, filename[, winerror, filename2]]), whose args keep only the first two
        # (BlockingIOError keeps its third, characters_written). Only when made so: a plain OSError given
        # an errno afterwards is no FileNotFoundError, which OSError(2, ...) would make (round 46).
        rest = args[2:]
        if not rest and exc.filename is not None:
            rest = (exc.filename, *((None, exc.filename2) if exc.filename2 is not None else ()))
        return (exc.errno, exc.strerror, *rest)
    try:
        if isinstance(exc, UnicodeTranslateError):
            shown = (exc.object, exc.start, exc.end, exc.reason)
        elif isinstance(exc, (UnicodeEncodeError, UnicodeDecodeError)):
            shown = (exc.encoding, exc.object, exc.start, exc.end, exc.reason)
        else:
            return args
    except AttributeError:  # a UnicodeError made without its five arguments has none of them
        return args
    return shown if all(type(x) in (str, bytes, int) for x in shown) else args


_READY_FRAME = wire.frame(plain_data.encode(("ready",)))
# ("ok", value) is this prefix followed by the value's own encoding.
_OK_PREFIX = plain_data.encode(("ok", None))[:-1]


def _serve_function(chan: wire.FdChannel, max_bytes: int, max_depth: int) -> int:
    program, entry_point = plain_data.decode_request(chan.read_frame(MAX_REQUEST_BYTES))
    # Not "__main__": like the official harnesses, `if __name__ == "__main__":` blocks do not run. A
    # module in sys.modules, so that pickle finds the program's functions by name (a multiprocessing
    # pool's workers, forked from this child, are sent them so).
    module = types.ModuleType(CANDIDATE_MODULE)
    namespace = module.__dict__
    namespace["__builtins__"] = builtins
    sys.modules[CANDIDATE_MODULE] = module
    try:
        exec(compile(program, "<candidate>", "exec", dont_inherit=True), namespace)
        function = namespace[entry_point]
        if not callable(function):
            raise TypeError(f"entry point {entry_point!r} is a {type(function).__name__}, not a function")
    except KeyError:
        reply = ("load_error", "NameError", f"name {entry_point!r} is not defined by the program")
        _send(chan, reply, max_bytes, max_depth)
        return 1
    except BaseException as exc:
        _send(chan, ("load_error", type(exc).__name__, _text(exc)), max_bytes, max_depth)
        return 1
    chan.sendall(_READY_FRAME)
    while True:
        try:
            frame = chan.read_frame(MAX_REQUEST_BYTES)
        except wire.ChannelClosed:
            return 0
        args, kwargs = plain_data.decode_request(frame, max_depth=max_depth + 2)
        try:
            result = function(*args, **kwargs)
        except BaseException as exc:
            _flush_stdio()
            _send(chan, _exception_reply(exc), max_bytes, max_depth)
            continue
        _flush_stdio()
        try:
            body = _OK_PREFIX + plain_data.encode(result, max_bytes=max_bytes, max_depth=max_depth - 1,
                                                        stand_ins=True, raised=_exception_reply)
        except (plain_data.EncodeError, RecursionError, MemoryError) as exc:
            body = plain_data.encode(("bad_value", _text(exc)))
        chan.sendall(wire.frame(body))


def _run_program(chan: wire.FdChannel) -> int:
    """Run a Python program as `python main.py` would: __main__, argv, exit codes, atexit, threads."""
    _op, program, filename = plain_data.decode(wire.recv_frame(chan, MAX_REQUEST_BYTES))
    # As `python main.py` in its work dir (the current one) has it: the file exists, __file__ and the code's
    # file name are absolute, sys.argv[0] is as given, and the file's directory comes first on sys.path.
    # The workers of multiprocessing's `spawn` and `forkserver` import __main__ again from the file
    # (without it, a `spawn` pool's workers died and the program waited into its time-out: red-team
    # rounds 38, 39).
    argv0, filename = filename, os.path.join(os.getcwd(), filename)
    try:
        # Under a coding cookie other than UTF-8 the program is compiled, as `python main.py` compiles
        # its file, from its text in that encoding: a text the encoding cannot hold, or an encoding
        # Python cannot read source in (utf-16), is a SyntaxError as there (round 46).
        encoding = _source_encoding(program)
        program = program.removeprefix("\ufeff")  # a byte-order mark, which reading the file skips
        source: str | bytes = program if encoding in ("utf-8", "utf-8-sig") else program.encode(encoding)
    except (SyntaxError, UnicodeError, LookupError) as exc:  # an unknown cookie, one a byte-order mark
        # contradicts, or a codec that is no text encoding (rot13, bz2: round 47)
        traceback.print_exception(SyntaxError, SyntaxError(str(exc)), None)
        return 1
    written = _write_program(filename, source)
    sys.path.insert(0, os.path.dirname(filename))
    module = types.ModuleType("__main__")
    module.__file__ = filename
    if written:
        module.__loader__ = importlib.machinery.SourceFileLoader("__main__", filename)
    module.__builtins__ = builtins
    module.__annotations__, module.__cached__ = {}, None
    sys.modules["__main__"] = module
    sys.argv = [argv0]
    # The program's recursion as deep as under `python main.py`: not less by the frames below it here.
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    sys.setrecursionlimit(sys.getrecursionlimit() + depth + 1)  # and exec's own level
    # Lines as reading the file gives them (universal newlines only: not str.splitlines, which also
    # splits at U+2028, form feeds and more), for tracebacks, inspect and warnings.
    lines = io.StringIO(program, newline=None).readlines()
    linecache.cache[filename] = (len(program), None, lines, filename)
    code = 0
    try:
        exec(compile(source, filename, "exec", dont_inherit=True), module.__dict__)
    except SystemExit as exc:
        code = program_exit.exit_code(exc)
    except MemoryError as exc:
        _safe_send(chan, ("memory",))
        _report_uncaught(exc)
        code = 1
    except BaseException as exc:
        _report_uncaught(exc)
        code = 1
    code = program_exit.join_threads_and_run_atexit(code)
    main = weakref.ref(module)
    del module
    return code if program_exit.finalize(main) else 120


def _source_encoding(program: str) -> str:
    """The encoding `python main.py` reads its file in: the one a byte-order mark or a PEP 263 coding
    cookie in the first two lines declares, else UTF-8. SyntaxError where Python's would be one."""
    end = program.find("\n", program.find("\n") + 1)  # of the second line; -1: the program has no more
    head = program if end < 0 else program[:end]
    if not program.startswith("\ufeff") and "coding" not in head:
        return "utf-8"
    import tokenize

    return tokenize.detect_encoding(io.BytesIO(program.encode("utf-8", "surrogatepass")).readline)[0]


def _write_program(filename: str, source: str | bytes) -> bool:
    """The program's file, in the encoding it declares (`source` already in it when not UTF-8), so that
    whatever reads it again (the workers of a `spawn` pool, runpy, a subprocess) reads the program that
    runs. A program larger than the sample's file-size limit or work dir runs without it (as every
    program did before round 38), rather than failing before its first line."""
    try:
        with open(filename, "wb") as fh:
            fh.write(source if type(source) is bytes else source.encode("utf-8", "surrogatepass"))
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(filename)
        return False
    return True


def _report_uncaught(exc: BaseException) -> None:
    """What the interpreter does with an exception nothing caught: it hands it to sys.excepthook (the
    program may have set its own), here without this module's frame in the traceback."""
    tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
    exc.__traceback__ = tb  # the default hook prints the exception's own traceback, not the one it is given
    try:
        sys.excepthook(type(exc), exc, tb)
    except BaseException as hook_error:
        print("Error in sys.excepthook:", file=sys.stderr)
        sys.__excepthook__(type(hook_error), hook_error, hook_error.__traceback__)
        print("\nOriginal exception was:", file=sys.stderr)
        sys.__excepthook__(type(exc), exc, tb)


def _safe_send(chan: wire.FdChannel, value: object) -> None:
    try:  # noqa: SIM105
        wire.send_frame(chan, plain_data.encode(value))
    except OSError:
        pass

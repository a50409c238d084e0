"""What a forked sandbox child does: confine itself, then run the candidate in one of three modes.

This module runs in the untrusted process. Nothing it sends is believed by the trusted side beyond
"the candidate produced this plain value": verdicts are decided by the judge. It must import
everything it needs at module load, because after the zygote pivots into the sandbox root our own
package is no longer on disk.
"""

from __future__ import annotations

import _signal
import atexit
import builtins
import contextlib
import ctypes
import gc
import importlib.machinery
import io
import linecache
import os
import signal
import socket
import sys
import threading
import traceback
import types
import weakref
from collections.abc import Callable

from coding_framework.sandbox import isolation, plain_data, wire
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


_STARTING_STREAMS: list = []  # the child's own stdout and stderr (prepare_zygote)
# The builtins a program's exit gives back (prepare_zygote), as Py_FinalizeEx gives back the copy it made
# of them at start-up: before `open` was set, and before `site` added exit, quit, help and the like.
_BUILTINS_AT_START: dict = {}
# What a program's exit runs on, taken by prepare_zygote before any program: a program that replaces
# sys.is_finalizing, sys.version_info, sys.modules, gc.collect, signal.signal, atexit's runner,
# `callable` or `isinstance` changes nothing at its exit (rounds 49, 50); the other builtins the exit's
# first steps use are the program's until they are given back (_empty_modules_and_builtins). This is
# fidelity, not a boundary: the program can reach this module (its frames are walkable), and so change
# how its own exit runs, but no more than what it prints and its status, which it controls anyway.
_EXIT: dict = {}


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
    _STARTING_STREAMS[:] = [sys.stdout, sys.stderr]
    _BUILTINS_AT_START.update((name, value) for name, value in vars(builtins).items()
                              if name != "open" and type(value).__module__ != "_sitebuiltins")
    sys.argv = ["main.py"]
    _EXIT.update(finalizing_flag=_finalizing_flag(), is_finalizing=sys.is_finalizing, collect=gc.collect,
                 gc_enabled=gc.isenabled, modules=sys.modules, run_exitfuncs=atexit._run_exitfuncs,
                 getsignal=_signal.getsignal, setsignal=_signal.signal, sig_dfl=_signal.SIG_DFL,
                 signals=tuple(signal.valid_signals()), callable=callable, isinstance=isinstance)
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
        _quietly(traceback.print_exc)
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
        code = _exit_code(exc)
    except MemoryError as exc:
        _safe_send(chan, ("memory",))
        _report_uncaught(exc)
        code = 1
    except BaseException as exc:
        _report_uncaught(exc)
        code = 1
    try:
        threading._shutdown()  # type: ignore[attr-defined] - the interpreter calls it by this name too
        _EXIT["run_exitfuncs"]()
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException:
        traceback.print_exc()
    main = weakref.ref(module)
    del module
    return code if _finalize(main) else 120


def _finalize(main: weakref.ref) -> bool:
    """The rest of the interpreter's exit, in its order (Py_FinalizeEx): no other thread runs from here
    on; flush sys.stdout and sys.stderr; signals back to their default actions; collect garbage; put the
    standard streams back; turn the import system off, empty sys.modules and give builtins back their
    start-up names; collect again, so that `__main__`'s objects' `__del__` methods and generators'
    `finally` blocks run with its globals still there; then set what is left of the globals to None,
    names with a single leading underscore first; flush again, then the streams the program started
    with, which it may have replaced while what it wrote to them was still buffered (round 41).
    A writer of the program's own, such as a module-level `os.fdopen(1, "w")`, flushes as it goes (its
    output was lost: round 44). False when a flush of sys.stdout or sys.stderr failed, which makes
    `python main.py` exit 120."""
    if not _quietly(_freeze_other_threads):
        _quietly(_stop_other_threads)
    flushed = _flush_std()
    _quietly(_drop_signal_handlers)
    _quietly(_first_collection)
    _quietly(_reset_sys)
    loaded = _quietly(_empty_modules_and_builtins, main)  # kept alive: the code below runs on them
    _quietly(_clear_main, main)
    del loaded
    flushed = _flush_std(report=flushed) and flushed
    for stream in _STARTING_STREAMS:
        _quietly(stream.flush)
    return flushed


def _quietly(step: Callable, *args: object) -> object:
    """`step(*args)`, or None if it raised: one step of the exit that fails does not stop the next. A plain
    try, not contextlib.suppress, which the program may have replaced (round 50)."""
    try:
        return step(*args)
    except BaseException:
        return None


def _first_collection() -> None:
    if _EXIT["gc_enabled"]():  # as the interpreter's first collection at exit (a program may disable it)
        _EXIT["collect"]()


def _reset_sys() -> None:
    sys.stdin, sys.stdout, sys.stderr = sys.__stdin__, sys.__stdout__, sys.__stderr__
    for name in ("path", "argv", "ps1", "ps2", "last_type", "last_value", "last_traceback", "path_hooks",
                 "path_importer_cache", "meta_path", "__interactivehook__"):
        setattr(sys, name, None)  # as the interpreter's: an import from here on fails (round 46)


def _empty_modules_and_builtins(main: weakref.ref) -> list:
    """As the interpreter's exit: its modules dict emptied, whatever `sys.modules` names now (an import of
    a module already loaded fails too), and builtins given back their own names, so that what the program
    put there is finalized and its replacement of `print` gone. Returns the modules but `__main__`, for the
    caller to keep alive while its own code runs on them."""
    loaded = [module for module in _EXIT["modules"].values() if module is not main()]
    _EXIT["modules"].clear()
    names = builtins.__dict__  # looked up once: no builtin can be between clear() and update()
    dropped = names.copy()  # finalized once the builtins are back, as the interpreter's
    names.clear()
    names.update(_BUILTINS_AT_START)
    del names, dropped
    return loaded


def _clear_main(main: weakref.ref) -> None:
    """Collect, so that `__main__`'s objects' destructors run with its globals still there; then clear
    what is left of them as the interpreter clears a module, names with one leading underscore first."""
    _EXIT["collect"]()
    module = main()
    if module is None:
        return
    namespace = module.__dict__
    del module
    for first in (True, False):
        for key in [k for k in namespace
                    if type(k) is str and (k.startswith("_") and not k.startswith("__")) is first]:
            if key != "__builtins__":
                namespace[key] = None
    del namespace
    _EXIT["collect"]()


# CPython 3.11's `_PyRuntimeState` starts with five ints (_initialized, preinitializing, preinitialized,
# core_initialized, initialized), then `_finalizing`: the thread state of the thread that finalizes the
# runtime, NULL until then. Any other thread that finds it set when it next takes the GIL exits.
_RUNTIME_HEAD = (1, 0, 1, 1, 1)
_FINALIZING_OFFSET = 24


def _finalizing_flag() -> tuple | None:
    """`_PyRuntime._finalizing` and a function that gives this thread's state, where this interpreter's
    layout is CPython 3.11's: the fields before it hold what a running interpreter has there, and writing
    it turns `sys.is_finalizing()` true (checked here, in the zygote, then undone). None elsewhere."""
    if sys.version_info[:2] != (3, 11) or len(sys._current_frames()) != 1:  # no thread may take the GIL
        return None
    try:
        base = ctypes.addressof(ctypes.c_int.in_dll(ctypes.pythonapi, "_PyRuntime"))
    except ValueError:
        return None
    flag = ctypes.c_void_p.from_address(base + _FINALIZING_OFFSET)
    if tuple((ctypes.c_int * len(_RUNTIME_HEAD)).from_address(base)) != _RUNTIME_HEAD or flag.value:
        return None
    thread_state = ctypes.PYFUNCTYPE(ctypes.c_void_p)(("PyThreadState_Get", ctypes.pythonapi))
    flag.value = thread_state()
    works = sys.is_finalizing()
    flag.value = None
    return (flag, thread_state) if works and not sys.is_finalizing() else None


def _freeze_other_threads() -> bool:
    """What Py_FinalizeEx does once the non-daemon threads are joined and atexit has run: it marks the
    runtime as finalized by this thread, so every other thread (daemon threads, those of
    `_thread.start_new_thread`) exits where it next takes the GIL, before the program's objects are
    finalized, and runs no `except` or `finally` of its own. A daemon thread printed, ticked or exited
    0 through that finalization while it was only sent SystemExit (red-team rounds 46, 48). The flag
    has no API: it is written where prepare_zygote found it (`_finalizing_flag`). False where there is
    none (another CPython) or the write did not take."""
    if _EXIT["finalizing_flag"] is None:
        return False
    flag, thread_state = _EXIT["finalizing_flag"]
    flag.value = thread_state()
    return _EXIT["is_finalizing"]()


def _drop_signal_handlers() -> None:
    """As the interpreter's exit does next (_PySignal_Fini): every signal with a handler of the program's
    goes back to its default action, so none runs while the program's objects are finalized (a SIGALRM
    handler printed the answer there; round 49), and the handlers no longer keep `__main__`'s globals
    alive (a `__del__` that printed the answer never ran)."""
    getsignal, setsignal, is_callable = _EXIT["getsignal"], _EXIT["setsignal"], _EXIT["callable"]
    for signum in _EXIT["signals"]:
        try:
            if is_callable(getsignal(signum)):
                setsignal(signum, _EXIT["sig_dfl"])
        except (ValueError, OSError, TypeError):
            pass


def _stop_other_threads() -> None:
    """Where the runtime cannot be marked as finalizing (not CPython 3.11): each other thread still
    running is sent SystemExit, which it raises as soon as it runs again. Not a freeze: an
    `except`/`finally` of such a thread may still run then."""
    main = threading.get_ident()
    others = [ident for ident in sys._current_frames() if ident != main]
    for ident in others:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(SystemExit))


def _flush_std(report: bool = True) -> bool:
    flushed = True
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and not stream.closed:
                stream.flush()
        except BaseException as exc:
            flushed = False
            if stream is sys.stdout and report:
                try:
                    print(f"Exception ignored in: {stream!r}", file=sys.stderr)
                    traceback.print_exception(type(exc), exc, None)
                except BaseException:
                    pass
    return flushed


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


def _exit_code(exc: SystemExit) -> int:
    """The status `sys.exit(code)` gives, as the interpreter computes it: an int's own value (not what
    an int subclass's `__and__` says: round 50), -1 where it does not fit a C long, wrapped as the
    kernel wraps it."""
    code = exc.code
    if code is None:
        return 0
    if _EXIT["isinstance"](code, int):
        value = int.__int__(code)
        return (value if -(1 << 63) <= value < 1 << 63 else -1) & 0xFF
    print(code, file=sys.stderr)
    return 1

"""How a program job's process ends: as `python main.py` ends once its main module has run.

The interpreter's own exit (Py_FinalizeEx) is not run: the child ends with os._exit once its result
is sent. Its steps that a program can observe are run here instead, in its order: join the non-daemon
threads and run atexit; freeze every other thread; flush the standard streams; drop the program's
signal handlers; collect; give sys, the modules dict and builtins back what the interpreter's exit
leaves; finalize `__main__`. Where a red-team round found a program whose output or status told a
missing step from `python main.py`, the step's function names the round. Function-call and unittest
children end without these steps (child.start).
"""

from __future__ import annotations

import _signal
import atexit
import builtins
import ctypes
import gc
import signal
import sys
import threading
import traceback
import weakref
from collections.abc import Callable

STARTING_STREAMS: list = []  # the child's own stdout and stderr (capture)
# The builtins a program's exit gives back (capture), as Py_FinalizeEx gives back the copy it made
# of them at start-up: before `open` was set, and before `site` added exit, quit, help and the like.
BUILTINS_AT_START: dict = {}
# What a program's exit runs on, taken by capture, in the zygote, before any program: a program that
# replaces sys.is_finalizing, sys.version_info, sys.modules, gc.collect, signal.signal, atexit's runner,
# `callable` or `isinstance` changes nothing at its exit (rounds 49, 50); the other builtins the exit's
# first steps use are the program's until they are given back (_empty_modules_and_builtins). This is
# fidelity, not a boundary: the program can reach this module (its frames are walkable), and so change
# how its own exit runs, but no more than what it prints and its status, which it controls anyway.
EXIT: dict = {}


def capture() -> None:
    """Take, in the zygote before any program, what a program's exit runs on (EXIT), the builtins it
    gives back and the streams it flushes last. The standard streams must already be the child's."""
    STARTING_STREAMS[:] = [sys.stdout, sys.stderr]
    BUILTINS_AT_START.update((name, value) for name, value in vars(builtins).items()
                             if name != "open" and type(value).__module__ != "_sitebuiltins")
    EXIT.update(finalizing_flag=_finalizing_flag(), is_finalizing=sys.is_finalizing, collect=gc.collect,
                gc_enabled=gc.isenabled, modules=sys.modules, run_exitfuncs=atexit._run_exitfuncs,
                getsignal=_signal.getsignal, setsignal=_signal.signal, sig_dfl=_signal.SIG_DFL,
                signals=tuple(signal.valid_signals()), callable=callable, isinstance=isinstance)


def join_threads_and_run_atexit(code: int) -> int:
    """The first steps of the interpreter's exit, after the main module ended with status `code`: wait
    for the non-daemon threads, then run the atexit handlers; the status, which a `sys.exit` there
    replaces."""
    try:
        threading._shutdown()  # type: ignore[attr-defined] - the interpreter calls it by this name too
        EXIT["run_exitfuncs"]()
    except SystemExit as exc:
        code = exit_code(exc)
    except BaseException:
        traceback.print_exc()
    return code


def finalize(main: weakref.ref) -> bool:
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
    if not quietly(_freeze_other_threads):
        quietly(_stop_other_threads)
    flushed = _flush_std()
    quietly(_drop_signal_handlers)
    quietly(_first_collection)
    quietly(_reset_sys)
    loaded = quietly(_empty_modules_and_builtins, main)  # kept alive: the code below runs on them
    quietly(_clear_main, main)
    del loaded
    flushed = _flush_std(report=flushed) and flushed
    for stream in STARTING_STREAMS:
        quietly(stream.flush)
    return flushed


def quietly(step: Callable, *args: object) -> object:
    """`step(*args)`, or None if it raised: one step of the exit that fails does not stop the next. A plain
    try, not contextlib.suppress, which the program may have replaced (round 50)."""
    try:
        return step(*args)
    except BaseException:
        return None


def _first_collection() -> None:
    if EXIT["gc_enabled"]():  # as the interpreter's first collection at exit (a program may disable it)
        EXIT["collect"]()


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
    loaded = [module for module in EXIT["modules"].values() if module is not main()]
    EXIT["modules"].clear()
    names = builtins.__dict__  # looked up once: no builtin can be between clear() and update()
    dropped = names.copy()  # finalized once the builtins are back, as the interpreter's
    names.clear()
    names.update(BUILTINS_AT_START)
    del names, dropped
    return loaded


def _clear_main(main: weakref.ref) -> None:
    """Collect, so that `__main__`'s objects' destructors run with its globals still there; then clear
    what is left of them as the interpreter clears a module, names with one leading underscore first."""
    EXIT["collect"]()
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
    EXIT["collect"]()


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
    has no API: it is written where capture found it (`_finalizing_flag`). False where there is
    none (another CPython) or the write did not take."""
    if EXIT["finalizing_flag"] is None:
        return False
    flag, thread_state = EXIT["finalizing_flag"]
    flag.value = thread_state()
    return EXIT["is_finalizing"]()


def _drop_signal_handlers() -> None:
    """As the interpreter's exit does next (_PySignal_Fini): every signal with a handler of the program's
    goes back to its default action, so none runs while the program's objects are finalized (a SIGALRM
    handler printed the answer there; round 49), and the handlers no longer keep `__main__`'s globals
    alive (a `__del__` that printed the answer never ran)."""
    getsignal, setsignal, is_callable = EXIT["getsignal"], EXIT["setsignal"], EXIT["callable"]
    for signum in EXIT["signals"]:
        try:
            if is_callable(getsignal(signum)):
                setsignal(signum, EXIT["sig_dfl"])
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


def exit_code(exc: SystemExit) -> int:
    """The status `sys.exit(code)` gives, as the interpreter computes it: an int's own value (not what
    an int subclass's `__and__` says: round 50), -1 where it does not fit a C long, wrapped as the
    kernel wraps it."""
    code = exc.code
    if code is None:
        return 0
    if EXIT["isinstance"](code, int):
        value = int.__int__(code)
        return (value if -(1 << 63) <= value < 1 << 63 else -1) & 0xFF
    print(code, file=sys.stderr)
    return 1

"""What a forked sandbox child does: confine itself, then run the candidate in one of three modes.

This module runs in the untrusted process. Nothing it sends is believed by the trusted side beyond
"the candidate produced this plain value": verdicts are decided by the judge. It must import
everything it needs at module load, because after the zygote pivots into the sandbox root our own
package is no longer on disk.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import linecache
import os
import socket
import sys
import threading
import traceback
import types

from coding_framework.sandbox import isolation, plain_data, wire

CHAN_FD = 3
SETUP_FAILED_EXIT = 125  # the child could not confine itself; the judge reports sandbox_error
SAFE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8", "USER": "sandbox", "LOGNAME": "sandbox", "OMP_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8"}
MAX_REQUEST_BYTES = 256 << 20
MAX_FD = 1 << 20


def prepare_zygote(workdir: str) -> None:
    """Done once in the zygote, so every forked child inherits it for free (each step here costs
    a fraction of a millisecond of copy-on-write faults when done per child): the scrubbed
    environment and fresh stdio objects for descriptors 0-2, which each child points at its pipes."""
    os.environ.clear()
    os.environ.update(SAFE_ENV)
    os.environ["HOME"] = os.environ["TMPDIR"] = workdir
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8",
                                  errors="backslashreplace")
    sys.stderr = io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, "w", closefd=False)), encoding="utf-8",
                                  errors="backslashreplace", line_buffering=True)
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
    sys.argv = ["main.py"]


def confine(fds: list[int], spec: dict) -> None:
    """Put this freshly forked process into its cell: own session, only its four descriptors,
    rlimits, no privileges, its private work dir (environment and stdio come from the zygote)."""
    os.setsid()
    chan, stdin_r, stdout_w, stderr_w = fds
    # dup2 onto 0-3 in an order that cannot clobber a descriptor still to be moved.
    moved = [os.dup(fd) for fd in (stdin_r, stdout_w, stderr_w, chan)]
    for target, fd in enumerate(moved):
        os.dup2(fd, target, inheritable=target < CHAN_FD)
    os.closerange(CHAN_FD + 1, MAX_FD)
    limits = spec["limits"]
    isolation.apply_rlimits(cpu_s=limits["cpu_s"], memory_mb=limits["memory_mb"],
                            max_processes=limits["max_processes"], max_open_files=limits["max_open_files"],
                            max_file_bytes=limits["max_file_bytes"])
    isolation.drop_privileges(spec.get("uid"))
    # Non-dumpable: /proc/self/{mem,fd,environ} belong to root, so the candidate cannot read its
    # own memory (the unittest harness's key) or reopen descriptors through /proc.
    isolation.prctl(isolation.PR_SET_DUMPABLE, 0)
    os.chdir(spec["workdir"])


def run(fds: list[int], spec: dict) -> None:
    """Entry point in the forked child; never returns."""
    try:
        confine(fds, spec)
    except BaseException as exc:
        try:
            os.write(2, f"sandbox child setup failed: {type(exc).__name__}: {exc}\n".encode())
        finally:
            os._exit(SETUP_FAILED_EXIT)
    code = 1
    try:
        chan = socket.socket(fileno=CHAN_FD)
        mode = spec["mode"]
        if mode == "function":
            code = _serve_function(chan, spec["limits"])
        elif mode == "program":
            code = _run_program(chan)
        elif mode == "unittest":
            from coding_framework.sandbox import unittest_harness

            code = unittest_harness.run_in_child(chan)
    except BaseException:
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        _flush_stdio()
        os._exit(code)


def _flush_stdio() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()


def _send(chan: socket.socket, value: object, limits: dict) -> None:
    try:
        body = plain_data.encode(value, max_bytes=limits["max_value_bytes"],
                                 max_depth=limits["max_value_depth"])
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
    """("raise", type name, message, kind, args) with kind builtin | other | fatal."""
    exc_type = type(exc)
    name = exc_type.__name__
    if not isinstance(exc, Exception):
        kind = "fatal"
    elif exc_type.__module__ == "builtins" and getattr(builtins, name, None) is exc_type:
        kind = "builtin"
    else:
        kind = "other"
    args = exc.args if type(exc.args) is tuple else ()
    try:
        plain_data.encode(args, max_bytes=1 << 16, max_depth=8)
    except (plain_data.EncodeError, RecursionError):
        args = (_text(exc),)
    return ("raise", name, _text(exc), kind, args)


def _serve_function(chan: socket.socket, limits: dict) -> int:
    load = plain_data.decode(wire.recv_frame(chan, MAX_REQUEST_BYTES), max_depth=limits["max_value_depth"])
    _op, program, entry_point = load
    # Not "__main__": like the official harnesses, `if __name__ == "__main__":` blocks do not run.
    namespace: dict = {"__name__": "__candidate__", "__builtins__": builtins}
    try:
        exec(compile(program, "<candidate>", "exec"), namespace)
        function = namespace[entry_point]
        if not callable(function):
            raise TypeError(f"entry point {entry_point!r} is a {type(function).__name__}, not a function")
    except KeyError:
        reply = ("load_error", "NameError", f"name {entry_point!r} is not defined by the program")
        _send(chan, reply, limits)
        return 1
    except BaseException as exc:
        _send(chan, ("load_error", type(exc).__name__, _text(exc)), limits)
        return 1
    _send(chan, ("ready",), limits)
    while True:
        try:
            frame = wire.recv_frame(chan, MAX_REQUEST_BYTES)
        except wire.ChannelClosed:
            return 0
        _op, args, kwargs = plain_data.decode(frame, max_depth=limits["max_value_depth"] + 2)
        try:
            result = function(*args, **kwargs)
        except BaseException as exc:
            reply = _exception_reply(exc)
        else:
            reply = ("ok", result)
        _flush_stdio()
        _send(chan, reply, limits)


def _run_program(chan: socket.socket) -> int:
    """Run a Python program as `python main.py` would: __main__, argv, exit codes, atexit, threads."""
    _op, program, filename = plain_data.decode(wire.recv_frame(chan, MAX_REQUEST_BYTES))
    module = types.ModuleType("__main__")
    module.__file__ = filename
    module.__builtins__ = builtins
    sys.modules["__main__"] = module
    sys.argv = [filename]
    lines = program.splitlines(keepends=True)
    linecache.cache[filename] = (len(program), None, lines, filename)
    code = 0
    try:
        exec(compile(program, filename, "exec"), module.__dict__)
    except SystemExit as exc:
        code = _exit_code(exc)
    except MemoryError as exc:
        _safe_send(chan, ("memory",))
        _print_candidate_traceback(exc)
        code = 1
    except BaseException as exc:
        _print_candidate_traceback(exc)
        code = 1
    try:
        threading._shutdown()  # type: ignore[attr-defined] - what the interpreter does at exit
        import atexit

        atexit._run_exitfuncs()
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException:
        traceback.print_exc()
    return code


def _print_candidate_traceback(exc: BaseException) -> None:
    """The traceback as `python main.py` prints it: without this module's own frame."""
    tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
    traceback.print_exception(type(exc), exc, tb)


def _safe_send(chan: socket.socket, value: object) -> None:
    with contextlib.suppress(OSError):
        wire.send_frame(chan, plain_data.encode(value))


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    print(exc.code, file=sys.stderr)
    return 1

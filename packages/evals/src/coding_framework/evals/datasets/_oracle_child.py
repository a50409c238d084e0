"""Runs reference solutions to get expected outputs and runtimes (a standalone script, stdlib only).

Usage: `python -I _oracle_child.py IN OUT`. IN is a marshal file holding a list of tasks
`(task_id, program, contract_program, entry_point, parts, output_not_none, timeout_s)` where parts is
`[(name, inputs), ...]`; OUT receives a marshal dict `{task_id: result}` with result
`{"parts": {name: (outputs, seconds)}, "violations": [str], "error": str}`.

This is the trusted side (evalplus's `trusted_exec`): the code comes from the benchmark file, not
from a model. Each task runs in a fresh namespace with stdout/stderr discarded; each input is deep-
copied before the call and timed with a monotonic clock, as evalplus does.
"""

import contextlib
import copy
import io
import marshal
import signal
import sys
import time

MAX_VIOLATIONS = 20


class _TaskTimeout(BaseException):
    pass


def _on_alarm(signum, frame):
    raise _TaskTimeout()


def _load(program, entry_point):
    namespace = {"__name__": "__reference__"}
    exec(compile(program, "<reference>", "exec"), namespace)
    fn = namespace.get(entry_point)
    if not callable(fn):
        raise NameError(f"the reference program defines no function {entry_point!r}")
    return fn


def _describe(exc):
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_NOT_PLAIN = object()
_EXACT = (int, float, complex, str, bytes, bool, type(None))
_BASES = (bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset)


def plain(value, depth=0):
    """The reference's output as exact built-in data, or _NOT_PLAIN. A numpy scalar becomes the number
    it holds and a subclass of a built-in (namedtuple, Counter, ...) its base value, which evalplus's
    `out == expected` treats alike; anything else (an array, a bytearray: marshal would silently store
    either as bytes that no answer equals) is refused."""
    kind = type(value)
    if kind in _EXACT:
        return value
    if depth > 100:
        return _NOT_PLAIN
    if kind.__module__ == "numpy" and getattr(value, "shape", None) == () and hasattr(value, "item"):
        held = value.item()  # numpy's scalar types: float64, int64, bool_, ...
        return held if type(held) in _EXACT else _NOT_PLAIN
    base = next((b for b in _BASES if isinstance(value, b)), None)
    if base in (list, tuple, set, frozenset):
        items = [plain(item, depth + 1) for item in value]
        return _NOT_PLAIN if any(item is _NOT_PLAIN for item in items) else base(items)
    if base is dict:
        pairs = [(plain(k, depth + 1), plain(v, depth + 1)) for k, v in value.items()]
        return _NOT_PLAIN if any(_NOT_PLAIN in (k, v) for k, v in pairs) else dict(pairs)
    if base is not None:
        return base(value)
    return _NOT_PLAIN


def run_task(program, contract_program, entry_point, parts, output_not_none):
    fn = _load(program, entry_point)
    results = {}
    for name, inputs in parts:
        outputs, seconds = [], []
        for index, args in enumerate(inputs):
            args = copy.deepcopy(args)
            start = time.perf_counter()
            try:
                out = fn(*args)
            except Exception as exc:
                raise RuntimeError(f"the reference raised on {name} input {index}: {_describe(exc)}") from exc
            seconds.append(time.perf_counter() - start)
            if output_not_none:
                out = out is not None
            held = plain(out)
            if held is _NOT_PLAIN:
                raise RuntimeError(
                    f"the reference's output on {name} input {index} is a {type(out).__name__}, "
                    "not plain data; no candidate output could be compared with it"
                )
            outputs.append(held)
        results[name] = (outputs, seconds)
    violations = []
    if contract_program is not None:
        checked = _load(contract_program, entry_point)
        for name, inputs in parts:
            for index, args in enumerate(inputs):
                if len(violations) >= MAX_VIOLATIONS:
                    break
                try:
                    checked(*copy.deepcopy(args))
                except Exception as exc:
                    violations.append(f"{name} input {index}: {_describe(exc)}")
    return results, violations


def main(argv):
    with open(argv[1], "rb") as fh:
        tasks = marshal.load(fh)
    signal.signal(signal.SIGALRM, _on_alarm)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    out = {}
    sink = io.StringIO()
    for task_id, program, contract_program, entry_point, parts, output_not_none, timeout_s in tasks:
        result = {"parts": {}, "violations": [], "error": ""}
        signal.setitimer(signal.ITIMER_REAL, timeout_s)
        try:
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                result["parts"], result["violations"] = run_task(
                    program, contract_program, entry_point, parts, output_not_none
                )
        except _TaskTimeout:
            result["error"] = f"the reference solution ran past {timeout_s:g}s"
        except BaseException as exc:
            result["error"] = str(exc) if isinstance(exc, RuntimeError) else _describe(exc)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        sink.seek(0)
        sink.truncate()
        out[task_id] = result
    with open(argv[2], "wb") as fh:
        marshal.dump(out, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

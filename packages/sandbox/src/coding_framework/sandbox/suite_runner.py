"""Unittest suites that cannot be split into plain-data calls (mocks, as in BigCodeBench).

Here the tests necessarily run in the same sandboxed process as the candidate, so the candidate
could in principle reach the harness. Defences, each one checked by the trusted judge:
1. Static rejection: programs that name the harness's machinery (unittest, frames, gc, inspect,
   ctypes, builtins, sys.modules, exit hooks, the report channel) are refused before running.
2. Authenticated reports: the harness reads a per-sample random key from the channel before the
   candidate exists, keeps it only in a closure, and MACs every test outcome; the judge rejects a
   report with a wrong MAC, a duplicate, or a missing test id.
3. Expected ids come from the judge's own parse of the test source, not from what runs.
4. A canary test that must fail is added under a random name; if it reports a pass, the harness
   was tampered with and the sample is an error.
5. The child is non-dumpable, so /proc/self/mem and /proc/self/fd are closed to it.
This is defence in depth, weaker than function-call isolation; prefer FunctionCallJob where possible.
"""

from __future__ import annotations

import hashlib
import hmac
import sys
import types

from coding_framework.sandbox import plain_data, wire

KEY_BYTES = 32
MAX_REQUEST_BYTES = 256 << 20


def mac(key: bytes, seq: int, test_id: str, outcome: str) -> bytes:
    """The tag of report number `seq`: binds the order, the test id and the outcome to the key."""
    return hmac.new(key, f"{seq}\0{test_id}\0{outcome}".encode(), hashlib.sha256).digest()


def run_in_child(chan: wire.FdChannel) -> int:
    """Runs in the sandboxed child: read key and sources, run the suite, report each test with a MAC."""
    import unittest

    key = wire.recv_frame(chan, KEY_BYTES)
    _op, program, test, module_name, canary = plain_data.decode(wire.recv_frame(chan, MAX_REQUEST_BYTES))
    report = _make_reporter(chan, key)
    del key  # from here on the key lives only in the reporter's closure

    module = types.ModuleType(module_name)
    module.__file__ = f"{module_name}.py"
    sys.modules[module_name] = module
    try:
        exec(compile(program, f"{module_name}.py", "exec"), module.__dict__)
    except BaseException as exc:
        report("<load>", "error", f"{type(exc).__name__}: {exc}")
        return 1
    tests = types.ModuleType("test_solution")
    # BigCodeBench-style tests use the program's names directly, as if in one file.
    tests.__dict__.update({k: v for k, v in module.__dict__.items() if not k.startswith("__")})
    sys.modules["test_solution"] = tests
    exec(compile(test + canary, "test_solution.py", "exec"), tests.__dict__)
    result = _make_result(unittest, report)
    for case in _flatten(unittest.defaultTestLoader.loadTestsFromModule(tests)):
        case(result)
    report("<done>", "done", "")
    return 0


def _flatten(suite):
    for item in suite:
        if hasattr(item, "__iter__"):
            yield from _flatten(item)
        else:
            yield item


def _make_reporter(chan: wire.FdChannel, key: bytes):
    counter = [0]

    def report(test_id: str, outcome: str, message: str) -> None:
        seq = counter[0]
        counter[0] += 1
        tag = mac(key, seq, test_id, outcome)
        wire.send_frame(chan, plain_data.encode(("report", seq, test_id, outcome, message[:2000], tag)))

    return report


def _test_id(test) -> str:
    return f"{type(test).__name__}.{test._testMethodName}"


def _make_result(unittest, report):
    """A TestResult that reports every outcome as it happens."""

    class Result(unittest.TestResult):
        def _text(self, err, test) -> str:
            return self._exc_info_to_string(err, test)[-2000:]

        def addSuccess(self, test):
            report(_test_id(test), "pass", "")

        def addFailure(self, test, err):
            report(_test_id(test), "fail", self._text(err, test))

        def addError(self, test, err):
            report(_test_id(test), "error", self._text(err, test))

        def addSkip(self, test, reason):
            report(_test_id(test), "skip", str(reason))

        def addExpectedFailure(self, test, err):
            report(_test_id(test), "pass", "")

        def addUnexpectedSuccess(self, test):
            report(_test_id(test), "fail", "unexpected success")

        def addSubTest(self, test, subtest, err):
            if err is not None:
                kind = "fail" if issubclass(err[0], test.failureException) else "error"
                report(_test_id(test), kind, self._text(err, test))

    return Result()

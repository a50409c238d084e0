"""Unittest suites that cannot be split into plain-data calls (mocks, as in BigCodeBench).

Here the tests necessarily run in the same sandboxed process as the candidate, so the candidate
could in principle reach the harness. Defences, each one checked by the trusted judge:
1. Static rejection: programs that name the harness's machinery (unittest, frames, gc, ctypes,
   builtins, sys.modules, __subclasses__, closures, exit hooks, the report channel) are refused before
   running.
2. Authenticated reports: the harness reads a per-sample random key from the channel before the
   candidate exists, keeps it only in the reporter's closure (held by the harness's frames and the test
   result instance, never by a class or a module global: every class is reachable), and MACs every
   test outcome; the judge rejects a report with a wrong MAC, a duplicate, or a missing test id.
3. Expected ids come from the judge's own parse of the test source, not from what runs.
4. A canary test that must fail is added under a random name; if it reports a pass, the harness
   was tampered with and the sample is an error.
5. The child is non-dumpable, so /proc/self/mem and /proc/self/fd are closed to it.
6. An audit hook refuses frames, gc walks, trace hooks, ctypes and code-making to the candidate's code,
   and the bindings the tests rely on are compared after the program loads and after every test,
   before that test's outcomes are sent (in_process_guard).
This is defence in depth, weaker than function-call isolation; prefer FunctionCallJob where possible.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import sys
import types

from coding_framework.sandbox import in_process_guard, plain_data, wire

KEY_BYTES = 32
MAX_REQUEST_BYTES = 256 << 20


def mac(key: bytes, seq: int, test_id: str, outcome: str) -> bytes:
    """The tag of report number `seq`: binds the order, the test id and the outcome to the key."""
    return hmac.new(key, f"{seq}\0{test_id}\0{outcome}".encode(), hashlib.sha256).digest()


def run_in_child(chan: wire.FdChannel) -> int:
    """Runs in the sandboxed child: read key and sources, run the suite, report each test with a MAC.

    Order matters: the trusted test source is compiled, what it imports is imported and every module's
    bindings are recorded, and the audit hook is installed, all before the candidate's code first runs.
    Outcomes of a test are held back until the bindings are found unchanged after it."""
    import unittest

    key = wire.recv_frame(chan, KEY_BYTES)
    _op, program, test, module_name, canary = plain_data.decode(wire.recv_frame(chan, MAX_REQUEST_BYTES))
    report = _make_reporter(chan, key)
    del key  # from here on the key lives only in the reporter's closure

    test_code = compile(test + canary, "test_solution.py", "exec")
    # sys and os hold process state that tests set and leave (sys.argv, sys.stdout, os.environ): only
    # their functions are watched, even when the tests import them.
    strict = ({"unittest", "_hashlib", *in_process_guard.HARNESS_MODULES}
              | in_process_guard.preimport(test)) - {"sys", "os"}
    before = in_process_guard.record(strict)
    workdir = os.getcwd()
    roots = in_process_guard.trusted_roots(sys.path, (workdir, os.environ.get("TMPDIR", ""), "/tmp",
                                                      "/var/tmp", "/dev/shm"))
    trusted_code = in_process_guard.code_objects(test_code)
    is_trusted = in_process_guard.make_trust(roots, trusted_code)
    changes = in_process_guard.make_checker([before], is_trusted)
    restore = in_process_guard.make_restorer([before])
    harness_intact = in_process_guard.make_harness_check(is_trusted)
    # Held as locals: the module's globals are the candidate's to rebind (found, but only afterwards).
    tampered, guard_calls, checker, snapshot = (_tampered, in_process_guard.guard_calls,
                                                in_process_guard.make_checker, in_process_guard.Snapshot)
    in_process_guard.install_audit_hook(roots, trusted_code)

    module = types.ModuleType(module_name)
    module.__file__ = f"{module_name}.py"
    sys.modules[module_name] = module
    try:
        exec(compile(program, f"{module_name}.py", "exec"), module.__dict__)
    except BaseException as exc:
        report("<load>", "error", f"{type(exc).__name__}: {exc}")
        return 1
    if tampered(changes, restore, report):
        return 1
    # Checks when a guarded call returns; the test module joins them once it exists (a program
    # function that swaps the tests' name for itself is found at the next return, not after the test).
    mid_test = [checker([before], is_trusted, program_made_only=True)]
    tests = types.ModuleType("test_solution")
    # BigCodeBench-style tests use the program's names directly, as if in one file. Those are guarded
    # (checked when a call returns); the program's own calls, and `from solution import ...`, are not,
    # so recursion keeps its depth.
    tests.__dict__.update({k: v for k, v in module.__dict__.items() if not k.startswith("__")})
    guard_calls(tests.__dict__, f"{module_name}.py", lambda: mid_test[0](), is_trusted, harness_intact)
    sys.modules["test_solution"] = tests
    exec(test_code, tests.__dict__)
    after_load = snapshot()
    after_load.add_module("test_solution", tests, "methods")  # fixtures store data on the classes
    changes = checker([before, after_load], is_trusted)
    mid_test[0] = checker([before, after_load], is_trusted, program_made_only=True)
    held: list[tuple[str, str, str]] = []
    stopped = []

    def after_test() -> bool:
        """Between tests: send the test's held-back outcomes if the bindings are intact, else stop."""
        if tampered(changes, restore, report):
            stopped.append(True)
            return False
        for outcome in held:
            report(*outcome)
        held.clear()
        return True

    result = _make_result(unittest, lambda *outcome: held.append(outcome), after_test)
    # Loading looks at every name in the test module, the program's too, so it can run the program's
    # code (a property answering isinstance, say): check again once the cases exist.
    suite = unittest.defaultTestLoader.loadTestsFromModule(tests)
    if tampered(changes, restore, report):
        return 1
    suite.run(result)  # as the official harnesses do: class and module fixtures run too
    if stopped or not after_test():  # outcomes of class/module tear-downs, after the last test
        return 1
    report("<done>", "done", "")
    return 0


def _tampered(changes, restore, report) -> bool:
    """Report the bindings the candidate changed, if any, as a <tamper> report (the judge's verdict is
    then an error); the recorded module bindings are put back first so that reporting works."""
    found = changes()
    if not found:  # no builtins here: the candidate may have rebound them
        return False
    restore()
    report("<tamper>", "error", "; ".join(found))
    return True


def _make_reporter(chan: wire.FdChannel, key: bytes):
    counter = [0]

    def report(test_id: str, outcome: str, message: str) -> None:
        seq = counter[0]
        counter[0] += 1
        tag = mac(key, seq, test_id, outcome)
        wire.send_frame(chan, plain_data.encode(("report", seq, test_id, outcome, message[:2000], tag)))

    return report


def _test_id(test) -> str:
    """`Class.method` for a test; a class or module fixture that failed (setUpClass, tearDownModule, ...)
    is reported as "<fixture>", which the judge turns into an error."""
    method = getattr(test, "_testMethodName", None)
    return f"{type(test).__name__}.{method}" if isinstance(method, str) else "<fixture>"


def _make_result(unittest, report, after_test):
    """A TestResult that passes every outcome to `report` and calls `after_test` when each test ends
    (stopping the run when it returns False).

    Both are held by the instance, never by the class: any class is reachable from the program
    (`TestResult.__subclasses__()`), and a method closing over the reporter would hand it the means to
    send outcomes of its choosing. The instance is reachable only from the running test case and the
    harness's frames, which the audit hook refuses to the program."""

    class Result(unittest.TestResult):
        def _text(self, err, test) -> str:
            text = self._exc_info_to_string(err, test) if _test_id(test) != "<fixture>" else (
                f"{getattr(test, 'description', test)}: {err[0].__name__}: {err[1]}")
            return text[-2000:]

        def stopTest(self, test):
            super().stopTest(test)
            if not self._cf_after_test():
                self.stop()

        def addSuccess(self, test):
            self._cf_report(_test_id(test), "pass", "")

        def addFailure(self, test, err):
            self._cf_report(_test_id(test), "fail", self._text(err, test))

        def addError(self, test, err):
            self._cf_report(_test_id(test), "error", self._text(err, test))

        def addSkip(self, test, reason):
            self._cf_report(_test_id(test), "skip", str(reason))

        def addExpectedFailure(self, test, err):
            self._cf_report(_test_id(test), "pass", "")

        def addUnexpectedSuccess(self, test):
            self._cf_report(_test_id(test), "fail", "unexpected success")

        def addSubTest(self, test, subtest, err):
            if err is not None:
                kind = "fail" if issubclass(err[0], test.failureException) else "error"
                self._cf_report(_test_id(test), kind, self._text(err, test))

    result = Result()
    result._cf_report, result._cf_after_test = report, after_test
    return result

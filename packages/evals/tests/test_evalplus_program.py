"""The program a HumanEval+ / MBPP+ sample runs as in the sandbox child (evalplus_program): evalplus's
reliability guard applied before the sample's code, imports unaffected by it, the sample compiled as
written, and MBPP+'s not-None adapter. Run through the real sandbox."""

from __future__ import annotations

import pytest

from coding_framework.evals.datasets.evalplus_program import (
    NOT_NONE_ADAPTER,
    PRELOAD,
    guarded_program,
)
from coding_framework.sandbox import FunctionCallJob, SandboxPool


def _job(program: str, test: str, *, dataset: str = "humaneval", entry_point: str = "f") -> FunctionCallJob:
    source, entry = guarded_program(program, dataset, entry_point)
    return FunctionCallJob(program=source, entry_point=entry, test=test)


CASES = {
    # name: (program, trusted test, expected status, piece of the message)
    "open is disabled in a call": (
        "def f():\n    return open('x', 'w').name\n",
        "def check(c):\n    c()\n",
        "error",
        "TypeError",
    ),
    "os.getcwd is disabled": (
        "import os\ndef f():\n    return os.getcwd()\n",
        "def check(c):\n    c()\n",
        "error",
        "TypeError",
    ),
    "subprocess.Popen is disabled": (
        "import subprocess\ndef f():\n    return subprocess.run(['true']).returncode\n",
        "def check(c):\n    c()\n",
        "error",
        "TypeError",
    ),
    "import resource fails at load": (
        "import resource\ndef f():\n    return 1\n",
        "def check(c):\n    c()\n",
        "error",
        "resource",
    ),
    "standard input raises on read": (
        "import sys\ndef f():\n    return sys.stdin.read()\n",
        "def check(c):\n    c()\n",
        "error",
        "OSError",
    ),
    "an import inside a call loads numpy, and the guard is back after it": (
        "def f():\n    import numpy\n    return [float(numpy.sum([1.0, 2.0])), open is None]\n",
        "def check(c):\n    assert c() == [3.0, True]\n",
        "passed",
        "",
    ),
    "the sample's own __future__ import still works": (
        "from __future__ import annotations\ndef f(x: Undefined) -> int:\n    return 1\n",
        "def check(c):\n    assert c(0) == 1\n",
        "passed",
        "",
    ),
    "syntax errors keep the sample's own line numbers": (
        "def f():\n    return 1\ndef g(:\n",
        "def check(c):\n    c()\n",
        "error",
        "<candidate>, line 3",
    ),
}


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(workers=2, preload=PRELOAD) as sandbox:
        yield sandbox


@pytest.mark.parametrize("name", list(CASES))
def test_the_guard_behaves_as_evalplus_reliability_guard(pool, name):
    program, test, status, message = CASES[name]
    (verdict,) = pool.run_many([_job(program, test)])
    assert verdict.status.value == status, verdict.message
    assert message in verdict.message


def test_not_none_tasks_compare_a_bool_made_in_the_child(pool):
    program = "import re\ndef check_str(s):\n    return re.match('[aeiou]', s)\n"
    test = "def check(c):\n    assert c('apple') is True\n    assert c('pear') is False\n"
    bool_program = "def check_str(s):\n    return False\n"
    bool_test = (
        "def check(c):\n    assert c('apple') is False\n"  # a bool is compared as is, not as 'not None'
    )
    missing = "def other(s):\n    return None\n"
    jobs = [
        _job(program, test, dataset="mbpp", entry_point="check_str"),
        _job(bool_program, bool_test, dataset="mbpp", entry_point="check_str"),
        _job(missing, "def check(c):\n    c('a')\n", dataset="mbpp", entry_point="check_str"),
    ]
    match, as_bool, absent = pool.run_many(jobs)
    assert match.passed, match.message
    assert as_bool.passed, as_bool.message
    assert (
        absent.status.value == "error" and "name 'check_str' is not defined by the program" in absent.message
    )


def test_the_adapter_is_only_for_mbpp_not_none_tasks():
    assert guarded_program("x", "mbpp", "check_str")[1] == NOT_NONE_ADAPTER
    assert guarded_program("x", "mbpp", "text_starta_endb")[1] == NOT_NONE_ADAPTER
    assert guarded_program("x", "mbpp", "similar_elements")[1] == "similar_elements"
    assert guarded_program("x", "humaneval", "check_str")[1] == "check_str"
    source, _ = guarded_program("def f():\n    return 1\n", "humaneval", "f")
    compile(source, "<guarded>", "exec")
    assert repr("def f():\n    return 1\n") in source

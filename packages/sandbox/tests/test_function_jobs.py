"""Function-call jobs: the trusted test sees the candidate only through plain-data calls."""

from __future__ import annotations

import pytest

from coding_framework.sandbox import FunctionCallJob, Limits, Status


def job(program: str, test: str, entry_point: str = "f", **kwargs) -> FunctionCallJob:
    return FunctionCallJob(program=program, entry_point=entry_point, test=test, **kwargs)


def test_humaneval_style_check_and_failing_assertion_message(pool):
    ok, bad = pool.run_many([
        job("def f(x):\n    return x * 2\n", "def check(candidate):\n    assert candidate(2) == 4\n"),
        job("def f(x):\n    return x * 2\n",
            "def check(candidate):\n    assert candidate(2) == 4\n    assert candidate(3) == 7, 'three'\n"),
    ])
    assert ok.status is Status.PASSED and ok.message == ""
    assert bad.status is Status.FAILED
    assert bad.message == "assert candidate(3) == 7, 'three'  # three"


def test_mbpp_style_asserts_call_the_function_by_name(pool):
    test = "assert add(1, 2) == 3\nassert add(a=1, b=1) == 2\n"
    verdict = pool.run(job("def add(a, b):\n    return a + b\n", test, entry_point="add"))
    assert verdict.status is Status.PASSED


def test_a_candidate_may_hand_its_functions_to_a_process_pool(pool):
    # A pool's workers are sent the function by name: pickle looks the program's module up in
    # sys.modules, where it was missing (PicklingError; red-team pass, 2026-11-26).
    program = ("import multiprocessing\n"
               "def square(x):\n    return x * x\n"
               "def f(xs):\n    with multiprocessing.Pool(2) as workers:\n"
               "        return workers.map(square, xs)\n")
    verdict = pool.run(job(program, "def check(candidate):\n    assert candidate([1, 2, 3]) == [1, 4, 9]\n"))
    assert verdict.status is Status.PASSED, verdict


def test_setup_helpers_are_trusted_copies(pool):
    # HumanEval/38-style: the test uses a helper from the prompt; the candidate's copy is irrelevant.
    setup = "def encode(s):\n    return s[::-1]\n\ndef decode(s):\n    pass\n"
    program = "def encode(s):\n    return 'forged'\n\ndef decode(s):\n    return s[::-1]\n"
    test = "def check(candidate):\n    assert candidate(encode('abc')) == 'abc'\n"
    assert pool.run(job(program, test, entry_point="decode", setup=setup)).status is Status.PASSED


def test_exact_types_survive_the_channel(pool):
    test = ("assert f((1, 2)) == (1, 2) and type(f((1, 2))) is tuple\n"
            "assert f([1, 2]) == [1, 2] and type(f([1, 2])) is list\n"
            "assert f(True) is True and f(1) is not True\n"
            "assert f(float('inf')) == float('inf')\n"
            "import math\nassert math.isnan(f(float('nan')))\n"
            "assert f({'a': {1, 2}}) == {'a': {1, 2}}\n"
            "assert f(2 ** 100) == 2 ** 100\n")
    assert pool.run(job("def f(x):\n    return x\n", test)).status is Status.PASSED


def test_tuple_versus_list_is_a_failure_like_in_process(pool):
    verdict = pool.run(job("def f():\n    return [1, 2]\n", "assert f() == (1, 2)\n"))
    assert verdict.status is Status.FAILED


def test_candidate_builtin_exceptions_reach_the_test_with_their_type(pool):
    test = ("try:\n    f(0)\nexcept ZeroDivisionError as e:\n    assert 'division' in str(e)\n"
            "else:\n    raise AssertionError('no exception')\n"
            "try:\n    f(-1)\nexcept KeyError as e:\n    assert e.args == ('k',)\n")
    program = "def f(x):\n    if x < 0:\n        raise KeyError('k')\n    return 1 / x\n"
    assert pool.run(job(program, test)).status is Status.PASSED


def test_uncaught_candidate_exception_is_an_error_with_type_and_message(pool):
    verdict = pool.run(job("def f():\n    raise ValueError('bad input')\n", "assert f() == 1\n"))
    assert verdict.status is Status.ERROR and verdict.message == "ValueError: bad input"
    program = "class Oops(Exception):\n    pass\ndef f():\n    raise Oops('x')\n"
    custom = pool.run(job(program, "assert f() == 1\n"))
    assert custom.status is Status.ERROR and custom.message == "Oops: x"


def test_exceptions_deriving_from_a_builtin_one_are_caught_as_that_one(pool):
    # They arrived as CandidateError, so the test's `except ValueError` missed statistics' error, json's
    # and the program's own `class BadInput(ValueError)`; an OSError lost its file name (round 41).
    program = ("import json, statistics\nclass BadInput(ValueError):\n    pass\n"
               "def f(x):\n    if x in (0, 5):\n        raise BadInput(f'input {x}')\n"
               "    if x == 1:\n        return statistics.mean([])\n"
               "    if x == 2:\n        return json.loads('{')\n    open('/no/such/file')\n")
    test = ("for x in range(3):\n    try:\n        f(x)\n"
            "    except ValueError as e:\n        seen.append(type(e).__name__)\n"
            "try:\n    f(3)\nexcept FileNotFoundError as e:\n"
            "    assert e.filename == '/no/such/file' and e.errno == 2\n"
            "assert seen == ['BadInput', 'StatisticsError', 'JSONDecodeError'], seen\n"
            "assert f(5) == 1\n")
    verdict = pool.run(job(program, "seen = []\n" + test))
    assert verdict.status is Status.ERROR and verdict.message == "BadInput: input 5", verdict
    # every built-in base counts (round 42): `class E(KeyError, TypeError)` is a TypeError too
    both = ("class E(KeyError, TypeError):\n    pass\ndef f():\n    raise E('k')\n")
    test = ("for kind in (KeyError, TypeError, LookupError):\n    try:\n        f()\n"
            "    except kind as e:\n        assert type(e).__name__ == 'E'\n")
    assert pool.run(job(both, test)).status is Status.PASSED


def test_an_iterator_raising_partway_gives_its_items_then_the_exception(pool):
    # A returned generator was drained in the child and an exception partway killed it: "the candidate
    # process ended during the call", though the test expected that exception or never got that far.
    program = ("def f(n):\n    if n < 0:\n        raise ValueError('n must be >= 0')\n"
               "    for i in range(n):\n        yield i\n    raise KeyError('past the end')\n")
    test = ("assert next(f(3)) == 0\n"
            "try:\n    list(f(-1))\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('no raise')\n"
            "got = []\ntry:\n    for x in f(2):\n        got.append(x)\n"
            "except KeyError:\n    got.append('end')\n"
            "assert got == [0, 1, 'end'], got\n")
    verdict = pool.run(job(program, test))
    assert verdict.status is Status.PASSED, verdict


def test_counters_defaultdicts_namedtuples_and_more_iterators_keep_their_behaviour(pool):
    # A Counter or defaultdict arrived as a dict (KeyError for a missing key), a namedtuple as a tuple
    # (no `.x`), and reversed(list) or itertools' iterators were refused (round 41).
    program = ("import collections, itertools\nP = collections.namedtuple('P', 'x y')\n"
               "def f(kind):\n    if kind == 'counter':\n        return collections.Counter('aab')\n"
               "    if kind == 'default':\n        return collections.defaultdict(int, a=1)\n"
               "    if kind == 'point':\n        return P(1, 2)\n"
               "    if kind == 'reversed':\n        return reversed([1, 2, 3])\n"
               "    return itertools.chain([1], [2])\n")
    test = ("assert f('counter')['z'] == 0 and f('counter') == {'a': 2, 'b': 1}\n"
            "assert f('default')['b'] == 0\nassert f('point').x == 1 and f('point') == (1, 2)\n"
            "assert list(f('reversed')) == [3, 2, 1] and list(f('chain')) == [1, 2]\n")
    verdict = pool.run(job(program, test))
    assert verdict.status is Status.PASSED, verdict
    # Round 42: an OrderedDict reordered by move_to_end crossed in its storage order, so the wrong order
    # passed. A defaultdict of a built-in factory gives a fresh default per missing key.
    program = ("import collections\ndef f(first):\n    if first == 'dd':\n"
               "        return collections.defaultdict(list, {'k': [1]})\n"
               "    d = collections.OrderedDict([('a', 1), ('b', 2)])\n"
               "    d.move_to_end(first)\n    return d\n")
    test = ("import collections\nassert list(f('a')) == ['b', 'a']\n"
            "assert f('b') == collections.OrderedDict([('a', 1), ('b', 2)])\n"
            "assert f('dd')['new'] == [] and f('dd')['k'] == [1]\n")
    assert pool.run(job(program, test)).status is Status.PASSED
    wrong = pool.run(job(program, "import collections\n"
                                  "assert f('a') == collections.OrderedDict([('a', 1), ('b', 2)])\n"))
    assert wrong.status is Status.FAILED, wrong


def test_program_that_does_not_load_or_lacks_the_entry_point(pool):
    syntax, missing, raises = pool.run_many([
        job("def f(:\n", "assert f() == 1\n"),
        job("def g():\n    return 1\n", "assert f() == 1\n"),
        job("raise RuntimeError('at import')\n", "assert f() == 1\n"),
    ])
    assert syntax.status is Status.ERROR and syntax.message.startswith("SyntaxError")
    assert missing.status is Status.ERROR and "'f' is not defined" in missing.message
    assert raises.status is Status.ERROR and raises.message == "RuntimeError: at import"


def test_main_guard_does_not_run(pool):
    program = "def f():\n    return 1\nif __name__ == '__main__':\n    raise SystemExit(3)\n"
    assert pool.run(job(program, "assert f() == 1\n")).status is Status.PASSED


def test_printing_code_passes_and_output_is_captured(pool):
    program = "def f(x):\n    print('debug', x)\n    return x\n"
    verdict = pool.run(job(program, "assert f(1) == 1\nassert f(2) == 2\n"))
    assert verdict.status is Status.PASSED
    assert verdict.stdout == "debug 1\ndebug 2\n"


def test_slow_but_within_limit_passes(pool):
    program = "import time\ndef f():\n    time.sleep(0.6)\n    return 1\n"
    verdict = pool.run(job(program, "assert f() == 1\n", limits=Limits(timeout_s=3)))
    assert verdict.status is Status.PASSED and 0.6 <= verdict.duration_s < 3


def test_network_probe_that_fails_to_connect_still_passes(pool):
    program = ("import socket\ndef f():\n    try:\n"
               "        socket.create_connection(('1.1.1.1', 80), timeout=1)\n"
               "        return 'online'\n    except OSError:\n        return 'offline'\n")
    assert pool.run(job(program, "assert f() == 'offline'\n")).status is Status.PASSED


def test_generators_cross_as_fresh_iterators(pool):
    program = "def f(n):\n    return (i * i for i in range(n))\n"
    assert pool.run(job(program, "assert list(f(3)) == [0, 1, 4]\n")).status is Status.PASSED


def test_reading_stdin_ends_at_once(pool):
    # Function-call children read /dev/null: input() fails fast instead of waiting for the timeout.
    program = ("import os, sys\ndef f():\n    return [sys.stdin.readline(), sys.stdin.read(), "
               "os.readlink('/proc/self/fd/0'), sorted(int(fd) for fd in os.listdir('/proc/self/fd'))[:4]]\n")
    verdict = pool.run(job(program, "assert f() == ['', '', '/dev/null', [0, 1, 2, 3]]\n",
                           limits=Limits(timeout_s=2)))
    assert verdict.status is Status.PASSED and verdict.duration_s < 1


def test_every_sample_draws_its_own_random_numbers(pool):
    # Children are forks of one zygote; each one's generator is reseeded, so samples differ.
    draw = job("import random\ndef f():\n    return random.random()\n", "x = f()\nassert x < 0, x\n")
    messages = {v.message for v in pool.run_many([draw] * 6)}
    assert len(messages) == 6, messages


def test_trusted_tests_draw_the_same_random_inputs_whatever_ran_before(pool):
    # HumanEval 38/50/53 draw their inputs from the judge's `random`: a sample's inputs (and so its
    # verdict) must not depend on how many numbers earlier tests in the same worker drew.
    draw = job("def f(x):\n    return x\n", "import random\nx = random.random()\nassert f(x) < 0, x\n")
    greedy = job("def f(x):\n    return x\n",
                 "import random\nfor _ in range(5):\n    assert f(random.random()) < 0.5\n")
    jobs = [draw, greedy, draw, greedy, greedy, draw, draw, greedy, draw]
    drawn = [v.message for j, v in zip(jobs, pool.run_many(jobs), strict=True) if j is draw]
    assert len(drawn) == 5 and len(set(drawn)) == 1 and drawn[0].startswith("assert f(x) < 0, x  # 0."), drawn


def test_a_candidate_cannot_predict_the_trusted_tests_random_inputs(pool):
    # The judge's `random` started every job from seed 0: a completion that made the test's draws itself
    # returned the expected answers without reading its input (HumanEval 38 and 50; red-team round 49).
    guess = job("import random\ndef f(x):\n    return random.Random(0).random()\n",
                "import random\nx = random.random()\nassert f(x) == x\n")
    verdict = pool.run(guess)
    assert verdict.status is Status.FAILED, verdict


def test_unsendable_argument_is_a_sandbox_error(pool):
    verdict = pool.run(job("def f(g):\n    return g(1)\n", "assert f(lambda x: x) == 1\n"))
    assert verdict.status is Status.SANDBOX_ERROR and "cannot send" in verdict.message
    # A test's own `except Exception` took it for the candidate's failure and went on (round 44).
    swallowed = pool.run(job("def f(g):\n    return 0\n",
                             "try:\n    f(lambda x: x)\nexcept Exception:\n    pass\n"))
    assert swallowed.status is Status.SANDBOX_ERROR, swallowed


def test_every_answer_can_be_handed_back_to_the_candidate(pool):
    # A forged reply nesting deeper than the child's encoder allows, or an iterator of the candidate's
    # raising as the judge drained it to send it back, made the test's call a sandbox_error (our
    # fault, chosen by the sample) or, under `except Exception`, a pass (round 44).
    deep = "def f(x):\n    if x == 0:\n        v = 0\n        for _ in range(98):\n            v = [v]\n" \
           "        return v\n    return 1\n"
    assert pool.run(job(deep, "assert f(f(0)) == 1\n")).status is Status.PASSED
    frame = ("import os, struct\n"
             "def s(text):\n    b = text.encode()\n    return b's' + struct.pack('>I', len(b)) + b\n"
             "def t(*items):\n    return b't' + struct.pack('>I', len(items)) + b''.join(items)\n")
    forged = frame + ("def f(x):\n    if x == 0:\n"
                      "        record = t(s('raise'), s('RecursionError'), s('m'), s('builtin'), t(), "
                      "s('RecursionError'))\n"
                      "        body = t(s('ok'), b'G' + struct.pack('>I', 0) + record)\n"
                      "        os.write(3, struct.pack('>I', len(body)) + body)\n"
                      "        import time\n        time.sleep(5)\n    return 1\n")
    test = "try:\n    f(f(0))\nexcept RecursionError:\n    raise AssertionError('the iterator raised')\n"
    verdict = pool.run(job(forged, test, limits=Limits(timeout_s=3)))
    assert verdict.status is Status.FAILED and "the iterator raised" in verdict.message, verdict
    too_deep = frame + ("def f(x):\n    v = b'N'\n    for _ in range(101):\n"
                        "        v = b'l' + struct.pack('>I', 1) + v\n"
                        "    body = t(s('ok'), v)\n    os.write(3, struct.pack('>I', len(body)) + body)\n"
                        "    import time\n    time.sleep(5)\n")
    verdict = pool.run(job(too_deep, "try:\n    f(f(0))\nexcept Exception:\n    pass\n",
                           limits=Limits(timeout_s=3)))
    assert verdict.status is Status.ERROR and "malformed" in verdict.message, verdict


def test_a_rebuilt_exception_reads_as_the_candidates_did(pool):
    # str() of a rebuilt exception came from its arguments, not the candidate's own __str__ (round 44).
    program = ("class E(ValueError):\n    def __str__(self):\n        return 'shown'\n"
               "def f():\n    raise E('hidden')\n")
    test = "try:\n    f()\nexcept ValueError as e:\n    assert str(e) == 'shown', str(e)\n"
    assert pool.run(job(program, test)).status is Status.PASSED
    # Built-in ones whose message comes from attributes set after they were made (round 45).
    program = ("def f(kind):\n    e = FileNotFoundError(2, 'x', 'a.txt') if kind else UnicodeDecodeError("
               "'utf-8', b'\\xff', 0, 1, 'x')\n    if kind:\n        e.strerror = 'changed'\n"
               "    else:\n        e.reason = 'changed'\n    raise e\n")
    test = ("for kind in (True, False):\n    try:\n        f(kind)\n    except (OSError, ValueError) as e:\n"
            "        assert 'changed' in str(e), str(e)\n")
    assert pool.run(job(program, test)).status is Status.PASSED


def test_broken_trusted_code_is_a_sandbox_error_not_the_candidates(pool):
    verdict = pool.run(job("def f():\n    return 1\n", "assert f( == 1\n"))
    assert verdict.status is Status.SANDBOX_ERROR and "does not compile" in verdict.message
    setup = pool.run(job("def f():\n    return 1\n", "assert f() == 1\n", setup="raise ImportError('x')\n"))
    assert setup.status is Status.SANDBOX_ERROR and "setup" in setup.message


def test_run_many_keeps_input_order(pool):
    jobs = [job(f"def f():\n    return {i}\n", f"assert f() == {i if i % 3 else -1}\n") for i in range(12)]
    statuses = [v.status for v in pool.run_many(jobs)]
    assert statuses == [Status.PASSED if i % 3 else Status.FAILED for i in range(12)]


@pytest.mark.parametrize("timeout", [1.0])
def test_trusted_test_that_loops_forever_times_out(pool, timeout):
    looping = job("def f():\n    return 1\n", "while f() == 1:\n    pass\n", limits=Limits(timeout_s=timeout))
    verdict = pool.run(looping)
    assert verdict.status is Status.TIMEOUT and verdict.duration_s < timeout + 2


def test_a_reply_near_the_size_cap_followed_by_many_small_ones_loses_none(pool):
    # The calls are sent ahead, so the small replies queue behind the big one while the judge reads it;
    # a judge that dropped a frame to bound its buffer shifted every later answer onto the wrong call.
    big = (1 << 20) - 100
    program = f"def f(i):\n    return 'a' * {big} if i == 0 else 'b' * 1000 + str(i)\n"
    test = (f"def check(candidate):\n    assert candidate(0) == 'a' * {big}\n"
            "    for i in range(1, 200):\n        assert candidate(i) == 'b' * 1000 + str(i)\n")
    limits = Limits(timeout_s=10, max_value_bytes=1 << 20)
    verdicts = pool.run_many([job(program, test, limits=limits) for _ in range(6)])
    assert [v.status for v in verdicts] == [Status.PASSED] * 6, [v.message for v in verdicts]


def test_an_entry_point_named_check_is_not_called_as_the_tests_check(pool):
    # HumanEval's tests define check(candidate); an MBPP task whose function is named `check` has
    # asserts calling it, and the judge called it with itself (a sandbox_error for every sample).
    test = "assert check(4) == True\nassert check(3) == False\n"
    right, wrong = pool.run_many([
        FunctionCallJob(program="def check(n):\n    return n % 2 == 0\n", entry_point="check", test=test),
        FunctionCallJob(program="def check(n):\n    return True\n", entry_point="check", test=test),
    ])
    assert (right.status, wrong.status) == (Status.PASSED, Status.FAILED), (right, wrong)


def test_candidate_and_test_code_compile_without_the_harness_future_imports(pool):
    # The child's and the judge's `from __future__ import annotations` made every candidate's and test's
    # annotations strings (red-team round 40): a candidate's own check of them differed from the official
    # harnesses'.
    program = "def f(x: int) -> int:\n    return f.__annotations__['x'] is int\n"
    verdict = pool.run(FunctionCallJob(program=program, entry_point="f", test="assert f(1) is True\n"))
    assert verdict.status is Status.PASSED, verdict
    test = "def g(y: int):\n    pass\nassert g.__annotations__['y'] is int\nassert f(1) is True\n"
    verdict = pool.run(FunctionCallJob(program=program, entry_point="f", test=test))
    assert verdict.status is Status.PASSED, verdict

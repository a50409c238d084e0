"""Calls sent ahead of the test (speculation.py) give exactly the verdicts of a call-by-call run."""

from __future__ import annotations

import signal
import time

import pytest

from coding_framework.sandbox import FunctionCallJob, Limits, Status
from coding_framework.sandbox.speculation import PENDING, Diverged, EndRecording, Recorder, clock_names

COUNTER = "calls = []\ndef f(x):\n    calls.append(x)\n    return [len(calls), x]\n"


def job(program: str, test: str, **kwargs) -> FunctionCallJob:
    return FunctionCallJob(program=program, entry_point="f", test=test, **kwargs)


def test_recorder_keeps_each_calls_request_and_answers_pending():
    recorder = Recorder("f", max_depth=10)
    assert recorder(1, k=[2]) == "anything" and recorder(3) == 4
    assert len(recorder.calls) == 2 and recorder.calls[0] != recorder.calls[1]
    assert PENDING and PENDING == 0 and (PENDING != 0) is False
    with pytest.raises(EndRecording):
        recorder(lambda: 0)  # not plain data: the recording ends there
    assert issubclass(EndRecording, BaseException) and issubclass(Diverged, BaseException)


def test_trusted_code_naming_a_clock_anywhere_is_found():
    assert not clock_names(compile("assert f(1) == 2\nfor i in range(3):\n    f(i)\n", "<t>", "exec"))
    nested = "def check(c):\n    def timed(x):\n        import time\n        return time.monotonic()\n"
    assert clock_names(compile(nested, "<t>", "exec"))
    assert clock_names(compile("from timeit import default_timer\n", "<t>", "exec"))


@pytest.fixture
def judge():
    """A judge object in this process, for its recording run only (no zygote is started)."""
    from coding_framework.sandbox.judge import Judge

    previous = signal.getsignal(signal.SIGALRM)
    yield Judge({})
    signal.signal(signal.SIGALRM, previous)


def test_the_recording_run_finds_the_calls_and_leaves_the_clocks_alone(judge):
    plain = {"entry_point": "f", "setup": "", "test": "for i in range(5):\n    assert f(i) == i\n"}
    timed = {"entry_point": "f", "setup": "", "test": "import time\nassert f(time.time())\n"}
    helper = {"entry_point": "f", "setup": "", "test": "import logging\nlogging.makeLogRecord({})\nf(1)\n"}
    clocks = {name: getattr(time, name) for name in ("time", "monotonic", "perf_counter")}
    limits, deadline = Limits(), time.monotonic() + 5
    assert len(judge._record_calls(plain, limits, deadline)) == 5
    assert judge._record_calls(timed, limits, deadline) == []
    assert judge._record_calls(helper, limits, deadline) == []
    assert all(getattr(time, name) is clock for name, clock in clocks.items())


def test_a_stateful_candidate_sees_the_calls_in_the_order_the_test_makes_them(pool):
    test = "for i in range(50):\n    assert f(i * 3) == [i + 1, i * 3]\n"
    assert pool.run(job(COUNTER, test)).status is Status.PASSED


def test_tests_drawing_random_numbers_get_the_same_numbers_in_both_runs(pool):
    test = ("import random\nfor _ in range(40):\n    x = random.randint(0, 10 ** 9)\n"
            "    assert f(x)[1] == x\n")
    assert pool.run(job(COUNTER, test)).status is Status.PASSED


def test_a_test_whose_calls_change_between_runs_is_run_again_call_by_call(pool):
    # The trusted test counts its own runs in a module that outlives them: the recording run and the
    # real run make different calls, so the real one diverges and the job runs once more, call by call,
    # in a fresh child (whose counter starts again at one).
    # Answers sent for the recorded calls would fail the first assertion; a run that stopped at the
    # divergence would pass; the right verdict fails the second one.
    test = ("import sys\nsys.cf_runs = getattr(sys, 'cf_runs', 0) + 1\n"
            "assert f(sys.cf_runs) == [1, sys.cf_runs]\nassert f(0) == 'wrong'\n")
    verdict = pool.run(job(COUNTER, test))
    assert verdict.status is Status.FAILED and verdict.message == "assert f(0) == 'wrong'"


def test_calls_after_a_failed_assertion_do_not_change_the_verdict(pool):
    # The recording makes both calls (PENDING equals anything); the real test stops at the first one.
    # In the real run the test waits before its first call (not while recording, which has a short
    # budget), so by then the child has also run the second call, which floods stdout past the limit:
    # that must not turn the verdict into output_limit.
    flood = "def f(x):\n    if x == 2:\n        print('y' * (1 << 16))\n    return x\n"
    # A wait that names no clock (a test naming one is never sent ahead; see the timing tests below).
    test = ("if type(f).__name__ != 'Recorder':\n    __import__('select').select([], [], [], 0.3)\n"
            "assert f(1) == 0\nassert f(2) == 2\n")
    verdict = pool.run(job(flood, test, limits=Limits(max_output_bytes=1024)))
    assert verdict.status is Status.FAILED and verdict.message == "assert f(1) == 0"


def test_output_over_the_limit_from_a_call_the_test_took_still_fails_a_passing_test(pool):
    # As above, every answer and all the output are waiting when the test starts; here the output came
    # from the first call, and the test takes every answer: the output limit decides, as it would call
    # by call. (Which call wrote it is not known; a pass with output over the limit never stands.)
    flood = "def f(x):\n    if x == 1:\n        print('y' * (1 << 16))\n    return x\n"
    test = ("if type(f).__name__ != 'Recorder':\n    __import__('select').select([], [], [], 0.3)\n"
            "assert f(1) == 1\nassert f(2) == 2\n")
    verdict = pool.run(job(flood, test, limits=Limits(max_output_bytes=1024)))
    assert verdict.status is Status.OUTPUT_LIMIT, verdict


def test_branches_taken_on_answers_follow_the_real_answers(pool):
    # The recording takes the `==` branch (PENDING equals 5); the real test takes the other one.
    test = ("if f(1)[1] == 5:\n    assert f(2) == 'never'\nelse:\n    assert f(3) == [2, 3]\n")
    assert pool.run(job(COUNTER, test)).status is Status.PASSED


def test_candidate_exceptions_reach_the_test_at_the_right_call(pool):
    program = "def f(x):\n    if x < 0:\n        raise ValueError(x)\n    return x\n"
    test = ("assert f(1) == 1\ntry:\n    f(-1)\nexcept ValueError as e:\n    assert e.args == (-1,)\n"
            "else:\n    raise AssertionError('no exception')\nassert f(2) == 2\n")
    assert pool.run(job(program, test)).status is Status.PASSED


SLOW_SECOND = ("def f(x):\n    if x == 2:\n        __import__('select').select([], [], [], 0.3)\n"
               "    return x\n")
# Between its two calls the real test waits (not the recording run, which has a short budget), so a
# second call sent ahead would be answered already.
PAUSE = ("f(1)\nif type(f).__name__ != 'Recorder':\n    __import__('select').select([], [], [], 0.4)\n")


def test_tests_that_time_the_candidate_see_the_real_duration_of_each_call(pool):
    test = PAUSE + ("import time\nstart = time.perf_counter()\nf(2)\n"
                    "assert time.perf_counter() - start >= 0.25\n")
    verdict = pool.run(job(SLOW_SECOND, test))
    assert verdict.status is Status.PASSED, verdict


def test_clocks_read_through_a_helper_module_also_keep_calls_one_by_one(pool):
    # The test names no clock; logging reads time.time() when it makes a record.
    test = (PAUSE + "import logging\nstart = logging.makeLogRecord({}).created\nf(2)\n"
            "assert logging.makeLogRecord({}).created - start >= 0.25\n")
    verdict = pool.run(job(SLOW_SECOND, test))
    assert verdict.status is Status.PASSED, verdict


def test_the_recording_alarm_fires_again_until_disarmed():
    # Trusted code that swallows the first EndRecording gets another one 5 ms later, and so on.
    from coding_framework.sandbox.judge import _Alarm

    previous = signal.getsignal(signal.SIGALRM)
    alarm = _Alarm()
    fired, give_up = 0, time.monotonic() + 2
    try:
        alarm.arm(time.monotonic(), EndRecording)
        while fired < 3 and time.monotonic() < give_up:
            try:
                while time.monotonic() < give_up:
                    pass
            except EndRecording:
                fired += 1
    finally:
        alarm.disarm()
        signal.signal(signal.SIGALRM, previous)
    assert fired == 3


def test_a_recording_that_never_ends_by_itself_is_cut_off(pool):
    # Answering PENDING sends this loop round forever in the recording run (PENDING + 1 raises, and
    # the test swallows everything, the recorder's own EndRecording included); the real answer ends
    # it at once. The recording must still stop within its budget and the verdict be the real one.
    test = ("while True:\n    try:\n        v = f(1)\n        if v[1] + 1 == 2:\n            break\n"
            "    except BaseException:\n        pass\n")
    verdict = pool.run(job(COUNTER, test, limits=Limits(timeout_s=3)))
    assert verdict.status is Status.PASSED and verdict.duration_s < 2, verdict


def test_a_job_run_twice_is_not_cut_off_by_the_watchdog(monkeypatch):
    # The calls sent ahead were not the test's (it counts its own runs), so the judge runs the job again,
    # call by call, with a full time limit of its own. The pool's watchdog allowed one timeout plus a
    # grace period and killed the judge of such a job, turning its verdict into a timeout.
    from coding_framework.sandbox import SandboxPool
    from coding_framework.sandbox import pool as pool_module

    monkeypatch.setattr(pool_module, "WATCHDOG_GRACE_S", 0.5)
    program = "import time\ndef f(x):\n    if x == 0:\n        time.sleep(1.5)\n    return x\n"
    test = ("import sys\nsys.cf_runs = getattr(sys, 'cf_runs', 0) + 1\nassert f(0) == 0\n"
            "assert f(sys.cf_runs) == sys.cf_runs\n")
    limits = Limits(timeout_s=2.0)
    with SandboxPool(workers=1, limits=limits) as pool:
        started = time.monotonic()
        verdict = pool.run(job(program, test))
        took = time.monotonic() - started
    assert verdict.status is Status.PASSED, verdict
    assert took > limits.timeout_s + 0.5  # it did run twice


def test_a_failing_child_answers_every_call_sent_ahead_before_it_is_stopped(pool):
    # Killed at the first failing assertion, a child learned which of its answers were wrong (it
    # survived the right ones) and could leave that for the next sample of the task. Now it answers
    # every call sent ahead, pass or fail; the verdict is still the first failing assertion's.
    program = ("import select\ndef f(x):\n    select.select([], [], [], 0.05)\n"
               "    print('answered', x, flush=True)\n    return x\n")
    test = "".join(f"assert f({i}) == {i if i != 2 else -1}\n" for i in range(6))
    verdict = pool.run(job(program, test))
    assert verdict.status is Status.FAILED and verdict.message == "assert f(2) == -1", verdict
    assert verdict.stdout.split("\n")[:6] == [f"answered {i}" for i in range(6)], verdict.stdout


# The child's reader of the channel holds requests sent ahead that it has not handled yet: a candidate
# that looks (gc) knows whether its calls were sent ahead (the first run) or come one by one (a run
# again after a divergence), and answers wrongly only in the first.
RUN_AWARE = ("import gc\ndef f(x):\n    global AHEAD\n    if 'AHEAD' not in globals():\n"
             "        chans = [o for o in gc.get_objects() if type(o).__name__ == 'FdChannel']\n"
             "        AHEAD = any(len(c._buffer) > c._pos for c in chans)\n"
             "    return -x if AHEAD and x == 1 else x\n")


def test_a_failing_run_judged_again_gets_no_second_try_at_the_calls_it_took(pool):
    # The failing assert's message calls the candidate again (as six HumanEval tests do); the recording
    # never evaluates it, so the real run diverges there and the job runs again call by call. That run
    # once judged every call afresh: a candidate telling the runs apart, or one answering at random,
    # got a second try (a coin flip passed HumanEval/77 75% of the time, not 50%).
    test = "for i in range(4):\n    assert f(i) == i, 'got %r' % f(i)\n"
    verdict = pool.run(job(RUN_AWARE, test))
    assert verdict.status is Status.FAILED and verdict.message == "assert f(i) == i, 'got %r' % f(i)  # got 1"
    # Judged from the start call by call (a test naming a clock is never sent ahead) it passes: the
    # failure above comes from the first run's answer, replayed.
    clocked = "import time\n" + test
    assert pool.run(job(RUN_AWARE, clocked)).status is Status.PASSED


class FakeSession:
    """A stand-in for ChildSession in a unit test: answers each live request from a list."""

    def __init__(self, answers):
        self.fatal = None
        self.limits = Limits()
        self.answers = list(answers)
        self.requests = []

    def request(self, body):
        self.requests.append(body)
        return self.answers.pop(0)

    def stop(self, status, message):
        from coding_framework.sandbox.session import Stop

        return Stop(status, message)


def test_replayed_answers_stand_until_the_test_takes_another_path():
    from coding_framework.sandbox import plain_data
    from coding_framework.sandbox.proxy import CandidateProxy, _digest
    from coding_framework.sandbox.session import Stop

    def ok(value):
        return plain_data.encode(("ok", value))

    def request(*args):
        return plain_data.encode_request((args, {}), max_bytes=1 << 20, max_depth=10)

    first = [(request(0), ok("first"), None), (request(1), None, _digest(ok("big"))),
             (request(2), ok(2), None)]
    session = FakeSession([ok("again"), ok("big"), ok("live"), ok("later")])
    proxy = CandidateProxy(session, "f", replay=first)
    assert proxy(0) == "first"  # the child ran the call again; the first run's answer stands
    assert proxy(1) == "big"  # compared by digest: the same answer
    assert proxy(3) == "live"  # not the first run's call 2: its answers stop here
    assert proxy(2) == "later"
    assert session.requests == [request(0), request(1), request(3), request(2)]
    changed = CandidateProxy(FakeSession([ok("other")]), "f", replay=first[1:])
    with pytest.raises(Stop, match="answered call 1 differently when the job was run again"):
        changed(1)

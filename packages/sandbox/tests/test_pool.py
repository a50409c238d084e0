"""The pool's dispatch: jobs queued at a judge, workers pinned to cores."""

from __future__ import annotations

import os

import pytest
from conftest import GOOD, WRONG

from coding_framework.sandbox import FunctionCallJob, ProgramJob, SandboxPool, Status

AFFINITY = ProgramJob(program="import os\nprint(sorted(os.sched_getaffinity(0)))\n")


def test_jobs_queued_behind_a_judge_that_dies_are_run_by_its_successor():
    # The trusted test of the first job kills its own judge; the jobs already queued at that judge
    # must still get their own verdicts from the restarted one.
    suicide = FunctionCallJob(program="def f():\n    return 1\n", entry_point="f",
                              test="import os\nos._exit(3)\n")
    with SandboxPool(workers=1) as pool:
        verdicts = pool.run_many([suicide, GOOD, WRONG, GOOD, WRONG])
    assert verdicts[0].status is Status.SANDBOX_ERROR and "died" in verdicts[0].message
    assert [v.status for v in verdicts[1:]] == [Status.PASSED, Status.FAILED] * 2


def test_a_job_cancelled_before_a_worker_takes_it_never_runs():
    # A worker holds two jobs at its judge; the rest wait in the pool's queue, where cancel() drops them.
    sleep = ProgramJob(program="import time\ntime.sleep(0.5)\nprint('slept')\n")
    with SandboxPool(workers=1) as pool:
        futures = [pool.submit(sleep) for _ in range(4)]
        assert futures[3].cancel() and futures[2].cancel()
        assert [f.result().stdout for f in futures[:2]] == ["slept\n", "slept\n"]
        assert futures[2].cancelled() and futures[3].cancelled()
        assert pool.run(GOOD).status is Status.PASSED  # the worker skipped them and goes on
    for use in (lambda: pool.submit(GOOD), lambda: pool.run_many([])):
        with pytest.raises(RuntimeError, match="closed"):
            use()


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores to pin two workers apart")
def test_each_worker_is_pinned_to_its_own_core_unless_asked_not_to():
    cores = sorted(os.sched_getaffinity(0))
    with SandboxPool(workers=2) as pinned:
        seen = {v.stdout.strip() for v in pinned.run_many([AFFINITY] * 12)}
    assert seen <= {str([core]) for core in cores[:2]} and len(seen) == 2, seen
    with SandboxPool(workers=2, pin_workers=False) as free:
        assert {v.stdout.strip() for v in free.run_many([AFFINITY] * 4)} == {str(cores)}


def test_run_many_without_output_drops_it_in_the_judge_and_keeps_the_verdicts():
    # A long evaluation writes no output: holding up to 2 MiB per verdict until the end would not do.
    loud = FunctionCallJob(program="import sys\ndef f():\n    print('o' * 1000)\n"
                                   "    print('e', file=sys.stderr)\n    return 1\n",
                           entry_point="f", test="assert f() == 1\n")
    program = ProgramJob(program="print(21 * 2)\n", expected_stdout="42")
    with SandboxPool(workers=1) as pool:
        kept = pool.run_many([loud, program])
        dropped = pool.run_many([loud, program, WRONG], keep_output=False)
    assert [(v.status, len(v.stdout), v.stderr) for v in kept] == [
        (Status.PASSED, 1001, "e\n"), (Status.PASSED, 3, "")]
    assert [(v.status, v.stdout, v.stderr) for v in dropped] == [
        (Status.PASSED, "", ""), (Status.PASSED, "", ""), (Status.FAILED, "", "")]


def test_jobs_of_an_interrupted_run_many_are_dropped_not_run_by_close():
    # Ctrl-C while run_many waits: the jobs still queued would otherwise all run before close() returns.
    import signal
    import time

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    slow = ProgramJob(program="import time\ntime.sleep(1)\n")
    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        with SandboxPool(workers=1) as pool:
            signal.setitimer(signal.ITIMER_REAL, 0.3)
            with pytest.raises(KeyboardInterrupt):
                pool.run_many([slow] * 8)
            start = time.monotonic()
        closing = time.monotonic() - start
    finally:
        signal.signal(signal.SIGALRM, previous)
    # At most the two jobs the worker holds finish (~2 s); the six queued (~6 s more) never run.
    assert closing < 4, closing

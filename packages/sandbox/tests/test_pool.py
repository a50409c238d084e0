"""The pool's dispatch: jobs queued at a judge, workers pinned to cores."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import GOOD, WRONG

from coding_framework.sandbox import FunctionCallJob, Limits, ProgramJob, SandboxPool, Status

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


def test_a_job_does_not_wait_behind_a_slow_one_while_another_worker_is_idle():
    # A worker took a second job to queue behind its running one even with the other worker idle: a
    # print waited 4 s behind a loop (red-team round 41, through the HTTP service).
    slow = ProgramJob(program="import time\ntime.sleep(4)\n", limits=Limits(timeout_s=8))
    fast = ProgramJob(program="print(3)\n")
    with SandboxPool(workers=2) as pool:
        for _ in range(2):
            started = time.monotonic()
            behind, quick = pool.submit(slow), pool.submit(fast)
            assert quick.result().stdout == "3\n"
            waited = time.monotonic() - started
            assert waited < 2.5, waited  # not behind the 4 s job
            assert behind.result().status is Status.PASSED


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


def test_run_iter_yields_verdicts_in_order_and_closing_it_drops_the_jobs_not_taken():
    slow = ProgramJob(program="import time\ntime.sleep(1)\n")
    with SandboxPool(workers=1) as pool:
        verdicts = pool.run_iter([GOOD, WRONG, *[slow] * 6, GOOD])
        assert [next(verdicts).status, next(verdicts).status] == [Status.PASSED, Status.FAILED]
        verdicts.close()
        start = time.monotonic()
    closing = time.monotonic() - start
    assert closing < 4, closing  # as above: the queued slow jobs (6 s) never ran
    with pytest.raises(RuntimeError, match="closed"):
        pool.run_iter([])


def _descendants(root: int) -> set[int]:
    """Live (not zombie) processes below `root`, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        fields = _stat(int(entry))
        if fields[:1] not in ([], ["Z"]):
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = set(), [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            found.add(pid)
            todo.append(pid)
    return found


def _stat(pid: int) -> list[str]:
    """/proc/PID/stat's fields after the command name: state, ppid, ... ([] once the pid is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            stat = fh.read()
    except OSError:
        return []
    return stat[stat.rindex(")") + 2:].split()


def _alive(pid: int) -> bool:
    return _stat(pid)[:1] not in ([], ["Z"])


def test_a_pool_killed_mid_job_leaves_no_sandbox_process_running():
    # The job would run for a minute; the pool's process is SIGKILLed while it runs. Its judge, zygotes
    # and the sample must all be gone within seconds (judge.py's _Lifeline), not when the job times out,
    # and the job queued behind it must never start.
    script = (
        "import sys, time\n"
        "from coding_framework.sandbox import Limits, ProgramJob, SandboxPool\n"
        "pool = SandboxPool(workers=1)\n"
        "job = ProgramJob(program='import time\\ntime.sleep(60)\\n', limits=Limits(timeout_s=90))\n"
        "for _ in range(2):\n"
        "    pool.submit(job)\n"
        "print('started', flush=True)\n"
        "time.sleep(300)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, env=env, text=True)
    try:
        assert proc.stdout.readline() == "started\n"
        deadline = time.monotonic() + 30
        while len(tree := _descendants(proc.pid)) < 4:  # judge, outer and inner zygote, the sample
            assert time.monotonic() < deadline, f"the sample did not start: {tree}"
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
    killed = time.monotonic()
    while (left := {pid for pid in tree if _alive(pid)}) and time.monotonic() - killed < 10:
        time.sleep(0.05)
    assert not left, f"still running {time.monotonic() - killed:.1f} s after the pool died: {left}"


def test_a_zygote_killed_mid_job_is_a_prompt_sandbox_error_and_is_replaced():
    # (The kernel's OOM killer may pick a zygote.) The judge must say so at once, not poll the dead
    # zygote's socket until the job's time limit, and the next job must run in a new zygote.
    sleep = ProgramJob(program="import time\ntime.sleep(60)\n", limits=Limits(timeout_s=90))
    with SandboxPool(workers=1) as pool:
        future = pool.submit(sleep)
        judge = pool._workers[0].proc.pid
        deadline = time.monotonic() + 30
        while len(tree := _descendants(judge)) < 3:  # outer and inner zygote, the sample
            assert time.monotonic() < deadline, f"the sample did not start: {tree}"
            time.sleep(0.05)
        outer = next(pid for pid in tree if _stat(pid)[1] == str(judge))  # the judge's own child
        os.kill(outer, signal.SIGKILL)
        killed = time.monotonic()
        verdict = future.result(timeout=30)
        assert time.monotonic() - killed < 5
        assert verdict.status is Status.SANDBOX_ERROR and "zygote is gone" in verdict.message
        assert pool.run(GOOD).status is Status.PASSED

"""Limits, jobs and the language table reject bad input with messages that say what to do."""

from __future__ import annotations

import pytest

from coding_framework.sandbox import FunctionCallJob, Limits, ProgramJob, Status, UnittestJob, Verdict
from coding_framework.sandbox.languages import LANGUAGES, get_language


def test_limits_defaults_are_sane():
    limits = Limits()
    assert limits.timeout_s > 0 and limits.memory_mb >= 256 and limits.max_output_bytes >= 1 << 16
    assert limits.effective_cpu_s == 10
    assert Limits(timeout_s=2.5).effective_cpu_s == 3
    assert Limits(cpu_s=1.2).effective_cpu_s == 2
    assert Limits.from_dict(limits.to_dict()) == limits


@pytest.mark.parametrize(("cores", "expected"), [(2, 64), (48, 64), (64, 80), (192, 208), (None, 64)])
def test_default_process_cap_fits_a_default_sized_process_pool(monkeypatch, cores, expected):
    # multiprocessing.Pool() starts os.cpu_count() workers (the host's cores, as the sample sees them)
    # and up to four threads of its own: a fixed cap of 64 failed correct programs on hosts of 60+ cores.
    from coding_framework.sandbox import limits as limits_module

    monkeypatch.setattr(limits_module.os, "cpu_count", lambda: cores)
    assert Limits().max_processes == expected
    assert Limits(max_processes=8).max_processes == 8


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"timeout_s": 0}, "timeout_s"), ({"timeout_s": float("inf")}, "finite"), ({"memory_mb": 10}, "64 MiB"),
    ({"max_processes": 1}, "max_processes"), ({"max_output_bytes": -1}, "max_output_bytes"),
    ({"timeout_s": "5"}, "number"), ({"max_value_depth": 10_000}, "500"), ({"memory_mb": True}, "number"),
    # Past these the child's rlimits overflow or are refused, and every sample would fail to start.
    ({"memory_mb": (1 << 43) - 1}, "above its maximum 1.04858e\\+06 MiB"), ({"cpu_s": 1e300}, "maximum"),
    ({"max_open_files": 1 << 21}, "maximum"), ({"max_file_bytes": 1 << 70}, "maximum"),
])
def test_limits_validation(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        Limits(**kwargs)


def test_limits_from_dict_rejects_unknown_fields():
    with pytest.raises(ValueError, match="unknown Limits fields"):
        Limits.from_dict({"timeout": 1})


def test_job_validation():
    with pytest.raises(ValueError, match="identifier"):
        FunctionCallJob(program="", entry_point="not valid", test="")
    with pytest.raises(TypeError, match="str"):
        FunctionCallJob(program=None, entry_point="f", test="")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Limits"):
        ProgramJob(program="", limits={"timeout_s": 1})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not implemented yet"):
        ProgramJob(program="int main(){}", language="cpp")
    with pytest.raises(ValueError, match="unknown language"):
        ProgramJob(program="", language="cobol")
    with pytest.raises(ValueError, match="identifier"):
        UnittestJob(program="", test="", module_name="a-b")
    # A lone surrogate cannot be fed as stdin (it once crashed the judge: "judge error", worker restart);
    # surrogateescape'd bytes can.
    with pytest.raises(ValueError, match=r"'\\ud800' at position 2, a lone surrogate"):
        ProgramJob(program="", stdin="ab\ud800")
    assert ProgramJob(program="", stdin="a\udc99").stdin == "a\udc99"


def test_language_table_has_python_implemented_and_compiled_rows_shaped():
    assert get_language("python").implemented
    for name in ("cpp", "java", "go", "rust"):
        assert LANGUAGES[name].compile_argv and LANGUAGES[name].run_argv


def test_verdict_round_trip_and_passed():
    verdict = Verdict(Status.FAILED, "assert f(1) == 2", 0.5, "out", "err", None, 0.01, 12.0)
    assert Verdict.from_dict(verdict.to_dict()) == verdict
    assert not verdict.passed and Verdict(Status.PASSED).passed
    assert Status("output_limit") is Status.OUTPUT_LIMIT and Status.PASSED == "passed"


@pytest.mark.parametrize("workers", [0, -1, True, 1.5, 10**9])
def test_pool_refuses_worker_counts_it_cannot_use_before_starting_anything(workers):
    # 10**9 used to build a billion worker records (memory climbing, no message) before failing.
    import os

    from coding_framework.sandbox import SandboxPool

    with pytest.raises(ValueError, match="workers") as caught:
        SandboxPool(workers=workers)
    if workers == 10**9:
        most = max(64, 8 * len(os.sched_getaffinity(0)))
        assert f"at most {most} (8 per core" in str(caught.value)


@pytest.mark.parametrize("floor", [-1, True, 1.5, "512"])
def test_pool_refuses_a_host_memory_floor_that_is_not_a_count_of_mib(floor):
    from coding_framework.sandbox import SandboxPool

    with pytest.raises(ValueError, match=r"host_memory_floor_mb must be an int >= 0 \(0: off\)"):
        SandboxPool(workers=1, host_memory_floor_mb=floor)


def test_the_watchdog_waits_for_every_run_a_job_may_make():
    from coding_framework.sandbox import host_memory
    from coding_framework.sandbox.pool import RUNS_PER_JOB, WATCHDOG_GRACE_S, watchdog_s

    # With a cgroup: a function-call job's two runs. Without (the zygote guards the host's memory): each
    # of the runs of a sample killed for the host's memory, and the waits between them (round 39).
    assert watchdog_s(20.0, {"host_memory_floor_mb": None}) == RUNS_PER_JOB * 20.0 + WATCHDOG_GRACE_S
    guarded = watchdog_s(20.0, {"host_memory_floor_mb": 1205})
    assert guarded == host_memory.ATTEMPTS * (RUNS_PER_JOB * 20.0 + host_memory.WAIT_S) + WATCHDOG_GRACE_S
    assert guarded > 3 * 2 * 20.0
    # And time to replace a zygote whose sample's processes die slowly after the kill: a judge killed
    # for that waited out a sample that had already earned its verdict (round 51).
    from coding_framework.sandbox.session import END_GRACE_S, RESTART_WAIT_S

    assert watchdog_s(3.0, {}) >= RUNS_PER_JOB * 3.0 + END_GRACE_S + RESTART_WAIT_S

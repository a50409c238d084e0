"""The evaluation pipeline with a fake sandbox pool; the real sandbox is in test_sandbox_integration.py."""

import dataclasses
import json
import os
from pathlib import Path
from typing import ClassVar

import pytest

from coding_framework.evals.errors import (
    InputFileError,
    OutputFileError,
    UnknownBenchmarkError,
    UnknownTaskError,
)
from coding_framework.evals.runner import EvalConfig, evaluate_file
from coding_framework.sandbox import FunctionCallJob, Limits, Status, Verdict


class FakePool:
    """Stands in for SandboxPool: the verdict is read off a marker in the completion text. With
    `interrupt_at` = n, the wait for the n-th verdict is interrupted (Ctrl-C) and the jobs after it are
    left unread (`unread`)."""

    instances: ClassVar[list["FakePool"]] = []
    interrupt_at: ClassVar[int | None] = None

    def __init__(self, workers=None, limits=None, **extras):
        self.workers, self.limits, self.extras = workers, limits, extras
        self.jobs: list[FunctionCallJob] = []
        self.closed = False
        self.unread: int | None = None
        FakePool.instances.append(self)

    def run_iter(self, jobs, *, keep_output=True):
        self.kept_output = keep_output
        self.jobs.extend(jobs)
        return self._verdicts(list(jobs))

    def _verdicts(self, jobs):
        read = 0
        try:
            for job in jobs:
                if read == self.interrupt_at:
                    raise KeyboardInterrupt
                marker = job.program.rsplit("#", 1)[-1].strip()
                message = {"failed": "assert candidate(1) == 2", "error": "ValueError: bad"}.get(marker, "")
                yield Verdict(status=Status(marker), message=message, duration_s=0.01)
                read += 1
        finally:
            self.unread = len(jobs) - read

    def close(self):
        self.closed = True


class FakeBrokenPool(FakePool):
    def run_iter(self, jobs, *, keep_output=True):
        raise RuntimeError("worker crashed")


@pytest.fixture(autouse=True)
def _reset():
    FakePool.instances.clear()
    FakePool.interrupt_at = None


def _problems(tmp_path: Path) -> Path:
    rows = [
        {
            "task_id": f"T/{i}",
            "prompt": f"def f{i}(x):\n",
            "entry_point": f"f{i}",
            "test": "def check(c): pass\n",
        }
        for i in range(3)
    ]
    path = tmp_path / "problems.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _samples(tmp_path: Path, plan: list[tuple[str, str]], name="samples.jsonl") -> Path:
    path = tmp_path / name
    rows = [{"task_id": t, "completion": f"    return x  # {m}", "i": i} for i, (t, m) in enumerate(plan)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


PLAN = [
    ("T/0", "passed"),
    ("T/1", "failed"),
    ("T/0", "failed"),
    ("T/2", "timeout"),
    ("T/1", "passed"),
    ("T/2", "error"),
    ("T/0", "passed"),
    ("T/1", "passed"),
    ("T/2", "sandbox_error"),
]


def test_results_follow_input_order_and_keep_keys(tmp_path):
    samples = _samples(tmp_path, PLAN)
    ev = evaluate_file(
        EvalConfig(samples, problem_file=_problems(tmp_path), ks=(1, 2, 3, 4)), pool_factory=FakePool
    )

    assert ev.results_path == tmp_path / "samples.jsonl_results.jsonl"
    rows = [json.loads(line) for line in ev.results_path.read_text().splitlines()]
    assert [r["i"] for r in rows] == list(range(len(PLAN)))
    assert [(r["task_id"], r["status"]) for r in rows] == PLAN
    assert [r["passed"] for r in rows] == [m == "passed" for _, m in PLAN]
    assert rows[1]["result"] == "failed: assert candidate(1) == 2"
    assert rows[3]["result"] == "timed out"
    assert rows[5]["result"] == "error: ValueError: bad"
    assert rows[0]["completion"] == "    return x  # passed"
    assert FakePool.instances[-1].kept_output is False  # outputs are never written: not held either


def test_summary_counts_and_pass_at_k(tmp_path):
    samples = _samples(tmp_path, PLAN)
    ev = evaluate_file(
        EvalConfig(samples, problem_file=_problems(tmp_path), ks=(1, 2, 4)), pool_factory=FakePool
    )
    # T/0: 2 of 3 pass, T/1: 2 of 3, T/2: 0 of 3.
    pass1 = (2 / 3 + 2 / 3 + 0) / 3
    pass2 = (1 + 1 + 0) / 3  # n - c = 1 < 2
    summary = json.loads(ev.summary_path.read_text())
    assert ev.summary_path == tmp_path / "samples.jsonl_results_summary.json"
    assert summary["pass_at_k"] == pytest.approx(
        {"pass@1": pass1, "pass@2": pass2}
    )  # 4 > 3 samples: left out
    assert summary["status_counts"] == {
        "passed": 4,
        "failed": 2,
        "error": 1,
        "timeout": 1,
        "memory": 0,
        "output_limit": 0,
        "sandbox_error": 1,
    }
    assert (summary["n_samples"], summary["n_tasks"], summary["n_problems"]) == (9, 3, 3)
    assert summary["wall_s"] > 0 and summary["samples_per_s"] == pytest.approx(9 / summary["wall_s"])
    assert summary["results_file"] == str(ev.results_path)


def test_jobs_carry_humaneval_semantics_and_the_pool_gets_the_limits(tmp_path):
    samples = _samples(tmp_path, [("T/1", "passed")])
    evaluate_file(
        EvalConfig(samples, problem_file=_problems(tmp_path), workers=3, timeout_s=7.5), pool_factory=FakePool
    )
    (pool,) = FakePool.instances
    assert pool.workers == 3
    assert pool.limits.timeout_s == 7.5
    assert {k: v for k, v in vars(pool.limits).items() if k != "timeout_s"} == {
        k: v for k, v in vars(Limits()).items() if k != "timeout_s"
    }
    (job,) = pool.jobs
    assert job.program == "def f1(x):\n    return x  # passed"
    # The prompt stops before the body: the trusted setup is what of it compiles alone (nothing here).
    assert (job.entry_point, job.setup) == ("f1", "")
    assert pool.closed


def test_the_host_memory_floor_reaches_the_pool_only_when_set(tmp_path):
    problems = _problems(tmp_path)
    for floor in (None, 0, 300):
        FakePool.instances.clear()
        evaluate_file(EvalConfig(_samples(tmp_path, [("T/0", "passed")]), problem_file=problems,
                                 host_memory_floor_mb=floor), pool_factory=FakePool)
        expected = {} if floor is None else {"host_memory_floor_mb": floor}
        assert FakePool.instances[0].extras == expected
    with pytest.raises(ValueError, match="host_memory_floor_mb must be >= 0"):
        EvalConfig(tmp_path / "s.jsonl", host_memory_floor_mb=-1)


def test_default_timeout_is_the_benchmarks(tmp_path):
    evaluate_file(
        EvalConfig(_samples(tmp_path, [("T/0", "passed")]), problem_file=_problems(tmp_path)),
        pool_factory=FakePool,
    )
    assert FakePool.instances[0].limits.timeout_s == 3.0


def test_explicit_output_path(tmp_path):
    out = tmp_path / "out" / "res.jsonl"
    ev = evaluate_file(
        EvalConfig(_samples(tmp_path, PLAN), problem_file=_problems(tmp_path), output_file=out),
        pool_factory=FakePool,
    )
    assert ev.results_path == out and out.exists()
    assert ev.summary_path == tmp_path / "out" / "res_summary.json"


def test_samples_from_a_pipe_need_an_explicit_output_path(tmp_path):
    # Results go beside the samples file by default: beside /dev/stdin they would go to /dev.
    fifo = tmp_path / "samples.fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"not a regular file.*--output"):
        EvalConfig(fifo, problem_file=_problems(tmp_path))
    config = EvalConfig(fifo, problem_file=_problems(tmp_path), output_file=tmp_path / "r.jsonl")
    assert config.output_path == tmp_path / "r.jsonl"


def test_pool_is_closed_when_execution_fails(tmp_path):
    with pytest.raises(RuntimeError, match="worker crashed"):
        evaluate_file(
            EvalConfig(_samples(tmp_path, PLAN), problem_file=_problems(tmp_path)),
            pool_factory=FakeBrokenPool,
        )
    assert FakePool.instances[0].closed
    assert not (tmp_path / "samples.jsonl_results.jsonl").exists()


def test_bad_input_fails_before_any_pool_starts(tmp_path):
    problems = _problems(tmp_path)
    with pytest.raises(UnknownTaskError, match="'T/9'"):
        evaluate_file(
            EvalConfig(_samples(tmp_path, [("T/9", "passed")]), problem_file=problems), pool_factory=FakePool
        )
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "T/0", "completion": ""}\nnot json\n')
    with pytest.raises(InputFileError, match=r"bad\.jsonl:2"):
        evaluate_file(EvalConfig(bad, problem_file=problems), pool_factory=FakePool)
    with pytest.raises(UnknownBenchmarkError):
        evaluate_file(EvalConfig(bad, benchmark="nope"), pool_factory=FakePool)
    assert FakePool.instances == []


def test_outputs_that_would_replace_an_input_or_cannot_be_written_fail_before_any_pool_starts(tmp_path):
    problems = _problems(tmp_path)
    samples = _samples(tmp_path, PLAN).rename(tmp_path / "s_summary.json")
    before = {p: p.read_bytes() for p in (problems, samples)}
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    (tmp_path / "r_summary.json").mkdir()
    os.link(problems, tmp_path / "h.jsonl.partial")  # a hard link to an input is that input
    cases = [
        (tmp_path / "h.jsonl", r"writing .*h\.jsonl\.partial would overwrite the input file .*problems"),
        (problems, r"writing .*problems\.jsonl would overwrite the input file .*problems\.jsonl"),
        # s.jsonl's summary is s_summary.json: here, the samples file itself.
        (tmp_path / "s.jsonl", r"writing .*s_summary\.json would overwrite the input file"),
        (fifo, r"cannot write .*out\.fifo: it exists and is a device, FIFO or socket"),
        (tmp_path / "r.jsonl", r"cannot write .*r_summary\.json: it exists and is a directory"),
        (Path("/proc/r.jsonl"), r"cannot write /proc/r\.jsonl"),
    ]
    for output, message in cases:
        with pytest.raises(OutputFileError, match=message):
            evaluate_file(EvalConfig(samples, problem_file=problems, output_file=output),
                          pool_factory=FakePool)
    assert FakePool.instances == []
    assert {p: p.read_bytes() for p in before} == before and not fifo.is_file()


def test_an_output_over_the_packaged_humaneval_file_is_refused(tmp_path):
    from coding_framework.evals.datasets.humaneval import default_problem_file

    samples = _write_humaneval_samples(tmp_path)
    with pytest.raises(OutputFileError, match=r"would overwrite the input file .*HumanEval\.jsonl\.gz"):
        evaluate_file(EvalConfig(samples, output_file=default_problem_file()), pool_factory=FakePool)
    assert FakePool.instances == []


def _write_humaneval_samples(tmp_path: Path) -> Path:
    path = tmp_path / "he.jsonl"
    path.write_text(json.dumps({"task_id": "HumanEval/0", "completion": "    return True  # passed"}) + "\n")
    return path


@pytest.mark.parametrize(
    "kwargs",
    [
        {"ks": ()},
        {"ks": (0,)},
        {"workers": 0},
        {"timeout_s": 0.0},
        {"timeout_s": -1.0},
        {"output_file": Path("s.jsonl")},
        {"output_file": Path(".")},
    ],
)
def test_config_rejects_bad_values(kwargs):
    with pytest.raises(ValueError):
        EvalConfig(Path("s.jsonl"), **kwargs)


def test_an_interrupted_run_resumes_where_it_stopped_and_only_judges_the_rest(tmp_path):
    samples, problems = _samples(tmp_path, PLAN), _problems(tmp_path)
    clean = evaluate_file(EvalConfig(samples, problem_file=problems,
                                     output_file=tmp_path / "clean.jsonl"),
                          pool_factory=FakePool)
    config = EvalConfig(samples, problem_file=problems, output_file=tmp_path / "r.jsonl")
    partial = tmp_path / "r.jsonl.partial"
    FakePool.interrupt_at = 4
    with pytest.raises(KeyboardInterrupt):
        evaluate_file(config, pool_factory=FakePool)
    first = FakePool.instances[-1]
    assert first.closed and first.unread == len(PLAN) - 4  # the interrupted wait's and those after
    assert not (tmp_path / "r.jsonl").exists()
    assert [json.loads(line)["i"] for line in partial.read_text().splitlines()[1:]] == [0, 1, 2, 3]

    FakePool.interrupt_at = None
    resumed = evaluate_file(config, pool_factory=FakePool)
    assert [j.program for j in FakePool.instances[-1].jobs] == [
        f"def f{task[-1]}(x):\n    return x  # {marker}" for task, marker in PLAN[4:]]
    assert resumed.results == clean.results and resumed.summary.resumed == 4
    assert resumed.summary.pass_at_k == clean.summary.pass_at_k
    assert (tmp_path / "r.jsonl").read_text() == (tmp_path / "clean.jsonl").read_text()
    assert not partial.exists()


def test_a_resumed_run_rejudges_what_changed(tmp_path):
    problems = _problems(tmp_path)
    samples = _samples(tmp_path, PLAN)
    config = EvalConfig(samples, problem_file=problems, output_file=tmp_path / "r.jsonl")
    FakePool.interrupt_at = 6
    with pytest.raises(KeyboardInterrupt):
        evaluate_file(config, pool_factory=FakePool)
    partial = tmp_path / "r.jsonl.partial"
    first = json.loads(partial.read_text().splitlines()[1])
    forged = {**first, "passed": "yes", "status": "error"}  # no record this module writes: ignored
    partial.write_text(partial.read_text() + json.dumps(forged) + "\n" + '{"i": 5, "key": "torn')  # torn
    FakePool.interrupt_at = None
    # Sample 1 now differs (its verdict too): it is judged again; so are those never judged.
    changed = [*PLAN[:1], ("T/1", "passed"), *PLAN[2:]]
    _samples(tmp_path, changed)
    again = evaluate_file(config, pool_factory=FakePool)
    assert again.summary.resumed == 5 and [r.status for r in again.results] == [m for _, m in changed]
    assert len(FakePool.instances[-1].jobs) == len(PLAN) - 5
    # Another time limit is another run: nothing is taken from the file it left.
    FakePool.interrupt_at = 3
    with pytest.raises(KeyboardInterrupt):
        evaluate_file(config, pool_factory=FakePool)
    FakePool.interrupt_at = None
    other = evaluate_file(dataclasses.replace(config, timeout_s=1.5), pool_factory=FakePool)
    assert other.summary.resumed == 0 and len(FakePool.instances[-1].jobs) == len(PLAN)


def test_two_runs_cannot_write_one_results_file_at_once(tmp_path):
    import fcntl

    config = EvalConfig(_samples(tmp_path, PLAN), problem_file=_problems(tmp_path),
                        output_file=tmp_path / "r.jsonl")
    with open(tmp_path / "r.jsonl.partial", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(OutputFileError, match=r"another evaluation is writing the same results"):
            evaluate_file(config, pool_factory=FakePool)
    assert FakePool.instances == []


def test_a_run_started_over_another_runs_partial_file_can_itself_be_resumed(tmp_path):
    # The stale file is started afresh, header first: without it, this run's records were lost too.
    config = EvalConfig(_samples(tmp_path, PLAN), problem_file=_problems(tmp_path),
                        output_file=tmp_path / "r.jsonl")
    FakePool.interrupt_at = 2
    with pytest.raises(KeyboardInterrupt):
        evaluate_file(config, pool_factory=FakePool)
    other = dataclasses.replace(config, timeout_s=1.5)
    FakePool.interrupt_at = 5
    with pytest.raises(KeyboardInterrupt):
        evaluate_file(other, pool_factory=FakePool)
    assert len(FakePool.instances[-1].jobs) == len(PLAN)  # nothing taken from the first run's file
    FakePool.interrupt_at = None
    resumed = evaluate_file(other, pool_factory=FakePool)
    assert resumed.summary.resumed == 5 and len(FakePool.instances[-1].jobs) == len(PLAN) - 5
    assert [r.status for r in resumed.results] == [m for _, m in PLAN]

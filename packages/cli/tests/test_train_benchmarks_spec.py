"""The `benchmarks` section of the train job spec, its schedule, the results it reads back, and the hook's
pass@k plumbing with a fake sandbox pool (named as such) that gives known verdicts."""

from __future__ import annotations

import json
from typing import ClassVar

import pytest
from typer.testing import CliRunner

from coding_framework.cli.dataclass_config import ConfigError
from coding_framework.cli.main import app
from coding_framework.cli.train_benchmarks import BenchmarkHook, is_due, recorded_results, step_dir
from coding_framework.cli.train_spec import BenchmarksConfig, build_job

DATA_ENV = ("CF_EVALS_DATA_DIR", "CF_EVALS_MBPP", "CF_EVALS_HUMANEVAL_PLUS")


@pytest.fixture(autouse=True)
def _no_data_env(monkeypatch):
    for name in DATA_ENV:
        monkeypatch.delenv(name, raising=False)


def test_off_by_default_and_the_keys_build():
    assert build_job().benchmarks == BenchmarksConfig()
    assert BenchmarksConfig().every == 0
    job = build_job(
        overrides=[
            "benchmarks.every=5",
            "benchmarks.names=[humaneval]",
            "benchmarks.limit=3",
            "benchmarks.n_samples=4",
            "benchmarks.temperature=0.8",
            "benchmarks.max_new_tokens=64",
            "benchmarks.ks=[1,2]",
        ]
    )
    b = job.benchmarks
    assert (b.every, b.names, b.limit, b.n_samples, b.temperature, b.max_new_tokens, b.ks) == (
        5, ("humaneval",), 3, 4, 0.8, 64, (1, 2)
    )


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["benchmarks.every=-1"], r"benchmarks\.every=-1: use a number of steps >= 1, or 0 for off"),
        (["benchmarks.names=[humaneval, human-eval]"], r"unknown benchmark 'human-eval'; use any of .*mbpp"),
        (["benchmarks.names=[]"], r"benchmarks\.names is empty"),
        (["benchmarks.names=[humaneval, humaneval]"], r"names a benchmark twice"),
        (["benchmarks.limit=0"], r"benchmarks\.limit=0: use a positive number"),
        (["benchmarks.n_samples=2"], r"greedy decoding .* set n_samples=1"),
        (["benchmarks.temperature=-1"], r"benchmarks\.temperature=-1\.0: must be a finite number >= 0"),
        (["benchmarks.max_new_tokens=0"], r"benchmarks\.max_new_tokens=0: must be >= 1"),
        (["benchmarks.ks=[0]"], r"benchmarks\.ks=\[0\]: give positive integers"),
        (["benchmarks.top_p=0"], r"benchmarks\.top_p=0\.0: must be in \(0, 1\]"),
        (["benchmarks.problem_files.mbpp=/x.jsonl"], r"entry for 'mbpp', which is not in benchmarks\.names"),
        (["benchmarks.options.humaneval.split=test"], r"humaneval has no option 'split'"),
        (["benchmarks.names=[mbpp]", "benchmarks.options.mbpp.shots=many"], r"shots takes a int"),
        (["benchmarks.evry=2"], r"unknown config key 'benchmarks\.evry'; did you mean 'every'"),
    ],
)
def test_bad_values_are_rejected_when_the_job_is_built(overrides, message):
    with pytest.raises(ConfigError, match=message):
        build_job(overrides=overrides)


def test_missing_data_fails_at_build_only_when_benchmarks_are_on(tmp_path):
    assert build_job(overrides=["benchmarks.names=[mbpp]"]).benchmarks.names == ("mbpp",)  # off: not read
    with pytest.raises(ConfigError, match=r"MBPP data not found: .*set benchmarks\.problem_files\.mbpp=PATH"):
        build_job(overrides=["benchmarks.every=2", "benchmarks.names=[mbpp]"])
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(ConfigError, match=r"benchmarks: mbpp: MBPP file not found: .*nope\.jsonl"):
        on = ["benchmarks.every=2", "benchmarks.names=[mbpp]"]
        build_job(overrides=[*on, f"benchmarks.problem_files.mbpp={missing}"])
    with pytest.raises(ConfigError, match=r"humaneval: .*nope.jsonl \(fix benchmarks\.problem_files\.humane"):
        build_job(overrides=["benchmarks.every=2", f"benchmarks.problem_files.humaneval={missing}"])


def test_the_cli_names_missing_data_before_looking_at_the_model(tmp_path):
    result = CliRunner().invoke(
        app,
        ["train", "benchmarks.every=1", "benchmarks.names=[mbpp]", "--model-path", str(tmp_path / "absent"),
         "--run-dir", str(tmp_path / "run")],
        terminal_width=200,
    )
    assert result.exit_code == 1
    assert "MBPP data not found" in result.output and "no model directory" not in result.output
    assert "Traceback" not in result.output and not (tmp_path / "run").exists()


def test_schedule_every_n_and_the_last_step():
    due = [s for s in range(1, 8) if is_due(s, every=3, max_steps=7, at_end=True)]
    assert due == [3, 6, 7]
    assert [s for s in range(1, 8) if is_due(s, every=3, max_steps=7, at_end=False)] == [3, 6]
    assert [s for s in range(1, 7) if is_due(s, every=3, max_steps=6, at_end=True)] == [3, 6]
    assert not any(is_due(s, every=0, max_steps=7, at_end=True) for s in range(1, 8))


def test_recorded_results_reads_summaries_up_to_a_step(tmp_path):
    for step, name, value in ((2, "humaneval", 0.5), (2, "mbpp", 0.25), (10, "humaneval", 0.75), (4, "x", 1)):
        folder = step_dir(tmp_path, step)
        folder.mkdir(parents=True, exist_ok=True)
        summary = {"benchmark": name, "pass_at_k": {"pass@1": value}}
        (folder / f"{name}_summary.json").write_text(json.dumps(summary))
    (tmp_path / "benchmarks" / "notes").mkdir()
    assert recorded_results(tmp_path) == {
        "2": {"humaneval": 0.5, "mbpp": 0.25},
        "4": {"x": 1.0},
        "10": {"humaneval": 0.75},
    }
    assert list(recorded_results(tmp_path, up_to_step=4)) == ["2", "4"]
    assert recorded_results(tmp_path / "empty") == {}


class FakeAlternatingPool:
    """Fake sandbox pool: its i-th job passes when i is even and fails otherwise; records its creation."""

    created: ClassVar[list[dict]] = []

    def __init__(self, **kwargs):
        FakeAlternatingPool.created.append(kwargs)
        self.seen = 0
        self.closed = False

    def run_iter(self, jobs, *, keep_output=True):
        from coding_framework.sandbox import Status, Verdict

        out = []
        for _ in jobs:
            status = Status.PASSED if self.seen % 2 == 0 else Status.FAILED
            out.append(Verdict(status, "" if status is Status.PASSED else "AssertionError"))
            self.seen += 1
        yield from out

    def close(self):
        self.closed = True


def test_the_hook_turns_verdicts_into_pass_at_k_and_keeps_one_pool(tmp_path):
    from coding_framework.evals.generation.hf_backend import HFBackend
    from coding_framework.rl_core.engine import write_tiny_model

    FakeAlternatingPool.created = []
    config = BenchmarksConfig(every=2, limit=3, n_samples=2, temperature=1.0, max_new_tokens=4, ks=(1, 2, 5))
    hook = BenchmarkHook(config, tmp_path / "run", max_steps=4, seed=1, workers=1,
                         pool_factory=FakeAlternatingPool)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model_dir = write_tiny_model(tmp_path / "model", hidden_size=16, num_layers=1, num_heads=2)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    backend = HFBackend.from_model(model, AutoTokenizer.from_pretrained(model_dir), name="m")
    first = hook.evaluate(backend, 2)
    second = hook.evaluate(backend, 4)
    # 3 problems x 2 samples, verdicts pass/fail alternating: every problem has exactly 1 of 2 passed.
    for metrics in (first, second):
        assert metrics["bench/humaneval/pass@1"] == 0.5
        assert metrics["bench/humaneval/pass@2"] == 1.0
        assert "bench/humaneval/pass@5" not in metrics  # more than the 2 samples per problem
        assert metrics["bench/humaneval/seconds"] > 0
    rows = [json.loads(line) for line in (step_dir(tmp_path / "run", 4) / "humaneval.jsonl").open()]
    assert [r["passed"] for r in rows] == [True, False] * 3
    assert [r["task_id"] for r in rows] == [f"HumanEval/{i}" for i in (0, 0, 1, 1, 2, 2)]
    assert len(FakeAlternatingPool.created) == 1 and FakeAlternatingPool.created[0]["workers"] == 1
    pool = hook._pools["humaneval"].pool
    assert not pool.closed
    hook.close()
    assert pool.closed
    assert recorded_results(tmp_path / "run") == {"2": {"humaneval": 0.5}, "4": {"humaneval": 0.5}}

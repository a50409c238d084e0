"""`coding-framework train` end to end on the project's small model: the issue's acceptance checks.

- A run SIGKILLed after its second checkpoint and resumed with --resume ends with the same reward curve
  and held-out result as an uninterrupted run with the same seed (--max-steps 8 --save-every 2 --seed 7).
- Every run leaves summary.json with the documented fields and an MLflow run with params, per-step
  metrics and the training-curve plot.
Smaller batches and a held-out subset than the default keep this under a few minutes on 2 cores.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "tiny-coder"
ARGS = ["--max-steps", "8", "--save-every", "2", "--seed", "7", "--model-path", str(MODEL)]
SMALL = ["engine.prompts_per_step=4", "engine.group_size=4", "heldout.n_problems=24"]


def _command(run_dir: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "coding_framework.cli.main", "train", *ARGS, *SMALL,
            "--run-dir", str(run_dir), *extra]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env.pop("MLFLOW_TRACKING_URI", None)
    return env


def _train(run_dir: Path, *extra: str) -> dict:
    command = _command(run_dir, *extra)
    result = subprocess.run(command, env=_env(), capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return json.loads((run_dir / "summary.json").read_text())


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> tuple[Path, dict]:
    run_dir = tmp_path_factory.mktemp("uninterrupted") / "run"
    return run_dir, _train(run_dir)


def test_summary_has_the_documented_fields(uninterrupted):
    run_dir, summary = uninterrupted
    assert summary["algorithm"] == "dapo" and summary["steps"] == 8  # the default's settings are the preset's
    assert len(summary["reward_curve"]) == 8
    assert all(isinstance(r, float) for r in summary["reward_curve"])
    heldout = summary["heldout"]
    assert heldout["set"] == "heldout" and heldout["n_problems"] == 24
    assert 0.0 <= heldout["pass_at_1_before"] <= 1.0 and 0.0 <= heldout["pass_at_1_after"] <= 1.0
    assert Path(summary["checkpoint"]) == run_dir / "checkpoints" / "step_8"
    assert (Path(summary["checkpoint"]) / "config.json").is_file()
    assert 0.0 < summary["reward_time_share"] < 1.0
    assert summary["wall_seconds"] > 0


def test_mlflow_run_has_params_metrics_and_plot(uninterrupted):
    from mlflow.tracking import MlflowClient

    run_dir, _ = uninterrupted
    client = MlflowClient(tracking_uri=f"sqlite:///{run_dir / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("coding-framework")
    runs = client.search_runs([experiment.experiment_id])
    assert len(runs) == 1
    run = runs[0]
    assert run.info.status == "FINISHED"
    assert run.data.params["job.engine.seed"] == "7"
    history = client.get_metric_history(run.info.run_id, "reward/mean")
    assert sorted(m.step for m in history) == list(range(1, 9))
    plots = [a.path for a in client.list_artifacts(run.info.run_id, "plots")]
    assert "plots/training_curves.png" in plots


def test_sigkill_after_second_checkpoint_then_resume_matches(uninterrupted, tmp_path):
    _, reference = uninterrupted
    run_dir = tmp_path / "run"
    process = subprocess.Popen(_command(run_dir), env=_env(), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    second = run_dir / "checkpoints" / "step_4"
    deadline = time.monotonic() + 600
    try:
        while not (second / "engine_state.json").exists() and process.poll() is None:
            assert time.monotonic() < deadline, "no second checkpoint within 10 minutes"
            time.sleep(0.2)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert not (run_dir / "summary.json").exists(), "the run finished before it could be killed"
    resumed = _train(run_dir, "--resume")
    assert resumed["reward_curve"] == reference["reward_curve"]
    assert resumed["heldout"] == reference["heldout"]


def test_the_validation_set_is_measured_when_asked(tmp_path):
    from coding_framework.agents import load_heldout_set, load_validation_set

    run_dir = tmp_path / "run"
    command = [sys.executable, "-m", "coding_framework.cli.main", "train", "--max-steps", "1",
               "--model-path", str(MODEL), "engine.prompts_per_step=2", "engine.group_size=2",
               "benchmarks.at_start=false", "heldout.set=validation", "heldout.n_problems=5",
               "logging.mlflow=off", "--run-dir", str(run_dir)]
    result = subprocess.run(command, env=_env(), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["heldout"]["set"] == "validation" and summary["heldout"]["n_problems"] == 5
    measured = set(json.loads((run_dir / "heldout_before.json").read_text())["per_task"])
    assert measured == {p.id for p in load_validation_set()[:5]}
    assert not measured & {p.id for p in load_heldout_set()}
    assert "measuring validation pass@1" in result.stdout and "held-out" not in result.stdout
    # Resuming it with another evaluation set would compare before and after on different problems.
    mismatched = [arg for arg in command if arg != "heldout.set=validation"]
    mismatched[mismatched.index("--max-steps") + 1] = "2"
    resumed = subprocess.run([*mismatched, "--resume"], env=_env(), capture_output=True, text=True,
                             timeout=600)
    assert resumed.returncode == 1, resumed.stdout[-2000:] + resumed.stderr[-2000:]
    assert "holds pass@1 of other problems than this run's held-out set" in " ".join(resumed.stderr.split())
    assert not (run_dir / "checkpoints" / "step_2").exists()

"""W&B in offline mode writing a real run directory inside the run dir."""

import json
import time

import pytest
import wandb

from coding_framework.monitor import RunLogger, SinkStartError
from coding_framework.monitor.state import STATE_FILE
from coding_framework.monitor.wandb_sink import wait_for_a_new_offline_dir, wandb_mode


def test_offline_run_files_and_resume(local_config, tmp_path):
    config = local_config(console="off", wandb="on", experiment="cf-tests")
    plot = tmp_path / "curve.png"
    plot.write_bytes(b"\x89PNG\r\n\x1a\n" + b"0" * 100)

    with RunLogger(config) as run:
        sink = run.sink("wandb")
        assert sink.mode == "offline"
        run.log_params({"algo": {"name": "grpo"}})
        run.set_tags({"stage": "smoke"})
        for step in range(3):
            run.log_metrics({"reward/mean": 0.5 * step, "pass@1": 0.1}, step=step)
        run.log_artifact(plot, "plots")
        run_id, files_dir = sink.run_id, sink.files_dir
        assert tuple(sink.run.tags) == ("stage=smoke",)
        assert sink.run.config["algo.name"] == "grpo"

    wandb_dir = config.run_dir / "wandb"
    (offline,) = wandb_dir.glob(f"offline-run-*-{run_id}")
    assert files_dir.parent == offline
    log_file = offline / f"run-{run_id}.wandb"
    assert log_file.is_file() and log_file.stat().st_size > 0
    copied = files_dir / "plots" / "curve.png"
    assert copied.is_file() and not copied.is_symlink() and copied.read_bytes() == plot.read_bytes()
    assert json.loads((config.run_dir / STATE_FILE).read_text())["wandb"] == {"run_id": run_id}

    with RunLogger(local_config(console="off", wandb="on", experiment="cf-tests", resume=True)) as run:
        assert run.sink("wandb").run_id == run_id
        run.log_metrics({"reward/mean": 2.0}, step=3)
    assert len(list(wandb_dir.glob(f"offline-run-*-{run_id}"))) == 2


def test_mode_is_offline_unless_a_key_or_explicit_mode():
    assert wandb_mode({}) == "offline"
    assert wandb_mode({"WANDB_API_KEY": "k"}) == "online"
    assert wandb_mode({"WANDB_API_KEY": "k", "WANDB_MODE": "offline"}) == "offline"
    assert wandb_mode({"WANDB_MODE": "disabled"}) == "disabled"


def test_init_failure_is_a_warning_in_auto_and_an_error_in_on(local_config, monkeypatch, caplog):
    def fake_failing_init(**kwargs):
        raise wandb.errors.CommError("cannot reach api.wandb.ai")

    monkeypatch.setattr(wandb, "init", fake_failing_init)
    with RunLogger(local_config("auto", console="off", wandb="auto")) as run:
        assert run.active_sinks == ("jsonl",)
        assert "cannot reach api.wandb.ai" in run.disabled["wandb"]
        run.log_metrics({"x": 1.0}, step=0)
    assert "wandb sink is off for this run" in caplog.text
    with pytest.raises(SinkStartError, match="wandb sink could not start: CommError"):
        RunLogger(local_config("on", console="off", wandb="on"))


def test_a_resume_never_starts_in_the_second_of_an_existing_offline_dir(tmp_path):
    """W&B would reuse that directory and drop what the resumed run logs."""
    taken = time.strftime("%Y%m%d_%H%M%S")
    (tmp_path / f"offline-run-{taken}-abc").mkdir()
    wait_for_a_new_offline_dir(tmp_path, "abc")
    assert time.strftime("%Y%m%d_%H%M%S") != taken
    started = time.monotonic()
    wait_for_a_new_offline_dir(tmp_path, "other-id")
    assert time.monotonic() - started < 0.1

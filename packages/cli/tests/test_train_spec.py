from pathlib import Path

import pytest
from typer.testing import CliRunner

from coding_framework.cli.dataclass_config import ConfigError
from coding_framework.cli.main import app
from coding_framework.cli.train_spec import (
    ALGORITHM_PRESETS,
    TrainJob,
    algorithm_label,
    build_job,
    default_config,
)


def test_packaged_default_builds_and_is_grpo():
    job = build_job()
    assert isinstance(job, TrainJob)
    assert job.engine.algorithm == "grpo"
    assert job.model_path == Path(default_config()["model_path"])


def test_precedence_defaults_file_preset_overrides_flags(tmp_path):
    config = tmp_path / "job.yaml"
    config.write_text("engine:\n  lr: 0.01\n  seed: 1\n  max_steps: 5\n")
    job = build_job(
        config_file=config,
        overrides=["engine.seed=2", "heldout.n_problems=7"],
        algorithm="rloo",
        flags={"engine": {"seed": 3}},
    )
    assert job.engine.lr == 0.01  # file over defaults
    assert job.engine.algorithm == "rloo"  # preset
    assert job.engine.seed == 3  # flag over override over file
    assert job.engine.max_steps == 5
    assert job.heldout.n_problems == 7


@pytest.mark.parametrize("name", sorted(ALGORITHM_PRESETS))
def test_every_preset_builds_a_valid_engine_config(name):
    job = build_job(algorithm=name)
    for key, value in ALGORITHM_PRESETS[name].items():
        assert getattr(job.engine, key) == value


def test_a_preset_means_the_same_over_any_config_and_summaries_name_it():
    default = build_job().engine
    assert algorithm_label(default) == "dapo"  # the embedded default amounts to DAPO's settings
    plain = build_job(algorithm="grpo").engine
    assert (plain.dynamic_sampling, plain.clip_ratio_high, plain.clip_ratio_low) == (False, None, None)
    assert algorithm_label(plain) == "grpo"
    assert algorithm_label(build_job(overrides=["engine.clip_ratio_high=0.3"]).engine) == "grpo"  # no preset
    assert algorithm_label(build_job(algorithm="ppo").engine) == "ppo"
    assert build_job().resolved_run_dir().name.startswith("train-dapo-s0-")


def test_ppo_preset_uses_a_value_head():
    assert build_job(algorithm="ppo").engine.uses_value_head


def test_unknown_algorithm_lists_presets():
    with pytest.raises(ConfigError, match=r"unknown --algorithm 'ppoo'.*grpo.*dapo"):
        build_job(algorithm="ppoo")


def test_misspelled_nested_key_is_rejected():
    with pytest.raises(ConfigError, match=r"'engine\.learning_rate'"):
        build_job(overrides=["engine.learning_rate=0.1"])


def test_engine_validation_reaches_the_user():
    with pytest.raises(ConfigError, match="group_size"):
        build_job(overrides=["engine.group_size=0"])


def test_heldout_set_is_heldout_or_validation():
    assert build_job().heldout.set == "heldout"
    assert build_job(overrides=["heldout.set=validation"]).heldout.set == "validation"
    with pytest.raises(ConfigError, match=r"heldout\.set='test'"):
        build_job(overrides=["heldout.set=test"])


def test_heldout_greedy_needs_one_sample():
    with pytest.raises(ConfigError, match="n_samples=1"):
        build_job(overrides=["heldout.n_samples=4", "heldout.temperature=0"])


def _run(*args):
    return CliRunner().invoke(app, ["train", *args], terminal_width=200)


def test_cli_resume_needs_run_dir():
    result = _run("--resume")
    assert result.exit_code == 1
    assert "--resume needs --run-dir" in result.output


def test_cli_missing_model_dir_is_one_line(tmp_path):
    result = _run("--model-path", str(tmp_path / "absent"), "--run-dir", str(tmp_path / "run"))
    assert result.exit_code == 1
    assert "no model directory at" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "run").exists()


def test_cli_bad_override_is_one_line(tmp_path):
    result = _run("engine.nope=1", "--run-dir", str(tmp_path / "run"))
    assert result.exit_code == 1
    assert "unknown config key 'engine.nope'" in result.output

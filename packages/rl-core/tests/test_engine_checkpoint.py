"""Checkpoints: atomic writes, incomplete ones ignored, RNG capture, pruning, resume refusals."""

import json
import random

import numpy as np
import pytest
import torch

from coding_framework.rl_core.engine import (
    CharacterTargetEnvironment,
    EngineConfig,
    Trainer,
    capture_rng,
    latest_checkpoint,
    list_checkpoints,
    prune_checkpoints,
    read_engine_state,
    read_trainer_state,
    restore_rng,
    save_checkpoint,
)

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def loaded(model_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return (
        AutoModelForCausalLM.from_pretrained(str(model_dir), local_files_only=True),
        AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True),
    )


def _save(run_dir, step, loaded, **engine_state):
    model, tokenizer = loaded
    return save_checkpoint(
        run_dir,
        step,
        model=model,
        tokenizer=tokenizer,
        trainer_state={"step": step, "x": torch.arange(3)},
        engine_state={"step": step, **engine_state},
    )


def test_a_checkpoint_is_a_model_dir_plus_state(tmp_path, loaded):
    path = _save(tmp_path, 3, loaded, note="hi")
    assert path == tmp_path / "checkpoints" / "step_3"
    names = {p.name for p in path.iterdir()}
    assert {"config.json", "model.safetensors", "trainer_state.pt", "engine_state.json"} <= names
    assert read_engine_state(path)["note"] == "hi"
    assert torch.equal(read_trainer_state(path)["x"], torch.arange(3))
    assert latest_checkpoint(tmp_path) == path
    assert not [p for p in (tmp_path / "checkpoints").iterdir() if p.name.startswith(".")]


def test_leftovers_and_incomplete_dirs_are_ignored(tmp_path, loaded):
    _save(tmp_path, 2, loaded)
    root = tmp_path / "checkpoints"
    # A crash mid-write leaves a hidden temp dir; a half-copied step dir lacks engine_state.json.
    (root / ".tmp-step_4-deadbeef").mkdir()
    (root / ".tmp-step_4-deadbeef" / "config.json").write_text("{}")
    (root / "step_6").mkdir()
    (root / "step_6" / "trainer_state.pt").write_bytes(b"partial")
    (root / "step_x").mkdir()
    assert latest_checkpoint(tmp_path) == root / "step_2"
    assert [s for s, _ in list_checkpoints(tmp_path)] == [2]
    _save(tmp_path, 4, loaded)  # the next save sweeps the temp leftovers
    assert not (root / ".tmp-step_4-deadbeef").exists()
    assert latest_checkpoint(tmp_path) == root / "step_4"


def test_a_failing_save_leaves_the_previous_checkpoint_as_latest(tmp_path, loaded):
    _save(tmp_path, 2, loaded)

    class Unserialisable:
        pass

    model, tokenizer = loaded
    with pytest.raises(TypeError, match="not JSON-able"):
        save_checkpoint(
            tmp_path,
            4,
            model=model,
            tokenizer=tokenizer,
            trainer_state={},
            engine_state={"environment": Unserialisable()},
        )
    assert latest_checkpoint(tmp_path).name == "step_2"
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["step_2"]


def test_resaving_a_step_replaces_it_whole(tmp_path, loaded):
    _save(tmp_path, 2, loaded, version=1)
    _save(tmp_path, 2, loaded, version=2)
    assert read_engine_state(latest_checkpoint(tmp_path))["version"] == 2
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["step_2"]


def test_prune_keeps_the_newest(tmp_path, loaded):
    for step in (1, 2, 3):
        _save(tmp_path, step, loaded)
    deleted = prune_checkpoints(tmp_path, keep=2)
    assert [p.name for p in deleted] == ["step_1"]
    assert [s for s, _ in list_checkpoints(tmp_path)] == [2, 3]


def test_rng_states_round_trip(tmp_path):
    generator = torch.Generator().manual_seed(5)
    random.seed(1)
    np.random.seed(2)
    torch.manual_seed(3)
    np.random.normal()  # leaves a cached gaussian in NumPy's state
    state = capture_rng({"g": generator})
    torch.save(state, tmp_path / "rng.pt")
    expected = (
        random.random(),
        np.random.normal(),
        torch.rand(1).item(),
        torch.rand(1, generator=generator).item(),
    )
    random.seed(9)
    np.random.seed(9)
    torch.manual_seed(9)
    generator.manual_seed(9)
    restore_rng(torch.load(tmp_path / "rng.pt", weights_only=True), {"g": generator})
    got = (
        random.random(),
        np.random.normal(),
        torch.rand(1).item(),
        torch.rand(1, generator=generator).item(),
    )
    assert got == expected
    with pytest.raises(ValueError, match="generator"):
        restore_rng(state, {"g": generator, "other": torch.Generator()})


def _config(**overrides):
    values = dict(
        lr=5e-2,
        device="cpu",
        prompts_per_step=2,
        group_size=4,
        max_new_tokens=6,
        max_steps=3,
        save_every=2,
        num_threads=1,
    )
    values.update(overrides)
    return EngineConfig(**values)


def test_checkpoints_every_n_steps_and_after_the_last(tmp_path, model_dir):
    trainer = Trainer(_config(max_steps=5), model_dir, CharacterTargetEnvironment(), tmp_path)
    trainer.run()
    assert [s for s, _ in list_checkpoints(tmp_path)] == [2, 4, 5]
    state = read_engine_state(latest_checkpoint(tmp_path))
    assert state["step"] == 5 and len(state["history"]) == 5
    assert state["environment"] == trainer.environment.state_dict()
    assert json.loads((latest_checkpoint(tmp_path) / "config.json").read_text())["model_type"] == "llama"


def test_keep_checkpoints_prunes_during_the_run(tmp_path, model_dir):
    Trainer(
        _config(max_steps=4, save_every=1, keep_checkpoints=2),
        model_dir,
        CharacterTargetEnvironment(),
        tmp_path,
    ).run()
    assert [s for s, _ in list_checkpoints(tmp_path)] == [3, 4]


def test_an_existing_run_needs_resume_and_the_same_settings(tmp_path, model_dir):
    Trainer(_config(max_steps=2), model_dir, CharacterTargetEnvironment(), tmp_path).run()
    with pytest.raises(FileExistsError, match="resume=True"):
        Trainer(_config(max_steps=2), model_dir, CharacterTargetEnvironment(), tmp_path)
    with pytest.raises(ValueError, match=r"lr: 0.05 → 0.01"):
        Trainer(_config(max_steps=4, lr=1e-2), model_dir, CharacterTargetEnvironment(), tmp_path, resume=True)
    resumed = Trainer(_config(max_steps=4), model_dir, CharacterTargetEnvironment(), tmp_path, resume=True)
    assert resumed.step == 2 and len(resumed.history) == 2
    assert resumed.resumed_from == tmp_path / "checkpoints" / "step_2"


def test_resume_with_nothing_to_resume_starts_fresh(tmp_path, model_dir):
    trainer = Trainer(_config(), model_dir, CharacterTargetEnvironment(), tmp_path, resume=True)
    assert trainer.step == 0 and trainer.resumed_from is None

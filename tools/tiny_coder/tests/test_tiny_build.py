"""A tiny build (few steps, small sizes) end to end: deterministic, checkpoints equal shorter builds,
and the directory it writes loads with transformers and carries a card naming its command."""

from __future__ import annotations

import dataclasses
import json

import pytest
from transformers import AutoModelForCausalLM, AutoTokenizer

from tools.tiny_coder.build import CARD_FILE, INFO_FILE, command_for, run_build
from tools.tiny_coder.config import BuildConfig
from tools.tiny_coder.files import MODEL_FILES
from tools.tiny_coder.model import parameter_count

TINY = dict(problems=120, vocab_size=300, hidden_size=32, layers=2, heads=2, intermediate_size=64,
            batch_size=8, warmup_steps=2, evaluate=False, log_every=2)


def build(out, **kw):
    config = BuildConfig(out=str(out), **{**TINY, **kw})
    return config, run_build(config, log=lambda line: None)


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    root = tmp_path_factory.mktemp("builds")
    build(root / "a", steps=4)
    build(root / "b", steps=4)
    build(root / "long", steps=6, save_at=(4,), candidates=str(root / "cands"))
    return root


def _bytes(where):
    return {name: (where / name).read_bytes() for name in MODEL_FILES}


def test_same_command_same_bytes(builds):
    assert _bytes(builds / "a") == _bytes(builds / "b")


def test_checkpoint_at_step_k_is_the_build_with_k_steps(builds):
    assert _bytes(builds / "cands" / "step-4") == _bytes(builds / "a")
    assert _bytes(builds / "long")["model.safetensors"] != _bytes(builds / "a")["model.safetensors"]


def test_other_seed_other_model(tmp_path, builds):
    build(tmp_path / "s1", steps=4, seed=1)
    assert _bytes(tmp_path / "s1")["model.safetensors"] != _bytes(builds / "a")["model.safetensors"]


def test_written_dir_loads_and_generates(builds):
    where = builds / "a"
    tokenizer = AutoTokenizer.from_pretrained(where, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(where, local_files_only=True)
    ids = tokenizer(["def f(x):\n    \"\"\"Return x plus 1.\n    \"\"\"\n"], return_tensors="pt")
    out = model.generate(**ids, max_new_tokens=5, do_sample=False)
    assert out.shape[1] <= ids["input_ids"].shape[1] + 5 and out.shape[1] > ids["input_ids"].shape[1]
    assert isinstance(tokenizer.decode(out[0]), str)
    tokenizer_config = json.loads((where / "tokenizer_config.json").read_text())
    assert tokenizer_config["tokenizer_class"] == "PreTrainedTokenizerFast"
    assert tokenizer_config["model_max_length"] == model.config.max_position_embeddings
    info = json.loads((where / INFO_FILE).read_text())
    assert info["parameters"] == parameter_count(model)
    assert info["config"]["steps"] == info["steps"] == 4


def test_cards_name_the_command_that_rebuilds_them(builds):
    long_info = json.loads((builds / "long" / INFO_FILE).read_text())
    cand_info = json.loads((builds / "cands" / "step-4" / INFO_FILE).read_text())
    config = BuildConfig(out=str(builds / "long"), **{**TINY, "steps": 6},
                         candidates=str(builds / "cands"))
    assert long_info["command"] == command_for(config)
    assert cand_info["command"] == command_for(config, steps=4)
    # A candidate's recorded config is that of the build its command describes.
    assert cand_info["config"] == json.loads(json.dumps(dataclasses.asdict(
        dataclasses.replace(config, steps=4))))
    assert long_info["train"]["loss_log"][-1][0] == 6 and cand_info["train"]["loss_log"][-1][0] == 4
    assert cand_info["command"] in (builds / "cands" / "step-4" / CARD_FILE).read_text()
    card = (builds / "long" / CARD_FILE).read_text()
    assert long_info["command"] in card and "Not evaluated" in card
    assert f"{long_info['parameters']:,} parameters" in card

"""The committed models/tiny-coder: loads offline, generates function bodies, matches its card, and its
held-out numbers are reproduced by re-evaluating it in the sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from coding_framework.agents import extract_code, load_heldout_set
from tools.tiny_coder.build import CARD_FILE, COMMAND_PREFIX, INFO_FILE
from tools.tiny_coder.card import render_card
from tools.tiny_coder.evaluate import evaluate_dir, generate_completions
from tools.tiny_coder.files import MODEL_FILES
from tools.tiny_coder.model import parameter_count

MODEL_DIR = Path(__file__).parent.parent.parent.parent / "models" / "tiny-coder"
MAX_BYTES = 8_500_000


@pytest.fixture(scope="module")
def info():
    return json.loads((MODEL_DIR / INFO_FILE).read_text())


@pytest.fixture(scope="module")
def loaded():
    tokenizer = AutoTokenizer.from_pretrained(MODEL_DIR, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(MODEL_DIR, local_files_only=True)
    return model.eval(), tokenizer


def test_directory_holds_the_model_files_and_is_small():
    names = {p.name for p in MODEL_DIR.iterdir()}
    assert set(MODEL_FILES) | {INFO_FILE, CARD_FILE} <= names
    assert sum(p.stat().st_size for p in MODEL_DIR.iterdir()) <= MAX_BYTES


def test_config_and_parameter_count_match_the_card(loaded, info):
    model, tokenizer = loaded
    config = info["config"]
    assert type(model).__name__ == info["architecture"] == "LlamaForCausalLM"
    assert parameter_count(model) == info["parameters"]
    assert 1_000_000 <= info["parameters"] <= 4_000_000
    assert (model.config.hidden_size, model.config.num_hidden_layers, model.config.num_attention_heads,
            model.config.intermediate_size, model.config.vocab_size) == (
        config["hidden_size"], config["layers"], config["heads"], config["intermediate_size"],
        config["vocab_size"])
    assert len(tokenizer) == config["vocab_size"]
    card = (MODEL_DIR / CARD_FILE).read_text()
    assert card == render_card(info), "MODEL_CARD.md is not the rendering of build_info.json"
    assert f"{parameter_count(model):,} parameters" in card


def test_card_names_the_rebuild_command_and_the_sft_split(info):
    card = (MODEL_DIR / CARD_FILE).read_text()
    assert info["command"].startswith(
        f"{COMMAND_PREFIX} --out models/tiny-coder --steps {info['steps']} --seed {info['config']['seed']}")
    assert info["command"] in card
    assert "split='sft'" in info["corpus_source"] and '"sft" split only' in card
    assert info["heldout"]["problems"] == len(load_heldout_set())


def test_generates_function_bodies_offline(loaded):
    model, tokenizer = loaded
    problems = load_heldout_set()[::9]
    completions = generate_completions(model, tokenizer, [p.statement for p in problems], samples=1,
                                       do_sample=False)
    pairs = zip(problems, completions, strict=True)
    bodies = [extract_code(c[0], p.statement, p.entry_point) for p, c in pairs]
    assert sum(b.source == "body" and b.ok for b in bodies) >= 0.8 * len(problems)
    # The default generation config samples (the RL engine's default): it must also stop at EOS.
    ids = tokenizer(problems[0].statement, return_tensors="pt")
    torch.manual_seed(0)
    out = model.generate(**ids)
    assert out.shape[1] - ids["input_ids"].shape[1] <= model.generation_config.max_new_tokens


def test_reevaluation_reproduces_the_cards_numbers(info):
    """Bit-identical on the machine that built it; other CPUs may move a problem or two."""
    held = info["heldout"]
    result = evaluate_dir(str(MODEL_DIR), samples=held["samples"], temperature=held["temperature"],
                          max_new_tokens=info["config"]["max_new_tokens"], seed=info["config"]["seed"])
    assert result.greedy_pass1 == pytest.approx(held["greedy_pass1"], abs=2.5 / held["problems"])
    assert result.sampled["pass@1"] == pytest.approx(held["sampled"]["pass@1"], abs=0.03)

"""Unit checks of the training pieces: loss mask, padding, batch order, schedule, config and flags."""

from __future__ import annotations

import dataclasses
import shlex

import pytest
import torch

from tools.tiny_coder.build import command_for, parse_args
from tools.tiny_coder.config import BuildConfig, field_help
from tools.tiny_coder.corpus import build_corpus
from tools.tiny_coder.model import build_model, parameter_count
from tools.tiny_coder.tokenizer import train_tokenizer
from tools.tiny_coder.train import IGNORE, batch_order, collate, completion_loss, encode_pairs, lr_at

PAIRS = build_corpus(80, seed=1)
TOKENIZER = train_tokenizer([t for p in PAIRS for t in (p.prompt, p.completion)], 300)
SMALL = dict(vocab_size=300, hidden_size=32, layers=2, heads=2, intermediate_size=64, batch_size=8)


def test_labels_cover_exactly_the_completion_and_eos():
    examples = encode_pairs(PAIRS, TOKENIZER, 512)
    for pair, example in zip(PAIRS, examples, strict=True):
        ids, labels = example.input_ids, example.labels
        assert ids[0] == TOKENIZER.bos_token_id and ids[-1] == TOKENIZER.eos_token_id
        trained = [t for t in labels if t != IGNORE]
        assert TOKENIZER.decode(trained[:-1]) == pair.completion and trained[-1] == TOKENIZER.eos_token_id
        n_prompt = labels.index(trained[0])
        assert TOKENIZER.decode(ids[1:n_prompt]) == pair.prompt
        assert list(ids[n_prompt:]) == trained


def test_too_long_pairs_are_refused():
    with pytest.raises(ValueError, match="max_positions=20"):
        encode_pairs(PAIRS, TOKENIZER, 20)


def test_collate_pads_right_and_masks():
    examples = encode_pairs(PAIRS[:3], TOKENIZER, 512)
    ids, mask, labels = collate(examples, TOKENIZER.pad_token_id)
    width = max(len(e.input_ids) for e in examples)
    assert ids.shape == mask.shape == labels.shape == (3, width)
    for row, e in enumerate(examples):
        n = len(e.input_ids)
        assert ids[row, :n].tolist() == list(e.input_ids) and mask[row].sum() == n
        assert (ids[row, n:] == TOKENIZER.pad_token_id).all() and (labels[row, n:] == IGNORE).all()


def test_loss_is_the_mean_over_completion_tokens_only():
    model = build_model(BuildConfig(out="x", **SMALL), TOKENIZER)
    examples = encode_pairs(PAIRS[:4], TOKENIZER, 512)
    ids, mask, labels = collate(examples, TOKENIZER.pad_token_id)
    with torch.no_grad():
        loss = completion_loss(model, ids, mask, labels).item()
        logprobs = torch.log_softmax(model(input_ids=ids, attention_mask=mask).logits, dim=-1)
    terms = []
    for row, e in enumerate(examples):
        first = next(t for t, label in enumerate(e.labels) if label != IGNORE)
        for t in range(first, len(e.input_ids)):  # token t predicted from position t - 1
            terms.append(-logprobs[row, t - 1, e.input_ids[t]].item())
    assert len(terms) == sum(len([x for x in e.labels if x != IGNORE]) for e in examples)
    assert loss == pytest.approx(sum(terms) / len(terms), rel=1e-5)


def test_batch_order_is_seeded_and_each_epoch_a_permutation():
    lengths = [i % 13 for i in range(50)]
    order = batch_order(lengths, 8, 12, seed=5)
    assert order == batch_order(lengths, 8, 12, seed=5) != batch_order(lengths, 8, 12, seed=6)
    assert all(len(b) == 8 for b in order)
    epoch = [i for b in order[:6] for i in b]  # 50 // 8 = 6 batches per epoch
    assert len(epoch) == len(set(epoch)) == 48
    # The first k batches do not depend on how many are asked for.
    assert batch_order(lengths, 8, 4, seed=5) == order[:4]


def test_lr_warms_up_then_stays_constant():
    config = BuildConfig(out="x", lr=1e-3, warmup_steps=4)
    assert [lr_at(s, config) for s in range(6)] == pytest.approx([2.5e-4, 5e-4, 7.5e-4, 1e-3, 1e-3, 1e-3])


def test_model_has_the_configured_size():
    config = BuildConfig(out="x", **SMALL)
    model = build_model(config, TOKENIZER)
    h, i, v, n = 32, 64, 300, 2
    per_layer = 4 * h * h + 3 * h * i + 2 * h
    assert parameter_count(model) == v * h + n * per_layer + h
    assert model.config.tie_word_embeddings and model.config.eos_token_id == TOKENIZER.eos_token_id


@pytest.mark.parametrize(("change", "message"), [
    ({"steps": 0}, "steps=0"),
    ({"hidden_size": 30, "heads": 4}, "does not divide"),
    ({"lr": float("nan")}, "lr=nan"),
    ({"save_at": (10,), "steps": 10}, "outside 1..steps-1"),
    ({"out": ""}, "out is empty"),
])
def test_bad_config_is_rejected_with_a_hint(change, message):
    with pytest.raises(ValueError, match=message):
        BuildConfig(**{"out": "x", **change})


def test_every_field_has_cli_help():
    assert set(field_help()) == {f.name for f in dataclasses.fields(BuildConfig)}


def test_command_round_trips_through_the_flags():
    config = BuildConfig(out="models/tiny-coder", steps=321, seed=7, lr=1e-3, evaluate=False, **SMALL)
    command = command_for(config)
    assert command.startswith(".venv/bin/python -m tools.tiny_coder.build --out models/tiny-coder "
                              "--steps 321 --seed 7 ")
    assert parse_args(shlex.split(command)[3:]) == config
    assert "--steps 5" in command_for(config, steps=5)
    plain = ".venv/bin/python -m tools.tiny_coder.build --out o --steps 600 --seed 0"
    assert command_for(BuildConfig(out="o", steps=600, log_every=7, save_at=(5,))) == plain

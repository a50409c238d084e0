"""EngineConfig: validation messages, registry names, JSON round trip, resume rules, the lr schedule."""

import math
from dataclasses import fields

import pytest

from coding_framework import rl_core
from coding_framework.rl_core.engine import EngineConfig, field_help, lr_multiplier


def test_defaults_are_valid_and_name_registry_entries():
    config = EngineConfig()
    assert config.algorithm in rl_core.ADVANTAGE_ESTIMATORS
    assert config.policy_loss in rl_core.POLICY_LOSSES
    assert config.loss_agg_mode in rl_core.LOSS_AGGREGATIONS
    assert config.kl_estimator in rl_core.KL_ESTIMATORS
    assert not config.uses_reference and not config.uses_value_head and not config.uses_greedy_baseline


@pytest.mark.parametrize("name", list(rl_core.ADVANTAGE_ESTIMATORS))
def test_every_estimator_is_accepted_and_says_what_it_needs(name):
    config = EngineConfig(algorithm=name)
    assert config.uses_value_head == (name == "gae")
    assert config.uses_greedy_baseline == (name == "remax")


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("algorithm", "grop", "valid names: gae, grpo"),
        ("policy_loss", "ppo", "valid names: vanilla"),
        ("loss_agg_mode", "mean", "token-mean"),
        ("kl_estimator", "low_var_kl", "k1, k2, k3"),
        ("kl_mode", "both", "loss, reward"),
        ("group_size", 0, "int >= 1"),
        ("group_size", 2.0, "int >= 1"),
        ("lr", 0.0, "> 0"),
        ("lr", math.nan, "finite"),
        ("temperature", -1.0, "> 0"),
        ("top_p", 1.5, "<= 1.0"),
        ("clip_ratio_low", 1.0, "[0, 1)"),
        ("clip_ratio_c", 1.0, "> 1"),
        ("gamma", 1.5, "<= 1.0"),
        ("device", "tpu", "auto, cpu, cuda"),
        ("dtype", "fp8", "auto, float32"),
        ("adam_betas", (0.9,), "two numbers"),
    ],
)
def test_bad_values_are_rejected_with_the_field_and_a_remedy(field, value, fragment):
    with pytest.raises(ValueError) as err:
        EngineConfig(**{field: value})
    assert field in str(err.value) or "EngineConfig" in str(err.value)
    assert fragment in str(err.value)


def test_cross_field_rules():
    with pytest.raises(ValueError, match="exceeds the 4 samples"):
        EngineConfig(prompts_per_step=2, group_size=2, mini_batches=2, grad_accum=4)
    with pytest.raises(ValueError, match="group_size >= 2"):
        EngineConfig(dynamic_sampling=True, group_size=1)
    with pytest.raises(ValueError, match="inside the generation limit"):
        EngineConfig(max_new_tokens=8, overlong_buffer=9)
    with pytest.raises(ValueError, match="kl_mode='reward'"):
        EngineConfig(kl_coef=0.1, kl_controller="adaptive")


def test_dict_round_trip_and_unknown_keys():
    config = EngineConfig(algorithm="rloo", adam_betas=(0.8, 0.95), kl_coef=0.01, seed=7)
    assert EngineConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ValueError, match="unknown EngineConfig field"):
        EngineConfig.from_dict({"algorithmm": "grpo"})


def test_resume_may_change_only_run_length_and_placement():
    saved = EngineConfig(max_steps=4, seed=1)
    assert EngineConfig(max_steps=8, seed=1, save_every=3, device="cpu").resume_differences(saved) == {}
    assert EngineConfig(max_steps=4, seed=2, lr=1e-4).resume_differences(saved) == {
        "seed": (1, 2),
        "lr": (1e-5, 1e-4),
    }


def test_every_field_has_help_text():
    help_text = field_help()
    assert set(help_text) == {f.name for f in fields(EngineConfig)}
    assert all(text.strip() for text in help_text.values())
    assert help_text["group_size"].startswith("Samples per prompt (G)")


def test_warmup_is_linear_from_the_first_step():
    config = EngineConfig(warmup_steps=4, max_steps=10)
    assert [lr_multiplier(s, config) for s in range(6)] == [0.25, 0.5, 0.75, 1.0, 1.0, 1.0]
    assert lr_multiplier(0, EngineConfig(warmup_steps=0)) == 1.0


def test_decay_after_warmup_by_hand():
    linear = EngineConfig(warmup_steps=2, max_steps=6, lr_decay="linear")
    # After 2 warm-up steps, 4 decay steps: p = 0, 1/4, 2/4, 3/4.
    assert [lr_multiplier(s, linear) for s in range(6)] == [0.5, 1.0, 1.0, 0.75, 0.5, 0.25]
    cosine = EngineConfig(warmup_steps=0, max_steps=4, lr_decay="cosine")
    expected = [0.5 * (1 + math.cos(math.pi * p)) for p in (0, 0.25, 0.5, 0.75)]
    assert [lr_multiplier(s, cosine) for s in range(4)] == pytest.approx(expected, abs=1e-12)

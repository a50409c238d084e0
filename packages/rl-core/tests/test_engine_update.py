"""The update: reward placement, registry advantages, loss decrease, accumulation, every algorithm."""

import pytest
import torch

from coding_framework import rl_core
from coding_framework.rl_core.engine import (
    CharacterTargetEnvironment,
    EngineConfig,
    SampledText,
    ToySegment,
    Trainer,
    UpdateBatch,
    Updater,
    build_token_batch,
    compute_advantages,
    encode_segments,
    forward_stats,
    load_policy,
    place_rewards,
    value_loss,
    write_tiny_model,
)

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return write_tiny_model(
        tmp_path_factory.mktemp("tiny") / "model", hidden_size=32, num_layers=1, num_heads=2
    )


def test_reward_sits_on_the_last_trainable_token():
    mask = torch.tensor([[0, 1, 1, 0, 1, 0], [1, 1, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]], dtype=torch.float32)
    rewards = place_rewards(torch.tensor([2.0, -1.0, 5.0]), mask)
    assert rewards.tolist() == [[0, 0, 0, 0, 2, 0], [0, -1, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]]


def test_value_loss_by_hand():
    values, old = torch.tensor([[1.0, 3.0]]), torch.tensor([[0.0, 0.0]])
    returns, mask = torch.tensor([[0.0, 0.0]]), torch.ones(1, 2)
    # clip 0.5: token 0 max(1, 0.25) = 1, token 1 max(9, 0.25) = 9 → ½·mean = 2.5
    loss = value_loss(
        values, old, returns, mask, clip=0.5, aggregate=rl_core.token_mean, batch=rl_core.LOCAL_BATCH
    )
    assert float(loss) == pytest.approx(2.5)
    returns = torch.tensor([[2.0, 2.0]])  # clipped predictions 0.5 are further off: (1.5², 1.5²) win
    loss = value_loss(
        values, old, returns, mask, clip=0.5, aggregate=rl_core.token_mean, batch=rl_core.LOCAL_BATCH
    )
    assert float(loss) == pytest.approx(0.5 * 2.25)


@pytest.mark.parametrize("name", list(rl_core.ADVANTAGE_ESTIMATORS))
def test_advantages_are_the_registry_functions(name, make_batch):
    b = make_batch(1)
    config = EngineConfig(algorithm=name, gamma=0.9, lam=0.8, grpo_norm_by_std=False)
    advantages, returns = compute_advantages(
        config,
        scores=b.scores,
        group_ids=b.group_ids,
        rewards=b.rewards,
        mask=b.mask,
        values=b.values,
        baselines=b.baselines,
    )
    fn = rl_core.ADVANTAGE_ESTIMATORS[name]
    direct = {
        "gae": lambda: fn(b.rewards, b.values, b.mask, gamma=0.9, lam=0.8)[0],
        "grpo": lambda: rl_core.per_token(fn(b.scores, b.group_ids, norm_by_std=False), b.mask),
        "rloo": lambda: rl_core.per_token(fn(b.scores, b.group_ids), b.mask),
        "reinforce_plus_plus": lambda: fn(b.rewards, b.mask, gamma=0.9)[0],
        "reinforce_plus_plus_baseline": lambda: fn(b.scores, b.group_ids, b.mask),
        "remax": lambda: fn(b.rewards, b.mask, b.baselines)[0],
    }[name]()
    torch.testing.assert_close(advantages, direct.float())
    assert (returns is None) == (name in ("grpo", "rloo", "reinforce_plus_plus_baseline"))


def test_a_missing_input_is_named():
    mask = torch.ones(2, 3)
    with pytest.raises(ValueError, match="'gae' needs 'values'"):
        compute_advantages(
            EngineConfig(algorithm="gae"),
            scores=torch.zeros(2),
            group_ids=torch.zeros(2).long(),
            rewards=torch.zeros(2, 3),
            mask=mask,
        )


def _fixed_batch(policy):
    rows = [("ab", "xxx"), ("ab", "yz"), ("cd", "xyx"), ("cd", "qq")]
    encoded = [
        encode_segments(
            [ToySegment("prompt", p), ToySegment("policy", SampledText(c, c.encode(), False))], policy
        )
        for p, c in rows
    ]
    tokens = build_token_batch(encoded, policy.pad_token_id)
    return UpdateBatch(tokens, torch.tensor([1.0, 0.0, 0.7, 0.1]), torch.tensor([0, 0, 1, 1]))


def _surrogate(policy, batch, old, advantages):
    window = batch.tokens.input_ids.shape[1] - batch.tokens.start
    with torch.no_grad():
        new = forward_stats(policy.model, batch.tokens, window).log_probs
    mask = batch.tokens.response_mask
    return float(rl_core.token_mean(rl_core.ppo_clip_loss(old, new, advantages, mask).per_token, mask))


def test_one_step_decreases_the_loss_on_a_fixed_batch(model_dir):
    config = EngineConfig(lr=1e-2, device="cpu", prompts_per_step=2, group_size=2)
    policy = load_policy(model_dir, config)
    batch = _fixed_batch(policy)
    mask = batch.tokens.response_mask
    window = mask.shape[1]
    with torch.no_grad():
        old = forward_stats(policy.model, batch.tokens, window).log_probs
    advantages, _ = compute_advantages(
        config,
        scores=batch.scores,
        group_ids=batch.group_ids,
        rewards=place_rewards(batch.scores, mask),
        mask=mask,
    )
    before = _surrogate(policy, batch, old, advantages)
    metrics = Updater(policy, config, torch.Generator()).update(batch, 0)
    after = _surrogate(policy, batch, old, advantages)
    assert metrics["loss/policy"] == pytest.approx(before, abs=1e-6)  # on-policy: ratio 1
    assert after < before - 1e-3
    assert metrics["grad_norm"] > 0 and metrics["lr"] == 1e-2 and metrics["update/optimizer_steps"] == 1


@pytest.mark.parametrize("mode", ["token-mean", "seq-mean-token-mean", "seq-mean-token-sum-norm"])
def test_gradient_accumulation_changes_memory_not_maths(model_dir, mode):
    results = []
    for accum in (1, 4):
        config = EngineConfig(
            lr=1e-2,
            device="cpu",
            prompts_per_step=2,
            group_size=2,
            grad_accum=accum,
            loss_agg_mode=mode,
            entropy_coeff=0.01,
        )
        policy = load_policy(model_dir, config)
        metrics = Updater(policy, config, torch.Generator()).update(_fixed_batch(policy), 0)
        results.append((metrics, [p.grad.clone() for p in policy.model.parameters()]))
    (m1, g1), (m4, g4) = results
    assert m1["loss/total"] == pytest.approx(m4["loss/total"], abs=1e-6)
    assert m1["grad_norm"] == pytest.approx(m4["grad_norm"], rel=1e-5)
    assert any(g.abs().max() > 0 for g in g1)
    for a, b in zip(g1, g4, strict=True):  # the accumulated gradient the optimizer stepped with
        torch.testing.assert_close(a, b, atol=1e-7, rtol=1e-4)


def test_non_finite_gradients_skip_the_optimizer_step(model_dir):
    config = EngineConfig(
        lr=1e-2, device="cpu", prompts_per_step=2, group_size=2, algorithm="reinforce_plus_plus"
    )
    policy = load_policy(model_dir, config)
    batch = _fixed_batch(policy)
    batch = UpdateBatch(batch.tokens, torch.tensor([float("inf"), 0.0, 0.0, 0.0]), batch.group_ids)
    before = [p.detach().clone() for p in policy.model.parameters()]
    metrics = Updater(policy, config, torch.Generator()).update(batch, 0)
    assert metrics["update/skipped"] == 1 and metrics["update/optimizer_steps"] == 0
    assert all(torch.equal(a, b) for a, b in zip(before, policy.model.parameters(), strict=True))


VARIANTS = {
    **{name: {"algorithm": name} for name in rl_core.ADVANTAGE_ESTIMATORS},
    "dapo": {
        "dynamic_sampling": True,
        "overlong_buffer": 4,
        "clip_ratio_low": 0.2,
        "clip_ratio_high": 0.28,
        "loss_agg_mode": "token-mean",
    },
    "grpo-kl-loss-entropy-minibatches": {
        "kl_coef": 0.05,
        "entropy_coeff": 0.01,
        "mini_batches": 2,
        "grad_accum": 2,
        "ppo_epochs": 2,
    },
    "ppo-kl-reward-adaptive": {
        "algorithm": "gae",
        "kl_coef": 0.05,
        "kl_mode": "reward",
        "kl_controller": "adaptive",
        "kl_target": 0.01,
        "grad_accum": 3,
    },
    **{
        f"loss-{name}": {"policy_loss": name, "loss_agg_mode": "seq-mean-token-mean"}
        for name in rl_core.POLICY_LOSSES
    },
}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_algorithm_and_setting_trains_a_step(model_dir, tmp_path, variant):
    config = EngineConfig(
        lr=5e-2,
        device="cpu",
        prompts_per_step=2,
        group_size=4,
        max_new_tokens=6,
        max_steps=2,
        save_every=0,
        num_threads=1,
        **VARIANTS[variant],
    )
    # Lower-case letters: about 10% of random bytes, so groups differ and advantages are not all 0.
    env = CharacterTargetEnvironment(target="abcdefghijklmnopqrstuvwxyz", turns=2)
    trainer = Trainer(config, model_dir, env, tmp_path / "run")
    before = [p.detach().clone() for p in trainer.policy.model.parameters()]
    history = trainer.run()
    assert len(history) == 2
    metrics = history[-1]
    assert all(isinstance(v, float) for v in metrics.values())
    assert torch.isfinite(torch.tensor(list(metrics.values()))).all(), metrics
    if metrics["dapo/groups_kept"] > 0:
        assert metrics["update/optimizer_steps"] == config.mini_batches * config.ppo_epochs
    changed = any(
        not torch.equal(a, b) for a, b in zip(before, trainer.policy.model.parameters(), strict=True)
    )
    assert changed
    if config.uses_reference:
        assert metrics["kl"] > 0
    if config.kl_controller == "adaptive":
        assert metrics["kl/coef"] != config.kl_coef
    if config.uses_value_head:
        assert "loss/value" in metrics and "value/mean" in metrics


def test_log_probs_are_those_of_the_sampling_temperature(model_dir):
    """Rollouts drawn at temperature T are trained on with log softmax(logits / T): the ratio, the KL
    and the gradient refer to the distribution the tokens came from (as in VERL's actor)."""
    config = EngineConfig(device="cpu", prompts_per_step=2, group_size=2, temperature=0.5)
    policy = load_policy(model_dir, config)
    batch = _fixed_batch(policy)
    window = batch.tokens.response_mask.shape[1]
    with torch.no_grad():
        logits = policy.model(
            input_ids=batch.tokens.input_ids, attention_mask=batch.tokens.attention_mask
        ).logits[:, -(window + 1) : -1, :].float()
        targets = batch.tokens.input_ids[:, -window:]
        expected = torch.log_softmax(logits / 0.5, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        at_half = forward_stats(policy.model, batch.tokens, window, temperature=0.5).log_probs
        at_one = forward_stats(policy.model, batch.tokens, window).log_probs
        updater = Updater(policy, config, torch.Generator())
        in_update, _ = updater._no_grad_pass(policy.model, batch.tokens, window)
    mask = batch.tokens.response_mask.bool()
    torch.testing.assert_close(at_half[mask], expected[mask], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(in_update[mask], expected[mask], atol=1e-5, rtol=1e-5)
    assert (at_half[mask] - at_one[mask]).abs().max() > 1e-3
    with pytest.raises(ValueError, match="temperature"):
        forward_stats(policy.model, batch.tokens, window, temperature=0.0)

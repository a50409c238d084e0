import math

import pytest
import torch

from coding_framework.rl_core import (
    POLICY_LOSSES,
    entropy_bonus,
    gpg_loss,
    gspo_loss,
    ppo_clip_loss,
    reinforce_loss,
    token_entropy,
    token_mean,
)

RATIOS = [1.5, 0.5, 1.1, 5.0]
ADVANTAGES = [1.0, -1.0, 1.0, -1.0]


def _ppo_case(**kwargs):
    old = torch.zeros(1, 4)
    new = torch.log(torch.tensor([RATIOS]))
    return ppo_clip_loss(old, new, torch.tensor([ADVANTAGES]), torch.ones(1, 4), **kwargs)


def test_ppo_clip_by_hand_with_asymmetric_and_dual_clip():
    out = _ppo_case(clip_low=0.2, clip_high=0.28, clip_c=3.0)
    # r=1.5, A>0: clipped at 1.28 | r=.5, A<0: clipped at .8 | r=1.1: inside | r=5, A<0: dual-clip at 3
    torch.testing.assert_close(out.per_token, torch.tensor([[-1.28, 0.8, -1.1, 3.0]]))
    assert out.metrics["clipfrac"].item() == pytest.approx(0.5)
    assert out.metrics["clipfrac_lower"].item() == pytest.approx(0.25)
    assert out.metrics["approx_kl"].item() == pytest.approx(-sum(math.log(r) for r in RATIOS) / 4, abs=1e-6)


def test_ppo_without_dual_clip_leaves_the_exploded_ratio():
    out = _ppo_case(clip_low=0.2, clip_high=0.28, clip_c=None)
    torch.testing.assert_close(out.per_token, torch.tensor([[-1.28, 0.8, -1.1, 5.0]]))
    assert out.metrics["clipfrac_lower"].item() == 0.0


@pytest.mark.parametrize(("low", "high", "c"), [(0.2, 0.2, 3.0), (0.2, 0.28, 3.0), (0.1, 0.4, 1.5)])
def test_ppo_clip_bounds_are_respected(make_batch, low, high, c):
    b = make_batch(1, drift=1.5)
    log_prob = b.log_prob.clone().requires_grad_()
    out = ppo_clip_loss(
        b.old_log_prob, log_prob, b.advantages, b.mask, clip_low=low, clip_high=high, clip_c=c
    )
    out.per_token.sum().backward()
    valid, a = b.mask.bool(), b.advantages
    ratio = torch.exp(b.log_prob - b.old_log_prob)
    effective = out.per_token / -a  # the ratio the objective actually uses
    eps = 1e-5
    assert (effective[valid & (a > 0)] <= 1 + high + eps).all()
    assert (effective[valid & (a < 0)] >= 1 - low - eps).all()
    assert (effective[valid & (a < 0)] <= c + eps).all()
    # Clipped tokens get no gradient: A>0 above 1+high, A<0 below 1-low or above c.
    frozen = valid & (((a > 0) & (ratio > 1 + high)) | ((a < 0) & ((ratio < 1 - low) | (ratio > c))))
    assert frozen.any() and (~frozen & valid).any()
    assert torch.all(log_prob.grad[frozen] == 0)
    assert torch.all(log_prob.grad[~frozen & valid] != 0)


def test_gspo_uses_one_ratio_per_sequence_with_token_gradients():
    old = torch.zeros(2, 3)
    new = torch.tensor([[0.1, 0.3, 0.0], [0.2, -0.2, 0.6]]).requires_grad_()
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    adv = torch.tensor([[1.0, 1.0, 0.0], [-2.0, -2.0, -2.0]])
    out = gspo_loss(old, new, adv, mask, clip_low=0.5, clip_high=0.5)
    s = torch.exp(torch.tensor([0.2, 0.2]))  # geometric mean of the token ratios of each sequence
    torch.testing.assert_close(
        out.per_token, torch.tensor([[-s[0], -s[0], 0.0], [2 * s[1], 2 * s[1], 2 * s[1]]])
    )
    out.per_token.sum().backward()
    # Each token's gradient is −A·s through its own log-prob only (the GSPO-token form).
    torch.testing.assert_close(new.grad, torch.tensor([[-s[0], -s[0], 0.0], [2 * s[1], 2 * s[1], 2 * s[1]]]))


def test_gspo_clips_the_sequence_ratio():
    old, new = torch.zeros(1, 2), torch.tensor([[0.5, 0.5]])
    out = gspo_loss(old, new, torch.ones(1, 2), torch.ones(1, 2), clip_low=3e-4, clip_high=4e-4)
    torch.testing.assert_close(out.per_token, torch.full((1, 2), -(1 + 4e-4)))
    assert out.metrics["clipfrac"].item() == 1.0


def test_reinforce_and_gpg_are_minus_advantage_times_log_prob(batch):
    expected = -batch.advantages * batch.log_prob * batch.weights * batch.mask
    for fn in (reinforce_loss, gpg_loss):
        out = fn(batch.old_log_prob, batch.log_prob, batch.advantages, batch.mask, weights=batch.weights)
        torch.testing.assert_close(out.per_token, expected)


@pytest.mark.parametrize("name", POLICY_LOSSES)
def test_masked_tokens_contribute_nothing_to_loss_or_gradient(batch, name):
    masked = ~batch.mask.bool()

    def poisoned(t):
        return t.masked_fill(masked, float("nan"))

    log_prob = poisoned(batch.log_prob).requires_grad_()
    out = POLICY_LOSSES[name](
        poisoned(batch.old_log_prob),
        log_prob,
        poisoned(batch.advantages),
        batch.mask,
        weights=poisoned(batch.weights),
    )
    clean = POLICY_LOSSES[name](
        batch.old_log_prob, batch.log_prob, batch.advantages, batch.mask, weights=batch.weights
    )
    torch.testing.assert_close(out.per_token, clean.per_token)
    assert torch.equal(out.per_token[masked], torch.zeros(int(masked.sum())))
    for key, value in out.metrics.items():
        torch.testing.assert_close(value, clean.metrics[key])
    token_mean(out.per_token, batch.mask).backward()
    assert torch.isfinite(log_prob.grad).all()
    assert torch.equal(log_prob.grad[masked], torch.zeros(int(masked.sum())))


@pytest.mark.parametrize("name", POLICY_LOSSES)
def test_weights_scale_each_token(batch, name):
    fn = POLICY_LOSSES[name]
    plain = fn(batch.old_log_prob, batch.log_prob, batch.advantages, batch.mask)
    weighted = fn(batch.old_log_prob, batch.log_prob, batch.advantages, batch.mask, weights=batch.weights)
    torch.testing.assert_close(weighted.per_token, plain.per_token * batch.weights)


def test_bad_hyperparameters_and_shapes_are_rejected(batch):
    args = (batch.old_log_prob, batch.log_prob, batch.advantages, batch.mask)
    with pytest.raises(ValueError, match="clip_c"):
        ppo_clip_loss(*args, clip_c=1.0)
    with pytest.raises(ValueError, match="clip_low"):
        ppo_clip_loss(*args, clip_low=1.0)
    with pytest.raises(ValueError, match="clip_high"):
        gspo_loss(*args, clip_high=-0.1)
    with pytest.raises(ValueError, match="shape mismatch"):
        reinforce_loss(batch.old_log_prob, batch.log_prob, batch.advantages[:, :3], batch.mask)


def test_token_entropy():
    uniform = torch.zeros(2, 3, 5)
    torch.testing.assert_close(token_entropy(uniform), torch.full((2, 3), math.log(5)))
    logits = torch.randn(2, 3, 7, generator=torch.Generator().manual_seed(0))
    p = torch.softmax(logits, -1)
    torch.testing.assert_close(token_entropy(logits), -(p * p.log()).sum(-1))
    peaked = torch.tensor([[[1000.0, 0.0, 0.0]]])
    assert token_entropy(peaked).item() == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(ValueError, match="vocab"):
        token_entropy(torch.zeros(2, 3))


def test_entropy_bonus_is_a_negative_loss_term():
    entropy, mask = torch.tensor([[1.0, 3.0], [2.0, 9.0]]), torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    torch.testing.assert_close(entropy_bonus(entropy, mask, coef=0.01), torch.tensor(-0.01 * 2.0))
    with pytest.raises(ValueError, match="coef"):
        entropy_bonus(entropy, mask, coef=-1.0)

import math

import pytest
import torch

from coding_framework.rl_core import (
    gae_advantages,
    grpo_advantages,
    per_token,
    reinforce_plus_plus_advantages,
    reinforce_plus_plus_baseline_advantages,
    remax_advantages,
    rloo_advantages,
)

T = torch.tensor


def close(actual, expected, atol=1e-6):
    torch.testing.assert_close(actual, torch.as_tensor(expected, dtype=actual.dtype), atol=atol, rtol=0)


# --- hand-computed cases -------------------------------------------------------------------------


def test_grpo_by_hand():
    scores, groups = T([1.0, 0.0, 0.0, 1.0, 5.0]), T([7, 7, 7, 7, 2])
    z = 0.5 / math.sqrt(1 / 3)  # |s − mean| / unbiased std of {1, 0, 0, 1}
    close(grpo_advantages(scores, groups), [z, -z, -z, z, 5.0 / (1 + 1e-6)], atol=1e-5)
    close(grpo_advantages(scores, groups, norm_by_std=False), [0.5, -0.5, -0.5, 0.5, 5.0])


def test_rloo_by_hand():
    # Each score minus the mean of the other two: 1 − 4, 2 − 3.5, 6 − 1.5; a singleton keeps its score.
    close(rloo_advantages(T([1.0, 2.0, 6.0, -2.0]), T([0, 0, 0, 1])), [-3.0, -1.5, 4.5, -2.0])


def test_gae_by_hand():
    rewards, values = T([[0.0, 0.0, 1.0]]), T([[0.5, 0.2, 0.4]])
    adv, ret = gae_advantages(rewards, values, torch.ones(1, 3), gamma=0.9, lam=0.8, normalize=False)
    # δ2 = 1 − .4 = .6; δ1 = .9·.4 − .2 = .16; δ0 = .9·.2 − .5 = −.32; A_t = δ_t + .72·A_{t+1}
    close(adv, [[-0.32 + 0.72 * 0.592, 0.592, 0.6]])
    close(ret, [[0.10624 + 0.5, 0.792, 1.0]])


def test_gae_skips_masked_feedback_tokens():
    # The middle token is environment feedback: its reward and value are never read, and the first
    # token bootstraps from the next *valid* token's value.
    rewards, values, mask = T([[0.0, 9.0, 1.0]]), T([[0.5, 7.0, 0.4]]), T([[1.0, 0.0, 1.0]])
    adv, ret = gae_advantages(rewards, values, mask, gamma=0.9, lam=0.8, normalize=False)
    close(adv, [[-0.14 + 0.72 * 0.6, 0.0, 0.6]])
    close(ret, [[0.292 + 0.5, 0.0, 1.0]])


def test_gae_normalize_whitens_valid_tokens():
    rewards, values, mask = (
        T([[0.0, 0.0, 1.0], [0.0, 2.0, 0.0]]),
        torch.zeros(2, 3),
        T([[1.0, 1, 1], [1, 1, 0]]),
    )
    adv, _ = gae_advantages(rewards, values, mask, gamma=1.0, lam=1.0)
    valid = adv[mask.bool()]
    close(valid.mean(), 0.0)
    close(valid.std(), 1.0, atol=1e-4)


def test_reinforce_plus_plus_returns_by_hand():
    rewards, mask = T([[1.0, 5.0, 2.0]]), T([[1.0, 0.0, 1.0]])
    _, returns = reinforce_plus_plus_advantages(rewards, mask, gamma=0.5)
    close(returns, [[1.0 + 0.5 * 2.0, 0.0, 2.0]])  # the masked 5 is not a reward


def test_reinforce_plus_plus_baseline_by_hand():
    scores, groups = T([1.0, 3.0, 4.0]), T([0, 0, 1])
    mask = T([[1.0, 0.0], [1.0, 0.0], [1.0, 1.0]])
    # centred tokens: −1, 1, 4, 4 (singleton keeps its score); mean 2, unbiased std √6
    expected = [[-3 / math.sqrt(6), 0.0], [-1 / math.sqrt(6), 0.0], [2 / math.sqrt(6), 2 / math.sqrt(6)]]
    close(reinforce_plus_plus_baseline_advantages(scores, groups, mask), expected, atol=1e-5)


def test_remax_by_hand():
    adv, ret = remax_advantages(T([[0.5, 0.0, 1.0]]), torch.ones(1, 3), T([0.7]))
    close(ret, [[1.5, 1.0, 1.0]])
    close(adv, [[0.8, 0.3, 0.3]])


def test_per_token_spreads_over_valid_tokens():
    close(
        per_token(T([2.0, -1.0]), T([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]])), [[2.0, 2.0, 0.0], [0.0, -1.0, -1.0]]
    )


# --- properties ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(
    "estimator",
    [grpo_advantages, lambda s, g: grpo_advantages(s, g, norm_by_std=False), rloo_advantages],
    ids=["grpo", "dr_grpo", "rloo"],
)
def test_group_advantages_are_centred_within_each_group(make_batch, seed, estimator):
    b = make_batch(seed)
    adv = estimator(b.scores, b.group_ids).double()
    for g in b.group_ids.unique():
        members = b.group_ids == g
        if members.sum() > 1:
            assert abs(float(adv[members].sum())) < 1e-5


@pytest.mark.parametrize("seed", range(3))
def test_grpo_advantages_have_unit_std_within_each_group(make_batch, seed):
    b = make_batch(seed)
    adv = grpo_advantages(b.scores, b.group_ids)
    for g in b.group_ids.unique():
        members = b.group_ids == g
        if members.sum() > 1:
            close(adv[members].std(), 1.0, atol=1e-4)


@pytest.mark.parametrize("value", [0.7, 0.9, 0.1, 1.0, 0.0])
def test_a_group_of_identical_scores_gets_exactly_zero(value):
    # 0.7 and 0.9 are not representable in binary: a naive mean leaves ~1e-8 of rounding, which a
    # std of ~1e-8 would blow up to a visible advantage.
    scores = torch.cat([torch.full((7,), value), T([0.0, 1.0])])
    groups = T([0] * 7 + [1, 1])
    assert torch.equal(grpo_advantages(scores, groups)[:7], torch.zeros(7))
    assert torch.equal(rloo_advantages(scores, groups)[:7], torch.zeros(7))
    # Whitening shifts every token by the batch mean, so the constant group's tokens are equal, not 0.
    tokens = reinforce_plus_plus_baseline_advantages(scores, groups, torch.ones(9, 2))
    assert torch.equal(tokens[:7], tokens[:1].expand(7, 2))


def test_group_estimators_ignore_batch_order_and_id_values(make_batch):
    b = make_batch(3)
    perm = torch.randperm(b.size, generator=torch.Generator().manual_seed(1))
    relabelled = b.group_ids * 1000 + 17
    for estimator in (grpo_advantages, rloo_advantages):
        reference = estimator(b.scores, b.group_ids)
        close(estimator(b.scores[perm], relabelled[perm]), reference[perm])


def test_token_estimators_return_zero_under_the_mask_and_never_read_it(batch):
    masked = ~batch.mask.bool()
    poisoned_rewards = batch.dense_rewards.masked_fill(masked, float("nan"))
    poisoned_values = batch.values.masked_fill(masked, float("inf"))
    outputs = {
        "gae": gae_advantages(poisoned_rewards, poisoned_values, batch.mask, gamma=0.95, lam=0.9),
        "reinforce_plus_plus": reinforce_plus_plus_advantages(poisoned_rewards, batch.mask, gamma=0.9),
        "remax": remax_advantages(poisoned_rewards, batch.mask, batch.baselines),
        "reinforce_plus_plus_baseline": (
            reinforce_plus_plus_baseline_advantages(batch.scores, batch.group_ids, batch.mask),
        ),
    }
    for name, tensors in outputs.items():
        for t in tensors:
            assert torch.isfinite(t).all(), name
            assert torch.equal(t[masked], torch.zeros_like(t[masked])), name
    clean = gae_advantages(batch.dense_rewards, batch.values, batch.mask, gamma=0.95, lam=0.9)
    for got, want in zip(outputs["gae"], clean, strict=True):
        close(got, want)


def test_advantages_carry_no_gradient(batch):
    scores = batch.scores.clone().requires_grad_()
    assert not grpo_advantages(scores, batch.group_ids).requires_grad


# --- bad input -----------------------------------------------------------------------------------


def test_bad_shapes_are_reported_by_name(batch):
    with pytest.raises(ValueError, match="group_ids"):
        grpo_advantages(batch.scores, batch.group_ids[:-1])
    with pytest.raises(TypeError, match="integer"):
        rloo_advantages(batch.scores, batch.group_ids.float())
    with pytest.raises(ValueError, match="shape mismatch"):
        gae_advantages(batch.rewards, batch.values[:, :-1], batch.mask)
    with pytest.raises(ValueError, match="baselines"):
        remax_advantages(batch.rewards, batch.mask, batch.baselines[:2])
    with pytest.raises(ValueError, match=r"\(batch, response_length\)"):
        reinforce_plus_plus_advantages(batch.scores, batch.scores)
    with pytest.raises(ValueError, match="empty"):
        grpo_advantages(torch.zeros(0), torch.zeros(0, dtype=torch.long))

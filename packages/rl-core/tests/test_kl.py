import math

import pytest
import torch

from coding_framework.rl_core import (
    KL_ESTIMATORS,
    LOSS_AGGREGATIONS,
    AdaptiveKLController,
    FixedKLController,
    GlobalBatch,
    k1,
    k2,
    k3,
    kl_loss,
    kl_penalized_rewards,
)

LOGP, REF = torch.tensor([[-1.0, -2.0]]), torch.tensor([[-1.5, -1.0]])


def test_estimators_by_hand():
    torch.testing.assert_close(k1(LOGP, REF), torch.tensor([[0.5, -1.0]]))
    torch.testing.assert_close(k2(LOGP, REF), torch.tensor([[0.125, 0.5]]))
    # Δ = ref − logp = −0.5, 1.0: e^Δ − Δ − 1
    torch.testing.assert_close(k3(LOGP, REF), torch.tensor([[math.exp(-0.5) - 0.5, math.exp(1.0) - 2.0]]))


def test_k3_is_clamped_as_verl_does():
    far = k3(torch.tensor([[0.0, -100.0]]), torch.tensor([[-100.0, 0.0]]))
    # Δ = −100 → clamped to −20 → e^−20 + 19 ≈ 19 → clamped to 10; Δ = +100 → e^20 … → 10
    torch.testing.assert_close(far, torch.tensor([[10.0, 10.0]]))


@pytest.mark.parametrize("name", ["k2", "k3"])
def test_k2_and_k3_are_never_negative_and_zero_at_equality(name):
    g = torch.Generator().manual_seed(0)
    a, b = -torch.rand(50, 7, generator=g) * 5, -torch.rand(50, 7, generator=g) * 5
    assert (KL_ESTIMATORS[name](a, b) >= 0).all()
    assert torch.equal(KL_ESTIMATORS[name](a, a), torch.zeros_like(a))


def test_k1_and_k3_are_unbiased_estimates_of_kl():
    # Sample tokens from π over a small vocabulary; E_π[k] must be KL(π‖π_ref) for k1 and k3.
    g = torch.Generator().manual_seed(0)
    pi, ref = torch.softmax(torch.randn(6, generator=g), 0), torch.softmax(torch.randn(6, generator=g), 0)
    exact = float((pi * (pi.log() - ref.log())).sum())
    tokens = torch.multinomial(pi, 200_000, replacement=True, generator=g)
    logp, logr = pi.log()[tokens].unsqueeze(0), ref.log()[tokens].unsqueeze(0)
    for estimator in (k1, k3):
        assert float(estimator(logp, logr).mean()) == pytest.approx(exact, abs=0.01)


def test_kl_loss_is_coef_times_aggregated_estimate(batch):
    for name, estimator in KL_ESTIMATORS.items():
        for mode, aggregate in LOSS_AGGREGATIONS.items():
            expected = 0.1 * aggregate(estimator(batch.log_prob, batch.ref_log_prob), batch.mask)
            got = kl_loss(
                batch.log_prob,
                batch.ref_log_prob,
                batch.mask,
                coef=0.1,
                estimator=estimator,
                aggregate=aggregate,
            )
            torch.testing.assert_close(got, expected, msg=f"{name} {mode}")


def test_kl_loss_ignores_masked_tokens_and_rejects_negative_coef(batch):
    masked = ~batch.mask.bool()
    log_prob = batch.log_prob.masked_fill(masked, float("nan")).requires_grad_()
    value = kl_loss(log_prob, batch.ref_log_prob, batch.mask, coef=1.0)
    value.backward()
    assert torch.isfinite(value) and torch.equal(log_prob.grad[masked], torch.zeros(int(masked.sum())))
    with pytest.raises(ValueError, match="coef"):
        kl_loss(batch.log_prob, batch.ref_log_prob, batch.mask, coef=-1.0)


def test_kl_penalized_rewards_by_hand():
    rewards, mask = torch.tensor([[0.0, 1.0, 7.0]]), torch.tensor([[1.0, 1.0, 0.0]])
    logp, ref = torch.tensor([[-1.0, -1.0, -1.0]]), torch.tensor([[-1.5, -0.5, -9.0]])
    penalised, mean_kl = kl_penalized_rewards(rewards, logp, ref, mask, coef=0.1)
    torch.testing.assert_close(penalised, torch.tensor([[-0.05, 1.05, 7.0]]))  # masked reward unchanged
    assert mean_kl.item() == pytest.approx(0.0)


def test_fixed_controller_never_moves():
    ctrl = FixedKLController(0.05)
    ctrl.update(current_kl=10.0, n_steps=256)
    assert ctrl.value == 0.05


def test_adaptive_controller_moves_towards_target():
    ctrl = AdaptiveKLController(0.1, target=0.05, horizon=1000)
    ctrl.update(current_kl=0.5, n_steps=100)  # far above target: error clipped at +0.2
    assert ctrl.value == pytest.approx(0.1 * (1 + 0.2 * 100 / 1000))
    before = ctrl.value
    ctrl.update(current_kl=0.04, n_steps=100)  # below target: shrinks by (0.04/0.05 − 1)·0.1
    assert ctrl.value == pytest.approx(before * (1 - 0.2 * 0.1))
    with pytest.raises(ValueError, match="horizon"):
        AdaptiveKLController(0.1, target=0.05, horizon=0)
    with pytest.raises(ValueError, match="target"):
        AdaptiveKLController(0.1, target=0.0, horizon=10)


# --- parity with VERL ----------------------------------------------------------------------------

VERL_NAMES = {"k1": ["k1", "kl"], "k2": ["k2", "mse"], "k3": ["k3", "low_var_kl"]}


@pytest.mark.parametrize("drift", [0.3, 30.0])  # 30: far enough to hit k3's clamps
@pytest.mark.parametrize("name", KL_ESTIMATORS)
def test_estimators_match_verl_kl_penalty(make_batch, name, drift):
    core_algos = pytest.importorskip("verl.trainer.ppo.core_algos")
    b = make_batch(2, drift=drift)
    for verl_name in VERL_NAMES[name]:
        ours = KL_ESTIMATORS[name](b.log_prob, b.ref_log_prob)
        theirs = core_algos.kl_penalty(b.log_prob, b.ref_log_prob, kl_penalty=verl_name)
        torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=0)


@pytest.mark.parametrize("mode", LOSS_AGGREGATIONS)
@pytest.mark.parametrize("name", KL_ESTIMATORS)
def test_kl_loss_matches_verl_actor_kl_term(make_batch, name, mode):
    core_algos = pytest.importorskip("verl.trainer.ppo.core_algos")
    b = make_batch(3)
    info = {"dp_size": 2, "batch_num_tokens": 70, "global_batch_size": 30}
    ours = kl_loss(
        b.log_prob,
        b.ref_log_prob,
        b.mask,
        coef=0.02,
        estimator=KL_ESTIMATORS[name],
        aggregate=LOSS_AGGREGATIONS[mode],
        batch=GlobalBatch(dp_size=2, num_tokens=70, num_sequences=30),
    )
    kld = core_algos.kl_penalty(logprob=b.log_prob, ref_logprob=b.ref_log_prob, kl_penalty=name)
    theirs = core_algos.agg_loss(loss_mat=kld, loss_mask=b.mask, loss_agg_mode=mode, **info) * 0.02
    torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=0)


@pytest.mark.parametrize("name", KL_ESTIMATORS)
def test_reward_penalty_matches_verl_apply_kl_penalty(make_batch, name):
    pytest.importorskip("verl")
    from verl import DataProto
    from verl.trainer.ppo import core_algos
    from verl.trainer.ppo.ray_trainer import apply_kl_penalty

    b = make_batch(4)
    ours_ctrl = AdaptiveKLController(0.05, target=0.01, horizon=500)
    theirs_ctrl = core_algos.AdaptiveKLController(init_kl_coef=0.05, target_kl=0.01, horizon=500)
    for step in range(3):
        data = DataProto.from_dict(
            tensors={
                "response_mask": b.mask,
                "token_level_scores": b.dense_rewards + step,
                "old_log_probs": b.log_prob,
                "ref_log_prob": b.ref_log_prob,
            }
        )
        data, metrics = apply_kl_penalty(data, kl_ctrl=theirs_ctrl, kl_penalty=name)
        rewards, mean_kl = kl_penalized_rewards(
            b.dense_rewards + step,
            b.log_prob,
            b.ref_log_prob,
            b.mask,
            coef=ours_ctrl.value,
            estimator=KL_ESTIMATORS[name],
        )
        ours_ctrl.update(mean_kl.item(), n_steps=b.size)
        torch.testing.assert_close(rewards, data.batch["token_level_rewards"], atol=1e-5, rtol=0)
        assert mean_kl.item() == pytest.approx(metrics["actor/reward_kl_penalty"], abs=1e-6)
        assert ours_ctrl.value == pytest.approx(theirs_ctrl.value, rel=1e-9)

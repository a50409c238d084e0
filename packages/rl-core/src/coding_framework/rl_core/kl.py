"""KL divergence to a reference policy: per-token estimators, the KL loss term, the reward penalty.

The estimators take the log-probabilities of the sampled tokens under the trained policy and under the
reference policy, (B, T) each, and return a per-token estimate of KL(π ‖ π_ref) (B, T); they are
Schulman's k1, k2, k3 (J. Schulman, "Approximating KL Divergence", 2020,
http://joschu.net/blog/kl-approx.html). KL can enter training in two ways: as a loss term
(`kl_loss`, VERL's `actor.use_kl_loss`, GRPO's choice) or as a per-token penalty subtracted from the
rewards before advantages (`kl_penalized_rewards`, VERL's `algorithm.use_kl_in_reward`, PPO-RLHF's
choice), whose coefficient a controller may adapt.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .aggregation import LOCAL_BATCH, GlobalBatch, token_mean
from .masking import check_2d, check_shapes, masked_mean
from .registry import Registry

# k3 is exp(Δ) − Δ − 1: clamp Δ so exp stays finite and the estimate so one token cannot dominate
# (VERL's bounds).
_K3_LOG_RATIO_BOUND = 20.0
_K3_VALUE_BOUND = 10.0


def _check(log_prob: torch.Tensor, ref_log_prob: torch.Tensor) -> None:
    check_shapes(log_prob=log_prob, ref_log_prob=ref_log_prob)


def k1(log_prob: torch.Tensor, ref_log_prob: torch.Tensor) -> torch.Tensor:
    """k1 = log π − log π_ref: unbiased, high variance, can be negative per token.

    Shapes: (B, T), (B, T) → (B, T). VERL's `kl` / `k1`.
    """
    _check(log_prob, ref_log_prob)
    return log_prob - ref_log_prob


def k2(log_prob: torch.Tensor, ref_log_prob: torch.Tensor) -> torch.Tensor:
    """k2 = ½ (log π − log π_ref)²: biased, low variance, never negative; its gradient is KL's.

    Shapes: (B, T), (B, T) → (B, T). VERL's `mse` / `k2`.
    """
    _check(log_prob, ref_log_prob)
    return 0.5 * (log_prob - ref_log_prob).square()


def k3(log_prob: torch.Tensor, ref_log_prob: torch.Tensor) -> torch.Tensor:
    """k3 = exp(Δ) − Δ − 1 with Δ = log π_ref − log π: unbiased, low variance, never negative.

    Shapes: (B, T), (B, T) → (B, T). VERL's `low_var_kl` / `k3`, the GRPO paper's KL term.
    Deviation from Schulman: Δ is clamped to ±20 and the estimate to [−10, 10], as in VERL, so one
    token far off the reference cannot overflow or dominate the loss.
    """
    _check(log_prob, ref_log_prob)
    delta = (ref_log_prob - log_prob).clamp(-_K3_LOG_RATIO_BOUND, _K3_LOG_RATIO_BOUND)
    return (torch.exp(delta) - delta - 1).clamp(-_K3_VALUE_BOUND, _K3_VALUE_BOUND)


KLEstimator = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]

KL_ESTIMATORS: Registry = Registry("KL estimator", {"k1": k1, "k2": k2, "k3": k3})


def kl_loss(
    log_prob: torch.Tensor,
    ref_log_prob: torch.Tensor,
    mask: torch.Tensor,
    *,
    coef: float,
    estimator: KLEstimator = k3,
    aggregate=token_mean,
    batch: GlobalBatch = LOCAL_BATCH,
) -> torch.Tensor:
    """KL loss term `coef · aggregate(estimator(log π, log π_ref))`, added to the policy loss.

    Shapes: log_prob, ref_log_prob, mask (B, T) → scalar. Gradients flow through `log_prob`.
    Paper: Shao et al. 2024, "DeepSeekMath" (GRPO), arXiv:2402.03300, eq. 4 (k3 as a loss).
    As VERL (`actor.kl_loss_coef`, `kl_loss_type`), aggregated with the policy loss's mode.
    """
    if coef < 0:
        raise ValueError(f"KL coef must be >= 0 (0 disables the term), got {coef}")
    check_2d("log_prob", log_prob)
    check_shapes(log_prob=log_prob, ref_log_prob=ref_log_prob, mask=mask)
    valid = mask.bool()
    zero = torch.zeros((), dtype=log_prob.dtype, device=log_prob.device)
    estimate = estimator(torch.where(valid, log_prob, zero), torch.where(valid, ref_log_prob, zero))
    return coef * aggregate(estimate, mask, batch=batch)


@torch.no_grad()
def kl_penalized_rewards(
    rewards: torch.Tensor,
    log_prob: torch.Tensor,
    ref_log_prob: torch.Tensor,
    mask: torch.Tensor,
    *,
    coef: float,
    estimator: KLEstimator = k1,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Rewards with a per-token KL penalty: `r_t − coef · KL_t` on valid tokens.

    Paper: Ziegler et al. 2019, "Fine-Tuning Language Models from Human Preferences",
    arXiv:1909.08593 (the penalty and its adaptive coefficient); default k1 as VERL's
    `algorithm.kl_penalty: kl`.

    Shapes: rewards, log_prob, ref_log_prob, mask (B, T) → (penalised rewards (B, T), mean KL scalar).
    The mean KL (per-sequence token mean, then mean over sequences, as VERL) is what
    `AdaptiveKLController.update` takes. Rewards on masked tokens are returned unchanged.
    """
    if coef < 0:
        raise ValueError(f"KL coef must be >= 0, got {coef}")
    check_2d("rewards", rewards)
    check_shapes(rewards=rewards, log_prob=log_prob, ref_log_prob=ref_log_prob, mask=mask)
    valid = mask.bool()
    zero = torch.zeros((), dtype=log_prob.dtype, device=log_prob.device)
    estimate = torch.where(
        valid, estimator(torch.where(valid, log_prob, zero), torch.where(valid, ref_log_prob, zero)), zero
    )
    mean_kl = masked_mean(estimate, valid, dim=-1).mean()
    return rewards - coef * estimate.to(rewards.dtype), mean_kl


class FixedKLController:
    """A constant KL coefficient: `value` never changes."""

    def __init__(self, coef: float):
        if coef < 0:
            raise ValueError(f"KL coef must be >= 0, got {coef}")
        self.value = float(coef)

    def update(self, current_kl: float, n_steps: int) -> None:
        """Does nothing: the coefficient is fixed."""


class AdaptiveKLController:
    """A KL coefficient steered towards a target KL (Ziegler et al. 2019, arXiv:1909.08593, eq. 2).

    After each batch: `e = clip(KL / target − 1, −0.2, 0.2)`, `value ← value · (1 + e · n_steps / horizon)`
    with `n_steps` the number of samples in the batch. The coefficient grows while the policy drifts
    further than `target` from the reference, and shrinks while it stays closer.
    """

    def __init__(self, init_coef: float, *, target: float, horizon: int):
        if init_coef < 0:
            raise ValueError(f"init_coef must be >= 0, got {init_coef}")
        if not target > 0:
            raise ValueError(f"target KL must be > 0, got {target}")
        if not horizon > 0:
            raise ValueError(
                f"horizon must be > 0 (samples over which the coefficient adapts), got {horizon}"
            )
        self.value = float(init_coef)
        self.target = float(target)
        self.horizon = horizon

    def update(self, current_kl: float, n_steps: int) -> None:
        """Move the coefficient after a batch of `n_steps` samples whose mean KL was `current_kl`."""
        error = min(max(float(current_kl) / self.target - 1.0, -0.2), 0.2)
        self.value *= 1.0 + error * n_steps / self.horizon

"""Advantage estimators: how good each sampled response (or token) was, relative to a baseline.

Outcome estimators take one scalar score per sample, `scores (B,)`, and return one advantage per
sample, `(B,)`; `per_token` spreads it over the response's tokens. Token-level estimators take
`rewards (B, T)` (for an outcome reward: the score at the last valid token, 0 elsewhere) and a
`mask (B, T)` that is 1 on the policy's own tokens and 0 on padding and on environment feedback
tokens of a multi-turn episode; they return `(advantages, returns)`, both (B, T) and 0 where the mask
is 0. Group ids (B,) say which samples answer the same prompt. No gradient flows through any of them.
"""

from __future__ import annotations

import torch

from .groups import group_stats
from .masking import check_2d, check_shapes
from .registry import Registry
from .rewards import whiten


def per_token(advantages: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Spread one advantage per sample over its tokens: (B,), (B, T) → (B, T), 0 where mask is 0."""
    check_2d("mask", mask)
    if advantages.shape != mask.shape[:1]:
        raise ValueError(
            f"advantages must be (batch,) = {tuple(mask.shape[:1])}, got {tuple(advantages.shape)}"
        )
    return advantages.unsqueeze(-1) * mask.to(advantages.dtype)


def _check_token_inputs(**tensors: torch.Tensor) -> None:
    for name, t in tensors.items():
        check_2d(name, t)
    check_shapes(**tensors)


@torch.no_grad()
def gae_advantages(
    rewards: torch.Tensor,
    values: torch.Tensor,
    mask: torch.Tensor,
    *,
    gamma: float = 1.0,
    lam: float = 1.0,
    normalize: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE: critic-based per-token advantages δ_t + γλ·A_{t+1}, whitened over the batch (PPO).

    Paper: Schulman et al. 2015, "High-Dimensional Continuous Control Using Generalized Advantage
    Estimation", arXiv:1506.02438.

    Shapes: rewards, values, mask (B, T) → advantages (B, T), returns (B, T).
    `δ_t = r_t + γ·V_{t+1} − V_t`, `A_t = δ_t + γλ·A_{t+1}`, `returns_t = A_t + V_t` (the critic's
    target, taken before whitening); with `normalize` the advantages are then whitened over every
    valid token of the batch.

    Deviations: masked tokens (environment feedback) are skipped, as in VERL: V_{t+1} and A_{t+1} are
    those of the next valid token, so a turn's advantage sees past the feedback that follows it. The
    whitening is VERL's (the paper has none; PPO implementations commonly add it). Outputs are 0 where
    the mask is 0, where VERL leaves carried-over values that its losses then mask out.
    """
    _check_token_inputs(rewards=rewards, values=values, mask=mask)
    valid = mask.bool()
    batch, length = rewards.shape
    next_value = torch.zeros(batch, dtype=values.dtype, device=values.device)
    next_advantage = torch.zeros_like(next_value)
    raw = torch.zeros_like(values)
    # The recursion runs backwards in time; each step is vectorised over the batch.
    for t in reversed(range(length)):
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        advantage_t = delta + gamma * lam * next_advantage
        next_value = torch.where(valid[:, t], values[:, t], next_value)
        next_advantage = torch.where(valid[:, t], advantage_t, next_advantage)
        raw[:, t] = next_advantage
    zero = torch.zeros((), dtype=values.dtype, device=values.device)
    returns = torch.where(valid, raw + values, zero)
    advantages = whiten(raw, mask) if normalize else torch.where(valid, raw, zero)
    return advantages, returns


@torch.no_grad()
def grpo_advantages(
    scores: torch.Tensor, group_ids: torch.Tensor, *, norm_by_std: bool = True, eps: float = 1e-6
) -> torch.Tensor:
    """GRPO: each score minus its group's mean, divided by the group's std (Dr. GRPO: not divided).

    Paper: Shao et al. 2024, "DeepSeekMath" (GRPO), arXiv:2402.03300; `norm_by_std=False` is
    Liu et al. 2025, "Understanding R1-Zero-Like Training" (Dr. GRPO), arXiv:2503.20783.

    Shapes: scores (B,), group_ids (B,) → advantages (B,).
    `A_i = (s_i − mean_g) / (std_g + eps)`, std Bessel-corrected (n − 1), as VERL's `torch.std`.

    Deviations: a group of one has no baseline; as in VERL its advantage is the raw score
    (divided by 1 + eps when `norm_by_std`). A group of identical scores gets exactly 0 (VERL: rounding
    noise over std + eps, up to ~0.06 in float32 for scores such as 0.7 or 0.9).
    """
    stats = group_stats(scores, group_ids)
    x = scores.detach().to(torch.float64)
    single = stats.size == 1
    centred = torch.where(single, x, stats.centred)
    if norm_by_std:
        std = torch.where(single, torch.ones_like(stats.std), stats.std)
        centred = centred / (std + eps)
    return centred.to(scores.dtype)


@torch.no_grad()
def rloo_advantages(scores: torch.Tensor, group_ids: torch.Tensor) -> torch.Tensor:
    """RLOO: each score minus the mean of the other samples of its group (leave-one-out baseline).

    Paper: Ahmadian et al. 2024, "Back to Basics: Revisiting REINFORCE Style Optimization for Learning
    from Human Feedback in LLMs", arXiv:2402.14740 (after Kool et al. 2019).

    Shapes: scores (B,), group_ids (B,) → advantages (B,).
    `A_i = s_i − (1/(n−1)) Σ_{j≠i} s_j = n/(n−1) · (s_i − mean_g)`.

    Deviations: a group of one has no other sample; as VERL's `rloo` (not its `rloo_vectorized`, which
    gives 0) its advantage is the raw score.
    """
    stats = group_stats(scores, group_ids)
    x = scores.detach().to(torch.float64)
    n = stats.size
    leave_one_out = stats.centred * n / (n - 1).clamp(min=1)
    return torch.where(n == 1, x, leave_one_out).to(scores.dtype)


@torch.no_grad()
def reinforce_plus_plus_advantages(
    rewards: torch.Tensor, mask: torch.Tensor, *, gamma: float = 1.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """REINFORCE++: discounted return-to-go of each token, whitened over the whole batch.

    Paper: Hu 2025, "REINFORCE++: A Simple and Efficient Approach for Aligning Large Language
    Models", arXiv:2501.03262.

    Shapes: rewards, mask (B, T) → advantages (B, T), returns (B, T).
    `G_t = r_t + γ·G_{t+1}` over valid tokens; `A = whiten(G)` over every valid token of the batch.

    Deviations: masked tokens are skipped (their rewards are ignored and the return is carried past
    them unchanged), as in VERL. The paper folds a per-token KL penalty into r_t; here that is the
    caller's choice (`kl.kl_penalized_rewards`), as in VERL's `use_kl_in_reward`.
    """
    _check_token_inputs(rewards=rewards, mask=mask)
    valid = mask.bool()
    running = torch.zeros(rewards.shape[0], dtype=rewards.dtype, device=rewards.device)
    returns = torch.zeros_like(rewards)
    for t in reversed(range(rewards.shape[1])):
        running = torch.where(valid[:, t], rewards[:, t] + gamma * running, running)
        returns[:, t] = torch.where(valid[:, t], running, torch.zeros_like(running))
    return whiten(returns, mask), returns


@torch.no_grad()
def reinforce_plus_plus_baseline_advantages(
    scores: torch.Tensor, group_ids: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """REINFORCE++ with a group baseline: score minus group mean, then whitened over the batch's tokens.

    Paper: Hu 2025, "REINFORCE++", arXiv:2501.03262 (the "baseline" variant for grouped sampling).

    Shapes: scores (B,), group_ids (B,), mask (B, T) → advantages (B, T).
    `A_{i,t} = whiten_batch(s_i − mean_g)`, the whitening taken over every valid token, so a longer
    response weighs more in the batch statistics (as in VERL).

    Deviations: a group of one keeps its raw score as the centred value (baseline 0), as in VERL.
    """
    check_2d("mask", mask)
    stats = group_stats(scores, group_ids)
    if scores.shape != mask.shape[:1]:
        raise ValueError(f"scores must be (batch,) = {tuple(mask.shape[:1])}, got {tuple(scores.shape)}")
    x = scores.detach().to(torch.float64)
    centred = torch.where(stats.size == 1, x, stats.centred).to(scores.dtype)
    return whiten(per_token(centred, mask), mask)


@torch.no_grad()
def remax_advantages(
    rewards: torch.Tensor, mask: torch.Tensor, baselines: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """ReMax: return-to-go minus the reward of the greedy response to the same prompt.

    Paper: Li et al. 2023, "ReMax: A Simple, Effective, and Efficient Reinforcement Learning Method
    for Aligning Large Language Models", arXiv:2310.10505.

    Shapes: rewards, mask (B, T), baselines (B,) → advantages (B, T), returns (B, T).
    `G_t = Σ_{s≥t} r_s` (undiscounted), `A_t = G_t − b` with b the greedy response's reward.

    Deviations: none in the valid tokens; outputs are 0 where the mask is 0 (VERL leaves the
    return-to-go on masked feedback tokens, which its losses then mask out).
    """
    _check_token_inputs(rewards=rewards, mask=mask)
    if baselines.shape != rewards.shape[:1]:
        raise ValueError(
            f"baselines must be (batch,) = {tuple(rewards.shape[:1])}, got {tuple(baselines.shape)}"
        )
    valid = mask.bool()
    zero = torch.zeros((), dtype=rewards.dtype, device=rewards.device)
    kept = torch.where(valid, rewards, zero)
    returns = kept.flip(-1).cumsum(-1).flip(-1)
    returns = torch.where(valid, returns, zero)
    advantages = torch.where(valid, returns - baselines.unsqueeze(-1).to(rewards.dtype), zero)
    return advantages, returns


ADVANTAGE_ESTIMATORS: Registry = Registry(
    "advantage estimator",
    {
        "gae": gae_advantages,
        "grpo": grpo_advantages,
        "rloo": rloo_advantages,
        "reinforce_plus_plus": reinforce_plus_plus_advantages,
        "reinforce_plus_plus_baseline": reinforce_plus_plus_baseline_advantages,
        "remax": remax_advantages,
    },
)

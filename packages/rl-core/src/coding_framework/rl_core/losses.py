"""Policy losses: per-token surrogate objectives to minimise, and the entropy bonus.

Every policy loss has the signature `(old_log_prob, log_prob, advantages, mask, *, ...) ->
PolicyLoss` with (B, T) inputs: log-probabilities of the sampled tokens under the policy that
generated them (`old_log_prob`) and under the policy being trained (`log_prob`, the one gradients flow
into), per-token advantages, and the mask of the policy's own tokens. The argument order is VERL's.
The result is the per-token loss matrix, 0 where the mask is 0, plus detached scalar metrics; turn it
into the scalar to minimise with an aggregation from `LOSS_AGGREGATIONS`. `weights` (B, T), when
given, multiplies each token's loss (e.g. truncated importance weights between the rollout engine's
and the trainer's log-probabilities). Masked inputs are replaced by 0 before any arithmetic, so NaN or
inf there reaches neither the loss nor its gradient.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from .aggregation import LOCAL_BATCH, GlobalBatch, token_mean
from .masking import check_2d, check_shapes, masked_mean
from .registry import Registry

# exp() of a log-ratio beyond ±20 overflows the useful range; VERL clamps at the same bounds.
_LOG_RATIO_BOUND = 20.0
# GSPO's sequence ratio is clamped from above only, at e^10, as in VERL.
_GSPO_LOG_RATIO_MAX = 10.0


class PolicyLoss(NamedTuple):
    """A policy loss before aggregation."""

    per_token: torch.Tensor
    """(B, T) loss of each token; 0 where the mask is 0."""
    metrics: dict[str, torch.Tensor]
    """Detached scalars: `approx_kl` (mean old − new log-prob), and `clipfrac` / `clipfrac_lower` where
    the loss clips (fraction of valid tokens where the clipped branch, resp. the dual clip, is active)."""


def _prepare(
    old_log_prob: torch.Tensor,
    log_prob: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    weights: torch.Tensor | None,
):
    for name, t in (("old_log_prob", old_log_prob), ("log_prob", log_prob), ("advantages", advantages)):
        check_2d(name, t)
    check_shapes(
        old_log_prob=old_log_prob, log_prob=log_prob, advantages=advantages, mask=mask, weights=weights
    )
    valid = mask.bool()
    zero = torch.zeros((), dtype=log_prob.dtype, device=log_prob.device)

    def keep(t: torch.Tensor) -> torch.Tensor:
        return torch.where(valid, t, zero)

    return (
        valid,
        keep(old_log_prob),
        keep(log_prob),
        keep(advantages),
        None if weights is None else keep(weights),
    )


def _finish(per_token: torch.Tensor, valid: torch.Tensor, weights: torch.Tensor | None) -> torch.Tensor:
    if weights is not None:
        per_token = per_token * weights
    return torch.where(valid, per_token, torch.zeros((), dtype=per_token.dtype, device=per_token.device))


def _fraction(condition: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    return masked_mean(condition.to(torch.float32), valid).detach()


def ppo_clip_loss(
    old_log_prob: torch.Tensor,
    log_prob: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    clip_low: float = 0.2,
    clip_high: float = 0.2,
    clip_c: float | None = 3.0,
    weights: torch.Tensor | None = None,
) -> PolicyLoss:
    """PPO clipped surrogate, with asymmetric clipping (DAPO clip-higher) and dual-clip.

    Papers: Schulman et al. 2017, "Proximal Policy Optimization Algorithms", arXiv:1707.06347;
    clip-higher: Yu et al. 2025, "DAPO", arXiv:2503.14476; dual-clip: Ye et al. 2020, "Mastering
    Complex Control in MOBA Games with Deep Reinforcement Learning", arXiv:1912.09729.

    Shapes: old_log_prob, log_prob, advantages, mask, weights (B, T) → PolicyLoss.
    `r = exp(log_prob − old_log_prob)`, `ℓ = max(−A·r, −A·clip(r, 1 − clip_low, 1 + clip_high))`;
    where A < 0 the loss is further capped at `−A·clip_c` (dual-clip), so a token whose ratio has
    exploded cannot produce an unbounded loss.

    Deviations: the log-ratio is clamped to ±20 before exp (as VERL). `clip_c=None` turns dual-clip
    off (VERL always applies it, default 3).
    """
    if not 0 <= clip_low < 1:
        raise ValueError(f"clip_low must be in [0, 1) (the ratio floor is 1 - clip_low), got {clip_low}")
    if not clip_high >= 0:
        raise ValueError(f"clip_high must be >= 0, got {clip_high}")
    if clip_c is not None and not clip_c > 1:
        raise ValueError(f"clip_c (dual-clip bound) must be > 1, or None to disable dual-clip; got {clip_c}")
    valid, old_log_prob, log_prob, advantages, weights = _prepare(
        old_log_prob, log_prob, advantages, mask, weights
    )

    log_ratio = (log_prob - old_log_prob).clamp(-_LOG_RATIO_BOUND, _LOG_RATIO_BOUND)
    ratio = torch.exp(log_ratio)
    unclipped = -advantages * ratio
    clipped = -advantages * ratio.clamp(1 - clip_low, 1 + clip_high)
    loss = torch.maximum(unclipped, clipped)
    metrics = {
        "approx_kl": masked_mean(-log_ratio, valid).detach(),
        "clipfrac": _fraction(clipped > unclipped, valid),
    }
    if clip_c is not None:
        dual = -advantages * clip_c
        negative = advantages < 0
        metrics["clipfrac_lower"] = _fraction((loss > dual) & negative, valid)
        loss = torch.where(negative, torch.minimum(loss, dual), loss)
    else:
        metrics["clipfrac_lower"] = torch.zeros((), device=loss.device)
    return PolicyLoss(_finish(loss, valid, weights), metrics)


def gspo_loss(
    old_log_prob: torch.Tensor,
    log_prob: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    clip_low: float = 3e-4,
    clip_high: float = 4e-4,
    weights: torch.Tensor | None = None,
) -> PolicyLoss:
    """GSPO: PPO-style clipping of a sequence-level ratio (geometric mean of the token ratios).

    Paper: Zheng et al. 2025, "Group Sequence Policy Optimization", arXiv:2507.18071 (the default clip
    ranges are the paper's).

    Shapes: old_log_prob, log_prob, advantages, mask, weights (B, T) → PolicyLoss.
    `s_i = exp((1/|y_i|) Σ_t (log_prob − old_log_prob))`; the per-token ratio is
    `s_{i,t} = sg[s_i] · π(y_t) / sg[π(y_t)]` (value s_i, gradient that of the token's own log-prob,
    the paper's GSPO-token form), and `ℓ = max(−A·s, −A·clip(s, 1 − clip_low, 1 + clip_high))`.

    Deviations: the loss stays per token and is aggregated by the caller's mode (the paper's objective
    is seq-mean-token-mean; VERL's default for GSPO is the same). The log sequence ratio is clamped at
    10 from above (as VERL).
    """
    if not 0 <= clip_low < 1:
        raise ValueError(f"clip_low must be in [0, 1) (the ratio floor is 1 - clip_low), got {clip_low}")
    if not clip_high >= 0:
        raise ValueError(f"clip_high must be >= 0, got {clip_high}")
    valid, old_log_prob, log_prob, advantages, weights = _prepare(
        old_log_prob, log_prob, advantages, mask, weights
    )

    log_ratio = log_prob - old_log_prob
    lengths = valid.to(log_prob.dtype).sum(-1).clamp(min=1)
    sequence_log_ratio = log_ratio.sum(-1) / lengths
    token_log_ratio = log_prob - log_prob.detach() + sequence_log_ratio.detach().unsqueeze(-1)
    ratio = torch.exp(token_log_ratio.clamp(max=_GSPO_LOG_RATIO_MAX))
    unclipped = -advantages * ratio
    clipped = -advantages * ratio.clamp(1 - clip_low, 1 + clip_high)
    loss = torch.maximum(unclipped, clipped)
    metrics = {
        "approx_kl": masked_mean(-log_ratio, valid).detach(),
        "clipfrac": _fraction(clipped > unclipped, valid),
    }
    return PolicyLoss(_finish(loss, valid, weights), metrics)


def reinforce_loss(
    old_log_prob: torch.Tensor,
    log_prob: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    weights: torch.Tensor | None = None,
) -> PolicyLoss:
    """Plain REINFORCE: −A·log π per token, no ratio and no clipping (on-policy).

    Paper: Williams 1992, "Simple Statistical Gradient-Following Algorithms for Connectionist
    Reinforcement Learning", Machine Learning 8.

    Shapes: old_log_prob, log_prob, advantages, mask, weights (B, T) → PolicyLoss.
    `ℓ = −A·log π(y_t)`; `old_log_prob` only feeds the `approx_kl` metric. With importance `weights`
    (treated as constants) it is the off-policy-corrected gradient `−w·A·∇log π`.

    Deviations: none (VERL's `compute_policy_loss_reinforce`, which VERL does not register by name).
    """
    valid, old_log_prob, log_prob, advantages, weights = _prepare(
        old_log_prob, log_prob, advantages, mask, weights
    )
    loss = -advantages * log_prob
    metrics = {"approx_kl": masked_mean(old_log_prob - log_prob, valid).detach()}
    return PolicyLoss(_finish(loss, valid, weights), metrics)


def gpg_loss(
    old_log_prob: torch.Tensor,
    log_prob: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    weights: torch.Tensor | None = None,
) -> PolicyLoss:
    """GPG: the policy-gradient term −A·log π of group-relative advantages, meant for token-mean.

    Paper: Chu et al. 2025, "GPG: A Simple and Strong Reinforcement Learning Baseline for Model
    Reasoning", arXiv:2504.02546.

    Shapes: old_log_prob, log_prob, advantages, mask, weights (B, T) → PolicyLoss.
    `ℓ = −A·log π(y_t)`, the same per-token term as REINFORCE: GPG's differences lie in its
    advantage (group-centred, rescaled by batch size over non-zero-reward count) and its token-mean
    aggregation, which the caller chooses.

    Deviations: GPG's own advantage scaling is not part of this loss (as in VERL, where it is a
    separate estimator).
    """
    return reinforce_loss(old_log_prob, log_prob, advantages, mask, weights=weights)


def token_entropy(logits: torch.Tensor) -> torch.Tensor:
    """Entropy of each token's predictive distribution: (B, T, V) logits → (B, T), in nats.

    `H = logsumexp(z) − Σ_v softmax(z)_v · z_v`, which avoids log(0) for vanishing probabilities.
    """
    if logits.dim() != 3:
        raise ValueError(f"logits must be (batch, response_length, vocab), got shape {tuple(logits.shape)}")
    probabilities = torch.softmax(logits, dim=-1)
    return torch.logsumexp(logits, dim=-1) - (probabilities * logits).sum(-1)


def entropy_bonus(
    entropy: torch.Tensor,
    mask: torch.Tensor,
    *,
    coef: float,
    aggregate=token_mean,
    batch: GlobalBatch = LOCAL_BATCH,
) -> torch.Tensor:
    """Entropy bonus as a loss term: `−coef · aggregate(H)`, added to the policy loss.

    Shapes: entropy, mask (B, T) → scalar. Minimising it raises entropy (exploration). `aggregate`
    should be the policy loss's own aggregation, as in VERL (`actor.entropy_coeff`).
    """
    if coef < 0:
        raise ValueError(f"entropy coef must be >= 0 (0 disables the bonus), got {coef}")
    return -coef * aggregate(entropy, mask, batch=batch)


POLICY_LOSSES: Registry = Registry(
    "policy loss",
    {
        "vanilla": ppo_clip_loss,
        "gspo": gspo_loss,
        "gpg": gpg_loss,
        "reinforce": reinforce_loss,
    },
)

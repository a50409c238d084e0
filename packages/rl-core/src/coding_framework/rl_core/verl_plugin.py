"""VERL plugin: rl-core's estimators and losses in VERL's registries, as `cf_<name>`.

Importing this module registers, into `verl.trainer.ppo.core_algos`, the advantage estimators
`cf_gae, cf_grpo, cf_rloo, cf_reinforce_plus_plus, cf_reinforce_plus_plus_baseline, cf_remax` and the
policy losses `cf_vanilla, cf_gspo, cf_gpg, cf_reinforce`. Each takes the arguments VERL passes to its
own built-in of the same name and returns what that built-in returns; it only translates arguments
(config fields, uid arrays, metric names) and computes with rl-core's functions. So
`algorithm.adv_estimator=cf_grpo` or `actor_rollout_ref.actor.policy_loss.loss_mode=cf_vanilla` is a
drop-in. The distribution declares this module in the `verl.plugins` entry-point group, which
`import verl` loads, so no flag is needed. Registering again (a second import, `importlib.reload`,
`register()`) is a no-op apart from refreshing our own entries.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch
from verl.trainer.ppo import core_algos

from .advantages import (
    gae_advantages,
    grpo_advantages,
    per_token,
    reinforce_plus_plus_advantages,
    reinforce_plus_plus_baseline_advantages,
    remax_advantages,
    rloo_advantages,
)
from .aggregation import LOSS_AGGREGATIONS, GlobalBatch
from .losses import PolicyLoss, gpg_loss, gspo_loss, ppo_clip_loss, reinforce_loss

PREFIX = "cf_"


# --- translating VERL's arguments ---------------------------------------------------------------


def _field(config: Any, name: str, default: Any = None) -> Any:
    """A config field from an AlgoConfig / ActorConfig dataclass, an omegaconf DictConfig or a dict."""
    if config is None:
        return default
    if isinstance(config, Mapping) or hasattr(config, "get"):
        return config.get(name, default)
    return getattr(config, name, default)


def _require(config: Any, who: str, what: str) -> Any:
    if config is None:
        raise ValueError(
            f"{who} needs `config` ({what}); VERL's trainer passes it, pass it when calling directly"
        )
    return config


def _group_ids(index: Any, device: torch.device, who: str) -> torch.Tensor:
    """VERL's `index` (the batch's `uid` array, usually strings) as dense integer group ids."""
    if index is None:
        raise ValueError(
            f"{who} needs `index`, the prompt uid of each sample (VERL: non_tensor_batch['uid'])"
        )
    if isinstance(index, torch.Tensor):
        index = index.detach().cpu().numpy()
    inverse = np.unique(np.asarray(index), return_inverse=True)[1].reshape(-1)
    return torch.as_tensor(inverse, dtype=torch.long, device=device)


def _global_batch(config: Any) -> GlobalBatch:
    """VERL's `actor.global_batch_info` (filled in per micro-batch by its workers) as a GlobalBatch."""
    info = _field(config, "global_batch_info", None) or {}
    dp_size = info.get("dp_size")
    return GlobalBatch(
        dp_size=1 if dp_size is None else int(dp_size),
        num_tokens=info.get("batch_num_tokens"),
        num_sequences=info.get("global_batch_size"),
        norm_length=info.get("loss_scale_factor"),
    )


def _clip_range(config: Any) -> tuple[float, float]:
    clip = _field(config, "clip_ratio")
    low, high = _field(config, "clip_ratio_low"), _field(config, "clip_ratio_high")
    return (clip if low is None else low), (clip if high is None else high)


def _aggregate(out: PolicyLoss, mask: torch.Tensor, loss_agg_mode: str, config: Any) -> torch.Tensor:
    return LOSS_AGGREGATIONS[loss_agg_mode](out.per_token, mask, batch=_global_batch(config))


def _verl_metrics(out: PolicyLoss, **constant: float) -> dict[str, float]:
    names = {
        "clipfrac": "actor/pg_clipfrac",
        "approx_kl": "actor/ppo_kl",
        "clipfrac_lower": "actor/pg_clipfrac_lower",
    }
    metrics = {names[k]: float(v.item()) for k, v in out.metrics.items()}
    metrics.update({f"actor/{k}": v for k, v in constant.items()})
    return metrics


# --- advantage estimators (VERL: fn(**kwargs) -> (advantages, returns), both (bs, response_length)) ---


def cf_gae(
    token_level_rewards: torch.Tensor,
    values: torch.Tensor | None = None,
    response_mask: torch.Tensor | None = None,
    gamma: float | None = None,
    lam: float | None = None,
    config: Any = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE (rl-core `gae_advantages`), VERL's `gae` signature; gamma/lam fall back to config.

    VERL 0.9.1's trainer passes `values` (and starts a critic) only for the built-in name `gae`, so
    this is a drop-in for direct calls, not for `algorithm.adv_estimator`.
    """
    if values is None:
        raise ValueError(
            "cf_gae needs the critic's `values`; VERL 0.9.1's compute_advantage passes them only to its "
            "built-in 'gae' (and only starts a critic for it): use algorithm.adv_estimator=gae there"
        )
    if response_mask is None:
        raise ValueError("cf_gae needs `response_mask`")
    gamma = _field(config, "gamma", 1.0) if gamma is None else gamma
    lam = _field(config, "lam", 1.0) if lam is None else lam
    return gae_advantages(token_level_rewards, values, response_mask, gamma=float(gamma), lam=float(lam))


def cf_grpo(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    index: np.ndarray,
    epsilon: float = 1e-6,
    norm_adv_by_std_in_grpo: bool | None = None,
    config: Any = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """GRPO (rl-core `grpo_advantages`), VERL's `grpo` signature.

    `norm_adv_by_std_in_grpo` when given, else `config.norm_adv_by_std_in_grpo`, else True: VERL's
    trainer passes the flag explicitly only to its built-in `grpo`, and only `config` to others.
    """
    norm = norm_adv_by_std_in_grpo
    if norm is None:
        norm = bool(_field(config, "norm_adv_by_std_in_grpo", True))
    scores = token_level_rewards.sum(dim=-1)
    groups = _group_ids(index, scores.device, "cf_grpo")
    advantages = per_token(grpo_advantages(scores, groups, norm_by_std=norm, eps=epsilon), response_mask)
    return advantages, advantages


def cf_rloo(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    index: np.ndarray,
    epsilon: float = 1e-6,
    config: Any = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """RLOO (rl-core `rloo_advantages`), VERL's `rloo` signature."""
    scores = token_level_rewards.sum(dim=-1)
    advantages = per_token(
        rloo_advantages(scores, _group_ids(index, scores.device, "cf_rloo")), response_mask
    )
    return advantages, advantages


def cf_reinforce_plus_plus(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    config: Any = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """REINFORCE++ (rl-core `reinforce_plus_plus_advantages`), VERL's signature; gamma from config."""
    gamma = _field(_require(config, "cf_reinforce_plus_plus", "AlgoConfig, for gamma"), "gamma", 1.0)
    return reinforce_plus_plus_advantages(token_level_rewards, response_mask, gamma=float(gamma))


def cf_reinforce_plus_plus_baseline(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    index: np.ndarray,
    epsilon: float = 1e-6,
    config: Any = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """REINFORCE++ with group baseline (rl-core `reinforce_plus_plus_baseline_advantages`),
    VERL's `reinforce_plus_plus_baseline` signature."""
    scores = token_level_rewards.sum(dim=-1)
    groups = _group_ids(index, scores.device, "cf_reinforce_plus_plus_baseline")
    advantages = reinforce_plus_plus_baseline_advantages(scores, groups, response_mask)
    return advantages, advantages


def cf_remax(
    token_level_rewards: torch.Tensor,
    reward_baselines: torch.Tensor,
    response_mask: torch.Tensor,
    config: Any = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """ReMax (rl-core `remax_advantages`), VERL's `remax` signature.

    VERL 0.9.1's trainer generates the greedy baseline (`reward_baselines`) only for the built-in name
    `remax`, so this is a drop-in for direct calls, not for `algorithm.adv_estimator`.
    """
    return remax_advantages(token_level_rewards, response_mask, reward_baselines)


# --- policy losses (VERL: fn(old_log_prob, log_prob, advantages, response_mask, loss_agg_mode, config,
# rollout_is_weights) -> (scalar loss, metrics dict of floats)) ------------------------------------


def cf_vanilla(
    old_log_prob: torch.Tensor,
    log_prob: torch.Tensor,
    advantages: torch.Tensor,
    response_mask: torch.Tensor,
    loss_agg_mode: str = "token-mean",
    config: Any = None,
    rollout_is_weights: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, Any]]:
    """PPO clip, clip_ratio_low/high, dual-clip clip_ratio_c (rl-core `ppo_clip_loss`), VERL's `vanilla`."""
    config = _require(config, "cf_vanilla", "ActorConfig, for the clip ratios")
    low, high = _clip_range(config)
    out = ppo_clip_loss(
        old_log_prob,
        log_prob,
        advantages,
        response_mask,
        clip_low=low,
        clip_high=high,
        clip_c=_field(config, "clip_ratio_c", 3.0),
        weights=rollout_is_weights,
    )
    return _aggregate(out, response_mask, loss_agg_mode, config), _verl_metrics(out)


def cf_gspo(
    old_log_prob: torch.Tensor,
    log_prob: torch.Tensor,
    advantages: torch.Tensor,
    response_mask: torch.Tensor,
    loss_agg_mode: str = "seq-mean-token-mean",
    config: Any = None,
    rollout_is_weights: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, Any]]:
    """GSPO with clip_ratio_low/high (rl-core `gspo_loss`), VERL's `gspo`."""
    config = _require(config, "cf_gspo", "ActorConfig, for the clip ratios")
    low, high = _clip_range(config)
    out = gspo_loss(
        old_log_prob,
        log_prob,
        advantages,
        response_mask,
        clip_low=low,
        clip_high=high,
        weights=rollout_is_weights,
    )
    # VERL's gspo reports a constant 0 lower clip fraction (there is no dual-clip); keep its metric set.
    return _aggregate(out, response_mask, loss_agg_mode, config), _verl_metrics(out, pg_clipfrac_lower=0.0)


def cf_gpg(
    old_log_prob: torch.Tensor,
    log_prob: torch.Tensor,
    advantages: torch.Tensor,
    response_mask: torch.Tensor,
    loss_agg_mode: str = "token-mean",
    config: Any = None,
    rollout_is_weights: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, Any]]:
    """GPG policy-gradient loss (rl-core `gpg_loss`), VERL's `gpg`; adds an actor/ppo_kl metric."""
    config = _require(config, "cf_gpg", "ActorConfig, for global_batch_info")
    out = gpg_loss(old_log_prob, log_prob, advantages, response_mask, weights=rollout_is_weights)
    return _aggregate(out, response_mask, loss_agg_mode, config), _verl_metrics(out)


def cf_reinforce(
    old_log_prob: torch.Tensor,
    log_prob: torch.Tensor,
    advantages: torch.Tensor,
    response_mask: torch.Tensor,
    loss_agg_mode: str = "seq-mean-token-sum",
    config: Any = None,
    rollout_is_weights: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, Any]]:
    """Plain REINFORCE (rl-core `reinforce_loss`), VERL's `compute_policy_loss_reinforce` as a loss mode."""
    config = _require(config, "cf_reinforce", "ActorConfig, for global_batch_info")
    out = reinforce_loss(old_log_prob, log_prob, advantages, response_mask, weights=rollout_is_weights)
    return _aggregate(out, response_mask, loss_agg_mode, config), _verl_metrics(out)


# --- registration --------------------------------------------------------------------------------

ADVANTAGE_ADAPTERS: dict[str, Callable] = {
    "gae": cf_gae,
    "grpo": cf_grpo,
    "rloo": cf_rloo,
    "reinforce_plus_plus": cf_reinforce_plus_plus,
    "reinforce_plus_plus_baseline": cf_reinforce_plus_plus_baseline,
    "remax": cf_remax,
}
"""rl-core advantage-estimator name → its VERL adapter, registered as `cf_<name>`."""

POLICY_LOSS_ADAPTERS: dict[str, Callable] = {
    "vanilla": cf_vanilla,
    "gspo": cf_gspo,
    "gpg": cf_gpg,
    "reinforce": cf_reinforce,
}
"""rl-core policy-loss name → its VERL adapter, registered as `cf_<name>`."""


def _is_ours(existing: Callable, fn: Callable) -> bool:
    # A reload of this module makes new function objects with the same module and name.
    return (getattr(existing, "__module__", None), getattr(existing, "__qualname__", None)) == (
        fn.__module__,
        fn.__qualname__,
    )


def _register(registry: dict[str, Callable], decorator: Callable, name: str, fn: Callable, kind: str) -> None:
    existing = registry.get(name)
    if existing is None or existing is fn:
        decorator(name)(fn)
    elif _is_ours(existing, fn):
        # Our own entry from before a reload: VERL's register_adv_est refuses to replace any entry.
        registry[name] = fn
    else:
        raise RuntimeError(
            f"VERL {kind} {name!r} is already registered by {existing.__module__}.{existing.__qualname__}; "
            f"the {PREFIX} prefix is reserved for coding_framework.rl_core"
        )


def register() -> None:
    """Register every adapter into VERL's registries. Idempotent."""
    for name, fn in ADVANTAGE_ADAPTERS.items():
        _register(
            core_algos.ADV_ESTIMATOR_REGISTRY,
            core_algos.register_adv_est,
            PREFIX + name,
            fn,
            "advantage estimator",
        )
    for name, fn in POLICY_LOSS_ADAPTERS.items():
        _register(
            core_algos.POLICY_LOSS_REGISTRY, core_algos.register_policy_loss, PREFIX + name, fn, "policy loss"
        )


register()

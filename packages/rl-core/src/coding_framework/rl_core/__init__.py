"""rl-core: the RL math of coding-framework as pure, vectorised torch functions.

Registries (name → function) are what configs name; the functions are importable directly. The VERL
plugin lives in `coding_framework.rl_core.verl_plugin` and is not imported here: the core needs only
torch and numpy.
"""

from .advantages import (
    ADVANTAGE_ESTIMATORS,
    gae_advantages,
    grpo_advantages,
    per_token,
    reinforce_plus_plus_advantages,
    reinforce_plus_plus_baseline_advantages,
    remax_advantages,
    rloo_advantages,
)
from .aggregation import (
    LOCAL_BATCH,
    LOSS_AGGREGATIONS,
    GlobalBatch,
    seq_mean_token_mean,
    seq_mean_token_sum,
    seq_mean_token_sum_norm,
    token_mean,
    token_sum,
)
from .dapo import dynamic_sampling_keep, overlong_penalty
from .groups import GroupStats, group_stats
from .kl import (
    KL_ESTIMATORS,
    AdaptiveKLController,
    FixedKLController,
    k1,
    k2,
    k3,
    kl_loss,
    kl_penalized_rewards,
)
from .losses import (
    POLICY_LOSSES,
    PolicyLoss,
    entropy_bonus,
    gpg_loss,
    gspo_loss,
    ppo_clip_loss,
    reinforce_loss,
    token_entropy,
)
from .masking import masked_mean, masked_sum
from .registry import Registry, UnknownNameError
from .rewards import RunningRewardNormalizer, clip_rewards, whiten

__all__ = [
    "ADVANTAGE_ESTIMATORS",
    "KL_ESTIMATORS",
    "LOCAL_BATCH",
    "LOSS_AGGREGATIONS",
    "POLICY_LOSSES",
    "AdaptiveKLController",
    "FixedKLController",
    "GlobalBatch",
    "GroupStats",
    "PolicyLoss",
    "Registry",
    "RunningRewardNormalizer",
    "UnknownNameError",
    "clip_rewards",
    "dynamic_sampling_keep",
    "entropy_bonus",
    "gae_advantages",
    "gpg_loss",
    "group_stats",
    "grpo_advantages",
    "gspo_loss",
    "k1",
    "k2",
    "k3",
    "kl_loss",
    "kl_penalized_rewards",
    "masked_mean",
    "masked_sum",
    "overlong_penalty",
    "per_token",
    "ppo_clip_loss",
    "reinforce_loss",
    "reinforce_plus_plus_advantages",
    "reinforce_plus_plus_baseline_advantages",
    "remax_advantages",
    "rloo_advantages",
    "seq_mean_token_mean",
    "seq_mean_token_sum",
    "seq_mean_token_sum_norm",
    "token_entropy",
    "token_mean",
    "token_sum",
    "whiten",
]

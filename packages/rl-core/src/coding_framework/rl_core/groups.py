"""Per-group statistics of one scalar score per sample: the baselines of GRPO, RLOO and DAPO.

Samples drawn from the same prompt share a group id. Statistics are computed in float64 with
scatter-adds (no Python loop over groups) and returned per sample, broadcast from the sample's group.
A group whose scores are all exactly equal gets a centred score and a standard deviation of exactly
0, so its advantages are exactly 0 rather than rounding noise divided by a tiny std.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class GroupStats:
    """Statistics of each sample's group, one entry per sample (all tensors (B,), float64)."""

    index: torch.Tensor
    """Dense group number of each sample, 0..num_groups-1 (int64)."""
    num_groups: int
    """How many distinct groups the batch holds."""
    size: torch.Tensor
    """How many samples the sample's group has."""
    mean: torch.Tensor
    """Mean score of the group."""
    centred: torch.Tensor
    """score − group mean; exactly 0 in a group of identical scores."""
    std: torch.Tensor
    """Sample standard deviation of the group (Bessel-corrected, n−1); 0 for groups of one."""
    constant: torch.Tensor
    """True where every score in the group is identical (always true for groups of one; bool)."""


def group_stats(scores: torch.Tensor, group_ids: torch.Tensor) -> GroupStats:
    """Mean, centred score and std of each sample's group.

    Args:
        scores: (B,) one scalar score per sample.
        group_ids: (B,) integer id of the prompt each sample answers; any integers, need not be dense.
    """
    if scores.dim() != 1:
        raise ValueError(f"scores must be (batch,), got shape {tuple(scores.shape)}")
    if not isinstance(group_ids, torch.Tensor) or group_ids.shape != scores.shape:
        shape = tuple(group_ids.shape) if isinstance(group_ids, torch.Tensor) else type(group_ids).__name__
        raise ValueError(f"group_ids must be a tensor shaped like scores {tuple(scores.shape)}, got {shape}")
    if group_ids.dtype.is_floating_point or group_ids.dtype == torch.bool:
        raise TypeError(f"group_ids must be an integer tensor, got {group_ids.dtype}")
    if scores.numel() == 0:
        raise ValueError("scores is empty: a batch needs at least one sample")

    index = torch.unique(group_ids.to(scores.device), return_inverse=True)[1]
    num_groups = int(index.max()) + 1
    x = scores.detach().to(torch.float64)
    zeros = torch.zeros(num_groups, dtype=torch.float64, device=x.device)

    size = zeros.index_add(0, index, torch.ones_like(x))
    mean = zeros.index_add(0, index, x) / size
    high = zeros.scatter_reduce(0, index, x, reduce="amax", include_self=False)
    low = zeros.scatter_reduce(0, index, x, reduce="amin", include_self=False)
    constant = (high == low)[index]

    centred = torch.where(constant, torch.zeros_like(x), x - mean[index])
    var = zeros.index_add(0, index, centred.square()) / (size - 1).clamp(min=1)
    std = var.sqrt()[index]
    return GroupStats(
        index=index,
        num_groups=num_groups,
        size=size[index],
        mean=mean[index],
        centred=centred,
        std=std,
        constant=constant,
    )

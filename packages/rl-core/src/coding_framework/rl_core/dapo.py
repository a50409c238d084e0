"""DAPO's two batch-level tricks: dynamic sampling and the overlong-response soft penalty.

Paper: Yu et al. 2025, "DAPO: An Open-Source LLM Reinforcement Learning System at Scale",
arXiv:2503.14476 (§3.2 dynamic sampling, §3.4 overlong reward shaping).
"""

from __future__ import annotations

import torch

from .groups import group_stats


def dynamic_sampling_keep(scores: torch.Tensor, group_ids: torch.Tensor) -> torch.Tensor:
    """Which samples to keep: drop every group whose scores are all equal (zero variance).

    Shapes: scores (B,), group_ids (B,) → keep (B,) bool.
    A group whose samples all passed (or all failed) has zero group-relative advantage and so no
    gradient; DAPO drops such groups and samples more prompts until the batch is full (the refill is
    the trainer's job).

    Deviations: a group of one is kept, as in VERL's filter (`len(values) > 1 and std == 0`); the paper
    never has singleton groups. Equality is exact, not within a tolerance.
    """
    stats = group_stats(scores, group_ids)
    return ~stats.constant | (stats.size == 1)


def overlong_penalty(
    lengths: torch.Tensor, *, max_length: int, buffer_length: int, penalty_factor: float = 1.0
) -> torch.Tensor:
    """DAPO's soft overlong punishment: 0 up to L_max − L_cache, then linear down to −factor at L_max.

    Shapes: lengths (B,) response lengths in tokens → penalty (B,), to be added to the reward.
    With `L_exp = max_length − buffer_length`:
    `0` if `|y| ≤ L_exp`; `−factor · (|y| − L_exp) / buffer_length` if `L_exp < |y| ≤ max_length`;
    `−factor` beyond `max_length`.

    Deviations: `penalty_factor` scales the paper's penalty (paper: 1), as VERL's
    `overlong_buffer.penalty_factor`. Beyond `max_length` the paper's floor of −factor holds; VERL keeps
    the line going, which only differs for responses longer than the generation limit.
    """
    if not max_length > 0:
        raise ValueError(f"max_length must be > 0 (the generation limit in tokens), got {max_length}")
    if not 0 < buffer_length <= max_length:
        raise ValueError(f"buffer_length must be in (0, max_length={max_length}], got {buffer_length}")
    if penalty_factor < 0:
        raise ValueError(f"penalty_factor must be >= 0, got {penalty_factor}")
    if lengths.dim() != 1:
        raise ValueError(f"lengths must be (batch,), got shape {tuple(lengths.shape)}")
    expected = max_length - buffer_length
    excess = (lengths.to(torch.float32) - expected).clamp(min=0, max=buffer_length)
    return -penalty_factor * excess / buffer_length

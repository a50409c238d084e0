"""Masked reductions and input checks shared by every module.

A mask marks the tokens that count (1 / True): the policy's own response tokens. Padding and, in
multi-turn episodes, the environment's feedback tokens are 0. Values under a 0 are never read:
they are replaced before any arithmetic, so even NaN or inf there changes nothing.
"""

from __future__ import annotations

import torch


def masked_sum(values: torch.Tensor, mask: torch.Tensor, dim: int | None = None) -> torch.Tensor:
    """Sum of `values` where `mask` is non-zero, over `dim` (all elements when None).

    Shapes: values and mask alike, e.g. (B, T); the result drops `dim`.
    """
    kept = torch.where(mask.bool(), values, torch.zeros((), dtype=values.dtype, device=values.device))
    return kept.sum() if dim is None else kept.sum(dim=dim)


def masked_count(
    mask: torch.Tensor, dim: int | None = None, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """How many elements of `mask` are non-zero, over `dim`, as `dtype`."""
    ones = mask.bool().to(dtype)
    return ones.sum() if dim is None else ones.sum(dim=dim)


def masked_mean(values: torch.Tensor, mask: torch.Tensor, dim: int | None = None) -> torch.Tensor:
    """Mean of `values` where `mask` is non-zero; 0 where nothing is selected (never NaN)."""
    count = masked_count(mask, dim, dtype=values.dtype)
    return masked_sum(values, mask, dim) / count.clamp(min=1)


def check_shapes(expected: tuple[int, ...] | None = None, /, **tensors: torch.Tensor | None) -> None:
    """Raise ValueError naming the offending argument unless every given tensor has one shape.

    `expected`, when given, is the shape they must all have. None values are skipped (optional inputs).
    """
    given = {name: t for name, t in tensors.items() if t is not None}
    for name, t in given.items():
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    shapes = {name: tuple(t.shape) for name, t in given.items()}
    reference = expected if expected is not None else next(iter(shapes.values()), None)
    wrong = {name: s for name, s in shapes.items() if s != reference}
    if wrong:
        listing = ", ".join(f"{name}={s}" for name, s in shapes.items())
        raise ValueError(f"shape mismatch: expected every tensor to be {reference}, got {listing}")


def check_2d(name: str, t: torch.Tensor) -> None:
    """Raise ValueError unless `t` is a (B, T) tensor."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dim() != 2:
        raise ValueError(f"{name} must be (batch, response_length), got shape {tuple(t.shape)}")

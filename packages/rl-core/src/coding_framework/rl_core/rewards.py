"""Reward shaping before advantages: clipping, running normalisation into [-1, 1], whitening."""

from __future__ import annotations

import math

import torch

from .masking import check_shapes, masked_count, masked_sum


def clip_rewards(rewards: torch.Tensor, *, low: float = -1.0, high: float = 1.0) -> torch.Tensor:
    """Clamp rewards into [low, high] (any shape), so one outlier cannot dominate a group's statistics."""
    if not low < high:
        raise ValueError(f"clip_rewards needs low < high, got low={low}, high={high}")
    return rewards.clamp(min=low, max=high)


def whiten(
    values: torch.Tensor, mask: torch.Tensor | None = None, *, shift_mean: bool = True, eps: float = 1e-8
) -> torch.Tensor:
    """Standardise `values` with the mean and unbiased variance of the selected elements.

    Shapes: values (any), mask alike (None selects everything) → values' shape.
    `(x − mean) / sqrt(var + eps)`; with `shift_mean=False` the mean is added back (scale only).
    Selected elements are all that is read; unselected outputs are 0. Same statistics as VERL's
    `masked_whiten` (Bessel-corrected variance, eps inside the square root).
    """
    if mask is None:
        mask = torch.ones_like(values, dtype=torch.bool)
    check_shapes(values=values, mask=mask)
    n = masked_count(mask, dtype=values.dtype)
    if n < 2:
        raise ValueError(
            f"whiten needs at least 2 selected values to estimate a variance, got {int(n)}; "
            "use a larger batch or a mask that selects more tokens"
        )
    mean = masked_sum(values, mask) / n
    centred = torch.where(
        mask.bool(), values - mean, torch.zeros((), dtype=values.dtype, device=values.device)
    )
    var = centred.square().sum() / (n - 1)
    out = centred * torch.rsqrt(var + eps)
    if not shift_mean:
        out = out + mean
    return torch.where(mask.bool(), out, torch.zeros_like(out))


class RunningRewardNormalizer:
    """Maps rewards into [-1, 1] with a running mean and standard deviation of every reward seen.

    `normalize(r) = clamp((r − mean) / max(clip_sigmas · std, eps), −1, 1)`: a reward `clip_sigmas`
    standard deviations above the running mean maps to 1 and anything beyond saturates. The statistics
    merge batch by batch (Chan et al.'s parallel update, in float64), so the result does not depend on
    how the stream was split into batches. Call `update` with each new batch (or call the object, which
    updates and then normalises); `state_dict` / `load_state_dict` carry it across a checkpoint.
    """

    def __init__(self, *, clip_sigmas: float = 3.0, eps: float = 1e-8):
        if not clip_sigmas > 0:
            raise ValueError(f"clip_sigmas must be > 0 (how many stds map to ±1), got {clip_sigmas}")
        if not eps > 0:
            raise ValueError(f"eps must be > 0, got {eps}")
        self.clip_sigmas = float(clip_sigmas)
        self.eps = float(eps)
        self.count = 0
        self.mean = 0.0
        self._m2 = 0.0  # sum of squared deviations from the mean

    @property
    def std(self) -> float:
        """Population standard deviation of every reward seen so far (0 before two rewards)."""
        return math.sqrt(self._m2 / self.count) if self.count > 1 else 0.0

    def update(self, rewards: torch.Tensor) -> None:
        """Fold a batch of rewards (any shape; every element counts) into the running statistics."""
        x = rewards.detach().to(torch.float64).flatten()
        if not torch.isfinite(x).all():
            raise ValueError("RunningRewardNormalizer.update: rewards contain NaN or inf")
        n = x.numel()
        if n == 0:
            return
        batch_mean = float(x.mean())
        batch_m2 = float((x - batch_mean).square().sum())
        total = self.count + n
        delta = batch_mean - self.mean
        self.mean += delta * n / total
        self._m2 += batch_m2 + delta * delta * self.count * n / total
        self.count = total

    def normalize(self, rewards: torch.Tensor) -> torch.Tensor:
        """Rewards mapped into [-1, 1] with the current statistics (same shape and dtype)."""
        if self.count == 0:
            raise RuntimeError(
                "RunningRewardNormalizer.normalize before any update: call update(rewards) first"
            )
        scale = max(self.clip_sigmas * self.std, self.eps)
        return ((rewards - self.mean) / scale).clamp(-1.0, 1.0)

    def __call__(self, rewards: torch.Tensor) -> torch.Tensor:
        """Update with this batch, then normalise it."""
        self.update(rewards)
        return self.normalize(rewards)

    def state_dict(self) -> dict[str, float]:
        """Everything needed to resume: count, mean and the sum of squared deviations."""
        return {"count": self.count, "mean": self.mean, "m2": self._m2}

    def load_state_dict(self, state: dict[str, float]) -> None:
        """Restore the statistics saved by `state_dict`."""
        missing = {"count", "mean", "m2"} - set(state)
        if missing:
            raise KeyError(f"RunningRewardNormalizer state lacks {sorted(missing)}")
        if state["count"] < 0 or state["m2"] < 0:
            raise ValueError(f"RunningRewardNormalizer state is invalid: {state}")
        self.count, self.mean, self._m2 = int(state["count"]), float(state["mean"]), float(state["m2"])

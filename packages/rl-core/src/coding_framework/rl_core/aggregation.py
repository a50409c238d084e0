"""Loss aggregation: how a (B, T) matrix of per-token losses becomes the scalar that is minimised.

Each mode is its own function with one signature, `(loss, mask, *, batch=LOCAL_BATCH) -> scalar`,
so a trainer picks one from `LOSS_AGGREGATIONS` by name and never branches on the mode. Masked
tokens are never read, and a sequence with no valid token is left out of every sequence mean.

Data-parallel training splits a global batch over ranks and micro-batches that then average their
gradients; `GlobalBatch` carries the global counts so that each micro-batch's loss is its share of
the global-batch loss (VERL's `global_batch_info`). Without it the micro-batch is its own batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .masking import check_2d, check_shapes, masked_count, masked_sum
from .registry import Registry


@dataclass(frozen=True)
class GlobalBatch:
    """What the caller knows about the global batch a micro-batch belongs to."""

    dp_size: int = 1
    """Data-parallel ranks whose gradients are averaged; each rank's loss is scaled up by it."""
    num_tokens: float | torch.Tensor | None = None
    """Valid tokens in the global batch (token-mean); None: this micro-batch's own count."""
    num_sequences: float | torch.Tensor | None = None
    """Non-empty sequences in the global batch (seq-mean modes); None: this micro-batch's own count."""
    norm_length: float | None = None
    """The constant length L of seq-mean-token-sum-norm; None: the padded length T of the batch."""

    def __post_init__(self) -> None:
        if not isinstance(self.dp_size, int) or self.dp_size < 1:
            raise ValueError(f"GlobalBatch.dp_size must be an int >= 1, got {self.dp_size!r}")
        if self.norm_length is not None and not self.norm_length > 0:
            raise ValueError(
                f"GlobalBatch.norm_length must be > 0 (e.g. the max response length), got {self.norm_length}"
            )
        for name in ("num_tokens", "num_sequences"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, torch.Tensor) and value < 0:
                raise ValueError(f"GlobalBatch.{name} must be >= 0, got {value}")


LOCAL_BATCH = GlobalBatch()
"""A micro-batch that is the whole batch: one rank, counts taken from the micro-batch itself."""


def _global_count(given: float | torch.Tensor | None, local: torch.Tensor, batch: GlobalBatch, what: str):
    if given is not None:
        return given
    if batch.dp_size > 1:
        raise ValueError(
            f"with dp_size={batch.dp_size} the global {what} is required: set GlobalBatch.{what}"
        )
    return local


def _safe_divide(total: torch.Tensor, count: float | torch.Tensor) -> torch.Tensor:
    # An empty micro-batch (everything masked, e.g. all groups filtered) contributes 0, not NaN.
    count = torch.as_tensor(count, dtype=total.dtype, device=total.device)
    return torch.where(
        count > 0, total / count.clamp(min=torch.finfo(total.dtype).tiny), torch.zeros_like(total)
    )


def _check(loss: torch.Tensor, mask: torch.Tensor) -> None:
    check_2d("loss", loss)
    check_shapes(loss=loss, mask=mask)


def token_mean(loss: torch.Tensor, mask: torch.Tensor, *, batch: GlobalBatch = LOCAL_BATCH) -> torch.Tensor:
    """Mean over every valid token of the batch: long responses weigh more (DAPO's token-level loss).

    Shapes: loss, mask (B, T) → scalar. `Σ_{i,t} m·ℓ / N_tokens · dp_size`.
    Paper: Yu et al. 2025, "DAPO", arXiv:2503.14476 (token-level policy gradient loss).
    Deviation from VERL: an all-masked batch gives 0 instead of NaN.
    """
    _check(loss, mask)
    count = _global_count(batch.num_tokens, masked_count(mask, dtype=loss.dtype), batch, "num_tokens")
    return _safe_divide(masked_sum(loss, mask), count) * batch.dp_size


def token_sum(loss: torch.Tensor, mask: torch.Tensor, *, batch: GlobalBatch = LOCAL_BATCH) -> torch.Tensor:
    """Sum over every valid token, not normalised: the loss grows with batch size and length.

    Shapes: loss, mask (B, T) → scalar. `Σ_{i,t} m·ℓ · dp_size` (the rank average then yields the
    global sum).
    """
    _check(loss, mask)
    return masked_sum(loss, mask) * batch.dp_size


def _sequence_mean(per_sequence: torch.Tensor, mask: torch.Tensor, batch: GlobalBatch) -> torch.Tensor:
    nonempty = masked_count(mask, dim=-1, dtype=per_sequence.dtype) > 0
    local = nonempty.to(per_sequence.dtype).sum()
    count = _global_count(batch.num_sequences, local, batch, "num_sequences")
    return _safe_divide(masked_sum(per_sequence, nonempty), count) * batch.dp_size


def seq_mean_token_sum(
    loss: torch.Tensor, mask: torch.Tensor, *, batch: GlobalBatch = LOCAL_BATCH
) -> torch.Tensor:
    """Sum over each sequence's tokens, then mean over sequences: long responses weigh more.

    Shapes: loss, mask (B, T) → scalar. `(1/N_seq) Σ_i Σ_t m·ℓ · dp_size`, over non-empty sequences.
    """
    _check(loss, mask)
    return _sequence_mean(masked_sum(loss, mask, dim=-1), mask, batch)


def seq_mean_token_mean(
    loss: torch.Tensor, mask: torch.Tensor, *, batch: GlobalBatch = LOCAL_BATCH
) -> torch.Tensor:
    """Mean over each sequence's tokens, then mean over sequences: the original GRPO objective.

    Shapes: loss, mask (B, T) → scalar. `(1/N_seq) Σ_i (1/|o_i|) Σ_t m·ℓ · dp_size`.
    Paper: Shao et al. 2024, "DeepSeekMath" (GRPO), arXiv:2402.03300.
    Deviation from VERL: the per-sequence mean divides by the token count exactly (VERL adds 1e-8).
    """
    _check(loss, mask)
    per_sequence = masked_sum(loss, mask, dim=-1) / masked_count(mask, dim=-1, dtype=loss.dtype).clamp(min=1)
    return _sequence_mean(per_sequence, mask, batch)


def seq_mean_token_sum_norm(
    loss: torch.Tensor, mask: torch.Tensor, *, batch: GlobalBatch = LOCAL_BATCH
) -> torch.Tensor:
    """Sum over each sequence's tokens divided by a constant length L, then mean over sequences.

    Shapes: loss, mask (B, T) → scalar. `(1/N_seq) Σ_i Σ_t m·ℓ / L · dp_size`, L =
    `batch.norm_length`, else the padded length T.
    Paper: Liu et al. 2025, "Understanding R1-Zero-Like Training" (Dr. GRPO), arXiv:2503.20783:
    no per-response length normalisation, so response length does not bias the gradient.
    Deviation from the paper: L defaults to the batch's padded length (as VERL), which varies between
    batches unless the caller pins it with `norm_length` (e.g. the max response length).
    """
    _check(loss, mask)
    length = batch.norm_length if batch.norm_length is not None else loss.shape[-1]
    return seq_mean_token_sum(loss, mask, batch=batch) / length


LOSS_AGGREGATIONS: Registry = Registry(
    "loss aggregation",
    {
        "token-mean": token_mean,
        "token-sum": token_sum,
        "seq-mean-token-sum": seq_mean_token_sum,
        "seq-mean-token-mean": seq_mean_token_mean,
        "seq-mean-token-sum-norm": seq_mean_token_sum_norm,
    },
)

"""Random batches shaped like a real RL step, shared by the rl-core tests.

A batch has groups of uneven size (including groups of one) in shuffled order, responses of
different lengths (right padding), and, in some responses, a masked span in the middle: the
environment's feedback tokens of a multi-turn episode. Rewards follow VERL's convention: the outcome
score sits at the last valid token.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
import torch

from coding_framework.rl_core.engine import write_tiny_model

GROUP_SIZES = (4, 1, 3, 5, 1, 2)


@dataclass
class Batch:
    uids: np.ndarray  # (B,) str, VERL's non_tensor_batch["uid"]
    group_ids: torch.Tensor  # (B,) int64, the same grouping as integers
    mask: torch.Tensor  # (B, T) float32
    scores: torch.Tensor  # (B,)
    rewards: torch.Tensor  # (B, T), score at the last valid token
    dense_rewards: torch.Tensor  # (B, T), a reward on every valid token
    values: torch.Tensor  # (B, T)
    baselines: torch.Tensor  # (B,)
    old_log_prob: torch.Tensor  # (B, T)
    log_prob: torch.Tensor  # (B, T)
    ref_log_prob: torch.Tensor  # (B, T)
    advantages: torch.Tensor  # (B, T)
    weights: torch.Tensor  # (B, T), positive importance weights

    @property
    def size(self) -> int:
        return self.mask.shape[0]


def _make_batch(
    seed: int,
    *,
    group_sizes: tuple[int, ...] = GROUP_SIZES,
    length: int = 9,
    binary_scores: bool = False,
    drift: float = 0.3,
) -> Batch:
    """A reproducible batch; `drift` is the std of log_prob − old_log_prob."""
    g = torch.Generator().manual_seed(seed)
    group_of = np.repeat(np.arange(len(group_sizes)), group_sizes)
    order = torch.randperm(len(group_of), generator=g).numpy()
    group_of = group_of[order]
    batch = len(group_of)

    lengths = torch.randint(2, length + 1, (batch,), generator=g)
    positions = torch.arange(length).unsqueeze(0)
    mask = (positions < lengths.unsqueeze(1)).float()
    for i in range(0, batch, 3):  # a feedback span inside every third response
        if lengths[i] >= 5:
            mask[i, 1:3] = 0.0

    if binary_scores:
        scores = torch.randint(0, 2, (batch,), generator=g).float()
    else:
        scores = torch.randn(batch, generator=g)
    last = (mask * positions).argmax(dim=1)
    rewards = torch.zeros(batch, length)
    rewards[torch.arange(batch), last] = scores

    def noise(scale: float = 1.0) -> torch.Tensor:
        return torch.randn(batch, length, generator=g) * scale

    old_log_prob = -torch.rand(batch, length, generator=g) * 3 - 0.05
    return Batch(
        uids=np.array([f"prompt-{k}" for k in group_of], dtype=object),
        group_ids=torch.as_tensor(group_of, dtype=torch.long),
        mask=mask,
        scores=scores,
        rewards=rewards,
        dense_rewards=noise() * mask,
        values=noise(),
        baselines=torch.randn(batch, generator=g),
        old_log_prob=old_log_prob,
        log_prob=old_log_prob + noise(drift),
        ref_log_prob=old_log_prob + noise(drift),
        advantages=noise(),
        weights=torch.rand(batch, length, generator=g) * 1.5 + 0.25,
    )


@pytest.fixture
def make_batch():
    """Factory: `make_batch(seed, group_sizes=..., length=..., binary_scores=..., drift=...)` → Batch."""
    return _make_batch


@pytest.fixture
def batch() -> Batch:
    return _make_batch(0)


def pytest_configure(config):
    # Importing VERL's trainer warns once per optional engine it cannot find (megatron, torchtitan...).
    config.addinivalue_line("filterwarnings", "ignore:.*engine is not available:UserWarning")
    config.addinivalue_line(
        "filterwarnings", "ignore:Ray state API is no longer experimental:DeprecationWarning"
    )


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A tiny random Llama directory for the engine tests (one per test module; modules may override)."""
    return write_tiny_model(
        tmp_path_factory.mktemp("tiny") / "model", hidden_size=32, num_layers=1, num_heads=2
    )

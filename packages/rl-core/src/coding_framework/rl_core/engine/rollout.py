"""From the policy to training tensors: the `generate` callback environments call, and the token batch
built from the trajectories they return.

A trajectory is a list of text segments tagged trainable or not. It is tokenized segment by segment
(the first with the tokenizer's special tokens, as a prompt), so every token belongs to exactly one
segment and its mask bit is the segment's tag: the policy's own tokens are 1, prompt and environment
feedback tokens 0. A trainable segment that is the `SampledText` `generate` returned keeps its sampled
tokens (with the end-of-sequence token, so the policy learns to stop). The sequence the policy is
trained on can therefore differ from the one it sampled from at segment boundaries (whole-prompt vs
per-segment tokenization); log-probabilities are always recomputed on the final sequence, never carried
over from sampling.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .environment import SampledText, SegmentLike, Trajectory
from .policy import Policy
from .sampling import sample


@dataclass(frozen=True)
class EncodedTrajectory:
    """One trajectory as tokens."""

    token_ids: tuple[int, ...]
    trainable: tuple[bool, ...]
    """Per token: True for the policy's own tokens."""
    longest_turn: int
    """Tokens in the longest trainable segment (DAPO's overlong penalty reads it)."""


def encode_segments(segments: Sequence[SegmentLike], policy: Policy) -> EncodedTrajectory:
    """Tokenize a transcript segment by segment; the mask bit of each token is its segment's tag."""
    ids: list[int] = []
    mask: list[bool] = []
    longest = 0
    for index, segment in enumerate(segments):
        text, trainable = segment.text, bool(segment.trainable)
        if not isinstance(text, str):
            raise TypeError(f"segment {index} has text of type {type(text).__name__}; segments hold str")
        if trainable and isinstance(text, SampledText):
            piece = list(text.token_ids)
        else:
            piece = policy.encode(text, first=index == 0) if text or index == 0 else []
        ids.extend(piece)
        mask.extend([trainable] * len(piece))
        if trainable:
            longest = max(longest, len(piece))
    if mask and mask[0]:
        # The first token has no context to be predicted from: it cannot be trained on.
        mask[0] = False
    return EncodedTrajectory(tuple(ids), tuple(mask), longest)


def truncate_left(encoded: EncodedTrajectory, limit: int | None) -> EncodedTrajectory:
    """Keep the last `limit` tokens (the model's positions); the oldest context goes first.

    The new first token loses its mask bit (nothing precedes it to predict it from).
    """
    if limit is None or len(encoded.token_ids) <= limit:
        return encoded
    mask = list(encoded.trainable[-limit:])
    mask[0] = False
    return EncodedTrajectory(encoded.token_ids[-limit:], tuple(mask), encoded.longest_turn)


@dataclass(frozen=True)
class TokenBatch:
    """Left-padded full sequences (prompt + everything after) and the window holding trainable tokens.

    The response window starts at `start`, the first position any row trains on, and runs to the end;
    log-probabilities, masks and advantages are all (B, T) over it, T = L − start. Predicting the
    token at position p reads the logits at p − 1.
    """

    input_ids: torch.Tensor
    """(B, L) long."""
    attention_mask: torch.Tensor
    """(B, L) long, 0 on left padding."""
    trainable: torch.Tensor
    """(B, L) bool, True on the policy's own tokens."""

    @property
    def start(self) -> int:
        """First column with a trainable token (at least 1)."""
        columns = self.trainable.any(0).nonzero()
        return max(1, int(columns[0])) if len(columns) else self.input_ids.shape[1] - 1

    @property
    def response_mask(self) -> torch.Tensor:
        """(B, T) float32: 1 on trainable tokens of the window."""
        return self.trainable[:, self.start :].float()

    @property
    def size(self) -> int:
        return self.input_ids.shape[0]

    def rows(self, index: torch.Tensor | Sequence[int]) -> TokenBatch:
        """A sub-batch of these rows, with columns that are padding in every row dropped."""
        index = torch.as_tensor(index, dtype=torch.long, device=self.input_ids.device)
        attention = self.attention_mask[index]
        used = attention.any(0).nonzero()
        first = int(used[0]) if len(used) else 0
        return TokenBatch(self.input_ids[index, first:], attention[:, first:], self.trainable[index, first:])


def build_token_batch(
    encoded: Sequence[EncodedTrajectory],
    pad_token_id: int,
    device: torch.device | str = "cpu",
    max_positions: int | None = None,
) -> TokenBatch:
    """Left-pad encoded trajectories into a TokenBatch on `device`."""
    if not encoded:
        raise ValueError("build_token_batch needs at least one trajectory")
    length = max(len(e.token_ids) for e in encoded)
    if max_positions is not None and length > max_positions:
        raise ValueError(
            f"a trajectory has {length} tokens but the model takes at most {max_positions}: lower "
            "max_new_tokens or the number of turns, or use a model with a longer context"
        )
    ids = torch.full((len(encoded), length), pad_token_id, dtype=torch.long)
    attention = torch.zeros((len(encoded), length), dtype=torch.long)
    trainable = torch.zeros((len(encoded), length), dtype=torch.bool)
    for row, e in enumerate(encoded):
        n = len(e.token_ids)
        if n:
            ids[row, length - n :] = torch.as_tensor(e.token_ids, dtype=torch.long)
            attention[row, length - n :] = 1
            trainable[row, length - n :] = torch.as_tensor(e.trainable, dtype=torch.bool)
    return TokenBatch(ids.to(device), attention.to(device), trainable.to(device))


def encode_trajectories(trajectories: Sequence[Trajectory], policy: Policy) -> list[EncodedTrajectory]:
    return [encode_segments(t.segments, policy) for t in trajectories]


class PolicySampler:
    """The `generate` callback handed to environments: prompt texts → `SampledText` completions.

    Accumulates the seconds it spends and the tokens it generates, which the trainer reports as the
    rollout time (everything else an environment does between calls is scoring). A prompt too long for
    the model's positions with max_new_tokens after it keeps only its last tokens (counted in
    `truncated_prompts`).
    """

    def __init__(
        self,
        policy: Policy,
        *,
        max_new_tokens: int,
        temperature: float,
        top_p: float,
        generator: torch.Generator | None,
        batch_size: int | None = None,
    ):
        self.policy = policy
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.top_p = top_p
        self.generator = generator
        self.batch_size = batch_size
        limit = policy.max_positions
        if limit is not None and max_new_tokens >= limit:
            raise ValueError(
                f"max_new_tokens={max_new_tokens} leaves no room for a prompt in the model's {limit} "
                "positions: lower max_new_tokens"
            )
        self.seconds = 0.0
        self.calls = 0
        self.generated_tokens = 0
        self.truncated_prompts = 0

    def __call__(self, prompts: Sequence[str]) -> list[str]:
        if isinstance(prompts, str):
            raise TypeError("generate takes a list of prompt texts, not one str")
        began = time.perf_counter()
        try:
            encoded = []
            for text in prompts:
                if not isinstance(text, str):
                    raise TypeError(f"generate got a prompt of type {type(text).__name__}; prompts are str")
                ids = self.policy.encode(text, first=True)
                limit = self.policy.max_positions
                if limit is not None and len(ids) + self.max_new_tokens > limit:
                    # A long multi-turn transcript keeps its most recent context rather than stopping
                    # the run; `truncated_prompts` reports how often that happens.
                    ids = ids[len(ids) + self.max_new_tokens - limit :]
                    self.truncated_prompts += 1
                encoded.append(ids)
            size = self.batch_size or max(1, len(encoded))
            samples = []
            for begin in range(0, len(encoded), size):
                samples.extend(
                    sample(
                        self.policy.model,
                        encoded[begin : begin + size],
                        max_new_tokens=self.max_new_tokens,
                        temperature=self.temperature,
                        top_p=self.top_p,
                        eos_token_ids=self.policy.eos_token_ids,
                        pad_token_id=self.policy.pad_token_id,
                        generator=self.generator,
                        device=self.policy.device,
                        autocast=self.policy.autocast,
                    )
                )
            out: list[str] = []
            for s in samples:
                body = list(s.token_ids[:-1] if s.finished else s.token_ids)
                out.append(SampledText(self.policy.decode(body), s.token_ids, s.finished))
                self.generated_tokens += len(s.token_ids)
            self.calls += 1
            return out
        finally:
            self.seconds += time.perf_counter() - began

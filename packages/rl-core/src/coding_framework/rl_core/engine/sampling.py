"""Batched token sampling with a KV cache: left-padded prompts, temperature, top-p, a seeded generator.

The engine samples with its own loop rather than `model.generate` so that every random draw comes from
one `torch.Generator` whose state is saved in checkpoints: the same generator state and the same prompts
give the same tokens. Temperature 0 is greedy (argmax, no draw).
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Sequence
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Sample:
    """One completion."""

    token_ids: tuple[int, ...]
    """Sampled tokens, including the end-of-sequence token when `finished`."""
    finished: bool
    """True when the policy emitted an end-of-sequence token within the limit."""


def left_pad(sequences: Sequence[Sequence[int]], pad_id: int, device: torch.device | str = "cpu"):
    """Left-pad token lists: → input_ids (B, L) long, attention_mask (B, L) long (1 on real tokens)."""
    if not sequences:
        raise ValueError("left_pad needs at least one sequence")
    length = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), length), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), length), dtype=torch.long)
    for i, seq in enumerate(sequences):
        if seq:
            ids[i, length - len(seq) :] = torch.as_tensor(list(seq), dtype=torch.long)
            mask[i, length - len(seq) :] = 1
    return ids.to(device), mask.to(device)


def position_ids_of(attention_mask: torch.Tensor) -> torch.Tensor:
    """Positions counted over real tokens only, so a left-padded row starts at 0: (B, L) → (B, L)."""
    return (attention_mask.long().cumsum(-1) - 1).clamp(min=0)


def accepts(model: torch.nn.Module, name: str) -> bool:
    """Whether the model's forward takes keyword `name` (e.g. logits_to_keep)."""
    try:
        return name in inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return False


def filter_top_p(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    """Set to -inf every logit outside the smallest set whose probability mass reaches top_p.

    Shapes: (B, V) → (B, V). The most likely token is always kept.
    """
    if top_p >= 1.0:
        return logits
    sorted_logits, order = torch.sort(logits, dim=-1, descending=True)
    probs = torch.softmax(sorted_logits, dim=-1)
    # Mass strictly before each token: a token is kept while the mass before it is below top_p.
    before = probs.cumsum(-1) - probs
    drop_sorted = before >= top_p
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))


def next_tokens(
    logits: torch.Tensor, *, temperature: float, top_p: float, generator: torch.Generator | None
) -> torch.Tensor:
    """One token per row from (B, V) logits: argmax when temperature is 0, else a draw → (B,)."""
    if temperature == 0:
        return logits.argmax(-1)
    scaled = filter_top_p(logits.float() / temperature, top_p)
    probs = torch.softmax(scaled, dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


@torch.no_grad()
def sample(
    model: torch.nn.Module,
    prompts: Sequence[Sequence[int]],
    *,
    max_new_tokens: int,
    temperature: float,
    top_p: float,
    eos_token_ids: Sequence[int],
    pad_token_id: int,
    generator: torch.Generator | None,
    device: torch.device,
    autocast=None,
) -> list[Sample]:
    """Sample one completion per prompt, all prompts in one batch.

    Args:
        prompts: token ids of each prompt (not padded).
        max_new_tokens: the most tokens a completion gets.
        temperature: 0 = greedy; else logits / temperature.
        top_p: nucleus filter (1 = off).
        eos_token_ids: any of them ends a completion (and is kept as its last token).
        generator: source of every random draw (on `device`); None uses torch's global generator.
        autocast: a context manager factory for the forward passes (compute dtype), or None.
    Returns:
        one Sample per prompt, in order.
    """
    if any(len(p) == 0 for p in prompts):
        raise ValueError(
            "every prompt needs at least one token; an empty text encodes to nothing with this tokenizer"
        )
    input_ids, attention = left_pad(prompts, pad_token_id, device)
    batch = input_ids.shape[0]
    positions = position_ids_of(attention)
    eos = torch.as_tensor(sorted(set(eos_token_ids)), dtype=torch.long, device=device)
    finished = torch.zeros(batch, dtype=torch.bool, device=device)
    out = torch.full((batch, max_new_tokens), pad_token_id, dtype=torch.long, device=device)
    lengths = torch.zeros(batch, dtype=torch.long, device=device)
    keep_last = {"logits_to_keep": 1} if accepts(model, "logits_to_keep") else {}
    with_positions = accepts(model, "position_ids")
    context = autocast or contextlib.nullcontext
    cache = None
    step_input, step_positions = input_ids, positions
    for t in range(max_new_tokens):
        with context():
            positions_kw = {"position_ids": step_positions} if with_positions else {}
            result = model(
                input_ids=step_input,
                attention_mask=attention,
                past_key_values=cache,
                use_cache=True,
                **positions_kw,
                **keep_last,
            )
        cache = result.past_key_values
        token = next_tokens(
            result.logits[:, -1, :].float(), temperature=temperature, top_p=top_p, generator=generator
        )
        token = torch.where(finished, torch.full_like(token, pad_token_id), token)
        out[:, t] = token
        lengths += (~finished).long()
        finished = finished | torch.isin(token, eos)
        if bool(finished.all()) or t == max_new_tokens - 1:
            break
        step_input = token.unsqueeze(-1)
        step_positions = step_positions[:, -1:] + 1
        attention = torch.cat(
            [attention, torch.ones((batch, 1), dtype=attention.dtype, device=device)], dim=1
        )
    rows = out.cpu().tolist()
    done = finished.cpu().tolist()
    counts = lengths.cpu().tolist()
    return [Sample(tuple(row[:n]), bool(f)) for row, n, f in zip(rows, counts, done, strict=True)]

"""Supervised training on prompt → completion pairs: loss on the completion and its EOS only.

Each example is `<|bos|> prompt completion <|eos|>`, with prompt and completion tokenized separately,
exactly as an engine tokenizes a prompt and then generates: so the model never sees a token that
straddles the prompt/completion boundary. Batches are drawn without replacement from a seeded
permutation per epoch; the learning rate warms up linearly and then stays constant, so the model
after step k does not depend on the total step count.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from tools.tiny_coder.config import BuildConfig
from tools.tiny_coder.corpus import Pair
from tools.tiny_coder.tokenizer import encode_plain

IGNORE = -100
BUCKET_BATCHES = 16
"""Batches per length-sorting window (see `batch_order`)."""


@dataclass(frozen=True)
class Example:
    """One tokenized pair."""

    input_ids: tuple[int, ...]
    """`[bos] + prompt + completion + [eos]`."""
    labels: tuple[int, ...]
    """Same length; IGNORE on bos and prompt tokens, the token itself on completion and eos."""


def encode_pairs(pairs: Sequence[Pair], tokenizer, max_positions: int) -> list[Example]:
    """Tokenize every pair; raise if one does not fit in `max_positions`."""
    bos, eos = tokenizer.bos_token_id, tokenizer.eos_token_id
    examples = []
    for pair in pairs:
        prompt = encode_plain(tokenizer, pair.prompt)
        completion = [*encode_plain(tokenizer, pair.completion), eos]
        ids = [bos, *prompt, *completion]
        if len(ids) > max_positions:
            raise ValueError(f"a {pair.family} pair has {len(ids)} tokens > max_positions={max_positions}; "
                             "raise --max-positions")
        examples.append(Example(tuple(ids), tuple([IGNORE] * (1 + len(prompt)) + completion)))
    return examples


def collate(examples: Sequence[Example], pad_id: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-padded `(input_ids, attention_mask, labels)`, each (B, T) int64, T the longest example."""
    width = max(len(e.input_ids) for e in examples)
    ids = torch.full((len(examples), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(examples), width), dtype=torch.long)
    labels = torch.full((len(examples), width), IGNORE, dtype=torch.long)
    for row, e in enumerate(examples):
        n = len(e.input_ids)
        ids[row, :n] = torch.tensor(e.input_ids)
        mask[row, :n] = 1
        labels[row, :n] = torch.tensor(e.labels)
    return ids, mask, labels


def batch_order(lengths: Sequence[int], batch_size: int, steps: int, seed: int,
                bucket: int = BUCKET_BATCHES) -> list[list[int]]:
    """Example indices of each step's batch.

    Each epoch draws a fresh seeded permutation, cuts it into windows of `bucket` batches, sorts each
    window by length and slices it into batches (so a batch holds examples of similar length and
    little padding), then shuffles the epoch's batches. A short remainder of an epoch is dropped.
    """
    n_examples = len(lengths)
    if n_examples < batch_size:
        raise ValueError(f"{n_examples} examples < batch_size={batch_size}: raise --problems")
    generator = torch.Generator().manual_seed(seed)
    batches: list[list[int]] = []
    while len(batches) < steps:
        perm = torch.randperm(n_examples, generator=generator).tolist()
        usable = n_examples - n_examples % batch_size
        epoch: list[list[int]] = []
        for start in range(0, usable, batch_size * bucket):
            window = sorted(perm[start:min(start + batch_size * bucket, usable)], key=lambda i: lengths[i])
            epoch.extend(window[j:j + batch_size] for j in range(0, len(window), batch_size))
        order = torch.randperm(len(epoch), generator=generator).tolist()
        batches.extend(epoch[i] for i in order)
    return batches[:steps]


def completion_loss(model, ids: torch.Tensor, mask: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy over completion tokens of the batch (token-mean), a scalar."""
    logits = model(input_ids=ids, attention_mask=mask).logits  # (B, T, V)
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1),
                           ignore_index=IGNORE)


def lr_at(step: int, config: BuildConfig) -> float:
    """Learning rate for 0-based `step`: linear warmup over warmup_steps, then constant."""
    if config.warmup_steps and step < config.warmup_steps:
        return config.lr * (step + 1) / config.warmup_steps
    return config.lr


def make_optimizer(model: torch.nn.Module, config: BuildConfig) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices only (norm gains and nothing else are exempt)."""
    unique = {id(p): p for p in model.parameters()}.values()
    decay = [p for p in unique if p.dim() >= 2]
    rest = [p for p in unique if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": config.weight_decay}, {"params": rest, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=config.lr, betas=(0.9, 0.95), eps=1e-8)


@dataclass(frozen=True)
class TrainLog:
    """What training did, for the model card."""

    steps: int
    seconds: float
    losses: tuple[tuple[int, float], ...]
    """(step, mean loss over the steps since the previous entry)."""
    examples_seen: int
    epochs: float


def train(model, examples: Sequence[Example], config: BuildConfig, pad_id: int,
          on_step: Callable[[int], None] | None = None, log: Callable[[str], None] = print) -> TrainLog:
    """Run `config.steps` AdamW steps on `examples`; `on_step(k)` is called after step k (1-based)."""
    torch.manual_seed(config.seed)
    model.train()
    optimizer = make_optimizer(model, config)
    batches = batch_order([len(e.input_ids) for e in examples], config.batch_size, config.steps,
                          config.seed)
    losses: list[tuple[int, float]] = []
    window: list[float] = []
    start = time.perf_counter()
    for step, indices in enumerate(batches):
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, config)
        ids, mask, labels = collate([examples[i] for i in indices], pad_id)
        loss = completion_loss(model, ids, mask, labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
        optimizer.step()
        value = loss.item()
        if not math.isfinite(value):
            raise FloatingPointError(f"training loss became {value} at step {step + 1}; lower --lr")
        window.append(value)
        done = step + 1
        if done % config.log_every == 0 or done == config.steps:
            losses.append((done, sum(window) / len(window)))
            window = []
            log(f"step {done}/{config.steps} loss {losses[-1][1]:.4f} "
                f"({time.perf_counter() - start:.0f} s)")
        if on_step is not None:
            on_step(done)
    model.eval()
    seen = config.steps * config.batch_size
    return TrainLog(config.steps, time.perf_counter() - start, tuple(losses), seen, seen / len(examples))

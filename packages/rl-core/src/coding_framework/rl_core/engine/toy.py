"""Toys for smoke runs and tests: a tiny random causal LM directory and an environment it can learn.

`write_tiny_model` writes a Hugging Face model directory (no download, a few hundred kilobytes, loads in
a fraction of a second): a Llama with random weights drawn from `seed` and a tokenizer with one token
per byte (any text round-trips exactly) plus `<pad>`, `<s>` (prepended to every encoded prompt, as
Llama's) and `</s>`. It writes gibberish until trained.

`CharacterTargetEnvironment` implements the engine's Environment protocol with a reward a tiny model
can learn in a few steps: the fraction of the completion's characters that are target characters.
With `turns=2` each episode has a second turn after a fixed feedback text, exercising multi-turn loss
masks. It needs no sandbox, so an RL run on it checks the engine alone.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Any

import torch

PAD, BOS, EOS = "<pad>", "<s>", "</s>"


def _byte_symbols() -> list[str]:
    """The printable stand-in of each byte 0..255 used by byte-level BPE (GPT-2's byte ↔ unicode map)."""
    direct = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    symbols, extra = {}, 0
    for byte in range(256):
        if byte in direct:
            symbols[byte] = chr(byte)
        else:
            symbols[byte] = chr(256 + extra)
            extra += 1
    return [symbols[b] for b in range(256)]


def byte_tokenizer():
    """A transformers fast tokenizer whose token id is the byte value (0–255), plus <pad>, <s>, </s>
    (ids 256, 257, 258); encoding adds <s> in front as a prompt's special token."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {symbol: byte for byte, symbol in enumerate(_byte_symbols())}
    if set(vocab) != set(pre_tokenizers.ByteLevel.alphabet()):
        raise RuntimeError("the byte map disagrees with tokenizers' ByteLevel alphabet")
    for special in (PAD, BOS, EOS):
        vocab[special] = len(vocab)
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    backend.decoder = decoders.ByteLevel()
    backend.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A $B", special_tokens=[(BOS, vocab[BOS])]
    )
    return PreTrainedTokenizerFast(tokenizer_object=backend, pad_token=PAD, bos_token=BOS, eos_token=EOS)


def write_tiny_model(
    path: str | os.PathLike[str],
    *,
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 4,
    intermediate_size: int | None = None,
    max_positions: int = 2048,
    seed: int = 0,
) -> Path:
    """Write a random Llama (≈ 35k parameters at the defaults plus 2 × 259 × hidden_size embeddings) and
    the byte tokenizer to `path`; returns it. The same arguments give the same weights.
    """
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = byte_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=intermediate_size or 2 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_heads,
        max_position_embeddings=max_positions,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=False,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    target = Path(path)
    target.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(target), safe_serialization=True)
    tokenizer.save_pretrained(str(target))
    return target


@dataclass(frozen=True)
class ToyTask:
    """A prompt of the toy environment."""

    id: str
    prompt: str


@dataclass(frozen=True)
class ToySegment:
    kind: str
    """"prompt", "policy" or "feedback"."""
    text: str

    @property
    def trainable(self) -> bool:
        return self.kind == "policy"


@dataclass(frozen=True)
class ToyTrajectory:
    segments: tuple[ToySegment, ...]
    reward: float
    metrics: dict[str, float] = field(default_factory=dict)


class CharacterTargetEnvironment:
    """Reward = share of the last completion's characters found in `target` (0 for an empty one).

    Args:
        target: the characters the policy should learn to write (any of them counts).
        turns: 1, or 2 for a second attempt after the fixed `feedback` text.
        pass_threshold: an episode "passed" when its reward reaches this.
        seed: seeds the order in which training prompts are drawn.
        train_prompts, heldout_prompts: the prompt texts.
    """

    FEEDBACK = "\n# more {target}\n"

    def __init__(
        self,
        *,
        target: str = "x",
        turns: int = 1,
        pass_threshold: float = 0.5,
        seed: int = 0,
        train_prompts: Sequence[str] = ("a:", "b:", "c:", "d:", "e:", "f:", "g:", "h:"),
        heldout_prompts: Sequence[str] = ("p:", "q:", "r:", "s:"),
    ):
        if not target:
            raise ValueError("target is empty: give the character(s) the policy should write")
        if turns not in (1, 2):
            raise ValueError(f"turns={turns}: use 1 or 2")
        if not train_prompts or not heldout_prompts:
            raise ValueError("give at least one training and one held-out prompt")
        self.target = target
        self.turns = turns
        self.pass_threshold = pass_threshold
        self.seed = seed
        self.train = [ToyTask(f"train-{i}", p) for i, p in enumerate(train_prompts)]
        self.heldout = [ToyTask(f"heldout-{i}", p) for i, p in enumerate(heldout_prompts)]
        self.draws = 0
        self.recorded = 0
        self.recorded_reward = 0.0

    def reward_of(self, completion: str) -> float:
        return sum(c in self.target for c in completion) / len(completion) if completion else 0.0

    def sample_batch(self, step: int, size: int) -> list[ToyTask]:
        out = []
        for _ in range(size):
            out.append(Random(f"toy/{self.seed}/{self.draws}").choice(self.train))
            self.draws += 1
        return out

    def _episodes(self, tasks: Sequence[ToyTask], generate: Callable[[list[str]], list[str]]):
        segments = [[ToySegment("prompt", t.prompt)] for t in tasks]
        completions = list(generate([t.prompt for t in tasks]))
        for parts, completion in zip(segments, completions, strict=True):
            parts.append(ToySegment("policy", completion))
        if self.turns == 2:
            feedback = self.FEEDBACK.format(target=self.target)
            for parts in segments:
                parts.append(ToySegment("feedback", feedback))
            completions = list(generate(["".join(s.text for s in parts) for parts in segments]))
            for parts, completion in zip(segments, completions, strict=True):
                parts.append(ToySegment("policy", completion))
        out = []
        for parts, completion in zip(segments, completions, strict=True):
            reward = self.reward_of(completion)
            out.append(
                ToyTrajectory(
                    tuple(parts),
                    reward,
                    {"passed": float(reward >= self.pass_threshold), "length": float(len(completion))},
                )
            )
        return out

    def rollout(self, tasks: Sequence[ToyTask], generate) -> list[ToyTrajectory]:
        return self._episodes(tasks, generate)

    def record(self, tasks: Sequence[ToyTask], trajectories: Sequence[ToyTrajectory]) -> None:
        self.recorded += len(trajectories)
        self.recorded_reward += sum(t.reward for t in trajectories)

    def evaluate(self, tasks: Sequence[ToyTask], generate) -> list[ToyTrajectory]:
        return self._episodes(tasks, generate)

    def heldout_tasks(self) -> list[ToyTask]:
        return list(self.heldout)

    def state_dict(self) -> dict[str, Any]:
        return {"draws": self.draws, "recorded": self.recorded, "recorded_reward": self.recorded_reward}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.draws = int(state["draws"])
        self.recorded = int(state["recorded"])
        self.recorded_reward = float(state["recorded_reward"])

"""Loading the policy: any local Hugging Face causal LM directory, its tokenizer, a frozen reference
copy when KL is on, and a value head when the estimator needs a critic.

Weights stay float32 (the optimizer's master copy); `dtype` is the compute dtype, applied through
autocast on CUDA. The model is kept in eval mode throughout: dropout would make the log-probabilities
of a forward pass random, so the recomputed "old" log-probabilities would not match the policy that
sampled (a common RL-for-LLM choice; TRL does the same).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from .config import EngineConfig


class ModelDirError(FileNotFoundError):
    """A model directory that does not exist or is not a Hugging Face model directory."""


def check_model_dir(path: str | os.PathLike[str]) -> Path:
    """The path as a Path, or ModelDirError naming it and saying what is missing."""
    model_dir = Path(path)
    if not model_dir.exists():
        raise ModelDirError(
            f"model directory {model_dir} does not exist; give a local Hugging Face model "
            "directory (config.json, weights, tokenizer files)"
        )
    if not model_dir.is_dir():
        raise ModelDirError(f"model path {model_dir} is not a directory; give a Hugging Face model directory")
    if not (model_dir / "config.json").is_file():
        raise ModelDirError(
            f"{model_dir} has no config.json: it is not a Hugging Face model directory "
            "(save one with model.save_pretrained(dir) and tokenizer.save_pretrained(dir))"
        )
    return model_dir


def resolve_device(name: str) -> torch.device:
    """auto → cuda if available else cpu; a CUDA device that is not there is an error."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(
            f"device {name!r} was asked for but CUDA is not available; use device='auto' or 'cpu'"
        )
    return device


def resolve_dtype(name: str, device: torch.device) -> torch.dtype:
    """The compute dtype: auto → bfloat16 on CUDA devices that support it, else float32."""
    if name == "auto":
        if device.type == "cuda" and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float32
    dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]
    if device.type == "cpu" and dtype == torch.float16:
        raise ValueError("dtype='float16' is not supported on CPU; use float32 or bfloat16")
    return dtype


class ValueHead(nn.Module):
    """The critic: one linear map from the policy's last hidden state to a scalar value.

    It reads detached hidden states, so the value loss trains only this head and never disturbs the
    policy's weights (VERL trains a separate critic model; sharing the trunk's gradients is the
    alternative this avoids). Starts at 0 everywhere (zero weights and bias).
    """

    def __init__(self, hidden_size: int):
        super().__init__()
        self.linear = nn.Linear(hidden_size, 1)
        nn.init.zeros_(self.linear.weight)
        nn.init.zeros_(self.linear.bias)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        """(B, T, H) hidden states → (B, T) values (float32)."""
        return self.linear(hidden.detach().float()).squeeze(-1)


def hidden_size_of(model: nn.Module) -> int:
    """The width of the model's last hidden state, from its config."""
    config = model.config
    if hasattr(config, "get_text_config"):
        config = config.get_text_config()
    for name in ("hidden_size", "n_embd", "d_model", "dim"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    raise ValueError(f"cannot find the hidden size in {type(model.config).__name__}; a value head needs it")


@dataclass
class Policy:
    """The trained model with everything the engine needs around it."""

    model: Any
    """The causal LM (a transformers PreTrainedModel), float32 weights, eval mode."""
    tokenizer: Any
    """Its tokenizer."""
    model_dir: Path
    """Where the weights came from (the base model or a checkpoint)."""
    device: torch.device
    compute_dtype: torch.dtype
    eos_token_ids: tuple[int, ...]
    """Tokens that end a completion."""
    pad_token_id: int
    """Used for padding only; padded positions are always masked."""
    max_positions: int | None
    """The longest sequence the model takes (None: not stated by its config)."""
    reference: Any | None = None
    """Frozen copy of the base model (KL on), else None."""
    value_head: ValueHead | None = None
    """The critic (gae), else None."""

    def autocast(self):
        """The compute-dtype context for forward passes (a no-op for float32)."""
        if self.compute_dtype == torch.float32:
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.type, dtype=self.compute_dtype)

    def encode(self, text: str, *, first: bool) -> list[int]:
        """Token ids of `text`; `first` adds the tokenizer's special tokens (e.g. BOS) as for a prompt."""
        return list(self.tokenizer(text, add_special_tokens=first)["input_ids"])

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=True)


def _load_model(path: Path, config: EngineConfig, device: torch.device):
    from transformers import AutoModelForCausalLM

    kwargs: dict[str, Any] = {"local_files_only": True, "dtype": torch.float32}
    if config.attn_implementation is not None:
        kwargs["attn_implementation"] = config.attn_implementation
    model = AutoModelForCausalLM.from_pretrained(str(path), **kwargs)
    model.to(device)
    model.eval()
    return model


def _eos_ids(tokenizer: Any, model: Any) -> tuple[int, ...]:
    ids: list[int] = []
    for source in (
        getattr(tokenizer, "eos_token_id", None),
        getattr(getattr(model, "generation_config", None), "eos_token_id", None),
        getattr(model.config, "eos_token_id", None),
    ):
        values = source if isinstance(source, list | tuple) else [source]
        ids.extend(int(v) for v in values if v is not None and int(v) not in ids)
    return tuple(ids)


def load_policy(
    model_dir: str | os.PathLike[str],
    config: EngineConfig,
    *,
    reference_dir: str | os.PathLike[str] | None = None,
) -> Policy:
    """Load a causal LM directory and its tokenizer onto the configured device.

    Args:
        model_dir: a local Hugging Face model directory (config.json, weights, tokenizer files); a
            checkpoint written by the engine is one.
        config: device, dtype, attention implementation; whether a reference model (kl_coef > 0) and a
            value head (gae) are needed.
        reference_dir: where the frozen reference comes from (the run's base model when resuming from
            a checkpoint); default `model_dir`.
    Raises:
        ModelDirError: the directory is missing or has no config.json.
    """
    from transformers import AutoTokenizer

    path = check_model_dir(model_dir)
    device = resolve_device(config.device)
    compute_dtype = resolve_dtype(config.dtype, device)
    tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    model = _load_model(path, config, device)
    for p in model.parameters():
        p.requires_grad_(True)
    eos = _eos_ids(tokenizer, model)
    if not eos:
        raise ValueError(
            f"{path}: neither the tokenizer nor the model config names an end-of-sequence token; "
            "set eos_token in the tokenizer so completions can end"
        )
    pad = getattr(tokenizer, "pad_token_id", None)
    pad = int(pad) if pad is not None else eos[0]
    max_positions = None
    text_config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length"):
        value = getattr(text_config, name, None)
        if isinstance(value, int) and value > 0:
            max_positions = value
            break
    reference = None
    if config.uses_reference:
        reference = _load_model(check_model_dir(reference_dir or path), config, device)
        for p in reference.parameters():
            p.requires_grad_(False)
    value_head = ValueHead(hidden_size_of(model)).to(device) if config.uses_value_head else None
    return Policy(
        model=model,
        tokenizer=tokenizer,
        model_dir=path,
        device=device,
        compute_dtype=compute_dtype,
        eos_token_ids=eos,
        pad_token_id=pad,
        max_positions=max_positions,
        reference=reference,
        value_head=value_head,
    )

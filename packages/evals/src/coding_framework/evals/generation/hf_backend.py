"""A local Hugging Face causal LM (`AutoModelForCausalLM` + `AutoTokenizer`, local files only).

The samples of one problem are generated together (`num_return_sequences`, in chunks of
`batch_size`). Instruct prompts go through the tokenizer's chat template when it has one; otherwise
the instruction text is the prompt (as evalplus does for models without a template). A prompt longer
than the model's context minus `max_new_tokens` keeps its last tokens (the end of a prompt is
what the model continues).
torch and transformers are imported only when this backend is built.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import groupby
from pathlib import Path
from typing import Any

from coding_framework.evals.errors import ModelNotFoundError
from coding_framework.evals.generation.base import GenerationConfig, GenerationRequest
from coding_framework.evals.prompts import Prompt

_WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)


def _check_batch_size(batch_size: int) -> None:
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")


def check_model_dir(path: str | Path) -> Path:
    """`path` as a Path if it looks like a saved HF model; ModelNotFoundError saying what is missing."""
    path = Path(path)
    if not path.is_dir():
        raise ModelNotFoundError(
            f"model directory not found: {path} (pass a directory saved with save_pretrained)"
        )
    missing = []
    if not (path / "config.json").is_file():
        missing.append("config.json")
    if not any((path / name).is_file() for name in _WEIGHT_FILES):
        missing.append("weights (model.safetensors or pytorch_model.bin)")
    if not any((path / name).is_file() for name in ("tokenizer.json", "tokenizer_config.json", "vocab.json")):
        missing.append("a tokenizer (tokenizer.json or tokenizer_config.json)")
    if missing:
        raise ModelNotFoundError(
            f"{path} is not a Hugging Face model directory: missing {', '.join(missing)}"
        )
    return path


class HFBackend:
    """Generates with a local model on CPU or one GPU (loaded from a directory, or `from_model`)."""

    def __init__(self, model_path: str | Path, *, device: str | None = None, batch_size: int = 8):
        _check_batch_size(batch_size)
        path = check_model_dir(model_path)
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True)
        except (OSError, ValueError) as exc:
            raise ModelNotFoundError(f"cannot load the model in {path}: {exc}") from exc
        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self._attach(model.to(device).eval(), tokenizer, name=path.name, device=device, batch_size=batch_size)

    @classmethod
    def from_model(cls, model: Any, tokenizer: Any, *, name: str, batch_size: int = 8) -> HFBackend:
        """A backend over a model already in memory (a training loop's current policy): no reload, no copy.

        The model is used as it is, on its own device and in whatever mode it is in: the caller puts it
        in eval mode (and restores its own RNG state afterwards, since sampling reseeds torch's global
        generator as `generate` does for a loaded model). `name` is recorded with every sample.
        """
        _check_batch_size(batch_size)
        if not name:
            raise ValueError("name must say which model wrote the samples, e.g. 'run-3/step_40'")
        backend = cls.__new__(cls)
        backend._attach(model, tokenizer, name=name, device=model.device, batch_size=batch_size)
        return backend

    def _attach(self, model: Any, tokenizer: Any, *, name: str, device: Any, batch_size: int) -> None:
        import torch

        self.tokenizer = tokenizer
        self.model = model
        self.device = device
        self.batch_size = batch_size
        self.name = name
        self.default_style = "instruct" if getattr(tokenizer, "chat_template", None) else "completion"
        self._torch = torch
        self.max_positions: int | None = getattr(model.config, "max_position_embeddings", None)

    def _encode(self, prompt: Prompt) -> Any:
        """Token ids (1, T): a chat-templated instruct prompt (the template adds its own special
        tokens), else the raw text with the tokenizer's usual special tokens."""
        if prompt.style == "instruct" and getattr(self.tokenizer, "chat_template", None):
            text = self.tokenizer.apply_chat_template(
                prompt.messages, tokenize=False, add_generation_prompt=True
            )
            return self.tokenizer(text, return_tensors="pt", add_special_tokens=False)["input_ids"]
        return self.tokenizer(prompt.text, return_tensors="pt")["input_ids"]

    def generate(
        self, requests: Sequence[GenerationRequest], config: GenerationConfig
    ) -> Iterator[tuple[GenerationRequest, str]]:
        """Yield each problem's samples, chunk by chunk (the order of `requests`, grouped by task)."""
        torch = self._torch
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id if self.tokenizer.eos_token_id is not None else 0
        for _, group in groupby(requests, key=lambda r: r.task_id):
            group = list(group)
            ids = self._encode(group[0].prompt)
            if self.max_positions is not None:
                room = max(1, self.max_positions - config.max_new_tokens)
                ids = ids[:, -room:]
            max_new = config.max_new_tokens
            if self.max_positions is not None:
                max_new = max(1, min(max_new, self.max_positions - ids.shape[1]))
            # Greedy decoding gives one text per prompt: decode once and hand it to every sample.
            step = self.batch_size if config.temperature > 0 else len(group)
            for start in range(0, len(group), step):
                chunk = group[start : start + step]
                draws = len(chunk) if config.temperature > 0 else 1
                torch.manual_seed(config.seed + chunk[0].index)
                kwargs: dict[str, Any] = {
                    "max_new_tokens": max_new,
                    "num_return_sequences": draws,
                    "pad_token_id": pad,
                    "do_sample": config.temperature > 0,
                }
                if config.temperature > 0:
                    kwargs.update(temperature=config.temperature, top_p=config.top_p)
                if chunk[0].prompt.style == "completion" and chunk[0].prompt.stop:
                    kwargs.update(stop_strings=list(chunk[0].prompt.stop), tokenizer=self.tokenizer)
                input_ids = ids.to(self.device)
                with torch.no_grad():
                    out = self.model.generate(
                        input_ids=input_ids, attention_mask=torch.ones_like(input_ids), **kwargs
                    )
                texts = [
                    self.tokenizer.decode(row, skip_special_tokens=True)
                    for row in out[:, input_ids.shape[1] :]
                ]
                for i, request in enumerate(chunk):
                    yield request, texts[i if draws > 1 else 0]

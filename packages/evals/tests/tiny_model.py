"""A tiny random causal LM saved in a directory, for tests of the Hugging Face backend.

The tokenizer is a byte-level BPE trained here with `tokenizers` on a few lines of Python; the
model is a 2-layer Llama with random weights. Its samples are noise; what the tests check is the
plumbing (loading with local files only, prompts, truncation, sampling, decoding).
"""

from __future__ import annotations

from pathlib import Path

CORPUS = [
    "def add(a, b):\n    return a + b\n",
    "from typing import List\n\n\ndef mean(xs: List[float]) -> float:\n    return sum(xs) / len(xs)\n",
    "for i in range(10):\n    print(i)\n",
    'def f(x):\n    """Return x."""\n    if x > 0:\n        return x\n    return -x\n',
]


def build_tiny_model(path: Path, *, max_positions: int = 128, chat_template: str | None = None) -> Path:
    """Write config, weights and tokenizer of a tiny random Llama to `path`; returns `path`."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<pad>", "<eos>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(CORPUS * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<eos>", pad_token="<pad>")
    if chat_template is not None:
        fast.chat_template = chat_template
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
        bos_token_id=None,
    )
    LlamaForCausalLM(config).save_pretrained(path)
    fast.save_pretrained(path)
    return path

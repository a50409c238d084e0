"""The architecture: a small LlamaForCausalLM with tied embeddings, built from a BuildConfig."""

from __future__ import annotations

import torch
from transformers import LlamaConfig, LlamaForCausalLM

from tools.tiny_coder.config import BuildConfig
from tools.tiny_coder.tokenizer import BOS, EOS, PAD


def llama_config(config: BuildConfig, tokenizer) -> LlamaConfig:
    """The transformers config for `config`'s sizes and `tokenizer`'s special token ids."""
    if len(tokenizer) != config.vocab_size:
        raise ValueError(f"tokenizer has {len(tokenizer)} tokens but vocab_size={config.vocab_size}: the "
                         "corpus is too small for this vocabulary; lower --vocab-size or raise --problems")
    return LlamaConfig(
        vocab_size=config.vocab_size,
        hidden_size=config.hidden_size,
        intermediate_size=config.intermediate_size,
        num_hidden_layers=config.layers,
        num_attention_heads=config.heads,
        num_key_value_heads=config.heads,
        max_position_embeddings=config.max_positions,
        # Tied input/output embeddings: a third fewer parameters at this size, same quality here.
        tie_word_embeddings=True,
        pad_token_id=tokenizer.convert_tokens_to_ids(PAD),
        bos_token_id=tokenizer.convert_tokens_to_ids(BOS),
        eos_token_id=tokenizer.convert_tokens_to_ids(EOS),
        initializer_range=0.02,
        rms_norm_eps=1e-6,
        use_cache=True,
    )


def build_model(config: BuildConfig, tokenizer) -> LlamaForCausalLM:
    """A freshly initialised model; the weights are a pure function of `config.seed` and the sizes."""
    torch.manual_seed(config.seed)
    model = LlamaForCausalLM(llama_config(config, tokenizer))
    return model.float()


def parameter_count(model: torch.nn.Module) -> int:
    """Distinct parameters (a tied matrix counts once)."""
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())

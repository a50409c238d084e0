"""A small byte-level BPE tokenizer trained on the corpus with the `tokenizers` library.

Byte-level means every string is encodable and decodes back exactly (no unknown token, no
normalisation), which the completion text needs: indentation and quotes are code. The tokenizer adds
`<|bos|>` in front of every encoded text (a post-processor in tokenizer.json), so any engine that calls
`tokenizer(prompt)` feeds the model the sequence it was trained on; `<|eos|>` ends a completion, and
`<|pad|>` pads on the left for batched generation.

Digits are split one per token before byte-level BPE (as code and math LMs commonly do): a constant then
has the same tokens in the docstring (" 28") and in the code ("[:28]", "- 28"), so writing it is a copy
the model can learn once for all numbers, instead of recalling a separate merged token per context.
"""

from __future__ import annotations

from collections.abc import Iterable

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast

PAD, BOS, EOS = "<|pad|>", "<|bos|>", "<|eos|>"
SPECIAL_TOKENS = (PAD, BOS, EOS)
"""Ids 0, 1, 2 in this order."""


def train_tokenizer(texts: Iterable[str], vocab_size: int, model_max_length: int = 512,
                    split_digits: bool = True) -> PreTrainedTokenizerFast:
    """A byte-level BPE of `vocab_size` tokens (3 special + 256 bytes + merges) trained on `texts`;
    `split_digits` makes every digit its own token.

    Deterministic for the same texts in the same order.
    """
    if vocab_size < 256 + len(SPECIAL_TOKENS) + 1:
        raise ValueError(f"vocab_size={vocab_size}: a byte-level BPE needs more than "
                         f"{256 + len(SPECIAL_TOKENS)} (the bytes and special tokens); try 768")
    core = Tokenizer(models.BPE())
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    core.pre_tokenizer = (pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
                          if split_digits else byte_level)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(texts, trainer=trainer)
    bos_id = core.token_to_id(BOS)
    core.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A $B", special_tokens=[(BOS, bos_id)]
    )
    return wrap(core, model_max_length)


def wrap(core: Tokenizer, model_max_length: int = 512) -> PreTrainedTokenizerFast:
    """The transformers tokenizer around `core`, with its special tokens and left padding."""
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        padding_side="left",
        clean_up_tokenization_spaces=False,
        model_max_length=model_max_length,
    )


def encode_plain(tokenizer: PreTrainedTokenizerFast, text: str) -> list[int]:
    """Token ids of `text` without special tokens."""
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])

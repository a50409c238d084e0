"""The tokenizer round-trips every corpus text and loads back through AutoTokenizer."""

from __future__ import annotations

import pytest
from transformers import AutoTokenizer

from tools.tiny_coder.corpus import build_corpus
from tools.tiny_coder.tokenizer import BOS, EOS, PAD, encode_plain, train_tokenizer

TEXTS = [t for p in build_corpus(1500, seed=0) for t in (p.prompt, p.completion)]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    tokenizer = train_tokenizer(TEXTS, 512)
    where = tmp_path_factory.mktemp("tok")
    tokenizer.save_pretrained(where)
    return tokenizer, AutoTokenizer.from_pretrained(where, local_files_only=True)


def test_every_corpus_text_round_trips_after_save_and_load(saved):
    _, loaded = saved
    for text in TEXTS:
        ids = loaded(text)["input_ids"]
        assert ids[0] == loaded.bos_token_id and ids.count(loaded.bos_token_id) == 1
        assert loaded.decode(ids, skip_special_tokens=True) == text
        assert loaded.decode(encode_plain(loaded, text)) == text


def test_unseen_text_round_trips_too(saved):
    _, loaded = saved
    for text in ["é ü 中文 \t\r\n  x = {'a': [1, 2]}  # ✓", "\x00\x7f", "    return s[::-1]\n"]:
        assert loaded.decode(encode_plain(loaded, text)) == text


def test_special_tokens_and_size(saved):
    trained, loaded = saved
    assert len(trained) == len(loaded) == 512
    assert (loaded.pad_token, loaded.bos_token, loaded.eos_token) == (PAD, BOS, EOS)
    assert (loaded.pad_token_id, loaded.bos_token_id, loaded.eos_token_id) == (0, 1, 2)
    assert loaded.padding_side == "left"
    batch = loaded(["a", "abc def ghi"], padding=True)["input_ids"]
    assert batch[0][0] == loaded.pad_token_id and batch[1][0] == loaded.bos_token_id


def test_merges_compress_the_corpus(saved):
    _, loaded = saved
    tokens = sum(len(encode_plain(loaded, t)) for t in TEXTS[:200])
    chars = sum(len(t.encode()) for t in TEXTS[:200])
    assert tokens < chars / 2


def test_training_is_deterministic(tmp_path):
    a, b = train_tokenizer(TEXTS[:400], 400), train_tokenizer(TEXTS[:400], 400)
    a.save_pretrained(tmp_path / "a")
    b.save_pretrained(tmp_path / "b")
    files = [(tmp_path / d / "tokenizer.json").read_bytes() for d in ("a", "b")]
    assert files[0] == files[1]


def test_too_small_vocab_is_rejected():
    with pytest.raises(ValueError, match="vocab_size=100"):
        train_tokenizer(TEXTS[:10], 100)


def test_digits_are_single_tokens_so_constants_copy_token_for_token(saved):
    _, loaded = saved

    def pieces(text):
        return [loaded.decode([i]) for i in encode_plain(loaded, text)]

    assert pieces("Return value minus 28.")[-3:] == ["2", "8", "."]
    assert pieces("    return word[:16]\n")[-4:-1] == ["1", "6", "]"]
    merged = train_tokenizer(TEXTS[:400], 400, split_digits=False)
    assert any(len(p) > 1 and p.strip().isdigit()
               for p in (merged.decode([i]) for i in encode_plain(merged, "x - 28 + 16 * 10")))

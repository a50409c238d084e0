"""Policy loading, sampling and the token batch: masks from segments, left padding, determinism."""

import json

import pytest
import torch

from coding_framework.rl_core.engine import (
    EngineConfig,
    ModelDirError,
    PolicySampler,
    SampledText,
    ToySegment,
    build_token_batch,
    encode_segments,
    filter_top_p,
    left_pad,
    load_policy,
    sample,
    write_tiny_model,
)
from coding_framework.rl_core.engine.rollout import EncodedTrajectory, truncate_left
from coding_framework.rl_core.engine.sampling import position_ids_of

BOS, EOS = 257, 258

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return write_tiny_model(
        tmp_path_factory.mktemp("tiny") / "model", hidden_size=32, num_layers=1, num_heads=2, max_positions=64
    )


@pytest.fixture(scope="module")
def policy(model_dir):
    return load_policy(model_dir, EngineConfig(device="cpu"))


def test_missing_or_wrong_model_dirs_name_the_path(tmp_path):
    with pytest.raises(ModelDirError, match=str(tmp_path / "nope")):
        load_policy(tmp_path / "nope", EngineConfig(device="cpu"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelDirError, match=r"has no config\.json"):
        load_policy(tmp_path / "empty", EngineConfig(device="cpu"))


def test_loads_any_hf_causal_lm_dir_with_its_tokenizer(policy, model_dir):
    assert policy.device.type == "cpu" and policy.compute_dtype == torch.float32
    assert policy.eos_token_ids == (EOS,)
    assert policy.max_positions == 64
    assert not policy.model.training  # dropout stays off
    assert policy.reference is None and policy.value_head is None
    assert json.loads((model_dir / "config.json").read_text())["model_type"] == "llama"
    # Byte tokenizer: one token per UTF-8 byte, BOS only when encoding a prompt.
    assert policy.encode("ab", first=True) == [BOS, ord("a"), ord("b")]
    assert policy.encode("ab", first=False) == [ord("a"), ord("b")]


def test_reference_and_value_head_only_when_needed(model_dir):
    loaded = load_policy(model_dir, EngineConfig(device="cpu", algorithm="gae", kl_coef=0.1))
    assert loaded.reference is not None and loaded.value_head is not None
    assert not any(p.requires_grad for p in loaded.reference.parameters())
    for a, b in zip(loaded.model.parameters(), loaded.reference.parameters(), strict=True):
        assert torch.equal(a, b) and a.data_ptr() != b.data_ptr()


def test_masks_come_from_segment_tags(policy):
    sampled = SampledText("xy", [ord("x"), ord("y"), EOS], finished=True)
    segments = [
        ToySegment("prompt", "ab"),
        ToySegment("policy", sampled),
        ToySegment("feedback", "!"),
        ToySegment("policy", "z"),
    ]
    encoded = encode_segments(segments, policy)
    # BOS a b | x y </s> (sampled ids, EOS kept) | ! | z (re-tokenized, no specials)
    assert encoded.token_ids == (BOS, 97, 98, 120, 121, EOS, 33, 122)
    assert encoded.trainable == (False, False, False, True, True, True, False, True)
    assert encoded.longest_turn == 3


def test_a_first_token_cannot_be_trained(policy):
    encoded = encode_segments([ToySegment("policy", SampledText("a", [97], False))], policy)
    assert encoded.token_ids == (97,) and encoded.trainable == (False,)


def test_token_batch_is_left_padded_with_a_shared_response_window(policy):
    a = encode_segments([ToySegment("prompt", "abc"), ToySegment("policy", "xy")], policy)
    b = encode_segments([ToySegment("prompt", "a"), ToySegment("policy", "xyz")], policy)
    batch = build_token_batch([a, b], pad_token_id=256)
    assert batch.input_ids.tolist() == [[BOS, 97, 98, 99, 120, 121], [256, BOS, 97, 120, 121, 122]]
    assert batch.attention_mask.tolist() == [[1, 1, 1, 1, 1, 1], [0, 1, 1, 1, 1, 1]]
    assert batch.start == 3
    assert batch.response_mask.tolist() == [[0, 1, 1], [1, 1, 1]]
    assert position_ids_of(batch.attention_mask)[1].tolist() == [0, 0, 1, 2, 3, 4]
    sub = batch.rows([1])  # its padding column goes
    assert sub.input_ids.tolist() == [[BOS, 97, 120, 121, 122]] and sub.start == 2
    with pytest.raises(ValueError, match="at most 5"):
        build_token_batch([a, b], pad_token_id=256, max_positions=5)


def test_left_padding_does_not_change_a_rows_log_probs(policy):
    from coding_framework.rl_core.engine import forward_stats

    a = encode_segments([ToySegment("prompt", "hello"), ToySegment("policy", "abc")], policy)
    b = encode_segments([ToySegment("prompt", "h"), ToySegment("policy", "abc")], policy)
    alone = forward_stats(policy.model, build_token_batch([b], 256), 3).log_probs
    padded = forward_stats(policy.model, build_token_batch([a, b], 256), 3).log_probs[1]
    torch.testing.assert_close(padded, alone[0], atol=1e-5, rtol=1e-5)


def test_top_p_keeps_the_smallest_set_reaching_the_mass():
    probs = torch.tensor([[0.5, 0.3, 0.15, 0.05]])
    kept = torch.isfinite(filter_top_p(probs.log(), 0.8))
    assert kept.tolist() == [[True, True, False, False]]
    kept = torch.isfinite(filter_top_p(probs.log(), 0.81))
    assert kept.tolist() == [[True, True, True, False]]
    assert torch.isfinite(filter_top_p(probs.log(), 0.1)).tolist() == [[True, False, False, False]]


def test_sampling_is_deterministic_given_the_generator_state(policy):
    prompts = [[BOS, 97], [BOS, 98, 99, 100]]
    kwargs = dict(
        max_new_tokens=6,
        temperature=1.0,
        top_p=0.95,
        eos_token_ids=[EOS],
        pad_token_id=256,
        device=torch.device("cpu"),
    )
    generator = torch.Generator().manual_seed(3)
    state = generator.get_state()
    first = sample(policy.model, prompts, generator=generator, **kwargs)
    second = sample(policy.model, prompts, generator=generator, **kwargs)
    generator.set_state(state)
    again = sample(policy.model, prompts, generator=generator, **kwargs)
    assert first == again and first != second
    assert all(len(s.token_ids) == 6 or s.finished for s in first)


def test_greedy_sampling_follows_the_argmax_with_a_kv_cache(policy):
    prompt = [BOS, 100, 101, 102]
    out = sample(
        policy.model,
        [prompt],
        max_new_tokens=5,
        temperature=0.0,
        top_p=1.0,
        eos_token_ids=[EOS],
        pad_token_id=256,
        generator=None,
        device=torch.device("cpu"),
    )[0]
    ids = list(prompt)
    with torch.no_grad():
        for _ in range(len(out.token_ids)):
            ids.append(int(policy.model(torch.tensor([ids])).logits[0, -1].argmax()))
    assert list(out.token_ids) == ids[len(prompt) :]


def test_a_completion_ends_at_eos_and_keeps_it(policy):
    greedy = dict(temperature=0.0, top_p=1.0, pad_token_id=256, generator=None, device=torch.device("cpu"))
    prompts = [[BOS, 97], [BOS, 98, 99]]
    free = sample(policy.model, prompts, max_new_tokens=4, eos_token_ids=[EOS], **greedy)
    stop = free[0].token_ids[0]  # declare row 0's first greedy token an end-of-sequence token
    out = sample(policy.model, prompts, max_new_tokens=4, eos_token_ids=[stop], **greedy)
    assert out[0].token_ids == (stop,) and out[0].finished
    # Row 1 is unaffected by row 0 stopping, up to its own first `stop` token.
    expected = free[1].token_ids
    if stop in expected:
        expected = expected[: expected.index(stop) + 1]
    assert out[1].token_ids == expected and out[1].finished == (stop in expected)


def test_policy_sampler_returns_text_with_its_tokens_and_checks_length(policy):
    sampler = PolicySampler(
        policy, max_new_tokens=5, temperature=1.0, top_p=1.0, generator=torch.Generator().manual_seed(0)
    )
    out = sampler(["ab", "cd", "ef"])
    assert len(out) == 3 and all(isinstance(o, SampledText) for o in out)
    for text in out:
        body = text.token_ids[:-1] if text.finished else text.token_ids
        assert policy.tokenizer.decode(list(body), skip_special_tokens=True) == str(text)
    assert sampler.calls == 1 and sampler.seconds > 0
    assert sampler.generated_tokens == sum(len(o.token_ids) for o in out)
    # 61 prompt tokens + 5 new > 64 positions: the prompt keeps its last 59 tokens.
    long = sampler(["a" * 30 + "x" * 30])
    assert sampler.truncated_prompts == 1 and len(long) == 1
    with pytest.raises(ValueError, match="leaves no room for a prompt"):
        PolicySampler(policy, max_new_tokens=64, temperature=1.0, top_p=1.0, generator=None)
    with pytest.raises(TypeError, match="list of prompt texts"):
        sampler("ab")


def test_truncation_keeps_the_most_recent_tokens():
    encoded = EncodedTrajectory((1, 2, 3, 4, 5), (False, True, False, True, True), 2)
    assert truncate_left(encoded, 5) is encoded and truncate_left(encoded, None) is encoded
    cut = truncate_left(encoded, 3)
    assert cut.token_ids == (3, 4, 5) and cut.trainable == (False, True, True)
    cut = truncate_left(encoded, 2)
    assert cut.token_ids == (4, 5) and cut.trainable == (False, True)  # nothing left to predict 4 from


def test_left_pad_by_hand():
    ids, mask = left_pad([[1, 2, 3], [4]], pad_id=0)
    assert ids.tolist() == [[1, 2, 3], [0, 0, 4]] and mask.tolist() == [[1, 1, 1], [0, 0, 1]]

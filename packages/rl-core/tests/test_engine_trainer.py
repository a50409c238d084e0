"""The training loop end to end on the toy environment: learning, metrics, evaluation, bad environments."""

import pytest
import torch

from coding_framework.rl_core.engine import (
    CharacterTargetEnvironment,
    EngineConfig,
    Environment,
    Trainer,
    check_environment,
)

torch.set_num_threads(1)


def _config(**overrides):
    values = dict(
        lr=0.1,
        device="cpu",
        prompts_per_step=4,
        group_size=8,
        max_new_tokens=8,
        max_steps=8,
        save_every=0,
        num_threads=1,
        seed=1,
    )
    values.update(overrides)
    return EngineConfig(**values)


def test_the_toy_environment_has_the_protocols_shape():
    env = CharacterTargetEnvironment()
    assert isinstance(env, Environment)
    check_environment(env)
    with pytest.raises(TypeError, match=r"lacks sample_batch, record, evaluate$"):
        check_environment(
            type(
                "Half",
                (),
                {
                    "sample_batch": 1,
                    "rollout": lambda: 0,
                    "heldout_tasks": len,
                    "state_dict": dict,
                    "load_state_dict": dict,
                },
            )()
        )


def test_reward_rises_and_held_out_pass_at_1_improves(tmp_path, model_dir):
    seen = []
    trainer = Trainer(
        _config(),
        model_dir,
        CharacterTargetEnvironment(target="x"),
        tmp_path,
        on_metrics=lambda step, m: seen.append((step, m)),
    )
    before = trainer.evaluate_pass_at_1(temperature=1.0, n_samples=4)
    history = trainer.run()
    after = trainer.evaluate_pass_at_1(temperature=1.0, n_samples=4)
    rewards = [m["reward/mean"] for m in history]
    assert sum(rewards[:2]) / 2 < 0.05  # a random byte model rarely writes "x"
    assert sum(rewards[-2:]) / 2 > 0.5, rewards
    assert before.pass_at_1 < 0.25 and after.pass_at_1 > 0.75, (before, after)
    assert (
        after.n_tasks == 4
        and after.n_samples == 4
        and set(after.per_task) == {f"heldout-{i}" for i in range(4)}
    )
    assert [s for s, _ in seen] == list(range(1, 9)) and [m for _, m in seen] == history


def test_step_metrics_and_timings(tmp_path, model_dir):
    trainer = Trainer(
        _config(max_steps=1, kl_coef=0.05), model_dir, CharacterTargetEnvironment(turns=2), tmp_path
    )
    metrics = trainer.train_step()
    for key in (
        "reward/mean",
        "reward/std",
        "pass_rate",
        "kl",
        "entropy",
        "clip_frac",
        "grad_norm",
        "lr",
        "loss/policy",
        "loss/kl",
        "tokens/trainable",
        "tokens/generated",
        "env/length",
        "samples",
        "time/rollout",
        "time/scoring",
        "time/update",
        "time/step",
        "time/scoring_share",
    ):
        assert key in metrics, key
    assert metrics["samples"] == 32 and metrics["lr"] == 0.1
    assert 0 <= metrics["time/scoring_share"] <= 1
    assert metrics["time/rollout"] > 0 and metrics["time/update"] > 0
    parts = metrics["time/rollout"] + metrics["time/scoring"] + metrics["time/update"]
    assert parts <= metrics["time/step"] + 1e-6
    # Two turns with feedback in between: exactly the sampled tokens are trained on, no prompt or
    # feedback token.
    assert metrics["tokens/trainable"] == metrics["tokens/generated"]
    assert 0 < metrics["entropy"] <= torch.log(torch.tensor(259.0)).item() + 1e-4


def test_evaluation_does_not_move_training_and_repeats(tmp_path, model_dir):
    trainer = Trainer(_config(max_steps=2), model_dir, CharacterTargetEnvironment(), tmp_path)
    state = trainer.sampling_generator.get_state()
    first = trainer.evaluate_pass_at_1(temperature=1.0, n_samples=2)
    second = trainer.evaluate_pass_at_1(temperature=1.0, n_samples=2)
    assert (first.pass_at_1, first.per_task, first.reward_mean) == (
        second.pass_at_1,
        second.per_task,
        second.reward_mean,
    )
    assert torch.equal(state, trainer.sampling_generator.get_state())
    with pytest.raises(ValueError, match="n_samples=1"):
        trainer.evaluate_pass_at_1(temperature=0.0, n_samples=2)
    greedy = trainer.evaluate_pass_at_1()
    assert greedy.n_samples == 1 and set(greedy.per_task.values()) <= {0.0, 1.0}


class _MissingPassEnvironment(CharacterTargetEnvironment):
    """The toy environment, broken on purpose: evaluation lacks `passed`."""

    def evaluate(self, tasks, generate):
        return [type(t)(t.segments, t.reward, {}) for t in super().evaluate(tasks, generate)]


class _ShortEnvironment(CharacterTargetEnvironment):
    """The toy environment, broken on purpose: one trajectory too few."""

    def rollout(self, tasks, generate):
        return super().rollout(tasks, generate)[:-1]


def test_environment_contract_violations_are_named(tmp_path, model_dir):
    with pytest.raises(ValueError, match="metrics\\['passed'\\]"):
        Trainer(_config(), model_dir, _MissingPassEnvironment(), tmp_path / "a").evaluate_pass_at_1()
    with pytest.raises(ValueError, match="31 trajectories for 32 tasks"):
        Trainer(_config(), model_dir, _ShortEnvironment(), tmp_path / "b").train_step()
    with pytest.raises(TypeError, match="not an engine Environment"):
        Trainer(_config(), model_dir, object(), tmp_path / "c")


def _write_model(path, name):
    import transformers

    from coding_framework.rl_core.engine import byte_tokenizer

    tokenizer = byte_tokenizer()
    special = dict(vocab_size=len(tokenizer), pad_token_id=256, bos_token_id=257, eos_token_id=258)
    config, model_class = {
        "gpt2": (
            transformers.GPT2Config(n_embd=32, n_layer=1, n_head=2, n_positions=128, **special),
            transformers.GPT2LMHeadModel,
        ),
        "qwen2": (
            transformers.Qwen2Config(
                hidden_size=32,
                intermediate_size=64,
                num_hidden_layers=1,
                num_attention_heads=2,
                num_key_value_heads=1,
                max_position_embeddings=128,
                **special,
            ),
            transformers.Qwen2ForCausalLM,
        ),
    }[name]
    torch.manual_seed(0)
    model_class(config).save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    return path


@pytest.mark.parametrize("architecture", ["gpt2", "qwen2"])
def test_other_causal_lm_architectures_sample_and_train(tmp_path, architecture):
    from coding_framework.rl_core.engine import (
        ToySegment,
        build_token_batch,
        encode_segments,
        forward_stats,
        sample,
    )

    model_dir = _write_model(tmp_path / architecture, architecture)
    config = _config(
        max_steps=2, prompts_per_step=2, group_size=4, max_new_tokens=6, algorithm="gae", kl_coef=0.1
    )
    trainer = Trainer(
        config,
        model_dir,
        CharacterTargetEnvironment(target="abcdefghijklmnopqrstuvwxyz", turns=2),
        tmp_path / "run",
    )
    policy = trainer.policy
    # Left padding changes nothing, and the KV-cache loop equals greedy decoding without a cache.
    long, short = (
        encode_segments([ToySegment("prompt", p), ToySegment("policy", "abc")], policy)
        for p in ("hello", "h")
    )
    alone = forward_stats(policy.model, build_token_batch([short], 256), 3).log_probs[0]
    padded = forward_stats(policy.model, build_token_batch([long, short], 256), 3).log_probs[1]
    torch.testing.assert_close(padded, alone, atol=1e-5, rtol=1e-5)
    out = sample(
        policy.model,
        [[257, 100, 101], [257, 102]],
        max_new_tokens=4,
        temperature=0.0,
        top_p=1.0,
        eos_token_ids=[258],
        pad_token_id=256,
        generator=None,
        device=torch.device("cpu"),
    )
    ids = [257, 102]
    with torch.no_grad():
        for _ in out[1].token_ids:
            ids.append(int(policy.model(torch.tensor([ids])).logits[0, -1].argmax()))
    assert list(out[1].token_ids) == ids[2:]
    history = trainer.run()
    assert len(history) == 2 and history[-1]["kl"] > 0
    assert (tmp_path / "run" / "checkpoints" / "step_2" / "config.json").is_file()

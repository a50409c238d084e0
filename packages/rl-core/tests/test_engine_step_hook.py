"""The trainer's `on_step_end` hook: when it runs, what it sees, what it adds, and what it cannot change.

The evaluators here are fakes (named as such): they stand in for a benchmark run (packages/cli wires the
real one) so that the engine's side of the contract is checked on its own.
"""

import random

import numpy as np
import pytest
import torch

from coding_framework.rl_core.engine import (
    CharacterTargetEnvironment,
    EngineConfig,
    Trainer,
    capture_rng,
    latest_checkpoint,
    read_engine_state,
)

torch.set_num_threads(1)

BASE = dict(
    lr=5e-2,
    device="cpu",
    prompts_per_step=2,
    group_size=4,
    max_new_tokens=6,
    num_threads=1,
    temperature=1.0,
    seed=7,
)


def _env():
    return CharacterTargetEnvironment(target="abc", turns=2, seed=3)


class FakeEvaluatorEveryTwo:
    """Fake evaluator: "evaluates" on even steps, returning a score that encodes the step; records
    what the engine showed it at every call."""

    def __init__(self):
        self.calls = []

    def __call__(self, trainer, step):
        self.calls.append(
            {
                "step": step,
                "trainer_step": trainer.step,
                "training": trainer.policy.model.training,
                "grad": torch.is_grad_enabled(),
            }
        )
        if step % 2:
            return None
        return {"bench/fake/pass@1": step / 10, "bench/fake/n": 3}


class FakeDisturbingEvaluator:
    """Fake evaluator that draws from every random stream a step reads, samples with the model through
    Hugging Face `generate` and the engine's own sampler, and flips the model to train mode: none of
    it may reach training."""

    def __init__(self):
        self.steps = []

    def __call__(self, trainer, step):
        self.steps.append(step)
        random.random()
        np.random.rand(3)
        torch.rand(3)
        trainer.sampler()(["a:", "b:"])  # the engine's training generator
        model = trainer.policy.model
        ids = trainer.policy.tokenizer("a:", return_tensors="pt")["input_ids"]
        model.generate(
            input_ids=ids,
            attention_mask=torch.ones_like(ids),
            do_sample=True,
            max_new_tokens=4,
            pad_token_id=trainer.policy.pad_token_id,
        )
        model.train()
        return {"bench/fake/pass@1": 0.25}


def _without(history, prefixes=("time/", "bench/")):
    return [{k: v for k, v in m.items() if not k.startswith(prefixes)} for m in history]


def _assert_same_training(a: Trainer, b: Trainer):
    assert _without(a.history) == _without(b.history)
    for (name, x), (_, y) in zip(
        a.policy.model.state_dict().items(), b.policy.model.state_dict().items(), strict=True
    ):
        assert torch.equal(x, y), name
    rng_a, rng_b = capture_rng(a.generators), capture_rng(b.generators)
    assert torch.equal(rng_a["torch"], rng_b["torch"])
    assert torch.equal(rng_a["python"]["state"], rng_b["python"]["state"])
    assert torch.equal(rng_a["numpy"]["keys"], rng_b["numpy"]["keys"])
    for name in rng_a["generators"]:
        assert torch.equal(rng_a["generators"][name], rng_b["generators"][name])
    assert a.environment.state_dict() == b.environment.state_dict()


def test_hook_runs_after_every_step_in_eval_mode_and_its_metrics_are_logged(tmp_path, model_dir):
    fake = FakeEvaluatorEveryTwo()
    logged = []
    trainer = Trainer(
        EngineConfig(max_steps=5, save_every=2, **BASE),
        model_dir,
        _env(),
        tmp_path,
        on_metrics=lambda step, metrics: logged.append((step, dict(metrics))),
        on_step_end=fake,
    )
    trainer.run()
    assert [c["step"] for c in fake.calls] == [1, 2, 3, 4, 5]
    assert all(c["trainer_step"] == c["step"] for c in fake.calls)
    assert not any(c["training"] or c["grad"] for c in fake.calls)
    assert torch.is_grad_enabled()
    bench = [(step, m.get("bench/fake/pass@1"), m.get("bench/fake/n")) for step, m in logged]
    assert bench == [(1, None, None), (2, 0.2, 3.0), (3, None, None), (4, 0.4, 3.0), (5, None, None)]
    assert all("reward/mean" in m for _, m in logged)  # the step's own metrics are still all there
    assert [m.get("bench/fake/pass@1") for m in trainer.history] == [None, 0.2, None, 0.4, None]
    # The hook runs before the checkpoint: the step-4 checkpoint already holds its result.
    saved = read_engine_state(tmp_path / "checkpoints" / "step_4")["history"]
    assert saved[-1]["bench/fake/pass@1"] == 0.4


def test_training_with_a_disturbing_hook_equals_training_without(tmp_path, model_dir):
    config = EngineConfig(max_steps=3, save_every=0, **BASE)
    plain = Trainer(config, model_dir, _env(), tmp_path / "plain")
    plain.run()
    fake = FakeDisturbingEvaluator()
    hooked = Trainer(config, model_dir, _env(), tmp_path / "hooked", on_step_end=fake)
    hooked.run()
    assert fake.steps == [1, 2, 3]
    assert not hooked.policy.model.training  # the hook's train() was undone
    assert [m["bench/fake/pass@1"] for m in hooked.history] == [0.25] * 3
    _assert_same_training(plain, hooked)


def test_resume_with_the_hook_is_bit_exact_and_skips_checkpointed_steps(tmp_path, model_dir):
    config = EngineConfig(max_steps=4, save_every=2, **BASE)
    straight_fake = FakeDisturbingEvaluator()
    straight = Trainer(config, model_dir, _env(), tmp_path / "straight", on_step_end=straight_fake)
    straight.run()
    first_fake = FakeDisturbingEvaluator()
    interrupted = Trainer(config, model_dir, _env(), tmp_path / "run", on_step_end=first_fake)
    for _ in range(3):  # step 3's work is lost, as in a crash after it
        interrupted.train_step()
    del interrupted
    assert latest_checkpoint(tmp_path / "run").name == "step_2"
    resumed_fake = FakeDisturbingEvaluator()
    resumed = Trainer(config, model_dir, _env(), tmp_path / "run", resume=True, on_step_end=resumed_fake)
    resumed.run()
    assert (straight_fake.steps, first_fake.steps, resumed_fake.steps) == ([1, 2, 3, 4], [1, 2, 3], [3, 4])
    assert _without(straight.history, ("time/",)) == _without(resumed.history, ("time/",))
    assert [m["bench/fake/pass@1"] for m in resumed.history] == [0.25] * 4
    _assert_same_training(straight, resumed)


def test_evaluation_mode_restores_train_mode_and_rng(tmp_path, model_dir):
    trainer = Trainer(EngineConfig(max_steps=1, **BASE), model_dir, _env(), tmp_path)
    model = trainer.policy.model
    model.train()
    before = capture_rng(trainer.generators)
    with trainer.evaluation_mode() as policy:
        assert policy is trainer.policy and not model.training and not torch.is_grad_enabled()
        torch.rand(5)
        torch.rand(5, generator=trainer.sampling_generator)
    assert model.training and torch.is_grad_enabled()
    after = capture_rng(trainer.generators)
    assert torch.equal(before["torch"], after["torch"])
    assert torch.equal(before["generators"]["sampling"], after["generators"]["sampling"])
    with pytest.raises(RuntimeError, match="boom"), trainer.evaluation_mode():
        torch.rand(5)
        raise RuntimeError("boom")
    assert model.training and torch.equal(before["torch"], torch.get_rng_state())


@pytest.mark.parametrize(
    ("returned", "error", "message"),
    [
        ({"reward/mean": 1.0}, ValueError, r"already reports: \['reward/mean'\]"),
        ({"bench/x": "high"}, TypeError, r"\{name: number\}, got 'bench/x': 'high'"),
        ({"bench/x": True}, TypeError, r"got 'bench/x': True"),
    ],
)
def test_bad_hook_results_are_errors_that_name_them(tmp_path, model_dir, returned, error, message):
    trainer = Trainer(
        EngineConfig(max_steps=1, **BASE), model_dir, _env(), tmp_path, on_step_end=lambda t, s: returned
    )
    with pytest.raises(error, match=message):
        trainer.train_step()

"""Resume is bit-exact on CPU: an interrupted run (also by SIGKILL) continues to the very same end."""

import os
import signal
import subprocess
import sys
import textwrap

import pytest
import torch

from coding_framework.rl_core.engine import (
    CharacterTargetEnvironment,
    EngineConfig,
    Trainer,
    capture_rng,
    latest_checkpoint,
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
    top_p=0.95,
    seed=7,
)
SETTINGS = {
    "grpo": {},
    "ppo-kl-minibatches-schedule": dict(
        algorithm="gae",
        kl_coef=0.05,
        kl_mode="reward",
        kl_controller="adaptive",
        mini_batches=2,
        ppo_epochs=2,
        warmup_steps=2,
        lr_decay="cosine",
    ),
    "dapo": dict(
        dynamic_sampling=True, overlong_buffer=3, clip_ratio_high=0.28, kl_coef=0.05, entropy_coeff=0.01
    ),
}


def _env():
    return CharacterTargetEnvironment(target="abcdefghijklmnopqrstuvwxyz", turns=2, seed=3)


def _without_timings(history):
    return [{k: v for k, v in m.items() if not k.startswith("time/")} for m in history]


def _assert_same_end(a: Trainer, b: Trainer):
    assert _without_timings(a.history) == _without_timings(b.history)
    for (name, x), (_, y) in zip(
        a.policy.model.state_dict().items(), b.policy.model.state_dict().items(), strict=True
    ):
        assert torch.equal(x, y), name
    if a.policy.value_head is not None:
        for x, y in zip(a.policy.value_head.parameters(), b.policy.value_head.parameters(), strict=True):
            assert torch.equal(x, y)
    state_a, state_b = a.updater.optimizer.state_dict()["state"], b.updater.optimizer.state_dict()["state"]
    assert state_a.keys() == state_b.keys()
    for key in state_a:
        for name in ("exp_avg", "exp_avg_sq", "step"):
            assert torch.equal(state_a[key][name], state_b[key][name])
    rng_a, rng_b = capture_rng(a.generators), capture_rng(b.generators)
    assert torch.equal(rng_a["torch"], rng_b["torch"])
    assert torch.equal(rng_a["python"]["state"], rng_b["python"]["state"])
    assert torch.equal(rng_a["numpy"]["keys"], rng_b["numpy"]["keys"])
    for name in rng_a["generators"]:
        assert torch.equal(rng_a["generators"][name], rng_b["generators"][name])
    assert a.environment.state_dict() == b.environment.state_dict()
    assert a.updater.kl_controller.value == b.updater.kl_controller.value


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_four_steps_equal_two_then_resume(tmp_path, model_dir, setting):
    config = EngineConfig(max_steps=4, save_every=2, **BASE, **SETTINGS[setting])
    straight = Trainer(config, model_dir, _env(), tmp_path / "straight")
    straight.run()
    interrupted = Trainer(config, model_dir, _env(), tmp_path / "interrupted")
    interrupted.train_step()
    interrupted.train_step()
    interrupted.train_step()  # work after the last checkpoint is lost, as in a crash
    del interrupted
    resumed = Trainer(config, model_dir, _env(), tmp_path / "interrupted", resume=True)
    assert resumed.step == 2
    resumed.run()
    _assert_same_end(straight, resumed)
    # Learning happened at all (the comparison is not between two frozen models).
    base = Trainer(config, model_dir, _env(), tmp_path / "fresh").policy.model.state_dict()
    assert any(not torch.equal(base[k], v) for k, v in straight.policy.model.state_dict().items())


SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from coding_framework.rl_core.engine import CharacterTargetEnvironment, EngineConfig, Trainer

    model_dir, run_dir, kill_at, settings = sys.argv[1], sys.argv[2], int(sys.argv[3]), eval(sys.argv[4])

    def on_metrics(step, metrics):
        if step == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    env = CharacterTargetEnvironment(target="abcdefghijklmnopqrstuvwxyz", turns=2, seed=3)
    Trainer(EngineConfig(**settings), model_dir, env, run_dir, on_metrics=on_metrics).run()
""")


def test_a_sigkilled_run_resumes_to_the_uninterrupted_end(tmp_path, model_dir):
    settings = dict(max_steps=6, save_every=2, **BASE)
    run_dir = tmp_path / "killed"
    # Killed in step 5, after its 2nd checkpoint (step 4) and before the 3rd.
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(model_dir), str(run_dir), "5", repr(settings)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    assert latest_checkpoint(run_dir).name == "step_4"
    config = EngineConfig(**settings)
    resumed = Trainer(config, model_dir, _env(), run_dir, resume=True)
    assert resumed.step == 4
    resumed.run()
    straight = Trainer(config, model_dir, _env(), tmp_path / "straight")
    straight.run()
    _assert_same_end(straight, resumed)
    for temperature, n in ((0.0, 1), (1.0, 3)):  # the held-out result agrees too, greedy and sampled
        a = straight.evaluate_pass_at_1(temperature=temperature, n_samples=n)
        b = resumed.evaluate_pass_at_1(temperature=temperature, n_samples=n)
        assert (a.pass_at_1, a.per_task, a.reward_mean) == (b.pass_at_1, b.per_task, b.reward_mean)

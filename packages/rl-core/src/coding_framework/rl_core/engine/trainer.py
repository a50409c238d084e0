"""The training loop: tasks → rollout through the environment → scores → update → metrics → checkpoint.

One step: the environment draws `prompts_per_step` tasks; each is repeated `group_size` times and the
environment plays the episodes with the engine's `generate` callback, scoring them (e.g. hidden tests
in a sandbox). Optional reward shaping (DAPO's overlong penalty) and group filtering (DAPO's dynamic
sampling, which draws more tasks until enough groups carry a signal) follow; then the trajectories are
tokenized, advantages and losses computed and the optimizer stepped. Metrics go to a callback
(`on_metrics(step, metrics)`), a checkpoint is written every `save_every` steps and after the last.

Work between steps (a benchmark run with the current weights every N steps) plugs in as
`on_step_end(trainer, step)`: it runs after the update and before the step's metrics are reported and
checkpointed, inside `evaluation_mode()` (eval mode, no gradient, every RNG put back afterwards), so
training with it is bit-identical to training without it; the metrics it returns join the step's.

Timings per step: `time/rollout` is the time spent generating (inside `generate`) plus tokenization,
`time/scoring` everything else the environment does (sandbox runs, reviews), `time/update` the
optimisation; `time/scoring_share` = scoring / (rollout + scoring + update).
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..dapo import dynamic_sampling_keep, overlong_penalty
from .checkpoint import (
    capture_rng,
    latest_checkpoint,
    prune_checkpoints,
    read_engine_state,
    read_trainer_state,
    restore_rng,
    save_checkpoint,
)
from .config import EngineConfig
from .environment import Environment, Trajectory, check_environment, task_id
from .policy import Policy, check_model_dir, load_policy
from .rollout import EncodedTrajectory, PolicySampler, build_token_batch, encode_trajectories, truncate_left
from .update import UpdateBatch, Updater

MetricsCallback = Callable[[int, dict[str, float]], Any]
StepEndHook = Callable[["Trainer", int], Mapping[str, float] | None]
"""`on_step_end(trainer, step) -> metrics or None`, called after every step (see `Trainer`)."""
# The evaluation generator's seed is derived from the run seed but differs from the training one, so
# evaluating never moves the training RNG.
_EVAL_SEED_OFFSET = 1_000_003


@dataclass(frozen=True)
class PassAtOne:
    """Held-out pass@1: the mean over tasks of the fraction of samples that passed."""

    pass_at_1: float
    n_tasks: int
    n_samples: int
    """Samples per task."""
    per_task: dict[str, float]
    """Task id → fraction of its samples that passed."""
    reward_mean: float
    seconds: float


@dataclass
class _Round:
    tasks: list[Any]
    trajectories: list[Trajectory]
    encoded: list[EncodedTrajectory]
    scores: torch.Tensor


class Trainer:
    """Trains a local causal LM in an environment.

    Args:
        config: the engine configuration.
        model_dir: the base model (a local Hugging Face causal LM directory); the reference model (KL)
            always comes from here, also when resuming.
        environment: anything with the `Environment` protocol's methods.
        run_dir: where checkpoints go (RUN_DIR/checkpoints/step_<N>/).
        on_metrics: called as `on_metrics(step, metrics)` after every step.
        resume: continue from the newest complete checkpoint in run_dir (a fresh start if there is none).
            Without it, a run_dir that already holds checkpoints is an error.
        on_step_end: called as `on_step_end(trainer, step)` after every step's update (trainer.step is
            already `step`), inside `evaluation_mode()`, before on_metrics and the checkpoint; the
            metrics it returns (name → number, names not used by the step) are added to the step's.
            Steps a resumed run does not train again (up to its checkpoint) are never called again.
    """

    def __init__(
        self,
        config: EngineConfig,
        model_dir: str | os.PathLike[str],
        environment: Environment,
        run_dir: str | os.PathLike[str],
        *,
        on_metrics: MetricsCallback | None = None,
        resume: bool = False,
        on_step_end: StepEndHook | None = None,
    ):
        check_environment(environment)
        self.config = config
        self.base_model_dir = check_model_dir(model_dir)
        self.environment = environment
        self.run_dir = Path(run_dir)
        self.on_metrics = on_metrics
        self.on_step_end = on_step_end
        if config.num_threads is not None:
            torch.set_num_threads(config.num_threads)
        checkpoint = latest_checkpoint(self.run_dir)
        if checkpoint is not None and not resume:
            raise FileExistsError(
                f"{self.run_dir} already holds checkpoints (newest {checkpoint.name}): pass "
                "resume=True to continue that run, or use a new run directory"
            )
        self.step = 0
        self.history: list[dict[str, float]] = []
        self.resumed_from: Path | None = None
        if checkpoint is None:
            random.seed(config.seed)
            np.random.seed(config.seed)
            torch.manual_seed(config.seed)
            self.policy: Policy = load_policy(self.base_model_dir, config)
        else:
            self.policy = load_policy(checkpoint, config, reference_dir=self.base_model_dir)
        self.sampling_generator = torch.Generator(device=self.policy.device).manual_seed(config.seed)
        self.shuffle_generator = torch.Generator().manual_seed(config.seed + 1)
        self.updater = Updater(self.policy, config, self.shuffle_generator)
        if checkpoint is not None:
            self._restore(checkpoint)

    @property
    def generators(self) -> dict[str, torch.Generator]:
        return {"sampling": self.sampling_generator, "shuffle": self.shuffle_generator}

    # ------------------------------------------------------------------ generation
    def sampler(
        self,
        *,
        temperature: float | None = None,
        generator: torch.Generator | None = None,
        max_new_tokens: int | None = None,
    ) -> PolicySampler:
        """A `generate` callback over the current policy (training settings unless overridden)."""
        config = self.config
        return PolicySampler(
            self.policy,
            max_new_tokens=max_new_tokens or config.max_new_tokens,
            temperature=config.temperature if temperature is None else temperature,
            top_p=config.top_p,
            generator=generator or self.sampling_generator,
            batch_size=config.rollout_batch_size,
        )

    # ------------------------------------------------------------------ training
    def run(self) -> list[dict[str, float]]:
        """Train until config.max_steps (from wherever a resume left off); returns the metrics history."""
        while self.step < self.config.max_steps:
            self.train_step()
        return self.history

    def _rollout_round(self, step: int, sampler: PolicySampler, timer: dict[str, float]) -> _Round:
        config, env = self.config, self.environment
        tasks = list(env.sample_batch(step, config.prompts_per_step))
        if len(tasks) != config.prompts_per_step:
            raise ValueError(
                f"environment.sample_batch returned {len(tasks)} tasks, "
                f"{config.prompts_per_step} were asked for"
            )
        expanded = [task for task in tasks for _ in range(config.group_size)]
        trajectories = self._play(env.rollout, expanded, sampler, timer)
        began = time.perf_counter()
        env.record(expanded, trajectories)
        timer["scoring"] += time.perf_counter() - began
        began = time.perf_counter()
        encoded = encode_trajectories(trajectories, self.policy)
        timer["rollout"] += time.perf_counter() - began
        scores = torch.tensor([float(t.reward) for t in trajectories], dtype=torch.float32)
        if config.overlong_buffer > 0:
            lengths = torch.tensor([e.longest_turn for e in encoded], dtype=torch.long)
            scores = scores + overlong_penalty(
                lengths,
                max_length=config.max_new_tokens,
                buffer_length=config.overlong_buffer,
                penalty_factor=config.overlong_penalty_factor,
            )
        return _Round(expanded, trajectories, encoded, scores)

    def _play(
        self, method, tasks: list[Any], sampler: PolicySampler, timer: dict[str, float]
    ) -> list[Trajectory]:
        before = sampler.seconds
        began = time.perf_counter()
        trajectories = list(method(tasks, sampler))
        elapsed = time.perf_counter() - began
        generating = sampler.seconds - before
        timer["rollout"] += generating
        timer["scoring"] += elapsed - generating
        if len(trajectories) != len(tasks):
            raise ValueError(
                f"the environment returned {len(trajectories)} trajectories for {len(tasks)} tasks"
            )
        for t in trajectories:
            if not math.isfinite(float(t.reward)):
                raise ValueError(f"the environment returned a non-finite reward {t.reward!r}")
        return trajectories

    def train_step(self) -> dict[str, float]:
        """One training step; returns its metrics (also passed to on_metrics and kept in history)."""
        config = self.config
        step = self.step + 1
        began = time.perf_counter()
        timer = {"rollout": 0.0, "scoring": 0.0, "update": 0.0}
        sampler = self.sampler()
        rounds: list[_Round] = []
        kept: list[tuple[_Round, list[int]]] = []  # (round, row indices of one group)
        groups_needed = config.prompts_per_step
        for _ in range(config.dynamic_sampling_max_rounds if config.dynamic_sampling else 1):
            current = self._rollout_round(step, sampler, timer)
            rounds.append(current)
            group_ids = torch.arange(config.prompts_per_step).repeat_interleave(config.group_size)
            keep = (
                dynamic_sampling_keep(current.scores, group_ids)
                if config.dynamic_sampling
                else torch.ones(len(group_ids), dtype=torch.bool)
            )
            for g in range(config.prompts_per_step):
                rows = list(range(g * config.group_size, (g + 1) * config.group_size))
                if bool(keep[rows[0]]) and len(kept) < groups_needed:
                    kept.append((current, rows))
            if len(kept) >= groups_needed:
                break

        metrics = self._rollout_metrics(rounds, sampler)
        metrics["dapo/groups_kept"] = float(len(kept))
        metrics["dapo/rounds"] = float(len(rounds))
        if kept:
            update_began = time.perf_counter()
            batch, truncated = self._update_batch(kept, timer)
            timer["update"] += time.perf_counter() - update_began - timer.pop("baseline", 0.0)
            began_opt = time.perf_counter()
            metrics.update(self.updater.update(batch, step - 1))
            timer["update"] += time.perf_counter() - began_opt
            mask = batch.tokens.response_mask
            metrics["tokens/trainable"] = float(mask.sum())
            metrics["tokens/total"] = float(batch.tokens.attention_mask.sum())
            metrics["tokens/truncated_samples"] = float(truncated)
        else:
            metrics["lr"] = self.updater.set_lr(step - 1)
            metrics["update/skipped"] = 1.0
        total = timer["rollout"] + timer["scoring"] + timer["update"]
        metrics["time/rollout"] = timer["rollout"]
        metrics["time/scoring"] = timer["scoring"]
        metrics["time/update"] = timer["update"]
        metrics["time/step"] = time.perf_counter() - began
        metrics["time/scoring_share"] = timer["scoring"] / total if total > 0 else 0.0
        self.step = step
        if self.on_step_end is not None:
            metrics.update(self._step_end_metrics(step, metrics))
        self.history.append(metrics)
        if self.on_metrics is not None:
            self.on_metrics(step, metrics)
        if (config.save_every and step % config.save_every == 0) or step == config.max_steps:
            self.save_checkpoint()
        return metrics

    def _update_batch(
        self, kept: list[tuple[_Round, list[int]]], timer: dict[str, float]
    ) -> tuple[UpdateBatch, int]:
        """The kept groups as one batch (with remax's greedy baselines), and how many were truncated."""
        encoded = [r.encoded[i] for r, rows in kept for i in rows]
        scores = torch.cat([r.scores[rows] for r, rows in kept])
        group_ids = torch.arange(len(kept)).repeat_interleave(self.config.group_size)
        baselines = None
        if self.config.uses_greedy_baseline:
            began = time.perf_counter()
            greedy = self.sampler(temperature=0.0)
            tasks = [r.tasks[rows[0]] for r, rows in kept]
            trajectories = self._play(self.environment.rollout, tasks, greedy, timer)
            per_group = torch.tensor([float(t.reward) for t in trajectories], dtype=torch.float32)
            baselines = per_group.repeat_interleave(self.config.group_size)
            timer["baseline"] = time.perf_counter() - began
        device = self.policy.device
        limit = self.policy.max_positions
        truncated = sum(limit is not None and len(e.token_ids) > limit for e in encoded)
        encoded = [truncate_left(e, limit) for e in encoded]
        tokens = build_token_batch(encoded, self.policy.pad_token_id, device, limit)
        batch = UpdateBatch(
            tokens,
            scores.to(device),
            group_ids.to(device),
            None if baselines is None else baselines.to(device),
        )
        return batch, truncated

    def _rollout_metrics(self, rounds: list[_Round], sampler: PolicySampler) -> dict[str, float]:
        trajectories = [t for r in rounds for t in r.trajectories]
        rewards = torch.tensor([float(t.reward) for t in trajectories], dtype=torch.float64)
        scores = torch.cat([r.scores for r in rounds]).double()
        lengths = torch.tensor([sum(e.trainable) for r in rounds for e in r.encoded], dtype=torch.float64)
        metrics = {
            "reward/mean": float(rewards.mean()),
            "reward/std": float(rewards.std()) if len(rewards) > 1 else 0.0,
            "reward/min": float(rewards.min()),
            "reward/max": float(rewards.max()),
            "score/mean": float(scores.mean()),
            "samples": float(len(trajectories)),
            "tokens/response_mean": float(lengths.mean()),
            "tokens/generated": float(sampler.generated_tokens),
            "tokens/truncated_prompts": float(sampler.truncated_prompts),
        }
        names = sorted({k for t in trajectories for k in (getattr(t, "metrics", None) or {})})
        for name in names:
            values = [float(t.metrics[name]) for t in trajectories if name in (t.metrics or {})]
            metrics[f"env/{name}"] = sum(values) / len(values)
        if "env/passed" in metrics:
            metrics["pass_rate"] = metrics["env/passed"]
        return metrics

    def _step_end_metrics(self, step: int, metrics: Mapping[str, float]) -> dict[str, float]:
        with self.evaluation_mode():
            extra = self.on_step_end(self, step)
        extra = dict(extra or {})
        clash = sorted(extra.keys() & metrics.keys())
        if clash:
            raise ValueError(f"on_step_end returned metric names the step already reports: {clash}")
        out = {}
        for name, value in extra.items():
            if not isinstance(name, str) or isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"on_step_end must return {{name: number}}, got {name!r}: {value!r}")
            out[name] = float(value)
        return out

    # ------------------------------------------------------------------ evaluation
    @contextlib.contextmanager
    def evaluation_mode(self) -> Iterator[Policy]:
        """Yields the policy in eval mode with autograd off; afterwards its train/eval mode is restored
        and so is every random state a step reads (Python, NumPy, torch CPU and CUDA, the engine's
        generators), so whatever ran inside cannot change the rest of training."""
        model = self.policy.model
        was_training = model.training
        saved = capture_rng(self.generators)
        model.eval()
        try:
            with torch.no_grad():
                yield self.policy
        finally:
            model.train(was_training)
            restore_rng(saved, self.generators)

    def evaluate_pass_at_1(
        self,
        tasks: Sequence[Any] | None = None,
        *,
        n_samples: int = 1,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> PassAtOne:
        """Held-out pass@1 through `environment.evaluate` (default tasks: `environment.heldout_tasks()`).

        Greedy when temperature is 0 (then n_samples must be 1: every sample would be the same). Draws
        come from a generator of their own, seeded from `seed` (default: the run seed), so evaluating
        before, during or after training changes nothing in training and gives the same result for the
        same weights.
        """
        if type(n_samples) is not int or n_samples < 1:
            raise ValueError(f"n_samples={n_samples!r}: must be an int >= 1")
        if temperature < 0 or not math.isfinite(temperature):
            raise ValueError(f"temperature={temperature}: must be a finite number >= 0")
        if temperature == 0 and n_samples != 1:
            raise ValueError(
                "greedy evaluation (temperature 0) gives one answer per task: use n_samples=1, "
                "or a temperature > 0 for several samples"
            )
        tasks = list(self.environment.heldout_tasks() if tasks is None else tasks)
        if not tasks:
            raise ValueError("evaluate_pass_at_1 needs at least one task")
        began = time.perf_counter()
        base = self.config.seed if seed is None else seed
        generator = torch.Generator(device=self.policy.device).manual_seed(base + _EVAL_SEED_OFFSET)
        sampler = self.sampler(temperature=temperature, generator=generator)
        expanded = [task for task in tasks for _ in range(n_samples)]
        trajectories = list(self.environment.evaluate(expanded, sampler))
        if len(trajectories) != len(expanded):
            raise ValueError(
                f"environment.evaluate returned {len(trajectories)} trajectories for {len(expanded)} tasks"
            )
        passed = []
        for t in trajectories:
            value = (getattr(t, "metrics", None) or {}).get("passed")
            if value is None:
                raise ValueError(
                    "environment.evaluate must report metrics['passed'] (1.0 or 0.0) per trajectory"
                )
            passed.append(float(value))
        per_task: dict[str, float] = {}
        for index, task in enumerate(tasks):
            chunk = passed[index * n_samples : (index + 1) * n_samples]
            per_task[task_id(task, index)] = sum(chunk) / n_samples
        return PassAtOne(
            pass_at_1=sum(per_task.values()) / len(per_task) if per_task else 0.0,
            n_tasks=len(tasks),
            n_samples=n_samples,
            per_task=per_task,
            reward_mean=sum(float(t.reward) for t in trajectories) / len(trajectories),
            seconds=time.perf_counter() - began,
        )

    # ------------------------------------------------------------------ checkpoints
    def save_checkpoint(self) -> Path:
        """Write RUN_DIR/checkpoints/step_<step>/ atomically (and prune old ones if configured)."""
        updater = self.updater
        trainer_state = {
            "step": self.step,
            "optimizer": updater.optimizer.state_dict(),
            "value_head": None if self.policy.value_head is None else self.policy.value_head.state_dict(),
            "kl_coef": float(updater.kl_controller.value),
            "rng": capture_rng(self.generators),
        }
        engine_state = {
            "step": self.step,
            "base_model_dir": str(self.base_model_dir.resolve()),
            "config": self.config.to_dict(),
            "environment": self.environment.state_dict(),
            "history": self.history,
        }
        path = save_checkpoint(
            self.run_dir,
            self.step,
            model=self.policy.model,
            tokenizer=self.policy.tokenizer,
            trainer_state=trainer_state,
            engine_state=engine_state,
        )
        if self.config.keep_checkpoints is not None:
            prune_checkpoints(self.run_dir, self.config.keep_checkpoints)
        return path

    def _restore(self, checkpoint: Path) -> None:
        engine_state = read_engine_state(checkpoint)
        saved = EngineConfig.from_dict(engine_state["config"])
        differences = self.config.resume_differences(saved)
        if differences:
            listing = ", ".join(f"{k}: {a!r} → {b!r}" for k, (a, b) in sorted(differences.items()))
            raise ValueError(
                f"cannot resume {checkpoint} with a different configuration ({listing}); use the "
                "run's original settings or start a new run directory"
            )
        if Path(engine_state["base_model_dir"]) != self.base_model_dir.resolve():
            warnings.warn(
                f"resuming a run whose base model was {engine_state['base_model_dir']} with "
                f"{self.base_model_dir}; the reference model comes from the latter",
                stacklevel=3,
            )
        state = read_trainer_state(checkpoint, self.policy.device)
        self.updater.optimizer.load_state_dict(state["optimizer"])
        if self.policy.value_head is not None:
            self.policy.value_head.load_state_dict(state["value_head"])
        self.updater.kl_controller.value = float(state["kl_coef"])
        self.environment.load_state_dict(engine_state["environment"])
        restore_rng(state["rng"], self.generators)
        self.step = int(engine_state["step"])
        self.history = list(engine_state["history"])
        self.resumed_from = checkpoint

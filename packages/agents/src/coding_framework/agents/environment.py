"""The coding environment a trainer drives: training problems, episodes, rewards, held-out evaluation.

`CodingEnvironment` has the shape of rl-core's engine `Environment` protocol (sample_batch, rollout,
record, evaluate, heldout_tasks, state_dict, load_state_dict) without importing rl-core: agents depends
only on the sandbox. A task is a `Problem`; the policy is the `generate` callback the trainer passes
(prompt texts → completions). Episodes are `run_episodes` (single- or multi-turn), rewards the
configured `RewardConfig` (default: hidden-test pass fraction plus the format penalty, timing-free),
trajectories the episode's segments (only the policy's own text trainable) and reward.

Training problems come from a curriculum over freshly generated train-split problems, or over a fixed
set (which may hold no held-out problem). Evaluation runs the held-out set with correctness only. The
environment owns one `SandboxPool` unless given one, and closes it on `close()`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from coding_framework.agents.curriculum import (
    CurriculumConfig,
    CurriculumSampler,
    GeneratedSource,
    PoolSource,
)
from coding_framework.agents.datasets import load_heldout_set
from coding_framework.agents.episode import Episode, EpisodeConfig, Segment, run_episodes
from coding_framework.agents.problems import Problem
from coding_framework.agents.reviewer import Reviewer
from coding_framework.agents.rewards import RewardConfig
from coding_framework.agents.scoring import Executor

_STATE_VERSION = 1
Success = Literal["all_passed", "pass_fraction"]


@dataclass(frozen=True)
class EnvironmentConfig:
    """How the coding environment trains and evaluates."""

    episode: EpisodeConfig = field(default_factory=EpisodeConfig)
    """Training episodes: max_turns (1 = single-turn), early stop, reward (RewardConfig), turn penalty."""
    curriculum: CurriculumConfig | None = None
    """Level-by-level sampling; None: CurriculumConfig() over the source's levels."""
    success: Success = "all_passed"
    """What the curriculum counts as a success: every hidden test passed, or the pass fraction."""
    eval_max_turns: int = 1
    """Turns of a held-out evaluation episode (1: plain pass@1 of the first answer)."""

    def __post_init__(self) -> None:
        if not isinstance(self.episode, EpisodeConfig):
            raise ValueError("EnvironmentConfig.episode must be an EpisodeConfig")
        if self.curriculum is not None and not isinstance(self.curriculum, CurriculumConfig):
            raise ValueError("EnvironmentConfig.curriculum must be a CurriculumConfig or None")
        if self.success not in ("all_passed", "pass_fraction"):
            raise ValueError(f"EnvironmentConfig.success={self.success!r}: use 'all_passed' or "
                             "'pass_fraction'")
        if type(self.eval_max_turns) is not int or self.eval_max_turns < 1:
            raise ValueError(f"EnvironmentConfig.eval_max_turns={self.eval_max_turns!r}: must be an int >= 1")

    @property
    def eval_episode(self) -> EpisodeConfig:
        """Evaluation episodes: correctness only (no timing, no lint), same sandbox limits."""
        reward = RewardConfig(weights={"correctness": 1.0}, limits=self.episode.reward.limits,
                              hidden_jobs=self.episode.reward.hidden_jobs)
        return replace(self.episode, max_turns=self.eval_max_turns, reward=reward, turn_penalty=0.0)


@dataclass(frozen=True)
class CodingTrajectory:
    """One episode as a trainer sees it."""

    episode: Episode
    metrics: Mapping[str, float]
    """passed (1.0 iff every hidden test passed; only when hidden tests were run), pass_fraction,
    turns, level."""

    @property
    def segments(self) -> tuple[Segment, ...]:
        """Prompt, policy and feedback segments; only policy text is trainable."""
        return self.episode.segments

    @property
    def reward(self) -> float:
        return self.episode.reward

    @property
    def problem(self) -> Problem:
        return self.episode.problem


def _trajectory(episode: Episode) -> CodingTrajectory:
    metrics = {"turns": float(len(episode.turns)), "level": float(episode.problem.difficulty)}
    attempt = episode.score.attempt
    if attempt is not None:
        try:
            fraction = attempt.pass_fraction
        except ValueError:  # the reward did not run the hidden tests
            pass
        else:
            metrics["pass_fraction"] = fraction
            metrics["passed"] = 1.0 if fraction == 1.0 else 0.0
    return CodingTrajectory(episode, metrics)


GenerateBatch = Callable[[list[str]], list[str]]


class CodingEnvironment:
    """Problems, episodes and rewards for a trainer (rl-core's engine `Environment` protocol).

    Args:
        config: episodes, curriculum, success criterion, evaluation turns.
        problems: a fixed training set (no held-out problem allowed); None: generated train-split
            problems without end.
        heldout: the evaluation set; None: `load_heldout_set()`.
        pool: a sandbox to use (not closed by this environment); None: start a `SandboxPool(workers)`.
        workers: sandbox workers when the environment starts its own pool (None: one per core).
        reviewer: feedback between turns; None: the rule-based reviewer.
    """

    def __init__(self, config: EnvironmentConfig | None = None, *, problems: Sequence[Problem] | None = None,
                 heldout: Sequence[Problem] | None = None, pool: Executor | None = None,
                 workers: int | None = None, reviewer: Reviewer | None = None) -> None:
        self.config = config or EnvironmentConfig()
        source = PoolSource(problems) if problems is not None else GeneratedSource()
        curriculum = self.config.curriculum
        if curriculum is None:
            levels = source.levels if isinstance(source, PoolSource) else CurriculumConfig().levels
            curriculum = CurriculumConfig(levels=levels)
        self.sampler = CurriculumSampler(curriculum, source)
        if heldout is not None:
            training = [p.id for p in heldout if p.split != "heldout"]
            if training:
                raise ValueError(f"held-out problems must have split 'heldout': {training[:5]}")
        self._heldout = list(heldout) if heldout is not None else None
        self.reviewer = reviewer
        self._owns_pool = pool is None
        if pool is None:
            from coding_framework.sandbox import SandboxPool

            pool = SandboxPool(workers=workers)
        self.pool = pool

    # -- the engine protocol ------------------------------------------------------------------------
    def sample_batch(self, step: int, size: int) -> list[Problem]:
        """`size` training problems from the curriculum (`step` is informational)."""
        return self.sampler.sample(size)

    def rollout(self, tasks: Sequence[Problem], generate: GenerateBatch) -> list[CodingTrajectory]:
        """One training episode per problem, scored with the training reward."""
        episodes = run_episodes(list(tasks), generate, self.pool, self.config.episode, self.reviewer)
        return [_trajectory(e) for e in episodes]

    def record(self, tasks: Sequence[Problem], trajectories: Sequence[CodingTrajectory]) -> None:
        """Feed the step's outcomes to the curriculum."""
        if len(tasks) != len(trajectories):
            raise ValueError(f"{len(tasks)} tasks but {len(trajectories)} trajectories")
        self.sampler.update(list(tasks), [self._success(t) for t in trajectories])

    def evaluate(self, tasks: Sequence[Problem], generate: GenerateBatch) -> list[CodingTrajectory]:
        """One evaluation episode per problem (correctness reward, eval_max_turns turns)."""
        episodes = run_episodes(list(tasks), generate, self.pool, self.config.eval_episode, self.reviewer)
        return [_trajectory(e) for e in episodes]

    def heldout_tasks(self) -> list[Problem]:
        """The held-out problems (never trained on)."""
        if self._heldout is None:
            self._heldout = load_heldout_set()
        return list(self._heldout)

    def state_dict(self) -> dict[str, Any]:
        """JSON-able: the curriculum's state."""
        return {"version": _STATE_VERSION, "curriculum": self.sampler.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if not isinstance(state, dict) or state.get("version") != _STATE_VERSION:
            raise ValueError(f"not a CodingEnvironment state of version {_STATE_VERSION}")
        self.sampler.load_state_dict(state["curriculum"])

    # -- the rest -----------------------------------------------------------------------------------
    @property
    def level(self) -> int:
        """The curriculum's current level."""
        return self.sampler.level

    def _success(self, trajectory: CodingTrajectory) -> float:
        metrics = trajectory.metrics
        if self.config.success == "pass_fraction" and "pass_fraction" in metrics:
            return float(metrics["pass_fraction"])
        if "passed" in metrics:
            return float(metrics["passed"])
        # Hidden tests were not run by this reward: the clipped reward is the best evidence there is.
        reward = float(trajectory.reward)
        return min(1.0, max(0.0, reward)) if math.isfinite(reward) else 0.0

    def close(self) -> None:
        """Close the sandbox pool if this environment started it."""
        if self._owns_pool and hasattr(self.pool, "close"):
            self.pool.close()

    def __enter__(self) -> CodingEnvironment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

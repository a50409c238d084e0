"""Named, composable reward functions over a measured attempt, and their composite.

Every reward reads an `Attempt` (what the sandbox and the linter measured about one candidate, see
`scoring.py`) and the `RewardConfig`, and returns a float:

| name              | range   | measures                                                      | reproducible |
|-------------------|---------|---------------------------------------------------------------|--------------|
| correctness       | [0, 1]  | fraction of hidden tests passed                               | yes          |
| correctness_all   | {0, 1}  | 1 iff every hidden test passes                                | yes          |
| style             | [0, 1]  | 1 - per_finding * ruff findings, floored at 0                 | yes          |
| efficiency        | [0, 1]  | min(1, tolerance * reference / candidate sandbox CPU time)    | NO: timing   |
| format            | <= 0    | -no_code_penalty without code, -syntax_error_penalty if broken| yes          |

`style` and `efficiency` are quality rewards: with `gate_quality=True` (default) they are 0 unless
every hidden test passes, so clean-but-wrong or fast-but-wrong code earns nothing for its style.
The composite is `clip(sum(w_i * r_i) / norm, clip_min, clip_max)`, with norm = 1, or with
`normalize="positive_weights"` the best possible weighted sum (sum of w_i * max r_i over positive
weights: penalties, whose best is 0, do not count), which maps a perfect attempt to 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from coding_framework.agents.execution import DEFAULT_LIMITS
from coding_framework.agents.lint import LintConfig
from coding_framework.sandbox import Limits

if TYPE_CHECKING:
    from coding_framework.agents.scoring import Attempt

Need = Literal["hidden", "lint", "timing"]
"""What a reward needs measured: hidden-test passes, lint findings, timing."""


@dataclass(frozen=True)
class RewardConfig:
    """Which rewards count, with what weights, and how the sum is shaped."""

    weights: Mapping[str, float] | tuple[tuple[str, float], ...] = (("correctness", 1.0), ("format", 1.0))
    """Reward name → weight; stored as sorted (name, weight) pairs. Names: see REWARDS."""
    clip_min: float = -1.0
    """Lower bound of the composite."""
    clip_max: float = 1.0
    """Upper bound of the composite."""
    normalize: Literal["none", "positive_weights"] = "none"
    """Divide the weighted sum by 1 or by the sum of the positive weights."""
    gate_quality: bool = True
    """style and efficiency count only when every hidden test passes."""
    style_penalty_per_finding: float = 0.25
    """Style score lost per lint finding."""
    no_code_penalty: float = 1.0
    """format reward is minus this when no code was found in the completion."""
    syntax_error_penalty: float = 0.5
    """format reward is minus this when the code does not parse."""
    hidden_jobs: Literal["counted", "per_case"] = "counted"
    """How hidden tests run: one counting job per sample (fast), or one job per case (each case
    isolated in its own process; about 8x the sandbox work)."""
    efficiency_repeats: int = 5
    """Times the hidden cases run in one timing job (more: less noise, more cost)."""
    efficiency_rounds: int = 3
    """Timing jobs per candidate and per reference, interleaved through the batch; each runtime is the
    minimum over its rounds (as timeit does: load only ever adds time). One round's CPU time of a
    millisecond-scale job varies by up to 1.5x under parallel load; the minimum of 3 by about 1.3x."""
    efficiency_tolerance: float = 1.2
    """A candidate up to this many times slower than the reference still gets full efficiency, so
    timing noise (about 5% of CPU time) does not penalise equally good code."""
    limits: Limits = DEFAULT_LIMITS
    """Sandbox limits for each job."""
    lint: LintConfig = field(default_factory=LintConfig)
    """Ruff settings for the style reward."""

    def __post_init__(self) -> None:
        pairs = self.weights.items() if isinstance(self.weights, Mapping) else self.weights
        try:
            pairs = tuple(sorted((str(k), float(v)) for k, v in pairs))
        except (TypeError, ValueError):
            raise ValueError(f"RewardConfig.weights={self.weights!r}: give a mapping name → number") from None
        object.__setattr__(self, "weights", pairs)
        if not pairs:
            raise ValueError("RewardConfig.weights is empty: give at least one, e.g. {'correctness': 1}")
        for name, weight in pairs:
            get_reward(name)
            if not math.isfinite(weight):
                raise ValueError(f"RewardConfig.weights[{name!r}]={weight}: must be finite")
        low, high = self.clip_min, self.clip_max
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise ValueError(f"RewardConfig clip [{low}, {high}]: need finite clip_min < clip_max")
        if self.hidden_jobs not in ("counted", "per_case"):
            raise ValueError(f"RewardConfig.hidden_jobs={self.hidden_jobs!r}: use 'counted' or 'per_case'")
        if self.normalize not in ("none", "positive_weights"):
            raise ValueError(f"RewardConfig.normalize={self.normalize!r}: use 'none' or 'positive_weights'")
        if self.normalize == "positive_weights" and best_total(pairs) <= 0:
            raise ValueError("RewardConfig.normalize='positive_weights' needs a positive weight on a reward "
                             "that is not a penalty (correctness, correctness_all, style or efficiency)")
        for name in ("style_penalty_per_finding", "no_code_penalty", "syntax_error_penalty"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"RewardConfig.{name}={value}: must be a finite number >= 0")
        if not (math.isfinite(self.efficiency_tolerance) and self.efficiency_tolerance >= 1):
            raise ValueError(f"RewardConfig.efficiency_tolerance={self.efficiency_tolerance}: must be >= 1")
        for name in ("efficiency_repeats", "efficiency_rounds"):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise ValueError(f"RewardConfig.{name}={value!r}: need an int >= 1")
        if not isinstance(self.limits, Limits):
            raise ValueError("RewardConfig.limits must be a coding_framework.sandbox.Limits")
        if not isinstance(self.lint, LintConfig):
            raise ValueError("RewardConfig.lint must be a LintConfig")

    @property
    def weight_map(self) -> dict[str, float]:
        return dict(self.weights)

    @property
    def needs(self) -> frozenset[str]:
        """Everything the weighted rewards need measured (gating adds the all-pass verdict)."""
        needs: set[str] = set()
        for name, weight in self.weight_map.items():
            if weight != 0:
                reward = REWARDS[name]
                needs |= reward.needs
                if reward.quality and self.gate_quality:
                    needs.add("hidden")
        return frozenset(needs)

    @property
    def reproducible(self) -> bool:
        """False when a weighted reward depends on timing."""
        return all(REWARDS[n].reproducible for n, w in self.weight_map.items() if w != 0)


@dataclass(frozen=True)
class Reward:
    """A registered reward function."""

    name: str
    fn: Callable[[Attempt, RewardConfig], float]
    needs: frozenset[str]
    reproducible: bool = True
    quality: bool = False
    """Gated on full correctness when RewardConfig.gate_quality."""
    best: float = 1.0
    """The largest value the reward takes (0 for penalties)."""

    def __call__(self, attempt: Attempt, config: RewardConfig) -> float:
        if self.quality and config.gate_quality and not attempt.all_passed:
            return 0.0
        return float(self.fn(attempt, config))


def correctness(attempt: Attempt, config: RewardConfig) -> float:
    """Fraction of hidden test cases passed; 0 when there is no runnable code."""
    return attempt.pass_fraction


def correctness_all(attempt: Attempt, config: RewardConfig) -> float:
    """1 iff every hidden test case passed."""
    return 1.0 if attempt.all_passed else 0.0


def style(attempt: Attempt, config: RewardConfig) -> float:
    """1 for lint-clean code, minus a fixed amount per ruff finding, floored at 0; 0 without code."""
    if attempt.lint is None or not attempt.extraction.ok:
        return 0.0
    return max(0.0, 1.0 - config.style_penalty_per_finding * len(attempt.lint))


def efficiency(attempt: Attempt, config: RewardConfig) -> float:
    """min(1, tolerance * reference runtime / candidate runtime), both timed in the sandbox in the
    same batch: each runtime is the least CPU time, over `efficiency_rounds` jobs, of the child running
    the hidden cases `efficiency_repeats` times.

    Timing-dependent: repeated runs give slightly different values. 0 when any timing job failed.
    """
    if attempt.runtime_s is None or attempt.reference_runtime_s is None or attempt.runtime_s <= 0:
        return 0.0
    return min(1.0, config.efficiency_tolerance * attempt.reference_runtime_s / attempt.runtime_s)


def format_penalty(attempt: Attempt, config: RewardConfig) -> float:
    """0 for parseable code; minus a penalty for no code or a syntax error."""
    if attempt.extraction.program is None:
        return -config.no_code_penalty
    if attempt.extraction.syntax_error is not None:
        return -config.syntax_error_penalty
    return 0.0


REWARDS: dict[str, Reward] = {
    r.name: r
    for r in (
        Reward("correctness", correctness, frozenset({"hidden"})),
        Reward("correctness_all", correctness_all, frozenset({"hidden"})),
        Reward("style", style, frozenset({"lint"}), quality=True),
        Reward("efficiency", efficiency, frozenset({"timing"}), reproducible=False, quality=True),
        Reward("format", format_penalty, frozenset(), best=0.0),
    )
}


def best_total(weights: tuple[tuple[str, float], ...]) -> float:
    """The largest weighted sum a perfect attempt can reach: sum of w * best over positive weights."""
    return sum(w * get_reward(name).best for name, w in weights if w > 0)


def get_reward(name: str) -> Reward:
    """The registered reward `name`; an unknown name raises with the valid names."""
    try:
        return REWARDS[name]
    except KeyError:
        raise KeyError(f"unknown reward {name!r}; valid rewards: {sorted(REWARDS)}") from None


def composite(attempt: Attempt, config: RewardConfig) -> tuple[float, dict[str, float]]:
    """The configured weighted, normalised, clipped reward, and each component's unweighted value."""
    components = {name: get_reward(name)(attempt, config) for name, _ in config.weights}
    total = sum(weight * components[name] for name, weight in config.weights)
    if config.normalize == "positive_weights":
        total /= best_total(config.weights)
    return min(config.clip_max, max(config.clip_min, total)), components

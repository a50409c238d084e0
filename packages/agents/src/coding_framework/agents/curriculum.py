"""A curriculum sampler: start at the easiest level, move up when the recent success rate is high.

Deterministic given its seed and the outcomes fed back: draw number i uses an rng seeded by
(seed, i) alone, so the sampler's whole state is a few counters and the recent-outcome window,
which `state_dict()` returns as JSON-able data for checkpoint/resume.

Only training problems are served: the generated source draws from the "train" split and a fixed
pool refuses any problem whose split is "heldout".
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from random import Random
from typing import Any, Protocol

from coding_framework.agents.families import LEVELS
from coding_framework.agents.generator import generate_problem
from coding_framework.agents.problems import Problem

_STATE_VERSION = 1


class ProblemSource(Protocol):
    """Where the sampler gets a problem of a level from."""

    def problem(self, level: int, rng: Random) -> Problem: ...


class GeneratedSource:
    """Fresh generated training problems: unbounded, never a held-out behaviour."""

    def problem(self, level: int, rng: Random) -> Problem:
        return generate_problem(rng.getrandbits(64), level=level, split="train")


class PoolSource:
    """A fixed list of training problems (e.g. the starter set), grouped by difficulty."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        heldout = [p.id for p in problems if p.split != "train"]
        if heldout:
            raise ValueError(f"held-out problems cannot be trained on: {heldout[:5]}")
        self.by_level: dict[int, list[Problem]] = {}
        for p in problems:
            self.by_level.setdefault(p.difficulty, []).append(p)
        if not self.by_level:
            raise ValueError("PoolSource needs at least one problem")

    @property
    def levels(self) -> tuple[int, ...]:
        return tuple(sorted(self.by_level))

    def problem(self, level: int, rng: Random) -> Problem:
        if level not in self.by_level:
            raise ValueError(f"no problems at level {level}; the pool has levels {self.levels}")
        return rng.choice(self.by_level[level])


@dataclass(frozen=True)
class CurriculumConfig:
    """When the curriculum moves up."""

    levels: tuple[int, ...] = LEVELS
    """Levels in order of difficulty."""
    threshold: float = 0.7
    """Move up when the mean recent success at the current level reaches this."""
    window: int = 64
    """Outcomes at the current level the mean is taken over."""
    min_samples: int = 32
    """Outcomes needed at a level before it can be left."""
    review_fraction: float = 0.2
    """Share of draws taken from easier levels already passed (against forgetting)."""
    seed: int = 0
    """Seeds every draw."""

    def __post_init__(self) -> None:
        if not self.levels or len(set(self.levels)) != len(self.levels):
            raise ValueError(f"CurriculumConfig.levels={self.levels!r}: give distinct levels, easiest first")
        object.__setattr__(self, "levels", tuple(self.levels))
        if not (0.0 < self.threshold <= 1.0):
            raise ValueError(f"CurriculumConfig.threshold={self.threshold}: must be in (0, 1]")
        if self.window < 1 or not (1 <= self.min_samples <= self.window):
            raise ValueError(f"CurriculumConfig: need 1 <= min_samples ({self.min_samples}) <= window "
                             f"({self.window})")
        if not (0.0 <= self.review_fraction < 1.0):
            raise ValueError(f"CurriculumConfig.review_fraction={self.review_fraction}: must be in [0, 1)")
        if type(self.seed) is not int:
            raise ValueError(f"CurriculumConfig.seed={self.seed!r}: must be an int")


class CurriculumSampler:
    """Samples training problems level by level; `update` feeds back outcomes."""

    def __init__(self, config: CurriculumConfig | None = None, source: ProblemSource | None = None):
        config = config or CurriculumConfig()
        self.config = config
        self.source = source or GeneratedSource()
        levels = getattr(self.source, "levels", None)
        if levels is not None and not set(config.levels) <= set(levels):
            raise ValueError(f"curriculum levels {config.levels} are not all in the source's levels {levels}")
        self._level_index = 0
        self._draws = 0
        self._recent: deque[float] = deque(maxlen=config.window)
        self._promotions: list[int] = []

    @property
    def level(self) -> int:
        """The current level."""
        return self.config.levels[self._level_index]

    @property
    def success_rate(self) -> float | None:
        """Mean of the recent outcomes at the current level (None before any)."""
        return sum(self._recent) / len(self._recent) if self._recent else None

    def sample(self, n: int) -> list[Problem]:
        """The next `n` problems."""
        if n < 0:
            raise ValueError(f"sample(n={n}): n must be >= 0")
        out = []
        for _ in range(n):
            rng = Random(f"cf-curriculum/{self.config.seed}/{self._draws}")
            self._draws += 1
            level = self.level
            if self._level_index > 0 and rng.random() < self.config.review_fraction:
                level = self.config.levels[rng.randrange(self._level_index)]
            out.append(self.source.problem(level, rng))
        return out

    def update(self, problems: Sequence[Problem], successes: Sequence[float]) -> bool:
        """Record outcomes in [0, 1] (pass fraction or 0/1); returns True if the level went up.

        Outcomes of problems below the current level (review draws) do not count towards moving up.
        """
        if len(problems) != len(successes):
            raise ValueError(f"{len(problems)} problems but {len(successes)} outcomes")
        promoted = False
        for problem, success in zip(problems, successes, strict=True):
            value = float(success)
            if not (math.isfinite(value) and 0.0 <= value <= 1.0):
                raise ValueError(f"outcome {success!r} for {problem.id}: must be in [0, 1]")
            if problem.difficulty != self.level:
                continue
            self._recent.append(value)
            at_top = self._level_index == len(self.config.levels) - 1
            if not at_top and len(self._recent) >= self.config.min_samples and \
                    self.success_rate >= self.config.threshold:
                self._level_index += 1
                self._recent.clear()
                self._promotions.append(self._draws)
                promoted = True
        return promoted

    def state_dict(self) -> dict[str, Any]:
        """JSON-able state; `load_state_dict` on a sampler with the same config resumes exactly."""
        return {
            "version": _STATE_VERSION,
            "config": {**asdict(self.config), "levels": list(self.config.levels)},
            "level_index": self._level_index,
            "draws": self._draws,
            "recent": list(self._recent),
            "promotions": list(self._promotions),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if not isinstance(state, dict) or state.get("version") != _STATE_VERSION:
            raise ValueError(f"not a curriculum state of version {_STATE_VERSION}")
        mine = {**asdict(self.config), "levels": list(self.config.levels)}
        if state.get("config") != mine:
            raise ValueError(f"curriculum state was saved with config {state.get('config')}, this sampler "
                             f"has {mine}: resume with the same CurriculumConfig")
        index = state["level_index"]
        if type(index) is not int or not 0 <= index < len(self.config.levels):
            raise ValueError(f"curriculum state: bad level_index {index!r}")
        self._level_index = index
        self._draws = int(state["draws"])
        self._recent = deque((float(v) for v in state["recent"]), maxlen=self.config.window)
        self._promotions = [int(d) for d in state["promotions"]]

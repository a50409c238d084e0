"""What the engine needs from an environment, as structural types: implement them without importing us.

rl-core depends on no sibling package, so the coding environment (packages/agents) satisfies these
protocols by shape alone. A task is opaque to the engine; it only passes tasks back to the environment
and repeats each one `group_size` times. An environment runs episodes with a `generate` callback the
engine provides (prompt texts → completion texts, one per prompt, same order), scores them, and returns
one trajectory per task: the transcript as text segments tagged trainable (the policy's own text) or
not (prompt, environment feedback), its scalar reward, and numbers to report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

GenerateFn = Callable[[Sequence[str]], list[str]]
"""Prompt texts → completion texts, one per prompt, in order."""


class SampledText(str):
    """A completion as the engine returns it from `generate`: a `str` that remembers its tokens.

    `token_ids` are the tokens the policy sampled, including the end-of-sequence token when it stopped
    by itself (`finished`). When an environment passes this very object back as a trainable segment's
    text, the engine trains on exactly these tokens instead of re-tokenizing the text (decode then
    encode need not round-trip). Any other text is tokenized.
    """

    token_ids: tuple[int, ...]
    finished: bool

    def __new__(cls, text: str, token_ids: Sequence[int], finished: bool) -> SampledText:
        obj = super().__new__(cls, text)
        obj.token_ids = tuple(int(t) for t in token_ids)
        obj.finished = bool(finished)
        return obj

    def __reduce__(self):
        return (SampledText, (str(self), self.token_ids, self.finished))


@runtime_checkable
class SegmentLike(Protocol):
    """A piece of a transcript (agents' `Segment` is one)."""

    @property
    def text(self) -> str: ...

    @property
    def trainable(self) -> bool:
        """True for the policy's own text: only these tokens enter the loss."""
        ...


@runtime_checkable
class Trajectory(Protocol):
    """One finished episode."""

    @property
    def segments(self) -> Sequence[SegmentLike]:
        """The transcript in order; their concatenation is what the policy saw and wrote."""
        ...

    @property
    def reward(self) -> float:
        """The episode's scalar reward, placed on its last trainable token."""
        ...

    @property
    def metrics(self) -> Mapping[str, float]:
        """Numbers averaged into the step's metrics as `env/<name>`; `passed` (1.0 when the episode's
        final answer is fully correct, else 0.0) is required by evaluation and reported as
        `pass_rate`."""
        ...


@runtime_checkable
class Environment(Protocol):
    """A source of tasks that runs and scores episodes for the engine."""

    def sample_batch(self, step: int, size: int) -> Sequence[Any]:
        """`size` training tasks for training step `step` (1-based); the engine repeats each one
        group_size times."""
        ...

    def rollout(self, tasks: Sequence[Any], generate: GenerateFn) -> Sequence[Trajectory]:
        """One training episode per task, in order, scored with the training reward. No state change:
        a greedy baseline rollout (remax) goes through here as well."""
        ...

    def record(self, tasks: Sequence[Any], trajectories: Sequence[Trajectory]) -> None:
        """Feedback after a training step's rollout (e.g. a curriculum's success statistics)."""
        ...

    def evaluate(self, tasks: Sequence[Any], generate: GenerateFn) -> Sequence[Trajectory]:
        """One evaluation episode per task; each trajectory's metrics carry `passed`."""
        ...

    def heldout_tasks(self) -> Sequence[Any]:
        """The tasks held out from training, for evaluation."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """JSON-able state saved in every checkpoint."""
        ...

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` returned."""
        ...


def check_environment(env: object) -> None:
    """Raise TypeError naming the missing methods unless `env` has the shape of an Environment."""
    missing = [
        name
        for name in (
            "sample_batch",
            "rollout",
            "record",
            "evaluate",
            "heldout_tasks",
            "state_dict",
            "load_state_dict",
        )
        if not callable(getattr(env, name, None))
    ]
    if missing:
        raise TypeError(f"{type(env).__name__} is not an engine Environment: it lacks {', '.join(missing)}")


def task_id(task: Any, index: int) -> str:
    """A task's `id` attribute when it has one, else its index."""
    value = getattr(task, "id", None)
    return str(value) if value is not None else str(index)

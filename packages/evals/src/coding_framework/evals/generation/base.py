"""What every generation backend shares: the sampling settings, a request, and the backend protocol."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from coding_framework.evals.prompts import PROMPT_STYLES, Prompt, PromptStyle


@dataclass(frozen=True)
class GenerationConfig:
    """Sampling settings for one generation run."""

    n_samples: int = 1
    """Samples per problem (pass@k needs at least k)."""
    temperature: float = 0.0
    """0: greedy decoding; > 0: sampling at this temperature."""
    top_p: float = 0.95
    """Nucleus sampling mass (used only when sampling)."""
    max_new_tokens: int = 512
    """Most tokens generated per sample."""
    seed: int = 0
    """Base seed; sample i of a problem uses seed + i, so reruns draw the same samples."""
    prompt_style: PromptStyle | None = None
    """"completion" or "instruct"; None: the backend's default (chat models: instruct)."""

    def __post_init__(self) -> None:
        if self.n_samples < 1:
            raise ValueError(f"n_samples must be at least 1, got {self.n_samples}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0 (0 is greedy), got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be at least 1, got {self.max_new_tokens}")
        if self.prompt_style is not None and self.prompt_style not in PROMPT_STYLES:
            raise ValueError(f"prompt_style must be one of {', '.join(PROMPT_STYLES)} or None")


@dataclass(frozen=True)
class GenerationRequest:
    """One sample to generate: sample `index` of task `task_id`."""

    task_id: str
    index: int
    prompt: Prompt


class Backend(Protocol):
    """A model that answers prompts."""

    name: str
    """Recorded with every sample (the model's name or directory)."""
    default_style: PromptStyle
    """The prompt style used when the configuration does not set one."""

    def generate(
        self, requests: Sequence[GenerationRequest], config: GenerationConfig
    ) -> Iterator[tuple[GenerationRequest, str]]:
        """Yield `(request, raw generation)` as each finishes, in any order.

        Raises GenerationError when a request cannot be answered; samples yielded before that stay
        valid (the driver has already written them).
        """
        ...

"""What a problem template is: a family draws a Task (constants, names, reference, oracle) from an rng.

The reference body (source text) and the oracle (a Python callable that computes expected outputs) are
written independently on purpose: the property test that runs every reference against its tests in the
sandbox then checks two implementations against each other, not one against itself.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass, field
from random import Random
from typing import Any

INT_NAMES = ("x", "n", "num", "value")
STR_NAMES = ("s", "text", "word")
LIST_NAMES = ("xs", "nums", "values", "items")
SENTENCE_NAMES = ("sentence", "text", "line")

Args = tuple[Any, ...]


@dataclass(frozen=True)
class Task:
    """One instantiated template, before test inputs are drawn."""

    family: str
    level: int
    params: dict[str, Any]
    """The constants that fix the behaviour; they decide the train/held-out split."""
    name: str
    arg_names: tuple[str, ...]
    summary: str
    """The docstring's first paragraph: what to return, with every constant spelled out."""
    body: str
    """Reference function body, unindented; lines separated by newlines."""
    oracle: Callable[..., Any]
    """Computes the expected return value from the arguments."""
    draw_args: Callable[[Random], Args]
    """Draws one random argument tuple."""
    edge_args: tuple[Args, ...] = field(default=())
    """Argument tuples always included in the hidden tests (empty list, boundaries)."""


@dataclass(frozen=True)
class Family:
    """A problem template at one difficulty level."""

    name: str
    level: int
    build: Callable[[Random], Task]
    description: str


def word(rng: Random, low: int = 2, high: int = 7, alphabet: str = string.ascii_lowercase) -> str:
    """A random lowercase string of length in [low, high]."""
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(low, high)))


def int_list(rng: Random, low: int = -9, high: int = 20, min_len: int = 0, max_len: int = 7) -> list[int]:
    return [rng.randint(low, high) for _ in range(rng.randint(min_len, max_len))]


def sentence(rng: Random, min_words: int = 1, max_words: int = 6) -> str:
    return " ".join(word(rng, 1, 8) for _ in range(rng.randint(min_words, max_words)))

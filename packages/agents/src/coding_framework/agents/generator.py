"""A seeded generator of an unbounded stream of small function-writing problems.

Each problem comes from a family (template) at a difficulty level with randomised constants, function
and argument names, so a model has to read the statement: within a family the constant changes the
answer. The statement is a function stub whose docstring states the task and shows the visible tests
as `>>>` examples; the completion the model owes is the function body.

Splits: a task's split is a hash of its family and constants (its behaviour, not its names or
examples), so a held-out task's behaviour never occurs in any training problem, however many are
generated. Behaviours outside the held-out split are halved again into "sft" (for supervised warm-up
corpora, such as the one the project's small model learns from) and "train" (RL problems), so RL trains
on behaviours a warmed-up model has never imitated, as it will meet held-out ones: otherwise RL rewards
recall of memorised (family, constant) pairs, which does not transfer to held-out behaviours.
`generate_problem(..., split=S)` rejects tasks of the other splits.
"""

from __future__ import annotations

import hashlib
import json
import textwrap
from collections.abc import Iterator, Mapping
from random import Random
from typing import Any

from coding_framework.agents.families import FAMILIES, LEVELS, Task, families_at
from coding_framework.agents.problems import SPLITS, Problem, Split, TestCase

HELDOUT_EVERY = 5
"""One task behaviour in HELDOUT_EVERY (by hash) is held out."""
SFT_EVERY = 2
"""Of the behaviours not held out, one in SFT_EVERY (by an independent part of the hash) is "sft"."""
N_VISIBLE = 2
N_HIDDEN = 6
_MAX_DRAWS = 400


def split_of(family: str, params: Mapping[str, Any]) -> Split:
    """The split a task behaviour belongs to: a pure function of (family, constants)."""
    key = json.dumps([family, dict(params)], sort_keys=True)
    digest = hashlib.sha256(f"cf-agents-split-v1:{key}".encode()).hexdigest()
    if int(digest[:8], 16) % HELDOUT_EVERY == 0:
        return "heldout"
    return "sft" if int(digest[8:16], 16) % SFT_EVERY == 0 else "train"


def behaviour(problem: Problem) -> tuple[str, str]:
    """A generated problem's behaviour, what its split is a function of: its family and constants."""
    return problem.family, repr(sorted(problem.params.items()))


def problem_split(problem: Problem) -> Split:
    """Recompute a generated problem's split from its family and constants."""
    return split_of(problem.family, problem.params)


def render_stub(task: Task, examples: list[TestCase]) -> str:
    """The prompt: `def name(args):` and a docstring with the task and `>>>` examples, ending after
    the docstring's closing quotes and a newline, where the body starts."""
    summary = textwrap.fill(task.summary, width=96, initial_indent="    ", subsequent_indent="    ")
    lines = [f"def {task.name}({', '.join(task.arg_names)}):", '    """' + summary[4:], ""]
    for case in examples:
        lines.append(f"    >>> {case.call_text(task.name)}")
        lines.append(f"    {case.expected!r}")
    lines.append('    """')
    return "\n".join(lines) + "\n"


def _key(args: tuple[Any, ...]) -> str:
    return json.dumps(args)


def build_problem(task: Task, rng: Random, split: Split, n_visible: int = N_VISIBLE,
                  n_hidden: int = N_HIDDEN) -> Problem:
    """Draw distinct test inputs for `task`, compute expected outputs with its oracle, and assemble
    the problem. Visible inputs are never among the hidden ones, so echoing the examples scores 0."""
    pool: list[tuple[Any, ...]] = []
    seen: set[str] = set()
    draws = 0
    while len(pool) < 4 * (n_visible + n_hidden) and draws < _MAX_DRAWS:
        draws += 1
        args = task.draw_args(rng)
        if _key(args) not in seen:
            seen.add(_key(args))
            pool.append(args)
    edge_keys = {_key(a) for a in task.edge_args}
    randoms = [a for a in pool if _key(a) not in edge_keys]
    # Visible examples with different outputs say more about the task than two alike ones.
    visible: list[tuple[Any, ...]] = []
    outputs: set[str] = set()
    for args in randoms:
        out = _key((task.oracle(*args),))
        if out not in outputs and len(visible) < n_visible:
            visible.append(args)
            outputs.add(out)
    visible_keys = {_key(a) for a in visible}
    for args in randoms:
        if len(visible) < n_visible and _key(args) not in visible_keys:
            visible.append(args)
            visible_keys.add(_key(args))
    hidden = list(task.edge_args) + [a for a in randoms if _key(a) not in visible_keys]
    hidden = hidden[: max(n_hidden, len(task.edge_args))]
    if len(visible) < n_visible or len(hidden) < n_hidden:
        raise RuntimeError(f"{task.family}: input space too small for {n_visible}+{n_hidden} distinct cases")
    visible_tests = [TestCase(a, task.oracle(*a)) for a in visible]
    hidden_tests = [TestCase(a, task.oracle(*a)) for a in hidden]
    statement = render_stub(task, visible_tests)
    body = textwrap.indent(task.body, "    ")
    digest = hashlib.sha256(statement.encode()).hexdigest()[:10]
    return Problem(
        id=f"{task.family}-{digest}",
        statement=statement,
        entry_point=task.name,
        visible_tests=tuple(visible_tests),
        hidden_tests=tuple(hidden_tests),
        reference=statement + body + "\n",
        difficulty=task.level,
        family=task.family,
        split=split,
        params=dict(task.params),
    )


def generate_problem(seed: int | str, *, level: int | None = None, family: str | None = None,
                     split: Split = "train") -> Problem:
    """One problem, a pure function of its arguments.

    Args:
      seed: any int or str; different seeds give (almost always) different problems.
      level: restrict to one difficulty level (see `LEVELS`); None draws from all.
      family: restrict to one family (see `FAMILIES`); overrides `level`.
      split: "sft", "train" or "heldout"; tasks of the other splits are rejected and redrawn.
    """
    if split not in SPLITS:
        raise ValueError(f"split {split!r}: must be one of {SPLITS}")
    if family is not None:
        if family not in FAMILIES:
            raise ValueError(f"unknown problem family {family!r}; families are {sorted(FAMILIES)}")
        choices = (FAMILIES[family],)
    elif level is not None:
        choices = families_at(level)
    else:
        choices = tuple(FAMILIES.values())
    # The split is part of the rng seed too, so the streams never even share a random sequence.
    rng = Random(f"cf-agents/{split}/{level}/{family}/{seed}")
    for _ in range(1000):
        task = rng.choice(choices).build(rng)
        if split_of(task.family, task.params) == split:
            return build_problem(task, rng, split)
    raise RuntimeError(f"no {split} task found for level={level} family={family} after 1000 draws")


def iter_problems(seed: int | str, *, level: int | None = None, split: Split = "train") -> Iterator[Problem]:
    """The unbounded stream `generate_problem(f"{seed}:{i}", ...)` for i = 0, 1, 2, ..."""
    i = 0
    while True:
        yield generate_problem(f"{seed}:{i}", level=level, split=split)
        i += 1


__all__ = [
    "HELDOUT_EVERY",
    "LEVELS",
    "SFT_EVERY",
    "behaviour",
    "build_problem",
    "generate_problem",
    "iter_problems",
    "problem_split",
    "render_stub",
    "split_of",
]

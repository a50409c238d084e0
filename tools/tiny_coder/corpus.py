"""The supervised corpus: prompt → completion pairs from the agents generator, "sft" split only.

A pair is exactly what the policy sees and owes at RL time: the prompt is `problem.statement` (a
function stub ending after its docstring) and the completion is the reference's body, the text that
continues the stub, which `extract_code` reads in "body" mode. Only "sft"-split behaviours enter: RL
trains on "train"-split behaviours the model has never imitated, and held-out ones are never trained on.
Problems are generated with `split="sft"`, and `check_sft_only` re-derives each problem's split from its
family and constants and compares its behaviour and statement with the committed held-out set.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from coding_framework.agents import (
    Problem,
    behaviour,
    iter_problems,
    load_heldout_set,
    load_validation_set,
    problem_split,
)


@dataclass(frozen=True)
class Pair:
    """One training example."""

    prompt: str
    """The problem statement: a stub `def f(args):` + docstring, ending with a newline."""
    completion: str
    """The function body that continues the stub (indented lines, ending with a newline)."""
    family: str
    level: int


def completion_of(problem: Problem) -> str:
    """The body of `problem.reference` that continues its statement."""
    if not problem.reference.startswith(problem.statement):
        raise ValueError(f"{problem.id}: reference does not start with the statement, so it has no body "
                         "to learn; the corpus only takes generated (stub + body) problems")
    body = problem.reference[len(problem.statement):].rstrip("\n") + "\n"
    if not body.strip() or not body[0].isspace():
        raise ValueError(f"{problem.id}: reference body {body!r} is not an indented function body")
    return body


def check_sft_only(problems: Iterable[Problem], heldout: Sequence[Problem] | None = None) -> None:
    """Raise ValueError if any problem is not "sft" by field or by re-derived split, or is held-out by
    behaviour (family + constants) or by statement; `heldout` defaults to agents' held-out and
    validation sets."""
    heldout = load_heldout_set() + load_validation_set() if heldout is None else heldout
    held_behaviours = {behaviour(p) for p in heldout}
    held_statements = {p.statement for p in heldout}
    for problem in problems:
        reasons = []
        if problem.split != "sft":
            reasons.append(f"split field {problem.split!r}")
        if problem_split(problem) != "sft":
            reasons.append(f"its family+constants hash to the {problem_split(problem)!r} split")
        if behaviour(problem) in held_behaviours:
            reasons.append("its behaviour occurs in the held-out set")
        if problem.statement in held_statements:
            reasons.append("its statement occurs in the held-out set")
        if reasons:
            raise ValueError(f"problem {problem.id} cannot be trained on: {'; '.join(reasons)}")


def sft_problems(n_problems: int, seed: int) -> list[Problem]:
    """`n_problems` distinct sft-split problems from `iter_problems(f"tiny-coder-{seed}", split="sft")`.

    Problems whose statement repeats an earlier one are skipped (and more are drawn), so the corpus
    has `n_problems` distinct prompts. Deterministic in (n_problems, seed). Checked by
    `check_sft_only`.
    """
    if n_problems < 1:
        raise ValueError(f"n_problems={n_problems}: need at least 1 problem")
    seen: set[str] = set()
    problems: list[Problem] = []
    stream = iter_problems(f"tiny-coder-{seed}", split="sft")
    for problem in itertools.islice(stream, 20 * n_problems):
        if problem.statement in seen:
            continue
        seen.add(problem.statement)
        problems.append(problem)
        if len(problems) == n_problems:
            break
    else:
        raise RuntimeError(f"only {len(problems)} distinct statements in {20 * n_problems} draws")
    check_sft_only(problems)
    return problems


def build_corpus(n_problems: int, seed: int) -> list[Pair]:
    """The training pairs of `sft_problems(n_problems, seed)`, in stream order."""
    problems = sft_problems(n_problems, seed)
    return [Pair(p.statement, completion_of(p), p.family, p.difficulty) for p in problems]


def corpus_summary(pairs: Sequence[Pair]) -> dict[str, object]:
    """Counts for the model card: pairs, per level, per family, characters."""
    return {
        "pairs": len(pairs),
        "levels": dict(sorted(Counter(p.level for p in pairs).items())),
        "families": dict(sorted(Counter(p.family for p in pairs).items())),
        "prompt_chars": sum(len(p.prompt) for p in pairs),
        "completion_chars": sum(len(p.completion) for p in pairs),
    }

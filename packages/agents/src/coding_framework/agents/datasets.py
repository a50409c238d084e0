"""The fixed problem sets shipped with the package: a starter (training) set and a held-out set.

Both are pure functions of this code (`build_starter_set`, `build_heldout_set`) and are committed as
JSONL under `data/` by `python -m coding_framework.agents.make_data`; a test rebuilds them and checks
the files are byte-identical. The held-out set is for evaluation only: its problems carry
split="heldout", their behaviours (family + constants) never occur in the training split however many
problems are generated, and no statement or id occurs in both sets (`check_disjoint`).
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from coding_framework.agents.families import LEVELS, families_at
from coding_framework.agents.generator import generate_problem, problem_split
from coding_framework.agents.problems import Problem, Split, parse_problems

STARTER_FILE = "starter.jsonl"
HELDOUT_FILE = "heldout.jsonl"
PER_LEVEL = 30
"""Problems per level in each set: 90 starter and 90 held-out problems."""


def build_set(split: Split, per_level: int = PER_LEVEL, seed: str | None = None) -> list[Problem]:
    """`per_level` problems at each level of `split`, families taken in turn, no repeated statement."""
    seed = seed if seed is not None else f"cf-agents-{split}-set-v1"
    problems: list[Problem] = []
    statements: set[str] = set()
    for level in LEVELS:
        families = families_at(level)
        for j in range(per_level):
            family = families[j % len(families)]
            for attempt in range(100):
                problem = generate_problem(f"{seed}:{j}:{attempt}", family=family.name, split=split)
                if problem.statement not in statements:
                    break
            else:
                raise RuntimeError(f"{family.name}: no new {split} statement in 100 attempts")
            statements.add(problem.statement)
            problems.append(problem)
    return problems


def build_starter_set() -> list[Problem]:
    """The fixed training starter set (split "train")."""
    return build_set("train")


def build_heldout_set() -> list[Problem]:
    """The fixed held-out evaluation set (split "heldout")."""
    return build_set("heldout")


def check_disjoint(train: Sequence[Problem], heldout: Sequence[Problem]) -> None:
    """Raise ValueError if the sets share an id or a statement, or a problem is in the wrong split."""
    wrong = [p.id for p in train if p.split != "train"] + [p.id for p in heldout if p.split != "heldout"]
    if wrong:
        raise ValueError(f"problems with the wrong split field: {wrong[:5]}")
    shared_ids = {p.id for p in train} & {p.id for p in heldout}
    shared_statements = {p.statement for p in train} & {p.statement for p in heldout}
    if shared_ids or shared_statements:
        raise ValueError(f"train and held-out share {len(shared_ids)} ids and {len(shared_statements)} "
                         f"statements, e.g. {sorted(shared_ids)[:3]}")
    generated = [p for p in (*train, *heldout) if p.family and p.params]
    misplaced = [p.id for p in generated if problem_split(p) != p.split]
    if misplaced:
        raise ValueError(f"generated problems whose behaviour belongs to the other split: {misplaced[:5]}")


def _read_packaged(name: str) -> list[Problem]:
    resource = resources.files("coding_framework.agents").joinpath("data", name)
    if not resource.is_file():
        raise FileNotFoundError(f"packaged problem file data/{name} is missing; regenerate it with "
                                "`python -m coding_framework.agents.make_data`")
    return parse_problems(resource.read_text(encoding="utf-8"), f"coding_framework/agents/data/{name}")


def load_starter_set() -> list[Problem]:
    """The committed starter set (90 training problems, 30 per level)."""
    return _read_packaged(STARTER_FILE)


def load_heldout_set() -> list[Problem]:
    """The committed held-out set (90 problems, 30 per level). Evaluation only."""
    return _read_packaged(HELDOUT_FILE)


def data_dir() -> Path:
    """Where the committed JSONL files live in a source checkout."""
    return Path(__file__).resolve().parent / "data"

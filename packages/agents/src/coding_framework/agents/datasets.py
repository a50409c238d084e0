"""The fixed problem sets shipped with the package: a starter (training) set, a validation set for tuning
and a held-out set for reporting.

All are pure functions of this code (`build_starter_set`, `build_validation_set`, `build_heldout_set`)
and are committed as JSONL under `data/` by `python -m coding_framework.agents.make_data`; a test
rebuilds them and checks the files are byte-identical. Validation and held-out problems carry
split="heldout": their behaviours (family + constants) never occur in the training split however many
problems are generated, and no statement or id occurs in the starter set (`check_disjoint`).

Why two evaluation sets: settings chosen by comparing runs on one set fit that set's problems as well as
the task. The default training settings were tuned on the 90 problems that are now the validation set
(agents <= 0.4 called them the held-out set): from the 1000-step tiny-coder they gained +14.0 points
there over 5 seeds, +7.7 on the 300-problem held-out set built the same way (benchmarks/RESULTS.md,
"training"). Tune on the validation
set; report on the held-out set, which shares no statement with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from coding_framework.agents.families import LEVELS, families_at
from coding_framework.agents.generator import behaviour, generate_problem, problem_split
from coding_framework.agents.problems import Problem, Split, parse_problems

STARTER_FILE = "starter.jsonl"
VALIDATION_FILE = "validation.jsonl"
HELDOUT_FILE = "heldout.jsonl"
PER_LEVEL = 30
"""Problems per level in the starter and validation sets: 90 each."""
HELDOUT_PER_LEVEL = 100
"""Problems per level in the held-out set: 300, so one greedy pass@1 has a standard error of about
2.9 points (5.2 with 90 problems)."""


def build_set(split: Split, per_level: int = PER_LEVEL, seed: str | None = None,
              exclude: Sequence[Problem] = ()) -> list[Problem]:
    """`per_level` problems at each level of `split`, families taken in turn, no repeated statement.

    `exclude`: problems of another set; none of their statements is taken, nor their behaviours where the
    family has another one left within 100 draws (families whose constants are letters or separators
    have only a handful of held-out behaviours).
    """
    seed = seed if seed is not None else f"cf-agents-{split}-set-v1"
    taken_behaviours = {behaviour(p) for p in exclude}
    problems: list[Problem] = []
    statements: set[str] = {p.statement for p in exclude}
    for level in LEVELS:
        families = families_at(level)
        for j in range(per_level):
            family = families[j % len(families)]
            fallback = None
            for attempt in range(100):
                problem = generate_problem(f"{seed}:{j}:{attempt}", family=family.name, split=split)
                if problem.statement in statements:
                    continue
                if behaviour(problem) not in taken_behaviours:
                    break
                fallback = fallback or problem
            else:
                if fallback is None:
                    raise RuntimeError(f"{family.name}: no new {split} statement in 100 attempts")
                problem = fallback
            statements.add(problem.statement)
            problems.append(problem)
    return problems


def build_starter_set() -> list[Problem]:
    """The fixed training starter set (split "train")."""
    return build_set("train")


def build_validation_set() -> list[Problem]:
    """The fixed validation set (split "heldout"): for choosing settings. It is the held-out set of agents
    <= 0.4 (same seed), on which the default training settings were tuned."""
    return build_set("heldout")


def build_heldout_set() -> list[Problem]:
    """The fixed held-out set for reported numbers (split "heldout"): 100 problems per level, no statement
    of the validation set and, where the family has others, none of its behaviours."""
    return build_set("heldout", HELDOUT_PER_LEVEL, seed="cf-agents-heldout-set-v2",
                     exclude=build_validation_set())


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


def check_separate(validation: Sequence[Problem], heldout: Sequence[Problem]) -> None:
    """Raise ValueError if the validation and held-out sets share an id or a statement."""
    for name, key in (("ids", lambda p: p.id), ("statements", lambda p: p.statement)):
        shared = {key(p) for p in validation} & {key(p) for p in heldout}
        if shared:
            raise ValueError(f"validation and held-out sets share {len(shared)} {name}, "
                             f"e.g. {sorted(shared)[:2]}")


def _read_packaged(name: str) -> list[Problem]:
    resource = resources.files("coding_framework.agents").joinpath("data", name)
    if not resource.is_file():
        raise FileNotFoundError(f"packaged problem file data/{name} is missing; regenerate it with "
                                "`python -m coding_framework.agents.make_data`")
    return parse_problems(resource.read_text(encoding="utf-8"), f"coding_framework/agents/data/{name}")


def load_starter_set() -> list[Problem]:
    """The committed starter set (90 training problems, 30 per level)."""
    return _read_packaged(STARTER_FILE)


def load_validation_set() -> list[Problem]:
    """The committed validation set (90 problems, 30 per level): compare settings on it, never train."""
    return _read_packaged(VALIDATION_FILE)


def load_heldout_set() -> list[Problem]:
    """The committed held-out set (300 problems, 100 per level): report on it, never train or tune."""
    return _read_packaged(HELDOUT_FILE)


EVALUATION_SETS = {"validation": load_validation_set, "heldout": load_heldout_set}
"""The evaluation sets by name (what `heldout.set` in a train job and benchmarks' `--sets` take)."""


def load_evaluation_set(name: str) -> list[Problem]:
    """`load_heldout_set()` for "heldout", `load_validation_set()` for "validation"."""
    if name not in EVALUATION_SETS:
        raise ValueError(f"unknown evaluation set {name!r}; choose from {', '.join(EVALUATION_SETS)}")
    return EVALUATION_SETS[name]()


def data_dir() -> Path:
    """Where the committed JSONL files live in a source checkout."""
    return Path(__file__).resolve().parent / "data"

"""Generator properties: determinism, variety, levels, splits, and references agreeing with the tests.

References are checked in-process here (fast, over many seeds); test_generator_sandbox.py checks
them again through the real sandbox.
"""

from __future__ import annotations

import ast
import re
from itertools import islice
from random import Random

import pytest

from coding_framework.agents.families import FAMILIES, LEVELS, families_at
from coding_framework.agents.generator import (
    HELDOUT_EVERY,
    SFT_EVERY,
    generate_problem,
    iter_problems,
    problem_split,
    split_of,
)
from coding_framework.agents.lint import lint_programs
from coding_framework.agents.problems import SPLITS

SEEDS = range(60)


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if type(a) is list:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def test_at_least_fifteen_families_over_three_levels():
    assert len(FAMILIES) >= 15
    assert LEVELS == (1, 2, 3)
    assert all(len(families_at(level)) >= 5 for level in LEVELS)


def test_same_seed_same_problem_and_different_seeds_differ():
    assert generate_problem(7, level=2) == generate_problem(7, level=2)
    assert generate_problem("abc") == generate_problem("abc")
    statements = {generate_problem(s).statement for s in range(200)}
    assert len(statements) >= 195  # collisions possible in principle, rare in practice


def test_iter_problems_is_the_seeded_stream():
    first = list(islice(iter_problems("run1", level=1), 5))
    assert first == [generate_problem(f"run1:{i}", level=1) for i in range(5)]
    assert all(p.difficulty == 1 and p.split == "train" for p in first)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_reaches_every_split_and_records_its_split(family):
    for split in SPLITS:
        problems = [generate_problem(s, family=family, split=split) for s in range(5)]
        assert all(p.split == split == problem_split(p) for p in problems)
        assert all(p.family == family and p.difficulty == FAMILIES[family].level for p in problems)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_reference_passes_every_test_in_process(family):
    for seed in range(25):
        for split in SPLITS:
            p = generate_problem(seed, family=family, split=split)
            namespace: dict = {}
            exec(p.reference, namespace)
            fn = namespace[p.entry_point]
            for case in p.visible_tests + p.hidden_tests:
                assert _same(fn(*case.args), case.expected), (p.id, case)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_problem_shape(family):
    for seed in range(10):
        p = generate_problem(seed, family=family)
        assert p.statement.startswith(f"def {p.entry_point}(") and p.statement.endswith('    """\n')
        assert p.reference.startswith(p.statement)
        ast.parse(p.reference)
        assert len(p.visible_tests) == 2 and len(p.hidden_tests) >= 6
        visible = {repr(c.args) for c in p.visible_tests}
        assert not visible & {repr(c.args) for c in p.hidden_tests}, "echoing examples must not score"
        for case in p.visible_tests:  # the examples are in the docstring, exactly
            assert f">>> {case.call_text(p.entry_point)}\n    {case.expected!r}\n" in p.statement
        assert all(len(line) <= 100 for line in p.statement.splitlines())


def _argname(p) -> str:
    return re.match(r"def \w+\((\w+)\)", p.statement).group(1)


def test_constants_are_in_the_statement_and_change_the_answer():
    """Two add_const problems with different constants need different bodies: read the statement."""
    by_k = {}
    for seed in range(40):
        p = generate_problem(seed, family="add_const")
        by_k.setdefault(p.params["k"], p)
    assert len(by_k) >= 5
    for k, p in by_k.items():
        assert re.search(rf"\bplus {k}\.", p.statement)
    a, b = list(by_k.values())[:2]
    # a's reference body, renamed to b's argument, answers a's task and fails every case of b's.
    body_a = re.sub(rf"\b{_argname(a)}\b", _argname(b), a.reference[len(a.statement):])
    namespace: dict = {}
    exec(b.statement + body_a, namespace)
    assert not any(namespace[b.entry_point](*c.args) == c.expected for c in b.hidden_tests)


def test_levels_differ_in_kind():
    """Level 1 takes one scalar; level 2 loops over a list or string; level 3 composes two steps."""
    rng = Random(0)
    for _ in range(40):
        p1 = generate_problem(rng.random(), level=1)
        assert len(p1.hidden_tests[0].args) == 1
        assert p1.reference.count("\n") - p1.statement.count("\n") == 1  # a one-line body
        p2 = generate_problem(rng.random(), level=2)
        assert any(type(a) in (list, str) for a in p2.hidden_tests[0].args)
        p3 = generate_problem(rng.random(), level=3)
        assert any(type(a) in (list, str) for a in p3.hidden_tests[0].args)
    lengths = {level: sum(len(generate_problem(s, level=level).statement) for s in range(50))
               for level in LEVELS}
    assert lengths[1] < lengths[2] < lengths[3]


NUMERIC_CONSTANT_FAMILIES = (
    "add_const", "sub_const", "compare_const", "count_compare", "sum_compare", "filter_compare",
    "find_index", "extreme_or_default", "map_count", "sum_squares_if", "clamp_list", "running_total",
)


@pytest.mark.parametrize("family", NUMERIC_CONSTANT_FAMILIES)
def test_behaviours_with_a_numeric_constant_rarely_repeat(family):
    """Wide constant ranges: among 200 train problems of a family most behaviours are new, so neither
    a warm-up corpus nor RL can memorise (family, constant) pairs; the constant must be read."""
    params = [generate_problem(f"repeat:{i}", family=family, split="train").params for i in range(200)]
    distinct = {tuple(sorted(p.items())) for p in params}
    assert len(distinct) >= 80, (family, len(distinct))


def test_split_is_a_hash_of_behaviour_with_the_expected_share():
    assert split_of("add_const", {"k": 3}) == split_of("add_const", {"k": 3})
    keys = [("compare_const", {"k": k, "op": op}) for k in range(-10, 41) for op in ("<", ">", "<=", ">=")]
    share = sum(split_of(f, p) == "heldout" for f, p in keys) / len(keys)
    assert abs(share - 1 / HELDOUT_EVERY) < 0.08


def test_the_three_splits_never_share_a_behaviour():
    def behaviours(split, n):
        return {(p.family, repr(sorted(p.params.items())))
                for p in (generate_problem(s, split=split) for s in range(n))}

    heldout, sft, train = behaviours("heldout", 300), behaviours("sft", 600), behaviours("train", 600)
    assert heldout and sft and train
    assert not heldout & train and not heldout & sft and not sft & train


def test_sft_and_train_halve_the_behaviours_not_held_out():
    keys = [("compare_const", {"k": k, "op": op}) for k in range(-10, 41) for op in ("<", ">", "<=", ">=")]
    splits = [split_of(f, p) for f, p in keys]
    kept = len(keys) - splits.count("heldout")
    assert abs(splits.count("sft") / kept - 1 / SFT_EVERY) < 0.08
    assert splits.count("sft") + splits.count("train") == kept


def test_references_are_lint_clean():
    problems = [generate_problem(s, family=f) for f in sorted(FAMILIES) for s in range(4)]
    findings = lint_programs([p.reference for p in problems])
    dirty = [(p.family, f) for p, f in zip(problems, findings, strict=True) if f]
    assert not dirty


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="unknown problem family 'nope'"):
        generate_problem(0, family="nope")
    with pytest.raises(ValueError, match=r"levels are \(1, 2, 3\)"):
        generate_problem(0, level=9)
    with pytest.raises(ValueError, match="split"):
        generate_problem(0, split="test")

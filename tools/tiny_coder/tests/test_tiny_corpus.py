"""The corpus is sft-split only, and its completions are what the scorer reads as a function body."""

from __future__ import annotations

import dataclasses

import pytest

from coding_framework.agents import (
    behaviour,
    extract_code,
    generate_problem,
    load_heldout_set,
    load_validation_set,
    problem_split,
)
from tools.tiny_coder.corpus import (
    build_corpus,
    check_sft_only,
    completion_of,
    corpus_summary,
    sft_problems,
)

HELDOUT = load_heldout_set()
EVALUATION = HELDOUT + load_validation_set()


@pytest.fixture(scope="module")
def problems():
    return sft_problems(600, seed=0)


def test_no_corpus_problem_is_rl_train_or_heldout_by_any_measure(problems):
    held_behaviours = {behaviour(p) for p in EVALUATION}
    held_statements = {p.statement for p in EVALUATION}
    assert all(p.split == "sft" and problem_split(p) == "sft" for p in problems)
    assert not {behaviour(p) for p in problems} & held_behaviours
    assert not {p.statement for p in problems} & held_statements


def test_corpus_draws_from_many_families_and_every_level(problems):
    summary = corpus_summary(build_corpus(600, seed=0))
    assert set(summary["levels"]) == {1, 2, 3}
    assert len(summary["families"]) >= 20
    assert summary["pairs"] == 600 == len({p.statement for p in problems})


def test_check_sft_only_rejects_heldout_problems_even_when_relabelled():
    with pytest.raises(ValueError, match="split field"):
        check_sft_only(HELDOUT[:1], HELDOUT)
    relabelled = dataclasses.replace(HELDOUT[0], split="sft")
    with pytest.raises(ValueError, match="hash to the 'heldout' split"):
        check_sft_only([relabelled], HELDOUT)
    # A held-out behaviour under fresh names and examples is still refused.
    fresh = generate_problem("another-seed", family=HELDOUT[0].family, split="heldout")
    fresh = dataclasses.replace(fresh, split="sft", params=HELDOUT[0].params)
    with pytest.raises(ValueError, match="behaviour occurs in the held-out set"):
        check_sft_only([fresh], HELDOUT)


def test_check_sft_only_rejects_rl_train_problems():
    rl = generate_problem("rl-seed", family=HELDOUT[0].family, split="train")
    with pytest.raises(ValueError, match="split field 'train'"):
        check_sft_only([rl], HELDOUT)
    with pytest.raises(ValueError, match="hash to the 'train' split"):
        check_sft_only([dataclasses.replace(rl, split="sft")], HELDOUT)


def test_check_sft_only_accepts_sft_problems(problems):
    check_sft_only(problems[:50], HELDOUT)


def test_completion_is_a_body_that_rebuilds_the_reference(problems):
    for problem in problems:
        completion = completion_of(problem)
        extraction = extract_code(completion, problem.statement, problem.entry_point)
        assert extraction.source == "body" and extraction.ok
        assert extraction.program.rstrip("\n") == problem.reference.rstrip("\n")
        assert completion.endswith("\n") and not completion.endswith("\n\n")


def test_corpus_is_deterministic_and_seed_dependent():
    assert build_corpus(40, seed=3) == build_corpus(40, seed=3)
    assert build_corpus(40, seed=3) != build_corpus(40, seed=4)


def test_corpus_rejects_nonsense_sizes():
    with pytest.raises(ValueError, match="at least 1"):
        build_corpus(0, seed=0)

"""The committed starter, validation and held-out sets: sizes, disjointness, byte-identical regeneration."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from coding_framework.agents import make_data
from coding_framework.agents.datasets import (
    HELDOUT_FILE,
    STARTER_FILE,
    VALIDATION_FILE,
    behaviour,
    build_heldout_set,
    build_starter_set,
    build_validation_set,
    check_disjoint,
    check_separate,
    data_dir,
    load_heldout_set,
    load_starter_set,
    load_validation_set,
)
from coding_framework.agents.families import FAMILIES
from coding_framework.agents.generator import problem_split


def test_committed_files_equal_a_fresh_build(tmp_path):
    assert make_data.main(["--out", str(tmp_path)]) == 0
    for name in (STARTER_FILE, VALIDATION_FILE, HELDOUT_FILE):
        assert (tmp_path / name).read_bytes() == (data_dir() / name).read_bytes(), f"{name} is stale"
    assert make_data.main(["--check"]) == 0


def test_check_mode_detects_a_stale_file(tmp_path, capsys):
    make_data.main(["--out", str(tmp_path)])
    (tmp_path / HELDOUT_FILE).write_text((tmp_path / HELDOUT_FILE).read_text()[:-2] + "\n")
    assert make_data.main(["--out", str(tmp_path), "--check"]) == 1
    assert HELDOUT_FILE in capsys.readouterr().err


def test_loaded_sets_equal_the_builders():
    assert load_starter_set() == build_starter_set()
    assert load_validation_set() == build_validation_set()
    assert load_heldout_set() == build_heldout_set()


def test_sizes_levels_and_family_coverage():
    starter, validation, heldout = load_starter_set(), load_validation_set(), load_heldout_set()
    assert 50 <= len(starter) <= 100
    for problems, per_level in ((starter, 30), (validation, 30), (heldout, 100)):
        assert Counter(p.difficulty for p in problems) == {1: per_level, 2: per_level, 3: per_level}
        assert {p.family for p in problems} == set(FAMILIES)
        assert len({p.statement for p in problems}) == len(problems)


def test_validation_is_the_held_out_set_the_defaults_were_tuned_on():
    # agents 0.4 shipped these very bytes as data/heldout.jsonl; benchmarks/RESULTS.md's tuning used them.
    digest = hashlib.sha256((data_dir() / VALIDATION_FILE).read_bytes()).hexdigest()
    assert digest == "eb6f136d25c87237036f53763733f6f55efe8ae96919970f8fd46898e60e9dc5"


def test_starter_validation_and_heldout_are_disjoint_and_marked():
    starter, validation, heldout = load_starter_set(), load_validation_set(), load_heldout_set()
    for evaluation in (validation, heldout):
        check_disjoint(starter, evaluation)
        assert all(p.split == "heldout" == problem_split(p) for p in evaluation)
        assert not {behaviour(p) for p in starter} & {behaviour(p) for p in evaluation}
    assert all(p.split == "train" == problem_split(p) for p in starter)
    check_separate(validation, heldout)
    # Behaviours recur across the two evaluation sets only where a family has a handful of held-out
    # behaviours in all (a letter to count); every numeric-constant behaviour is new.
    shared = {behaviour(p) for p in validation} & {behaviour(p) for p in heldout}
    assert {family for family, _ in shared} <= {"count_char"} and len(shared) <= 10


def test_check_separate_catches_a_shared_statement():
    validation, heldout = load_validation_set(), load_heldout_set()
    with pytest.raises(ValueError, match="share 1 ids"):
        check_separate(validation, [*heldout, validation[0]])


def test_check_disjoint_catches_a_mix_up():
    starter, heldout = load_starter_set(), load_heldout_set()
    with pytest.raises(ValueError, match="wrong split"):
        check_disjoint(starter + heldout[:1], heldout)
    with pytest.raises(ValueError, match="share"):
        check_disjoint(starter, [*heldout, type(heldout[0])(**{**starter[0].__dict__, "split": "heldout"})])

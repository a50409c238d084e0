"""The committed starter and held-out sets: sizes, disjointness, and regeneration to identical bytes."""

from __future__ import annotations

from collections import Counter

import pytest

from coding_framework.agents import make_data
from coding_framework.agents.datasets import (
    HELDOUT_FILE,
    STARTER_FILE,
    build_heldout_set,
    build_starter_set,
    check_disjoint,
    data_dir,
    load_heldout_set,
    load_starter_set,
)
from coding_framework.agents.families import FAMILIES
from coding_framework.agents.generator import problem_split


def test_committed_files_equal_a_fresh_build(tmp_path):
    assert make_data.main(["--out", str(tmp_path)]) == 0
    for name in (STARTER_FILE, HELDOUT_FILE):
        assert (tmp_path / name).read_bytes() == (data_dir() / name).read_bytes(), f"{name} is stale"
    assert make_data.main(["--check"]) == 0


def test_check_mode_detects_a_stale_file(tmp_path, capsys):
    make_data.main(["--out", str(tmp_path)])
    (tmp_path / HELDOUT_FILE).write_text((tmp_path / HELDOUT_FILE).read_text()[:-2] + "\n")
    assert make_data.main(["--out", str(tmp_path), "--check"]) == 1
    assert HELDOUT_FILE in capsys.readouterr().err


def test_loaded_sets_equal_the_builders():
    assert load_starter_set() == build_starter_set()
    assert load_heldout_set() == build_heldout_set()


def test_sizes_levels_and_family_coverage():
    starter, heldout = load_starter_set(), load_heldout_set()
    assert 50 <= len(starter) <= 100 and len(heldout) >= 60
    for problems in (starter, heldout):
        assert Counter(p.difficulty for p in problems) == {1: 30, 2: 30, 3: 30}
        assert {p.family for p in problems} == set(FAMILIES)
        assert len({p.statement for p in problems}) == len(problems)


def test_starter_and_heldout_are_disjoint_and_marked():
    starter, heldout = load_starter_set(), load_heldout_set()
    check_disjoint(starter, heldout)
    assert all(p.split == "train" == problem_split(p) for p in starter)
    assert all(p.split == "heldout" == problem_split(p) for p in heldout)
    behaviours = lambda ps: {(p.family, repr(sorted(p.params.items()))) for p in ps}  # noqa: E731
    assert not behaviours(starter) & behaviours(heldout)


def test_check_disjoint_catches_a_mix_up():
    starter, heldout = load_starter_set(), load_heldout_set()
    with pytest.raises(ValueError, match="wrong split"):
        check_disjoint(starter + heldout[:1], heldout)
    with pytest.raises(ValueError, match="share"):
        check_disjoint(starter, [*heldout, type(heldout[0])(**{**starter[0].__dict__, "split": "heldout"})])

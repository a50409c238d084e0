"""Curriculum: starts easy, moves up on success, deterministic, resumable, train-only."""

from __future__ import annotations

import json

import pytest

from coding_framework.agents.curriculum import CurriculumConfig, CurriculumSampler, PoolSource
from coding_framework.agents.datasets import load_heldout_set, load_starter_set

SMALL = CurriculumConfig(threshold=0.75, window=8, min_samples=4, review_fraction=0.25, seed=3)


def _feed(sampler, n, success):
    problems = sampler.sample(n)
    return sampler.update(problems, [success] * n), problems


def _pass_level(sampler):
    """Feed successes on current-level problems (review draws skipped) until the level goes up."""
    level = sampler.level
    while sampler.level == level:
        problem = sampler.sample(1)[0]
        if problem.difficulty == level:
            sampler.update([problem], [1.0])


def test_starts_at_the_easiest_level_and_moves_up_only_on_success():
    sampler = CurriculumSampler(SMALL)
    assert sampler.level == 1
    assert all(p.difficulty == 1 and p.split == "train" for p in sampler.sample(10))
    promoted, _ = _feed(sampler, 3, 1.0)
    assert not promoted and sampler.level == 1  # fewer than min_samples outcomes
    fresh = CurriculumSampler(SMALL)
    promoted, _ = _feed(fresh, 8, 0.5)
    assert not promoted and fresh.level == 1  # mean below the threshold
    problems = fresh.sample(8)
    # window of 8 holding k ones after eight halves: mean 0.5 + k/16 reaches 0.75 at k = 4
    assert [fresh.update([p], [1.0]) for p in problems[:4]] == [False, False, False, True]
    assert fresh.level == 2 and fresh.success_rate is None


def test_threshold_is_on_the_recent_window_mean():
    sampler = CurriculumSampler(SMALL)
    sampler.update(sampler.sample(8), [0.0] * 8)
    problems = sampler.sample(5)
    outcomes = [1.0] * 5
    promoted = sampler.update(problems, outcomes)
    # window of 8: three zeros and five ones → 0.625 < 0.75
    assert not promoted and sampler.success_rate == pytest.approx(5 / 8)
    assert sampler.update(sampler.sample(1), [1.0]) and sampler.level == 2


def test_review_draws_come_from_easier_levels_and_do_not_count():
    sampler = CurriculumSampler(SMALL)
    _pass_level(sampler)
    _pass_level(sampler)
    assert sampler.level == 3
    levels = [p.difficulty for p in sampler.sample(400)]
    share_easier = sum(lv < 3 for lv in levels) / len(levels)
    assert {1, 2} <= set(levels) and abs(share_easier - 0.25) < 0.07
    easy = [p for p in sampler.sample(50) if p.difficulty < 3]
    sampler.update(easy, [1.0] * len(easy))
    assert sampler.success_rate is None  # only level-3 outcomes count at level 3


def test_deterministic_given_seed_and_outcomes():
    a, b = CurriculumSampler(SMALL), CurriculumSampler(SMALL)
    for outcome in (0.0, 1.0, 1.0):
        pa, pb = a.sample(6), b.sample(6)
        assert [p.id for p in pa] == [p.id for p in pb]
        a.update(pa, [outcome] * 6)
        b.update(pb, [outcome] * 6)
    other = CurriculumSampler(CurriculumConfig(seed=4))
    assert [p.id for p in other.sample(6)] != [p.id for p in CurriculumSampler(SMALL).sample(6)]


def test_state_round_trips_through_json_and_resumes_exactly():
    sampler = CurriculumSampler(SMALL)
    sampler.update(sampler.sample(5), [1.0, 1.0, 0.0, 1.0, 1.0])
    state = json.loads(json.dumps(sampler.state_dict()))
    resumed = CurriculumSampler(SMALL)
    resumed.load_state_dict(state)
    for _ in range(3):
        pa, pb = sampler.sample(4), resumed.sample(4)
        assert [p.id for p in pa] == [p.id for p in pb]
        assert sampler.update(pa, [1.0] * 4) == resumed.update(pb, [1.0] * 4)
    assert sampler.state_dict() == resumed.state_dict()
    with pytest.raises(ValueError, match="same CurriculumConfig"):
        CurriculumSampler(CurriculumConfig(seed=99)).load_state_dict(state)


def test_pool_source_serves_the_starter_set_and_refuses_heldout():
    sampler = CurriculumSampler(SMALL, PoolSource(load_starter_set()))
    starter_ids = {p.id for p in load_starter_set()}
    assert all(p.id in starter_ids and p.difficulty == 1 for p in sampler.sample(20))
    with pytest.raises(ValueError, match="held-out problems cannot be trained on"):
        PoolSource(load_starter_set() + load_heldout_set()[:1])


@pytest.mark.parametrize("kwargs", [
    {"threshold": 0.0}, {"threshold": 1.5}, {"window": 4, "min_samples": 5}, {"review_fraction": 1.0},
    {"levels": ()}, {"levels": (1, 1)}, {"seed": "x"},
])
def test_config_rejects_bad_values(kwargs):
    with pytest.raises(ValueError, match="CurriculumConfig"):
        CurriculumConfig(**kwargs)


def test_update_rejects_bad_outcomes():
    sampler = CurriculumSampler(SMALL)
    with pytest.raises(ValueError, match=r"must be in \[0, 1\]"):
        sampler.update(sampler.sample(1), [2.0])
    with pytest.raises(ValueError, match="1 problems but 2 outcomes"):
        sampler.update(sampler.sample(1), [1.0, 1.0])

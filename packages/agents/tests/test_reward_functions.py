"""Reward functions on hand-made attempts: each reward, gating, the composite, the registry, config."""

from __future__ import annotations

import pytest

from coding_framework.agents.extraction import Extraction
from coding_framework.agents.lint import Finding
from coding_framework.agents.rewards import REWARDS, RewardConfig, composite, get_reward
from coding_framework.agents.scoring import Attempt
from coding_framework.sandbox import Status, Verdict

OK = Extraction("def add_three(x):\n    return x + 3\n", "body")
NO_CODE = Extraction(None, "none")
BROKEN = Extraction("def add_three(x):\n    return x +\n", "body", "line 2: invalid syntax")
LINT = (Finding("F841", "unused", 2, 5), Finding("E712", "compare to True", 3, 8))


def timed(cpu_s: float | None, wall_s: float = 0.05, status: Status = Status.PASSED) -> Verdict:
    return Verdict(status, "" if status is Status.PASSED else "x", duration_s=wall_s, cpu_s=cpu_s)


def attempt(problem, extraction=OK, passed=None, **kwargs) -> Attempt:
    return Attempt(problem=problem, completion="", extraction=extraction, hidden_passed=passed, **kwargs)


def test_correctness_is_the_hidden_pass_fraction(problem):
    config = RewardConfig()
    assert get_reward("correctness")(attempt(problem, passed=3), config) == pytest.approx(3 / 4)
    assert get_reward("correctness")(attempt(problem, passed=4), config) == 1.0
    assert get_reward("correctness")(attempt(problem, NO_CODE), config) == 0.0
    assert get_reward("correctness")(attempt(problem, BROKEN), config) == 0.0


def test_correctness_all_is_all_or_nothing(problem):
    config = RewardConfig()
    assert get_reward("correctness_all")(attempt(problem, passed=3), config) == 0.0
    assert get_reward("correctness_all")(attempt(problem, passed=4), config) == 1.0


def test_unmeasured_hidden_tests_raise_instead_of_scoring_zero(problem):
    with pytest.raises(ValueError, match="needs containing 'hidden'"):
        get_reward("correctness")(attempt(problem), RewardConfig())


def test_style_loses_a_fixed_amount_per_finding(problem):
    config = RewardConfig(style_penalty_per_finding=0.3)
    style = get_reward("style")
    assert style(attempt(problem, passed=4, lint=()), config) == 1.0
    assert style(attempt(problem, passed=4, lint=LINT), config) == pytest.approx(0.4)
    assert style(attempt(problem, passed=4, lint=LINT * 3), config) == 0.0  # floored


def test_quality_rewards_are_gated_on_full_correctness(problem):
    gated, open_ = RewardConfig(), RewardConfig(gate_quality=False)
    wrong = attempt(problem, passed=2, lint=(), timing=(timed(0.01),), reference_timing=(timed(0.01),))
    for name in ("style", "efficiency"):
        assert get_reward(name)(wrong, gated) == 0.0
        assert get_reward(name)(wrong, open_) == 1.0


def test_efficiency_is_the_tolerant_runtime_ratio(problem):
    config = RewardConfig(efficiency_tolerance=1.2)
    eff = get_reward("efficiency")

    def timed_pair(candidate, reference):
        return attempt(problem, passed=4, timing=(candidate,), reference_timing=(reference,))

    assert eff(timed_pair(timed(0.0104), timed(0.0100)), config) == 1.0  # 4% slower: within the tolerance
    assert eff(timed_pair(timed(0.060), timed(0.010)), config) == pytest.approx(1.2 * 0.010 / 0.060)
    wall_only = timed_pair(timed(None, 0.4), timed(None, 0.1))
    assert eff(wall_only, config) == pytest.approx(1.2 * 0.1 / 0.4)  # wall time when CPU is unknown
    assert eff(timed_pair(timed(0.01, status=Status.TIMEOUT), timed(0.01)), config) == 0.0
    assert not REWARDS["efficiency"].reproducible and not RewardConfig(weights={"efficiency": 1}).reproducible


def test_efficiency_takes_each_sides_fastest_round_and_needs_every_round_to_pass(problem):
    config = RewardConfig(efficiency_tolerance=1.0)
    eff = get_reward("efficiency")
    loaded = attempt(problem, passed=4, timing=(timed(0.030), timed(0.012), timed(0.020)),
                     reference_timing=(timed(0.010), timed(0.025), timed(0.016)))
    assert loaded.runtime_s == 0.012 and loaded.reference_runtime_s == 0.010
    assert eff(loaded, config) == pytest.approx(0.010 / 0.012)
    one_round_timed_out = attempt(problem, passed=4, timing=(timed(0.01), timed(0.01, status=Status.TIMEOUT)),
                                  reference_timing=(timed(0.01), timed(0.01)))
    assert one_round_timed_out.runtime_s is None and eff(one_round_timed_out, config) == 0.0
    assert attempt(problem, passed=4, timing=()).runtime_s is None


def test_format_penalties(problem):
    config = RewardConfig(no_code_penalty=1.0, syntax_error_penalty=0.5)
    fmt = get_reward("format")
    assert fmt(attempt(problem, NO_CODE), config) == -1.0
    assert fmt(attempt(problem, BROKEN), config) == -0.5
    assert fmt(attempt(problem, passed=0), config) == 0.0


def test_composite_weights_normalises_and_clips(problem):
    a = attempt(problem, passed=2, lint=LINT)
    config = RewardConfig(weights={"correctness": 2.0, "style": 1.0, "format": 1.0}, gate_quality=False)
    total, parts = composite(a, config)
    assert parts == {"correctness": 0.5, "format": 0.0, "style": 0.5}
    assert total == pytest.approx(1.0)  # 2*0.5 + 1*0.5 + 0, inside [-1, 1]
    normalised = RewardConfig(weights={"correctness": 2.0, "style": 1.0, "format": 1.0}, gate_quality=False,
                              normalize="positive_weights")
    assert composite(a, normalised)[0] == pytest.approx(1.5 / 3.0)  # format's best is 0: not in the norm
    perfect = attempt(problem, passed=4, lint=())
    assert composite(perfect, normalised)[0] == pytest.approx(1.0)
    full = attempt(problem, passed=4, lint=())
    assert composite(full, RewardConfig(weights={"correctness": 3.0}, clip_max=2.0))[0] == 2.0
    assert composite(attempt(problem, NO_CODE), RewardConfig(weights={"format": 5.0}))[0] == -1.0


def test_default_config_rewards_correctness_and_punishes_missing_code(problem):
    assert composite(attempt(problem, passed=4), RewardConfig())[0] == 1.0
    assert composite(attempt(problem, passed=1), RewardConfig())[0] == 0.25
    assert composite(attempt(problem, NO_CODE), RewardConfig())[0] == -1.0
    assert composite(attempt(problem, BROKEN), RewardConfig())[0] == -0.5


@pytest.mark.parametrize("name", sorted(REWARDS))
def test_every_reward_returns_a_float_in_its_range(name, problem):
    low, high = (-1.0, 0.0) if name == "format" else (0.0, 1.0)
    config = RewardConfig(gate_quality=False)
    cases = [
        attempt(problem, NO_CODE), attempt(problem, BROKEN), attempt(problem, passed=0, lint=LINT),
        attempt(problem, passed=4, lint=(), timing=(timed(0.02),), reference_timing=(timed(0.01),)),
    ]
    for a in cases:
        value = get_reward(name)(a, config)
        assert type(value) is float and low <= value <= high


def test_unknown_reward_lists_the_valid_ones():
    with pytest.raises(KeyError, match=r"unknown reward 'speed'; valid rewards: \['correctness'"):
        get_reward("speed")
    with pytest.raises(KeyError, match="unknown reward"):
        RewardConfig(weights={"speed": 1.0})


def test_needs_follow_the_weights():
    assert RewardConfig().needs == {"hidden"}
    assert RewardConfig(weights={"format": 1.0}).needs == frozenset()
    assert RewardConfig(weights={"style": 1.0}).needs == {"lint", "hidden"}  # gating needs hidden
    assert RewardConfig(weights={"style": 1.0}, gate_quality=False).needs == {"lint"}
    assert RewardConfig(weights={"efficiency": 0.5, "correctness": 0.0}).needs == {"timing", "hidden"}


def test_weights_are_stored_sorted_and_the_config_is_hashable():
    config = RewardConfig(weights={"style": 0.5, "correctness": 1})
    assert config.weights == (("correctness", 1.0), ("style", 0.5))
    assert hash(config) == hash(RewardConfig(weights={"correctness": 1.0, "style": 0.5}))


@pytest.mark.parametrize("kwargs, field", [
    ({"weights": {}}, "weights"),
    ({"weights": {"correctness": float("nan")}}, "weights"),
    ({"weights": {"correctness": "a lot"}}, "weights"),
    ({"clip_min": 1.0, "clip_max": 0.0}, "clip"),
    ({"normalize": "softmax"}, "normalize"),
    ({"normalize": "positive_weights", "weights": {"format": 1.0, "correctness": -1.0}}, "positive"),
    ({"style_penalty_per_finding": -0.1}, "style_penalty_per_finding"),
    ({"efficiency_repeats": 0}, "efficiency_repeats"),
    ({"efficiency_tolerance": 0.5}, "efficiency_tolerance"),
    ({"hidden_jobs": "some"}, "hidden_jobs"),
])
def test_config_rejects_bad_values_naming_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        RewardConfig(**kwargs)

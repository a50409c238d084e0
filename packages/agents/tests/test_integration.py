"""End to end with the real SandboxPool: scoring, forge attempts, episodes, speed, efficiency."""

from __future__ import annotations

import time

import pytest

from coding_framework.agents.datasets import load_starter_set
from coding_framework.agents.episode import EpisodeConfig, run_episodes
from coding_framework.agents.problems import Problem, TestCase
from coding_framework.agents.rewards import RewardConfig
from coding_framework.agents.scoring import score_completions
from coding_framework.sandbox import Limits, SandboxPool

STUB = ('def double(xs):\n    """Return a new list with each element of xs times 2.\n\n'
        '    >>> double([1])\n    [2]\n    """\n')
PROBLEM = Problem(
    id="double", statement=STUB, entry_point="double",
    visible_tests=(TestCase(([1],), [2]), TestCase(([],), [])),
    hidden_tests=(TestCase(([0],), [0]), TestCase(([1, 2],), [2, 4]), TestCase(([-3],), [-6]),
                  TestCase(([5, 5, 5],), [10, 10, 10])),
    reference=STUB + "    return [2 * v for v in xs]\n", difficulty=2, family="",
)


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(workers=2) as sandbox:
        yield sandbox


def body(text: str) -> str:
    return "".join(f"    {line}\n" for line in text.splitlines())


def test_rewards_for_right_partial_wrong_and_broken_code(pool):
    completions = {
        "right": body("return [v * 2 for v in xs]"),
        "partial": body("return [v * 2 for v in xs[:1]]"),  # right for lengths 0 and 1: 2 of 4
        "wrong": body("return [v + 1 for v in xs]"),
        "raises": body("raise ValueError('no')"),
        "prose": "I would multiply each element.",
        "broken": body("return [v * 2 for v in xs"),
    }
    for mode in ("counted", "per_case"):
        scores = score_completions([PROBLEM] * len(completions), list(completions.values()), pool,
                                   RewardConfig(hidden_jobs=mode))
        got = dict(zip(completions, [s.reward for s in scores], strict=True))
        assert got == {"right": 1.0, "partial": 0.5, "wrong": 0.0, "raises": 0.0, "prose": -1.0,
                       "broken": -0.5}, mode


FORGERIES = {
    "always-equal object": "class A:\n    def __eq__(self, o):\n        return True\nreturn A()",
    "list subclass": "class L(list):\n    def __eq__(self, o):\n        return True\nreturn L()",
    "tuple for list": "return tuple(2 * v for v in xs)",
    "generator for list": "return (2 * v for v in xs)",
    "exit 0 in the call": "import sys\nsys.exit(0)",
    "os._exit(0)": "import os\nos._exit(0)",
    "forged assertion": "raise AssertionError('CF-PASSED 4/4')",
    "printed pass line": "print('CF-PASSED 4/4')\nprint('passed')\nreturn None",
    "busy loop": "while True:\n    pass",
    "gc hunt for expected values": (
        "import gc\nfor o in gc.get_objects():\n    if type(o) is list and o and type(o[0]) is tuple:\n"
        "        return o[0][1]\nreturn []"
    ),
}


def test_forgeries_earn_nothing(pool):
    config = RewardConfig(limits=Limits(timeout_s=2.0, memory_mb=512))
    completions = [body(t) for t in FORGERIES.values()]
    scores = score_completions([PROBLEM] * len(FORGERIES), completions, pool, config)
    earned = {name: s.attempt.hidden_passed for name, s in zip(FORGERIES, scores, strict=True)}
    assert earned == dict.fromkeys(FORGERIES, 0)


def test_bool_is_not_int_and_int_is_not_float(pool):
    counting = Problem(
        id="count", statement="def count(xs):\n    pass\n", entry_point="count",
        visible_tests=(), hidden_tests=(TestCase(([1, 1],), 2), TestCase(([],), 0), TestCase(([4],), 1)),
        reference="def count(xs):\n    return len(xs)\n", difficulty=1, family="",
    )
    completions = ["def count(xs):\n    return len(xs) > 0\n", "def count(xs):\n    return float(len(xs))\n",
                   "def count(xs):\n    return len(xs)\n"]
    scores = score_completions([counting] * 3, completions, pool)
    assert [s.attempt.hidden_passed for s in scores] == [0, 0, 3]  # True/False never pass for 1/0


def test_multi_turn_episode_in_the_sandbox(pool):
    problems = load_starter_set()[:6]
    answers = {p.statement: p.reference[len(p.statement):] for p in problems}

    def generate(prompts: list[str]) -> list[str]:
        # first try: wrong; after a review: the reference body for the stub at the end of the prompt
        return [answers[next(s for s in answers if prompt.endswith(s))] if "# Review:" in prompt
                else "    return None\n" for prompt in prompts]

    episodes = run_episodes(problems, generate, pool, EpisodeConfig(max_turns=2))
    assert all(len(e.turns) == 2 for e in episodes)
    assert all(e.reward == 1.0 for e in episodes)
    assert all("returned None, expected" in e.turns[0].review for e in episodes)
    assert all([s.kind for s in e.segments] == ["prompt", "policy", "feedback", "policy"] for e in episodes)


def test_scoring_a_training_batch_is_fast(pool):
    """64 samples (16 problems x 4) with hidden tests: the batch API's throughput on this machine."""
    problems = [p for p in load_starter_set()[::5] for _ in range(4)][:64]
    completions = [p.reference[len(p.statement):] for p in problems]
    score_completions(problems[:4], completions[:4], pool)  # warm the workers
    start = time.perf_counter()
    scores = score_completions(problems, completions, pool)
    elapsed = time.perf_counter() - start
    print(f"\nscored {len(scores)} samples in {elapsed:.2f} s ({len(scores) / elapsed * 60:.0f}/min)")
    assert all(s.reward == 1.0 for s in scores)
    assert elapsed < 5.0  # measured about 0.4 s on 2 cores; generous for a loaded CI machine


def test_efficiency_prefers_the_reference_speed(pool):
    slow = body("out = []\nfor v in xs:\n    for _ in range(30000):\n        pass\n    out.append(2 * v)\n"
                "return out")
    config = RewardConfig(weights={"correctness": 1.0, "efficiency": 1.0}, efficiency_repeats=3)
    fast_code = body("return [v + v for v in xs]")
    fast, slow_score = score_completions([PROBLEM] * 2, [fast_code, slow], pool, config)
    assert fast.components["efficiency"] > 0.8
    assert slow_score.components["efficiency"] < 0.5
    assert slow_score.components["correctness"] == 1.0

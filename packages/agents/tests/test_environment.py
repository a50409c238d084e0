"""CodingEnvironment with the real SandboxPool: the engine protocol's methods, episodes, curriculum, state."""

from __future__ import annotations

import inspect
import json

import pytest

from coding_framework.agents import (
    CodingEnvironment,
    CurriculumConfig,
    EnvironmentConfig,
    EpisodeConfig,
    load_heldout_set,
    load_starter_set,
)
from coding_framework.sandbox import SandboxPool

PROTOCOL = {  # rl-core's engine Environment, by method and parameter names (agents may not import it)
    "sample_batch": ["step", "size"],
    "rollout": ["tasks", "generate"],
    "record": ["tasks", "trajectories"],
    "evaluate": ["tasks", "generate"],
    "heldout_tasks": [],
    "state_dict": [],
    "load_state_dict": ["state"],
}


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(workers=2) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def starter():
    return load_starter_set()


def body_of(problem) -> str:
    assert problem.reference.startswith(problem.statement)
    return problem.reference[len(problem.statement):]


class Scripted:
    """A scripted policy: per prompt, the reference body (right) or `return None` (wrong), by turn.

    Returns the very str objects it made so tests can check that episodes keep them as policy segments.
    """

    def __init__(self, problems, answers=("right",)):
        self.by_statement = {p.statement: p for p in problems}
        self.answers = answers
        self.prompts: list[str] = []
        self.returned: list[str] = []

    def __call__(self, prompts):
        out = []
        for prompt in prompts:
            self.prompts.append(prompt)
            turn = prompt.count("# Review:")
            problem = next(p for s, p in self.by_statement.items() if prompt.startswith(s))
            kind = self.answers[min(turn, len(self.answers) - 1)]
            out.append(body_of(problem) if kind == "right" else "    return None\n")
        self.returned.extend(out)
        return out


def test_has_the_engine_protocol_shape(pool):
    env = CodingEnvironment(pool=pool)
    for name, params in PROTOCOL.items():
        assert list(inspect.signature(getattr(env, name)).parameters) == params, name


def test_training_problems_come_from_the_curriculum_deterministically(pool):
    a = CodingEnvironment(EnvironmentConfig(curriculum=CurriculumConfig(seed=4)), pool=pool)
    b = CodingEnvironment(EnvironmentConfig(curriculum=CurriculumConfig(seed=4)), pool=pool)
    batch = a.sample_batch(1, 6)
    assert [p.id for p in batch] == [p.id for p in b.sample_batch(1, 6)]
    assert all(p.split == "train" and p.difficulty == 1 for p in batch)
    assert [p.id for p in a.sample_batch(2, 6)] != [p.id for p in batch]


def test_single_turn_rollout_scores_hidden_tests_in_the_sandbox(pool, starter):
    problems = starter[:3]
    env = CodingEnvironment(problems=starter, pool=pool)
    right, wrong = Scripted(problems, ("right",)), Scripted(problems, ("wrong",))
    good = env.rollout(problems, right)
    bad = env.rollout(problems, wrong)
    assert [t.reward for t in good] == [1.0, 1.0, 1.0]
    assert [t.metrics["passed"] for t in good] == [1.0, 1.0, 1.0]
    assert [t.reward for t in bad] == [0.0, 0.0, 0.0] and [t.metrics["passed"] for t in bad] == [0, 0, 0]
    for trajectory, problem, text in zip(good, problems, right.returned, strict=True):
        first = trajectory.segments[0]
        assert first.text == problem.statement and not first.trainable
        assert trajectory.segments[1].trainable and trajectory.segments[1].text is text  # same object
        assert trajectory.metrics["turns"] == 1.0 and trajectory.metrics["level"] == problem.difficulty
    assert right.prompts == [p.statement for p in problems]


def test_multi_turn_rollout_masks_feedback(pool, starter):
    problems = starter[:2]
    config = EnvironmentConfig(episode=EpisodeConfig(max_turns=3))
    env = CodingEnvironment(config, problems=starter, pool=pool)
    policy = Scripted(problems, ("wrong", "right"))
    trajectories = env.rollout(problems, policy)
    for t in trajectories:
        assert [s.kind for s in t.segments] == ["prompt", "policy", "feedback", "policy"]
        assert [s.trainable for s in t.segments] == [False, True, False, True]
        assert t.reward == 1.0 and t.metrics["turns"] == 2.0 and t.metrics["passed"] == 1.0
        assert "# Review:" in t.segments[2].text
    assert len(policy.prompts) == 4  # two turns per problem, stopped once the examples passed


def test_record_moves_the_curriculum_and_state_resumes_it(pool, starter):
    config = EnvironmentConfig(curriculum=CurriculumConfig(levels=(1, 2, 3), min_samples=4, window=4, seed=2))
    env = CodingEnvironment(config, problems=starter, pool=pool)
    tasks = env.sample_batch(1, 4)
    env.record(tasks, env.rollout(tasks, Scripted(tasks, ("right",))))
    assert env.level == 2
    state = json.loads(json.dumps(env.state_dict()))  # JSON-able, as checkpoints need
    clone = CodingEnvironment(config, problems=starter, pool=pool)
    clone.load_state_dict(state)
    assert clone.level == 2
    assert [p.id for p in clone.sample_batch(2, 5)] == [p.id for p in env.sample_batch(2, 5)]
    with pytest.raises(ValueError, match="not a CodingEnvironment state"):
        clone.load_state_dict({"curriculum": state["curriculum"]})


def test_evaluation_is_correctness_only_on_the_held_out_set(pool):
    config = EnvironmentConfig(episode=EpisodeConfig(max_turns=3))
    env = CodingEnvironment(config, pool=pool)
    heldout = env.heldout_tasks()
    assert [p.id for p in heldout] == [p.id for p in load_heldout_set()]
    tasks = heldout[:2] + heldout[:2]
    policy = Scripted(heldout[:2], ("wrong", "right"))
    results = env.evaluate(tasks, policy)
    # eval_max_turns=1: the first (wrong) answer counts, no second turn.
    assert [t.metrics["passed"] for t in results] == [0.0] * 4 and len(policy.prompts) == 4
    assert all(set(t.episode.score.components) == {"correctness"} for t in results)
    right = env.evaluate(heldout[:2], Scripted(heldout[:2], ("right",)))
    assert [t.metrics["passed"] for t in right] == [1.0, 1.0]


def test_bad_sets_are_refused(pool, starter):
    heldout = load_heldout_set()
    with pytest.raises(ValueError, match="held-out problems cannot be trained on"):
        CodingEnvironment(problems=starter[:2] + heldout[:1], pool=pool)
    with pytest.raises(ValueError, match="must have split 'heldout'"):
        CodingEnvironment(heldout=starter[:2], pool=pool)
    with pytest.raises(ValueError, match="eval_max_turns"):
        EnvironmentConfig(eval_max_turns=0)


def test_closes_only_the_pool_it_started(pool, starter):
    with CodingEnvironment(problems=starter, workers=1) as env:
        own = env.pool
        assert env.rollout(starter[:1], Scripted(starter[:1]))[0].reward == 1.0
    with pytest.raises(RuntimeError, match="closed"):
        own.run_many([])
    CodingEnvironment(pool=pool).close()
    assert pool.run_many([]) == []

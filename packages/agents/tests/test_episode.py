"""Episodes with a scripted policy (a deterministic function of the prompt) and the fake pool."""

from __future__ import annotations

import json

import pytest

from coding_framework.agents.episode import EpisodeConfig, feedback_text, run_episode, run_episodes
from coding_framework.agents.reviewer import ReviewRequest
from coding_framework.agents.rewards import RewardConfig

WRONG = "    return x + 2\n"
RIGHT = "    return x + 3\n"
# Passes both visible examples (1 -> 4, -3 -> 0) and only the hidden case 0 -> 3 of 0, 5, -10, 100.
OVERFIT = "    return {1: 4, -3: 0}.get(x, 3)\n"


def scripted(*answers):
    """A policy that gives answers[i] on turn i (turn = reviews seen in the prompt), and logs prompts."""
    prompts: list[str] = []

    def generate(prompt: str) -> str:
        prompts.append(prompt)
        return answers[min(prompt.count("# Review:"), len(answers) - 1)]

    generate.prompts = prompts
    return generate


def test_single_turn_generates_once_and_scores_on_hidden_tests(fake_pool, problem):
    policy = scripted(RIGHT)
    episode = run_episode(problem, policy, fake_pool)
    assert policy.prompts == [problem.statement]
    assert [(s.kind, s.trainable) for s in episode.segments] == [("prompt", False), ("policy", True)]
    assert len(fake_pool.calls) == 1  # no visible run when no turn follows: only the final scoring
    assert episode.reward == 1.0 and episode.final_code == problem.statement + RIGHT
    assert episode.turns[0].review is None and episode.turns[0].visible == ()


def test_feedback_then_revision_with_segments_marked(fake_pool, problem):
    policy = scripted(WRONG, RIGHT)
    config = EpisodeConfig(max_turns=4, turn_penalty=0.1)
    episode = run_episode(problem, policy, fake_pool, config)
    assert len(episode.turns) == 2 and len(policy.prompts) == 2  # stopped once the examples passed
    kinds = [s.kind for s in episode.segments]
    assert kinds == ["prompt", "policy", "feedback", "policy"]
    assert [s.trainable for s in episode.segments] == [False, True, False, True]
    first, second = episode.turns
    assert [r.passed for r in first.visible] == [False, False]
    assert first.review.splitlines()[:2] == ["2 of 2 examples failed:",
                                             "- add_three(1) returned 3, expected 4"]
    feedback = episode.segments[2].text
    assert feedback == feedback_text(first.review, problem, WRONG)
    assert "# - add_three(1) returned 3, expected 4\n" in feedback and feedback.endswith(problem.statement)
    # the second prompt is exactly the transcript so far; the whole text is prompt + completion
    assert second.prompt == problem.statement + WRONG + feedback == policy.prompts[1]
    assert episode.text == second.prompt + RIGHT
    assert all(r.passed for r in second.visible) and second.review is None
    assert episode.score.reward == 1.0 and episode.reward == pytest.approx(0.9)


def test_turn_limit_and_batches_per_turn(fake_pool, problem):
    policy = scripted(WRONG)
    episode = run_episode(problem, policy, fake_pool, EpisodeConfig(max_turns=3))
    assert len(episode.turns) == 3 and [s.kind for s in episode.segments].count("feedback") == 2
    assert episode.turns[-1].review is None and episode.turns[-1].visible == ()
    assert len(fake_pool.calls) == 3  # visible tests after turns 1 and 2, then the final scoring
    assert episode.reward == 0.0


def test_episodes_run_in_lockstep_with_one_generate_call_per_turn(fake_pool, problem_factory):
    base = problem_factory()
    problems = [problem_factory(id=f"p{i}", statement=f"# p{i}\n{base.statement}",
                                reference=f"# p{i}\n{base.reference}") for i in range(3)]
    answers = {"p0": [RIGHT], "p1": [WRONG, RIGHT], "p2": [WRONG]}
    batch_sizes: list[int] = []

    def generate(prompts: list[str]) -> list[str]:
        batch_sizes.append(len(prompts))
        out = []
        for prompt in prompts:
            script = answers[prompt.split("\n", 1)[0][2:]]  # the problem id on the first line
            out.append(script[min(prompt.count("# Review:"), len(script) - 1)])
        return out

    episodes = run_episodes(problems, generate, fake_pool, EpisodeConfig(max_turns=3))
    assert batch_sizes == [3, 2, 1]  # finished episodes leave the batch
    assert [len(e.turns) for e in episodes] == [1, 2, 3]
    assert [e.reward for e in episodes] == [1.0, 1.0, 0.0]
    assert [e.problem.id for e in episodes] == ["p0", "p1", "p2"]
    assert len(fake_pool.calls) == 3  # visible tests after turns 1 and 2, then one final scoring


def test_passing_the_examples_is_not_passing_the_hidden_tests(fake_pool, problem):
    episode = run_episode(problem, scripted(OVERFIT, RIGHT), fake_pool, EpisodeConfig(max_turns=3))
    assert len(episode.turns) == 1  # the examples passed, so the episode stopped
    assert episode.reward == 0.25  # hidden: only 0 -> 3 of four cases


def test_without_early_stop_all_turns_are_used(fake_pool, problem):
    config = EpisodeConfig(max_turns=2, stop_on_visible_pass=False)
    episode = run_episode(problem, scripted(RIGHT), fake_pool, config)
    assert len(episode.turns) == 2 and episode.turns[0].review == "All examples pass."


def test_a_different_reviewer_plugs_in(fake_pool, problem):
    class FakeLLMReviewer:
        """Stands in for an LLM reviewer: same interface, canned text."""

        def __init__(self):
            self.requests: list[ReviewRequest] = []

        def review(self, request: ReviewRequest) -> str:
            self.requests.append(request)
            return "Check the constant in the docstring."

    reviewer = FakeLLMReviewer()
    episode = run_episode(problem, scripted(WRONG, RIGHT), fake_pool, EpisodeConfig(max_turns=2), reviewer)
    assert reviewer.requests[0].extraction.program == problem.statement + WRONG
    assert "# Check the constant in the docstring.\n" in episode.segments[2].text


def test_no_code_gets_a_review_and_the_format_penalty(fake_pool, problem):
    episode = run_episode(problem, scripted("I am not sure."), fake_pool, EpisodeConfig(max_turns=2))
    assert episode.turns[0].review.startswith("No code found.")
    assert episode.reward == -1.0 and episode.score.components["format"] == -1.0


def test_record_is_json_serialisable(fake_pool, problem):
    config = EpisodeConfig(max_turns=2, reward=RewardConfig(weights={"correctness": 1.0, "style": 0.5}))
    record = run_episode(problem, scripted(WRONG, RIGHT), fake_pool, config).to_dict()
    again = json.loads(json.dumps(record))
    assert again["turns"] == 2 and again["passed_all_hidden"] is True
    assert [s["kind"] for s in again["segments"]] == ["prompt", "policy", "feedback", "policy"]


def test_bad_policies_and_configs_are_clear_errors(fake_pool, problem):
    with pytest.raises(ValueError, match="one completion per prompt"):
        run_episodes([problem], lambda prompts: [], fake_pool)
    with pytest.raises(TypeError, match="not a str"):
        run_episodes([problem], lambda prompts: [None], fake_pool)
    with pytest.raises(ValueError, match="max_turns"):
        EpisodeConfig(max_turns=0)
    with pytest.raises(ValueError, match="turn_penalty"):
        EpisodeConfig(turn_penalty=-1)

"""Single- and multi-turn coding episodes over an injected policy.

One episode: the policy (a `generate` callable, prompt text → completion text; no model code lives
here) writes code for the problem's statement; unless it was the last turn, the code runs against the
visible tests in the sandbox, and if any fails the reviewer's review is appended as feedback and the
policy writes the function again, up to `max_turns`. The last turn's code is scored on the hidden
tests with the configured reward.

The transcript is recorded as segments: "prompt" and "feedback" come from the environment, "policy"
from the model. A trainer tokenizes segment by segment and puts only policy tokens in the loss
(`Segment.trainable`); the concatenation of all segments is exactly the text the policy saw and wrote.

Batched: `run_episodes` advances every episode one turn at a time, with one `generate` call, one
sandbox `run_many` and one ruff run per turn, and one `run_many` for the final scoring.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from coding_framework.agents.execution import CaseResult
from coding_framework.agents.extraction import Extraction, extract_code
from coding_framework.agents.lint import Finding, LintRun
from coding_framework.agents.problems import Problem
from coding_framework.agents.reviewer import Reviewer, ReviewRequest, RuleBasedReviewer
from coding_framework.agents.rewards import RewardConfig
from coding_framework.agents.scoring import Executor, Score, measure, run_cases, score_attempts

SegmentKind = Literal["prompt", "policy", "feedback"]
GenerateBatch = Callable[[list[str]], list[str]]
"""Prompts → completions, one per prompt, same order."""
Generate = Callable[[str], str]
"""One prompt → one completion."""


@dataclass(frozen=True)
class Segment:
    """A piece of the transcript and who wrote it."""

    kind: SegmentKind
    text: str

    @property
    def trainable(self) -> bool:
        """Only policy-generated text belongs in the policy loss."""
        return self.kind == "policy"


@dataclass(frozen=True)
class Turn:
    """One write (or rewrite) of the function."""

    index: int
    """0-based."""
    prompt: str
    """The full text the policy continued (statement, earlier turns and feedback)."""
    completion: str
    extraction: Extraction
    visible: tuple[CaseResult, ...] = ()
    """Visible-test verdicts (not run on the last allowed turn)."""
    lint: tuple[Finding, ...] = ()
    review: str | None = None
    """The review that followed this turn, if another turn followed."""


@dataclass(frozen=True)
class EpisodeConfig:
    """How episodes run and are scored."""

    max_turns: int = 1
    """1 = single-turn; N > 1 allows N - 1 revisions after feedback."""
    stop_on_visible_pass: bool = True
    """End the episode as soon as the code passes every visible test."""
    reward: RewardConfig = field(default_factory=RewardConfig)
    """Reward of the final code on the hidden tests."""
    turn_penalty: float = 0.0
    """Subtracted from the reward per revision used (then clipped again), to prefer first-try solutions."""
    review_lint: bool = True
    """Lint each turn's code so the reviewer can mention style."""

    def __post_init__(self) -> None:
        if type(self.max_turns) is not int or self.max_turns < 1:
            raise ValueError(f"EpisodeConfig.max_turns={self.max_turns!r}: must be an int >= 1")
        if not (math.isfinite(self.turn_penalty) and self.turn_penalty >= 0):
            raise ValueError(f"EpisodeConfig.turn_penalty={self.turn_penalty}: must be a finite number >= 0")
        if not isinstance(self.reward, RewardConfig):
            raise ValueError("EpisodeConfig.reward must be a RewardConfig")


@dataclass(frozen=True)
class Episode:
    """A finished episode."""

    problem: Problem
    turns: tuple[Turn, ...]
    segments: tuple[Segment, ...]
    score: Score
    """The configured reward of the final code on the hidden tests."""
    reward: float
    """score.reward minus the turn penalty, clipped."""

    @property
    def text(self) -> str:
        """The whole transcript."""
        return "".join(s.text for s in self.segments)

    @property
    def final_code(self) -> str | None:
        return self.turns[-1].extraction.program

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able record for logs."""
        attempt = self.score.attempt
        return {
            "problem_id": self.problem.id,
            "reward": self.reward,
            "components": dict(self.score.components),
            "turns": len(self.turns),
            "passed_all_hidden": bool(attempt and attempt.extraction.ok and _all_passed(attempt)),
            "segments": [{"kind": s.kind, "text": s.text} for s in self.segments],
            "reviews": [t.review for t in self.turns if t.review is not None],
        }


def _all_passed(attempt: Any) -> bool:
    try:
        return bool(attempt.all_passed)
    except ValueError:  # hidden verdicts were not measured by this reward config
        return False


def feedback_text(review: str, problem: Problem, completion: str) -> str:
    """The environment's text between two turns: the review as comments, then the stub again."""
    lead = "" if completion.endswith("\n") else "\n"
    lines = review.splitlines() or ["(no comments)"]
    commented = "\n".join(f"# {line}" if line else "#" for line in lines)
    return f"{lead}\n# Review:\n{commented}\n# Write {problem.entry_point} again.\n\n{problem.statement}"


@dataclass
class _State:
    problem: Problem
    segments: list[Segment]
    turns: list[Turn] = field(default_factory=list)
    done: bool = False

    @property
    def transcript(self) -> str:
        return "".join(s.text for s in self.segments)


def run_episodes(problems: Sequence[Problem], generate: GenerateBatch, pool: Executor,
                 config: EpisodeConfig | None = None, reviewer: Reviewer | None = None) -> list[Episode]:
    """Run one episode per problem (repeat a problem for several samples), turn by turn in lockstep.

    Args:
      problems: the problems; the policy sees each statement as its first prompt.
      generate: batch policy, called once per turn with the prompts of the unfinished episodes.
      pool: the sandbox (anything with `run_many`).
      config: turns, stopping and reward.
      reviewer: writes the feedback between turns; default RuleBasedReviewer().
    Returns:
      the episodes, in input order.
    """
    config = config or EpisodeConfig()
    reviewer = reviewer or RuleBasedReviewer()
    states = [_State(p, [Segment("prompt", p.statement)]) for p in problems]
    for turn_index in range(config.max_turns):
        active = [s for s in states if not s.done]
        if not active:
            break
        prompts = [s.transcript for s in active]
        completions = generate(prompts)
        if not isinstance(completions, list | tuple) or len(completions) != len(prompts):
            raise ValueError(f"generate returned {type(completions).__name__} of "
                             f"{len(completions) if hasattr(completions, '__len__') else '?'} items "
                             f"for {len(prompts)} prompts: it must return one completion per prompt")
        last = turn_index == config.max_turns - 1
        extractions = []
        for state, completion in zip(active, completions, strict=True):
            if not isinstance(completion, str):
                raise TypeError(f"generate returned a {type(completion).__name__}, not a str")
            state.segments.append(Segment("policy", completion))
            extractions.append(extract_code(completion, state.problem.statement, state.problem.entry_point))
        rows = list(zip(active, prompts, completions, extractions, strict=True))
        if last:
            for state, prompt, completion, extraction in rows:
                state.turns.append(Turn(turn_index, prompt, completion, extraction))
                state.done = True
            break
        runnable = [(s, e) for s, e in zip(active, extractions, strict=True) if e.ok]
        programs = [e.program for _, e in runnable]
        lint_run = LintRun(programs, config.reward.lint) if config.review_lint else None
        try:
            results = run_cases(pool, [(s.problem, e.program, s.problem.visible_tests) for s, e in runnable],
                                config.reward.limits)
        finally:
            findings = lint_run.result() if lint_run is not None else [()] * len(runnable)
        by_state = {id(s): (r, f) for (s, _), r, f in zip(runnable, results, findings, strict=True)}
        for state, prompt, completion, extraction in rows:
            visible, lint = by_state.get(id(state), ((), ()))
            solved = extraction.ok and all(r.passed for r in visible)
            if solved and config.stop_on_visible_pass:
                state.turns.append(Turn(turn_index, prompt, completion, extraction, visible, lint))
                state.done = True
                continue
            review = reviewer.review(ReviewRequest(state.problem, extraction, visible, lint))
            state.turns.append(Turn(turn_index, prompt, completion, extraction, visible, lint, review))
            state.segments.append(Segment("feedback", feedback_text(review, state.problem, completion)))
    attempts = measure(
        [s.problem for s in states], [s.turns[-1].completion for s in states], pool, config.reward.needs,
        config.reward, extractions=[s.turns[-1].extraction for s in states],
    )
    episodes = []
    reward_config = config.reward
    for state, score in zip(states, score_attempts(attempts, reward_config), strict=True):
        reward = score.reward - config.turn_penalty * (len(state.turns) - 1)
        reward = min(reward_config.clip_max, max(reward_config.clip_min, reward))
        episodes.append(Episode(state.problem, tuple(state.turns), tuple(state.segments), score, reward))
    return episodes


def run_episode(problem: Problem, generate: Generate, pool: Executor, config: EpisodeConfig | None = None,
                reviewer: Reviewer | None = None) -> Episode:
    """One episode with a one-prompt-at-a-time policy."""
    return run_episodes([problem], lambda prompts: [generate(p) for p in prompts], pool, config, reviewer)[0]

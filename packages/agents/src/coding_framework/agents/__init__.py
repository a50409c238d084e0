"""The coding environment for RL: problems, a problem generator, rewards, a reviewer and episodes.

See README.md for the guarantees; every name below is public API.
"""

from coding_framework.agents.curriculum import (
    CurriculumConfig,
    CurriculumSampler,
    GeneratedSource,
    PoolSource,
    ProblemSource,
)
from coding_framework.agents.datasets import (
    EVALUATION_SETS,
    build_heldout_set,
    build_starter_set,
    build_validation_set,
    check_disjoint,
    check_separate,
    load_evaluation_set,
    load_heldout_set,
    load_starter_set,
    load_validation_set,
)
from coding_framework.agents.environment import CodingEnvironment, CodingTrajectory, EnvironmentConfig
from coding_framework.agents.episode import (
    Episode,
    EpisodeConfig,
    Segment,
    Turn,
    feedback_text,
    run_episode,
    run_episodes,
)
from coding_framework.agents.execution import CaseResult, case_jobs, suite_job
from coding_framework.agents.extraction import Extraction, extract_code, syntax_error_of
from coding_framework.agents.families import FAMILIES, LEVELS
from coding_framework.agents.generator import (
    behaviour,
    generate_problem,
    iter_problems,
    problem_split,
    split_of,
)
from coding_framework.agents.lint import Finding, LintConfig, lint_programs
from coding_framework.agents.problems import (
    Problem,
    ProblemFormatError,
    TestCase,
    parse_problems,
    read_problems,
    write_problems,
)
from coding_framework.agents.reviewer import Reviewer, ReviewRequest, RuleBasedReviewer
from coding_framework.agents.rewards import REWARDS, Reward, RewardConfig, composite, get_reward
from coding_framework.agents.scoring import Attempt, Executor, Score, measure, run_cases, score_completions

__all__ = [
    "EVALUATION_SETS",
    "FAMILIES",
    "LEVELS",
    "REWARDS",
    "Attempt",
    "CaseResult",
    "CodingEnvironment",
    "CodingTrajectory",
    "CurriculumConfig",
    "CurriculumSampler",
    "EnvironmentConfig",
    "Episode",
    "EpisodeConfig",
    "Executor",
    "Extraction",
    "Finding",
    "GeneratedSource",
    "LintConfig",
    "PoolSource",
    "Problem",
    "ProblemFormatError",
    "ProblemSource",
    "ReviewRequest",
    "Reviewer",
    "Reward",
    "RewardConfig",
    "RuleBasedReviewer",
    "Score",
    "Segment",
    "TestCase",
    "Turn",
    "behaviour",
    "build_heldout_set",
    "build_starter_set",
    "build_validation_set",
    "case_jobs",
    "check_disjoint",
    "check_separate",
    "composite",
    "extract_code",
    "feedback_text",
    "generate_problem",
    "get_reward",
    "iter_problems",
    "lint_programs",
    "load_evaluation_set",
    "load_heldout_set",
    "load_starter_set",
    "load_validation_set",
    "measure",
    "parse_problems",
    "problem_split",
    "read_problems",
    "run_cases",
    "run_episode",
    "run_episodes",
    "score_completions",
    "split_of",
    "suite_job",
    "syntax_error_of",
    "write_problems",
]

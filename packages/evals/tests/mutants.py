"""Small, honest wrong solutions for agreement tests: single AST mutations of HumanEval's canonical
solutions, the kind of slip a model makes (flipped comparison, off-by-one constant, + for -, and for
or, a dropped return). Some mutants are equivalent to the original and still pass; that is fine, the
test compares verdicts between harnesses, not against an expected answer.

A second, separate operator set (EXTRA_OPERATORS: other slips, at every site and in every way they fit;
`extra_mutants`, and `all_mutants` for every distinct mutant of either set) feeds
benchmarks/evals/humaneval_mutant_agreement.py; OPERATORS and `sample_mutants` are unchanged by it.
"""

from __future__ import annotations

import ast
import copy
import random
import textwrap
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass

_FLIP = {
    ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt, ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}  # fmt: skip
_SWAP_ARITH = {ast.Add: ast.Sub, ast.Sub: ast.Add}
_SWAP_BOOL = {ast.And: ast.Or, ast.Or: ast.And}


def _flip_comparison(node: ast.AST) -> bool:
    # A new list: `_sites` tries operators on shallow copies, which share the original's list (writing
    # into it flipped every comparison of the solution but the chosen one).
    if isinstance(node, ast.Compare) and type(node.ops[0]) in _FLIP:
        node.ops = [_FLIP[type(node.ops[0])](), *node.ops[1:]]
        return True
    return False


def _off_by_one(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        node.value += 1
        return True
    return False


def _swap_operator(node: ast.AST, table: dict[type, type]) -> bool:
    """A binary or augmented operator replaced by the one `table` gives for it."""
    if isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in table:
        node.op = table[type(node.op)]()
        return True
    return False


def _swap_plus_minus(node: ast.AST) -> bool:
    return _swap_operator(node, _SWAP_ARITH)


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


# A second operator set, kept apart from OPERATORS / ALL_OPERATORS (which `sample_mutants` and the
# agreement test depend on): other slips, each applied at every site where it fits, some of them in
# several ways per site (a variant: which comparison of a chain, which bound of a slice, which statement).

Mutation = Callable[[ast.AST, int, ast.Module], bool]
"""`(node, variant, solution) -> applied`: mutate `node` in place in its `variant`-th way and return True,
or return False and leave the tree untouched. `solution` is a module holding the solution's statements."""


@dataclass(frozen=True)
class ExtraOperator:
    """An operator of the second set: a mutation tried in up to `variants` ways at each node."""

    mutate: Mutation
    variants: int = 1
    """How many ways (variant 0 .. variants-1) the operator tries at each node."""


def _become(node: ast.AST, new: ast.AST) -> None:
    """Turn `node` into `new` in place (same object, so its parent keeps pointing at it)."""
    ast.copy_location(new, node)
    node.__class__ = new.__class__
    node.__dict__.clear()
    node.__dict__.update(new.__dict__)


_BOUNDARY = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.LtE, ast.NotEq: ast.Gt,
    ast.Is: ast.Eq, ast.IsNot: ast.NotEq,
}  # fmt: skip
_REVERSE = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE}
_OTHER_ARITH = {
    ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Div, ast.Div: ast.FloorDiv, ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult, ast.Add: ast.Mult, ast.Sub: ast.Mult,
}  # fmt: skip
_SWAPPED_OPERANDS = ast.Sub | ast.Div | ast.FloorDiv | ast.Mod | ast.Pow
_BUILTIN_SWAP = {"min": "max", "max": "min", "any": "all", "all": "any", "sorted": "reversed"}
_DROPPABLE_CALLS = {"abs", "int", "str", "list", "set", "reversed", "float", "round", "bool", "tuple"}
_METHOD_SWAP = {
    "lower": "upper", "upper": "lower", "startswith": "endswith", "endswith": "startswith",
    "isupper": "islower", "islower": "isupper", "isdigit": "isalpha", "isalpha": "isdigit",
    "index": "rindex", "find": "rfind", "strip": "lstrip", "count": "find",
}  # fmt: skip
_SLICE_FIELDS = ("lower", "upper", "step")


def _compare_op(node: ast.AST, position: int, table: dict[type, type]) -> bool:
    if isinstance(node, ast.Compare) and position < len(node.ops) and type(node.ops[position]) in table:
        node.ops[position] = table[type(node.ops[position])]()
        return True
    return False


def _shift_boundary(node: ast.AST, position: int) -> bool:
    """`<` ↔ `<=`, `>` ↔ `>=`, `==` → `<=`, `!=` → `>`, `is` → `==`, `is not` → `!=`, at any position of a
    chained comparison."""
    return _compare_op(node, position, _BOUNDARY)


def _reverse_comparison(node: ast.AST, position: int) -> bool:
    """`<` ↔ `>`, `<=` ↔ `>=`, at any position of a chained comparison."""
    return _compare_op(node, position, _REVERSE)


def _change_number(node: ast.AST) -> bool:
    """An int constant minus one; a float constant doubled (0.0 becomes 1.0)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        node.value -= 1
        return True
    if isinstance(node, ast.Constant) and type(node.value) is float:
        node.value = node.value * 2 if node.value else 1.0
        return True
    return False


def _edit_string(node: ast.AST) -> bool:
    """A string constant without its last character ("" becomes " ")."""
    if isinstance(node, ast.Constant) and type(node.value) is str:
        node.value = node.value[:-1] if node.value else " "
        return True
    return False


def _swap_bool_none(node: ast.AST) -> bool:
    """`True` ↔ `False`; `None` → `0`."""
    if isinstance(node, ast.Constant) and type(node.value) is bool:
        node.value = not node.value
        return True
    if isinstance(node, ast.Constant) and node.value is None:
        node.value = 0
        return True
    return False


def _drop_unary(node: ast.AST) -> bool:
    """`not x`, `-x`, `~x` → `x`."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub | ast.Invert):
        _become(node, node.operand)
        return True
    return False


def _edit_slice(node: ast.AST, variant: int) -> bool:
    """Variants 0-5: drop the lower bound / make it one more (from 0 when absent), the same for the upper
    bound, drop the step / add a step of -1 where there is none."""
    if not isinstance(node, ast.Slice) or variant >= 2 * len(_SLICE_FIELDS):
        return False
    field = _SLICE_FIELDS[variant // 2]
    current = getattr(node, field)
    if variant % 2 == 0:
        if current is None:
            return False
        setattr(node, field, None)
    elif field == "step":
        if current is not None:
            return False
        node.step = ast.Constant(-1)
    else:
        setattr(node, field, ast.BinOp(current or ast.Constant(0), ast.Add(), ast.Constant(1)))
    return True


def _swap_operands(node: ast.AST) -> bool:
    """The first two arguments of a call (neither starred) swapped; the operands of `-`, `/`, `//`, `%`,
    `**` swapped."""
    if isinstance(node, ast.Call) and len(node.args) >= 2:
        if any(isinstance(a, ast.Starred) for a in node.args[:2]):
            return False
        node.args[0], node.args[1] = node.args[1], node.args[0]
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, _SWAPPED_OPERANDS):
        node.left, node.right = node.right, node.left
        return True
    return False


def _swap_container(node: ast.AST) -> bool:
    """A list display ↔ a tuple (not a one-element tuple); a list comprehension → a set comprehension."""
    if isinstance(node, ast.List) and isinstance(node.ctx, ast.Load):
        node.__class__ = ast.Tuple
        return True
    if isinstance(node, ast.Tuple) and isinstance(node.ctx, ast.Load) and len(node.elts) != 1:
        node.__class__ = ast.List
        return True
    if isinstance(node, ast.ListComp):
        node.__class__ = ast.SetComp
        return True
    return False


def _reverse_sort(node: ast.AST) -> bool:
    """`sorted(...)` / `x.sort(...)` in the other order: `reverse=r` → `reverse=not r`, else
    `reverse=True` added."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if not (isinstance(func, ast.Name) and func.id == "sorted") and not (
        isinstance(func, ast.Attribute) and func.attr == "sort"
    ):
        return False
    for keyword in node.keywords:
        if keyword.arg == "reverse":
            keyword.value = ast.UnaryOp(ast.Not(), keyword.value)
            return True
    node.keywords.append(ast.keyword("reverse", ast.Constant(True)))
    return True


def _swap_arithmetic(node: ast.AST) -> bool:
    """`*` → `//`, `//` ↔ `/`, `%` → `//`, `**` → `*`, `+` → `*`, `-` → `*` (also augmented)."""
    return _swap_operator(node, _OTHER_ARITH)


def _swap_builtin(node: ast.AST) -> bool:
    """`min` ↔ `max`, `any` ↔ `all`, `sorted` → `reversed`; `abs(x)`, `int(x)`, `str(x)`, ... → `x`;
    `range(a, b[, step])` → `range(b)`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return False
    name = node.func.id
    if name in _BUILTIN_SWAP:
        node.func.id = _BUILTIN_SWAP[name]
        return True
    if name in _DROPPABLE_CALLS and len(node.args) == 1 and not node.keywords:
        _become(node, node.args[0])
        return True
    if name == "range" and len(node.args) >= 2:
        node.args = [node.args[1]]
        return True
    return False


def _swap_method(node: ast.AST) -> bool:
    """A string or list method for a near one (`lower` ↔ `upper`, `startswith` ↔ `endswith`, `find` →
    `rfind`, ...), or the same method used wrongly: `append(x)` → `insert(0, x)`, `pop()` → `pop(0)`,
    `sep.join(x)` → `sep.join(x[::-1])`, `split()` ↔ `split(" ")`, `replace(a, b)` → `replace(b, a)`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    method = node.func.attr
    if method in _METHOD_SWAP:
        node.func.attr = _METHOD_SWAP[method]
    elif method == "append":
        node.func.attr = "insert"
        node.args.insert(0, ast.Constant(0))
    elif method == "join":
        node.args = [ast.Subscript(a, ast.Slice(None, None, ast.Constant(-1)), ast.Load()) for a in node.args]
    elif method == "pop" and not node.args:
        node.args = [ast.Constant(0)]
    elif method == "split":
        node.args = [] if node.args else [ast.Constant(" ")]
    elif method == "replace" and len(node.args) >= 2:
        node.args[0], node.args[1] = node.args[1], node.args[0]
    else:
        return False
    return True


def _augmented_to_plain(node: ast.AST) -> bool:
    """`x += y` → `x = y` (any augmented operator)."""
    if isinstance(node, ast.AugAssign):
        _become(node, ast.Assign(targets=[node.target], value=node.value, type_comment=None))
        return True
    return False


def _swap_break_continue(node: ast.AST) -> bool:
    """`break` ↔ `continue`."""
    if isinstance(node, ast.Break | ast.Continue):
        node.__class__ = ast.Continue if isinstance(node, ast.Break) else ast.Break
        return True
    return False


def _index_minus_one(node: ast.AST) -> bool:
    """`x[i]` → `x[i - 1]` for a variable index (constant indexes are the number operators' job)."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Name) and type(node.ctx) is ast.Load:
        node.slice = ast.BinOp(node.slice, ast.Sub(), ast.Constant(1))
        return True
    return False


def _negate_condition(node: ast.AST) -> bool:
    """The test of an `if`, `while` or conditional expression under `not`."""
    if isinstance(node, ast.If | ast.While | ast.IfExp):
        node.test = ast.UnaryOp(ast.Not(), node.test)
        return True
    return False


def _statement_lists(node: ast.AST) -> Iterator[list[ast.stmt]]:
    for field in ("body", "orelse", "finalbody"):
        statements = getattr(node, field, None)
        if isinstance(statements, list) and statements and isinstance(statements[0], ast.stmt):
            yield statements


def _drop_statement(node: ast.AST, variant: int, solution: ast.Module) -> bool:
    """The `variant`-th statement of a nested block (counting over the node's body, else and finally
    blocks of two or more statements) deleted, unless it is a `return`. Top-level statements stay."""
    if node is solution:
        return False
    for statements in _statement_lists(node):
        if len(statements) < 2:
            continue
        if variant < len(statements):
            if isinstance(statements[variant], ast.Return):
                return False
            del statements[variant]
            return True
        variant -= len(statements)
    return False


def _return_early(node: ast.AST, variant: int, solution: ast.Module) -> bool:
    """A copy of the solution's last top-level `return` inserted before statement `variant` of a loop
    body, or of a function body or the solution itself (not before their first statement)."""
    final = next((s for s in reversed(solution.body) if isinstance(s, ast.Return)), None)
    if final is None or not isinstance(node, ast.For | ast.While | ast.FunctionDef | ast.Module):
        return False
    if variant >= len(node.body) or (variant == 0 and not isinstance(node, ast.For | ast.While)):
        return False
    node.body.insert(variant, copy.deepcopy(final))
    return True


def _per_node(mutate: Callable[[ast.AST], bool]) -> ExtraOperator:
    """An operator that applies one way per node, anywhere inside the solution."""
    return ExtraOperator(lambda node, variant, module: variant == 0 and node is not module and mutate(node))


def _per_variant(mutate: Callable[[ast.AST, int], bool], variants: int) -> ExtraOperator:
    """An operator that applies in up to `variants` ways per node, anywhere inside the solution."""
    return ExtraOperator(lambda node, variant, module: node is not module and mutate(node, variant), variants)


EXTRA_OPERATORS: dict[str, ExtraOperator] = {
    "shift_boundary": _per_variant(_shift_boundary, 4),
    "reverse_comparison": _per_variant(_reverse_comparison, 4),
    "change_number": _per_node(_change_number),
    "edit_string": _per_node(_edit_string),
    "swap_bool_none": _per_node(_swap_bool_none),
    "drop_unary": _per_node(_drop_unary),
    "edit_slice": _per_variant(_edit_slice, 6),
    "swap_operands": _per_node(_swap_operands),
    "swap_container": _per_node(_swap_container),
    "reverse_sort": _per_node(_reverse_sort),
    "swap_arithmetic": _per_node(_swap_arithmetic),
    "swap_builtin": _per_node(_swap_builtin),
    "swap_method": _per_node(_swap_method),
    "augmented_to_plain": _per_node(_augmented_to_plain),
    "swap_break_continue": _per_node(_swap_break_continue),
    "index_minus_one": _per_node(_index_minus_one),
    "negate_condition": _per_node(_negate_condition),
    "drop_statement": ExtraOperator(_drop_statement, 12),
    "return_early": ExtraOperator(_return_early, 12),
}
"""Operators other than ALL_OPERATORS' (a comparison at any position of a chain, other constants and
operators, builtins and methods, statements); `extra_mutants` applies them."""

OPERATOR_SETS: dict[str, dict[str, Callable[[ast.AST], bool] | ExtraOperator]] = {
    "base": dict(ALL_OPERATORS),
    "extra": dict(EXTRA_OPERATORS),
    "all": {**ALL_OPERATORS, **EXTRA_OPERATORS},
}


def _solution_module(prompt: str, solution: str, entry_point: str) -> ast.Module:
    """The solution's statements (the entry point's body after the prompt) as a module of their own."""
    _, body = _solution_body(prompt, solution, entry_point)
    return ast.Module(body=body, type_ignores=[])


def _nodes(solution: ast.Module) -> list[ast.AST]:
    """The module itself, then every node of each statement, in a fixed order."""
    return [solution, *(node for stmt in solution.body for node in ast.walk(stmt))]


def _as_completion(solution: ast.Module) -> str:
    return textwrap.indent(ast.unparse(solution), "    ") + "\n"


def _compiles(source: str) -> bool:
    """Whether `source` compiles (its SyntaxWarnings, e.g. `x is 1`, silenced: such a mutant is kept)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            compile(source, "<mutant>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def extra_mutants(
    task_id: str,
    prompt: str,
    solution: str,
    entry_point: str,
    operators: dict[str, ExtraOperator] = EXTRA_OPERATORS,
) -> list[Mutant]:
    """Every single-site mutant of `solution` under `operators`, in a fixed order (operator, node,
    variant), leaving out programs that do not compile. `site` counts the operator's applicable
    (node, variant) pairs."""
    # An operator that does not apply leaves the tree as it was, so one tree serves until one does.
    module = _solution_module(prompt, solution, entry_point)
    nodes = _nodes(module)
    out = []
    for name, op in operators.items():
        site = 0
        for index in range(len(nodes)):
            for variant in range(op.variants):
                if not op.mutate(nodes[index], variant, module):
                    continue
                completion = _as_completion(module)
                if _compiles(prompt + completion):
                    out.append(Mutant(task_id, name, site, completion))
                site += 1
                module = _solution_module(prompt, solution, entry_point)
                nodes = _nodes(module)
    return out


def all_mutants(
    problems: dict,
    operators: dict[str, Callable[[ast.AST], bool] | ExtraOperator] = OPERATOR_SETS["all"],
) -> Iterator[Mutant]:
    """Every distinct mutant of each problem's canonical solution under `operators` (ALL_OPERATORS-style
    functions and ExtraOperators, in that order), once: a completion another operator already made for
    the task, or one that is the canonical solution again, is left out."""
    base = {name: op for name, op in operators.items() if not isinstance(op, ExtraOperator)}
    extra = {name: op for name, op in operators.items() if isinstance(op, ExtraOperator)}
    for task_id, p in problems.items():
        canonical = _as_completion(_solution_module(p.prompt, p.canonical_solution, p.entry_point))
        seen = {p.canonical_solution, canonical}
        candidates = mutants(task_id, p.prompt, p.canonical_solution, p.entry_point, base) if base else []
        candidates += extra_mutants(task_id, p.prompt, p.canonical_solution, p.entry_point, extra)
        for m in candidates:
            if m.completion not in seen:
                seen.add(m.completion)
                yield m

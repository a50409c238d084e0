"""The mutant generator of the agreement checks (tests/mutants.py): single-site, distinct, compiling."""

from __future__ import annotations

import ast
import collections

from mutants import OPERATOR_SETS, all_mutants, mutants

from coding_framework.evals.datasets.humaneval import load_humaneval

PROBLEMS = load_humaneval()
SOME = {task: PROBLEMS[task] for task in ("HumanEval/0", "HumanEval/12", "HumanEval/36", "HumanEval/129")}


def _compare_ops(prompt: str, completion: str) -> list[str]:
    tree = ast.parse(prompt + completion)
    return [type(op).__name__ for node in ast.walk(tree) if isinstance(node, ast.Compare) for op in node.ops]


def test_a_flipped_comparison_mutant_differs_from_the_solution_in_that_comparison_alone():
    # The site search tries operators on shallow copies: writing into a list they share flipped every
    # comparison but the chosen one (37 of the agreement test's 314 mutants were the solution again).
    checked = 0
    for task, p in SOME.items():
        original = _compare_ops(p.prompt, p.canonical_solution)
        for m in mutants(task, p.prompt, p.canonical_solution, p.entry_point):
            if m.operator != "flip_comparison":
                continue
            changed = sum(a != b for a, b in zip(original, _compare_ops(p.prompt, m.completion), strict=True))
            assert changed == 1, (task, m.site, m.completion)
            checked += 1
    assert checked >= 8


def test_all_mutants_are_distinct_compile_and_are_never_the_solution():
    found = list(all_mutants(SOME, OPERATOR_SETS["all"]))
    per_task = collections.Counter(m.task_id for m in found)
    assert set(per_task) == set(SOME) and min(per_task.values()) >= 10
    assert len({(m.task_id, m.completion) for m in found}) == len(found)
    operators = {m.operator for m in found}
    assert operators & set(OPERATOR_SETS["base"]) and operators & set(OPERATOR_SETS["extra"])
    for m in found:
        p = SOME[m.task_id]
        compile(p.prompt + m.completion, m.task_id, "exec")
        assert ast.unparse(ast.parse(p.prompt + m.completion)) != ast.unparse(
            ast.parse(p.prompt + p.canonical_solution)), (m.task_id, m.operator)

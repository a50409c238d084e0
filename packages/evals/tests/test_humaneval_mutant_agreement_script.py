"""benchmarks/evals/humaneval_mutant_agreement.py's sampling of mutants per task (`--limit-per-task`)."""

from __future__ import annotations

from collections import namedtuple

from conftest import load_benchmark_script

agreement = load_benchmark_script("evals/humaneval_mutant_agreement.py")
M = namedtuple("M", "operator site")


def _mutants() -> list:
    return [M(op, site) for op in "abc" for site in range(3)]


def test_no_limit_keeps_every_mutant_in_order():
    assert agreement.round_robin(_mutants(), None) == _mutants()
    assert agreement.round_robin(_mutants(), 9, start=5) == _mutants()


def test_a_limit_takes_operators_in_turn_from_the_start_given():
    assert agreement.round_robin(_mutants(), 4) == [M("a", 0), M("b", 0), M("c", 0), M("a", 1)]
    assert agreement.round_robin(_mutants(), 2, start=1) == [M("b", 0), M("c", 0)]
    assert agreement.round_robin(_mutants(), 2, start=5) == [M("c", 0), M("a", 0)]


def test_operators_that_run_out_are_passed_over():
    mutants = [M("a", 0), M("b", 0), M("b", 1), M("b", 2)]
    assert agreement.round_robin(mutants, 3, start=0) == [M("a", 0), M("b", 0), M("b", 1)]

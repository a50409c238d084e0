"""BigCodeBench: the release format, calibrated and plain programs, prompts, and unittest suites in
the real sandbox with its defences (tampering rejected, every test must report)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from conftest import FIXTURES

from coding_framework.evals.benchmarks import get_benchmark
from coding_framework.evals.datasets.bigcodebench import (
    PRELUDE,
    bigcodebench_job,
    bigcodebench_preload,
    bigcodebench_program,
    bigcodebench_prompt,
    load_bigcodebench,
    load_bigcodebench_hard,
)
from coding_framework.evals.errors import DatasetNotFoundError, InputFileError
from coding_framework.evals.runner import EvalConfig, _pool_extras, evaluate_file
from coding_framework.sandbox import UNITTEST_PRELOAD

FULL = FIXTURES / "BigCodeBench-fixture.jsonl"
HARD = FIXTURES / "BigCodeBench-Hard-fixture.jsonl"


def test_loads_both_subsets_and_parses_libs():
    full = load_bigcodebench(FULL)
    assert list(full) == ["BigCodeBench/0", "BigCodeBench/1", "BigCodeBench/2"]
    assert full["BigCodeBench/0"].libs == ("collections",)  # stored as "['collections']"
    assert list(load_bigcodebench_hard(HARD)) == ["BigCodeBench/1", "BigCodeBench/2"]


def test_bad_rows_and_missing_files(tmp_path, monkeypatch):
    row = json.loads(FULL.read_text().splitlines()[0])
    path = tmp_path / "b.jsonl"
    path.write_text(json.dumps({**row, "libs": "not a list", "test": 3}) + "\n")
    with pytest.raises(InputFileError, match=r"b\.jsonl:1: .*malformed: test, libs$"):
        load_bigcodebench(path)
    with pytest.raises(
        DatasetNotFoundError, match=r"CF_EVALS_BIGCODEBENCH_HARD=PATH.*bigcodebench-annotation"
    ):
        load_bigcodebench_hard()
    monkeypatch.setenv("CF_EVALS_DATA_DIR", str(tmp_path))
    (tmp_path / "BigCodeBench.jsonl").write_text(FULL.read_text())
    assert len(load_bigcodebench()) == 3  # found under its official name in the data dir


def test_program_calibration_and_prelude():
    problem = load_bigcodebench(FULL)["BigCodeBench/0"]
    body = "    return {}\n"
    plain = bigcodebench_program(problem, body, calibrated=False)
    assert plain == PRELUDE + problem.complete_prompt + body
    calibrated = bigcodebench_program(problem, body)
    assert calibrated == PRELUDE + problem.code_prompt + "\n    pass\n" + problem.complete_prompt + body
    solution = "def task_func(text):\n    return {}\n"
    assert bigcodebench_program(problem, "", solution=solution, calibrated=False) == PRELUDE + solution
    job = bigcodebench_job(problem, body, timeout_s=12.0, memory_mb=2048)
    assert (job.limits.timeout_s, job.limits.memory_mb, job.test) == (12.0, 2048, problem.test)


def test_libraries_enough_samples_use_are_preloaded_by_each_worker():
    stdlib = load_bigcodebench(FULL)["BigCodeBench/0"]
    plotting = dataclasses.replace(stdlib, task_id="P", libs=("pandas", "matplotlib", "random"))
    fitting = dataclasses.replace(stdlib, task_id="F", libs=("sklearn", "numpy", "numpy"))
    assert bigcodebench_preload([]) == ()
    assert bigcodebench_preload([stdlib] * 10) == ()
    # pandas and matplotlib in 2 samples of 10 (>= 20%), sklearn and numpy in 1 (< 20%)
    assert bigcodebench_preload([stdlib] * 7 + [plotting] * 2 + [fitting]) == ("pandas", "matplotlib.pyplot")
    assert bigcodebench_preload([plotting, fitting]) == ("numpy", "pandas", "matplotlib.pyplot", "sklearn")
    extras = _pool_extras(get_benchmark("bigcodebench"), FULL, [stdlib, plotting])
    assert extras["preload"][-2:] == ("pandas", "matplotlib.pyplot")
    # and what every unittest child imports to guard the tests, once per worker
    assert set(UNITTEST_PRELOAD) <= set(extras["preload"])
    assert {"unittest.mock", "unittest.case", "pdb"} <= set(UNITTEST_PRELOAD)
    assert "pandas" not in _pool_extras(get_benchmark("bigcodebench"), FULL, [stdlib])["preload"]


def test_a_run_whose_tasks_use_pandas_finds_it_loaded_by_the_worker(tmp_path):
    # The program times its own `import pandas` (CPU seconds): ~0.25 s in a fresh interpreter, nothing
    # when the worker's zygote preloaded it.
    row = json.loads(FULL.read_text().splitlines()[0])
    program = (
        "import time\nSTART = time.process_time()\nimport pandas as pd\n"
        "PRELOADED = time.process_time() - START < 0.05\n"
    )
    task = {
        **row,
        "task_id": "Preload/0",
        "libs": "['pandas']",
        "code_prompt": program + "def task_func(n):\n",
        "complete_prompt": program + "def task_func(n):\n",
        "canonical_solution": "    return PRELOADED, int(pd.Series(range(n)).sum())\n",
        "test": "import unittest\nclass TestCases(unittest.TestCase):\n    def test_sum(self):\n"
        "        self.assertEqual(task_func(4), (True, 6))\n",
    }
    problems = tmp_path / "p.jsonl"
    problems.write_text(json.dumps(task) + "\n")
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "Preload/0", "completion": task["canonical_solution"]}) + "\n")
    config = EvalConfig(
        samples,
        benchmark="bigcodebench",
        problem_file=problems,
        ks=(1,),
        workers=1,
        timeout_s=60,
        options={"calibrated": False},  # (calibration would run the import once before the program)
        report=False,
    )
    (result,) = evaluate_file(config).results
    assert result.passed, result.result


def test_prompts():
    problem = load_bigcodebench(FULL)["BigCodeBench/1"]
    complete = bigcodebench_prompt(problem, "completion")
    assert complete.text == problem.complete_prompt and "\nif __name__" in complete.stop
    instruct = bigcodebench_prompt(problem, "instruct")
    assert instruct.text == problem.instruct_prompt
    answer = "Sure:\n```python\nimport os\ndef task_func(directory, extension):\n    return []\n```\n"
    assert (
        instruct.sample_fields(answer)["solution"]
        == "import os\ndef task_func(directory, extension):\n    return []\n"
    )


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bcb")
    problems = load_bigcodebench(FULL)
    rows = [
        {"task_id": t, "solution": p.complete_prompt + "\n" + p.canonical_solution, "kind": "reference"}
        for t, p in problems.items()
    ]
    rows += [
        # no import of Counter: passes only because calibration puts code_prompt's imports in front
        {
            "task_id": "BigCodeBench/0",
            "kind": "needs-calibration",
            "solution": "def task_func(text):\n    return dict(Counter(text.split()).most_common())\n",
        },
        {
            "task_id": "BigCodeBench/0",
            "kind": "wrong",
            "completion": "    return dict(Counter(text.split()))\n",
        },
        {
            "task_id": "BigCodeBench/1",
            "kind": "ignores-mock",
            "completion": "    return ['a.txt', 'c.txt']\n",
        },
        {
            "task_id": "BigCodeBench/2",
            "kind": "tampering",
            "completion": "    import unittest\n    unittest.TestCase.run = lambda self, result=None: None\n",
        },
        {
            "task_id": "BigCodeBench/2",
            "kind": "dies",
            "completion": "    import os\n    os.kill(os.getpid(), 9)\n",
        },
    ]
    samples = tmp / "s.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    results = {}
    for calibrated in (True, False):
        ev = evaluate_file(
            EvalConfig(
                samples,
                benchmark="bigcodebench",
                problem_file=FULL,
                ks=(1,),
                workers=2,
                timeout_s=30,
                options={"calibrated": calibrated},
                output_file=tmp / f"r-{calibrated}.jsonl",
                report=False,
            )
        )
        results[calibrated] = {
            r["kind"] + (f"#{i}" if r["kind"] == "reference" else ""): (r["status"], r["result"])
            for i, r in enumerate(json.loads(x) for x in ev.results_path.read_text().splitlines())
        }
    return results


def test_references_pass_in_both_modes(judged):
    for calibrated in (True, False):
        refs = {k: v for k, v in judged[calibrated].items() if k.startswith("reference")}
        assert len(refs) == 3 and all(status == "passed" for status, _ in refs.values()), refs


def test_calibrated_mode_supplies_the_code_prompt(judged):
    assert judged[True]["needs-calibration"][0] == "passed"
    status, result = judged[False]["needs-calibration"]
    assert status == "error" and "NameError: name 'Counter' is not defined" in result


def test_wrong_programs_fail_with_the_test_named(judged):
    status, result = judged[True]["wrong"]
    assert status == "failed" and result.startswith("failed: TestCases.test_most_common_first fail")
    status, result = judged[True]["ignores-mock"]
    assert status == "failed" and "Expected 'listdir' to be called once. Called 0 times." in result


def test_harness_defences_hold(judged):
    status, result = judged[True]["tampering"]
    assert status == "error" and result == "error: the program touches the test harness: TestCase, unittest"
    status, result = judged[True]["dies"]
    assert status == "error" and "killed by SIGKILL" in result  # no report, no pass

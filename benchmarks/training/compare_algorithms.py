"""Compare RL algorithms on the embedded task at equal sample budgets, over several seeds.

Each (algorithm, seed) is one real `coding-framework train` run (the embedded default: the project's
small model, generated train-split problems, hidden tests in the sandbox) with the same prompts per
step, group size and number of steps, so every algorithm draws the same number of rollouts per step
(DAPO's dynamic sampling may draw extra rounds; the table reports the samples actually generated). From
each run's summary.json and metrics.jsonl it reports held-out pass@1 before/after and the gain, wall
time, trained samples per second of step time, and the share of step time spent computing rewards.

    .venv/bin/python benchmarks/training/compare_algorithms.py --out /tmp/algo-compare \\
        --algorithms grpo,rloo,ppo,reinforce_plus_plus,dapo --seeds 0,1,2 --parallel 2

Extra `key=value` arguments after `--` are passed to every run (e.g. `-- engine.max_steps=40`). Results
land in OUT/results.json and OUT/results.md (a markdown table, also printed); runs already finished in
OUT are reused, so an interrupted comparison resumes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DEFAULT_ALGORITHMS = ("grpo", "rloo", "ppo", "reinforce_plus_plus", "dapo")


def run_one(out: Path, algorithm: str, seed: int, overrides: list[str], threads: int) -> dict[str, Any]:
    """Train once (or reuse a finished run dir) and return its row of measurements."""
    run_dir = out / f"{algorithm}-s{seed}"
    summary_path = run_dir / "summary.json"
    if not summary_path.exists():
        # An interrupted run with checkpoints continues rather than starting over.
        resume = ["--resume"] if (run_dir / "checkpoints").exists() else []
        command = [
            sys.executable, "-m", "coding_framework.cli.main", "train", "--algorithm", algorithm,
            "--seed", str(seed), "--run-dir", str(run_dir), *resume,
            f"engine.num_threads={threads}", "logging.mlflow=off", *overrides,
        ]
        log = out / f"{algorithm}-s{seed}.log"
        with log.open("w") as handle:
            done = subprocess.run(command, cwd=REPO, stdout=handle, stderr=subprocess.STDOUT, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{algorithm} seed {seed} failed (exit {done.returncode}); see {log}")
    return row_of(run_dir, algorithm, seed)


def row_of(run_dir: Path, algorithm: str, seed: int) -> dict[str, Any]:
    """One run's measurements from its summary.json and metrics.jsonl."""
    summary = json.loads((run_dir / "summary.json").read_text())
    steps = [json.loads(line)["metrics"] for line in (run_dir / "metrics.jsonl").read_text().splitlines()
             if line.strip()]
    steps = [m for m in steps if "time/step" in m]
    step_seconds = sum(m["time/step"] for m in steps)
    generated = sum(m["samples"] for m in steps)
    heldout = summary["heldout"]
    return {
        "algorithm": algorithm,
        "seed": seed,
        "steps": summary["steps"],
        "pass_at_1_before": heldout["pass_at_1_before"],
        "pass_at_1_after": heldout["pass_at_1_after"],
        "gain": heldout["pass_at_1_after"] - heldout["pass_at_1_before"],
        "n_heldout": heldout["n_problems"],
        # Summaries before cli 0.4 name no set: they measured what is now agents' validation set.
        "heldout_set": heldout.get("set", "validation"),
        "wall_seconds": summary["wall_seconds"],
        "step_seconds": step_seconds,
        "samples_generated": generated,
        "samples_per_second": generated / step_seconds if step_seconds else math.nan,
        "reward_time_share": summary["reward_time_share"],
        "final_train_pass_rate": steps[-1].get("pass_rate") if steps else None,
    }


def aggregate(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per algorithm: mean and sample std over seeds of each measurement."""
    table = []
    for algorithm in dict.fromkeys(r["algorithm"] for r in rows):
        mine = [r for r in rows if r["algorithm"] == algorithm]
        entry: dict[str, Any] = {"algorithm": algorithm, "seeds": [r["seed"] for r in mine]}
        for key in ("gain", "pass_at_1_after", "wall_seconds", "samples_per_second", "reward_time_share",
                    "samples_generated"):
            values = [float(r[key]) for r in mine]
            entry[key] = statistics.fmean(values)
            entry[f"{key}_std"] = statistics.stdev(values) if len(values) > 1 else 0.0
        table.append(entry)
    return table


def markdown(table: list[dict[str, Any]], rows: list[dict[str, Any]]) -> str:
    sets = sorted({r["heldout_set"] for r in rows})
    measured = {"heldout": "held-out", "validation": "validation"}.get(sets[0], sets[0]) if len(sets) == 1 \
        else "mixed-set"
    lines = [
        f"| algorithm | seeds | {measured} pass@1 gain (pts) | pass@1 after | wall (s) | samples/s | "
        "reward share of step time | samples generated |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for e in table:
        lines.append(
            f"| {e['algorithm']} | {len(e['seeds'])} | {100 * e['gain']:+.1f} ± {100 * e['gain_std']:.1f} | "
            f"{e['pass_at_1_after']:.3f} | {e['wall_seconds']:.0f} ± {e['wall_seconds_std']:.0f} | "
            f"{e['samples_per_second']:.1f} | {100 * e['reward_time_share']:.1f}% | "
            f"{e['samples_generated']:.0f} |"
        )
    lines += ["", "Per run (before → after):", ""]
    for r in rows:
        lines.append(f"- {r['algorithm']} seed {r['seed']}: {r['pass_at_1_before']:.3f} → "
                     f"{r['pass_at_1_after']:.3f} ({100 * r['gain']:+.1f} pts), {r['wall_seconds']:.0f} s")
    return "\n".join(lines)


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="directory for the runs and results")
    parser.add_argument("--algorithms", default=",".join(DEFAULT_ALGORITHMS),
                        help="comma-separated `coding-framework train --algorithm` presets")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds")
    parser.add_argument("--parallel", type=int, default=1,
                        help="runs at a time (each gets cores/parallel torch threads)")
    parser.add_argument("overrides", nargs="*", help="key=value job-spec overrides for every run")
    args = parser.parse_args(argv)
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--seeds {args.seeds!r}: give comma-separated integers, e.g. 0,1,2")
    algorithms = [a.strip() for a in args.algorithms.split(",") if a.strip()]
    if not algorithms or not seeds or args.parallel < 1:
        parser.error("need at least one algorithm, one seed and --parallel >= 1")
    args.out.mkdir(parents=True, exist_ok=True)
    threads = max(1, (os.cpu_count() or 1) // args.parallel)
    began = time.perf_counter()
    jobs = [(a, s) for s in seeds for a in algorithms]
    with ThreadPoolExecutor(args.parallel) as pool:
        rows = list(pool.map(lambda job: run_one(args.out, job[0], job[1], args.overrides, threads), jobs))
    table = aggregate(rows)
    results = {
        "command": " ".join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]),
        "parallel": args.parallel,
        "threads_per_run": threads,
        "overrides": args.overrides,
        "seconds": time.perf_counter() - began,
        "runs": rows,
        "per_algorithm": table,
    }
    write_atomic(args.out / "results.json", json.dumps(results, indent=2) + "\n")
    text = markdown(table, rows)
    write_atomic(args.out / "results.md", text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

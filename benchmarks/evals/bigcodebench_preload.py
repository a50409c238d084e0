"""What preloading BigCodeBench's heavy libraries in each sandbox worker costs and saves per sample.

Two unittest jobs, each run by a one-worker pool with the bigcodebench benchmark's preload and by one
that also imports numpy, pandas and matplotlib.pyplot once per worker (bigcodebench_preload's choice
when enough of the scored tasks list them), interleaved in rounds:

- "stdlib": the fixture's BigCodeBench/0 (collections only) with its reference solution;
- "pandas+plot": a task of our own in BigCodeBench's style (a DataFrame built and plotted, three tests).

Prints the median wall time per sample of each (job, pool) pair over all rounds. Pools are started
outside the timed region (their start is in the table too); every sample must pass.

    .venv/bin/python benchmarks/evals/bigcodebench_preload.py --samples 5 --rounds 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from coding_framework.evals.benchmarks import get_benchmark
from coding_framework.evals.datasets.bigcodebench import (
    bigcodebench_job,
    bigcodebench_reference,
    load_bigcodebench,
)
from coding_framework.evals.runner import _pool_extras
from coding_framework.sandbox import Limits, SandboxPool, Status, UnittestJob

FIXTURE = Path(__file__).resolve().parents[2] / "packages/evals/tests/fixtures/BigCodeBench-fixture.jsonl"
HEAVY = ("numpy", "pandas", "matplotlib.pyplot")
PLOTTING_PROGRAM = """
import pandas as pd
import numpy as np
import matplotlib.pyplot as plt
def task_func(n):
    df = pd.DataFrame({"a": np.arange(n), "b": np.arange(n) * 2})
    ax = df.plot(x="a", y="b")
    return df, ax
"""
PLOTTING_TEST = """
import unittest
import matplotlib.pyplot as plt
class TestCases(unittest.TestCase):
    def test_shape(self):
        df, ax = task_func(5)
        self.assertEqual(df.shape, (5, 2))
    def test_sum(self):
        df, ax = task_func(4)
        self.assertEqual(int(df["b"].sum()), 12)
    def test_axes(self):
        df, ax = task_func(3)
        self.assertIsInstance(ax, plt.Axes)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=5, help="samples per job, pool and round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    problem = load_bigcodebench(FIXTURE)["BigCodeBench/0"]
    reference = bigcodebench_reference(problem)
    jobs = {
        "stdlib": bigcodebench_job(problem, reference["completion"], solution=reference["solution"]),
        "pandas+plot": UnittestJob(program=PLOTTING_PROGRAM, test=PLOTTING_TEST,
                                   limits=Limits(timeout_s=60, memory_mb=4096)),
    }
    base = _pool_extras(get_benchmark("bigcodebench"), FIXTURE)["preload"]
    preloads = {"benchmark preload": base, "+ numpy, pandas, pyplot": (*base, *HEAVY)}
    times: dict[tuple[str, str], list[float]] = {(j, p): [] for j in jobs for p in preloads}
    starts: dict[str, list[float]] = {p: [] for p in preloads}
    print(f"load average {os.getloadavg()[0]:.2f}")
    for _ in range(args.rounds):
        for name, preload in preloads.items():
            began = time.perf_counter()
            with SandboxPool(workers=1, preload=preload, require_isolation=True) as pool:
                starts[name].append(time.perf_counter() - began)
                for job_name, job in jobs.items():
                    for _ in range(args.samples):
                        began = time.perf_counter()
                        verdict = pool.run(job)
                        times[job_name, name].append(time.perf_counter() - began)
                        if verdict.status is not Status.PASSED:
                            raise SystemExit(f"{job_name} under {name}: {verdict.status.value} "
                                             f"{verdict.message}")
    print("| job | " + " | ".join(preloads) + " |\n|---|" + "---|" * len(preloads))
    for job_name in jobs:
        cells = [f"{statistics.median(times[job_name, p]):.3f} s" for p in preloads]
        print(f"| {job_name} | " + " | ".join(cells) + " |")
    print("| pool start | " + " | ".join(f"{statistics.median(starts[p]):.2f} s" for p in preloads) + " |")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

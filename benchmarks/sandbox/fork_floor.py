"""The floor under any fork-per-sample CPython sandbox on this machine, without our code in the way.

Measures, in a process that imports what the sandbox's zygote imports (its modules and the default
preload, then gc.freeze), the CPU that the kernel and the interpreter charge for:

- fork+exit:      a raw fork(2) whose child exits at once (parent side + child side);
- fork+run:       the same child first compiles a two-line function, runs it and calls it nine times
                  (about what a HumanEval sample does besides its own work), still in-process;
- copy-on-write:  the cost of one page fault that copies a page shared with the parent;
- per MB:         what each MiB of the parent's touched anonymous memory adds to fork+exit.

CPU is user + system from getrusage (children: as reaped). The script imports nothing beyond what a
zygote has before it measures (no argparse, statistics or ast). Run from the repo root:

    .venv/bin/python -I benchmarks/sandbox/fork_floor.py [FORKS [ROUNDS]] [--without-guard]

`--without-guard`: the zygote's modules but the unittest jobs' in-process guard (suite_runner and
in_process_guard, which every zygote imports today): what the guard costs a pool that runs only
function-call and program jobs (HumanEval), per fork.
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import os
import re
import resource
import sys

SANDBOX_SRC = os.path.realpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "packages", "sandbox", "src"))
WORK = "def f(x):\n    return sorted(x)[::-1]\n"


def _cpu(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


def forks(n: int, child) -> tuple[float, float, float]:
    """(parent µs, child µs, child minor faults) per fork of a child running `child()` then _exit."""
    fork = ctypes.PyDLL(None).fork  # what the zygote uses: no at-fork hooks
    self0, kids0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(n):
        pid = fork()
        if pid == 0:
            child()
            os._exit(0)
        os.waitpid(pid, 0)
    self1, kids1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return (1e6 * (_cpu(self1) - _cpu(self0)) / n, 1e6 * (_cpu(kids1) - _cpu(kids0)) / n,
            (kids1.ru_minflt - kids0.ru_minflt) / n)


def run_work() -> None:
    namespace: dict = {}
    exec(compile(WORK, "<candidate>", "exec"), namespace)
    for _ in range(9):
        namespace["f"]([3, 1, 2])


def cow_fault_us(pages: int = 2000) -> float:
    """CPU per copy-on-write fault, from a child writing one byte into each of `pages` shared pages."""
    import mmap

    buf = mmap.mmap(-1, pages * 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    for i in range(pages):
        buf[i * 4096] = 1
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        before = resource.getrusage(resource.RUSAGE_SELF)
        for i in range(pages):
            buf[i * 4096] = 2
        after = resource.getrusage(resource.RUSAGE_SELF)
        os.write(write, repr(1e6 * (_cpu(after) - _cpu(before)) / pages).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    value = float(os.read(read, 64))
    os.close(read)
    buf.close()
    return value


def default_preload() -> list[str]:
    """pool.DEFAULT_PRELOAD, read from the source: importing the pool would load what no zygote has."""
    with open(os.path.join(SANDBOX_SRC, "coding_framework", "sandbox", "pool.py")) as fh:
        found = re.search(r"^DEFAULT_PRELOAD = \((.*?)\)$", fh.read(), re.M | re.S)
    if found is None:
        raise LookupError("DEFAULT_PRELOAD not found in pool.py")
    return re.findall(r'"([\w.]+)"', found.group(1))


def median(values) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def main(argv: list[str]) -> int:
    without_guard = "--without-guard" in argv
    argv = [arg for arg in argv if arg != "--without-guard"]
    n_forks = int(argv[0]) if argv else 500
    rounds = int(argv[1]) if len(argv) > 1 else 3
    sys.path.insert(0, SANDBOX_SRC)
    if without_guard:
        from coding_framework.sandbox import child, isolation  # noqa: F401 - the zygote's, but the guard
    else:
        from coding_framework.sandbox import isolation, zygote  # noqa: F401 - what the zygote process imports

    for name in default_preload():
        importlib.import_module(name)
    run_work()  # what the zygote's warm-up does: lazily built interpreter state exists before forking
    gc.collect()
    gc.freeze()
    isolation.release_free_heap()
    with open("/proc/self/status") as fh:
        status = dict(line.split(":", 1) for line in fh)
    with open("/proc/self/maps") as fh:
        vmas = sum(1 for _ in fh)
    print(f"parent{' without the guard' if without_guard else ''}: RssAnon {status['RssAnon'].strip()}, "
          f"{vmas} mappings; load average "
          f"{os.getloadavg()[0]:.2f}")
    rows: dict[str, list] = {"fork+exit": [], "fork+run": []}
    for _ in range(rounds):
        rows["fork+exit"].append(forks(n_forks, lambda: None))
        rows["fork+run"].append(forks(n_forks, run_work))
    for name, results in rows.items():
        parent = median(r[0] for r in results)
        kid = median(r[1] for r in results)
        faults = median(r[2] for r in results)
        print(f"{name:10s} parent {parent:6.0f} µs + child {kid:6.0f} µs = {parent + kid:6.0f} µs per "
              f"sample; child page faults {faults:.0f}")
    print(f"copy-on-write fault: {median(cow_fault_us() for _ in range(rounds)):.2f} µs CPU")
    import mmap

    extra = mmap.mmap(-1, 8 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    for i in range(0, 8 << 20, 4096):
        extra[i] = 1
    with_extra = median(sum(forks(n_forks, lambda: None)[:2]) for _ in range(rounds))
    without = median(sum(r[:2]) for r in rows["fork+exit"])
    print(f"each MiB of touched parent memory adds {(with_extra - without) / 8:.0f} µs to fork+exit")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

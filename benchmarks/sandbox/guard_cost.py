"""What the in-process guard of unittest jobs costs, part by part (sandbox.in_process_guard).

Each measurement runs in a fresh interpreter with a BigCodeBench-like load (numpy, pandas, matplotlib,
sklearn, scipy imported), in the order a unittest child does it, and without the sandbox around it:

- record:       recording the bindings of every loaded module (twice per sample, before the program:
                once for the checks in the tests' thread, once for the harness's own thread);
- check:        comparing them again, as the tests' thread's checks do (the one after each guarded
                call's return, below, is the same walk);
- harness record, harness check: the harness thread's own record (with each namespace's version tag)
                and its check after the program loads and after every test: namespaces read through
                str-keyed copies, those whose version tag has not moved skipped, under the trace
                function that thread runs with (suite_runner._stop_program_code);
- call check:   the check at each guarded call's return (rebindings to the program's code only);
- value check:  the returned-value walk over a 1000-row DataFrame with an object column;
- plot checks:  the same walk over a returned matplotlib Axes (one line plot) and over a drawn 3x3 grid
                of plots (every Axes' ticks and texts made), each against the time to make that value
                in the same run (pyplot imported after the timings above, which keep their module set);
- watched:      the tests' own code between the program's calls runs under outside_calls' watch (a C
                profile function): drawing the 3x3 grid again with the watch running, against the
                same drawing before it (last in the run: the watch stays for the process's life);
- imports:      importing a set of not-yet-loaded modules (scipy.stats, sklearn.ensemble,
                matplotlib.pyplot, PIL.Image, requests) with the guard's audit hook, with a hook that
                does nothing (what any Python-level audit hook costs: the interpreter calls it for
                every audited event), and with none; each in its own fresh interpreter, interleaved
                over rounds.

Run from the repo root:

    .venv/bin/python benchmarks/sandbox/guard_cost.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

LOAD = "import numpy, pandas, matplotlib, sklearn, scipy\n"
LATE_IMPORTS = "import scipy.stats, sklearn.ensemble, matplotlib.pyplot, PIL.Image, requests\n"

PARTS = LOAD + '''
import json, sys, time
from coding_framework.sandbox import in_process_guard as guard, suite_runner

def traced(tracer, fn):
    sys.settrace(tracer)
    try:
        return fn()
    finally:
        sys.settrace(None)

def median_ms(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(1000 * (time.perf_counter() - t))
    times.sort()
    return times[len(times) // 2]

def measure():
    # Inside a function: names made after the recording must not change a module (here __main__),
    # as in a sandbox child, where nothing the guard records changes between its checks.
    strict = {"unittest", "numpy", "pandas"}
    before = guard.record(strict)
    trust = guard.make_trust(guard.trusted_roots(sys.path, ("/tmp",)), guard.CodeSet())
    check = guard.make_checker([before], trust)
    call_check = guard.make_checker([before], trust, program_made_only=True)
    private = guard.record(strict, private=True)
    harness_check = guard.make_checker([private], trust, harness_side=True)
    assert check() == [] and call_check() == [] and harness_check() == []
    # The harness thread's trace function, with a trust that passes this script's own code (the real
    # one ends the process at the first call of code from outside the trusted directories).
    tracer = suite_runner._stop_program_code(lambda code: trust(code) or True)
    frame = pandas.DataFrame({"a": range(1000), "b": [str(i) for i in range(1000)]})
    assert guard.foreign_answerer(frame, trust) is None
    found = {
        "modules": len(sys.modules),
        "record_ms": median_ms(lambda: guard.record(strict), 15),
        "check_ms": median_ms(check, 15),
        "call_check_ms": median_ms(call_check, 15),
        "harness_record_ms": median_ms(lambda: guard.record(strict, private=True), 15),
        "twin_ms": median_ms(private.twin, 15),  # (the tests' thread's record in a child)
        "harness_check_ms": traced(tracer, lambda: median_ms(harness_check, 15)),
        "value_check_ms": median_ms(lambda: guard.foreign_answerer(frame, trust), 15),
    }
    import matplotlib.pyplot as plt

    def line_plot():
        fig, ax = plt.subplots()
        ax.plot(range(50), [i * i for i in range(50)])
        ax.set_title("squares")
        return ax

    def drawn_grid():
        fig, axes = plt.subplots(3, 3)
        for ax in axes.flat:
            ax.plot(range(50))
        fig.canvas.draw()
        return fig

    for name, make in (("axes", line_plot), ("grid", drawn_grid)):
        found[name + "_make_ms"] = median_ms(lambda: (make(), plt.close("all")), 9)
        value = make()
        assert guard.foreign_answerer(value, trust) is None
        found[name + "_check_ms"] = median_ms(lambda: guard.foreign_answerer(value, trust), 9)
        plt.close("all")
    guard.outside_calls.watch({}, {}, {}, {}, (measure.__code__,), ())
    guard.outside_calls.resume()  # (from here on this thread is watched: the C profile function is set)
    found["grid_make_watched_ms"] = median_ms(lambda: (drawn_grid(), plt.close("all")), 9)
    return found

print(json.dumps(measure()))
'''

IMPORTS = LOAD + '''
import json, sys, time
{hook}
t = time.perf_counter()
''' + LATE_IMPORTS + '''
print(json.dumps({{"import_ms": 1000 * (time.perf_counter() - t)}}))
'''
HOOK = ("from coding_framework.sandbox import in_process_guard as guard\n"
        "guard.install_audit_hook(guard.trusted_roots(sys.path, ('/tmp',)), guard.CodeSet())\n")
NO_HOOK = "from coding_framework.sandbox import in_process_guard as guard\n"
BARE_HOOK = NO_HOOK + "sys.addaudithook(lambda event, args: None)\n"


def run(source: str) -> dict:
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, check=False,
                          env={**os.environ, "MPLBACKEND": "Agg"})
    if done.returncode != 0:
        raise SystemExit(f"measurement failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f}; {args.rounds} rounds")
    parts = [run(PARTS) for _ in range(args.rounds)]
    times: dict[str, list[float]] = {"guard's hook": [], "a hook doing nothing": [], "no hook": []}
    for _ in range(args.rounds):  # interleaved, so load falls on all alike
        for name, hook in zip(times, (HOOK, BARE_HOOK, NO_HOOK), strict=True):
            times[name].append(run(IMPORTS.format(hook=hook))["import_ms"])
    med = {key: statistics.median(p[key] for p in parts) for key in parts[0]}
    print("| modules loaded | record ms | check ms | call check ms | value check ms (1000-row DataFrame) "
          "| harness record ms | harness check ms | its twin ms |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| {med['modules']:.0f} | {med['record_ms']:.1f} | {med['check_ms']:.1f} | "
          f"{med['call_check_ms']:.1f} | {med['value_check_ms']:.2f} | {med['harness_record_ms']:.1f} | "
          f"{med['harness_check_ms']:.1f} | {med['twin_ms']:.1f} |")
    base = statistics.median(times["no hook"])
    print("| returned value | check ms | making it, ms | check / making |")
    print("|---|---|---|---|")
    for name, label in (("axes", "an Axes, one line plot"), ("grid", "a drawn 3x3 grid of plots")):
        check, make = med[name + "_check_ms"], med[name + "_make_ms"]
        print(f"| {label} | {check:.1f} | {make:.1f} | {check / make:.2f} |")
    plain, watched = med["grid_make_ms"], med["grid_make_watched_ms"]
    print("| the tests' own code: drawing a 3x3 grid | plain ms | watched ms | watched / plain |")
    print("|---|---|---|---|")
    print(f"| outside_calls' watch | {plain:.1f} | {watched:.1f} | {watched / plain:.2f} |")
    print("| late imports | median ms | x no hook | rounds |")
    print("|---|---|---|---|")
    for name, values in times.items():
        print(f"| {name} | {statistics.median(values):.0f} | {statistics.median(values) / base:.2f} | "
              f"{', '.join(f'{t:.0f}' for t in values)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

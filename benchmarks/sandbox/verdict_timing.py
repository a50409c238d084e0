"""Does a function-call child's lifetime after its last answer tell it whether it passed?

A timing channel a sample under RL could use: the child answers its last call, and then lives until the
judge ends it. If the judge does more work before ending a failing sample than a passing one (e.g.
describing the failed assertion), a background thread that notes the time until it is killed learns the
verdict, and a later sample can be told through a covert channel (sandbox README, "Between samples of
one worker").

The candidate answers 8 calls (`f(i) == 2 * i`) with a thread writing `time.monotonic_ns()` to stdout
every ~30 µs; the verdict's stdout gives how long it lived after returning from its last call. Passing
and failing samples alternate; the failing one answers call number `--wrong-call` (1-8) wrongly, the
ones after it correctly. Prints both distributions and how well a threshold tells them apart: fitted on
half the samples, scored on the other half (0.5 is chance).

    .venv/bin/python benchmarks/sandbox/verdict_timing.py --samples 300 --wrong-call 8
"""

from __future__ import annotations

import argparse
import statistics

from coding_framework.sandbox import FunctionCallJob, Limits, SandboxPool, Status

CALLS = 8
TEST = "def check(candidate):\n" + "".join(f"    assert candidate({i}) == {2 * i}\n" for i in range(CALLS))
CANDIDATE = """
import os, threading, time
calls = [0]
def beat():
    while True:
        os.write(1, b'%d\\n' % time.monotonic_ns())
        time.sleep(0.00003)
threading.Thread(target=beat, daemon=True).start()
def f(x):
    calls[0] += 1
    if calls[0] == CALLS:
        os.write(1, b'L%d\\n' % time.monotonic_ns())
    return -1 if calls[0] == WRONG else 2 * x
"""


def lived_after_last_answer_us(stdout: str) -> float | None:
    lines = stdout.split()
    last = [int(line[1:]) for line in lines if line.startswith("L")]
    beats = [int(line) for line in lines if line.isdigit()]
    return (max(beats) - last[0]) / 1000 if last and beats else None


def threshold_accuracy(train: dict[str, list[float]], test: dict[str, list[float]]) -> float:
    """Accuracy on `test` of the threshold (and direction) that best separates `train`."""
    def accuracy(data, threshold, fail_above):
        right = sum((x >= threshold) != fail_above for x in data["pass"])
        right += sum((x >= threshold) == fail_above for x in data["fail"])
        return right / (len(data["pass"]) + len(data["fail"]))

    candidates = sorted(set(train["pass"] + train["fail"]))
    _, threshold, fail_above = max((accuracy(train, t, d), t, d) for t in candidates for d in (True, False))
    return accuracy(test, threshold, fail_above)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=300, help="passing and as many failing samples")
    parser.add_argument("--wrong-call", type=int, default=CALLS, choices=range(1, CALLS + 1))
    args = parser.parse_args()

    lived: dict[str, list[float]] = {"pass": [], "fail": []}
    with SandboxPool(workers=1) as pool:
        for _ in range(args.samples):
            for kind, wrong in (("pass", 0), ("fail", args.wrong_call)):
                program = f"CALLS, WRONG = {CALLS}, {wrong}\n" + CANDIDATE
                verdict = pool.run(FunctionCallJob(program=program, entry_point="f", test=TEST,
                                                   limits=Limits(timeout_s=3)))
                expected = Status.PASSED if kind == "pass" else Status.FAILED
                if verdict.status is not expected:
                    raise SystemExit(f"unexpected verdict for a {kind}ing sample: {verdict}")
                value = lived_after_last_answer_us(verdict.stdout)
                if value is not None:
                    lived[kind].append(value)
    for kind, values in lived.items():
        values = sorted(values)
        print(f"{kind}: n={len(values)} lived on: median {statistics.median(values):.0f} µs, "
              f"p10 {values[len(values) // 10]:.0f}, p90 {values[9 * len(values) // 10]:.0f}, "
              f"max {values[-1]:.0f}")
    halves = [{kind: values[i::2] for kind, values in lived.items()} for i in (0, 1)]
    print(f"threshold accuracy on held-out half: {threshold_accuracy(halves[0], halves[1]):.2f}, "
          f"{threshold_accuracy(halves[1], halves[0]):.2f} (0.5 = chance)")


if __name__ == "__main__":
    main()

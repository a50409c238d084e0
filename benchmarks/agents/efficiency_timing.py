"""How noisy the efficiency reward's runtimes are: one timing job against the minimum of several.

The efficiency reward compares the sandbox child's CPU time running a candidate's hidden cases with the
reference's (agents' `RewardConfig.efficiency_rounds` jobs each, the minimum taken). Here the candidate is
as fast as the reference (`v + v` against `2 * v`), so every ratio above 1 is noise. Each trial issues
`--rounds` interleaved (candidate, reference) timing jobs in one batch; it reports the candidate/reference
CPU-time ratio of the first pair alone and of the per-side minima, over `--trials` trials:

    .venv/bin/python benchmarks/agents/efficiency_timing.py --trials 150 --rounds 3

The reward gives full marks up to `efficiency_tolerance` (1.2); the agents integration test asks that
an equally fast candidate score above 0.8, i.e. a ratio below 1.5. Run it beside other work to see the
loaded case (the CI machine runs two test processes at once).
"""

from __future__ import annotations

import argparse
import statistics
import sys

STUB = 'def double(xs):\n    """Return a new list with each element of xs times 2."""\n'


def ratios(trials: int, rounds: int, repeats: int) -> tuple[list[float], list[float]]:
    from coding_framework.agents import Problem, TestCase
    from coding_framework.agents.execution import suite_job
    from coding_framework.sandbox import SandboxPool

    problem = Problem(
        id="double", statement=STUB, entry_point="double", visible_tests=(TestCase(([1],), [2]),),
        hidden_tests=(TestCase(([0],), [0]), TestCase(([1, 2],), [2, 4]), TestCase(([-3],), [-6]),
                      TestCase(([5, 5, 5],), [10, 10, 10])),
        reference=STUB + "    return [2 * v for v in xs]\n", difficulty=2, family="",
    )
    candidate = STUB + "    return [v + v for v in xs]\n"
    single, minimum = [], []
    with SandboxPool(workers=2) as pool:
        for _ in range(trials):
            jobs = []
            for _ in range(rounds):
                jobs.append(suite_job(problem, candidate, problem.hidden_tests, repeats))
                jobs.append(suite_job(problem, problem.reference, problem.hidden_tests, repeats))
            verdicts = pool.run_many(jobs)
            if not all(v.passed and v.cpu_s for v in verdicts):
                raise RuntimeError(f"a timing job failed: {[v.status.value for v in verdicts]}")
            cand = [v.cpu_s for v in verdicts[0::2]]
            ref = [v.cpu_s for v in verdicts[1::2]]
            single.append(cand[0] / ref[0])
            minimum.append(min(cand) / min(ref))
    return single, minimum


def describe(name: str, values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    over = sum(v > 1.5 for v in ordered)
    return (f"{name:>12}: median {statistics.median(ordered):.3f}  p90 {p90:.3f}  max {ordered[-1]:.3f}  "
            f"> 1.5: {over}/{len(ordered)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=3, help="timing jobs per side per trial")
    parser.add_argument("--repeats", type=int, default=3, help="times the hidden cases run in one job")
    args = parser.parse_args(argv)
    if args.trials < 1 or args.rounds < 1 or args.repeats < 1:
        parser.error("--trials, --rounds and --repeats must be >= 1")
    single, minimum = ratios(args.trials, args.rounds, args.repeats)
    print(describe("one job", single))
    print(describe(f"min of {args.rounds}", minimum))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What walking the kept values again at each call's start costs (sandbox.in_process_guard.outside_calls).

A test that collects N results of the program's calls holds them all: at each call's start the guard
walks kept values again. This times N call starts in-process (no sandbox around it), the real
`recheck_kept` over the real value walk, each start walking either the RECENT most recent kept values
(what the guard does) or all of them, in the same run.

Run from the repo root:

    .venv/bin/python benchmarks/sandbox/recheck_cost.py [--calls 600]
"""

from __future__ import annotations

import argparse
import sys
import time

from coding_framework.sandbox import in_process_guard as guard
from coding_framework.sandbox.in_process_guard.outside_calls import RECENT, recheck_kept


def run(calls: int, recent: int) -> float:
    trust = guard.make_trust(guard.trusted_roots(sys.path, ()), guard.CodeSet())
    libraries = guard.library_types()
    kept: list = []  # (a list stands in for the C side's: the test holds every result, none is dropped)
    found: list = []
    start = time.perf_counter()
    for i in range(calls):
        recheck_kept(guard.foreign_answerer, trust, libraries, lambda n=0: kept[-n:] if n else list(kept),
                     found.append, lambda: None, recent)
        kept.append([i, str(i), {"k": i}])  # what the call returned
    assert not found, found
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=600)
    args = parser.parse_args(argv)
    capped, every = run(args.calls, RECENT), run(args.calls, 0)
    print(f"| call starts | the {RECENT} most recent, s | all kept, s | all / recent |")
    print("|---|---|---|---|")
    print(f"| {args.calls} | {capped:.2f} | {every:.2f} | {every / capped:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

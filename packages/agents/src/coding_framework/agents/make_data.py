"""Write (or check) the packaged problem sets: `python -m coding_framework.agents.make_data [--check]`.

Without arguments it rewrites data/starter.jsonl, data/validation.jsonl and data/heldout.jsonl in the
source tree; `--out DIR`
writes them elsewhere; `--check` writes nothing and exits 1 if the files differ from a fresh build.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from coding_framework.agents.datasets import (
    HELDOUT_FILE,
    STARTER_FILE,
    VALIDATION_FILE,
    build_heldout_set,
    build_starter_set,
    build_validation_set,
    check_disjoint,
    check_separate,
    data_dir,
)
from coding_framework.agents.problems import problems_to_jsonl, write_problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="folder to write to (default: package data/)")
    parser.add_argument("--check", action="store_true", help="compare with the files instead of writing")
    args = parser.parse_args(argv)
    out = args.out or data_dir()
    starter, validation, heldout = build_starter_set(), build_validation_set(), build_heldout_set()
    check_disjoint(starter, validation)
    check_disjoint(starter, heldout)
    check_separate(validation, heldout)
    sets = {STARTER_FILE: starter, VALIDATION_FILE: validation, HELDOUT_FILE: heldout}
    if args.check:
        stale = [str(out / name) for name, problems in sets.items()
                 if not (out / name).is_file()
                 or (out / name).read_text(encoding="utf-8") != problems_to_jsonl(problems)]
        if stale:
            print(f"stale: {', '.join(stale)}; run python -m coding_framework.agents.make_data",
                  file=sys.stderr)
            return 1
        print(f"up to date: {out}")
        return 0
    for name, problems in sets.items():
        write_problems(out / name, problems)
        print(f"wrote {len(problems)} problems to {out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

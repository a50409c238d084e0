"""Greedy pass@1 of model directories (base models, training checkpoints) on the packaged evaluation sets.

What `coding-framework train` reports before and after training is greedy pass@1 on agents' held-out set;
this scores any saved model the same way on the validation set, the held-out set or both, so runs made
before a set existed (or on the other set) can be compared on one footing:

    .venv/bin/python benchmarks/training/rescore.py --sets validation,heldout \\
        models/tiny-coder /tmp/run-s0/checkpoints/step_40 --out /tmp/rescore.json

Prints one line per (directory, set) with pass@1 and the problems solved per level; `--out` also writes
them as JSON. Greedy decoding on CPU is deterministic for a given machine and library versions.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def _tiny_coder_evaluation():
    """The tiny model builder's evaluation helpers (the repo root must be importable)."""
    sys.path.insert(0, str(REPO))
    from tools.tiny_coder.evaluate import greedy_passes, load_model_dir

    return greedy_passes, load_model_dir


def rescore(model_dirs: list[str], sets: list[str], *, max_new_tokens: int, threads: int,
            workers: int) -> list[dict[str, Any]]:
    """One row per (directory, set): n_problems, pass_at_1 and solved problems per level."""
    from coding_framework.agents import load_evaluation_set
    from coding_framework.sandbox import SandboxPool

    greedy_passes, load_model_dir = _tiny_coder_evaluation()
    problem_sets = {name: load_evaluation_set(name) for name in sets}
    rows = []
    with SandboxPool(workers=workers) as pool:
        for model_dir in model_dirs:
            model, tokenizer = load_model_dir(model_dir, threads)
            for name, problems in problem_sets.items():
                passed = greedy_passes(model, tokenizer, problems, pool, max_new_tokens)
                rows.append({
                    "model_dir": model_dir,
                    "set": name,
                    "n_problems": len(problems),
                    "pass_at_1": sum(passed) / len(problems),
                    "solved_by_level": {
                        str(level): sum(ok for ok, p in zip(passed, problems, strict=True)
                                        if p.difficulty == level)
                        for level in sorted({p.difficulty for p in problems})
                    },
                })
    return rows


def main(argv: list[str] | None = None) -> int:
    from coding_framework.agents import EVALUATION_SETS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_dirs", nargs="+", help="local Hugging Face causal-LM directories")
    parser.add_argument("--sets", default="heldout", help=f"comma-separated, of {', '.join(EVALUATION_SETS)}")
    parser.add_argument("--max-new-tokens", type=int, default=48, help="as the embedded default (48)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--workers", type=int, default=2, help="sandbox workers")
    parser.add_argument("--out", type=Path, default=None, help="write the rows as JSON here too")
    args = parser.parse_args(argv)
    sets = [s for s in args.sets.split(",") if s]
    bad = [s for s in sets if s not in EVALUATION_SETS]
    missing = [d for d in args.model_dirs if not (Path(d) / "config.json").is_file()]
    if bad or not sets:
        parser.error(f"--sets {args.sets!r}: choose from {', '.join(EVALUATION_SETS)}")
    if missing:
        parser.error(f"not Hugging Face model directories (no config.json): {', '.join(missing)}")
    rows = rescore(args.model_dirs, sets, max_new_tokens=args.max_new_tokens, threads=args.threads,
                   workers=args.workers)
    for row in rows:
        print(f"{row['set']:>10}  {row['pass_at_1']:.3f}  solved by level {row['solved_by_level']}  "
              f"{row['model_dir']}")
    if args.out is not None:
        tmp = args.out.with_name(f".{args.out.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(rows, indent=1) + "\n")
        os.replace(tmp, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

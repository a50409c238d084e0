"""Sample-by-sample agreement of our HumanEval+ / MBPP+ verdicts with evalplus's own.

Both harnesses judge the same samples file against the same problem file, in one run on one machine:

- evalplus: its own loaders (`get_human_eval_plus` / `get_mbpp_plus`, pointed at the given file, so
  MBPP+ inputs are rebuilt by its `mbpp_deserialize_inputs`), its `get_groundtruth` (expected outputs
  and reference times from `trusted_exec`), and per sample its `check_correctness` -> `untrusted_check`
  for the base and the plus inputs, exactly as `evalplus.evaluate` calls them (fast_check on, as its
  default `test_details=False` sets), in a process pool, with its time limits
  `max(min_time_limit, factor x reference seconds)`;
- ours: `coding_framework.evals.evaluate_file` with the same `min_time_limit_s` / `time_limit_factor`.

The base and plus verdicts are compared separately (evalplus's `base_status` / `plus_status` against our
`parts`); a sample agrees when both parts agree on pass vs not pass. Statuses that are not a pass
(evalplus's fail / timeout; our failed / error / timeout / ...) are all "not pass" on either side.

Instead of re-running evalplus, `--evalplus-results` reads an `eval_results.json` that
`evalplus.evaluate` wrote for the same samples file (matched by task and order, checked by solution text).

Nothing is downloaded: a missing data file or samples file is an error naming what to pass. evalplus's
scratch files (its ground-truth cache, the temporary directories its checker makes) go to a temporary
directory that is removed at the end.

Run from the repo root:
  .venv/bin/python benchmarks/evals/evalplus_agreement.py --benchmark humaneval+ \\
      --problem-file HumanEvalPlus.jsonl.gz --samples samples.jsonl [--workers 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

DATASETS = {"humaneval+": "humaneval", "mbpp+": "mbpp"}
"""Our benchmark name -> evalplus's dataset name."""
EVALPLUS_PASS = "pass"
OURS_PASS = "passed"


class AgreementError(Exception):
    """Bad input to the agreement check (a missing file, evalplus not installed, misaligned results)."""


@dataclass(frozen=True)
class SampleVerdicts:
    """One sample as both harnesses judged it."""

    index: int
    """0-based line of the sample in the samples file."""
    task_id: str
    label: str
    """The sample's `label` key when it has one (fixtures name what each sample is), else ""."""
    evalplus_base: str
    """evalplus's base status: "pass", "fail" or "timeout"."""
    evalplus_plus: str
    ours_base: str
    """Our base part's status: "passed", "failed", "error", "timeout", ... (a sandbox Status value)."""
    ours_plus: str
    ours_result: str
    """Our result text ("failed: AssertionError: plus input 2: ...")."""

    @property
    def evalplus_passed(self) -> bool:
        """HumanEval+ / MBPP+ pass: base and plus both pass (evalplus's pass@k rule)."""
        return self.evalplus_base == EVALPLUS_PASS and self.evalplus_plus == EVALPLUS_PASS

    @property
    def ours_passed(self) -> bool:
        return self.ours_base == OURS_PASS and self.ours_plus == OURS_PASS

    @property
    def agrees(self) -> bool:
        """Each part is a pass on both sides or a pass on neither."""
        return (self.evalplus_base == EVALPLUS_PASS) == (self.ours_base == OURS_PASS) and (
            self.evalplus_plus == EVALPLUS_PASS
        ) == (self.ours_plus == OURS_PASS)


def _require_file(path: Path, what: str, how_to_get: str) -> Path:
    if not Path(path).is_file():
        raise AgreementError(f"{what} not found: {path}. {how_to_get} (nothing is downloaded)")
    return Path(path)


def _evalplus_modules() -> tuple[Any, Any, Any, Any]:
    try:
        import evalplus.data.humaneval as humaneval
        import evalplus.data.mbpp as mbpp
        import evalplus.evaluate as evaluate
        from evalplus.eval import _special_oracle
    except ImportError as exc:
        raise AgreementError(
            f"evalplus is not importable ({exc}); it is pinned in tools/requirements.lock: run tools/setup"
        ) from exc
    return humaneval, mbpp, evaluate, _special_oracle


@contextlib.contextmanager
def _patched(module: Any, name: str, value: Any) -> Iterator[None]:
    """Set a module global for the duration; evalplus reads its data path and cache dir from globals."""
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, old)


def load_evalplus_problems(benchmark: str, problem_file: Path) -> tuple[dict[str, dict], str]:
    """`(problems, hash)` as evalplus loads them, from `problem_file` instead of its download cache."""
    humaneval, mbpp, _, _ = _evalplus_modules()
    path = os.fspath(problem_file)
    if DATASETS[benchmark] == "humaneval":
        with _patched(humaneval, "HUMANEVAL_OVERRIDE_PATH", path):
            return humaneval.get_human_eval_plus(), humaneval.get_human_eval_plus_hash()
    with _patched(mbpp, "MBPP_OVERRIDE_PATH", path):
        return mbpp.get_mbpp_plus(), mbpp.get_mbpp_plus_hash()


def _contain_tempfiles(directory: str) -> None:
    """Pool initializer: evalplus's checker makes a temporary directory per sample (and leaves it
    behind when it is killed); keep them all under `directory`."""
    tempfile.tempdir = directory


def _check_one(args: tuple) -> tuple[str, str]:
    from evalplus.evaluate import check_correctness

    result = check_correctness(*args)
    return result["base"][0], result["plus"][0]


def read_jsonl(path: Path) -> list[dict]:
    """Rows of a `.jsonl` file (blank lines skipped)."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def evalplus_verdicts(
    benchmark: str,
    problem_file: Path,
    samples: Sequence[dict],
    *,
    workers: int,
    min_time_limit: float,
    time_limit_factor: float,
    scratch_dir: Path,
) -> list[tuple[str, str]]:
    """`(base_status, plus_status)` per sample, in order, from evalplus's own code.

    Mirrors what `evalplus.evaluate.evaluate` does per sample: ground truth from `get_groundtruth`
    (MBPP+'s not-None tasks as it passes them), `solution` if present else prompt + completion,
    completion ids counted per task, fast_check on.
    """
    _, _, evaluate, special = _evalplus_modules()
    dataset = DATASETS[benchmark]
    problems, data_hash = load_evalplus_problems(benchmark, problem_file)
    not_none = special.MBPP_OUTPUT_NOT_NONE_TASKS if dataset == "mbpp" else []
    scratch = os.fspath(scratch_dir)
    with _patched(evaluate, "CACHE_DIR", scratch), contextlib.redirect_stdout(sys.stderr):
        expected = evaluate.get_groundtruth(problems, data_hash, not_none)
    jobs = []
    completion_ids: collections.Counter[str] = collections.Counter()
    for index, sample in enumerate(samples):
        task_id = sample["task_id"]
        if task_id not in problems:
            raise AgreementError(f"sample {index + 1}: task {task_id!r} is not in {problem_file}")
        problem = problems[task_id]
        solution = sample["solution"] if "solution" in sample else problem["prompt"] + sample["completion"]
        identifier = f"{task_id} (line {index + 1})"
        jobs.append(
            (dataset, completion_ids[task_id], problem, solution, expected[task_id], False, True,
             identifier, min_time_limit, time_limit_factor)
        )  # fmt: skip
        completion_ids[task_id] += 1
    with ProcessPoolExecutor(workers, initializer=_contain_tempfiles, initargs=(scratch,)) as pool:
        return list(pool.map(_check_one, jobs))


def evalplus_results_file_verdicts(path: Path, samples: Sequence[dict]) -> list[tuple[str, str]]:
    """`(base_status, plus_status)` per sample from an `eval_results.json` written by evalplus for this
    samples file: the k-th sample of a task is the k-th entry of that task, and must carry the same
    solution text (when the sample has a `solution`)."""
    with open(
        _require_file(path, "evalplus results file", "Pass the eval_results.json of this samples file")
    ) as fh:
        by_task = json.load(fh)["eval"]
    seen: collections.Counter[str] = collections.Counter()
    out = []
    for index, sample in enumerate(samples):
        task_id = sample["task_id"]
        entries = by_task.get(task_id, [])
        k = seen[task_id]
        seen[task_id] += 1
        if k >= len(entries):
            raise AgreementError(f"{path}: no result for sample {index + 1} ({task_id}, #{k})")
        entry = entries[k]
        if "solution" in sample and entry.get("solution") != sample["solution"]:
            raise AgreementError(
                f"{path}: result {task_id} #{k} is for another solution than sample {index + 1}"
            )
        out.append((entry["base_status"], entry["plus_status"]))
    return out


def our_results(
    benchmark: str,
    problem_file: Path,
    samples_file: Path,
    *,
    workers: int,
    min_time_limit: float,
    time_limit_factor: float,
    output_file: Path,
) -> list[Any]:
    """Our SampleResults, in sample order, with evalplus's time-limit settings."""
    from coding_framework.evals.runner import EvalConfig, evaluate_file

    evaluation = evaluate_file(
        EvalConfig(
            samples_file,
            benchmark=benchmark,
            problem_file=problem_file,
            output_file=output_file,
            ks=(1,),
            workers=workers,
            options={"min_time_limit_s": min_time_limit, "time_limit_factor": time_limit_factor},
            report=False,
        )
    )
    return evaluation.results


def compare(
    samples: Sequence[dict], evalplus: Sequence[tuple[str, str]], ours: Sequence[Any]
) -> list[SampleVerdicts]:
    """One SampleVerdicts per sample (all three sequences in sample order)."""
    if not len(samples) == len(evalplus) == len(ours):
        raise AgreementError(
            f"{len(samples)} samples, {len(evalplus)} evalplus verdicts, {len(ours)} of ours"
        )
    rows = []
    for index, (sample, (base, plus), mine) in enumerate(zip(samples, evalplus, ours, strict=True)):
        if mine.task_id != sample["task_id"]:
            raise AgreementError(
                f"sample {index + 1}: our result is for {mine.task_id}, not {sample['task_id']}"
            )
        rows.append(
            SampleVerdicts(
                index=index,
                task_id=sample["task_id"],
                label=str(sample.get("label", "")),
                evalplus_base=str(base),
                evalplus_plus=str(plus),
                ours_base=mine.parts.get("base", mine.status),
                ours_plus=mine.parts.get("plus", mine.status),
                ours_result=mine.result,
            )
        )
    return rows


def run_agreement(
    benchmark: str,
    problem_file: Path,
    samples_file: Path,
    *,
    workers: int = 2,
    min_time_limit: float | None = None,
    time_limit_factor: float | None = None,
    evalplus_results: Path | None = None,
) -> list[SampleVerdicts]:
    """Judge `samples_file` with both harnesses and pair the verdicts. `min_time_limit` and
    `time_limit_factor` default to the installed evalplus's own defaults (evalplus.config)."""
    if benchmark not in DATASETS:
        raise AgreementError(f"unknown benchmark {benchmark!r}; use one of {', '.join(DATASETS)}")
    if workers < 1:
        raise AgreementError(f"workers must be at least 1, got {workers}")
    from coding_framework.evals.datasets.evalplus import HUMANEVAL_PLUS_SOURCE, MBPP_PLUS_SOURCE

    source = HUMANEVAL_PLUS_SOURCE if benchmark == "humaneval+" else MBPP_PLUS_SOURCE
    problem_file = _require_file(problem_file, f"{source.title} problem file", source.how_to_get)
    samples_file = _require_file(
        samples_file,
        "samples file",
        "Pass a .jsonl of evalplus-format samples (task_id + solution/completion)",
    )
    if not os.fspath(samples_file).endswith(".jsonl"):
        raise AgreementError(f"{samples_file}: samples must be a .jsonl file (evalplus reads no other)")
    _evalplus_modules()
    from evalplus import config

    min_time_limit = config.DEFAULT_MIN_TIME_LIMIT if min_time_limit is None else min_time_limit
    time_limit_factor = (
        config.DEFAULT_GT_TIME_LIMIT_FACTOR if time_limit_factor is None else time_limit_factor
    )
    samples = read_jsonl(samples_file)
    with tempfile.TemporaryDirectory(prefix="cf-evalplus-agreement-") as scratch:
        if evalplus_results is not None:
            theirs = evalplus_results_file_verdicts(evalplus_results, samples)
        else:
            theirs = evalplus_verdicts(
                benchmark,
                problem_file,
                samples,
                workers=workers,
                min_time_limit=min_time_limit,
                time_limit_factor=time_limit_factor,
                scratch_dir=Path(scratch),
            )
        ours = our_results(
            benchmark,
            problem_file,
            samples_file,
            workers=workers,
            min_time_limit=min_time_limit,
            time_limit_factor=time_limit_factor,
            output_file=Path(scratch) / "ours.jsonl",
        )
    return compare(samples, theirs, ours)


def _short(text: str, limit: int = 90) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def crosstab(rows: Sequence[SampleVerdicts]) -> dict[tuple[str, str], int]:
    """`{(evalplus "base/plus", ours "base/plus"): count}`."""
    counts: collections.Counter[tuple[str, str]] = collections.Counter(
        (f"{r.evalplus_base}/{r.evalplus_plus}", f"{r.ours_base}/{r.ours_plus}") for r in rows
    )
    return dict(sorted(counts.items()))


def render_report(rows: Sequence[SampleVerdicts]) -> str:
    """Markdown: the counts, the status cross-table, and one line per disagreeing sample."""
    disagreements = [r for r in rows if not r.agrees]
    lines = [
        f"samples: {len(rows)}, agree: {len(rows) - len(disagreements)}, disagree: {len(disagreements)} "
        f"(we fail, evalplus passes: {sum(r.evalplus_passed and not r.ours_passed for r in disagreements)}; "
        f"we pass, evalplus fails: {sum(r.ours_passed and not r.evalplus_passed for r in disagreements)})",
        "",
        "| evalplus base/plus | ours base/plus | samples |",
        "|---|---|---|",
    ]
    lines += [f"| {theirs} | {mine} | {n} |" for (theirs, mine), n in crosstab(rows).items()]
    if disagreements:
        lines += [
            "",
            "| # | task | label | evalplus base/plus | ours base/plus | our result |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {r.index + 1} | {r.task_id} | {r.label} | {r.evalplus_base}/{r.evalplus_plus} | "
            f"{r.ours_base}/{r.ours_plus} | {_short(r.ours_result)} |"
            for r in disagreements
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--benchmark", choices=sorted(DATASETS), required=True)
    parser.add_argument(
        "--problem-file", type=Path, required=True, help="HumanEvalPlus / MbppPlus .jsonl[.gz]"
    )
    parser.add_argument("--samples", type=Path, required=True, help="evalplus-format samples (.jsonl)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--min-time-limit",
        type=float,
        default=None,
        help="per-input floor (default: evalplus's, 1.0 in 0.3.1)",
    )
    parser.add_argument("--time-limit-factor", type=float, default=None, help="default: evalplus's (4.0)")
    parser.add_argument(
        "--evalplus-results",
        type=Path,
        default=None,
        help="use this eval_results.json instead of running evalplus",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write every pair of verdicts here")
    args = parser.parse_args(argv)
    try:
        rows = run_agreement(
            args.benchmark,
            args.problem_file,
            args.samples,
            workers=args.workers,
            min_time_limit=args.min_time_limit,
            time_limit_factor=args.time_limit_factor,
            evalplus_results=args.evalplus_results,
        )
    except AgreementError as exc:
        print(f"evalplus_agreement: {exc}", file=sys.stderr)
        return 2
    print(render_report(rows))
    if args.json is not None:
        payload = [{**asdict(r), "agrees": r.agrees} for r in rows]
        from coding_framework.evals.jsonl import write_json_atomic

        write_json_atomic(args.json, payload)
    return 0 if all(r.agrees for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

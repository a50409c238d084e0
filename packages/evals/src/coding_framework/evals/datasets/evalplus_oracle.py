"""Expected outputs and reference runtimes for HumanEval+ / MBPP+, measured on this machine.

evalplus computes the expected output of every input by running the canonical solution, timing each
call; the per-input time limit of a sample is `max(floor, factor * reference seconds)`. We do the
same in a separate interpreter (`_oracle_child.py`), so that canonical solutions cannot disturb this
process, and cache the result per task: the key covers the task's code and inputs and this machine
(host name, CPU count, Python version), because runtimes measured elsewhere would set wrong limits.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import platform
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from coding_framework.evals.datasets.evalplus import EvalPlusProblem, Oracle, with_oracle
from coding_framework.evals.errors import EvalError
from coding_framework.evals.jsonl import write_bytes_atomic

CACHE_ENV = "CF_EVALS_CACHE_DIR"
"""Where computed oracles are cached; default ~/.cache/coding-framework/evals."""
_CHILD = Path(__file__).with_name("_oracle_child.py")
_FORMAT = 2  # bump when the cached record's layout or the child's semantics change
# 2: numpy scalars and subclasses of built-ins stored as the plain value (1 stored numpy values as bytes)

# evalplus's `MBPP_OUTPUT_NOT_NONE_TASKS`: outputs that are not plain data, so only "is it not None"
# is compared (the expected output is stored as that boolean).
MBPP_NOT_NONE_ENTRY_POINTS = frozenset({"check_str", "text_match_three", "text_starta_endb"})


def default_cache_dir() -> Path:
    """$CF_EVALS_CACHE_DIR, else ~/.cache/coding-framework/evals."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured)
    return Path.home() / ".cache" / "coding-framework" / "evals"


def machine_fingerprint() -> str:
    """What reference runtimes depend on: host, CPU count, Python implementation and version."""
    return (
        f"{platform.node()}|{os.cpu_count()}|{platform.python_implementation()}|{platform.python_version()}"
    )


def _output_not_none(problem: EvalPlusProblem) -> bool:
    return problem.dataset == "mbpp" and problem.entry_point in MBPP_NOT_NONE_ENTRY_POINTS


def _task(problem: EvalPlusProblem, timeout_s: float) -> tuple:
    parts = [("base", problem.base_input), ("plus", problem.plus_input)]
    contract = problem.contract_program if problem.contract.strip() else None
    return (
        problem.task_id,
        problem.reference_program,
        contract,
        problem.entry_point,
        parts,
        _output_not_none(problem),
        float(timeout_s),
    )


def cache_key(problem: EvalPlusProblem) -> str:
    """sha256 over the task's code, inputs, rule flags and this machine's fingerprint."""
    digest = hashlib.sha256()
    payload = (
        _FORMAT,
        machine_fingerprint(),
        problem.dataset,
        problem.entry_point,
        problem.reference_program,
        problem.contract,
        problem.base_input,
        problem.plus_input,
    )
    digest.update(marshal.dumps(payload))
    return digest.hexdigest()


def _to_oracle(record: dict) -> Oracle:
    if record["error"]:
        return Oracle(
            base=(),
            base_time_s=(),
            plus=(),
            plus_time_s=(),
            error=record["error"],
            contract_violations=tuple(record["violations"]),
        )
    (base, base_s), (plus, plus_s) = record["parts"]["base"], record["parts"]["plus"]
    return Oracle(
        base=tuple(base),
        base_time_s=tuple(base_s),
        plus=tuple(plus),
        plus_time_s=tuple(plus_s),
        contract_violations=tuple(record["violations"]),
    )


def compute_oracles(
    problems: Iterable[EvalPlusProblem],
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    task_timeout_s: float = 120.0,
    use_cache: bool = True,
) -> dict[str, Oracle]:
    """`{task_id: Oracle}` for `problems`, from the cache where present, else by running the
    canonical solutions (one child interpreter for all missing tasks, sequentially, as evalplus does).

    A task whose reference fails gets an Oracle with `error` set rather than raising, so one broken
    task does not block the others. Raises EvalError if the child interpreter itself fails.
    """
    problems = list(problems)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    oracles: dict[str, Oracle] = {}
    missing: list[tuple[EvalPlusProblem, str]] = []
    for problem in problems:
        key = cache_key(problem)
        path = cache / "evalplus-oracles" / f"{key}.marshal"
        if use_cache and path.is_file():
            try:
                oracles[problem.task_id] = _to_oracle(marshal.loads(path.read_bytes()))
                continue
            except (EOFError, ValueError, TypeError, KeyError):
                pass  # a damaged cache entry is recomputed
        missing.append((problem, key))
    if missing:
        records = _run_child([_task(p, task_timeout_s) for p, _ in missing], task_timeout_s)
        for problem, key in missing:
            record = records[problem.task_id]
            oracles[problem.task_id] = _to_oracle(record)
            if use_cache:
                write_bytes_atomic(cache / "evalplus-oracles" / f"{key}.marshal", marshal.dumps(record))
    return {p.task_id: oracles[p.task_id] for p in problems}


def _run_child(tasks: list[tuple], task_timeout_s: float) -> dict[str, dict]:
    with tempfile.TemporaryDirectory(prefix="cf-evals-oracle-") as tmp:
        inp, out = Path(tmp) / "in.marshal", Path(tmp) / "out.marshal"
        try:
            inp.write_bytes(marshal.dumps(tasks))
        except ValueError as exc:
            raise EvalError(f"benchmark inputs are not plain data: {exc}") from exc
        try:
            proc = subprocess.run(
                [sys.executable, "-I", os.fspath(_CHILD), os.fspath(inp), os.fspath(out)],
                capture_output=True,
                timeout=task_timeout_s * len(tasks) + 60,
                cwd=tmp,
            )
        except subprocess.TimeoutExpired as exc:
            raise EvalError("computing expected outputs from the canonical solutions timed out") from exc
        if proc.returncode != 0 or not out.is_file():
            tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            raise EvalError(f"computing expected outputs failed (exit {proc.returncode}): {tail[0]}")
        return marshal.loads(out.read_bytes())


def attach_oracles(
    problems: dict[str, EvalPlusProblem], *, cache_dir: str | os.PathLike[str] | None = None
) -> dict[str, EvalPlusProblem]:
    """`problems` with oracles attached (computed or from the cache), same keys and order."""
    pending = [p for p in problems.values() if p.oracle is None]
    oracles = compute_oracles(pending, cache_dir=cache_dir) if pending else {}
    return {tid: (with_oracle(p, oracles[tid]) if tid in oracles else p) for tid, p in problems.items()}


def oracle_warnings(problems: Mapping[str, EvalPlusProblem]) -> list[str]:
    """One line per task whose reference failed or whose inputs break its own contract."""
    lines = []
    for task_id, problem in problems.items():
        oracle = problem.oracle
        if oracle is None:
            continue
        if oracle.error:
            lines.append(f"{task_id}: reference solution failed, the task cannot be scored: {oracle.error}")
        if oracle.contract_violations:
            shown = "; ".join(oracle.contract_violations[:3])
            more = len(oracle.contract_violations) - 3
            lines.append(
                f"{task_id}: {len(oracle.contract_violations)} input(s) break the task's contract "
                f"(scored anyway, as evalplus does): {shown}" + (f" and {more} more" if more > 0 else "")
            )
    return lines

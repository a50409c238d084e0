"""Turn a benchmark's problems into a samples file with a backend, resumably.

Each finished sample is appended to the samples file at once (flushed and fsynced), keyed by
`(task_id, sample_index)`. A rerun reads the file, keeps every sample already there and asks the
backend only for the missing ones; a last line cut off by a crash is dropped. When the run ends
(or fails) the file is rewritten atomically in problem order, so a complete run has a stable file.
Samples record model, benchmark and prompt style; resuming with a different one is refused, since
mixing two models' samples in one file would make every number wrong.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coding_framework.evals.benchmarks import Benchmark
from coding_framework.evals.errors import GenerationError, InputFileError
from coding_framework.evals.generation.base import Backend, GenerationConfig, GenerationRequest
from coding_framework.evals.jsonl import write_jsonl_atomic

_IDENTITY = ("model", "benchmark", "prompt_style")


@dataclass(frozen=True)
class GenerationRun:
    """What `generate_samples` did."""

    samples_path: Path
    generated: int
    """Samples the backend produced in this run."""
    reused: int
    """Samples already in the file, kept and not regenerated."""
    model: str
    prompt_style: str


def _existing(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError(f"cannot read {path}: {exc}") from exc
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                break  # a write cut off by a crash: that sample is generated again
            raise InputFileError(f"{path}:{number}: not valid JSON; remove the line or the file") from None
        if (
            not isinstance(row, dict)
            or not isinstance(row.get("task_id"), str)
            or not isinstance(row.get("sample_index"), int)
        ):
            raise InputFileError(f"{path}:{number}: not a generated sample (task_id and sample_index needed)")
        rows.append(row)
    return rows


def _order(rows: list[dict[str, Any]], problems: Mapping[str, Any]) -> list[dict[str, Any]]:
    rank = {task_id: i for i, task_id in enumerate(problems)}
    return sorted(rows, key=lambda r: (rank.get(r["task_id"], len(rank)), r["task_id"], r["sample_index"]))


def generate_samples(
    benchmark: Benchmark,
    problems: Mapping[str, Any],
    backend: Backend,
    config: GenerationConfig,
    samples_path: str | os.PathLike[str],
    *,
    options: Mapping[str, Any] | None = None,
) -> GenerationRun:
    """Make sure `samples_path` holds `config.n_samples` samples of every problem; returns counts.

    Raises GenerationError (after saving what was finished) when the backend fails, and when the file
    holds samples of another model, benchmark or prompt style.
    """
    path = Path(samples_path)
    style = config.prompt_style or backend.default_style
    identity = {"model": backend.name, "benchmark": benchmark.name, "prompt_style": style}
    rows = _existing(path)
    for row in rows:
        other = {k: row.get(k) for k in _IDENTITY}
        if other != identity:
            raise GenerationError(
                f"{path} holds samples of {other}, not {identity}; use another output directory or remove it"
            )
    done = {(r["task_id"], r["sample_index"]) for r in rows}
    requests = []
    for task_id, problem in problems.items():
        missing = [i for i in range(config.n_samples) if (task_id, i) not in done]
        if missing:
            prompt = benchmark.make_prompt(problem, style, options)
            requests += [GenerationRequest(task_id, i, prompt) for i in missing]
    reused = len(rows)
    generated = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl_atomic(path, _order(rows, problems))  # drops a torn last line before appending
    try:
        with path.open("a", encoding="utf-8") as out:
            for request, text in backend.generate(requests, config):
                row = {
                    "task_id": request.task_id,
                    "sample_index": request.index,
                    **request.prompt.sample_fields(text),
                    "raw_generation": text,
                    **identity,
                }
                # (Counted before it is written: an interruption between the write and the count
                # lost a sample the file already showed, since the final rewrite below is of `rows`.)
                rows.append(row)
                generated += 1
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
                out.flush()
                os.fsync(out.fileno())
    finally:
        write_jsonl_atomic(path, _order(rows, problems))
    return GenerationRun(
        samples_path=path, generated=generated, reused=reused, model=backend.name, prompt_style=style
    )


def write_reference_samples(
    benchmark: Benchmark, problems: Mapping[str, Any], samples_path: str | os.PathLike[str]
) -> tuple[Path, list[str]]:
    """Write each problem's reference solution as a sample (to check that references pass).

    Returns the path and the task ids that have no reference (left out). Raises GenerationError when
    the benchmark knows no references or no problem has one.
    """
    if benchmark.reference is None:
        raise GenerationError(f"{benchmark.name} has no reference solutions")
    rows, missing = [], []
    for task_id, problem in problems.items():
        fields = benchmark.reference(problem)
        if fields is None:
            missing.append(task_id)
            continue
        rows.append(
            {
                "task_id": task_id,
                "sample_index": 0,
                **fields,
                "model": "reference",
                "benchmark": benchmark.name,
                "prompt_style": "reference",
            }
        )
    if not rows:
        raise GenerationError(
            f"none of the {len(problems)} {benchmark.name} problems has a reference solution"
        )
    return write_jsonl_atomic(samples_path, rows), missing

"""The results of an evaluation still running, kept on disk so that a rerun resumes it.

`<results file>.partial` beside the results file: a header line naming the run (benchmark, options,
time limit, problems, package versions: `run_key`), then one line per decided sample, appended as
verdicts come in and flushed at least every `FLUSH_S` seconds. A rerun of the same command (same
results path) takes every line whose sample is still the one at that position of the samples file
(same task id, completion and solution) and judges only the rest. The file is removed once the
results file is written; a torn last line (a crash mid-write) is ignored. An advisory lock keeps two
runs off one file.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import IO, Any

from coding_framework.evals.errors import OutputFileError
from coding_framework.evals.results import SampleResult
from coding_framework.evals.samples import Sample
from coding_framework.sandbox import Status

FLUSH_S = 0.5
_STATUSES = frozenset(status.value for status in Status)
_FORMAT = "coding-framework-evals-partial/1"


def partial_path_for(results_path: str | os.PathLike[str]) -> Path:
    """`x.jsonl` → `x.jsonl.partial` beside it."""
    path = Path(results_path)
    return path.with_name(path.name + ".partial")


def sample_key(sample: Sample) -> str:
    """What a recorded result must match to be reused: the sample's task, completion and solution."""
    text = json.dumps([sample.task_id, sample.completion, sample.solution], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def run_key(benchmark: str, options: Mapping[str, Any], timeout_s: float, problems: Mapping[str, Any]) -> str:
    """What every recorded result depends on besides its sample (the benchmark, its options, the time
    limit, the problems as loaded, the judging packages' versions): a change to any of it starts afresh."""
    versions = []
    for dist in ("coding-framework-evals", "coding-framework-sandbox"):
        try:
            versions.append(metadata.version(dist))
        except metadata.PackageNotFoundError:
            versions.append("")
    settings = json.dumps([benchmark, dict(options), timeout_s, versions], sort_keys=True, default=str)
    text = settings + repr(sorted(problems.items()))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class Checkpoint:
    """An open `.partial` file: `done` holds what it already had, `record` adds to it."""

    def __init__(self, path: Path, run: str, samples: list[Sample]):
        self.path = path
        self._run = run
        self._keys = [sample_key(s) for s in samples]
        self.done: dict[int, SampleResult] = {}
        self._handle: IO[str] | None = None
        self._flushed = time.monotonic()

    def __enter__(self) -> Checkpoint:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            handle = open(self.path, "a+", encoding="utf-8")
        except OSError as exc:
            raise OutputFileError(f"cannot write {self.path}: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise OutputFileError(
                f"another evaluation is writing the same results ({self.path} is locked): wait for it, "
                "or name another output (--output)"
            ) from None
        handle.seek(0)
        text = handle.read()
        self.done = self._read(text.splitlines())
        if not self.done:  # new, another run's, or nothing usable in it: start the file afresh
            handle.truncate(0)
            handle.seek(0)
            handle.write(json.dumps({"format": _FORMAT, "run": self._run}) + "\n")
        elif not text.endswith("\n"):
            handle.write("\n")  # end a torn last line, so that the next record starts a line of its own
        self._handle = handle
        return self

    def _read(self, lines: list[str]) -> dict[int, SampleResult]:
        """The usable records of an earlier run of the same command."""
        try:
            header = json.loads(lines[0]) if lines else None
        except ValueError:
            return {}
        if header != {"format": _FORMAT, "run": self._run}:
            return {}
        done: dict[int, SampleResult] = {}
        for line in lines[1:]:
            try:
                record = json.loads(line)
                index, key = record.pop("i"), record.pop("key")
                result = SampleResult(**record)
            except (ValueError, KeyError, TypeError):
                continue  # a torn line
            if type(result.passed) is not bool or result.status not in _STATUSES or (
                    result.passed != (result.status == Status.PASSED.value)):
                continue  # not a record this module wrote
            if type(index) is int and 0 <= index < len(self._keys) and self._keys[index] == key:
                done[index] = result
        return done

    def record(self, index: int, result: SampleResult) -> None:
        assert self._handle is not None
        row = {"i": index, "key": self._keys[index], **asdict(result)}
        self._handle.write(json.dumps(row) + "\n")  # ASCII: lone surrogates travel as escapes
        if time.monotonic() - self._flushed >= FLUSH_S:
            self._handle.flush()
            self._flushed = time.monotonic()

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            with contextlib.suppress(OSError):
                self._handle.flush()
                os.fsync(self._handle.fileno())
            self._handle.close()
            self._handle = None

    def remove(self) -> None:
        """The run is written out: its partial file goes."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

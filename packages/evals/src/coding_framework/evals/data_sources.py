"""Where a benchmark's data file is found: a path from a flag, an environment variable, or a data dir.

Nothing is ever downloaded. The lookup order is: the explicit path (`--problem-file`), the
benchmark's own environment variable (e.g. `CF_EVALS_HUMANEVAL_PLUS`), then each accepted file name
inside `$CF_EVALS_DATA_DIR`. When none exists the error names every place that was looked at and
says where the official file comes from.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from coding_framework.evals.errors import DatasetNotFoundError

DATA_DIR_ENV = "CF_EVALS_DATA_DIR"
"""A directory holding benchmark files under their official names (see each DataSource.file_names)."""


@dataclass(frozen=True)
class DataSource:
    """How one benchmark's data file is located and obtained."""

    title: str
    """Human name used in messages, e.g. "HumanEval+"."""
    env_var: str
    """Environment variable holding the path of the file."""
    file_names: tuple[str, ...]
    """Official file names looked for in $CF_EVALS_DATA_DIR, first match wins."""
    how_to_get: str
    """One sentence: where the official file is published."""

    def __post_init__(self) -> None:
        if not self.file_names:
            raise ValueError(f"{self.title}: a DataSource needs at least one accepted file name")

    def resolve(self, path: str | os.PathLike[str] | None = None) -> Path:
        """The data file to read; DatasetNotFoundError naming where it looked and how to get it."""
        if path is not None:
            return _existing(Path(path), f"{self.title} file not found: {path}", self.how_to_get)
        from_env = os.environ.get(self.env_var)
        if from_env:
            message = f"{self.title} file not found: {from_env} (from ${self.env_var})"
            return _existing(Path(from_env), message, self.how_to_get)
        data_dir = os.environ.get(DATA_DIR_ENV)
        if data_dir:
            for name in self.file_names:
                candidate = Path(data_dir) / name
                if candidate.is_file():
                    return candidate
        where = f"${DATA_DIR_ENV}={data_dir}" if data_dir else f"${DATA_DIR_ENV} (unset)"
        raise DatasetNotFoundError(
            f"{self.title} data not found: pass --problem-file PATH, set {self.env_var}=PATH, or put "
            f"{' or '.join(self.file_names)} in {where}. {self.how_to_get}"
        )


def _existing(path: Path, message: str, how_to_get: str) -> Path:
    if not path.is_file():
        raise DatasetNotFoundError(f"{message}. {how_to_get}")
    return path

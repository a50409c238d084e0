import gzip
import json
import os

import pytest

from coding_framework.evals.errors import InputFileError, OutputFileError
from coding_framework.evals.jsonl import (
    MAX_NESTING,
    check_writable_file,
    iter_jsonl,
    write_bytes_atomic,
    write_json_atomic,
    write_jsonl_atomic,
)


def test_reads_objects_with_their_line_numbers_skipping_blank_lines(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n   \n{"a": 2}\n')
    assert list(iter_jsonl(path)) == [(1, {"a": 1}), (4, {"a": 2})]


def test_bad_json_names_file_and_line(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}\n{"a": \n')
    with pytest.raises(InputFileError, match=r"x\.jsonl:3: not valid JSON"):
        list(iter_jsonl(path))


def test_non_object_line_is_rejected(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n[1, 2]\n')
    with pytest.raises(InputFileError, match=r"x\.jsonl:2: expected a JSON object per line, got list"):
        list(iter_jsonl(path))


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(InputFileError, match=r"cannot read .*nope\.jsonl: No such file"):
        list(iter_jsonl(tmp_path / "nope.jsonl"))


def test_corrupt_gzip_is_a_clear_error(tmp_path):
    path = tmp_path / "x.jsonl.gz"
    path.write_bytes(b"this is not gzip")
    with pytest.raises(InputFileError, match=r"cannot read .*x\.jsonl\.gz"):
        list(iter_jsonl(path))


def test_non_utf8_is_a_clear_error_naming_its_own_line(tmp_path):
    # Lines are decoded one at a time: a reading-ahead decoder named a line ~80 before the bad byte.
    path = tmp_path / "x.jsonl"
    path.write_bytes((b'{"a": "' + b"x" * 200 + b'"}\n') * 899 + b'{"a": "\xff\xfe"}\n')
    with pytest.raises(InputFileError, match=r"cannot read .*x\.jsonl:900: not UTF-8 text"):
        list(iter_jsonl(path))


def test_a_byte_order_mark_opening_the_file_is_skipped(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\n{"a": 2}\n')
    assert list(iter_jsonl(path)) == [(1, {"a": 1}), (2, {"a": 2})]


def test_values_python_cannot_read_or_write_back_are_clear_errors(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n{"a": ' + "9" * 5000 + "}\n")
    with pytest.raises(InputFileError, match=r"x\.jsonl:2: a value cannot be read .*digits"):
        list(iter_jsonl(path))
    for depth in (MAX_NESTING + 1, 100_000):  # the second is past the reader's own recursion limit
        path.write_text('{"a": 1}\n{"deep": ' + "[" * depth + "]" * depth + "}\n")
        with pytest.raises(InputFileError, match=rf"x\.jsonl:2: .* nested deeper than {MAX_NESTING}"):
            list(iter_jsonl(path))
    path.write_text('{"deep": ' + "[" * (MAX_NESTING - 1) + "]" * (MAX_NESTING - 1) + "}\n")
    ((_, row),) = iter_jsonl(path)
    write_jsonl_atomic(tmp_path / "back.jsonl", [row])  # what is read can be written again


@pytest.mark.parametrize("name", ["out.jsonl", "out.jsonl.gz"])
def test_write_then_read_round_trips(tmp_path, name):
    rows = [{"task_id": "t/0", "completion": "    return 1\n", "é": "ü"}, {"task_id": "t/1", "n": 2}]
    path = write_jsonl_atomic(tmp_path / name, rows)
    assert [row for _, row in iter_jsonl(path)] == rows
    if name.endswith(".gz"):
        with gzip.open(path, "rt") as fh:
            assert json.loads(fh.readline()) == rows[0]



def test_lone_surrogates_are_written_as_escapes_and_read_back_unchanged(tmp_path):
    # A completion read from '"\\udc80"', or a candidate's exception message, holds a lone surrogate,
    # which no UTF-8 writer takes: the whole run's results were once lost to one such sample.
    rows = [{"completion": "x\udc80y", "result": "error: ValueError: \ud800", "text": "\\udc80 as text"}]
    path = write_jsonl_atomic(tmp_path / "out.jsonl", rows)
    path.read_bytes().decode("utf-8")  # valid UTF-8
    assert [row for _, row in iter_jsonl(path)] == rows
    summary = write_json_atomic(tmp_path / "summary.json", rows[0])
    assert json.loads(summary.read_text(encoding="utf-8")) == rows[0]

def test_atomic_write_replaces_and_leaves_no_temporaries(tmp_path):
    path = tmp_path / "sub" / "out.jsonl"
    write_jsonl_atomic(path, [{"a": 1}])
    write_jsonl_atomic(path, [{"a": 2}, {"a": 3}])
    assert path.read_text() == '{"a": 2}\n{"a": 3}\n'
    assert os.listdir(path.parent) == ["out.jsonl"]


def test_failed_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "out.jsonl"
    write_jsonl_atomic(path, [{"a": 1}])
    with pytest.raises(TypeError):
        write_jsonl_atomic(path, [{"a": object()}])  # not JSON-serialisable
    assert path.read_text() == '{"a": 1}\n'
    assert os.listdir(tmp_path) == ["out.jsonl"]


def test_write_json_atomic(tmp_path):
    path = write_json_atomic(tmp_path / "s.json", {"pass@1": 0.5})
    assert json.loads(path.read_text()) == {"pass@1": 0.5}


def test_writing_follows_a_symlink_and_refuses_what_is_not_a_file(tmp_path):
    target = tmp_path / "real.jsonl"
    target.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    write_bytes_atomic(link, b"new\n")
    assert link.is_symlink() and target.read_text() == "new\n"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "a device, FIFO or socket"), (tmp_path, "a directory")):
        for attempt in (check_writable_file, lambda p: write_bytes_atomic(p, b"x")):
            with pytest.raises(OutputFileError, match=f"it exists and is {kind}, not a file"):
                attempt(path)
    assert (tmp_path / "fifo").exists() and not (tmp_path / "fifo").is_file()


def test_a_folder_that_takes_no_file_is_found_before_writing(tmp_path):
    (tmp_path / "plain").write_text("")
    with pytest.raises(OutputFileError, match=r"cannot write .*plain/out\.jsonl: .*(?i:not a directory)"):
        check_writable_file(tmp_path / "plain" / "out.jsonl")
    with pytest.raises(OutputFileError, match=r"cannot write /proc/out\.jsonl"):
        check_writable_file("/proc/out.jsonl")
    deep = tmp_path / "new" / "dir" / "out.jsonl"
    assert check_writable_file(deep) == deep
    assert not (tmp_path / "new").exists() and os.listdir(tmp_path) == ["plain"]  # the probe left nothing


def test_new_files_get_the_umask_and_replaced_ones_keep_their_mode(tmp_path):
    old = os.umask(0o027)
    try:
        fresh = write_bytes_atomic(tmp_path / "fresh", b"x")
        kept = tmp_path / "kept"
        kept.write_text("")
        kept.chmod(0o604)
        write_bytes_atomic(kept, b"y")
    finally:
        os.umask(old)
    assert (fresh.stat().st_mode & 0o777, kept.stat().st_mode & 0o777) == (0o640, 0o604)

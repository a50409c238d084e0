import gzip
import json
import os

import pytest

from coding_framework.evals.errors import InputFileError
from coding_framework.evals.jsonl import iter_jsonl, write_json_atomic, write_jsonl_atomic


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


def test_non_utf8_is_a_clear_error(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": "\xff\xfe"}\n')
    with pytest.raises(InputFileError, match=r"cannot read .*x\.jsonl"):
        list(iter_jsonl(path))


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

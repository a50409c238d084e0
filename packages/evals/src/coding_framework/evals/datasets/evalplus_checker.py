"""The trusted test of a HumanEval+ / MBPP+ job: evalplus's per-input comparison, restated.

This module's *source text* is embedded into each job's trusted test (it runs in the sandbox's judge
process, which does not import this package), so it must stay self-contained: standard library
only, numpy imported lazily where evalplus uses `np.allclose`. Tests import it normally.

Rules, per input i, in evalplus's order (evalplus/eval/__init__.py, `unsafe_execute`):
1. The call must return within `limits_s[i]` (measured here, on the trusted side, around the call).
2. `exact = out == expected[i]`, then the special oracles of evalplus replace or extend it:
   HumanEval `find_zero` (|poly(xs, out)| <= atol), MBPP `are_equivalent` (always true),
   `sum_div` (or out == 0), `surface_Area` and `digit_distance_nums` (recomputed answers),
   set-equality tasks and not-None tasks.
3. If atol is 0 and the expected value is a float (or a non-empty list/tuple of floats), atol becomes
   1e-6 — and stays so for the following inputs, as in evalplus, where the variable is reassigned.
4. Without an exact match and with atol != 0: same type, same length for lists/tuples, and
   `numpy.allclose(out, expected, rtol=1e-07, atol=atol)`; otherwise the exact match decides.
   One departure: `out` must also nest lists and tuples exactly as `expected` does (same_shape).
   evalplus lets allclose broadcast, so `[answer] * n` passed for a list answer of n floats; and since
   the comparison runs here in the judge, not in the candidate's memory-limited process as in evalplus,
   a reply of shape (n, k, 1) made the judge build an (n, k, n) array of the candidate's choosing.
"""

import math
import time

SET_EQUAL_ENTRY_POINTS = frozenset(
    {
        "similar_elements",
        "find_char_long",
        "common_in_nested_lists",
        "extract_singly",
        "larg_nnum",
        "intersection_array",
        "find_dissimilar",
        "Diff",
    }
)
NOT_NONE_ENTRY_POINTS = frozenset({"check_str", "text_match_three", "text_starta_endb"})


class OutputMismatch(AssertionError):
    """The candidate's output on one input is not accepted."""


def is_floats(value):
    """A float, or a non-empty list/tuple of only floats (evalplus's `is_floats`, numpy aside)."""
    if isinstance(value, float):
        return True
    if isinstance(value, list | tuple) and value:
        return all(isinstance(item, float) for item in value)
    return False


def poly(xs, x):
    """sum(c * x**i): HumanEval/32's polynomial, evaluated with math.pow as evalplus does."""
    return sum(coeff * math.pow(x, i) for i, coeff in enumerate(xs))


def mbpp_surface_area(base_edge, height):
    """Mbpp/581's answer, with height as the pyramid's perpendicular height, rounded."""
    slant = math.sqrt((base_edge / 2) ** 2 + height**2)
    return round(base_edge**2 + 2 * base_edge * slant)


def mbpp_digit_distance(first, second):
    """Mbpp/558's answer after zero-padding both numbers to the same length."""
    a, b = str(first), str(second)
    width = max(len(a), len(b))
    return sum(abs(int(x) - int(y)) for x, y in zip(a.zfill(width), b.zfill(width), strict=True))


def same_set(out, expected):
    """`set(out) == set(expected)`, in time linear in len(out) whatever `out` holds.

    `out` is the candidate's (its items can be built to share one hash: multiples of 2**61 - 1 all hash
    to 0), and `set(out)` of n distinct items sharing a hash is one quadratic C call that no alarm
    stops, holding the trusted judge for as long as the candidate likes. So each item is first looked
    up in the set of `expected` (the reference's output, trusted): a lookup costs at most the number of
    expected items sharing its hash, and this Python loop stays interruptible. Only when every item
    is one of the expected values is `set(out)` built: it then holds no more items sharing a hash
    than the expected set does. The verdict is exactly `set(out) == set(expected)`'s: an item not
    expected makes them differ, an unhashable one raises TypeError as `set(out)` would.
    """
    allowed = set(expected)
    seen = set()  # never more items than `allowed`: each one added is equal to one of those
    for item in out:  # once, and lazily: `out` may be an iterator, or a long str (one item per char)
        if item not in allowed:
            return False
        seen.add(item)
    return seen == allowed


def same_shape(out, expected):
    """Whether `out` nests lists and tuples exactly as `expected` does: at every level a list or tuple
    of the same length where `expected` has one, and none where it has none. Linear in `expected`'s
    size (a longer `out` is refused at the first length that differs)."""
    todo = [(out, expected)]
    while todo:
        got, want = todo.pop()
        if isinstance(want, list | tuple):
            if not isinstance(got, list | tuple) or len(got) != len(want):
                return False
            todo.extend(zip(got, want, strict=True))
        elif isinstance(got, list | tuple):
            return False
    return True


def _exact_match(dataset, entry_point, args, out, expected, atol):
    exact = out == expected
    if dataset == "mbpp":
        if entry_point == "are_equivalent":
            return True
        if entry_point == "sum_div":
            return exact or out == 0
        if entry_point == "surface_Area":
            return exact or abs(out - mbpp_surface_area(*args)) <= atol
        if entry_point == "digit_distance_nums":
            return exact or out == mbpp_digit_distance(*args)
        if entry_point in SET_EQUAL_ENTRY_POINTS:
            return same_set(out, expected)
        if entry_point in NOT_NONE_ENTRY_POINTS:
            return out == expected if isinstance(out, bool) else expected == (out is not None)
    return exact


def output_matches(dataset, entry_point, args, out, expected, atol):
    """`(accepted, atol for the next input)`; raises nothing for odd outputs, it rejects them."""
    try:
        if dataset == "humaneval" and entry_point == "find_zero":
            return abs(poly(*args, out)) <= atol, atol
        exact = _exact_match(dataset, entry_point, args, out, expected, atol)
        if atol == 0 and is_floats(expected):
            atol = 1e-6
        if exact or atol == 0:
            return bool(exact), atol
        if type(out) is not type(expected):
            return False, atol
        if isinstance(expected, list | tuple) and len(out) != len(expected):
            return False, atol
        if not same_shape(out, expected):
            return False, atol
        import numpy

        return bool(numpy.allclose(out, expected, rtol=1e-07, atol=atol)), atol
    except Exception:
        # evalplus counts any exception while comparing (a str handed to allclose, a set() of an
        # int) as a failed input.
        return False, atol


def _short(value, limit=160):
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_inputs(candidate, dataset, entry_point, part, inputs, expected, limits_s, atol):
    """Call `candidate` on every input in order; raise OutputMismatch on the first rejected one."""
    for index, args in enumerate(inputs):
        start = time.perf_counter()
        out = candidate(*args)
        took = time.perf_counter() - start
        if took > limits_s[index]:
            raise OutputMismatch(
                f"{part} input {index}: took {took:.3f}s, over its {limits_s[index]:.3f}s limit"
            )
        accepted, atol = output_matches(dataset, entry_point, args, out, expected[index], atol)
        if not accepted:
            raise OutputMismatch(
                f"{part} input {index}: {entry_point}(*{_short(args)}) returned {_short(out)}, "
                f"expected {_short(expected[index])}"
            )

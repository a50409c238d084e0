"""Level 3: two steps composed (filter then map, map then count, split then select, two arguments)."""

from __future__ import annotations

from random import Random

from coding_framework.agents.families.base import (
    LIST_NAMES,
    SENTENCE_NAMES,
    Family,
    Task,
    int_list,
    sentence,
    word,
)


def filter_map(rng: Random) -> Task:
    k = rng.randint(-30, 60)
    m = rng.randint(2, 30)
    xs = rng.choice(LIST_NAMES)
    return Task(
        "filter_map", 3, {"k": k, "m": m}, rng.choice(("scale_large", "pick_and_scale", "boost")), (xs,),
        f"Keep the elements of {xs} greater than {k}, multiply each by {m}, and return the new list.",
        f"return [v * {m} for v in {xs} if v > {k}]",
        lambda vs: [m * v for v in filter(lambda v: v > k, vs)],
        lambda r: (int_list(r, k - 12, k + 17, 0, 8),),
        (([],), ([k, k + 1],)),
    )


def map_count(rng: Random) -> Task:
    m = rng.randint(2, 12)
    k = rng.randint(0, 200)
    xs = rng.choice(LIST_NAMES)
    return Task(
        "map_count", 3, {"k": k, "m": m}, rng.choice(("count_scaled", "scaled_above", "how_many_big")), (xs,),
        f"Multiply each element of {xs} by {m} and return how many of the results are greater than {k}.",
        f"count = 0\nfor v in {xs}:\n    if v * {m} > {k}:\n        count += 1\nreturn count",
        lambda vs: len([v for v in vs if k < m * v]),
        lambda r: (int_list(r, k // m - 10, k // m + 10, 0, 8),),
        (([],),),
    )


def sum_squares_if(rng: Random) -> Task:
    odd = rng.random() < 0.5
    k = rng.randint(-100, 200)
    xs = rng.choice(LIST_NAMES)
    parity, rem = ("odd", 1) if odd else ("even", 0)
    return Task(
        "sum_squares_if", 3, {"odd": odd, "k": k}, rng.choice(("square_sum", "energy", "sum_sq")), (xs,),
        f"Return {k} plus the sum of the squares of the {parity} elements of {xs}.",
        f"return {k} + sum(v * v for v in {xs} if v % 2 == {rem})",
        lambda vs: k + sum(v**2 for v in vs if (v % 2 == 1) == odd), lambda r: (int_list(r, -9, 12, 0, 8),),
        (([],),),
    )


_LENGTHS = {"more than": ">", "fewer than": "<", "at least": ">=", "at most": "<="}


def count_long_words(rng: Random) -> Task:
    k = rng.randint(1, 6)
    words = rng.choice(sorted(_LENGTHS))
    op = _LENGTHS[words]
    s = rng.choice(SENTENCE_NAMES)
    test = {">": lambda n: n > k, "<": lambda n: n < k, ">=": lambda n: n >= k, "<=": lambda n: n <= k}[op]
    return Task(
        "count_long_words", 3, {"k": k, "op": op}, rng.choice(("count_words", "word_count", "wordy")), (s,),
        f"Split {s} at spaces and return how many words have {words} {k} letters.",
        f"return len([w for w in {s}.split(' ') if w and len(w) {op} {k}])",
        lambda v: sum(1 for w in v.split() if test(len(w))), lambda r: (sentence(r),),
        (("",), (word(rng, k, k),), (word(rng, k + 1, k + 1),)),
    )


def join_short_words(rng: Random) -> Task:
    k = rng.randint(2, 6)
    sep = rng.choice(("-", "+", ",", "_", "/"))
    s = rng.choice(SENTENCE_NAMES)
    return Task(
        "join_short_words", 3, {"k": k, "sep": sep}, rng.choice(("short_words", "join_small", "keep_short")),
        (s,),
        f"Split {s} at spaces, keep the words with at most {k} letters, and join them with {sep!r}.",
        f"return {sep!r}.join(w for w in {s}.split(' ') if len(w) <= {k})",
        lambda v: sep.join(filter(lambda w: not len(w) > k, v.split())), lambda r: (sentence(r),),
        (("",),),
    )


def clamp_list(rng: Random) -> Task:
    lo = rng.randint(-50, 50)
    hi = lo + rng.randint(2, 40)
    xs = rng.choice(LIST_NAMES)
    return Task(
        "clamp_list", 3, {"lo": lo, "hi": hi}, rng.choice(("clamp", "clip", "limit")), (xs,),
        f"Return a new list where each element of {xs} below {lo} becomes {lo} "
        f"and each element above {hi} becomes {hi}.",
        f"return [min(max(v, {lo}), {hi}) for v in {xs}]",
        lambda vs: [lo if v < lo else hi if v > hi else v for v in vs],
        lambda r: (int_list(r, lo - 10, hi + 10),),
        (([],), ([lo, hi],)),
    )


def running_total(rng: Random) -> Task:
    start = rng.randint(-100, 200)
    xs = rng.choice(LIST_NAMES)

    def oracle(vs: list[int]) -> list[int]:
        return [start + sum(vs[: i + 1]) for i in range(len(vs))]

    return Task(
        "running_total", 3, {"start": start}, rng.choice(("running", "cumulative", "prefix_sums")), (xs,),
        f"Start a total at {start}, add the elements of {xs} one by one, "
        "and return the list of totals after each addition.",
        f"total = {start}\nresult = []\nfor v in {xs}:\n    total += v\n    result.append(total)\n"
        "return result",
        oracle, lambda r: (int_list(r, -9, 20, 0, 7),), (([],),),
    )


def combine_pairs(rng: Random) -> Task:
    k = rng.randint(2, 40)
    plus = rng.random() < 0.5
    a, b = rng.choice((("a", "b"), ("xs", "ys"), ("left", "right")))
    sign = "+" if plus else "-"

    def draw(r: Random) -> tuple[list[int], list[int]]:
        n = r.randint(0, 6)
        return [r.randint(-9, 9) for _ in range(n)], [r.randint(-9, 9) for _ in range(n)]

    return Task(
        "combine_pairs", 3, {"k": k, "op": sign}, rng.choice(("combine", "mix", "pairwise")), (a, b),
        f"{a} and {b} have the same length. Return a list whose item i is "
        f"{a}[i] times {k} {'plus' if plus else 'minus'} {b}[i].",
        f"return [x * {k} {sign} y for x, y in zip({a}, {b}, strict=True)]",
        lambda u, v: [u[i] * k + (v[i] if plus else -v[i]) for i in range(len(u))], draw, (([], []),),
    )


FAMILIES = (
    Family("filter_map", 3, filter_map, "filter by a threshold, then scale"),
    Family("map_count", 3, map_count, "scale, then count above a threshold"),
    Family("sum_squares_if", 3, sum_squares_if, "constant plus the sum of squares of odd/even elements"),
    Family("count_long_words", 3, count_long_words, "split a sentence, count long words"),
    Family("join_short_words", 3, join_short_words, "split a sentence, keep short words, join"),
    Family("clamp_list", 3, clamp_list, "clamp each element into [lo, hi]"),
    Family("running_total", 3, running_total, "running totals from a start value"),
    Family("combine_pairs", 3, combine_pairs, "combine two lists item by item"),
)

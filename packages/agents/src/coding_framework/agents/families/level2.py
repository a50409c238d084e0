"""Level 2: a loop or a condition over a list or a string."""

from __future__ import annotations

import string
from random import Random

from coding_framework.agents.families.base import LIST_NAMES, STR_NAMES, Family, Task, int_list, word
from coding_framework.agents.families.level1 import COMPARISONS, near_alphabet

_TESTS = {
    ">": lambda v, k: v > k,
    "<": lambda v, k: v < k,
    ">=": lambda v, k: not v < k,
    "<=": lambda v, k: not v > k,
}


def boundary_lists(k: int) -> tuple[tuple[list[int]], ...]:
    """Hidden-test inputs at a threshold k: an empty list, [k] and [k + 1]. Together they tell every
    comparison at k from every other, and from the same comparison at another threshold, except pairs
    that mean the same on integers ("greater than 4" and "at least 5")."""
    return (([],), ([k],), ([k + 1],))


def count_compare(rng: Random) -> Task:
    k = rng.randint(-50, 100)
    words = rng.choice(sorted(COMPARISONS))
    op = COMPARISONS[words]
    xs = rng.choice(LIST_NAMES)
    test = _TESTS[op]
    return Task(
        "count_compare", 2, {"k": k, "op": op}, rng.choice(("count_if", "how_many", "tally")), (xs,),
        f"Return how many elements of {xs} are {words} {k}.",
        f"return sum(1 for v in {xs} if v {op} {k})",
        lambda vs: len([v for v in vs if test(v, k)]), lambda r: (int_list(r, k - 14, k + 15),),
        boundary_lists(k),
    )


def sum_compare(rng: Random) -> Task:
    k = rng.randint(-50, 100)
    words = rng.choice(sorted(COMPARISONS))
    op = COMPARISONS[words]
    xs = rng.choice(LIST_NAMES)
    test = _TESTS[op]
    return Task(
        "sum_compare", 2, {"k": k, "op": op}, rng.choice(("sum_if", "partial_sum", "total")), (xs,),
        f"Return the sum of the elements of {xs} that are {words} {k}.",
        f"total = 0\nfor v in {xs}:\n    if v {op} {k}:\n        total += v\nreturn total",
        lambda vs: sum(v for v in vs if test(v, k)), lambda r: (int_list(r, k - 14, k + 15),),
        boundary_lists(k),
    )


def sum_multiples(rng: Random) -> Task:
    k = rng.randint(2, 30)
    divisible = rng.random() < 0.5
    xs = rng.choice(LIST_NAMES)
    phrase, test = ("divisible", "==") if divisible else ("not divisible", "!=")
    return Task(
        "sum_multiples", 2, {"k": k, "divisible": divisible},
        rng.choice(("sum_multiples", "add_divisible", "total_of")), (xs,),
        f"Return the sum of the elements of {xs} that are {phrase} by {k}.",
        f"return sum(v for v in {xs} if v % {k} {test} 0)",
        lambda vs: sum(v for v in vs if (v - (v // k) * k == 0) == divisible),
        lambda r: (int_list(r, 0, max(40, 4 * k)),),
        (([],),),
    )


_MAPS = {"plus": "+", "minus": "-", "times": "*"}


def map_arith(rng: Random) -> Task:
    words = rng.choice(sorted(_MAPS))
    op = _MAPS[words]
    k = rng.randint(2, 60)
    xs = rng.choice(LIST_NAMES)
    apply = {"+": lambda v: v + k, "-": lambda v: v - k, "*": lambda v: v * k}[op]
    return Task(
        "map_arith", 2, {"k": k, "op": op}, rng.choice(("map_all", "transform", "each")), (xs,),
        f"Return a new list with each element of {xs} {words} {k}.",
        f"return [v {op} {k} for v in {xs}]",
        lambda vs: list(map(apply, vs)), lambda r: (int_list(r),), (([],),),
    )


def filter_compare(rng: Random) -> Task:
    k = rng.randint(-50, 100)
    words = rng.choice(sorted(COMPARISONS))
    op = COMPARISONS[words]
    xs = rng.choice(LIST_NAMES)
    test = _TESTS[op]
    return Task(
        "filter_compare", 2, {"k": k, "op": op}, rng.choice(("keep", "select", "filter_values")), (xs,),
        f"Return the elements of {xs} that are {words} {k}, in their original order.",
        f"result = []\nfor v in {xs}:\n    if v {op} {k}:\n        result.append(v)\nreturn result",
        lambda vs: list(filter(lambda v: test(v, k), vs)), lambda r: (int_list(r, k - 14, k + 15),),
        boundary_lists(k),
    )


def find_index(rng: Random) -> Task:
    k = rng.randint(0, 99)
    missing = rng.choice((-1, -2, 99))
    xs = rng.choice(LIST_NAMES)
    low = max(0, k - 5)  # inputs from ten values around k, so k is often present

    def oracle(vs: list[int]) -> int:
        return next((i for i, v in enumerate(vs) if v == k), missing)

    return Task(
        "find_index", 2, {"k": k, "missing": missing}, rng.choice(("find", "index_of", "locate")), (xs,),
        f"Return the index of the first element of {xs} equal to {k}, or {missing} if there is none.",
        f"for i, v in enumerate({xs}):\n    if v == {k}:\n        return i\nreturn {missing}",
        oracle, lambda r: (int_list(r, low, low + 9),), (([],), ([k, k],)),
    )


def extreme_or_default(rng: Random) -> Task:
    largest = rng.random() < 0.5
    default = rng.randint(-200, 200)
    xs = rng.choice(LIST_NAMES)
    which = "largest" if largest else "smallest"
    pick = max if largest else min
    return Task(
        "extreme_or_default", 2, {"largest": largest, "default": default},
        rng.choice(("extreme", "pick", "best")), (xs,),
        f"Return the {which} element of {xs}, or {default} if {xs} is empty.",
        f"if not {xs}:\n    return {default}\nreturn {pick.__name__}({xs})",
        lambda vs: sorted(vs)[-1 if largest else 0] if vs else default,
        lambda r: (int_list(r, -20, 20, 1),), (([],),),
    )


def replace_char(rng: Random) -> Task:
    a = rng.choice("abcdef")
    b = rng.choice("xyz*-_")
    s = rng.choice(STR_NAMES)
    return Task(
        "replace_char", 2, {"old": a, "new": b}, rng.choice(("replace", "swap_char", "substitute")), (s,),
        f"Return {s} with every {a!r} replaced by {b!r}.", f"return {s}.replace({a!r}, {b!r})",
        lambda v: "".join(b if ch == a else ch for ch in v), lambda r: (word(r, 0, 10, "abcdef"),),
        (("",),),
    )


def remove_char(rng: Random) -> Task:
    c = rng.choice(string.ascii_lowercase[:20])
    letters = near_alphabet(c)
    s = rng.choice(STR_NAMES)
    return Task(
        "remove_char", 2, {"c": c}, rng.choice(("strip_char", "remove", "drop_char")), (s,),
        f"Return {s} with every {c!r} removed.",
        f"result = ''\nfor ch in {s}:\n    if ch != {c!r}:\n        result += ch\nreturn result",
        lambda v: v.replace(c, ""), lambda r: (word(r, 0, 10, letters),), (("",),),
    )


FAMILIES = (
    Family("count_compare", 2, count_compare, "count list elements passing a comparison"),
    Family("sum_compare", 2, sum_compare, "sum list elements passing a comparison"),
    Family("sum_multiples", 2, sum_multiples, "sum list elements divisible by k"),
    Family("map_arith", 2, map_arith, "apply +, - or * k to each element"),
    Family("filter_compare", 2, filter_compare, "keep list elements passing a comparison"),
    Family("find_index", 2, find_index, "index of the first match, or a default"),
    Family("extreme_or_default", 2, extreme_or_default, "max or min of a list, or a default if empty"),
    Family("replace_char", 2, replace_char, "replace one character by another"),
    Family("remove_char", 2, remove_char, "remove one character"),
)

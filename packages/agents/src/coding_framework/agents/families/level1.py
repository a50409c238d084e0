"""Level 1: one arithmetic, comparison or string operation on one argument, with a constant to read."""

from __future__ import annotations

import string
from random import Random

from coding_framework.agents.families.base import INT_NAMES, STR_NAMES, Family, Task, word


def add_const(rng: Random) -> Task:
    k = rng.randint(1, 300)
    x = rng.choice(INT_NAMES)
    return Task(
        "add_const", 1, {"k": k}, rng.choice(("add", "plus", "increase", "shift_up")), (x,),
        f"Return {x} plus {k}.", f"return {x} + {k}",
        lambda v: v + k, lambda r: (r.randint(-50, 50),), ((0,),),
    )


def sub_const(rng: Random) -> Task:
    k = rng.randint(1, 300)
    x = rng.choice(INT_NAMES)
    return Task(
        "sub_const", 1, {"k": k}, rng.choice(("subtract", "minus", "decrease", "shift_down")), (x,),
        f"Return {x} minus {k}.", f"return {x} - {k}",
        lambda v: v - k, lambda r: (r.randint(-50, 50),), ((0,),),
    )


def mul_const(rng: Random) -> Task:
    k = rng.randint(2, 60)
    x = rng.choice(INT_NAMES)
    return Task(
        "mul_const", 1, {"k": k}, rng.choice(("multiply", "times", "scale")), (x,),
        f"Return {x} times {k}.", f"return {x} * {k}",
        lambda v: v * k, lambda r: (r.randint(-30, 30),), ((0,),),
    )


def mod_const(rng: Random) -> Task:
    k = rng.randint(2, 60)
    x = rng.choice(INT_NAMES)
    return Task(
        "mod_const", 1, {"k": k}, rng.choice(("remainder", "modulo", "leftover")), (x,),
        f"Return the remainder of {x} divided by {k}.", f"return {x} % {k}",
        lambda v: v - (v // k) * k, lambda r: (r.randint(0, max(200, 8 * k)),), ((0,), (k,)),
    )


def floordiv_const(rng: Random) -> Task:
    k = rng.randint(2, 60)
    x = rng.choice(INT_NAMES)
    return Task(
        "floordiv_const", 1, {"k": k}, rng.choice(("divide", "quotient", "split_into")), (x,),
        f"Return {x} divided by {k}, rounded down.", f"return {x} // {k}",
        lambda v: int(v / k) if v >= 0 else -((-v + k - 1) // k), lambda r: (r.randint(0, max(200, 8 * k)),),
        ((0,), (k - 1,), (k,)),
    )


def is_multiple(rng: Random) -> Task:
    k = rng.randint(2, 60)
    x = rng.choice(INT_NAMES)

    def draw(r: Random) -> tuple[int]:
        # Half the inputs are multiples, so always answering False scores about half, not ~90%.
        return (k * r.randint(0, 20),) if r.random() < 0.5 else (r.randint(1, max(150, 6 * k)),)

    return Task(
        "is_multiple", 1, {"k": k}, rng.choice(("is_multiple", "divisible", "check_divisible")), (x,),
        f"Return True if {x} is divisible by {k}, else False.", f"return {x} % {k} == 0",
        lambda v: any(v == k * i for i in range(0, v // k + 1)) if v >= 0 else v % k == 0, draw,
        ((0,), (k,), (k + 1,)),
    )


COMPARISONS = {"greater than": ">", "less than": "<", "at least": ">=", "at most": "<="}


def compare_const(rng: Random) -> Task:
    k = rng.randint(-100, 200)
    words = rng.choice(sorted(COMPARISONS))
    op = COMPARISONS[words]
    x = rng.choice(INT_NAMES)
    oracle = {
        ">": lambda v: v > k, "<": lambda v: v < k, ">=": lambda v: not v < k, "<=": lambda v: not v > k
    }[op]
    return Task(
        "compare_const", 1, {"k": k, "op": op}, rng.choice(("meets", "compare", "test_value")), (x,),
        f"Return True if {x} is {words} {k}, else False.", f"return {x} {op} {k}",
        oracle, lambda r: (r.randint(k - 15, k + 15),), ((k,), (k - 1,), (k + 1,)),
    )


def repeat_str(rng: Random) -> Task:
    k = rng.randint(2, 20)
    s = rng.choice(STR_NAMES)
    return Task(
        "repeat_str", 1, {"k": k}, rng.choice(("repeat", "echo", "copies")), (s,),
        f"Return {s} repeated {k} times.", f"return {s} * {k}",
        lambda v: "".join([v] * k), lambda r: (word(r, 1, 4),), (("",),),
    )


def prefix_str(rng: Random) -> Task:
    k = rng.randint(1, 40)
    s = rng.choice(STR_NAMES)
    return Task(
        "prefix_str", 1, {"k": k}, rng.choice(("head", "prefix", "first_chars")), (s,),
        f"Return the first {k} characters of {s} (all of {s} if it is shorter).", f"return {s}[:{k}]",
        lambda v: "".join(v[i] for i in range(min(k, len(v)))), lambda r: (word(r, 1, k + 5),),
        (("",),),
    )


def suffix_str(rng: Random) -> Task:
    k = rng.randint(1, 40)
    s = rng.choice(STR_NAMES)
    return Task(
        "suffix_str", 1, {"k": k}, rng.choice(("tail", "suffix", "last_chars")), (s,),
        f"Return the last {k} characters of {s} (all of {s} if it is shorter).", f"return {s}[-{k}:]",
        lambda v: v[max(0, len(v) - k):], lambda r: (word(r, 1, k + 5),), (("",),),
    )


def append_str(rng: Random) -> Task:
    tail = word(rng, 1, 4)
    front = rng.random() < 0.5
    s = rng.choice(STR_NAMES)
    where = "at the start" if front else "at the end"
    body = f"return {tail!r} + {s}" if front else f"return {s} + {tail!r}"
    return Task(
        "append_str", 1, {"tail": tail, "front": front}, rng.choice(("decorate", "attach", "extend")),
        (s,), f"Return {s} with {tail!r} added {where}.", body,
        (lambda v: f"{tail}{v}") if front else (lambda v: f"{v}{tail}"), lambda r: (word(r, 0, 6),),
        (("",),),
    )


def near_alphabet(c: str) -> str:
    """Letters for random inputs: `c` and five common others, so `c` shows up often."""
    return "".join(sorted(set("abcde") | {c}))


def count_char(rng: Random) -> Task:
    c = rng.choice(string.ascii_lowercase[:20])
    letters = near_alphabet(c)
    s = rng.choice(STR_NAMES)
    return Task(
        "count_char", 1, {"c": c}, rng.choice(("count", "occurrences", "tally")), (s,),
        f"Return how many times {c!r} appears in {s}.", f"return {s}.count({c!r})",
        lambda v: sum(1 for ch in v if ch == c), lambda r: (word(r, 0, 10, letters),), (("",),),
    )


FAMILIES = (
    Family("add_const", 1, add_const, "x plus a constant"),
    Family("sub_const", 1, sub_const, "x minus a constant"),
    Family("mul_const", 1, mul_const, "x times a constant"),
    Family("mod_const", 1, mod_const, "remainder by a constant"),
    Family("floordiv_const", 1, floordiv_const, "integer division by a constant"),
    Family("is_multiple", 1, is_multiple, "divisibility test"),
    Family("compare_const", 1, compare_const, "comparison with a constant"),
    Family("repeat_str", 1, repeat_str, "string repeated k times"),
    Family("prefix_str", 1, prefix_str, "first k characters"),
    Family("suffix_str", 1, suffix_str, "last k characters"),
    Family("append_str", 1, append_str, "add a fixed string at the start or end"),
    Family("count_char", 1, count_char, "count one character in a string"),
)

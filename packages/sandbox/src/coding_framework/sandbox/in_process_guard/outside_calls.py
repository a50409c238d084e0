"""Whether the program's code ran in the tests' thread outside the program's calls.

The value walk (returned_values) and the bindings checks (bindings) judge what a call of the program's
returned, as it returns. Code of the program's that runs in the tests' thread after that, before the
test compares, can change the value or answer the comparison: a finalizer of its garbage that a
collection there ran (red-team round 28, since closed by keeping the collector off there); an object
of its own left in a registry the process shares, which library code in the test calls (round 29: a
`warnings.filters` entry whose `match` ran when `assertEquals` warned; a class with its own
`__subclasscheck__` registered on `collections.abc`'s ABCs, which matplotlib's `isinstance` checks
reached). Registries of that kind are many (import finders, codec search functions, logging filters,
numpy's error callback, copyreg, ...); rather than each, the guard watches the thread: a C profile
function (`_outside_calls.c`) records the first frame of the program's code entered from library
code while no call of the program's runs, and the sample is an error at the next check (a guarded
call's return, or the hand-over after each test). The tests' own code may enter it by calling it by
name (what no guard wraps: a function a returned value holds; the functions, methods and other
callables of the program's the tests call are GuardedFunctions, whose calls pause the watch), not
through special methods the interpreter calls by itself (a finalizer, a comparison);
so may the guard's generator handing out a returned generator's items (`_checked_items`), and library
code may call by name the program's functions found in a value a call returned (a Flask app's views and
the methods of its class-based views' classes, a FuncFormatter's function, a FunctionTransformer's:
`allow`, which only the holder of the token `watch` returned, the harness, can tell). Such a function
also put in a registry is not found when the registry calls it (see the package README). Each call of
the program's pauses the watch (GuardedFunction), if the tests' code started it (or unittest's where it
calls what a test handed it): a GuardedFunction of the program's put in a registry, which
library code called after a value's check, ran the program's code there as a call (planting
`mock.ANY`, a library object equal to anything, in the returned list). A coroutine such a call
returned pauses it for its flight (CheckedCoroutine). Each pause is held by its call's frame or its
coroutine, and ends only there: instances of the guard's classes the program built itself paused
without resuming, or resumed another's pause (red-team round 30). A pause still standing at a
hand-over, where no call runs, is an error too.

What no frame shows (a registry entry built of C callables only, which planted `mock.ANY` in a returned
list: rounds 30 and 31) is looked for in the values themselves: each value a call returned is kept
(`keep`) and walked again as each later call starts (the RECENT most recent) and as each test ends
(all; `recheck_kept`, in the tests' thread: from the call checks and suite_runner._HandOver); what
that finds is recorded (`changed`) and read by the harness after each test (a value returned in
`setUpClass` and changed in a later test, or changed and changed back by a later call: round 32).
A kept value is retired (not walked again; freed only where that runs no code, numbers and numeric
arrays and exact containers of them, else moved where it is never freed: a finalizer it carries would
run as it died, after its last walk) once nothing else holds it: at a call's start, an exact tuple,
list, dict or set only if nothing holds any part of it either (`drop_unheld`: `a, n = f()` keeps the
tuple walked while the test holds `a`; another object's parts are not followed, as before), and at
its test's end unless a test class or the test module binds it, or binds what it holds one level
down (`retire_unheld`, by the harness's thread with a token of its own and suite_runner's
`held_across_tests`: what outlives a test in the tests' hands is what setUpClass and module-level
code stored; a Figure only pyplot holds is retired). Red-team round 60a: a value dropped while the
test held its parts, then changed by another call, and a dropped deque whose
`weakref.finalize(d, operator.setitem, part, ...)` rewrote the part setUpClass held.
Not closed: a value changed and changed back by C callables only within one test, between two of
its checks; a change made after the last test ends (tearDownClass); a value retired at a test's
end that a later test still reaches otherwise (through a library registry, `plt.gcf()`, or stored
deeper than one level in what a test class binds), changed later by C callables the program left in
a registry (what the tests then compare was walked last at that test's end).
"""

from __future__ import annotations

try:
    from coding_framework.sandbox.in_process_guard._outside_calls import (
        allow,
        change_found,
        changed,
        drop_unheld,
        fly,
        keep,
        kept,
        land,
        launch,
        pause,
        paused,
        ran,
        register,
        registered,
        resume,
        retire_unheld,
        retirement_token,
        through,
        watch,
    )
except ImportError:  # (no compiler when the package was installed: see the module docstring)
    AVAILABLE = False

    def watch(program_codes: dict, test_codes: dict, free_callers: dict, callers: dict, call_pausers: tuple,
              flight_pausers: tuple) -> None:
        return None

    def _nothing(*unused: object) -> None:
        return None

    allow = changed = drop_unheld = fly = keep = land = launch = pause = register = resume = _nothing
    ran = change_found = retire_unheld = retirement_token = _nothing

    def through(method: bool) -> bool:
        return False

    def registered(obj: object) -> bool:
        return False

    def paused() -> int:
        return 0

    def kept(recent: int = 0) -> list:
        return []
else:
    AVAILABLE = True

__all__ = ["AVAILABLE", "RECENT", "allow", "change_found", "changed", "drop_unheld", "fly", "keep", "kept",
           "land", "launch", "pause", "paused", "ran", "recheck_kept", "register", "registered", "resume",
           "retire_unheld", "retirement_token",
           "through", "watch"]

# How many of the most recently returned values a call's start walks again (a test's end walks them
# all): what the test compares is what its latest calls returned, and a test collecting a thousand
# results would otherwise have every call walk all those before it.
RECENT = 32


def recheck_kept(answerer, is_trusted, libraries, kept, changed, drop_unheld, recent: int = 0) -> None:
    """Walk again (with the value checks' `answerer`) the values calls returned (`kept`; the `recent`
    most recent, where given), record the first finding (`changed`), and retire those that neither
    they nor their parts are held by anything else (`drop_unheld`; freed only where that runs no
    code). Run in the tests' thread, watched; anyone may run it: it only records, and retires what no
    test can reach."""
    try:
        for value in kept(recent):
            culprit = answerer(value, is_trusted, libraries)
            if culprit:
                changed(f"a value a call of the program's returned holds, since its check, {culprit} (put "
                        "there by the program's code, or by the test's own)")
                break
        value = None
        drop_unheld()
    except BaseException as exc:  # (whatever stops the walk, the values were not seen)
        changed(f"the values the program's calls returned could not be walked again ({type(exc).__name__})")

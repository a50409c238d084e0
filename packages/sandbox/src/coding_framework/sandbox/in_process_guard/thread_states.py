"""How many threads of this process could still run Python code: the interpreter's thread states.

A guarded call that returns while a thread of the program's could still run is refused (guarded_calls):
such a thread can change the value after the walk looked at it and before the test compares it
(red-team round 26). `_thread._count()` does not tell: it counts threads while their function runs,
and CPython 3.11 lowers it before it clears the ending thread's state, whose thread-locals' finalizers
then run Python code in that thread for as long as they like (round 27: a `threading.local` holding an
object whose `__del__` planted always-equal objects after the check). Nor does it count a thread that
`_thread.start_new_thread` has made but that has not run yet. The interpreter's list of thread states
holds both, and threads a C library made for a callback; the compiled `_thread_states.count` walks it
in one C call under the GIL, which no thread can interleave with. (`sys._current_exceptions()` is one
C call too, but keys the states by thread id: a state made for a thread that has not run yet carries
its creator's id and is lost in the dict.)

`live_contexts()` is every live contextvars.Context (the value walk reads what a werkzeug LocalProxy's
ContextVar holds in each: returned_values), from the one gc walk the audit hook lets through in a
unittest child (`scanning()` says, in C and once, that this thread runs it), with the collector off;
it refuses to answer where objects were frozen since `freeze_baseline()` (the harness, before the
program runs), which gc.get_objects() then leaves out.

Where the extension could not be compiled (`pip install` without a C compiler), `count` is
`_thread._count`, `live_contexts` is None (LocalProxys are refused as values) and the isolation report
names the missing layer (`thread_state_count`).
"""

from __future__ import annotations

import _thread

try:
    from coding_framework.sandbox.in_process_guard._thread_states import (
        count,
        freeze_baseline,
        live_contexts,
        scanning,
    )
except ImportError:  # (the fallback: see the module docstring)
    count, live_contexts = _thread._count, None

    def scanning() -> bool:
        return False

    def freeze_baseline() -> None:
        return None

    AVAILABLE = False
else:
    AVAILABLE = True

__all__ = ["AVAILABLE", "count", "freeze_baseline", "live_contexts", "scanning"]

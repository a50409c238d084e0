"""Layer 3 of the in-process guard: the program's functions as the tests see them (GuardedFunction),
checked each time a call returns.
"""

from __future__ import annotations

import builtins
import collections.abc
import types
from collections.abc import Callable

from coding_framework.sandbox.in_process_guard.bindings import program_made, version_reader
from coding_framework.sandbox.in_process_guard.returned_values import (
    _COMPARISONS,
    _untrusted_method,
    foreign_answerer,
)


class GuardedFunction(tuple):
    # A program function as the tests see it: (function, check, error type, bound-method type,
    # BaseException, lazy types, _checked_items, type, pause, resume, collector on, collector off,
    # coroutine type, CheckedCoroutine, StopIteration, launch, fly, land). A call pauses the watch on
    # the tests' thread (outside_calls: the program's code may run here, in its own call), turns the
    # collector on for the call's length only (a collection in the tests' code ran a self-re-arming
    # finalizer of the program's garbage, which rewrote a list after its check: red-team round 28),
    # calls the function, turns the collector off, then calls `check` (the `send` of a generator whose
    # frame alone holds the checks) with what it returned or raised: a patch in place while the
    # exception travels to the test's handler (unittest's own, say) is found before it gets there.
    # Then it resumes the watch (an
    # instance of the program's own making that does not leaves it paused: found at the next
    # hand-over). A generator, map or filter returned is handed on as a generator of ours that checks
    # each item as the test takes it (what the program's code makes on demand is never seen before); a
    # coroutine, as a CheckedCoroutine, whose steps run as calls and whose value is checked when it
    # returns. A finding, or a check that no longer runs, raises. The state is a tuple and the code
    # reads no global or builtin name, so nothing reachable from an instance can be rewritten in place:
    # no closure cells, no defaults, no globals; a generator's frame is refused to the candidate by the
    # audit hook; rebinding this class's attributes is found by the bindings guard (this module is
    # compared strictly, first).
    __slots__ = ()

    def __call__(self, *args, **kwargs):
        self[1](("start", None, None))
        self[8]()
        try:  # (the watch resumes once the checks are done: they run none of the program's code)
            self[10]()
            try:
                result = self[0](*args, **kwargs)
            except self[4] as raised:
                self[11]()
                try:
                    finding = self[1](("raised", raised, (args, kwargs)))
                except:  # noqa: E722 - no name to look up: `BaseException` would be read from rebindable globals
                    raise self[2]("sandbox: the checks of the program's calls were stopped") from None
                if finding is not None:
                    raise self[2](finding) from None
                raise
            self[11]()
            kind = self[7](result)  # compared by identity: `in` would run a metaclass's __eq__ (round 23)
            if kind is self[5][0] or kind is self[5][1] or kind is self[5][2]:
                result = self[6](result, self[1], self[2], self[4])
            try:
                finding = self[1](("returned", result, (args, kwargs)))
            except:  # noqa: E722
                raise self[2]("sandbox: the checks of the program's calls were stopped") from None
            if finding is not None:
                raise self[2](finding)
            if kind is self[12]:
                self[15](result)
                return self[13]((result, self[1], self[2], self[4], self[16], self[17], self[10], self[11],
                                 self[14]))
            return result
        finally:
            self[9]()

    def __get__(self, instance, owner=None):
        return self if instance is None else self[3](self, instance)

    def __repr__(self) -> str:
        return self[0].__repr__()

    def __getattr__(self, name: str):
        # What a function has and a tuple has not (__code__, __defaults__, __qualname__, __dict__, ...),
        # as tests that look at the function read it. The audit hook lets trusted code read a code
        # object only where it names what it reads, so `__code__` is read by name.
        if name == "__code__":
            return self[0].__code__
        return self[0].__getattribute__(name)

    __name__ = property(lambda self: self[0].__name__)
    __doc__ = property(lambda self: self[0].__doc__)
    __wrapped__ = property(lambda self: self[0])


class CheckedCoroutine(tuple, collections.abc.Coroutine):
    # A coroutine a call of the program's returned, as the tests and their event loop see it:
    # (coroutine, check, error type, BaseException, fly, land, collector on, collector off,
    # StopIteration). Each step an awaiter takes (send, throw, close) runs the program's coroutine as a
    # call of its own (the watch paused, the collector on for the step), and what it returns at the
    # end, or raises, is checked as a call's value is (an awaited coroutine's value was never looked
    # at: an `async def` returning an always-equal object passed
    # `assertEqual(asyncio.run(task_func(2)), 4)`). State and code as GuardedFunction's: a tuple, no
    # global read.
    __slots__ = ()

    def send(self, value):
        return self._step(0, value)

    def throw(self, kind, value=None, traceback=None):
        return self._step(1, (kind, value, traceback))

    def close(self):
        return self._step(2, None)

    def __next__(self):
        return self._step(0, None)

    def __iter__(self):
        return self

    def __await__(self):
        return self

    def __repr__(self) -> str:
        return self[0].__repr__()

    def _step(self, how, value):
        # The watch stays paused for the coroutine's whole flight, from the step that starts it to the
        # one it ends in: between steps its event loop runs the tasks the coroutine made (the
        # program's code, entered from the loop's). A flight left unfinished at a hand-over is found.
        self[1](("step", None, None))
        self[4](self[0])
        landed = True
        try:
            self[6]()
            try:
                if how == 0:
                    yielded = self[0].send(value)
                elif how == 1:
                    yielded = self[0].throw(*value)
                else:
                    yielded = self[0].close()
            except self[8] as stop:  # its return
                self[7]()
                self._judge("returned", stop.value)
                raise
            except self[3] as raised:
                self[7]()
                self._judge("raised", raised)
                raise
            self[7]()
            landed = not self[0].cr_suspended  # (closed)
            return yielded
        finally:
            if landed:
                self[5](self[0])

    def _judge(self, how, value):
        try:
            finding = self[1]((how, value, None))
        except:  # noqa: E722 - no name to look up (see GuardedFunction)
            raise self[2]("sandbox: the checks of the program's calls were stopped") from None
        if finding is not None:
            raise self[2](finding) from None


def _checked_items(source, check, error, base_exception):
    """A generator handing on what `source` (a generator, map or filter) hands out, each item checked
    (`check(("yielded", item))`) before the test gets it; send, throw and close reach a generator
    source. The builtins it names are watched with the others (a rebinding is found at the next check;
    meanwhile the worst it can do is end the iteration with an error)."""
    generator = hasattr(source, "throw")
    action, argument = "send", None
    while True:
        try:
            if action == "throw":
                item = source.throw(argument)
            else:
                item = source.send(argument) if generator else source.__next__()
        except StopIteration as stop:  # handed on as this generator's own return value
            return stop.value
        finding = check(("yielded", item, None))
        if finding is not None:
            if generator:  # closed here, where its body may run (outside_calls), not wherever it is dropped
                source.close()
            raise error(finding)
        try:
            action, argument = "send", (yield item)
        except GeneratorExit:
            if generator:
                source.close()
            raise
        except base_exception as thrown:
            if not generator:
                raise
            action, argument = "throw", thrown


def _call_checks(name, changes, harness_intact, answerer, is_trusted, libraries, builtins_version,
                 thread_count, threads_before, outside, allow, keep, recheck, library_state, token):
    """Generator behind a GuardedFunction: sent ("returned", "raised" or "yielded", value, the call's
    arguments) for each call (or item a returned generator hands out), it yields None or a finding.
    Uses only its own locals. Yielded items are checked as values, and the library state beside them
    (`library_state`, bindings.make_state_check: a generator's body planted patterns between its call's
    checks and the test's use, round 55): the bindings are checked at the next return and after the
    test, not at every item (~16 ms each with a BigCodeBench-like load).

    A return or raise while threads the program started could still run Python code is refused: one
    can change the value after the walk has looked at it and before the test compares it (red-team
    round 26: a thread watching the walk's progress put an always-equal object into a list already
    walked). `thread_count`: thread_states.count, the interpreter's thread states (round 27: an ending
    thread's thread-local finalizers ran on after `_thread._count()` had gone down); `threads_before`:
    its value before the program was loaded.

    `outside`: outside_calls.ran, what of the program's code ran in the tests' thread outside its calls
    (found first: whatever ran there may have changed what the checks read); `allow` (with `token`,
    what the watch handed the harness): the functions met in a returned value that passed, which
    library code may call outside the calls (a Flask app's views and a class-based view's methods, a
    FuncFormatter's function); `keep`: each value returned that passed, walked again (`recheck`:
    outside_calls.recheck_kept with what it needs) as each call starts, before the watch pauses for
    it, and after each test (suite_runner).

    It holds each call's arguments until the next call: objects of the program's put among them (the
    test's temporary list) died as the call returned, and their `__del__` rewrote the checked value
    before the test compared it. They now die here, before the next call's checks."""
    finding, held, started = None, None, None
    while True:
        how, result, arguments = yield finding
        if how == "step":  # a step of a returned coroutine: builtins' version as it starts
            finding, started = None, builtins_version()
            continue
        if how == "start":  # builtins' version as the call starts: no change of theirs is the program's
            # The previous call's arguments die here, watched (not in the paused checks: a finalizer of
            # the program's run there changed another value unseen, red-team round 32); then what
            # calls returned is walked again, before this call can change anything back.
            held = None
            recheck()
            finding, started = None, builtins_version()
            continue
        if arguments is not None:
            held = arguments  # noqa: F841 - kept alive until the next call starts
        # The guard's own modules first (the walk below uses them), then the walk, then the bindings:
        # the walk reads library objects through their own code, which may be the program's (a pandas
        # ExtensionArray's `dtype`), and what that code patched is found by the bindings check after.
        found = None if how == "yielded" else harness_intact()
        ran = outside()
        if not found and ran is not None:
            finding = (f"sandbox: the program's code ran in the tests' thread outside its calls ({ran}): "
                       "it could change a value after its check")
            continue
        if not found and thread_count() > threads_before:
            finding = (f"sandbox: {name} {how} while threads the program started are running (or ending): "
                       "they could change the value after it is checked (join them, or shut their pool down, "
                       "before returning)")
            continue
        functions = []
        culprit = None if found else answerer(result, is_trusted, libraries, functions)
        if not found and how == "yielded":
            found = library_state()  # (the bindings' check is too slow per item; this one is not)
        elif not found:
            found = changes()
            if not found and started is not None and builtins_version() != started:
                # Tests patch builtins around a call, never within it: any change during the call,
                # to any value, and even put back, is the program's (`abs = partial(min, key=...)`).
                found = ["builtins were changed during the call"]
        if found:
            finding = "sandbox: the program changed what the tests rely on: " + "; ".join(found)
            continue
        finding = (f"sandbox: {name} {how} {culprit}; tests sharing the program's process compare only "
                   "values that cannot answer comparisons on the program's behalf") if culprit else None
        if finding is None and how == "returned":
            if functions:
                allow(token, functions)
            keep(token, result)


def guard_calls(
    namespace: dict, filename: str, changes: Callable[[], list[str]],
    is_trusted: Callable[[types.CodeType], bool], harness_intact: Callable[[], list[str]],
    libraries: tuple, controls: tuple,
) -> None:
    """Replace, in place, each function `namespace` defines in the program (`filename`), and each other
    callable of the program's that a test may call (see _calls_program), by a GuardedFunction: when a
    call returns or raises, the recorded bindings are checked (a patch the call left behind is found
    before the test's assertions use it) and the returned value (or exception) may not carry the
    program's special methods. Either finding raises, failing the test with an error that names it.
    `harness_intact` runs first: the checks below it use this module's functions, which must be found
    unchanged before they run. `libraries`: returned_values.library_types(), taken before the program
    ran. `controls`: (thread_states.count, its value before the program was loaded, gc.enable,
    gc.disable, outside_calls.pause, .resume, .ran, .allow, .launch, .fly, .land, .keep, a walk of the
    kept values again (recheck_kept with what it needs), the library state's check, the watch's token),
    all taken before the program ran."""
    # (Where the tag cannot be read, 0: the program_made checks of builtins still stand.)
    builtins_version = version_reader(builtins.__dict__) or (lambda: 0)
    (thread_count, threads_before, collector_on, collector_off, pause, resume, outside, allow, launch, fly,
     land, keep, recheck, library_state, token) = controls
    for name, value in list(namespace.items()):
        if _calls_program(value, filename, is_trusted):
            checks = _call_checks(name, changes, harness_intact, foreign_answerer, is_trusted, libraries,
                                  builtins_version, thread_count, threads_before, outside, allow, keep,
                                  recheck, library_state, token)
            next(checks)
            namespace[name] = GuardedFunction((value, checks.send, builtins.RuntimeError, types.MethodType,
                                               builtins.BaseException, _LAZY, _checked_items, builtins.type,
                                               pause, resume, collector_on, collector_off,
                                               types.CoroutineType, CheckedCoroutine, builtins.StopIteration,
                                               launch, fly, land))


_LAZY = (types.GeneratorType, map, filter)


class ProgramView(types.ModuleType):
    """The program's module as the tests import it (`from solution import f`, `import solution`,
    `mock.patch("solution.f")`): a module of its own in `sys.modules`, holding what the program's module
    held when it had loaded, with each callable of the program's a GuardedFunction (guard_module). The
    program's own code keeps its module and calls its functions unguarded (recursion keeps its depth).
    Before 0.3.1 the tests imported the program's module itself: `from solution import task_func` gave
    them the bare function, and a program returning `unittest.mock.ANY` passed `assertEqual`.

    What a test sets on it (a patch) is also set in the program's module, so that the program's own
    lookups see the test's mock; a GuardedFunction put back is put back as the function it guards. A
    subclass made per job holds that module's namespace (`_program`); nothing here decides what the
    tests read, which is this module's own namespace, watched by the bindings checks like the test
    module's (suite_runner)."""

    def __setattr__(self, name, value):
        _set_module_attribute(self, name, value)
        if type(name) is str and not name.startswith("__"):
            type(self)._program[name] = value[0] if type(value) is GuardedFunction else value

    def __delattr__(self, name):
        _delete_module_attribute(self, name)
        if type(name) is str and not name.startswith("__"):
            type(self)._program.pop(name, None)


_set_module_attribute, _delete_module_attribute = types.ModuleType.__setattr__, types.ModuleType.__delattr__
_module_namespace = types.ModuleType.__dict__["__dict__"].__get__


def guard_module(module: types.ModuleType, filename: str, changes: Callable[[], list[str]],
                 is_trusted: Callable[[types.CodeType], bool], harness_intact: Callable[[], list[str]],
                 libraries: tuple, controls: tuple) -> ProgramView:
    """The tests' view of the program's module (ProgramView): its str-keyed names (a key of the
    program's class runs its `__eq__` in lookups), each callable of the program's guarded as
    guard_calls guards the test module's (the same arguments)."""
    namespace = {name: value for name, value in _module_namespace(module).items() if type(name) is str}
    guard_calls(namespace, filename, changes, is_trusted, harness_intact, libraries, controls)
    view_class = type(module.__name__, (ProgramView,), {"_program": _module_namespace(module),
                                                        "__module__": __name__})
    view = view_class(module.__name__)
    _module_namespace(view).update(namespace)
    return view


_NEW, _CALL = frozenset({"__new__"}), frozenset({"__call__"})


def _calls_program(value: object, filename: str, is_trusted: Callable[[types.CodeType], bool],
                   depth: int = 0) -> bool:
    """Whether calling `value` runs the program's code and hands back what it made: a function of the
    program's (`filename`); a callable object of the program's (a partial or bound method of its
    function, an instance of its class with `__call__`, an `lru_cache` or other wrapper whose
    `__wrapped__` is one); a class whose construction is the program's code (its `__new__`, its
    metaclass's `__call__`: any object may come back) or whose comparisons are (the instance answers
    the test's `==`). Other classes of the program's stay as they are, so that tests can still use
    them with isinstance. Read through type's descriptors and instance dicts, never by calling the
    program's code."""
    kind = type(value)
    if depth > 20:
        return True  # (nesting no honest program builds: guarded, to be safe)
    if kind is types.FunctionType:
        # (By its file name, or by not being trusted: a function of the program's renamed in place to a
        # library's file, `_imp._fix_co_filename`, is no library code: make_trust.) A library function
        # whose closure holds something of the program's runs it (`_binary_method(program_func, ...)`:
        # red-team round 20).
        if value.__code__.co_filename == filename or not is_trusted(value.__code__):
            return True
        cells = value.__closure__ or ()
        return any(_calls_program(_cell_value(cell), filename, is_trusted, depth + 1) for cell in cells)
    if issubclass(kind, type):
        return bool(_untrusted_method(value, is_trusted, _NEW)
                    or _untrusted_method(kind, is_trusted, _CALL)
                    or _untrusted_method(value, is_trusted, _COMPARISONS))
    if not callable(value) or kind is types.ModuleType:
        return False
    if program_made(value, is_trusted):
        return True
    try:
        state = object.__getattribute__(value, "__dict__")
    except (AttributeError, TypeError):
        return False
    wrapped = state.get("__wrapped__") if type(state) is dict else None
    return wrapped is not None and wrapped is not value and _calls_program(wrapped, filename, is_trusted,
                                                                           depth + 1)


def _cell_value(cell: types.CellType) -> object:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None

"""Layer 3 of the in-process guard: the program's functions as the tests see them (GuardedFunction),
checked each time a call returns.
"""

from __future__ import annotations

import builtins
import collections.abc
import sys
import types
from collections.abc import Callable

from coding_framework.sandbox.in_process_guard.bindings import program_made, str_keyed_copy, version_reader
from coding_framework.sandbox.in_process_guard.outside_calls import AVAILABLE as _WATCHED
from coding_framework.sandbox.in_process_guard.outside_calls import registered
from coding_framework.sandbox.in_process_guard.returned_values import (
    _COMPARISONS,
    _QUALNAME,
    _closes_over_library,
    _program_classes,
    _untrusted_method,
    context_values,
    foreign_answerer,
    guarded_name,
)


class GuardedFunction(tuple):
    # A program function as the tests see it: (function, check, error type, bound-method type,
    # BaseException, lazy types, _checked_items, type, pause, resume, collector on, collector off,
    # coroutine type, CheckedCoroutine, StopIteration, launch, fly, land, through, lenient?,
    # _release_frames). A call that is not the tests' (outside_calls.through: the program's own code
    # calling a method of its class that guard_class guarded, within its call; library code calling
    # one, which the watch judges as if it called the method itself) goes straight on. A call of the
    # tests' pauses the watch on
    # the tests' thread (outside_calls: the program's code may run here, in its own call), turns the
    # collector on for the call's length only (a collection in the tests' code ran a self-re-arming
    # finalizer of the program's garbage, which rewrote a list after its check: red-team round 28),
    # calls the function (where it raises, clears the frames the traceback holds: _release_frames),
    # turns the collector off, then calls `check` (the `send` of a generator whose
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
        if self[18](self[19]):  # outside_calls.through: not the tests' call (the program's own, say)
            return self[0](*args, **kwargs)
        self[1](("start", None, None))
        self[8]()
        try:  # (the watch resumes once the checks are done: they run none of the program's code)
            self[10]()
            try:
                result = self[0](*args, **kwargs)
            except self[4] as raised:
                self[20](raised)
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


_TRACEBACK_OF = BaseException.__traceback__.__get__


def _release_frames(raised: BaseException) -> None:
    """Clear the frames the traceback of what a call raised holds past the guard's own (finished: the
    call's and those it called), so what their locals hold dies now, within the call. A generator
    expression left suspended in a comprehension that raised was closed, running its frame, when the
    test's assertRaises cleared the traceback, outside any call: the watch's finding, for an honest
    `with self.assertRaises(KeyError): task_func(...)` (round 61b)."""
    held = _TRACEBACK_OF(raised)
    held = held.tb_next if held is not None else None  # (the guard's own frame runs on)
    while held is not None:
        try:  # noqa: SIM105 - contextlib's would be a library's code to run here, rebindable
            held.tb_frame.clear()
        except RuntimeError:  # (a frame still running: a generator of the program's own, say)
            pass
        held = held.tb_next


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
                 thread_count, threads_before, outside, allow, keep, recheck, library_state, token, method,
                 guard_classes, at_start, at_end, variables, kept_contexts):
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
    before the test compared it. They now die here, before the next call's checks.

    A `method`'s object (its first argument: what it was called on) is walked and kept with what it
    returned: a method of the program's class, called on an object the test made, put `mock.ANY` in
    the object's list, which the test then compared (before guard_class, such calls ran unguarded).
    The classes the walk met whose methods are the program's and can be guarded (foreign_answerer's
    `classes`) are guarded (`guard_classes`) before the test gets the value.

    `variables`: the ContextVars werkzeug LocalProxys in the values walked so far read (the walks add
    them: returned_values). A proxy compares as what its variable holds in the context the test
    compares in, which trusted code can drop before the next walk of the proxy (asyncio.run's task
    context; a program's coroutine, run in a task of its own, set the variable in the test's task's
    context through its waiter's callbacks): at every check what they hold in every live context is
    walked with the globals the call set, and every live context is kept (`kept_contexts`: a list, and the
    ids in it) for the later walks of the proxies, which look into every live context: what C callables
    the program left on the event loop set there after this check is then still there (not closed:
    such callables that also put the first proxy in a returned list after the last check)."""
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
            at_start()
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
        functions, classes, members = [], [], []
        held_by = arguments[0][0] if method and arguments is not None and arguments[0] else None
        put = None
        if not found and how != "yielded":
            put, found = at_end()
        live = []  # (the live contexts, once a walk of this check has searched for them)
        culprit = None if found else answerer(result, is_trusted, libraries, functions, classes,
                                              members=members, variables=variables, contexts=live)
        if variables:
            put = [*(put or ()), *context_values(variables, live or None, held=kept_contexts)]
        if not found and not culprit and held_by is not None:
            # What the method was called on (leniently: what the program's methods run, the watch sees).
            culprit = answerer(held_by, is_trusted, libraries, functions, classes, program_code_seen=True,
                               members=members, variables=variables, contexts=live)
        said = how
        if not found and not culprit and put:  # (globals the call set: the tests may never compare them)
            culprit = answerer(put, is_trusted, libraries, None, classes, program_code_seen=True,
                               members=members)
            said = "set, in its module or in what a returned LocalProxy reads,"
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
        finding = (f"sandbox: {name} {said} {culprit}; tests sharing the program's process compare only "
                   "values that cannot answer comparisons on the program's behalf") if culprit else None
        if finding is None and (classes or members):
            guard_classes(classes, members)
        if finding is None and how == "returned":
            if functions:
                allow(token, functions)
            keep(token, result)
            # (The call hands the value on, so nothing dies here.) Not held on to until the next call:
            # a value only `keep` holds once the test lets go of it (and of its parts) is retired
            # after its next walk (outside_calls), not walked again at every later call's start
            # while this frame held it (a third of the walks of a plotting test).
            result = None


def make_guards(filename: str, changes: Callable[[], list[str]], is_trusted: Callable[[types.CodeType], bool],
                harness_intact: Callable[[], list[str]], libraries: tuple, controls: tuple) -> tuple:
    """What guard_calls and guard_module guard with: (guard, guard_classes, track, check), below.
    `filename`: the program's. `changes`: the bindings check run when a call returns. `harness_intact`
    runs first: the checks below it use this module's functions, which must be found unchanged before
    they run. `libraries`: returned_values.library_types(), taken before the program ran. `controls`:
    (thread_states.count, its value before the program was loaded, gc.enable, gc.disable,
    outside_calls.pause, .resume, .ran, .allow, .launch, .fly, .land, .keep, a walk of the kept values
    again (recheck_kept with what it needs), the library state's check, outside_calls.through,
    .register, the watch's token), all taken before the program ran. Made once per job and held only
    by the frames of the tests' thread and of the checks' generators.

    - guard(label, callable, kind) -> GuardedFunction; `kind`: FUNCTION (a function of the program's
      the tests call), CALLABLE (another callable the program bound: a library's, a mock), METHOD (a
      method of a class of the program's: the object it was called on, its first argument, is walked
      and kept with what it returns), CLASS_HELD (a staticmethod's or classmethod's function) or MEMBER
      (a callable of the program's an object holds as an attribute). METHOD, CLASS_HELD and MEMBER are
      lenient (a call by library code goes straight on, judged by the watch as if it called the
      function itself: Flask calling a class-based view's methods); FUNCTION and CALLABLE are called
      through by library code only within a call.
      Every one is registered with the watch (what the walk and the watch take for the harness's);
    - guard_classes(classes, members=()): guard_class on the program's classes among `classes` and in
      their MROs (and again at every call's end: a call can put its bare functions back), and guard
      `members` (foreign_answerer's) where they are;
    - track(view, module): keep the tests' view of the program's module (guard_module) and the
      program's module in step at each call; track(tests) (one namespace): walk what a call of the
      program's changed in the test module's namespace, and refuse callables or builtins' names it
      added there (`len = partial(next, repeat(mock.ANY))` answered the test's `len`);
    - check(values) -> the walk's finding on `values`, or None."""
    # (Where the tag cannot be read, 0: the program_made checks of builtins still stand.)
    builtins_version = version_reader(builtins.__dict__) or (lambda: 0)
    (thread_count, threads_before, collector_on, collector_off, pause, resume, outside, allow, launch, fly,
     land, keep, recheck, library_state, through, register, variables, token) = controls
    views, tests, builtin_names = [], [], frozenset(builtins.__dict__)
    missing = object()
    kept_contexts = ([], set())  # (what the checks keep alive: _call_checks)

    def guard(label: str, function: object, kind: str) -> GuardedFunction:
        checks = _call_checks(label, changes, harness_intact,
                              foreign_answerer, is_trusted, libraries,
                              builtins_version, thread_count, threads_before, outside, allow, keep,
                              recheck, library_state, token, kind is METHOD, guard_classes, at_start, at_end,
                              variables, kept_contexts)
        next(checks)
        wrapper = GuardedFunction((function, checks.send, builtins.RuntimeError, types.MethodType,
                                   builtins.BaseException, _LAZY, _checked_items, builtins.type,
                                   pause, resume, collector_on, collector_off,
                                   types.CoroutineType, CheckedCoroutine, builtins.StopIteration,
                                   launch, fly, land, through, kind is not FUNCTION and kind is not CALLABLE,
                                   _release_frames))
        register(token, wrapper)  # (every one: the walk and the watch tell the harness's by it)
        return wrapper

    guarded = {}  # id -> each class of the program's guard_class guarded

    def guard_classes(classes: list, members: list = ()) -> None:
        if not _WATCHED:  # (guarded methods need the watch's `through`: without it, none are)
            return
        for cls in classes:
            for klass in _program_classes(cls, is_trusted):
                guard_class(klass, guard, is_trusted)
                guarded[id(klass)] = klass
        for namespace, name, value in members:
            if namespace.get(name) is value:
                if type(value) is types.MethodType:  # (its object walked with what it returns, as a method's)
                    namespace[name] = types.MethodType(guard(name, value.__func__, METHOD), value.__self__)
                else:
                    namespace[name] = guard(name, value, MEMBER)

    def track(namespace: dict, module: dict | None = None) -> None:
        if module is None:
            tests.append([namespace, dict(namespace)])
        else:
            views.append([namespace, module, dict(namespace), dict(module)])

    def at_start() -> None:
        # What the test set on the view since the last call reaches the program's module (its patches).
        for entry in views:
            view, module, last_view, _last_module = entry
            now = str_keyed_copy(view)
            if now is None:
                continue  # (found as the call returns)
            for name, value in now.items():
                if value is not last_view.get(name, missing) and not name.startswith("__"):
                    if _needs_guard(value, filename, is_trusted) is FUNCTION:
                        # (No test's patch: the program's own function, put there by the program, which
                        # can reach the view and these checks. Undone.)
                        if name in last_view:
                            view[name] = now[name] = last_view[name]
                        else:
                            del view[name], now[name]
                        continue
                    module[name] = value[0] if registered(value) else value
            for name in last_view:
                if name not in now and not name.startswith("__"):
                    module.pop(name, None)
            entry[2], entry[3] = now, dict(module)
        for entry in tests:
            entry[1] = dict(entry[0])

    def at_end() -> tuple[list, list[str]]:
        """(values the call put in the namespaces, to walk; findings). The classes guarded so far are
        guarded again (what the call put back bare in them)."""
        for klass in list(guarded.values()):
            guard_class(klass, guard, is_trusted)
        values, found = [], []
        for entry in views:
            view, module, last_view, last_module = entry
            now, program_now = str_keyed_copy(view), str_keyed_copy(module)
            if now is None or program_now is None:
                found.append("the program's module, or the tests' view of it, holds a key that is not a str")
                continue
            # What the call set on the view itself is undone; what it set in its module reaches the view.
            for name, value in now.items():
                if value is not last_view.get(name, missing):
                    if name in last_view:
                        view[name] = last_view[name]
                    else:
                        del view[name]
            for name in last_view:
                if name not in now:
                    view[name] = last_view[name]
            for name, value in program_now.items():
                if value is last_module.get(name, missing) or name.startswith("__"):
                    continue
                kind = _needs_guard(value, filename, is_trusted)
                if kind is not None:
                    view[name] = guard(name, value, kind)
                else:
                    view[name] = value
                    values.append(value)
            for name in last_module:
                if name not in program_now and not name.startswith("__"):
                    view.pop(name, None)
            entry[2], entry[3] = dict(view), program_now
        for entry in tests:
            namespace, before = entry
            now = str_keyed_copy(namespace)
            if now is None:
                found.append("the test module holds a key that is not a str")
                continue
            for name, value in now.items():
                old = before.get(name, missing)
                if value is old:
                    continue
                if old is missing and (name in builtin_names or callable(value)):
                    found.append(f"test_solution.{name} was added")
                elif type(value) is types.ModuleType or type(old) is types.ModuleType or callable(value):
                    # (The test's own `math` rebound to a look-alike module: round 57c.)
                    found.append(f"test_solution.{name} was rebound")
                else:
                    values.append(value)
            entry[1] = now
        return values, found

    def check(values: list) -> str | None:
        classes, members = [], []
        culprit = foreign_answerer(values, is_trusted, libraries, None, classes, program_code_seen=True,
                                   members=members, variables=variables)
        if culprit is None:
            guard_classes(classes, members)
        return culprit

    return guard, guard_classes, track, check


def guard_calls(namespace: dict, filename: str, is_trusted: Callable[[types.CodeType], bool],
                guards: tuple) -> None:
    """Replace, in place, each function `namespace` defines in the program (`filename`), and each other
    callable of the program's that a test may call (_needs_guard), by a GuardedFunction (`guards`:
    make_guards'): when a call returns or raises, the recorded bindings are checked (a patch the call
    left behind is found before the test's assertions use it) and the returned value (or exception)
    may not carry the program's special methods. Either finding raises, failing the test with an error
    that names it. The methods of the program's classes in `namespace` are guarded too, in their
    classes (guard_class)."""
    guard, guard_classes, _track, _check = guards
    foreign = foreign_modules({name: value for name, value in namespace.items() if type(name) is str})
    if foreign:
        raise RuntimeError(foreign)
    classes = []
    for name, value in list(namespace.items()):
        if issubclass(type(value), type):
            classes.append(value)
        kind = _needs_guard(value, filename, is_trusted)
        if kind is not None:
            namespace[name] = guard(name, value, kind)
    guard_classes(classes)


FUNCTION, CALLABLE, METHOD, CLASS_HELD, MEMBER = "function", "callable", "method", "class-held", "member"


def _needs_guard(value: object, filename: str, is_trusted: Callable[[types.CodeType], bool]) -> str | None:
    """How a value the program bound is guarded where the tests see it (make_guards' kinds), or None:
    FUNCTION when calling it runs the program's code (_calls_program); CALLABLE for any other callable
    but a class, a module, a GuardedFunction of the harness's, a Python function of a library without
    a closure and a built-in function of a module (what the tests could import themselves): a mock
    told to return `mock.ANY`, `partial(next, repeat(ANY))`, a bound method, `singledispatch` over a
    partial, a GuardedFunction the program built; what they return is walked as the program's
    functions' is."""
    if _calls_program(value, filename, is_trusted):
        return FUNCTION
    kind = type(value)
    if not callable(value) or issubclass(kind, type) or kind is types.ModuleType or registered(value):
        return None
    if kind is types.FunctionType and not value.__closure__:
        return None  # (a library's: one of the program's is _calls_program's; a closure holds what it runs)
    if kind is types.BuiltinFunctionType and type(value.__self__) is types.ModuleType:
        return None
    return CALLABLE


def guard_class(cls: type, guard: Callable, is_trusted: Callable[[types.CodeType], bool],
                seen: set | None = None) -> None:
    """Make GuardedFunctions, in place, of the methods of the program's class `cls` (whatever its bases)
    that a test may call (returned_values.guarded_name: any but a special method, and
    GUARDED_SPECIAL_METHODS): its functions that run the program's code, also in a staticmethod,
    classmethod or property, and other plain callables under public names. A test calling one
    (on an object it made, or one a call returned) then makes a call of the program's, checked as
    `task_func`'s are, with the object it was called on (before, it ran unguarded: a method that put
    `mock.ANY` in the object's list passed the test comparing it). The program's own code calling them
    within its calls goes straight on (outside_calls.through). Classes the program's classes hold are
    guarded too. A dataclass's generated `__init__` is code no one trusts (audit_hook), so it is guarded
    like the rest: a test making an instance makes a call of the program's, in which the `__post_init__`
    it calls runs (round 61b: `Employee(...)` in a test ran `__post_init__` outside any call)."""
    seen = set() if seen is None else seen
    namespace = str_keyed_copy(_CLASS_DICT(cls))
    if id(cls) in seen or namespace is None:
        # (A class holding a name that is no str is refused by the walk: a lookup runs its `__eq__`.)
        return
    seen.add(id(cls))
    label = _QUALNAME(cls)
    for name, attr in namespace.items():
        if issubclass(type(attr), type):
            for klass in _program_classes(attr, is_trusted):
                guard_class(klass, guard, is_trusted, seen)
            continue
        if not guarded_name(name):
            continue
        guarded = _guarded_attribute(attr, f"{label}.{name}", not name.startswith("_"), guard, is_trusted)
        if guarded is not None:
            type.__setattr__(cls, name, guarded)


def _guarded_attribute(attr: object, label: str, public: bool, guard: Callable,
                       is_trusted: Callable[[types.CodeType], bool]) -> object | None:
    """What guard_class puts in place of a class attribute, or None to leave it. Other callables than
    functions only under `public` names: an Enum's own `_new_member_` is `object.__new__`, and
    `__getitem__ = [x].__getitem__` is refused by the walk (_callable_special_method)."""
    def runs_program(func: object) -> bool:
        return type(func) is types.FunctionType and (not is_trusted(func.__code__)
                                                    or not _closes_over_library(func, is_trusted))

    kind = type(attr)
    if kind is types.FunctionType:
        return guard(label, attr, METHOD) if runs_program(attr) else None
    if kind is staticmethod or kind is classmethod:
        func = attr.__func__
        if runs_program(func) or (public and _other_callable(func)):  # (`classmethod(partial(...))`: 57c)
            return kind(guard(label, func, CLASS_HELD))
        return None
    if public and _other_callable(attr):
        # A callable that is no descriptor is handed out as it is (`peek = partial(getattr, mock, "ANY")`,
        # round 57b): guarded so, unbound.
        return staticmethod(guard(label, attr, MEMBER))
    if kind is property:
        # (A getter that is a partial handed out `mock.ANY` as well as a function of the program's: 57c.)
        parts = (attr.fget, attr.fset, attr.fdel)
        wrap = [part is not None and (runs_program(part) or _other_callable(part)) for part in parts]
        if not any(wrap):
            return None
        guarded = (guard(label, part, METHOD) if wrapped else part
                   for part, wrapped in zip(parts, wrap, strict=True))
        return property(*guarded, attr.__doc__)
    return None


def _other_callable(value: object) -> bool:
    """A callable that is neither a function, a class, a descriptor (it binds or computes: a
    partialmethod, a cached_property, judged by the walk) nor a GuardedFunction of the harness's."""
    kind = type(value)
    return (callable(value) and kind is not types.FunctionType and not issubclass(kind, type)
            and not hasattr(kind, "__get__") and not registered(value))


_CLASS_DICT = type.__dict__["__dict__"].__get__


_LAZY = (types.GeneratorType, map, filter)


class TestsImport(tuple):
    # The tests' `__import__` (in the builtins their module runs with: guard_module): (the tests' view
    # of the program's module, its name, the interpreter's `__import__`). `from solution import f` and
    # `import solution` in the tests' code get the view; everything else, the program's own code,
    # pickle and mock.patch("solution.helper") included, imports as ever (the program's module stays
    # in sys.modules: pickling the program's functions, as a multiprocessing pool does, finds them
    # there). A tuple, reading no global: nothing reachable from it can be rewritten in place.
    __slots__ = ()

    def __call__(self, name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and type(name) is str and name == self[1]:
            return self[0]
        return self[2](name, globals, locals, fromlist, level)


def guard_module(module: types.ModuleType, filename: str, is_trusted: Callable[[types.CodeType], bool],
                 guards: tuple, tests: dict) -> types.ModuleType:
    """The tests' view of the program's module, a module of its own that `from solution import ...` and
    `import solution` hand the tests' code (TestsImport, put in the builtins `tests`, the test module's
    namespace, runs with): the program's str-keyed names, each callable of the program's guarded as
    guard_calls guards the test module's (`guards`: make_guards'). Before, tests importing the program got
    its module itself, whose functions no guard wrapped: a program returning `unittest.mock.ANY` passed
    `assertEqual`. The view and the program's module are kept in step at each call of the program's
    (make_guards' `at_start`, `at_end`): what a test set on the view (`mock.patch.object(solution,
    "helper")`) is set in the program's module as the call starts; what the call set in the program's
    module reaches the view as it returns (callables guarded, data walked), and what it set on the view
    itself is undone. Raises RuntimeError when a value the program's module holds fails the walk."""
    # (Not the names of builtins: `from solution import *` would put the program's `all = bool` in the
    # tests' module, as the test module's copy of the program's names leaves them out: round 57b.)
    namespace = {name: value for name, value in _module_namespace(module).items()
                 if type(name) is str and (not name.startswith("__") or name in _MODULE_DATA)
                 and name not in _BUILTIN_NAMES}
    _guard, _guard_classes, track, check = guards
    guard_calls(namespace, filename, is_trusted, guards)
    culprit = check([value for value in namespace.values() if type(value) is not GuardedFunction])
    if culprit:
        raise RuntimeError(f"sandbox: the program's module holds {culprit}; tests sharing the program's "
                           "process compare only values that cannot answer comparisons on the program's "
                           "behalf")
    view = types.ModuleType(module.__name__)
    _module_namespace(view).update(namespace)
    track(_module_namespace(view), _module_namespace(module))
    builtins_copy = dict(builtins.__dict__)
    builtins_copy["__import__"] = TestsImport((view, module.__name__, builtins.__import__))
    tests["__builtins__"] = builtins_copy
    return view


_MODULE_DATA = frozenset({"__doc__", "__file__", "__all__"})  # (not __spec__, __loader__: the program's)
_BUILTIN_NAMES = frozenset(builtins.__dict__)


def foreign_modules(namespace: dict) -> str | None:
    """A finding when a name of `namespace` (the program's) is bound to a module that is not the one
    imported under its name (sys.modules): tests that use the program's `np` without importing numpy
    ran its look-alike's `testing.assert_array_equal = slice` (red-team round 57b); else None."""
    for name, value in namespace.items():
        if type(value) is types.ModuleType:
            module_name = _module_namespace(value).get("__name__")
            if type(module_name) is not str or sys.modules.get(module_name) is not value:
                return (f"sandbox: the program binds {name} to a module that is not the one imported under "
                        "its name (the tests may use it as that module)")
    return None
_module_namespace = types.ModuleType.__dict__["__dict__"].__get__


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

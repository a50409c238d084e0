"""Run-time defences for unittest jobs, where trusted tests and the candidate share one process.

Three layers, all set up by the child before the candidate's code first runs (see suite_runner):

1. An audit hook (PEP 578; it cannot be removed from Python) that refuses, when the code asking is the
   candidate's, every operation that yields a frame or reaches objects the program was not given:
   `sys._getframe`, `sys._current_frames`, traceback/generator/coroutine frames (`tb_frame`, `gi_frame`,
   ...), `gc.get_objects` / `get_referrers` / `get_referents`, trace and profile hooks, new audit hooks,
   ctypes, and making code (`compile`, `exec`, `marshal.loads`, `code.__new__`, `function.__new__`,
   setting `__code__` or `__defaults__`). Frame walking is how a program finds the harness's reporter
   and the running test (and forges a pass); strings built at run time get past any static check, the
   audit hook sees the operation itself. "The candidate's code" is any code object not loaded from a
   directory the child cannot write (the host view is read-only; the work dir is not trusted) and not
   compiled by the harness from the trusted test source. Standard-library helpers that only hand a frame
   back to their caller (`inspect.currentframe`, `inspect.stack`, `traceback.walk_stack`,
   `logging.currentframe`, ...) are looked through to the code that called them, so calling them is
   calling `sys._getframe`; trusted code asking for itself names what it asks for (library internals
   that read frames for their own use: logging's caller lookup, pandas' warning stack level,
   namedtuple's module name) and is unaffected, while trusted code that does not (calling a callback
   that is `sys._getframe`, iterating a frame generator it was handed) is refused while the
   candidate's code is on the stack.
2. Bindings guard: the module and class attributes a test's verdict depends on (builtins, unittest,
   the harness and the modules the trusted test source imports, with their classes; later the test
   module and its classes) are recorded before the candidate runs and compared, by identity, after the
   program loads, once the test cases are loaded, and after every test, before that test's outcome is
   reported. The guard's own module, the harness and builtins are compared before any check runs. A rebound
   `np.testing.assert_array_equal`, `unittest.TestCase.run` or `builtins.len` makes the sample an error.
   Other modules are watched for rebound functions and classes only, which lazy initialisation in
   libraries does not do.
3. Guarded calls: the program's functions, as the tests see them, are GuardedFunctions. When a call
   returns, bindings rebound to the program's own code are looked for at once (a replaced assertion
   that would put the original back when called is caught before the test calls it; the test's own
   mock.patches are not the program's and pass), and the returned value, with what it contains, may
   not be of a class taking a comparison or conversion method from the program (an `__eq__` that is
   always true would answer the test's assertEqual with the program's logic; in function-call jobs
   only plain data crosses, here this check stands in for that).

The harness's state is kept where the program cannot reach it: any class is reachable
(`object.__subclasses__()`) and any closure cell can be read and rewritten, so nothing secret or
deciding is held by a class, a module global or a reachable closure; it lives in frames (the harness's
own, and a generator's behind each GuardedFunction), which the audit hook refuses.

Not closed (documented in the package README): the program can read and change the tests' own data
(test classes are reachable, and `dis` shows their constants); program code that runs later in a test
without a guarded call returning (a callback handed to a library, a generator's body) can patch and
restore in between; values reached only through library objects other than containers, numpy object
arrays and pandas object columns are not inspected; and a frame handed on by trusted code that names
what it fetches (a third-party helper this module does not know) is not refused. Function-call jobs,
where the candidate never shares a process with the tests, are not exposed to any of this.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import inspect
import logging
import os
import sys
import sysconfig
import traceback
import types
from collections.abc import Callable, Iterable

# Events refused when the candidate's code asks (prefix "ctypes." covers every ctypes event).
GUARDED_EVENTS = frozenset({
    "sys._getframe", "sys._current_frames", "sys.settrace", "sys.setprofile", "sys.addaudithook",
    "gc.get_objects", "gc.get_referrers", "gc.get_referents",
    "object.__getattr__", "object.__setattr__", "object.__delattr__",
    "compile", "exec", "marshal.loads", "marshal.load", "code.__new__", "function.__new__",
})
# Refused whenever the candidate's code is anywhere on the stack, whoever asks: a correct program needs
# none of them, and trusted code can ask on its behalf (a subclass of profile.Profile or bdb.Bdb gets
# every frame of the program's callers; a gc walk finds everything).
STACK_WIDE_EVENTS = frozenset({
    "sys._current_frames", "sys.settrace", "sys.setprofile", "sys.addaudithook",
    "gc.get_objects", "gc.get_referrers", "gc.get_referents",
})
# Attribute reads (audited as object.__getattr__) that yield a frame or code object.
GUARDED_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "__code__", "gi_code",
                                "cr_code", "ag_code"})
# Standard-library functions that hand a frame, or a frame's locals, to whoever called them (or, for
# the generators, to whoever iterates them), by the name their callers use.
FRAME_HELPERS = {
    "currentframe": (inspect.currentframe, logging.currentframe), "stack": (inspect.stack,),
    "trace": (inspect.trace,), "getouterframes": (inspect.getouterframes,),
    "getinnerframes": (inspect.getinnerframes,), "getgeneratorlocals": (inspect.getgeneratorlocals,),
    "getcoroutinelocals": (inspect.getcoroutinelocals,), "walk_stack": (traceback.walk_stack,),
    "walk_tb": (traceback.walk_tb,),
    # What traceback's own TracebackException iterates (3.11+): frames with positions.
    "_walk_tb_with_full_positions": tuple(
        f for f in [getattr(traceback, "_walk_tb_with_full_positions", None)] if f is not None),
}
# Modules whose every function passes a caller's request through (ctypes wrappers, compile wrappers,
# callables called on the caller's behalf): looked through the same way.
PASS_THROUGH_MODULES = ("ctypes", "codeop", "code", "runpy", "unittest.mock", "functools", "types",
                        "operator", "copy", "copyreg", "pickle", "asyncio.base_tasks")
IMPORT_MACHINERY = ("<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>")
MAX_FINDINGS = 5


def trusted_roots(paths: Iterable[str], writable: Iterable[str]) -> tuple[str, ...]:
    """Directories whose code is trusted: the interpreter's library paths, the given import paths and
    the directories of the packages loaded so far (editable installs are not on sys.path), except any
    that is, contains or lies inside one of the `writable` directories (the work dir, /tmp). Each ends
    with a separator, for prefix matching; symlinked and resolved forms are both kept."""
    library = sysconfig.get_paths()
    library_keys = ("stdlib", "platstdlib", "purelib", "platlib")
    candidates = list(paths) + [library[k] for k in library_keys if k in library]
    for module in list(sys.modules.values()):
        where = getattr(module, "__file__", None)
        if isinstance(where, str):
            candidates.append(os.path.dirname(where))
    unsafe = [os.path.realpath(w).rstrip(os.sep) + os.sep for w in writable if w]
    roots = set()
    for path in set(candidates):
        if not path or not os.path.isabs(path):
            continue
        forms = {path.rstrip(os.sep) + os.sep, os.path.realpath(path).rstrip(os.sep) + os.sep}
        if any(f.startswith(u) or u.startswith(f) for f in forms for u in unsafe):
            continue
        roots.update(forms)
    return tuple(sorted(roots))


def code_objects(code: types.CodeType) -> set[types.CodeType]:
    """`code` and every code object nested in its constants (functions, classes, comprehensions)."""
    found, todo = set(), [code]
    while todo:
        item = todo.pop()
        found.add(item)
        todo.extend(c for c in item.co_consts if isinstance(c, types.CodeType) and c not in found)
    return found


def make_trust(roots: tuple[str, ...], trusted_code: set[types.CodeType]) -> Callable[[types.CodeType], bool]:
    """Whether a code object is trusted: compiled by the harness (`trusted_code`), frozen into the
    interpreter, or loaded from a file under one of `roots`."""
    starts, frozen = str.startswith, "<frozen "

    def is_trusted(code: types.CodeType) -> bool:
        name = code.co_filename
        return code in trusted_code or starts(name, frozen) or starts(name, roots)

    return is_trusted


def install_audit_hook(roots: tuple[str, ...], trusted_code: set[types.CodeType]) -> None:
    """Refuse GUARDED_EVENTS to the candidate's code for the rest of this process's life.

    Who asks: the first frame that is neither a FRAME_HELPER nor in a pass-through module. When that
    frame is trusted it must also name what it asks for (`_getframe`, the helper it called, the
    attribute it read, something of ctypes); trusted code that does not (a dataclass `__init__` calling
    a `default_factory` that is `sys._getframe`, `heapq.nsmallest` iterating `traceback.walk_stack`)
    works for someone else, and is refused while the candidate's code is on the stack, as are
    STACK_WIDE_EVENTS whoever asks.

    The hook decides trust with its own copy of `trusted_code` and its own closure, reachable from
    nothing the candidate can reach, so rewriting the cells of a reachable harness closure cannot widen
    it. Code that the standard library's code generators build (namedtuple, dataclass methods) joins
    both copies: the text is theirs, only names in it come from the caller, and they are checked to be
    identifiers."""
    own_code = set(trusted_code)
    is_trusted = make_trust(roots, own_code)
    helper_names = {f.__code__: name for name, functions in FRAME_HELPERS.items() for f in functions}
    generators = frozenset(_code_generators())
    module_files = []
    for name in PASS_THROUGH_MODULES:
        module = sys.modules.get(name) or _try_import(name)
        if module is not None and getattr(module, "__file__", None):
            module_files.append(module.__file__)
    pass_files = frozenset(module_files)
    ctypes_module = sys.modules.get("ctypes") or _try_import("ctypes")
    ctypes_names = frozenset({"ctypes"} | {n for n in dir(ctypes_module or object()) if n[:2] != "__"})
    traceback_file = traceback.__file__
    getframe, get_ident, starts = sys._getframe, _thread_ident(), str.startswith
    import_machinery, busy, stack_wide = IMPORT_MACHINERY, set(), STACK_WIDE_EVENTS
    # Builtins it uses, held here: the candidate may rebind them in the builtins module.
    len_, isinstance_, str_, error = builtins.len, builtins.isinstance, builtins.str, builtins.RuntimeError
    type_, code_type, nested_code = builtins.type, types.CodeType, code_objects

    def asker(frame):
        """(the frame on whose behalf an event happens, name of the helper it called or None): the
        caller of any helper and pass-through frames."""
        helper = None
        while frame is not None:
            code = frame.f_code
            name = helper_names.get(code)
            if name is not None:
                helper = name
            elif code.co_filename not in pass_files:
                return frame, helper
            frame = frame.f_back
        return None, helper

    def candidate_on_stack(frame) -> bool:
        while frame is not None:
            if not is_trusted(frame.f_code):
                return True
            frame = frame.f_back
        return False

    def vouched(frame, event: str, args: tuple, helper: str | None) -> bool:
        """Whether a trusted asking frame asks for itself: its own code names what it asked for. In the
        traceback module (which iterates its own frame generators) it must only turn frames into
        summaries, without capturing their locals."""
        code = frame.f_code
        if code.co_filename == traceback_file:
            while frame is not None and frame.f_code.co_filename == traceback_file:
                if frame.f_locals.get("capture_locals"):
                    return False
                frame = frame.f_back
            return True
        names = code.co_names
        if helper is not None:
            return helper in names
        if event == "sys._getframe":  # by name or alias (`_getframe`, `getframe`, `currentframe`)
            return any(name.endswith(("getframe", "currentframe")) for name in names)
        if event == "object.__getattr__":
            return args[1] in names or args[1] in code.co_consts
        if starts(event, "ctypes."):
            return not ctypes_names.isdisjoint(names)
        return True

    def refuse(event: str, detail: str = "") -> None:
        raise error(f"sandbox: {event}{detail} is not allowed to the program under test")

    guarded, guarded_attributes = GUARDED_EVENTS, GUARDED_ATTRIBUTES

    def hook(event: str, args: tuple) -> None:
        # Fast exits first: this runs for every audited operation in the process.
        if event not in guarded:
            if event[:7] != "ctypes.":
                return
        elif event == "object.__getattr__" and args[1] not in guarded_attributes:
            return
        me = get_ident()
        if me in busy:
            return  # our own frame and attribute lookups below raise events too
        busy.add(me)
        try:
            direct = getframe(1)
            if event == "exec" and direct.f_code in generators and type_(args[0]) is code_type:
                made = nested_code(args[0])
                own_code.update(made)
                trusted_code.update(made)
                return
            detail = f" ({args[1]})" if starts(event, "object.") and len_(args) > 1 else ""
            if event in stack_wide:
                if candidate_on_stack(direct):
                    refuse(event, detail)
                return
            frame, helper = asker(direct)
            if frame is not None and not is_trusted(frame.f_code):
                refuse(event, detail)
            if frame is not None and not vouched(frame, event, args, helper) and candidate_on_stack(direct):
                refuse(event, f"{detail} (asked by trusted code on the program's behalf)")
            # Code claiming a trusted file may only be made by the import system, from that file.
            if (event == "compile" and len_(args) > 1 and isinstance_(args[1], str) and starts(args[1], roots)
                    and direct.f_code.co_filename not in import_machinery):
                refuse(event, f" of code named {args[1]!r}")
            if event in ("marshal.loads", "marshal.load") and direct.f_code.co_name == "_compile_bytecode":
                # A .pyc without source keeps whatever file name it claims: only from trusted dirs.
                local = direct.f_locals
                if local.get("source_path") is None and not starts(str_(local.get("bytecode_path")), roots):
                    refuse(event, " of bytecode from outside the trusted directories")
        finally:
            busy.discard(me)

    sys.addaudithook(hook)


# Special methods the trusted tests' comparisons, conversions and checks call on a value: a value whose
# class (or metaclass) takes one of these from the program's code could answer a test with the
# program's logic (an `__eq__` that is always true).
ANSWERING_METHODS = frozenset({
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__", "__len__",
    "__iter__", "__next__", "__contains__", "__getitem__", "__float__", "__int__", "__index__",
    "__complex__", "__round__", "__abs__", "__neg__", "__add__", "__radd__", "__sub__", "__rsub__",
    "__mul__", "__rmul__", "__truediv__", "__rtruediv__", "__array__", "__array_ufunc__",
    "__array_function__", "__array_interface__", "__getattr__", "__getattribute__", "__str__",
    "__repr__", "__format__", "__instancecheck__", "__subclasscheck__", "__class__", "__dir__",
    "__fspath__", "__enter__", "__exit__", "__del__",
})
MAX_WALK = 100_000  # objects looked at per returned value; beyond, the rest is not looked at

# What the value checks call, bound here once: this module's namespace is compared (strictly) before
# they run, so the candidate cannot rebind them, and builtins it could. Class attributes are read
# through type's own descriptors, so a class or metaclass of the program's cannot answer for itself.
_type, _id, _issubclass, _list, _set, _len = builtins.type, builtins.id, builtins.issubclass, \
    builtins.list, builtins.set, builtins.len
_dict_keys, _dict_values, _object_getattribute = dict.keys, dict.values, object.__getattribute__
_MRO = type.__dict__["__mro__"].__get__
_QUALNAME = type.__dict__["__qualname__"].__get__
_PLAIN = (int, float, complex, str, bytes, bool, type(None))
_SEQUENCES = (list, tuple, set, frozenset)
_FUNCTION, _METHOD, _PARTIAL, _OBJECT, _TYPE, _DICT = (types.FunctionType, types.MethodType,
                                                       functools.partial, object, type, dict)


def foreign_answerer(value: object, is_trusted: Callable[[types.CodeType], bool]) -> str | None:
    """What in `value` (walking containers, numpy object arrays and pandas object columns) has a
    class or metaclass that takes an ANSWERING_METHODS method from untrusted code; None if nothing."""
    todo, seen, budget = [value], _set(), MAX_WALK
    while todo and budget > 0:
        item = todo.pop()
        budget -= 1
        kind = _type(item)
        if kind in _PLAIN or _id(item) in seen:
            continue
        seen.add(_id(item))
        for cls in (kind, _type(kind)):
            culprit = _untrusted_method(cls, is_trusted)
            if culprit:
                return f"a {_QUALNAME(kind)} whose {culprit} is the program's"
        culprit = _permissive_library_value(item, kind)
        if culprit:
            return culprit
        # type() and issubclass(), never isinstance(): that would ask the object for its __class__.
        if _issubclass(kind, _DICT):
            todo.extend(_dict_keys(item))
            todo.extend(_dict_values(item))
        elif _issubclass(kind, _SEQUENCES):
            todo.extend(item)
        else:
            todo.extend(_object_cells(item))
    return None


# Comparisons a library object can be told to answer whatever the other side is: no expected value
# needed, so such an object forges equality (or order, or membership) without any code of the program.
_ANSWER_ANYTHING = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__contains__")


def _permissive_library_value(item: object, kind: type) -> str | None:
    """unittest.mock.ANY, a mock told what to answer to a comparison or `in` (a configured return value
    or side effect, or a function set as the method), or a pytest.approx: library objects that can be
    made equal to anything with data alone. Read through the mock's own state, never by calling it."""
    mock = sys.modules.get("unittest.mock")
    if mock is not None:
        if _issubclass(kind, mock._ANY):
            return "unittest.mock.ANY, equal to everything"
        if _issubclass(kind, mock.NonCallableMock):
            name = _configured_comparison(item, kind, mock)
            if name:
                return f"a mock whose {name} is told what to answer"
    for module, base in _APPROX_BASES:  # where pytest has kept approx's classes across versions
        approx = sys.modules.get(module)
        cls = getattr(approx, base, None) if approx is not None else None
        if _issubclass(_type(cls), _TYPE) and _issubclass(kind, cls):
            return "a pytest.approx, equal to whatever lies within its tolerance"
    return None


_APPROX_BASES = (("_pytest.approx", "Approx"), ("_pytest.approx", "ApproxBase"),
                 ("_pytest.python_api", "ApproxBase"))


def _configured_comparison(item: object, kind: type, mock: types.ModuleType) -> str | None:
    try:
        children = _object_getattribute(item, "_mock_children")
    except AttributeError:
        return None
    own, default, mock_file, a_mock = _CLASS_DICT(kind), mock.DEFAULT, mock.__file__, mock.NonCallableMock
    for name in _ANSWER_ANYTHING:
        method = own.get(name)
        if _type(method) is _FUNCTION and method.__code__.co_filename == mock_file and method.__closure__:
            # A function set as the method: mock wraps it in `method(self, ...)`, closing over it.
            held = method.__closure__[0].cell_contents
            if not _issubclass(_type(held), a_mock):
                return name
        child = children.get(name) if _type(children) is _DICT else None
        if child is None or not _issubclass(_type(child), a_mock):
            continue
        state = _object_getattribute(child, "__dict__")
        value, effect = state.get("_mock_return_value", default), state.get("_mock_side_effect")
        fixed = mock._return_values.get(name, default)
        if value is not default and value is not fixed and not _issubclass(_type(value), a_mock):
            return name
        own_effect = _type(effect) is _FUNCTION and effect.__code__.co_filename == mock_file
        if effect is not None and not own_effect:
            return name
    return None


# How a class attribute holds a function: directly, or wrapped in one of these (read with their own
# C-level attributes, never by calling anything of the class).
_FUNCTION_HOLDERS = {classmethod: "__func__", staticmethod: "__func__", property: "fget"}
_HOLDER_READ = {kind: kind.__dict__[name].__get__ for kind, name in _FUNCTION_HOLDERS.items()}
_HARMLESS_ATTRIBUTES = (types.BuiltinFunctionType, types.WrapperDescriptorType, types.MethodDescriptorType,
                        types.MethodWrapperType, type(None), bool, int, str)


def _untrusted_method(
    cls: type, is_trusted: Callable[[types.CodeType], bool], names: frozenset[str] = ANSWERING_METHODS
) -> str | None:
    for klass in _MRO(cls):
        if klass is _OBJECT or klass is _TYPE:
            continue
        for name, attr in _CLASS_DICT(klass).items():
            if name not in names:
                continue
            kind = _type(attr)
            func = attr if kind is _FUNCTION else (_HOLDER_READ[kind](attr) if kind in _HOLDER_READ else None)
            if _type(func) is _FUNCTION:
                if not is_trusted(func.__code__):
                    return f"{_QUALNAME(klass)}.{name}"
            elif func is None and not _issubclass(kind, _HARMLESS_ATTRIBUTES) and _untrusted_method(
                    kind, is_trusted, _DESCRIPTOR_METHODS):
                return f"{_QUALNAME(klass)}.{name}"  # a descriptor or callable object of the program's
    return None


_DESCRIPTOR_METHODS = frozenset({"__get__", "__call__", "__getattr__", "__getattribute__"})


def _object_cells(item: object) -> list:
    """Elements of a numpy object array or of pandas object columns (values the tests compare); only
    for the exact library types, whose methods are trusted."""
    numpy, pandas = sys.modules.get("numpy"), sys.modules.get("pandas")
    kind = _type(item)
    if numpy is not None and kind is numpy.ndarray:
        return _list(item.ravel()[:MAX_WALK]) if item.dtype == numpy.dtype(object) else []
    if pandas is not None and kind in (pandas.Series, pandas.Index):
        return _list(item[:MAX_WALK]) if item.dtype == numpy.dtype(object) else []
    if pandas is not None and kind is pandas.DataFrame:
        columns = [column for column, dtype in item.dtypes.items() if dtype == numpy.dtype(object)]
        return [v for column in columns for v in _list(item[column])[:MAX_WALK]]
    return []


class GuardedFunction(tuple):
    # A program function as the tests see it: (function, check, error type, bound-method type). A call
    # calls the function, then `check` (the `send` of a generator whose frame alone holds the checks);
    # a finding, or a check that no longer runs, raises. The state is a tuple and the code reads no
    # global or builtin name, so nothing reachable from an instance can be rewritten in place: no
    # closure cells, no defaults, no globals; a generator's frame is refused to the candidate by the
    # audit hook; rebinding this class's attributes is found by the bindings guard (this module is
    # compared strictly, first).
    __slots__ = ()

    def __call__(self, *args, **kwargs):
        result = self[0](*args, **kwargs)
        try:
            finding = self[1](result)
        except:  # noqa: E722 - no name to look up: `BaseException` would be read from rebindable globals
            raise self[2]("sandbox: the checks of the program's calls were stopped") from None
        if finding is not None:
            raise self[2](finding)
        return result

    def __get__(self, instance, owner=None):
        return self if instance is None else self[3](self, instance)

    def __repr__(self) -> str:
        return self[0].__repr__()

    __name__ = property(lambda self: self[0].__name__)
    __doc__ = property(lambda self: self[0].__doc__)
    __wrapped__ = property(lambda self: self[0])


def _call_checks(name, changes, harness_intact, answerer, is_trusted):
    """Generator behind a GuardedFunction: sent each returned value, it yields None or a finding. Uses
    only its own locals."""
    finding = None
    while True:
        result = yield finding
        found = harness_intact() or changes()
        if found:
            finding = "sandbox: the program changed what the tests rely on: " + "; ".join(found)
            continue
        culprit = answerer(result, is_trusted)
        finding = (f"sandbox: {name} returned {culprit}; tests sharing the program's process compare only "
                   "values that cannot answer comparisons on the program's behalf") if culprit else None


def guard_calls(
    namespace: dict, filename: str, changes: Callable[[], list[str]],
    is_trusted: Callable[[types.CodeType], bool], harness_intact: Callable[[], list[str]],
) -> None:
    """Replace, in place, each function `namespace` defines in the program (`filename`) by a
    GuardedFunction: when a call returns, the recorded bindings are checked (a patch the call left
    behind is found before the test's assertions use it) and the returned value may not carry the
    program's special methods. Either finding raises, failing the test with an error that names it.
    `harness_intact` runs first: the checks below it use this module's functions, which must be found
    unchanged before they run."""
    for name, value in list(namespace.items()):
        if type(value) is types.FunctionType and value.__code__.co_filename == filename:
            checks = _call_checks(value.__name__, changes, harness_intact, foreign_answerer, is_trusted)
            next(checks)
            namespace[name] = GuardedFunction((value, checks.send, builtins.RuntimeError, types.MethodType))


def _code_generators() -> list[types.CodeType]:
    """Code objects of the standard library functions that compile methods from text they write."""
    import collections
    import dataclasses

    found = [collections.namedtuple.__code__]
    maker = getattr(dataclasses, "_create_fn", None)
    if isinstance(maker, types.FunctionType):
        found.append(maker.__code__)
    return found


def _thread_ident() -> Callable[[], int]:
    import _thread

    return _thread.get_ident


def _try_import(name: str):
    try:
        return importlib.import_module(name)
    except Exception:
        return None


def preimport(test_source: str | ast.Module) -> set[str]:
    """Import what the trusted test source imports, and the submodules its attribute chains reach
    (`np.testing.assert_array_equal` imports numpy.testing), so their bindings are recorded before the
    candidate runs; return the names of those modules. Failures are left for the test to report."""
    tree = ast.parse(test_source) if isinstance(test_source, str) else test_source
    reached: set[str] = set()
    aliases: dict[str, str] = {}  # name bound in the test module -> module it names
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _try_import(alias.name) is not None:
                    reached.add(alias.name)
                    aliases[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0])
        elif (isinstance(node, ast.ImportFrom) and node.module and node.level == 0
              and _try_import(node.module) is not None):
            reached.add(node.module)
            for alias in node.names:
                if isinstance(getattr(sys.modules[node.module], alias.name, None), types.ModuleType):
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                    reached.add(f"{node.module}.{alias.name}")
    for node in ast.walk(tree):
        chain = _attribute_chain(node)
        if chain and chain[0] in aliases:
            module = sys.modules.get(aliases[chain[0]])
            for attr in chain[1:]:
                try:
                    module = getattr(module, attr)
                except Exception:
                    break
                if not isinstance(module, types.ModuleType):
                    break
                reached.add(module.__name__)
    return reached


def _attribute_chain(node: ast.AST) -> list[str] | None:
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not names or not isinstance(node, ast.Name):
        return None
    return [node.id, *names[::-1]]


_CLASS_DICT = type.__dict__["__dict__"].__get__  # a class's own namespace, whatever its metaclass says


class Snapshot:
    """Bindings of some modules and of the classes they define, recorded to compare by identity.

    Each namespace is watched in one mode: "strict" (any change but lazy initialisation), "functions"
    (functions and classes rebound or deleted) or "methods" (callables added, rebound or deleted; data
    attributes free: the test module and its classes, whose fixtures store data on them)."""

    def __init__(self) -> None:
        # (label, live namespace, copy, mode, is_class)
        self.entries: list[tuple[str, object, dict, str, bool]] = []
        self.modules: list[tuple[str, types.ModuleType]] = []

    def add_module(self, name: str, module: types.ModuleType, mode: str) -> None:
        if mode not in ("strict", "functions", "methods"):
            raise ValueError(f"unknown mode {mode!r}")
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            return
        self.modules.append((name, module))
        self.entries.append((name, namespace, dict(namespace), mode, False))
        for attr, value in list(namespace.items()):
            # Read through type's own descriptor: the test module also holds the program's objects,
            # whose class or metaclass could answer attribute reads with the program's code.
            if issubclass(type(value), type):
                own = _CLASS_DICT(value)
                if own.get("__module__") == name:
                    self.entries.append((f"{name}.{attr}", own, dict(own), mode, True))


# The guard's own code and what it calls: nothing a test patches, so compared strictly and always first.
HARNESS_MODULES = ("coding_framework.sandbox.in_process_guard", "coding_framework.sandbox.suite_runner",
                   "coding_framework.sandbox.wire", "coding_framework.sandbox.plain_data", "hmac", "hashlib",
                   "types", "functools")


def make_harness_check(is_trusted: Callable[[types.CodeType], bool]) -> Callable[[], list[str]]:
    """A checker of the harness modules (strict) and of builtins (rebound to the program's code only:
    tests patch builtins themselves, with mocks), recorded now."""
    harness, builtin = Snapshot(), Snapshot()
    for name in HARNESS_MODULES:
        if name in sys.modules:
            harness.add_module(name, sys.modules[name], "strict")
    builtin.add_module("builtins", builtins, "strict")
    strict = make_checker([harness], is_trusted)
    programs = make_checker([builtin], is_trusted, program_made_only=True)

    def intact() -> list[str]:
        return strict() or programs()

    return intact


def record(strict_names: Iterable[str]) -> Snapshot:
    """Every loaded module (strict ones in full, the rest for functions and classes), and builtins."""
    strict = set(strict_names) | {"builtins"}
    snapshot = Snapshot()
    for name, module in list(sys.modules.items()):
        if isinstance(module, types.ModuleType):
            mode = "strict" if name in strict or _under(name, strict) else "functions"
            snapshot.add_module(name, module, mode)
    return snapshot


def _under(name: str, roots: set[str]) -> bool:
    return any(name.startswith(root + ".") for root in roots)


def make_checker(
    snapshots: list[Snapshot],
    is_trusted: Callable[[types.CodeType], bool],
    *,
    program_made_only: bool = False,
) -> Callable[[], list[str]]:
    """A function listing (up to MAX_FINDINGS) bindings that changed since the snapshots. It keeps its
    own references to everything it calls, so rebinding a builtin cannot blind it, and reads nothing
    the candidate's objects could answer with their own code.

    "strict" namespaces: any rebinding, deletion or (in classes) addition counts, except lazy
    initialisation (a binding that was None, or a private non-callable one). "functions": deleted or
    rebound functions and classes, unless the new value is a plain function loaded from trusted code (a
    library redefining its own function lazily). "methods": callables added (classes), rebound or
    deleted, whatever the data attributes do.

    With `program_made_only` (checks in the middle of a test, where the test's own `mock.patch`es are
    in place): only bindings whose new value is the program's (`program_made`) count."""
    modules_now, limit, missing = sys.modules, MAX_FINDINGS, object()
    callable_, len_, type_, str_startswith = builtins.callable, builtins.len, builtins.type, str.startswith
    function = types.FunctionType
    entries = [e for s in snapshots for e in s.entries]
    loaded = [m for s in snapshots for m in s.modules]

    def changes() -> list[str]:
        found = []
        for name, module in loaded:
            if modules_now.get(name) is not module and not program_made_only:
                found.append(f"sys.modules[{name!r}] was replaced or removed")
        for label, live, saved, mode, is_class in entries:
            if len_(found) >= limit:
                break
            strict, methods = mode == "strict", mode == "methods"
            for key, old in saved.items():
                new = live.get(key, missing)
                if new is old or old is None:  # unchanged, or lazy initialisation of a placeholder
                    continue
                if program_made_only:
                    if new is not missing and program_made(new, is_trusted):
                        found.append(f"{label}.{key} was rebound")
                elif new is missing:
                    if not methods or callable_(old):
                        found.append(f"{label}.{key} was deleted")
                elif methods:
                    if callable_(old) or callable_(new):
                        found.append(f"{label}.{key} was rebound")
                elif (strict and not (str_startswith(key, "_") and not callable_(old))) or (
                        callable_(old) and not (type_(new) is function and is_trusted(new.__code__))):
                    found.append(f"{label}.{key} was rebound")
            if (strict or methods) and is_class:  # new class attributes shadow inherited ones
                added = [k for k in live if k not in saved]
                if program_made_only:
                    added = [k for k in added if program_made(live[k], is_trusted)]
                elif methods:
                    added = [k for k in added if callable_(live[k])]
                found.extend(f"{label}.{k} was added" for k in added[:limit])
        return found[:limit]

    return changes


def program_made(value: object, is_trusted: Callable[[types.CodeType], bool]) -> bool:
    """Whether `value` carries the program's code: a function of untrusted code (also inside a
    classmethod, staticmethod, property, bound method or functools.partial), a class or an instance of a
    class with such a method, or a unittest.mock object whose side_effect or wraps is one."""
    todo, seen = [value], 0
    while todo and seen < 50:
        item, seen = todo.pop(), seen + 1
        kind = _type(item)
        if kind is _FUNCTION:
            if not is_trusted(item.__code__):
                return True
            continue
        if kind in _HOLDER_READ:
            todo.append(_HOLDER_READ[kind](item))
        elif kind is _METHOD:
            todo.append(item.__func__)
        elif kind is _PARTIAL:
            todo.append(item.func)
        else:
            for cls in (item if _issubclass(kind, _TYPE) else kind, kind):
                if _untrusted_method(cls, is_trusted, _ANY_NAME):
                    return True
            try:
                own = _object_getattribute(item, "__dict__")
            except (AttributeError, TypeError):
                continue
            if _type(own) is _DICT:
                todo.extend(own[k] for k in ("_mock_side_effect", "_mock_wraps") if k in own)
    return False


class _AnyName(frozenset):
    def __contains__(self, name: object) -> bool:
        return True


_ANY_NAME = _AnyName()


def make_restorer(snapshots: list[Snapshot]) -> Callable[[], None]:
    """A function putting back every recorded module binding (not class attributes), so that the
    harness can still report what it found after the candidate rebound builtins or harness code."""
    modules = [(live, saved) for s in snapshots for _label, live, saved, _mode, is_class in s.entries
               if not is_class]
    update = dict.update

    def restore() -> None:
        for live, saved in modules:
            update(live, saved)

    return restore

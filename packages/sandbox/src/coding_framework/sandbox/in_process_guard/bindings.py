"""Layer 2 of the in-process guard: the module and class bindings the tests rely on, recorded before the
candidate runs and compared by identity later (and put back, so that the harness can report).
"""

from __future__ import annotations

import ast
import builtins
import enum
import functools
import operator
import re
import sys
import types
from collections.abc import Callable, Iterable

from coding_framework.sandbox.in_process_guard.audit_hook import CodeSet, _try_import
from coding_framework.sandbox.in_process_guard.returned_values import (
    _ANY_NAME,
    _CLASS_DICT,
    _DICT,
    _FUNCTION,
    _HOLDER_READ,
    _METHOD,
    _MRO,
    _PARTIAL,
    _QUALNAME,
    _TYPE,
    _genuine_mock,
    _id,
    _issubclass,
    _maker,
    _method_set_on_instance,
    _namespace,
    _object_getattribute,
    _type,
    _untrusted_method,
    _unwrap,
    all_exact_str,
)

MAX_FINDINGS = 5  # changed bindings listed per check


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
                if not issubclass(type(module), types.ModuleType):
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


class Snapshot:
    """Bindings of some modules and of the classes they define, recorded to compare by identity.

    Each namespace is watched in one mode: "strict" (any change but lazy initialisation), "functions"
    (functions and classes rebound or deleted) or "methods" (callables added, rebound or deleted; data
    attributes free: the test module and its classes, whose fixtures store data on them)."""

    def __init__(self, private: bool = False) -> None:
        # Whether this snapshot is the harness thread's own (suite_runner): without the compiled
        # reader, its version readers are ctypes views, which can write what they read (version_reader).
        self.private = private
        # (label, live namespace, copy, mode, the class whose namespace it is or None for a module)
        self.entries: list[tuple[str, object, dict, str, type | None]] = []
        # Per entry, (reader of its dict's version tag, the tag when copied, the namespace), or None: a
        # namespace whose tag has not moved is unchanged, and is not compared key by key (with the
        # compiled reader; without it, private snapshots only: the audited fallback reads slower than
        # comparing).
        self.versions: list[tuple[Callable[[], int], int, dict | type] | None] = []
        self.modules: list[tuple[str, types.ModuleType]] = []
        # (label, reader of the namespace's version tag, the tag now): see seal
        self.sealed: list[tuple[str, Callable[[], int], int]] = []
        # (label, function, what it runs now: code, defaults, kwdefaults, closure cells' contents)
        self.sealed_functions: list[tuple[str, types.FunctionType, tuple]] = []
        # (label, class, its MRO now): a class given other bases resolves its methods elsewhere
        self.class_mros: list[tuple[str, type, tuple]] = []
        # What library functions and descriptors hold, changeable with no binding changed (add_held), in
        # the form make_held_check compares at C speed: (labels, closure cells, their contents) of the
        # non-empty cells; per reader of _HELD_FIELDS, (reader, holders, what it read, labels).
        self.cells: tuple[list[str], list[types.CellType], list[object]] = ([], [], [])
        self.holders: list[tuple[Callable, list, list, list[str]]] = []
        # (label, dict, a copy, what it holds): the dicts holders hold, which can be changed in place: a
        # partial's keyword arguments (round 58d: numpy's `_default_array_str` given another
        # `array2string`), the globals a function compiled from a string runs with, no module's (round
        # 60a: the `_tuple_new` of SciPy's TtestResult made the tests' own t-test return the program's)
        self.tables: list[tuple[str, dict, dict, str]] = []
        # (label, getter): objects tests use without a binding, checked for methods of the program's
        self.shared: list[tuple[str, Callable[[], object]]] = []
        # (label, module namespace, name): LIBRARY_CACHES of the modules loaded when recorded, and the
        # cache_clear of their LRU_CACHES
        self.caches: list[tuple[str, dict, str]] = []
        self.cache_clears: list[Callable[[], None]] = []
        # FROZEN_STATE as _frozen_state records it, checked in the tests' thread
        self.frozen: list[tuple] = []
        # (module namespace, name, the table bound there, a copy of its items): RESTORED_TABLES
        self.restored: list[tuple] = []

    def seal(self, name: str, module: types.ModuleType) -> None:
        """Also watch `module`'s namespace, and those of the classes it defines, for any change at all,
        even one put back before the next comparison (rebind, raise, restore from a `__del__`): CPython
        3.11 stamps a dict with a new version tag (PEP 509) on every change (version_reader). Not where
        the tag cannot be read (another interpreter), nor for namespaces that change on their own (the
        `unittest` package's lazy `__getattr__`): only SEALED_MODULES. Each gets its
        `__warningregistry__` now, as any warning raised while its code runs would give it (a
        ResourceWarning of a FileHandler the program left in assertLogs' list, dropped by unittest._log's
        `__exit__`: round 61b); the registry's own changes are no change of the namespace."""
        if not _tags_readable():
            return
        module.__dict__.setdefault("__warningregistry__", {})
        namespaces = [(name, module.__dict__)]
        namespaces += [(f"{name}.{attr}", _class_namespace(value))
                       for attr, value in _defined_classes(module.__dict__, name)]
        for label, namespace in namespaces:
            read = version_reader(namespace, self.private)
            self.sealed.append((label, read, read()))
            # What a sealed function runs is not in any dict: its code, defaults and closure cells
            # (contextlib's helper behind `testPartExecutor` holds the generator function in a cell).
            todo = [(f"{label}.{key}", value) for key, value in list(namespace.items())]
            while todo:
                where, value = todo.pop()
                func, _ = _unwrap(value)
                if _type(func) is _FUNCTION and len(self.sealed_functions) < 10_000:
                    state = _function_state(func)
                    self.sealed_functions.append((where, func, state))
                    todo.extend((f"{where}.<cell>", held) for held in state[3] if _type(held) is _FUNCTION)

    def add_module(self, name: str, module: types.ModuleType, mode: str) -> None:
        """Watch `module`'s namespace in `mode`, and the namespaces and MROs of the classes it defines
        (their `__module__` is `name`)."""
        if mode not in ("strict", "functions", "methods"):
            raise ValueError(f"unknown mode {mode!r}")
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            return
        self.modules.append((name, module))
        self.entries.append((name, namespace, dict(namespace), mode, None))
        self.versions.append(self._version(namespace))
        for attr, value in _defined_classes(namespace, name):
            self._add_class(f"{name}.{attr}", value, mode)

    def _add_class(self, label: str, cls: type, mode: str) -> None:
        """Watch a class's own namespace in `mode`, and its MRO."""
        own = _CLASS_DICT(cls)  # (its copy: a copy of the dict behind it, made in C)
        self.entries.append((label, own, own.copy(), mode, cls))
        self.versions.append(self._version(cls))
        self.class_mros.append((label, cls, _MRO(cls)))

    def add_unowned_classes(self) -> None:
        """Also watch the classes bound in a recorded namespace (a module's or a class's, and theirs in
        turn) that no module's record holds, under the first label that binds them and its mode: a
        class whose `__module__` names a module that does not bind it (pandas' `Timedelta.components`
        namedtuple says "importlib._bootstrap": a program set its `__eq__` to `slice`, and a test's
        assertEqual of the library's components against a wrong tuple passed, red-team round 59b), or
        a class nested in a class. Only classes whose namespace can be changed (heap types, not
        immutable ones)."""
        recorded = {_id(cls) for _label, _live, _saved, _mode, cls in self.entries if cls is not None}
        index = 0
        while index < len(self.entries):  # (grows as it goes: classes bound in the classes added)
            label, live, _saved, mode, cls = self.entries[index]
            index += 1
            for key, value in _changeable_classes(live if cls is None else cls, recorded):
                recorded.add(_id(value))
                self._add_class(f"{label}.{key}", value, mode)
            if cls is None:
                continue
            # Its bases and its metaclass, which no namespace may bind: `tokenize.TokenInfo`'s namedtuple
            # base given `__eq__ = slice` made every token equal to anything (red-team round 59c).
            for kind, base in (*(("base", base) for base in _MRO(cls)[1:]), ("metaclass", _type(cls))):
                if _id(base) not in recorded and _changeable(base):
                    recorded.add(_id(base))
                    self._add_class(f"{label}.<{kind} {_QUALNAME(base)}>", base, mode)

    def add_held(self) -> None:
        """Record what the functions and descriptors bound in the namespaces recorded so far (modules
        and their classes) hold: their closure cells' contents (a decorator's wrapper calls the function
        in its cell: `pd.testing.assert_frame_equal`'s set to `"".format` passed every frame, red-team
        round 58c), what a staticmethod, classmethod, property, partial, partialmethod, cached_property
        or DynamicClassAttribute holds (each can be made to hold another in place: `property.__init__(p,
        ...)`, `partial.__setstate__`, `fget = ...`: _HELD_FIELDS), the keyword arguments of partials
        (`tables`), and the same of functions held in cells, HELD_DEPTH levels down; and the keyword
        defaults of those functions (a dict), and the globals of those that run with a namespace no
        module owns, with the builtins dict there (namedtuple's, SciPy's result classes' and its
        nonlinear solvers' generated functions: `tables`). None of these
        changes a namespace, raises an audit event, or runs the program's code where the watch would
        see it."""
        fields, kinds = _held_fields()
        todo = [(f"{label}.{key}", value, 0) for label, live, _saved, _mode, cls in self.entries
                for key, value in _holding(live if cls is None else cls, kinds)]
        seen, (labels, cells, contents) = set(), self.cells
        module_space = types.ModuleType.__dict__["__dict__"].__get__
        globals_seen = {_id(module_space(module)) for module in list(sys.modules.values())
                        if issubclass(type(module), types.ModuleType)}
        groups: dict[int, tuple[Callable, list, list, list[str]]] = {}
        function, closure, content_of, type_, id_ = _FUNCTION, _CLOSURE, _cell_content, _type, _id
        while todo:
            where, value, depth = todo.pop()
            kind = type_(value)
            if id_(value) in seen or (kind is not function and id_(kind) not in fields):
                continue
            seen.add(id_(value))
            held = []
            if kind is function:
                space = value.__globals__
                if id_(space) not in globals_seen:  # (a module's are recorded with it, or left out)
                    globals_seen.add(id_(space))
                    self._add_own_globals(where, space)
                keywords = value.__kwdefaults__
                if type_(keywords) is dict:  # (changeable in place: round 60c set np.all's `where`)
                    self.tables.append((f"{where}.__kwdefaults__", keywords, dict(keywords),
                                        "keyword defaults"))
                for cell in closure(value) or ():
                    content = content_of(cell)
                    if content is not _EMPTY_CELL:
                        held.append(content)
                        labels.append(where)
                        cells.append(cell)
                        contents.append(content)
            else:
                for read in fields[id_(kind)]:
                    item = read(value)
                    held.append(item)
                    group = groups.setdefault(id_(read), (read, [], [], []))
                    group[1].append(value)
                    group[2].append(item)
                    group[3].append(where)
                    if type_(item) is dict and item:  # (a partial's keywords: changeable in place)
                        self.tables.append((where, item, dict(item), "arguments"))
            if depth < HELD_DEPTH:
                todo.extend((f"{where}.<held>", item, depth + 1) for item in held
                            if type_(item) is function or id_(type_(item)) in fields)
        self.holders = list(groups.values())

    def _add_own_globals(self, where: str, space: dict) -> None:
        """Record (`tables`) the globals a function runs with that are no module's namespace (code
        compiled from a string with a namespace of its own), and the builtins dict they hold."""
        self.tables.append((f"{where}.<globals>", space, dict(space), "globals"))
        builtins_ = space.get("__builtins__")
        if _type(builtins_) is dict and builtins_ is not builtins.__dict__:
            self.tables.append((f"{where}.<globals>.__builtins__", builtins_, dict(builtins_), "globals"))

    def twin(self, private: bool = False) -> Snapshot:
        """A record of the same moment as this one (nothing ran since record), without a second walk: the
        same namespaces in the same modes, with copies, version readers and seals of its own (what a
        holder of one changes in its copies, the other's do not see), and the library state recorded
        anew; what functions hold is shared (make_held_check copies what it compares)."""
        twin = Snapshot(private)
        twin.entries = [(label, live, saved.copy(), mode, cls)
                        for label, live, saved, mode, cls in self.entries]
        twin.versions = [None if version is None else twin._version(version[2]) for version in self.versions]
        twin.modules, twin.class_mros = list(self.modules), list(self.class_mros)
        for name, module in self.modules:
            if name in SEALED_MODULES:
                twin.seal(name, module)
        twin.cells, twin.holders, twin.tables = self.cells, self.holders, self.tables
        _record_state(twin)
        return twin

    def add_namespace(self, label: str, namespace: dict, mode: str) -> None:
        """Watch a namespace that is no module's (the builtins the tests' code runs with) in `mode`."""
        if mode not in ("strict", "functions", "methods"):
            raise ValueError(f"unknown mode {mode!r}")
        self.entries.append((label, namespace, dict(namespace), mode, None))
        self.versions.append(self._version(namespace))

    def _version(self, namespace: dict | type) -> tuple[Callable[[], int], int, dict | type] | None:
        """(reader, tag now, the namespace) of a namespace (a class: its own), or None where none is
        kept."""
        if not (self.private or _C_VERSION is not None) or not _tags_readable():
            return None
        read = version_reader(namespace, private=self.private)
        return read, read(), namespace


# Caches keyed by what their callers ask for, which hand back what they hold without looking at it. A
# program that put a pattern matching anything under the key of the test's regex in `re._cache`, or
# bound there a mapping that makes one for every key, made every assertRegex, assertRaisesRegex and
# `re.match` of the tests pass (round 53). The checks in the tests' thread (after the program loads and
# after each of its calls) empty them, so that what the tests compile next is compiled anew, and every
# check finds one that is no longer a plain dict.
LIBRARY_CACHES = (("re", "_cache"), ("_strptime", "_regex_cache"),
                  ("pandas._libs.tslibs.strptime", "_regex_cache"))  # (pandas' own strptime: round 55)
# Modules the standard library's C code imports by name when first needed (`datetime.strptime` imports
# `_strptime`): loaded before the bindings are recorded, so that one the program put in sys.modules in
# their place is found, and their caches are among LIBRARY_CACHES' (round 53).
LOADED_BEFORE_RECORD = ("_strptime",)
# unittest's machinery, sealed (Snapshot.seal): a test's outcome is decided here, within the test.
SEALED_MODULES = ("unittest.case", "unittest.suite", "unittest.result", "unittest.loader", "unittest.util",
                  "unittest.signals", "unittest._log",
                  "contextlib")  # unittest's test parts and subtests are its context managers
_VERSION_INDEX = 3  # PyDictObject: ob_refcnt, ob_type, ma_used, ma_version_tag (64-bit words)
try:
    from coding_framework.sandbox.in_process_guard import _namespace_reads
except ImportError:  # not built (no compiler)
    _namespace_reads = None
(_C_HOLDING, _C_CELLS_AS_SEEN, _C_FUNCTIONS_AS_SEEN, _C_MROS_AS_SEEN, _C_DEFINED_CLASSES,
 _C_CHANGEABLE_CLASSES) = (getattr(_namespace_reads, name, None) for name in (
    "holding", "cells_as_seen", "functions_as_seen", "mros_as_seen", "defined_classes", "changeable_classes"))
# (None where not built, or in a Python whose tags they do not read)
_C_VERSION, _C_MOVED = getattr(_namespace_reads, "version", None), getattr(_namespace_reads, "moved", None)


def version_reader(namespace: dict | type, private: bool = False) -> Callable[[], int] | None:
    """A function reading `namespace`'s version tag (a class's: its own namespace's), or None where the
    tag is not where CPython 3.11 keeps it (_tags_readable). Where the compiled `_namespace_reads` is
    built: one C call, which only reads (whoever gets hold of the reader learns a number). Otherwise,
    `private`: through a ctypes view made now, fast, but able to write what it reads: only for the
    harness's own thread, where nothing of the program's reaches it; not `private`: each read a
    `ctypes.string_at` of the tag's 8 bytes, which the audit hook lets through only to trusted code
    naming it (this function's)."""
    if not _tags_readable():
        return None
    if _C_VERSION is not None:
        return functools.partial(_C_VERSION, namespace)
    import ctypes

    if issubclass(type(namespace), type):
        namespace = _class_namespace(namespace)
    if private:
        tag, index = (ctypes.c_uint64 * 4).from_address(id(namespace)), _VERSION_INDEX
        return lambda: tag[index]
    address, size, from_bytes = id(namespace) + 8 * _VERSION_INDEX, 8, int.from_bytes
    return lambda: from_bytes(ctypes.string_at(address, size), "little")


_READABLE: list[bool] = []


def _tags_readable() -> bool:
    """Whether a dict's version tag is where CPython 3.11 keeps it (checked once, on a dict changed
    here), so that version_reader can read it."""
    if not _READABLE:
        readable = False
        if sys.implementation.name == "cpython" and sys.version_info[:2] == (3, 11):
            import ctypes

            probe: dict = {}
            tag = (ctypes.c_uint64 * 4).from_address(id(probe))
            before = tag[_VERSION_INDEX]
            probe["x"] = 1
            readable = tag[_VERSION_INDEX] != before
        _READABLE.append(readable)
    return _READABLE[0]


_EMPTY_CELL = object()
_CLOSURE = types.FunctionType.__dict__["__closure__"].__get__
_CELL_CONTENTS = operator.attrgetter("cell_contents")
_ACCESSORS = (operator.attrgetter("fget"), operator.attrgetter("fset"), operator.attrgetter("fdel"))
# What a holder of a function holds, read by its type's own C-level getters (state that its `__init__`
# or `__setstate__` replaces in place), per exact type; partialmethod and cached_property keep theirs in
# the instance's dict, as DynamicClassAttribute and enum's property do.
_HELD_FIELDS = {
    _id(staticmethod): (staticmethod.__dict__["__func__"].__get__,),
    _id(classmethod): (classmethod.__dict__["__func__"].__get__,),
    _id(property): (property.fget.__get__, property.fset.__get__, property.fdel.__get__),
    _id(functools.partial): (functools.partial.func.__get__, functools.partial.args.__get__,
                             functools.partial.keywords.__get__),
    _id(functools.partialmethod): (operator.attrgetter("func"), operator.attrgetter("args"),
                                   operator.attrgetter("keywords")),
    _id(functools.cached_property): (operator.attrgetter("func"),),
    # (enum's `value` and `name`: round 58d set Enum's `value` fget to `partial(min, 200)`)
    _id(types.DynamicClassAttribute): _ACCESSORS,
    _id(enum.property): _ACCESSORS,
}
HELD_DEPTH = 3  # functions held in cells (a decorator's wrapper of a wrapper), followed this far
_HELD_KINDS = (staticmethod, classmethod, property, functools.partial, functools.partialmethod,
               functools.cached_property, types.DynamicClassAttribute, enum.property)


def _held_fields() -> tuple[dict, tuple]:
    """(_HELD_FIELDS, _HELD_KINDS), with numpy's array-function dispatcher where numpy is loaded: the C
    object `np.all`, `np.sum` and the rest are, which holds the Python function doing the work
    (`_implementation`; round 60c set `np.all`'s keyword default `where` to False in place, and the
    tests' own `np.allclose` passed anything). Read off numpy's static type only."""
    dispatcher = next((getattr(sys.modules.get(name), "_ArrayFunctionDispatcher", None) for name in (
        "numpy._core._multiarray_umath", "numpy.core._multiarray_umath") if name in sys.modules), None)
    if not (_type(dispatcher) is _TYPE and not _TYPE_FLAGS(dispatcher) & _HEAP_TYPE
            and _type(dispatcher.__dict__.get("_implementation")) is types.GetSetDescriptorType):
        return _HELD_FIELDS, _HELD_KINDS
    fields = dict(_HELD_FIELDS)
    fields[_id(dispatcher)] = (dispatcher.__dict__["_implementation"].__get__,)
    return fields, (*_HELD_KINDS, dispatcher)


def _holding(space: dict | type, kinds: tuple = _HELD_KINDS) -> list[tuple[object, object]]:
    """The (key, value) entries of a namespace (a class: its own) whose value is a function with
    closure cells, keyword defaults or code compiled from a string, or an object of one of `kinds`
    (holders of _HELD_FIELDS): in one C call where `_namespace_reads` is built."""
    if _C_HOLDING is not None:
        return _C_HOLDING(space, kinds)
    items = (_CLASS_DICT(space) if issubclass(_type(space), _TYPE) else space).items()
    return [(key, value) for key, value in list(items)
            if ((_CLOSURE(value) is not None or value.__kwdefaults__ is not None
                 or value.__code__.co_filename == "<string>")
                if _type(value) is _FUNCTION else _type(value) in kinds)]


def _defined_classes(namespace: dict, name: str) -> list[tuple[object, type]]:
    """The (key, class) entries of module `name`'s namespace for the classes it defines: those whose own
    `__module__` is the str `name`, in one C call where `_namespace_reads` is built. Read through type's
    own descriptor: the test module also holds the program's objects, whose class or metaclass could
    answer attribute reads with the program's code."""
    if _C_DEFINED_CLASSES is not None and _type(name) is str:
        return _C_DEFINED_CLASSES(namespace, name)
    found = []
    for attr, value in list(namespace.items()):
        if issubclass(type(value), type):
            module = _CLASS_DICT(value).get("__module__")  # an exact str: another's `==` could be its code
            if _type(module) is str and module == name:
                found.append((attr, value))
    return found


def _changeable(cls: type) -> bool:
    """Whether `setattr` can change a class's namespace: a heap type, not an immutable one."""
    return bool(_TYPE_FLAGS(cls) & _HEAP_TYPE) and not _TYPE_FLAGS(cls) & _IMMUTABLE_TYPE


def _changeable_classes(space: dict | type, skip: set[int]) -> list[tuple[object, type]]:
    """The (key, class) entries of a namespace (a class: its own) whose value is a class `setattr` can
    change (a heap type, not immutable) and whose id is not in `skip`: in one C call where
    `_namespace_reads` is built."""
    if _C_CHANGEABLE_CLASSES is not None:
        return _C_CHANGEABLE_CLASSES(space, skip)
    items = (_CLASS_DICT(space) if issubclass(_type(space), _TYPE) else space).items()
    return [(key, value) for key, value in list(items)
            if issubclass(_type(value), _TYPE) and _changeable(value) and _id(value) not in skip]


def _function_state(func: types.FunctionType) -> tuple:
    """What a function runs: (code, defaults, kwdefaults, contents of its closure cells)."""
    cells = []
    for cell in func.__closure__ or ():
        try:
            cells.append(cell.cell_contents)
        except ValueError:  # an empty cell
            cells.append(_EMPTY_CELL)
    return func.__code__, func.__defaults__, func.__kwdefaults__, tuple(cells)


def _same_state(old: tuple, new: tuple) -> bool:
    """Identity of each part (code, defaults, kwdefaults, every cell's content)."""
    return (len(old[3]) == len(new[3]) and all(a is b for a, b in zip(old[:3], new[:3], strict=True))
            and all(a is b for a, b in zip(old[3], new[3], strict=True)))


def _class_namespace(cls: type) -> dict:
    """The dict behind a class's mappingproxy (gc's referent: the proxy holds nothing else)."""
    import gc

    (namespace,) = gc.get_referents(_CLASS_DICT(cls))
    return namespace


# The guard's own code and what it calls: nothing a test patches, so compared strictly and always first.
HARNESS_MODULES = ("coding_framework.sandbox.in_process_guard",
                   "coding_framework.sandbox.in_process_guard.audit_hook",
                   "coding_framework.sandbox.in_process_guard.bindings",
                   "coding_framework.sandbox.in_process_guard.guarded_calls",
                   "coding_framework.sandbox.in_process_guard.returned_values",
                   "coding_framework.sandbox.in_process_guard.thread_states",
                   "coding_framework.sandbox.in_process_guard.outside_calls",
                   "coding_framework.sandbox.suite_runner", "coding_framework.sandbox.wire",
                   "coding_framework.sandbox.plain_data", "coding_framework.sandbox.numpy_stand_ins", "hmac",
                   "hashlib", "types", "functools")


def make_harness_check(is_trusted: Callable[[types.CodeType], bool]) -> Callable[[], list[str]]:
    """A checker of the harness modules (strict) and of builtins, recorded now. Tests patch builtins
    themselves, with mocks and functions of their own, so a builtin may be rebound to a genuine mock or
    a trusted Python function; anything else (the program's code, or a C callable running it:
    `abs = partial(min, 0.0, key=program_function)`) is found."""
    harness, builtin = Snapshot(), Snapshot()
    for name in HARNESS_MODULES:
        if name in sys.modules:
            harness.add_module(name, sys.modules[name], "strict")
    builtin.add_module("builtins", builtins, "strict")
    strict = make_checker([harness], is_trusted)
    programs = make_checker([builtin], is_trusted, program_made_only=True,
                            suspicious=lambda value: _unlike_a_tests_patch(value, is_trusted))

    def intact() -> list[str]:
        return strict() or programs()

    return intact


def record(strict_names: Iterable[str], private: bool = False, leave_out: Iterable[str] = ()) -> Snapshot:
    """Every loaded module (strict ones in full, the rest for functions and classes, those named in
    `leave_out` not at all unless strict), and builtins. `private`: the harness thread's own record
    (Snapshot); a second record of the same moment: Snapshot.twin."""
    strict, left_out = set(strict_names) | {"builtins"}, set(leave_out)
    snapshot = Snapshot(private)
    for name, module in list(sys.modules.items()):
        if issubclass(type(module), types.ModuleType):
            is_strict = name in strict or _under(name, strict)
            if name in left_out and not is_strict:
                continue
            snapshot.add_module(name, module, "strict" if is_strict else "functions")
            if name in SEALED_MODULES:
                snapshot.seal(name, module)
    snapshot.add_unowned_classes()
    snapshot.add_held()
    _record_state(snapshot)
    return snapshot


def _record_state(snapshot: Snapshot) -> None:
    """The library state beside bindings (Snapshot's shared, caches, cache_clears, frozen, restored)."""
    snapshot.shared = _shared_objects()
    snapshot.caches = [(f"{module}.{name}", sys.modules[module].__dict__, name)
                       for module, name in LIBRARY_CACHES if module in sys.modules]
    snapshot.cache_clears = [clear for module, name in LRU_CACHES
                             if (clear := getattr(getattr(sys.modules.get(module), name, None), "cache_clear",
                                                  None)) is not None]
    snapshot.frozen = _frozen_state()
    for module, name in RESTORED_TABLES:
        space = getattr(sys.modules.get(module), "__dict__", None)
        table = space.get(name) if _type(space) is _DICT else None
        if _issubclass(_type(table), _DICT):
            snapshot.restored.append((space, name, table, dict(table)))


def _under(name: str, roots: set[str]) -> bool:
    return any(name.startswith(root + ".") for root in roots)


def make_checker(
    snapshots: list[Snapshot],
    is_trusted: Callable[[types.CodeType], bool],
    *,
    program_made_only: bool = False,
    suspicious: Callable[[object], bool] | None = None,
    harness_side: bool = False,
) -> Callable[[], list[str]]:
    """A function listing (up to MAX_FINDINGS) bindings that changed since the snapshots. It keeps its
    own references to everything it calls, so rebinding a builtin cannot blind it, and reads nothing
    the candidate's objects could answer with their own code.

    "strict" namespaces: any rebinding, deletion or (in classes) addition counts, except lazy
    initialisation (a binding that was None, or a private non-callable one). "functions": deleted or
    rebound functions and classes, unless the new value is a plain function loaded from trusted code
    of the same definition (a library redefining its own function lazily; another trusted
    function put there, `__exit__ = inspect.isclass`, changes what the library does), and, in classes,
    an added special method or callable shadowing a base class's (and, in every mode, the library
    state: make_state_check). "methods":
    callables added (classes), rebound or deleted, whatever the data attributes do.

    With `program_made_only` (checks in the middle of a test, where the test's own `mock.patch`es are
    in place): only bindings whose new value is the program's (`program_made`, or `suspicious` where
    given) count.

    With `harness_side` (the harness's own thread, where none of the program's code may run, not even
    as a dict key's `__eq__` met in a lookup: a key equal to a watched name only in that thread hid a
    rebinding from it): each namespace, and sys.modules, is read through a copy made in C whose keys
    must all be exact strs (a finding otherwise), and the shared objects, which only the program's
    own classes could answer for, are left to the checks in the tests' thread."""
    modules_now, limit, missing = sys.modules, MAX_FINDINGS, object()
    callable_, len_, type_, dict_ = builtins.callable, builtins.len, builtins.type, builtins.dict
    str_startswith, str_endswith = str.startswith, str.endswith
    function = types.FunctionType
    entries = [e for s in snapshots for e in s.entries]
    # Per entry, (reader, tag when recorded, namespace) or None (Snapshot.versions). The entries with a
    # tag, their namespaces, and the tag each was last found as recorded with (the one store of it,
    # updated below); with the compiled reads, those whose tags moved are found in one C call (`moved`),
    # and the others are not stepped through.
    versions = [v for s in snapshots for v in s.versions]
    moved = _C_MOVED
    tagged = [i for i, v in enumerate(versions) if v is not None]
    untagged = [i for i, v in enumerate(versions) if v is None]
    tagged_spaces, tagged_tags = [versions[i][2] for i in tagged], [versions[i][1] for i in tagged]
    slot = {i: j for j, i in enumerate(tagged)}
    loaded = [m for s in snapshots for m in s.modules]
    sealed = [e for s in snapshots for e in s.sealed]
    functions = [e for s in snapshots for e in s.sealed_functions]
    mros = [e for s in snapshots for e in s.class_mros]
    library_state = make_state_check(snapshots, is_trusted, harness_side=harness_side)
    function_state, same_state, mro_of, same_definition = _function_state, _same_state, _MRO, _same_definition
    # (the sealed functions' and the MROs' lists, as their C comparisons take them)
    sealed_functions, sealed_states = [func for _, func, _ in functions], [state for _, _, state in functions]
    mro_classes, mro_tuples = [cls for _, cls, _ in mros], [mro for _, _, mro in mros]
    functions_as_seen, mros_as_seen = _C_FUNCTIONS_AS_SEEN, _C_MROS_AS_SEEN
    lazy_attribute = functools.partial(_six_lazy_attribute, is_trusted=is_trusted)
    behaviour, inherited, known_replacement = _behaviour, _inherited, _known_replacement

    def is_trusted_function(value: object) -> bool:
        return type_(value) is function and is_trusted(value.__code__)

    str_list = _str_list
    copied = str_keyed_copy if harness_side else None
    foreign_filter = functools.partial(_foreign_warnings_filter, sys.modules.get("warnings"))

    def changes() -> list[str]:
        found = [f"{label} was changed" for label, read, seen in sealed if read() != seen][:limit]
        if functions_as_seen is None or not functions_as_seen(sealed_functions, sealed_states, _EMPTY_CELL):
            found += [f"{label} runs other code" for label, func, state in functions
                      if not same_state(state, function_state(func))][:limit]
        if mros_as_seen is None or not mros_as_seen(mro_classes, mro_tuples):
            found += [f"{label} was given other bases" for label, cls, mro in mros
                      if mro_of(cls) is not mro][:limit]
        found += library_state()
        modules = modules_now
        if copied is not None:
            modules = copied(modules_now)
            if modules is None:
                return [*found, "sys.modules holds a key that is not a str"][:limit]
        if not program_made_only:
            for name, module in loaded:
                if modules.get(name) is not module:
                    found.append(f"sys.modules[{name!r}] was replaced or removed")
        filters = foreign_filter()
        if filters:
            found.append(filters)
        if moved is not None:
            order = [*untagged, *(tagged[j] for j in moved(tagged_spaces, tagged_tags))]
            order.sort()
        else:
            order = range(len_(entries))
        for index in order:
            (label, live, saved, mode, cls), version = entries[index], versions[index]
            count = len_(found)
            if count >= limit:
                break
            if version is not None:
                now = version[0]()
                if now == tagged_tags[slot[index]]:
                    continue  # not changed since it was last found as recorded
            if copied is not None:
                live = copied(live)
                if live is None:
                    found.append(f"{label} holds a key that is not a str")
                    continue
            strict, methods = mode == "strict", mode == "methods"
            # Every binding as recorded (or a placeholder's): what this check finds here cannot change
            # while the namespace does not. Not so for a binding the check let pass, rebound to an object
            # that may change later (a test's mock given the program's function as side_effect).
            recorded = True
            for key, old in saved.items():
                new = live.get(key, missing)
                if new is old or old is None:  # unchanged, or lazy initialisation of a placeholder
                    continue
                recorded = False
                if program_made_only:
                    flagged = suspicious(new) if suspicious else program_made(new, is_trusted)
                    if new is not missing and flagged:
                        found.append(f"{label}.{key} was rebound")
                elif new is missing:
                    if (not methods or callable_(old)) and not lazy_attribute(old):
                        found.append(f"{label}.{key} was deleted")
                elif methods:
                    if callable_(old) or callable_(new):
                        found.append(f"{label}.{key} was rebound")
                elif (strict and not (str_startswith(key, "_") and not callable_(old))
                      and not (is_trusted_function(new) and known_replacement(old, new))) or (
                        callable_(old) and not (is_trusted_function(new) and same_definition(old, new))):
                    found.append(f"{label}.{key} was rebound")
            if cls is not None:  # new class attributes shadow inherited ones
                # (copyreg caches a class's slot names on it the first time one of its objects is
                # copied or pickled: tarfile's TarInfo by `tar.add`; Python 3.11 puts an empty
                # `__annotations__` on a class the first time it is read there, red-team round 59c.)
                added = [k for k in live if k not in saved]
                recorded = recorded and not added
                added = [k for k in added if not (k == "__slotnames__" and str_list(live[k]))
                         and not (k == "__annotations__" and type_(live[k]) is dict_ and not live[k])]
                if program_made_only:
                    added = [k for k in added if program_made(live[k], is_trusted)]
                elif methods:
                    added = [k for k in added if callable_(live[k])]
                elif not strict:
                    # "functions": a special method, or a method a base class has, added to a class of
                    # a module the tests do not import changes what its objects do as much as a rebound
                    # one (`collections.Counter.__getitem__ = slice` made all Counters equal, and every
                    # assertCountEqual pass: round 53). Data stays free (`__annotations__`, made when
                    # first read).
                    added = [k for k in added if type_(k) is not str or (behaviour(live[k], callable_) and (
                        (str_startswith(k, "__") and str_endswith(k, "__")) or inherited(cls, k)))]
                found.extend(f"{label}.{k} was added" for k in added[:limit])
            if version is not None and recorded:
                tagged_tags[slot[index]] = now  # as recorded, in this version: skipped until it changes again
        return found[:limit]

    return changes


def make_state_check(snapshots: list[Snapshot], is_trusted: Callable[[types.CodeType], bool], *,
                     harness_side: bool = False) -> Callable[[], list[str]]:
    """A function checking the library state the snapshots hold beside bindings, and listing what
    changed: LIBRARY_CACHES must be plain dicts still, and in the tests' thread (not `harness_side`) it
    also empties them and LRU_CACHES, looks for methods set on the shared objects (_shared_objects), and
    compares FROZEN_STATE with its record; on both sides, what library functions and descriptors hold
    (make_held_check). Part of every check of make_checker's; run alone in the
    tests' thread where no bindings check runs: as a returned generator hands out each item and at each
    test's end (a generator's body planted patterns, or set json's separators, between the checks of
    its call and the test's use: round 55)."""
    type_, dict_, function, missing = builtins.type, dict, types.FunctionType, object()
    caches = [e for s in snapshots for e in s.caches]
    shared = [] if harness_side else [e for s in snapshots for e in s.shared]
    clears = [] if harness_side else [e for s in snapshots for e in s.cache_clears]
    frozen = [] if harness_side else [e for s in snapshots for e in s.frozen]
    restored = [] if harness_side else [e for s in snapshots for e in s.restored]
    len_, dict_get, dict_clear, dict_update = builtins.len, dict.get, dict.clear, dict.update
    copied = str_keyed_copy if harness_side else None
    program_class = functools.partial(_program_class, is_trusted=is_trusted)
    method_set, type_module, is_subclass = _method_set_on_instance, _TYPE_MODULE, _issubclass
    held_changes = make_held_check(snapshots)

    def state() -> list[str]:
        found = held_changes()
        for label, get in shared:
            held = get()
            culprit = method_set(held, type_(held), is_trusted)
            if culprit:
                found.append(f"{label} is {culprit}")
        for label, space, name in caches:
            cache = (space if copied is None else copied(space) or {}).get(name)
            if type_(cache) is not dict_:
                found.append(f"{label} was replaced (by no plain dict)")
            elif copied is None:
                cache.clear()  # (the tests' thread: see LIBRARY_CACHES)
        for clear in clears:
            clear()
        for space, name, table, items in restored:
            now = space.get(name, missing)
            if (now is not table or len_(table) != len_(items)
                    or [k for k, v in items.items() if dict_get(table, k, missing) is not v]):
                dict_clear(table)
                dict_update(table, items)
                space[name] = table
        for label, space, name, value, live, saved, may_gain, loaded in frozen:
            if space.get(name, missing) is not value:
                found.append(f"{label} was replaced")
                continue
            changed = [k for k, v in saved.items() if live.get(k, missing) is not v]
            changed += [k for k, v in live.items() if k not in saved and not (
                ("program classes" in may_gain and program_class(k))
                or ("trusted reducers" in may_gain and type_(v) is function and is_trusted(v.__code__)
                    and is_subclass(type_(k), _TYPE) and type_module(k) not in loaded))]
            if changed:
                found.append(f"{label} was changed")
        return found

    return state


def make_held_check(snapshots: list[Snapshot]) -> Callable[[], list[str]]:
    """A function listing the library functions and descriptors that hold other than they did when
    recorded (Snapshot.add_held): a closure cell that held a callable, or holds one now, or held a
    str or bytes and holds another (a closure's own data, such as a counter or a value made on first
    use, is free; a placeholder None given a callable is not: pandas' `bn_func` set to `np.sum` made
    `Series.max()` a sum, round 58d; nor are the names a wrapper was made with), any
    part of what a staticmethod, classmethod, property, partial, partialmethod, cached_property or
    DynamicClassAttribute holds, and the keyword arguments a partial holds. All read by C
    getters, compared by identity, a few thousand at C speed (`map`) while nothing changed."""
    labels = [label for s in snapshots for label in s.cells[0]]
    cells = [cell for s in snapshots for cell in s.cells[1]]
    contents = [content for s in snapshots for content in s.cells[2]]  # (data: as last seen; a copy)
    groups_ = [group for s in snapshots for group in s.holders]
    tables = [table for s in snapshots for table in s.tables]
    # Their dicts' version tags now (made before the program runs): only those whose tag moved are
    # compared (one C call for the ~400 namedtuple globals a heavy preload has), where tags are read.
    table_dicts = [table[1] for table in tables]
    moved = _C_MOVED if _C_VERSION is not None and _tags_readable() else None
    table_tags = [_C_VERSION(space) for space in table_dicts] if moved is not None else None
    missing, len_, type_, str_, bytes_ = object(), builtins.len, builtins.type, builtins.str, builtins.bytes
    all_, map_, is_, callable_, read_cell, content_of = builtins.all, map, operator.is_, builtins.callable, \
        _CELL_CONTENTS, _cell_content
    as_seen = _C_CELLS_AS_SEEN

    def held() -> list[str]:
        found = []
        if as_seen is not None:
            same = as_seen(cells, contents)
        else:
            try:
                same = all_(map_(is_, map_(read_cell, cells), contents))
            except ValueError:  # a cell emptied since
                same = False
        if not same:
            for index, cell in enumerate(cells):
                old, new = contents[index], content_of(cell)
                if new is old:
                    continue
                if callable_(new) or (old is not None and callable_(old)):
                    found.append(f"{labels[index]} runs other code (a closure cell of it was changed)")
                elif (type_(old) is str_ or type_(old) is bytes_) and not (
                        type_(new) is type_(old) and new == old):
                    # A name or text a closure was made with (round 58d: pandas' `deprecate_kwarg`
                    # wrapper given other argument names turned `check_dtype=False` into `atol=1e300`).
                    found.append(f"{labels[index]} runs with other names (a closure cell of it was changed)")
                else:
                    contents[index] = new
        for read, holders, values, where in groups_:
            if not all_(map_(is_, map_(read, holders), values)):
                found.extend(f"{where[i]} holds another function than it did"
                             for i, holder in enumerate(holders) if read(holder) is not values[i])
        for where, table, saved, what in (tables if moved is None else
                                          [tables[index] for index in moved(table_dicts, table_tags)]):
            if len_(table) != len_(saved) or [k for k, v in saved.items() if table.get(k, missing) is not v]:
                found.append(f"{where} holds other {what} than it did")
        return list(dict.fromkeys(found))[:MAX_FINDINGS]  # (a holder's fields are read one by one)

    return held


def _program_class(key: object, is_trusted: Callable[[types.CodeType], bool]) -> bool:
    """Whether `key` (a dispatch table's) is a class of the program's: one no trusted module made."""
    return (_issubclass(_type(key), _TYPE) and _TYPE_FLAGS(key) & _HEAP_TYPE != 0
            and _maker(key, is_trusted) is None)


def _behaviour(value: object, callable_=builtins.callable, any_=builtins.any) -> bool:
    """Whether a class attribute changes what the class's objects do: something called (a function,
    a C type such as `slice`) or a descriptor (a property), found without running any of its code.
    (Its builtins are taken when defined, as the checks' are: the program may rebind them.)"""
    return callable_(value) or any_("__get__" in _namespace(klass) for klass in _MRO(_type(value)))


def _inherited(cls: type, name: str, any_=builtins.any) -> bool:
    """Whether a base class of `cls` (read through type's own descriptors) defines `name`."""
    return any_(name in _namespace(base) for base in _MRO(cls)[1:])


def _six_lazy_attribute(value: object, is_trusted: Callable[[types.CodeType], bool]) -> bool:
    """Whether `value` is one of `six`'s lazy attributes (`six.moves.range` and the like: a class
    attribute that resolves itself at first use, sets the result on the object and deletes itself from
    the class; red-team round 23, an honest program importing matplotlib, whose tests import pandas):
    its class derives from `_LazyDescr` with six's own `__get__` (trusted code, vendored copies too)."""
    for klass in _MRO(_type(value)):
        if _QUALNAME(klass) == "_LazyDescr":
            getter = _namespace(klass).get("__get__")
            return _type(getter) is _FUNCTION and is_trusted(getter.__code__)
    return False


def _str_list(value: object, _type=type, _list=list, _all_str=all_exact_str) -> bool:
    """Whether `value` is a list of exact strs (what copyreg._slotnames caches). What it calls are its
    defaults, taken at import: the program may rebind the module's."""
    return _type(value) is _list and _all_str(value)


_TYPE_MODULE = type.__dict__["__module__"].__get__
_TYPE_FLAGS, _HEAP_TYPE = type.__dict__["__flags__"].__get__, 1 << 9  # Py_TPFLAGS_HEAPTYPE
_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE
_FUNCTION_DICT = types.FunctionType.__dict__["__dict__"].__get__


def _same_definition(old: object, new: types.FunctionType) -> bool:
    """Whether `new` stands for the function `old` as a library puts its own version in place (one
    redefining its function lazily; typing_extensions putting its backports into typing): the same
    qualified name of their code, and the same file or that of a known patcher (_PATCHERS). A code
    object's names and file cannot be set; a function's own `__qualname__` can: a trusted function
    returning its first argument, renamed `catch_warnings.__exit__` and put there, swallowed every
    failure of pandas' assert_frame_equal (round 54)."""
    if _type(old) is not _FUNCTION:
        return False
    before, after = old.__code__, new.__code__
    if _known_replacement(old, new):
        return True
    if before.co_qualname != after.co_qualname or not (
            before.co_filename == after.co_filename
            or _file_name(after.co_filename) in _PATCHERS.get(_file_name(before.co_filename), ())):
        return False
    # One factory makes many functions of one code (a decorator's wrappers), which differ in what their
    # cells hold: pandas' deprecate_kwarg wrapped around `"".format` stood in for assert_series_equal,
    # and assert_frame_equal compared no column (round 55).
    return _same_cells(old.__closure__ or (), new.__closure__ or ())


def _known_replacement(old: object, new: object) -> bool:
    """Whether the function `new` is what a library puts in place of the function `old` (its code's
    qualified name and file: _KNOWN_REPLACEMENTS). Allowed even in a module the tests import."""
    if _type(old) is not _FUNCTION or _type(new) is not _FUNCTION:
        return False
    before, after = old.__code__, new.__code__
    known = _KNOWN_REPLACEMENTS.get((before.co_qualname, _file_name(before.co_filename)))
    return known is not None and known == (after.co_qualname, _file_name(after.co_filename, 2))


def _same_cells(old: tuple, new: tuple, _len=len, _all=all, _map=map, _is=operator.is_) -> bool:
    """Whether two closures hold the same objects, cell by cell (an empty cell as an empty one)."""
    return _len(old) == _len(new) and _all(_map(_is, _map(_cell_content, old), _map(_cell_content, new)))


def _cell_content(cell: types.CellType) -> object:
    try:
        return cell.cell_contents
    except ValueError:  # (an empty cell)
        return _EMPTY_CELL


# Modules whose functions another library replaces with its own, by file name (of trusted code only).
_PATCHERS = {"typing.py": ("typing_extensions.py",)}
# Functions a library puts in another module's place under another name: (qualified name, file) of the
# code of the one recorded -> of the one allowed there. `logging.captureWarnings(True)` sends warnings
# to logging through `warnings.showwarning` (round 56: an error before); pyparsing's
# `ParserElement.enable_packrat()`, which matplotlib's mathtext calls as it loads, puts its caching
# parser in place of the plain one (round 60b: a program importing pyplot where the tests import only
# `matplotlib` or one of its light modules, which load pyparsing, was an error).
_KNOWN_REPLACEMENTS = {("showwarning", "warnings.py"): ("_showwarning", "logging/__init__.py"),
                       ("ParserElement._parseNoCache", "core.py"): ("ParserElement._parseCache",
                                                                    "pyparsing/core.py")}


def _file_name(path: str, parts: int = 1, _split=str.split, _join="/".join) -> str:
    """The last `parts` parts of a code object's file path, by str's own methods: os.path.basename calls
    the builtin `isinstance`, which the program may have rebound (the harness's thread ran it, round
    54's regression pass)."""
    return _join(_split(path, "/")[-parts:])


def foreign_in_class(cls: type, own_code: CodeSet, recorded: dict[int, type],
                     allowed: tuple[type, ...] = (),
                     is_trusted: Callable[[types.CodeType], bool] | None = None,
                     _callable=callable, _seen: set[int] | None = None) -> str | None:
    """What in `cls`, or a class it derives from that is not among `recorded` (id -> class: the classes
    recorded before the program ran, whose namespaces the bindings guard watches; static types are
    skipped too), the tests did not put there, or None. Such a class is the trusted test source's: each
    function in it (also behind a classmethod, staticmethod, property or partial, and through the
    `__wrapped__` of trusted wrappers such as mock.patch's) must be the source's own code (`own_code`,
    by identity; a test added with `setattr` may be a lambda). Any other callable but a genuine
    unittest.mock object (with `is_trusted`), an exception class, or one of `allowed`'s types
    (GuardedFunction) is foreign:
    `assertEqual = classmethod(TestCase.assertNotEqual)` (a trusted function, but not the tests'), and
    `len` or `slice` as an assertion each answer every check. A class that no module recorded (not
    made in C, no library's) and that holds nothing foreign in turn, trusted functions allowed, is not:
    a helper class or namedtuple the test source nests in its test class (round 62d; not a dataclass,
    whose generated `__init__` no one trusts). Namespaces are read through str-keyed copies made in C
    (str_keyed_copy)."""
    seen = set() if _seen is None else _seen
    seen.add(id(cls))
    for klass in _MRO(cls):
        if recorded.get(id(klass)) is klass or not _TYPE_FLAGS(klass) & _HEAP_TYPE:
            continue
        namespace = str_keyed_copy(_CLASS_DICT(klass))
        if namespace is None:
            return f"{_QUALNAME(klass)} holds a key that is not a str"
        for name, value in namespace.items():
            func, _ = _unwrap(value)
            kind = _type(func)
            if kind is _FUNCTION:
                nested_trusted = _seen is not None and is_trusted is not None and is_trusted(func.__code__)
                if not nested_trusted and not _own_function(func, own_code, is_trusted):
                    return f"{_QUALNAME(klass)}.{name} is not the tests' own code"
            elif _issubclass(kind, _TYPE) and (_issubclass(func, BaseException) or id(func) in seen):
                continue
            elif (_issubclass(kind, _TYPE) and _TYPE_FLAGS(func) & _HEAP_TYPE
                  and recorded.get(id(func)) is None
                  and not foreign_in_class(func, own_code, recorded, allowed, is_trusted, _callable, seen)):
                continue  # (a class of the test source's own, holding nothing foreign)
            elif _callable(func) and kind not in allowed and not (
                    is_trusted is not None and _genuine_mock(kind, is_trusted)):
                return f"{_QUALNAME(klass)}.{name} is a {_QUALNAME(kind)}"
    return None


def _own_function(func: types.FunctionType, own_code: CodeSet,
                  is_trusted: Callable[[types.CodeType], bool] | None) -> bool:
    """Whether `func` is a function of the test source's own, itself or behind trusted wrappers that
    name it `__wrapped__` (functools.wraps: mock.patch, unittest.skip). Read through function
    descriptors and the functions' own dicts, never an attribute lookup a class could answer."""
    for _ in range(20):
        code = func.__code__
        if code in own_code:
            return True
        if is_trusted is None or not is_trusted(code):
            return False
        state = _FUNCTION_DICT(func)
        inner = state.get("__wrapped__") if _type(state) is _DICT else None
        if _type(inner) is not _FUNCTION:
            return False
        func = inner
    return False


def _foreign_warnings_filter(warnings_module, _type=type, _tuple=tuple, _list=list, _str=str, _int=int,
                             _len=len, _pattern=re.Pattern, _class=type) -> str | None:
    """What in `warnings.filters` is not what `warnings.filterwarnings` makes: each entry a tuple of an
    action (str), a message and a module pattern (a compiled pattern, None, or a str the interpreter's
    defaults compare as it is), a category (a class whose metaclass is `type`) and a line number (int).
    The interpreter's warnings code calls the patterns' `match` and the category's subclass check
    whenever any code warns, the tests' too: an
    entry of the program's made of C callables only (a `functools.partial` of `list.__setitem__` as a
    pattern's `match`) rewrote a checked value when `assertEquals` warned, with none of its Python code
    run (red-team round 30). What it calls are its defaults, taken at import."""
    if warnings_module is None:
        return None
    filters = _type(warnings_module).__dict__["__dict__"].__get__(warnings_module).get("filters")
    if _type(filters) is not _list:
        return "warnings.filters is not a list"
    for entry in _list(filters):
        if _type(entry) is not _tuple or _len(entry) != 5:
            return "warnings.filters holds an entry that warnings did not make"
        action, message, category, module, lineno = entry
        if (_type(action) is not _str or _type(lineno) is not _int or _type(category) is not _class
                or not (message is None or _type(message) is _pattern or _type(message) is _str)
                or not (module is None or _type(module) is _pattern or _type(module) is _str)):
            return "warnings.filters holds an entry that warnings did not make"
    return None


def str_keyed_copy(namespace, _all_str=all_exact_str) -> dict | None:
    """A copy of a dict or a class's mappingproxy, made in C (no key's `__hash__` or `__eq__` runs), or
    None when a key is not an exact str (all_exact_str). What it calls are its defaults, taken at
    import: the program may rebind the module's."""
    copy = namespace.copy()
    return copy if _all_str(copy) else None


def _shared_objects() -> list[tuple[str, Callable[[], object]]]:
    """Objects of the process that tests use without holding them in a binding: the streams
    `sys.stdout`/`sys.stderr` are now (a test's own StringIO while it captures output) and the
    generator behind `random`'s functions; each read anew at every check."""
    sys_module, found = sys, []
    found.append(("sys.stdout", lambda: sys_module.stdout))
    found.append(("sys.stderr", lambda: sys_module.stderr))
    generator = getattr(sys.modules.get("random"), "_inst", None)
    if generator is not None:
        found.append(("random._inst", lambda: generator))
    # What `datetime.strptime` builds its patterns with, rebuilt by _strptime when the locale or time
    # zone changes: `pattern` set on it to `"(?s:.*)".format` parsed anything (round 54).
    strptime = getattr(sys.modules.get("_strptime"), "__dict__", {})
    found.append(("_strptime._TimeRE_cache", lambda: strptime.get("_TimeRE_cache")))
    return found


# Objects the standard library shares among all its callers, whose state decides what they answer:
# json's default encoder and decoder (their separators set to the program's format made the test's own
# `json.dumps(expected)` match it) and copy's and copyreg's type dispatch tables (`deepcopy` of a list
# made the identity: a test's copy of its input mutated with it; round 54). Kept as recorded, but for
# entries a table may gain (the third field): for a class of the program's (`copyreg.pickle(MyClass,
# reduce)`), and in copyreg's also a trusted reducer (numpy registers its ufuncs' when imported).
_NOTHING, _PROGRAM_CLASSES = frozenset(), frozenset({"program classes"})
FROZEN_STATE = (("json", "_default_encoder", _NOTHING), ("json", "_default_decoder", _NOTHING),
                # Tables a library builds every result from (round 58d: `\\d` made to match anything,
                # `NaN` parsed as 5): data in a dict, so no binding changes.
                ("json.decoder", "_CONSTANTS", _NOTHING), ("re._parser", "CATEGORIES", _NOTHING),
                ("re._parser", "ESCAPES", _NOTHING),
                ("copy", "_deepcopy_dispatch", _PROGRAM_CLASSES),
                ("copy", "_copy_dispatch", _PROGRAM_CLASSES),
                ("copyreg", "dispatch_table", _PROGRAM_CLASSES | {"trusted reducers"}),
                ("copy", "dispatch_table", _PROGRAM_CLASSES | {"trusted reducers"}))  # (copyreg's, by name)


def _frozen_state() -> list[tuple]:
    """(label, the module's namespace, the name, the object bound there, its live state, a copy of that,
    what it may gain, the modules loaded now) for FROZEN_STATE: the state is a dict itself, or an
    object's `__dict__`. The binding is kept too: json looks its encoder up by name at each call, and
    a program bound another there (round 55). A trusted reducer may be added for a type of a module
    loaded after the record only: one for `set` made `deepcopy` of sets the identity (round 55)."""
    found, loaded = [], frozenset(sys.modules)
    for module, name, may_gain in FROZEN_STATE:
        space = getattr(sys.modules.get(module), "__dict__", None)
        value = space.get(name) if _type(space) is _DICT else None
        if value is None:
            continue
        state = value if _type(value) is _DICT else _object_getattribute(value, "__dict__")
        found.append((f"{module}.{name}", space, name, value, state, dict(state), may_gain, loaded))
    return found


# Tables whose items every caller's result is made of: `_strptime._TimeRE_cache`, whose values are
# pasted into every format's pattern (one set to match anything parsed every string; round 55). Where
# the one bound is not the one recorded, or its items are not, the checks in the tests' thread put the
# recorded one back with its recorded items (where _strptime had rebuilt it for a new time zone or
# locale, it sees that and rebuilds it again at its next use).
RESTORED_TABLES = (("_strptime", "_TimeRE_cache"), ("pandas._libs.tslibs.strptime", "_TimeRE_cache"))
# lru_caches of the standard library holding patterns `re` compiled for their callers (fnmatch's and
# pathlib's glob patterns): emptied with LIBRARY_CACHES, since a pattern planted in `re._cache` during
# the program's load reached them when the program globbed there (round 54).
LRU_CACHES = (("fnmatch", "_compile_pattern"), ("pathlib", "_make_selector"))
# (Not dateutil's `gettz`, whose time zones by name a program can plant too (UTC for New York passed,
# round 55): emptied, the test's zone was another object than the program's, and Python compares
# datetimes of two zone objects in the hour a clock goes back as unequal, round 56.)


def _unlike_a_tests_patch(value: object, is_trusted: Callable[[types.CodeType], bool]) -> bool:
    """Whether a rebound builtin's new value is neither a genuine unittest.mock object nor a trusted
    Python function (what tests put there), or is the program's."""
    if program_made(value, is_trusted):
        return True
    kind = _type(value)
    if kind is _FUNCTION:
        return False  # trusted (program_made above)
    return not _genuine_mock(kind, is_trusted)


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
        if _id(kind) in _HOLDER_READ:  # (by id: see returned_values._ids)
            todo.append(_HOLDER_READ[_id(kind)](item))
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

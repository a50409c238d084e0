"""Layer 1 of the in-process guard: an audit hook (PEP 578) that refuses frames, gc walks, trace and
profile hooks, ctypes and code-making to the candidate's code, and to trusted code asking on its behalf.

See the package docstring for the threat model.
"""

from __future__ import annotations

import builtins
import gc
import importlib
import inspect
import keyword
import logging
import os
import sys
import sysconfig
import traceback
import types
from collections.abc import Callable, Iterable

from coding_framework.sandbox.in_process_guard import generated_code
from coding_framework.sandbox.in_process_guard.thread_states import scanning as _scanning_contexts

# Events refused when the candidate's code asks (prefix "ctypes." covers every ctypes event).
GUARDED_EVENTS = frozenset({
    "sys._getframe", "sys._current_frames", "sys._current_exceptions", "sys.settrace", "sys.setprofile",
    "sys.addaudithook", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
    "object.__getattr__", "object.__setattr__", "object.__delattr__",
    "compile", "exec", "marshal.loads", "marshal.load", "code.__new__", "function.__new__", "import",
})
# Refused whenever the candidate's code is anywhere on the stack, whoever asks: a correct program needs
# none of them, and trusted code can ask on its behalf (a subclass of profile.Profile or bdb.Bdb gets
# every frame of the program's callers; a gc walk finds everything).
STACK_WIDE_EVENTS = frozenset({
    "sys._current_frames", "sys._current_exceptions", "sys.settrace", "sys.setprofile", "sys.addaudithook",
    "gc.get_objects", "gc.get_referrers", "gc.get_referents",
})
# Attribute writes (audited as object.__setattr__/__delattr__) that change what a function runs or
# what class an object is: `assertEqual.__code__ = no-op code`, `numpy.__class__ = a module class
# answering every attribute`. Trusted code must name them to set them while the program is on the
# stack (other audited writes, `__qualname__` by functools.wraps, pass).
REWIRING_ATTRIBUTES = frozenset({"__code__", "__defaults__", "__kwdefaults__", "__class__", "__bases__"})
_ATTRIBUTE_WRITES = frozenset({"object.__setattr__", "object.__delattr__"})
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
                        "operator", "copy", "copyreg", "pickle", "asyncio.base_tasks",
                        # Debuggers and a console that read frames and hand them, or their locals, to
                        # whoever called (`bdb.Bdb().get_stack(None, tb)`, `pdb.Pdb().setup`,
                        # rich's `Console._caller_frame_info(n)`: found by the red-team, 2026-11-26).
                        "bdb", "pdb", "doctest", "rich.console",
                        # Round 8, the same: idlelib's stack viewer, pytest's traceback wrappers,
                        # numpy.distutils' get_frame, pydantic's parent-frame fetch. More such
                        # readers exist in site-packages: see the package README ("not closed").
                        "idlelib.stackviewer", "_pytest._code.code", "numpy.distutils.misc_util",
                        "pydantic.type_adapter")
# Pass-through modules whose import changes the process (numpy.distutils' brings setuptools' distutils,
# which gives the root logger a class that drops every record, handlers printing to stdout, warnings
# filters and a sys.path entry: red-team round 18): their files are found without importing them.
LOCATED_ONLY = frozenset({"numpy.distutils.misc_util"})
# What install_audit_hook imports: the pass-through modules (so that their own import-time code never
# runs under the hook with the importer as the asker). ~130 ms with pydantic, rich, pytest and idlelib
# installed: a process forking many guarded children imports them once, before the first fork
# (suite_runner.UNITTEST_PRELOAD).
IMPORTED_AT_INSTALL = tuple(name for name in PASS_THROUGH_MODULES if name not in LOCATED_ONLY)
IMPORT_MACHINERY = ("<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>")
# The file names of trusted code under the trusted roots (a module loaded from a .pyc still names its
# .py). Only Python sources: pandas' Styler and to_latex render jinja2 templates, compiled under the
# template's own file name, which was refused as code claiming a trusted file (red-team round 18).
TRUSTED_SUFFIX = ".py"
# Trusted modules whose functions call into native libraries through ctypes without naming anything
# of it (`getattr(self.dynlib, "openblas_get_num_threads")()`): threadpoolctl, which scikit-learn's
# KMeans runs every fit under (red-team round 16: every KMeans fit was an error). Their ctypes events
# are theirs to ask for; a program handing them objects of its own reaches no more than numpy's raw
# memory gives it already (see the package README).
CTYPES_USERS = ("threadpoolctl",)
# Refused in the harness's own thread (install_audit_hook's `main_thread`), whoever asks: whatever runs
# there (a finalizer of the program's that a collection there set off, a C callable of the program's
# such as `partial(sys._getframe)` run as one) would get the harness's frames, which hold the key.
HARNESS_THREAD_EVENTS = frozenset({
    "sys._getframe", "sys._current_frames", "sys._current_exceptions", "sys.settrace", "sys.setprofile",
    "sys.addaudithook", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
})
FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})


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


class CodeSet:
    """Code objects, by identity. Code objects compare equal when their bytecode, constants, names and
    first line are, whatever file they come from: a function of the program's written as a test method
    is, at that method's line, equal to it (and was trusted as the tests' own code: red-team round 10).
    Holds the objects, so that no id is reused while they are in it."""

    __slots__ = ("by_id",)

    def __init__(self, codes: Iterable[types.CodeType] = ()) -> None:
        self.by_id: dict[int, types.CodeType] = {}
        self.update(codes)

    def __contains__(self, code: object) -> bool:
        return self.by_id.get(id(code)) is code

    def __iter__(self):
        return iter(list(self.by_id.values()))

    def __len__(self) -> int:
        return len(self.by_id)

    def update(self, codes: Iterable[types.CodeType]) -> None:
        for code in codes:
            self.by_id[id(code)] = code


def code_objects(code: types.CodeType) -> CodeSet:
    """`code` and every code object nested in its constants (functions, classes, comprehensions)."""
    found, todo = CodeSet(), [code]
    while todo:
        item = todo.pop()
        found.update((item,))
        todo.extend(c for c in item.co_consts if isinstance(c, types.CodeType) and c not in found)
    return found


def make_trust(roots: tuple[str, ...], trusted_code: CodeSet) -> Callable[[types.CodeType], bool]:
    """Whether a code object is trusted: compiled by the harness (`trusted_code`, by identity), part of
    the sandbox's own package (HARNESS_PACKAGE, whose files the sandbox does not show), or equal to
    code that the import system makes from a Python source file (`.py`) under one of `roots` or from
    a module frozen into the interpreter, the one the code names.

    Equal (`==` of code objects: bytecode, constants, names, line table; not the file name), not just
    named so: a code object's file name is no proof of where it came from. importlib's own helpers
    compile or unmarshal what they are handed under any name (`source_to_code`, `_compile_bytecode`),
    and `_imp._fix_co_filename` renames a code object in place (red-team round 19: an always-equal
    `__eq__` renamed to `os.py` passed). Each code object is compared once (then kept by identity);
    each file's code is read once, from its cached bytecode when that matches the source, as the
    import system reads it. Code libraries compile from other files there (jinja2's, from pandas'
    `.tpl` templates) is not trusted: its text is whatever the template engine was given. Nor is other
    code compiled from a string, with two exceptions, each trusted when equal to what its generator
    compiles for the same names (generated_code): the comparison, hash, repr and frozen-attribute methods
    `dataclasses` writes for a class (werkzeug's routing rules, a Flask app holds them), and the
    functions of SciPy's tuple-like result classes (`TtestResult`, `KstestResult`, ...: programs return
    them, and a test compares them with its own).

    Everything the returned function calls is held here: it runs while the program can rebind
    builtins and this module's names (and put them back before any check sees them)."""
    import importlib.util
    import io
    import marshal

    starts, ends, frozen, by_id = str.startswith, str.endswith, "<frozen ", trusted_code.by_id
    suffix = TRUSTED_SUFFIX
    type_, id_, len_, int_, str_ = builtins.type, builtins.id, builtins.len, builtins.int, builtins.str
    code_type, stat, open_, compile_ = types.CodeType, os.stat, io.open, builtins.compile
    coroutine_flag, range_ = _ITERABLE_COROUTINE, builtins.range
    tuple_, next_, all_, any_ = builtins.tuple, builtins.next, builtins.all, builtins.any
    is_identifier, is_keyword = str.isidentifier, keyword.iskeyword
    dataclass_text, dataclass_methods = generated_code.dataclass_method_text, generated_code.DATACLASS_METHODS
    bunch_text, bunch_methods = generated_code.bunch_text, generated_code.BUNCH_METHODS
    namedtuple_text = generated_code.namedtuple_new_text
    loads, from_bytes = marshal.loads, int.from_bytes
    magic = importlib.util.MAGIC_NUMBER
    # Where the import system caches a source's bytecode (importlib.util.cache_from_source, written again
    # with what it reads taken now: that function is Python reading globals the program can rebind,
    # sys.pycache_prefix and importlib's own, and it ran inside the busy hook, red-team round 62c). A
    # cache prefix is not followed: the source is compiled instead.
    tag = sys.implementation.cache_tag
    optimization = sys.flags.optimize
    cache_suffix = f".{tag}{'' if optimization == 0 else f'.opt-{optimization}'}.pyc" if tag else ""

    def cached_at(path: str) -> str:  # (`path`: an exact str ending in .py)
        head, _, tail = path.rpartition("/")
        return head + "/__pycache__/" + tail[:-3] + cache_suffix if cache_suffix else ""
    get_frozen, is_frozen, aliases = _imp.get_frozen_object, _imp.is_frozen, dict(_FROZEN_ALIASES)
    unreadable = (OSError, ValueError, SyntaxError, MemoryError, EOFError, TypeError, RecursionError,
                  NotImplementedError, ImportError)
    verified = dict(_harness_code().by_id)  # id -> code: found equal to its file's, or the harness's
    not_generated: dict[int, types.CodeType] = {}  # id -> code from a string found to be no generator's
    by_origin: dict[str, dict] = {}  # file or "<frozen name>" -> {(name, first line): [code]}

    def index(code) -> dict:
        found: dict = {}
        todo = [code] if type_(code) is code_type else []
        while todo:
            item = todo.pop()
            found.setdefault((item.co_name, item.co_firstlineno), []).append(item)
            todo.extend(const for const in item.co_consts if type_(const) is code_type)
        return found

    def module_code(path: str):
        """The module code the import system runs for the source at `path`: its cached bytecode when
        the header says it was made from this source (size and mtime, or a hash-based file), else the
        source compiled as importlib compiles it (under a name outside the roots: equality ignores
        file names); None where neither can be read."""
        try:
            source_stat = stat(path)
            try:
                with open_(cached_at(path), "rb") as fh:
                    data = fh.read()
            except unreadable:
                data = b""
            if len_(data) > 16 and data[:4] == magic:
                flags, mtime, size = (from_bytes(data[at:at + 4], "little") for at in (4, 8, 12))
                if flags & 1 or (flags == 0 and mtime == int_(source_stat.st_mtime) & 0xFFFFFFFF
                                 and size == source_stat.st_size & 0xFFFFFFFF):
                    code = loads(data[16:])
                    if type_(code) is code_type:
                        return code
            with open_(path, "rb") as fh:
                return compile_(fh.read(), "<trusted source>", "exec", dont_inherit=True)
        except unreadable:
            return None

    def made_from(name: str) -> dict:
        found = by_origin.get(name)
        if found is None:
            if starts(name, frozen):
                module = name[8:-1]
                module = aliases.get(module, module)
                try:
                    found = index(get_frozen(module) if is_frozen(module) else None)
                except unreadable:
                    found = {}
            else:
                found = index(module_code(name))
            by_origin[name] = found
        return found

    def names_ok(names) -> bool:
        return all_(type_(n) is str_ and is_identifier(n) and not is_keyword(n) for n in names)

    def compiled_from(text, code, depth: int) -> bool:
        """Whether `code` is equal to a function of its name that `text` compiles to, `depth` levels of
        nested code down (1: defined at the text's top level)."""
        if text is None:
            return False
        try:
            found = [compile_(text, "<string>", "exec", dont_inherit=True)]
        except unreadable:
            return False
        for _ in range_(depth):
            found = [c for outer in found for c in outer.co_consts if type_(c) is code_type]
        return any_(c.co_name == code.co_name and c == code for c in found)

    def generated(code) -> bool:
        """Whether `code`, compiled from a string, is what a known code generator (generated_code)
        writes for the names it carries: a method of `dataclasses` (inside its `__create_fn__`; the
        fields are the method's attribute names, or the frozen methods' tuple of names), a
        namedtuple's `__new__` (its arguments after the class), or a function of SciPy's result
        classes (the fields are `__new__`'s and `__init__`'s arguments, or `__setattr__`'s tuple of
        names)."""
        name, qualname = code.co_name, code.co_qualname
        if type_(name) is not str_ or type_(qualname) is not str_:
            return False
        if qualname == "__create_fn__.<locals>." + name and name in dataclass_methods:
            if name in ("__setattr__", "__delattr__"):
                fields = next_((const for const in code.co_consts if type_(const) is tuple_), ())
            else:
                fields = tuple_(n for n in code.co_names
                                if n not in ("__class__", "NotImplemented", "hash", "__qualname__"))
            return names_ok(fields) and compiled_from(dataclass_text(name, fields), code, 2)
        if name == "<lambda>" and qualname == name and code.co_varnames[:1] == ("_cls",):
            # (namedtuple's `__new__`: the fields are the lambda's arguments after the class)
            fields = tuple_(code.co_varnames[1:code.co_argcount])
            return names_ok(fields) and compiled_from(namedtuple_text(fields), code, 1)
        if qualname == name and name in bunch_methods:
            if name == "__setattr__":
                fields = next_((const for const in code.co_consts if type_(const) is tuple_), ())
            else:
                fields = tuple_(code.co_varnames[1:code.co_argcount])
            return names_ok(fields) and compiled_from(bunch_text(fields), code, 1)
        return False

    def is_trusted(code: types.CodeType) -> bool:
        key = id_(code)
        if by_id.get(key) is code or verified.get(key) is code:
            return True
        if type_(code) is not code_type:
            return False
        name = code.co_filename
        if type_(name) is not str_:
            return False
        if name == "<string>":
            if not_generated.get(key) is code:
                return False
            if generated(code):
                verified[key] = code
                return True
            not_generated[key] = code  # (held, so that its id stays its own)
            return False
        if not (starts(name, frozen) or (starts(name, roots) and ends(name, suffix))):
            return False
        for candidate in made_from(name).get((code.co_name, code.co_firstlineno), ()):
            # (code_richcompare, in C: both are exact code objects.) `types.coroutine` marks a
            # generator function's code as an iterable coroutine (asyncio's `sleep(0)`): only that
            # flag may differ.
            flags = candidate.co_flags
            if candidate == code or (code.co_flags & coroutine_flag and not flags & coroutine_flag
                                     and candidate.replace(co_flags=flags | coroutine_flag) == code):
                verified[key] = code
                return True
        return False

    return is_trusted


_ITERABLE_COROUTINE = 0x100  # CO_ITERABLE_COROUTINE, set by types.coroutine


# The names frozen modules are found under, where their code names another
# (`<frozen importlib._bootstrap>`).
_FROZEN_ALIASES = {"importlib._bootstrap": "_frozen_importlib",
                   "importlib._bootstrap_external": "_frozen_importlib_external"}
# The sandbox's own package: its files are not in the sandbox's view (the zygote pivots away from
# them), so its code is trusted by identity, as loaded before any program runs.
HARNESS_PACKAGE = "coding_framework.sandbox"


def _harness_code() -> CodeSet:
    """Every code object of the loaded modules of HARNESS_PACKAGE: their functions, their classes'
    methods (and properties, class and static methods), and everything nested in those."""
    found = CodeSet()
    for name, module in list(sys.modules.items()):
        if name != HARNESS_PACKAGE and not name.startswith(HARNESS_PACKAGE + "."):
            continue
        todo = list(vars(module).values()) if issubclass(type(module), types.ModuleType) else []
        seen: set[int] = set()
        while todo:
            value = todo.pop()
            if id(value) in seen:
                continue
            seen.add(id(value))
            if isinstance(value, types.FunctionType):
                found.update(code_objects(value.__code__))
            elif isinstance(value, staticmethod | classmethod):
                todo.append(value.__func__)
            elif isinstance(value, property):
                todo.extend((value.fget, value.fset, value.fdel))
            elif isinstance(value, type) and value.__module__ == name:
                todo.extend(type.__dict__["__dict__"].__get__(value).values())
    return found


import _imp  # noqa: E402  (its functions are held by make_trust)


def install_audit_hook(
    roots: tuple[str, ...], trusted_code: CodeSet, main_thread: int | None = None,
    trace: Callable | None = None, profile_setters: tuple[types.CodeType, ...] = (),
    tests_entry: types.CodeType | None = None,
) -> Callable[[], dict]:
    """Refuse GUARDED_EVENTS to the candidate's code for the rest of this process's life.

    With `main_thread` (the harness's thread, where the program never runs: suite_runner), every
    HARNESS_THREAD_EVENTS and frame attribute read there is refused, whoever asks, except one
    `sys._current_frames()` per call of the function returned, which the harness alone holds (it reads
    the stack of the thread running the tests with it). Without, the function returned refuses.
    `trace`, if given, becomes this thread's trace function (sys.settrace) last thing before the hook
    is added (which then refuses setting another), after every import this set-up makes.
    `profile_setters`: code objects of the harness's whose own frames (not the harness's thread) may
    set and remove a profile function: the watch of outside_calls, which its C functions set when these
    call them; the program cannot run code as one of them. The one gc walk let through outside the
    harness's thread is thread_states.live_contexts' (C, handing out contexts only), while its own
    `scanning()` says it runs in the asking thread. `tests_entry`: the code the tests' thread starts in
    (suite_runner). The code objects of the functions of `trusted_code` (the test source's) at its top
    level and in its classes, whose constants are the expected values (`dis.get_instructions` of a
    test method listed them to the program, red-team round 62), are then read only by trusted code
    with nothing else under it, in that thread or the harness's.

    Who asks: the first frame that is neither a FRAME_HELPER nor in a pass-through module. When that
    frame is trusted it must also name what it asks for (`_getframe`, the helper it called, the
    attribute it read, something of ctypes); trusted code that does not (`heapq.nsmallest` iterating
    `traceback.walk_stack`, `functools.partial(sys._getframe)` called by library code) works for
    someone else, and is refused while the candidate's code is on the stack, as are
    STACK_WIDE_EVENTS whoever asks.

    The hook decides trust with its own copy of `trusted_code` and its own closure, reachable from
    nothing the candidate can reach, so rewriting the cells of a reachable harness closure cannot widen
    it. Code compiled from a string is trusted only where make_trust finds it equal to what a known
    generator writes for its names (generated_code): not for the frame that compiled it (red-team round
    62c: the program had dataclasses' `_create_fn` compile an always-equal `__eq__` of its own, which was
    trusted as the generator's). A dataclass's `__init__`, whose text holds no fixed shape, is
    therefore not trusted: construction, which the value walk does not hold against a class, and which
    guard_class guards.

    While the hook works, every event its own work raises passes, except the heap and stack walks,
    which it never makes; and it runs no code the program can steer: no library Python reading
    rebindable globals, no truth test, `str()` or `isinstance` of what an event or a frame hands it
    (round 62c found all four)."""
    own_code = CodeSet(trusted_code)
    is_trusted = make_trust(roots, own_code)
    # (by identity, as everywhere code objects are looked up here: see CodeSet)
    helper_names = {id(f.__code__): (f.__code__, name) for name, functions in FRAME_HELPERS.items()
                    for f in functions}
    # Imported now unless already (IMPORTED_AT_INSTALL); those imported elsewhere for their effects only
    # found (LOCATED_ONLY).
    pass_files = frozenset(filter(None, (
        _module_file(name) if name in LOCATED_ONLY else getattr(sys.modules.get(name) or _try_import(name),
                                                                 "__file__", None)
        for name in PASS_THROUGH_MODULES)))
    ctypes_module = sys.modules.get("ctypes") or _try_import("ctypes")
    # (With the methods of ctypes types that map an existing buffer: multiprocessing's shared values
    # are rebuilt with `type_.from_buffer(...)`, which names nothing else of ctypes.)
    ctypes_names = frozenset({"ctypes", "from_buffer", "from_buffer_copy"}
                             | {n for n in dir(ctypes_module or object()) if n[:2] != "__"})
    ctypes_users = frozenset(filter(None, map(_module_file, CTYPES_USERS)))
    traceback_file = traceback.__file__
    getframe, get_ident, starts = sys._getframe, _thread_ident(), str.startswith
    scanning_contexts = _scanning_contexts  # (C: whether live_contexts runs in this thread)
    collecting, collector_off, collector_on = gc.isenabled, gc.disable, gc.enable
    ends, trusted_suffix = str.endswith, TRUSTED_SUFFIX
    import_machinery, busy, stack_wide = IMPORT_MACHINERY, set(), STACK_WIDE_EVENTS
    # Builtins it uses, held here: the candidate may rebind them in the builtins module.
    len_, str_, error = builtins.len, builtins.str, builtins.RuntimeError
    issubclass_, id_, any_ = builtins.issubclass, builtins.id, builtins.any
    type_, module_type = builtins.type, types.ModuleType
    module_namespace = types.ModuleType.__dict__["__dict__"].__get__

    def filename_of(code) -> str:
        """A code object's file name where it is an exact str (one compiled under a str subclass's
        name hashed and compared as the program chose, in the hook's busy window: red-team round 61d);
        else a name no file has."""
        name = code.co_filename
        return name if type_(name) is str_ else "<a file name that is not a str>"

    def asker(frame):
        """(the frame on whose behalf an event happens, name of the helper it called or None): the
        caller of any helper and pass-through frames."""
        helper = None
        while frame is not None:
            code = frame.f_code
            known = helper_names.get(id_(code))
            if known is not None and known[0] is code:
                helper = known[1]
            elif filename_of(code) not in pass_files:
                return frame, helper
            frame = frame.f_back
        return None, helper

    def caller_of_candidate(frame, wanted) -> bool:
        """Whether a frame of the candidate lies between `frame` (the asking one) and `wanted`."""
        while frame is not None and frame is not wanted:
            if not is_trusted(frame.f_code):
                return True
            frame = frame.f_back
        return False

    def candidate_on_stack(frame) -> bool:
        if main_thread is not None:
            # A unittest child: every thread but the harness's is the program's, or runs it (a pool
            # worker's stack holds only threading's code, and it ran `sys._current_frames` for the
            # program: red-team round 10). The harness's own thread is locked down apart (see hook).
            return True
        while frame is not None:
            if not is_trusted(frame.f_code):
                return True
            frame = frame.f_back
        return False

    def importing(frame, namespace: dict) -> bool:
        """Whether the trusted top-level code of the module whose namespace is `namespace` is running
        (on the stack from `frame` down), with only trusted code above it."""
        while frame is not None:
            code = frame.f_code
            if not is_trusted(code):
                return False
            if code.co_name == "<module>" and frame.f_globals is namespace:
                return True
            frame = frame.f_back
        return False

    def vouched(frame, event: str, args: tuple, helper: str | None) -> bool:
        """Whether a trusted asking frame asks for itself: its own code names what it asked for. In the
        traceback module (which iterates its own frame generators) it must only turn frames into
        summaries, without capturing their locals."""
        code = frame.f_code
        if filename_of(code) == traceback_file:
            while frame is not None and filename_of(frame.f_code) == traceback_file:
                captured = frame.f_locals.get("capture_locals")
                if captured is not None and captured is not False:  # (no truth test: it would run a
                    return False  # `__bool__` of the program's in the busy hook, red-team round 62c)
                frame = frame.f_back
            return True
        names = code.co_names
        if helper is not None:
            return helper in names
        if event == "sys._getframe":  # by name or alias (`_getframe`, `getframe`, `currentframe`)
            return any_(name.endswith(("getframe", "currentframe")) for name in names)
        if event == "object.__getattr__" or (event in _ATTRIBUTE_WRITES and args[1] in REWIRING_ATTRIBUTES):
            # (A trusted frame that does not name what it sets, `heapq` iterating `map(setattr, ...)`
            # or `functools.update_wrapper` told which attributes to copy, sets it for the program.)
            return args[1] in names or args[1] in code.co_consts
        if starts(event, "ctypes."):
            return filename_of(code) in ctypes_users or not ctypes_names.isdisjoint(names)
        return True

    def refuse(event: str, detail: str = "", args: tuple = ()) -> None:
        if starts(event, "object.") and len_(args) > 1 and type_(args[1]) is str_:
            detail = f" ({args[1]}){detail}"
        raise error(f"sandbox: {event}{detail} is not allowed to the program under test")

    guarded, guarded_attributes = GUARDED_EVENTS, GUARDED_ATTRIBUTES
    code_attributes = frozenset({"__code__", "gi_code", "cr_code", "ag_code"})
    harness_events, frame_attributes = HARNESS_THREAD_EVENTS, FRAME_ATTRIBUTES
    setters = {id_(code): code for code in profile_setters}  # (no CodeSet: its `in` reads builtins' id)
    # The test source's functions at its top level and in its classes (test methods, helpers), by id.
    # Not those defined within them (`<locals>`): a test hands those to the program to look into (a
    # task reporting functions' signatures).
    sources = {key: code for key, code in trusted_code.by_id.items() if "<locals>" not in code.co_qualname}
    # What a code attribute reads, through the C getters of the exact types that have one.
    code_getters = {id_(kind): kind.__dict__[name].__get__ for kind, name in (
        (types.FunctionType, "__code__"), (types.GeneratorType, "gi_code"), (types.CoroutineType, "cr_code"),
        (types.AsyncGeneratorType, "ag_code"))}

    def tests_source_read(obj) -> bool:
        """Whether reading `obj`'s code attribute gives a code object of the test source's."""
        getter = code_getters.get(id_(type_(obj)))
        if getter is None:
            return False
        code = getter(obj)  # (its own event passes: we are busy)
        return sources.get(id_(code)) is code

    def tests_reading(frame) -> bool:
        """Whether the harness's thread asks, or the tests' (its bottom frame runs `tests_entry`) with
        nothing but trusted code on its stack."""
        if get_ident() == main_thread:
            return True
        bottom = None
        while frame is not None:
            if not is_trusted(frame.f_code):
                return False
            bottom, frame = frame, frame.f_back
        return bottom is not None and bottom.f_code is tests_entry
    # One sys._current_frames() is let through in the harness's thread while this is True (see
    # harness_frames); a closure of the hook's own, which nothing outside this function reaches.
    allowed_once = [False]

    def hook(event: str, args: tuple) -> None:
        # Fast exits first: this runs for every audited operation in the process.
        if event not in guarded:
            if event[:7] != "ctypes.":
                return
        elif event == "object.__getattr__" and type_(args[1]) is str_ and args[1] not in guarded_attributes:
            return
        elif event == "import":
            # Native code runs below every check here: an extension module (the event names its file;
            # a Python import names none) loads only from the trusted directories, whoever asks.
            # (The type's own subclass test: isinstance would read a `__class__` the program chose.)
            if len_(args) > 1 and issubclass_(type_(args[1]), str_) and not starts(args[1], roots):
                refuse("loading native code", f" from {args[1]!r}")
            return
        me = get_ident()
        if me in busy:
            # Our own frame and attribute lookups below raise events too. None of our work walks the
            # heap or the threads' stacks: such an event here comes from code of the program's that
            # something we did ran (red-team rounds 61d, 62c), which must not get what it asks for.
            if event in stack_wide:
                refuse(event, " (while the audit hook works)")
            return
        if me == main_thread and (event in harness_events or starts(event, "ctypes.") or (
                event == "object.__getattr__"
                and (type_(args[1]) is not str_ or args[1] in frame_attributes))):
            if event == "sys._current_frames" and allowed_once[0]:
                allowed_once[0] = False
                return
            refuse(event, " (in the harness's thread)", args)
        # The collector is off while the hook works: a collection its own allocations set off ran a
        # finalizer of the program's, whose events the hook, busy in this thread, let through (a
        # gc.get_objects() that patched the running TestCase: red-team round 61c).
        was_collecting = collecting()
        collector_off()
        busy.add(me)
        try:
            if starts(event, "object.") and len_(args) > 1 and type_(args[1]) is not str_:
                # (An attribute named by a str subclass: hashed or compared below, it would run the
                # program's `__hash__` or `__eq__` while the hook is busy, round 61d's way in.)
                refuse(event, " of an attribute whose name is not a str")
            direct = getframe(1)
            reader = direct.f_code
            if event == "sys.setprofile" and setters.get(id_(reader)) is reader:
                return  # (outside_calls' watch, set or removed by the harness's own code: see above)
            if (event == "object.__getattr__" and args[1] in code_attributes and tests_entry is not None
                    and tests_source_read(args[0]) and not tests_reading(direct)):
                refuse(event, " of the tests' own code, whose constants are their expected values", args)
            if (event == "object.__getattr__" and args[1] in code_attributes and is_trusted(reader)
                    and filename_of(reader) not in pass_files
                    and (args[1] in reader.co_names or args[1] in reader.co_consts)):
                # Libraries read code objects all the time (signatures, decorators): a trusted reader
                # that names what it reads decides itself what to do with one (refused: the candidate
                # reading one, itself, through a pass-through module, or through a trusted frame
                # that does not name it, such as `heapq` iterating `map(getattr, ...)`).
                return
            if event in stack_wide:
                if event == "gc.get_objects" and scanning_contexts():
                    return  # (the value walk's search for contexts: see above)
                if candidate_on_stack(direct):
                    refuse(event, "", args)
                return
            if event == "sys._getframe" and len_(args) == 1 and caller_of_candidate(direct, args[0]):
                # A frame above the program's own is its callers' (the harness's, the tests'), whoever
                # asks: pandas' `pd.eval("name", level=n)` read a local of the harness for the program.
                refuse(event, " (a frame of the program's callers)", args)
            if (event == "object.__setattr__" and args[1] == "__class__"
                    and issubclass_(type_(args[0]), module_type)  # (isinstance: the object's __class__)
                    and candidate_on_stack(direct) and not importing(direct, module_namespace(args[0]))):
                # A module's class decides every attribute read of it (importlib's LazyLoader sets one
                # that runs a loader of the program's at the tests' next `math.isclose`), whoever asks;
                # except while that module's own trusted top-level code runs, importing it (torch's
                # config modules set their class so, through a helper of torch's).
                refuse(event, " of a module", args)
            frame, helper = asker(direct)
            if frame is not None and not is_trusted(frame.f_code):
                refuse(event, "", args)
            if frame is not None and not vouched(frame, event, args, helper) and candidate_on_stack(direct):
                refuse(event, " (asked by trusted code on the program's behalf)", args)
            # Code claiming a trusted file may only be made by the import system, from that file; code
            # named after another file there (a template) is made freely, since it is never trusted.
            # (A file name that is no exact str makes code no one trusts: is_trusted.)
            if (event == "compile" and len_(args) > 1 and type_(args[1]) is str_ and starts(args[1], roots)
                    and ends(args[1], trusted_suffix) and filename_of(direct.f_code) not in import_machinery):
                refuse(event, f" of code named {args[1]!r}")
            if event in ("marshal.loads", "marshal.load") and direct.f_code.co_name == "_compile_bytecode":
                # A .pyc without source keeps whatever file name it claims: only from trusted dirs.
                local = direct.f_locals
                path = local.get("bytecode_path")  # (no str(): a str subclass's __str__, round 62c)
                if local.get("source_path") is None and (type_(path) is not str_ or not starts(path, roots)):
                    refuse(event, " of bytecode from outside the trusted directories")
        finally:
            busy.discard(me)
            if was_collecting:
                collector_on()

    if trace is not None:
        sys.settrace(trace)
    sys.addaudithook(hook)
    current_frames = sys._current_frames

    def harness_frames() -> dict:
        """sys._current_frames(), in the harness's thread (the hook lets exactly this call through:
        the event is raised before the call makes anything a finalizer could run from)."""
        if get_ident() != main_thread:
            raise error("sandbox: harness_frames is for the harness's thread")
        allowed_once[0] = True
        try:
            return current_frames()
        finally:
            allowed_once[0] = False

    return harness_frames


def _module_file(name: str) -> str | None:
    """The file of module `name`: the loaded module's, or the one the path finder would load it from,
    found without importing it or its parent packages (importlib.util.find_spec imports the parents);
    None where there is none."""
    module = sys.modules.get(name)
    if module is not None:
        return getattr(module, "__file__", None)
    from importlib.machinery import PathFinder

    parts, search, spec = name.split("."), None, None
    for depth in range(1, len(parts) + 1):
        if depth > 1 and search is None:
            return None  # a parent that is no package
        try:
            spec = PathFinder.find_spec(".".join(parts[:depth]), search)
        except (ImportError, ValueError):
            return None
        if spec is None:
            return None
        search = spec.submodule_search_locations
    return spec.origin if spec.has_location else None


def _thread_ident() -> Callable[[], int]:
    import _thread

    return _thread.get_ident


def _try_import(name: str):
    try:
        return importlib.import_module(name)
    except Exception:
        return None

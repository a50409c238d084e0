"""Run-time defences for unittest jobs, where trusted tests and the candidate share one process.

Two layers, both set up by the child before the candidate's code first runs (see suite_runner):

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
   calling `sys._getframe`; library internals that read frames for their own use (logging's caller
   lookup, pandas' warning stack level, namedtuple's module name) are unaffected.
2. Bindings guard: the module and class attributes a test's verdict depends on (builtins, unittest,
   the harness and the modules the trusted test source imports, with their classes; later the test
   module and its classes) are recorded before the candidate runs and compared, by identity, after the
   program loads and after every test, before that test's outcome is reported. A rebound
   `np.testing.assert_array_equal`, `unittest.TestCase.run` or `builtins.len` makes the sample an error.
   Other modules are watched for rebound functions and classes only, which lazy initialisation in
   libraries does not do.

Not closed (documented in the package README): a patch that the candidate installs and removes again
within one test (e.g. a replaced assertion that restores the original when called) leaves no trace at
the test's end; nor can any of this stop code that gets hold of a frame through a third-party helper
this module does not know. Function-call jobs, where the candidate never shares a process with the
tests, are not exposed to either.
"""

from __future__ import annotations

import ast
import builtins
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
# Attribute reads (audited as object.__getattr__) that yield a frame or code object.
GUARDED_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "__code__", "gi_code",
                                "cr_code", "ag_code"})
# Standard-library functions that return a frame (or yield frames) to whoever called them.
FRAME_HELPERS = (
    inspect.currentframe, inspect.stack, inspect.trace, inspect.getouterframes, inspect.getinnerframes,
    traceback.walk_stack, traceback.walk_tb, logging.currentframe,
)
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


def install_audit_hook(is_trusted: Callable[[types.CodeType], bool], roots: tuple[str, ...]) -> None:
    """Refuse GUARDED_EVENTS to the candidate's code for the rest of this process's life."""
    helper_codes = frozenset(f.__code__ for f in FRAME_HELPERS)
    module_files = []
    for name in PASS_THROUGH_MODULES:
        module = sys.modules.get(name) or _try_import(name)
        if module is not None and getattr(module, "__file__", None):
            module_files.append(module.__file__)
    pass_files = frozenset(module_files)
    getframe, get_ident, starts = sys._getframe, _thread_ident(), str.startswith
    import_machinery, busy = IMPORT_MACHINERY, set()
    # Builtins it uses, held here: the candidate may rebind them in the builtins module.
    len_, isinstance_, str_, error = builtins.len, builtins.isinstance, builtins.str, builtins.RuntimeError

    def asker(frame):
        """The frame on whose behalf an event happens: the caller of any pass-through frames."""
        while frame is not None:
            code = frame.f_code
            if code not in helper_codes and code.co_filename not in pass_files:
                return frame
            frame = frame.f_back
        return None

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
            frame = asker(direct)
            if frame is not None and not is_trusted(frame.f_code):
                refuse(event, f" ({args[1]})" if starts(event, "object.") and len_(args) > 1 else "")
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


class Snapshot:
    """Bindings of some modules and of the classes they define, recorded to compare by identity."""

    def __init__(self) -> None:
        # (label, live namespace, copy, strict, is_class)
        self.entries: list[tuple[str, object, dict, bool, bool]] = []
        self.modules: list[tuple[str, types.ModuleType]] = []

    def add_module(self, name: str, module: types.ModuleType, *, strict: bool) -> None:
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            return
        self.modules.append((name, module))
        self.entries.append((name, namespace, dict(namespace), strict, False))
        for attr, value in list(namespace.items()):
            if isinstance(value, type) and getattr(value, "__module__", None) == name:
                self.entries.append((f"{name}.{attr}", value.__dict__, dict(value.__dict__), strict, True))


def record(strict_names: Iterable[str]) -> Snapshot:
    """Every loaded module (strict ones in full, the rest for functions and classes), and builtins."""
    strict = set(strict_names) | {"builtins"}
    snapshot = Snapshot()
    for name, module in list(sys.modules.items()):
        if isinstance(module, types.ModuleType):
            snapshot.add_module(name, module, strict=name in strict or _under(name, strict))
    return snapshot


def _under(name: str, roots: set[str]) -> bool:
    return any(name.startswith(root + ".") for root in roots)


def make_checker(
    snapshots: list[Snapshot], is_trusted: Callable[[types.CodeType], bool]
) -> Callable[[], list[str]]:
    """A function listing (up to MAX_FINDINGS) bindings that changed since the snapshots. It keeps its
    own references to everything it calls, so rebinding a builtin cannot blind it, and reads nothing
    the candidate's objects could answer with their own code.

    Strict namespaces: any rebinding, deletion or (in classes) addition counts, except lazy
    initialisation (a binding that was None, or a private non-callable one). Other modules: deleted
    or rebound functions and classes, unless the new value is a plain function loaded from trusted
    code (a library redefining its own function lazily)."""
    modules_now, limit, missing = sys.modules, MAX_FINDINGS, object()
    callable_, len_, type_, str_startswith = builtins.callable, builtins.len, builtins.type, str.startswith
    function = types.FunctionType
    entries = [e for s in snapshots for e in s.entries]
    loaded = [m for s in snapshots for m in s.modules]

    def changes() -> list[str]:
        found = []
        for name, module in loaded:
            if modules_now.get(name) is not module:
                found.append(f"sys.modules[{name!r}] was replaced or removed")
        for label, live, saved, strict, is_class in entries:
            if len_(found) >= limit:
                break
            for key, old in saved.items():
                new = live.get(key, missing)
                if new is old or old is None:  # unchanged, or lazy initialisation of a placeholder
                    continue
                if new is missing:
                    found.append(f"{label}.{key} was deleted")
                elif (strict and not (str_startswith(key, "_") and not callable_(old))) or (
                        callable_(old) and not (type_(new) is function and is_trusted(new.__code__))):
                    found.append(f"{label}.{key} was rebound")
            if strict and is_class:  # new class attributes shadow inherited ones
                found.extend(f"{label}.{k} was added" for k in [k for k in live if k not in saved][:limit])
        return found[:limit]

    return changes


def make_restorer(snapshots: list[Snapshot]) -> Callable[[], None]:
    """A function putting back every recorded module binding (not class attributes), so that the
    harness can still report what it found after the candidate rebound builtins or harness code."""
    modules = [(live, saved) for s in snapshots for _label, live, saved, _strict, is_class in s.entries
               if not is_class]
    update = dict.update

    def restore() -> None:
        for live, saved in modules:
            update(live, saved)

    return restore

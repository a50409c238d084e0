"""The program a HumanEval+ / MBPP+ sample runs as in the sandbox child, so that it sees what it sees in
evalplus's checker process.

evalplus (`evalplus/eval/__init__.py` `unsafe_execute`, `eval/utils.py`) runs a sample's code only after
its `reliability_guard` has disabled a fixed set of functions (file and process operations, `open`,
`exit`, a few modules), and with standard input replaced by a stream that raises on every read. Code
that uses those functions therefore fails there: `import resource`, `open(...)`, `os.system(...)`,
`os.getcwd()`, `subprocess.run(...)`, `sys.stdin.read()`. Our sandbox would let most of them run (in
isolation), so the child applies the same restrictions first: the verdicts then agree with evalplus's
on such code. This is not a security layer (the sandbox is): the candidate runs in its own disposable
child, so restricting it changes nothing outside that child.

One thing differs on purpose: in evalplus's process numpy, pandas, multiprocessing and everything its
command line imported are loaded before the guard, so a sample can import them although their own
import-time code calls disabled functions. Our child has not loaded them; instead the disabled names
are restored while any import statement runs (and disabled again after), so an imported library loads
as if it had been loaded before the guard. Calls made while the sample's own code runs see the
guard, as in evalplus.

MBPP+'s not-None tasks return objects that are not plain data (a `re.Match`); evalplus compares only
`out is not None` for them (a bool output is compared as is). Such a value cannot cross the sandbox
boundary, so for those tasks the child calls the entry point through an adapter that returns the bool
evalplus would compare; the trusted judge still does the comparison.
"""

from __future__ import annotations

NOT_NONE_ENTRY_POINTS = frozenset({"check_str", "text_match_three", "text_starta_endb"})
"""evalplus's MBPP_OUTPUT_NOT_NONE_TASKS."""
NOT_NONE_ADAPTER = "_cf_evalplus_not_none"
"""The entry point the judge calls for MBPP+'s not-None tasks."""
PRELOAD = ("shutil", "subprocess")
"""Modules the guard imports in every child (as evalplus's guard does); pools running these jobs
should preload them, or each sample pays their import (~20 ms)."""

# Names evalplus's reliability_guard sets to None (evalplus 0.3.1 and its current source agree).
_BUILTINS_DISABLED = ("exit", "quit", "open", "help")
_OS_DISABLED = (
    "kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid", "fork", "forkpty",
    "killpg", "rename", "renames", "truncate", "replace", "unlink", "fchmod", "fchown", "chmod", "chown",
    "chroot", "lchflags", "lchmod", "lchown", "getcwd", "chdir",
)  # fmt: skip
_SHUTIL_DISABLED = ("rmtree", "move", "chown")
_MODULES_DISABLED = ("ipdb", "joblib", "resource", "psutil", "tkinter")

_GUARD = f"""
def _cf_evalplus_guard():
    import builtins, io, os, shutil, subprocess, sys

    class _NoInput(io.StringIO):
        def read(self, *args, **kwargs):
            raise OSError("standard input is not readable")

        readline = readlines = read

        def readable(self):
            return False

    disabled = [(builtins, {_BUILTINS_DISABLED!r}), (os, {_OS_DISABLED!r}),
                (shutil, {_SHUTIL_DISABLED!r}), (subprocess, ("Popen",))]
    originals = [(owner, name, getattr(owner, name, None)) for owner, names in disabled for name in names]
    real_import = builtins.__import__
    depth = [0]

    def switch(on):
        for owner, name, value in originals:
            setattr(owner, name, None if on else value)

    def guarded_import(*args, **kwargs):
        depth[0] += 1
        if depth[0] == 1:
            switch(False)
        try:
            return real_import(*args, **kwargs)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                switch(True)

    switch(True)
    builtins.__import__ = guarded_import
    for name in {_MODULES_DISABLED!r}:
        sys.modules[name] = None
    sys.stdin = _NoInput()


_cf_evalplus_guard()
del _cf_evalplus_guard
"""

_NOT_NONE = """

if {entry!r} not in globals():
    raise NameError("name {entry!r} is not defined by the program")


def {adapter}(*args):
    out = {entry}(*args)
    return out if type(out) is bool else out is not None
"""


def guarded_program(program: str, dataset: str, entry_point: str) -> tuple[str, str]:
    """`(source, entry point)` the sandbox child should run for a sample whose code is `program`.

    The sample's code is compiled on its own under the name `<candidate>` (its line numbers, `from
    __future__` imports and syntax errors read as before) and runs in the child's namespace after the
    guard.
    """
    source = _GUARD + f"\nexec(compile({program!r}, '<candidate>', 'exec'), globals())\n"
    if dataset == "mbpp" and entry_point in NOT_NONE_ENTRY_POINTS:
        return source + _NOT_NONE.format(entry=entry_point, adapter=NOT_NONE_ADAPTER), NOT_NONE_ADAPTER
    return source, entry_point

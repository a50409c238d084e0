"""The trusted side of unittest jobs: static checks, expected ids, canary, report verification.

See suite_runner for the threat model of running tests inside the sandbox.
"""

from __future__ import annotations

import ast
import hmac
import re
import secrets
import time

from coding_framework.sandbox import plain_data
from coding_framework.sandbox.child import UNITTEST
from coding_framework.sandbox.limits import Limits
from coding_framework.sandbox.session import Stop
from coding_framework.sandbox.suite_runner import HARNESS_THREAD_EXIT, KEY_BYTES, mac
from coding_framework.sandbox.verdict import Status

# Names, attributes or imports by which a program could reach or fake the harness. A first, cheap
# filter: names built at run time get past it, and the run-time guard (in_process_guard) stands behind
# it. Names that correct programs use and whose dangerous uses the guard refuses anyway (`inspect`,
# `importlib`, `__import__`, `__dict__`, `vars`, `globals`) are not on it.
FORBIDDEN_NAMES = frozenset({
    "unittest", "TestCase", "TestResult", "TextTestResult", "TestSuite", "TestLoader", "_getframe",
    "f_back", "f_globals", "f_locals", "f_builtins", "tb_frame", "gi_frame", "cr_frame", "ag_frame",
    "gc", "ctypes", "builtins", "__builtins__", "atexit", "excepthook", "settrace",
    "setprofile", "dup2", "modules", "__subclasses__", "__globals__", "__closure__",
    "cell_contents", "suite_runner", "coding_framework", "_current_frames", "faulthandler",
    "tracemalloc", "pdb", "bdb", "sys_modules", "__code__",
})
# Not on it (red-team round 52 measured honest programs refused for them): `os._exit`, the way a forked
# child ends (no verdict comes from the exit status: a program ending itself before the harness's
# last report is an error), and `modules` read as an attribute (`name in sys.modules`, torch's
# `model.modules()`): the bindings guard compares every sys.modules entry the tests import.
READABLE_ATTRIBUTES = frozenset({"modules"})
# Called by bare name, these run code the static check cannot see (the run-time guard refuses making
# code to the program whatever the name: these give the common case an early, clear verdict).
FORBIDDEN_CALLS = frozenset({"exec", "eval", "compile", "breakpoint", "open_code"})
# Names that reach a module (or sys.modules) as a bare name only where the program bound them so, and
# an import of the module is flagged itself: a bare `gc` or `modules` the program bound by assignment,
# argument or definition is its own variable (a GC-content count, a dict of module names; round 52).
# So is one of the FORBIDDEN_CALLS the program binds: `from re import compile` binds re's.
MODULE_NAMES = frozenset({"gc", "modules", "sys_modules", "ctypes", "builtins", "atexit", "faulthandler",
                          "tracemalloc", "pdb", "bdb", "unittest", "suite_runner", "coding_framework"})
FORBIDDEN_STRINGS = ("/proc/self", "/proc/1", "/dev/fd", "unittest", "coding_framework")


# The trusted side builds the program's syntax tree (the static check, the main blocks), outside any
# sample's limits: at worst ~600 bytes of the judge's memory and 2 µs per character of source (`x=1`
# repeated: 155 MB and 0.5 s for 256 KiB; red-team round 58b had 740 MB from a 1.2 MB program). Longer
# programs are refused; solutions of unittest-style benchmarks are a few KiB.
MAX_PROGRAM_CHARS = 256 << 10


class UnreadableProgram(Exception):
    """A program the trusted side does not read: one Python could not compile either, or too long."""


def program_tree(program: str) -> ast.Module | None:
    """The program's syntax tree for the static checks; None for a SyntaxError, which the child reports
    as Python words it when the program runs. Raises UnreadableProgram for a program over
    MAX_PROGRAM_CHARS, one that no UTF-8 file can hold (a lone surrogate), and one the compiler gives up
    on otherwise (nesting too deep for its recursion or its parser stack, a NUL character): the
    candidate's error (before round 58b, a judge error, sandbox_error, which no sample may choose)."""
    if len(program) > MAX_PROGRAM_CHARS:
        raise UnreadableProgram(f"the program is {len(program)} characters long; unittest jobs take at most "
                                f"{MAX_PROGRAM_CHARS} (the trusted side parses it)")
    try:
        program.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UnreadableProgram(f"the program is not source text Python can read: {exc}") from None
    try:
        return ast.parse(program)
    except SyntaxError:
        return None
    except (RecursionError, MemoryError, ValueError) as exc:
        raise UnreadableProgram(f"the program does not compile: {type(exc).__name__}: {exc}") from None


def static_violations(program: str | ast.Module | None) -> list[str]:
    """What in `program` (its source, or its tree: program_tree) could tamper with the harness (sorted,
    empty when clean). A first filter: names and strings built at run time get past it, and the
    run-time guard stands behind it. So it leaves alone what it cannot tell from honest code: a name the
    program binds itself (see MODULE_NAMES) and the words of a docstring."""
    tree = program_tree(program) if isinstance(program, str) else program
    if tree is None:
        return []  # reported as the candidate's SyntaxError when it runs
    own = _bound_names(tree)
    docstrings = {id(doc) for doc in _docstrings(tree)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and (node.id in FORBIDDEN_NAMES or node.id in FORBIDDEN_CALLS):
            if not (node.id in own and (node.id in MODULE_NAMES or node.id in FORBIDDEN_CALLS)):
                found.add(node.id)
        elif (isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_NAMES
              and node.attr not in READABLE_ATTRIBUTES):
            found.add(node.attr)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] + ([node.module] if getattr(node, "module", None) else [])
            for name in names:
                if name in FORBIDDEN_NAMES or name.split(".")[0] in FORBIDDEN_NAMES:
                    found.add(name)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found.update(repr(needle) for needle in FORBIDDEN_STRINGS if needle in node.value)
    return sorted(found)


def _bound_names(tree: ast.Module) -> set[str]:
    """Every name `tree` binds, in any scope: assigned, a parameter, defined, imported (an import of a
    flagged module is flagged itself), caught, matched."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((alias.asname or alias.name).split(".")[0]
                         for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    return bound


def _docstrings(tree: ast.Module):
    """The docstring constants of `tree`: the first statement of the module, a class or a function,
    when it is a string alone."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                yield first.value


def without_main_blocks(program: str, module_name: str,
                        tree: ast.Module | None = None) -> tuple[str, ast.Module | None]:
    """`program` with each top-level `if __name__ == "__main__":` block (one without an `else`) blanked
    out, line for line, unless the program runs as `__main__`; and its tree (`tree`: program_tree's,
    made here if not given) without those blocks. Such a block never runs as an imported module
    (bigcodebench's sanitizer drops it too), and models often end a solution with one that imports
    unittest to try their function, which the static check would refuse."""
    if tree is None:
        tree = program_tree(program)
    if module_name == "__main__" or tree is None:
        return program, tree
    blocks = [node for node in tree.body
              if isinstance(node, ast.If) and not node.orelse and _is_main_test(node.test)]
    if not blocks:
        return program, tree
    # Lines as the parser counts them: "\r\n", "\r" and "\n" end one (round 53: a program with Windows
    # line ends kept its block); the separators are kept as they are.
    parts = _LINE_END.split(program)
    for node in blocks:
        for index in range(node.lineno - 1, node.end_lineno):
            parts[2 * index] = ""
    kept = ast.Module(body=[node for node in tree.body if not any(node is block for block in blocks)],
                      type_ignores=tree.type_ignores)
    return "".join(parts), kept


_LINE_END = re.compile(r"(\r\n|\r|\n)")


def _is_main_test(test: ast.expr) -> bool:
    """Whether `test` is `__name__ == "__main__"` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return (any(isinstance(side, ast.Name) and side.id == "__name__" for side in sides)
            and any(isinstance(side, ast.Constant) and side.value == "__main__" for side in sides))


def _test_methods(tree: ast.Module):
    """(class, method) for every `test*` method of every TestCase class at the top of `tree`."""
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        if not any(ast.unparse(base).endswith("TestCase") for base in node.bases):
            continue
        for item in node.body:
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name.startswith("test"):
                yield node, item


def expected_test_ids(test_source: str | ast.Module) -> list[str]:
    """`Class.test_method` for every TestCase class of the trusted test source (raises SyntaxError)."""
    tree = ast.parse(test_source) if isinstance(test_source, str) else test_source
    return [f"{cls.name}.{method.name}" for cls, method in _test_methods(tree)]


_SKIP_DECORATORS = frozenset({"skip", "skipIf", "skipUnless"})
_EXPECTED_FAILURE_DECORATORS = frozenset({"expectedFailure"})


def _decorated(node: ast.AST, names: frozenset[str]) -> bool:
    """Whether `node` carries one of the decorators `names` (bare, called, or as an attribute)."""
    for decorator in getattr(node, "decorator_list", ()):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
        if name in names:
            return True
    return False


def _calls_skip_test(node: ast.AST) -> bool:
    calls = (inner for inner in ast.walk(node) if isinstance(inner, ast.Call))
    return any(getattr(call.func, "attr", None) == "skipTest" for call in calls)


def declared_skip_ids(test_source: str | ast.Module) -> set[str]:
    """Test ids the trusted source itself may skip: a skip/skipIf/skipUnless decorator on the method or
    its class, or a `skipTest` call in the method's own body. Like the official harnesses (a skip is not
    a failure), their skips count as passes; any other skip (raised from the candidate's code) does not."""
    tree = ast.parse(test_source) if isinstance(test_source, str) else test_source
    return {
        f"{cls.name}.{method.name}"
        for cls, method in _test_methods(tree)
        if _decorated(cls, _SKIP_DECORATORS) or _decorated(method, _SKIP_DECORATORS)
        or _calls_skip_test(method)
    }


def declared_expected_failure_ids(test_source: str | ast.Module) -> set[str]:
    """Test ids the trusted source marks `@expectedFailure` (on the method or its class): only their
    expected failures count as passes. unittest reads the mark from an attribute of the method or the
    class, which the program can set on any test (a failing test then "passes" as expected)."""
    tree = ast.parse(test_source) if isinstance(test_source, str) else test_source
    return {
        f"{cls.name}.{method.name}"
        for cls, method in _test_methods(tree)
        if _decorated(cls, _EXPECTED_FAILURE_DECORATORS) or _decorated(method, _EXPECTED_FAILURE_DECORATORS)
    }


def canary_classes(name: str) -> tuple[str, str]:
    """The two canary classes of `name`: the harness runs the first before the tests and the second
    after them (tampering that starts during the tests, and makes every failure a pass, makes the last
    one pass too)."""
    return name, name + "Last"


def canary_source(name: str) -> str:
    """The canary classes (canary_classes), whose one test must fail."""
    return "".join(f"\n\nclass {cls}(__import__('unittest').TestCase):\n"
                   f"    def test_must_fail(self):\n        self.fail('canary')\n"
                   for cls in canary_classes(name))


def run_unittest_job(judge, job: dict, limits: Limits, started: float) -> dict:
    """Static checks, key, expected ids; then collect, verify and judge the child's reports."""
    from coding_framework.sandbox.judge import make_result

    def early(status: Status, message: str) -> dict:
        return {"status": status.value, "message": message, "duration_s": time.monotonic() - started}

    try:
        tree = ast.parse(job["test"])
    except SyntaxError as exc:
        return early(Status.SANDBOX_ERROR, f"the unittest source does not compile: {exc}")
    expected = expected_test_ids(tree)
    if not expected:
        return early(Status.SANDBOX_ERROR, "the unittest source defines no TestCase test methods")
    try:
        program, checked = without_main_blocks(job["program"], job["module_name"])
    except UnreadableProgram as exc:
        return early(Status.ERROR, str(exc))
    violations = static_violations(checked)
    if violations:
        return early(Status.ERROR, f"the program touches the test harness: {', '.join(violations)}")
    key = secrets.token_bytes(KEY_BYTES)
    canary = f"CfCanary{secrets.token_hex(8)}"
    session = judge.zygote.start_child(UNITTEST, limits, started + limits.timeout_s)
    reports: dict[str, tuple[str, str]] = {}
    status, message, problem = None, "", None
    try:
        session.send(key)
        session.send(plain_data.encode(("unittest", program, job["test"], job["module_name"],
                                        canary_source(canary)), max_bytes=1 << 30))
        problem = _collect(session, key, reports)
        if isinstance(problem, tuple):
            status, message = problem
            problem = None
    except Stop as stop:
        status, message = stop.status, stop.message
        if (session.exit_info or {}).get("status") == HARNESS_THREAD_EXIT:
            message = ("harness tampering detected: the program's code started to run in the harness's "
                       f"thread (or the program exited with the status that means so, {HARNESS_THREAD_EXIT})")
    finally:
        session.end()
    if status is None:
        declared = {"skip": declared_skip_ids(tree), "xfail": declared_expected_failure_ids(tree)}
        status, message = _decide(expected, reports, canary, problem, declared)
    out_of_memory = judge.zygote.out_of_memory(session, limits)
    if out_of_memory and status is not Status.PASSED:
        status, message = Status.MEMORY, out_of_memory
    return make_result(session, status, message, started)


def _collect(session, key: bytes, reports: dict) -> str | tuple | None:
    """Read reports until <done>; a str is a tampering finding, a tuple a (status, message)."""
    seq = 0
    while True:
        try:
            op, got_seq, test_id, outcome, text, tag = plain_data.decode(session.receive(), max_depth=4)
        except (plain_data.DecodeError, ValueError, TypeError):
            return "a malformed report"
        if (op != "report" or got_seq != seq or type(tag) is not bytes or type(test_id) is not str
                or type(outcome) is not str or not hmac.compare_digest(tag, mac(key, seq, test_id, outcome))):
            return "a report failed authentication (forged or out of order)"
        seq += 1
        if test_id == "<done>":
            return None
        if test_id == "<load>":
            return Status.ERROR, str(text)
        if test_id == "<tamper>":
            return f"the program changed what the tests rely on: {text}"
        if test_id == "<fixture>":
            return Status.ERROR, f"a class or module fixture failed: {text}"
        if reports.get(test_id, ("pass",))[0] == "pass":  # a failed subtest keeps its test failed
            reports[test_id] = (outcome, str(text))


def _decide(
    expected: list[str], reports: dict, canary: str, problem: str | None, declared: dict[str, set[str]]
) -> tuple[Status, str]:
    """The verdict from the verified reports. `declared`: for the outcomes "skip" and "xfail" (an
    expected failure), the test ids whose trusted source declares them; those count as passes."""
    if problem is not None:
        return Status.ERROR, f"harness tampering detected: {problem}"
    for name in canary_classes(canary):
        canary_outcome = reports.pop(f"{name}.test_must_fail", ("missing", ""))[0]
        if canary_outcome != "fail":
            return Status.ERROR, f"harness tampering detected: the canary test reported {canary_outcome}"
    # Every test the suite ran counts, not only those the source declares at the top of a TestCase
    # class: a test inherited from a base class or a mixin, or added with setattr, reports under an id
    # the parse does not know, and its failure is as real (the official harness runs them all). A skip
    # or an expected failure is a pass only where the source itself declares it.
    listed = set(expected)
    unknown = [test_id for test_id in reports if test_id not in listed]
    for test_id in [*expected, *unknown]:
        outcome, text = reports.get(test_id, ("missing", ""))
        if outcome == "missing":
            return Status.ERROR, f"{test_id} did not report"
        if test_id in declared.get(outcome, ()):
            continue
        if outcome == "xfail":
            return Status.ERROR, (f"{test_id} failed and was marked an expected failure, which the tests do "
                                  f"not declare (the program marked it): {_last_line(text)}")
        if outcome != "pass":
            status = Status.FAILED if outcome == "fail" else Status.ERROR
            return status, f"{test_id} {outcome}: {_last_line(text)}"
    return Status.PASSED, ""


def _last_line(text: str) -> str:
    return text.strip().splitlines()[-1] if text.strip() else ""

"""Run-time defences for unittest jobs, where trusted tests and the candidate share one process.

One module per layer: audit_hook (1; generated_code holds the texts library code generators compile,
by which it trusts their code), bindings (2), guarded_calls, returned_values, thread_states and
outside_calls (3).

Three layers, all set up by the child before the candidate's code first runs (see suite_runner):

1. An audit hook (PEP 578; it cannot be removed from Python) that refuses, when the code asking is the
   candidate's, every operation that yields a frame or reaches objects the program was not given:
   `sys._getframe`, `sys._current_frames`, traceback/generator/coroutine frames (`tb_frame`, `gi_frame`,
   ...), `gc.get_objects` / `get_referrers` / `get_referents`, trace and profile hooks, new audit hooks,
   ctypes, making code (`compile`, `exec`, `marshal.loads`, `code.__new__`, `function.__new__`,
   setting `__code__` or `__defaults__`), and (whoever asks) loading an extension module from outside
   the trusted directories. Frame walking is how a program finds the harness's reporter
   and the running test (and forges a pass); strings built at run time get past any static check, the
   audit hook sees the operation itself. "The candidate's code" is any code object that is not the
   sandbox's own, not compiled by the harness from the trusted test source, and not equal to code the
   import system makes from the Python source or frozen module it names in a directory the child
   cannot write (the host view is read-only; the work dir is not trusted): a file name alone proves
   nothing (make_trust). Standard-library helpers that only hand a frame
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
   libraries does not do. unittest's machinery (SEALED_MODULES and their classes) may not change at
   all, even for a moment: every change stamps a dict with a new version tag, which is compared.
3. Guarded calls: the program's functions, as the tests see them, are GuardedFunctions. When a call
   returns (or raises), bindings rebound to the program's own code are looked for at once (a replaced
   assertion that would put the original back when called is caught before the test calls it; the test's own
   mock.patches are not the program's and pass), and the returned value, with what it contains, may
   not be of a class taking a comparison or conversion method from the program (an `__eq__` that is
   always true would answer the test's assertEqual with the program's logic; in function-call jobs
   only plain data crosses, here this check stands in for that). A call returning while a thread of
   the program's could still run Python code (counted among the interpreter's thread states) is
   refused: that thread could change the value after its check. The program's code may run in the
   tests' thread only within its calls: a C profile function watches the thread in between, and the
   program's code entered there from library or test code (a registry entry of the program's that
   library code calls: a warnings filter, an ABC's subclass hook) makes the sample an error.

The harness's state is kept where the program cannot reach it: the key, the reporter and the
harness's own record of the bindings live in the child's main thread, where none of the program's code
runs (suite_runner; install_audit_hook's `main_thread` and `trace`); in the tests' thread, where any
class is reachable (`object.__subclasses__()`) and any closure cell can be read and rewritten, the
checks of the program's calls keep their state in a generator's frame behind each GuardedFunction.

Not closed (documented in the package README): the program can read and change the tests' own data
(test classes are reachable, and what they and the test module bind; not the test methods' constants,
whose code objects the audit hook lets only the tests' own stack read); program code that runs later in a test
without a guarded call returning (a callback handed to a library, a generator's body) can patch and
restore in between, outside unittest's sealed machinery; values reached only through library objects
other than containers, numpy object arrays, pandas containers and instances whose comparison is
trusted Python code are not inspected; and a frame handed on by trusted code that names
what it fetches (a third-party helper this package does not know) is not refused. Function-call jobs,
where the candidate never shares a process with the tests, are not exposed to any of this.
"""

from coding_framework.sandbox.in_process_guard import outside_calls, thread_states
from coding_framework.sandbox.in_process_guard.audit_hook import (
    FRAME_HELPERS,
    GUARDED_ATTRIBUTES,
    GUARDED_EVENTS,
    IMPORTED_AT_INSTALL,
    PASS_THROUGH_MODULES,
    STACK_WIDE_EVENTS,
    CodeSet,
    code_objects,
    install_audit_hook,
    make_trust,
    trusted_roots,
)
from coding_framework.sandbox.in_process_guard.bindings import (
    HARNESS_MODULES,
    LOADED_BEFORE_RECORD,
    SEALED_MODULES,
    Snapshot,
    foreign_in_class,
    make_checker,
    make_harness_check,
    make_state_check,
    preimport,
    program_made,
    record,
    str_keyed_copy,
)
from coding_framework.sandbox.in_process_guard.guarded_calls import (
    CheckedCoroutine,
    GuardedFunction,
    TestsImport,
    guard_calls,
    guard_module,
    make_guards,
)
from coding_framework.sandbox.in_process_guard.returned_values import (
    ANSWERING_METHODS,
    foreign_answerer,
    library_types,
    refuse_array_truth,
)

__all__ = [
    "ANSWERING_METHODS",
    "FRAME_HELPERS",
    "GUARDED_ATTRIBUTES",
    "GUARDED_EVENTS",
    "HARNESS_MODULES",
    "IMPORTED_AT_INSTALL",
    "LOADED_BEFORE_RECORD",
    "PASS_THROUGH_MODULES",
    "SEALED_MODULES",
    "STACK_WIDE_EVENTS",
    "CheckedCoroutine",
    "CodeSet",
    "GuardedFunction",
    "Snapshot",
    "TestsImport",
    "code_objects",
    "foreign_answerer",
    "foreign_in_class",
    "guard_calls",
    "guard_module",
    "install_audit_hook",
    "library_types",
    "make_checker",
    "make_guards",
    "make_harness_check",
    "make_state_check",
    "make_trust",
    "outside_calls",
    "preimport",
    "program_made",
    "record",
    "refuse_array_truth",
    "str_keyed_copy",
    "thread_states",
    "trusted_roots",
]

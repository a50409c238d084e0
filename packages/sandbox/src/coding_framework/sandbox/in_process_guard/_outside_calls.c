/* The in-process guard's watch on the tests' thread: does the program's code run there outside the
 * program's calls? (outside_calls.py says why and how it is used.)
 *
 * A C profile function (no Python code of ours runs per event, and none of the program's can reach
 * its state) sees every Python frame the watched thread enters while the watch runs. A frame of the
 * program's code entered from a frame that is not (library code calling it: a warnings filter's
 * `match`, an ABC's `__subclasscheck__`, an import finder, a `__del__`) is recorded, unless its caller
 * is one of the free callers (the guard's generator handing out a returned generator's items), or it
 * is called by name (called_by_name) by the tests' own code or, being a function the checks found in
 * a value a call of the program's returned (`allow`: a Flask app's view, a FuncFormatter's function),
 * by library code; the first such code's qualified name stays recorded for the rest of the process. The program's own calls
 * pause the watch: the profile function is removed for their length (a profile function slows every
 * instruction of the thread it is set in), by the pausers only (code objects of the harness's, told at
 * `watch`), in the watched thread only. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

static PyObject *program_codes = NULL;   /* dict: id(code) -> code, every code object of the program */
static PyObject *test_codes = NULL;      /* dict: id(code) -> code, the tests' own code */
static PyObject *free_callers = NULL;    /* dict: id(code) -> code, whose frames may enter the program's */
static PyObject *handed_out = NULL;      /* dict: id(code) -> code, functions found in returned values */
static PyObject *token = NULL;           /* what `allow` asks for: handed to the first `watch` only */
static PyObject *pausers = NULL;         /* tuple of code objects that may pause and resume the watch */
static PyThreadState *watched = NULL;    /* the tests' thread */
static long depth = 0;                   /* pauses not yet resumed; the watch runs at 0 */
static PyObject *first = NULL;           /* what was recorded: a str, or NULL */

static int
holds(PyObject *codes, PyObject *code)
{
    Py_ssize_t n = PyTuple_GET_SIZE(codes);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyTuple_GET_ITEM(codes, i) == code) {
            return 1;
        }
    }
    return 0;
}

/* Whether `code` is in `codes` (a dict: id -> code object), by identity; `unknown` where that cannot
 * be told (no memory for the key). */
static int
holds_code(PyObject *codes, PyObject *code, int unknown)
{
    PyObject *key = PyLong_FromVoidPtr(code);
    if (key == NULL) {
        PyErr_Clear();
        return unknown;
    }
    PyObject *known = PyDict_GetItemWithError(codes, key);
    Py_DECREF(key);
    if (known == NULL && PyErr_Occurred()) {
        PyErr_Clear();
        return unknown;
    }
    return known == code;
}

static int
is_program_code(PyObject *code)
{
    return holds_code(program_codes, code, 1);  /* (cannot tell: counted as the program's) */
}

/* Whether a frame of `code` is what a test calls by name (a function or method, a class's `__init__`
 * or `__new__`, an object's `__call__`), not a special method the interpreter calls by itself (a
 * finalizer, a comparison, a subclass hook): only the former may be entered from the tests' code. */
static int
called_by_name(PyCodeObject *code)
{
    PyObject *name = code->co_name;
    if (!PyUnicode_Check(name)) {
        return 0;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(name);
    if (n < 5 || PyUnicode_READ_CHAR(name, 0) != '_' || PyUnicode_READ_CHAR(name, 1) != '_'
            || PyUnicode_READ_CHAR(name, n - 1) != '_' || PyUnicode_READ_CHAR(name, n - 2) != '_') {
        return 1;
    }
    return (PyUnicode_CompareWithASCIIString(name, "__init__") == 0
            || PyUnicode_CompareWithASCIIString(name, "__new__") == 0
            || PyUnicode_CompareWithASCIIString(name, "__call__") == 0);
}

static void
record(PyObject *what)
{
    if (first == NULL) {
        Py_INCREF(what);
        first = what;
    }
}

static int
profile(PyObject *unused, PyFrameObject *frame, int what, PyObject *arg)
{
    if (what != PyTrace_CALL || first != NULL) {
        return 0;
    }
    PyCodeObject *code = PyFrame_GetCode(frame);
    if (is_program_code((PyObject *)code)) {
        int entered_from_outside = 1;
        PyFrameObject *back = PyFrame_GetBack(frame);
        if (back != NULL) {
            PyObject *caller = (PyObject *)PyFrame_GetCode(back);
            /* (a frame of the program's calling another was itself judged as it was entered) */
            entered_from_outside = !(is_program_code(caller) || holds_code(free_callers, caller, 0)
                                     || ((holds_code(test_codes, caller, 0)
                                          || holds_code(handed_out, (PyObject *)code, 0))
                                         && called_by_name(code)));
            Py_DECREF(caller);
            Py_DECREF(back);
        }
        if (entered_from_outside) {
            record(code->co_qualname);
        }
    }
    Py_DECREF(code);
    return 0;
}

/* Whether the watched thread asks, from a pauser's frame. */
static int
asked_by_pauser(void)
{
    PyFrameObject *frame = PyEval_GetFrame();
    if (frame == NULL) {
        return 0;
    }
    PyCodeObject *code = PyFrame_GetCode(frame);
    int ok = holds(pausers, (PyObject *)code);
    Py_DECREF(code);
    return ok;
}

static int
set_profile(Py_tracefunc function)
{
    if (_PyEval_SetProfile(PyThreadState_Get(), function, NULL) < 0) {
        PyObject *failed = PyUnicode_FromString("<the watch could not be set>");
        if (failed != NULL) {
            record(failed);
            Py_DECREF(failed);
        }
        return -1;
    }
    return 0;
}

static PyObject *
watch(PyObject *module, PyObject *args)
{
    PyObject *codes, *tests, *free, *allowed;
    if (!PyArg_ParseTuple(args, "O!O!O!O!:watch", &PyDict_Type, &codes, &PyDict_Type, &tests, &PyDict_Type,
                          &free, &PyTuple_Type, &allowed)) {
        return NULL;
    }
    if (watched != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "sandbox: the watch is set already");
        return NULL;
    }
    program_codes = PyDict_Copy(codes);
    if (program_codes == NULL) {
        return NULL;
    }
    test_codes = PyDict_Copy(tests);
    free_callers = PyDict_Copy(free);
    handed_out = PyDict_New();
    token = PyBaseObject_Type.tp_alloc(&PyBaseObject_Type, 0);
    if (test_codes == NULL || free_callers == NULL || handed_out == NULL || token == NULL) {
        Py_CLEAR(program_codes);
        Py_CLEAR(test_codes);
        Py_CLEAR(free_callers);
        Py_CLEAR(handed_out);
        Py_CLEAR(token);
        return NULL;
    }
    Py_INCREF(allowed);
    pausers = allowed;
    watched = PyThreadState_Get();
    depth = 1;  /* paused until the first resume */
    Py_INCREF(token);
    return token;
}

static PyObject *
allow(PyObject *module, PyObject *args)
{
    PyObject *given, *codes;
    if (!PyArg_ParseTuple(args, "OO!:allow", &given, &PyList_Type, &codes)) {
        return NULL;
    }
    if (token == NULL || given != token) {
        PyErr_SetString(PyExc_RuntimeError, "sandbox: only the harness tells the watch what was returned");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(codes);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *code = PyList_GET_ITEM(codes, i);
        if (!PyCode_Check(code) || !is_program_code(code)) {
            continue;
        }
        PyObject *key = PyLong_FromVoidPtr(code);
        if (key == NULL || PyDict_SetItem(handed_out, key, code) < 0) {
            Py_XDECREF(key);
            return NULL;
        }
        Py_DECREF(key);
    }
    Py_RETURN_NONE;
}

static PyObject *
pause_watch(PyObject *module, PyObject *unused)
{
    if (watched == NULL || PyThreadState_Get() != watched) {
        Py_RETURN_NONE;  /* (another thread: nothing of the watch's to change) */
    }
    if (!asked_by_pauser()) {
        PyErr_SetString(PyExc_RuntimeError, "sandbox: only the harness pauses its watch");
        return NULL;
    }
    if (depth++ == 0 && set_profile(NULL) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
resume_watch(PyObject *module, PyObject *unused)
{
    if (watched == NULL || PyThreadState_Get() != watched) {
        Py_RETURN_NONE;
    }
    if (!asked_by_pauser()) {
        PyErr_SetString(PyExc_RuntimeError, "sandbox: only the harness resumes its watch");
        return NULL;
    }
    if (depth > 0 && --depth == 0 && set_profile(profile) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
paused(PyObject *module, PyObject *unused)
{
    return PyLong_FromLong(depth);
}

static PyObject *
ran(PyObject *module, PyObject *unused)
{
    if (first == NULL) {
        Py_RETURN_NONE;
    }
    Py_INCREF(first);
    return first;
}

static PyMethodDef methods[] = {
    {"watch", watch, METH_VARARGS,
     "watch(program_codes, test_codes, free_callers: dict[id, code], pausers: tuple[code]) -> token: "
     "watch this thread, paused until the first resume(). Once per process."},
    {"paused", paused, METH_NOARGS, "paused() -> int: pauses not yet resumed (0: the watch runs)."},
    {"allow", allow, METH_VARARGS,
     "allow(token, codes: list[code]): the program's functions found in a value its call returned may be "
     "called by library code by name (`token`: what watch returned)."},
    {"pause", pause_watch, METH_NOARGS, "pause(): a pauser's frame in the watched thread stops the watch."},
    {"resume", resume_watch, METH_NOARGS, "resume(): undo one pause(); the watch runs again after the last."},
    {"ran", ran, METH_NOARGS,
     "ran() -> str | None: the qualified name of the first of the program's code entered from outside "
     "while the watch ran, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_outside_calls",
    "A watch on one thread for the program's code run outside the program's calls.", -1, methods,
};

PyMODINIT_FUNC
PyInit__outside_calls(void)
{
    return PyModule_Create(&module);
}

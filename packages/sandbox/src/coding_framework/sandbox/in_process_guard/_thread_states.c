/* The in-process guard's count of this interpreter's thread states, and its search for every live
 * contextvars.Context (thread_states.py says why).
 *
 * count: one C call, under the GIL: no Python code runs between reading the list's head and its last
 * entry, so no thread of the program's can start, end or run while it is counted. Every thread state
 * is counted: one preallocated for a thread that has not run yet, one whose thread is being cleared
 * (finalizers of its thread-locals still run Python code in it), and one that a C thread made for a
 * callback. CPython's own walkers (faulthandler) read the list the same way.
 *
 * live_contexts: the contexts among what gc.get_objects() (taken as this module loads) returns. The
 * guard's audit hook refuses gc walks in a unittest child, but lets this one through: it asks
 * `scanning()`, true once, in the thread running live_contexts, while it runs. The collector is off
 * meanwhile: a collection there ran a finalizer of the program's whose own gc walk the hook then let
 * through too (red-team round 61c). Whoever calls it gets contexts only; and none where objects were
 * frozen (gc.freeze) since `freeze_baseline()` was first called (the harness, before the program
 * runs): gc.get_objects() leaves frozen objects out, and a test's task context with them (61c). It
 * made a list then, held here only: once frozen, gc.get_objects() no longer returns it. (The count of
 * frozen objects tells nothing: it falls as frozen objects die.) */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *get_objects = NULL; /* gc.get_objects, as this module loaded */
static unsigned long scanner = 0;    /* the thread running live_contexts, until the hook asks; 0: none */
static PyObject *unfrozen = NULL;    /* a list made by the first freeze_baseline(), held only here */

static PyObject *
freeze_baseline(PyObject *module, PyObject *unused)
{
    if (unfrozen == NULL) {
        unfrozen = PyList_New(0);
        if (unfrozen == NULL) {
            return NULL;
        }
    }
    Py_RETURN_NONE;
}

static PyObject *
count(PyObject *module, PyObject *unused)
{
    Py_ssize_t n = 0;
    PyThreadState *state = PyInterpreterState_ThreadHead(PyInterpreterState_Get());
    while (state != NULL) {
        n++;
        state = PyThreadState_Next(state);
    }
    return PyLong_FromSsize_t(n);
}

static PyObject *
live_contexts(PyObject *module, PyObject *unused)
{
    if (scanner != 0) {
        PyErr_SetString(PyExc_RuntimeError, "live_contexts: already running");
        return NULL;
    }
    if (unfrozen == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "live_contexts: no freeze_baseline() taken");
        return NULL;
    }
    int collecting = PyGC_Disable();
    scanner = PyThread_get_thread_ident();
    PyObject *all = PyObject_CallNoArgs(get_objects);
    scanner = 0;
    if (collecting) {
        PyGC_Enable();
    }
    if (all == NULL) {
        return NULL;
    }
    if (!PyList_CheckExact(all)) {
        Py_DECREF(all);
        PyErr_SetString(PyExc_TypeError, "live_contexts: gc.get_objects() returned no list");
        return NULL;
    }
    PyObject *found = PyList_New(0);
    int seen_unfrozen = 0;
    for (Py_ssize_t i = 0; found != NULL && i < PyList_GET_SIZE(all); i++) {
        PyObject *item = PyList_GET_ITEM(all, i);
        seen_unfrozen |= item == unfrozen;
        if (PyContext_CheckExact(item) && PyList_Append(found, item) < 0) {
            Py_CLEAR(found);
        }
    }
    Py_DECREF(all);
    if (found != NULL && !seen_unfrozen) {
        Py_DECREF(found);
        PyErr_SetString(PyExc_RuntimeError, "sandbox: objects were frozen (gc.freeze) since the program "
                        "started: the live contexts cannot all be found");
        return NULL;
    }
    return found;
}

static PyObject *
scanning(PyObject *module, PyObject *unused)
{
    int mine = scanner != 0 && scanner == PyThread_get_thread_ident();
    if (mine) {
        scanner = 0; /* (once: the hook asks for live_contexts' own gc.get_objects() only) */
    }
    return PyBool_FromLong(mine);
}

static PyMethodDef methods[] = {
    {"count", count, METH_NOARGS,
     "count() -> int: the number of thread states of this interpreter, all of them, counted in one "
     "C call under the GIL."},
    {"live_contexts", live_contexts, METH_NOARGS,
     "live_contexts() -> list[contextvars.Context]: every context gc.get_objects() returns."},
    {"scanning", scanning, METH_NOARGS,
     "scanning() -> bool: whether live_contexts is running in this thread (its gc.get_objects() call); "
     "true once per live_contexts call."},
    {"freeze_baseline", freeze_baseline, METH_NOARGS,
     "freeze_baseline() -> None: from its first call on, live_contexts refuses to answer once objects "
     "are frozen (gc.freeze)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_thread_states",
    "The number of this interpreter's thread states, counted in one C call; its live contexts.", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__thread_states(void)
{
    PyObject *gc = PyImport_ImportModule("gc");
    if (gc == NULL) {
        return NULL;
    }
    get_objects = PyObject_GetAttrString(gc, "get_objects");
    Py_DECREF(gc);
    if (get_objects == NULL) {
        return NULL;
    }
    return PyModule_Create(&module);
}

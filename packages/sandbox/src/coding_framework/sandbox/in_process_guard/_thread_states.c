/* The in-process guard's count of this interpreter's thread states (thread_states.py says why).
 *
 * One C call, under the GIL: no Python code runs between reading the list's head and its last
 * entry, so no thread of the program's can start, end or run while it is counted. Every thread state
 * is counted: one preallocated for a thread that has not run yet, one whose thread is being cleared
 * (finalizers of its thread-locals still run Python code in it), and one that a C thread made for a
 * callback. CPython's own walkers (faulthandler) read the list the same way. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

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

static PyMethodDef methods[] = {
    {"count", count, METH_NOARGS,
     "count() -> int: the number of thread states of this interpreter, all of them, counted in one "
     "C call under the GIL."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_thread_states",
    "The number of this interpreter's thread states, counted in one C call.", -1, methods,
};

PyMODINIT_FUNC
PyInit__thread_states(void)
{
    return PyModule_Create(&module);
}

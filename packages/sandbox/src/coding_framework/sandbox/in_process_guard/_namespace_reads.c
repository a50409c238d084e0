/* Reads of namespaces for the in-process guard's bindings checks (bindings.py), one C call each.
 *
 * version: a dict's version tag (PEP 509). CPython 3.11 gives every dict a new tag, from one
 * process-wide counter, on every change: a namespace whose tag is the one a check saw last is
 * unchanged since, and the check need not compare it key by key (bindings.version_reader). Only where
 * the tag is where 3.11 keeps it and means what it means there; elsewhere the module has no `version`
 * and the guard compares every namespace.
 *
 * holding: the entries of a namespace whose values hold other callables in ways no binding shows (a
 * function with closure cells, or an object of one of the given exact types): what
 * bindings.Snapshot.add_held records, found without a Python step per value.
 *
 * cells_as_seen: whether closure cells still hold what they held (bindings.make_held_check), one
 * identity comparison per cell.
 *
 * Both only read, and run no Python code (types are compared by identity, nothing is hashed or
 * compared by value): whoever calls them learns what they read, and can change nothing. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* The dict a namespace argument names: a dict, or a class's own namespace (behind its mappingproxy). */
static PyObject *
namespace_dict(PyObject *namespace, const char *function)
{
    if (PyType_Check(namespace)) {
        namespace = ((PyTypeObject *)namespace)->tp_dict;
        if (namespace == NULL) {
            PyErr_Format(PyExc_TypeError, "%s(namespace): a class not yet ready", function);
            return NULL;
        }
    }
    if (!PyDict_Check(namespace)) {
        PyErr_Format(PyExc_TypeError, "%s(namespace): a dict or a class", function);
        return NULL;
    }
    return namespace;
}

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
static PyObject *
version(PyObject *module, PyObject *namespace)
{
    PyObject *dict = namespace_dict(namespace, "version");
    if (dict == NULL) {
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(((PyDictObject *)dict)->ma_version_tag);
}
#endif

static PyObject *
holding(PyObject *module, PyObject *args)
{
    PyObject *namespace, *kinds;
    if (!PyArg_ParseTuple(args, "OO!:holding", &namespace, &PyTuple_Type, &kinds)) {
        return NULL;
    }
    PyObject *dict = namespace_dict(namespace, "holding");
    if (dict == NULL) {
        return NULL;
    }
    PyObject *found = PyList_New(0);
    if (found == NULL) {
        return NULL;
    }
    Py_ssize_t pos = 0, n = PyTuple_GET_SIZE(kinds);
    PyObject *key, *value;
    while (PyDict_Next(dict, &pos, &key, &value)) {
        int hit = PyFunction_Check(value) && PyFunction_GET_CLOSURE(value) != NULL;
        for (Py_ssize_t i = 0; !hit && i < n; i++) {
            hit = (PyObject *)Py_TYPE(value) == PyTuple_GET_ITEM(kinds, i);
        }
        if (hit) {
            PyObject *pair = PyTuple_Pack(2, key, value);
            if (pair == NULL || PyList_Append(found, pair) < 0) {
                Py_XDECREF(pair);
                Py_DECREF(found);
                return NULL;
            }
            Py_DECREF(pair);
        }
    }
    return found;
}

static PyObject *
cells_as_seen(PyObject *module, PyObject *args)
{
    PyObject *cells, *contents;
    if (!PyArg_ParseTuple(args, "O!O!:cells_as_seen", &PyList_Type, &cells, &PyList_Type, &contents)) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(cells);
    if (PyList_GET_SIZE(contents) != n) {
        PyErr_SetString(PyExc_ValueError, "cells_as_seen(cells, contents): lists of one length");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *cell = PyList_GET_ITEM(cells, i);
        if (!PyCell_Check(cell) || PyCell_GET(cell) != PyList_GET_ITEM(contents, i)) {
            Py_RETURN_FALSE;
        }
    }
    Py_RETURN_TRUE;
}

static PyMethodDef methods[] = {
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
    {"version", version, METH_O,
     "version(namespace: dict | type) -> int: the dict's version tag (a class's: its namespace's), new "
     "after every change of the dict."},
#endif
    {"holding", holding, METH_VARARGS,
     "holding(namespace: dict | type, kinds: tuple[type, ...]) -> list[(key, value)]: the entries whose "
     "value is a function with closure cells or an object whose exact type is one of `kinds`."},
    {"cells_as_seen", cells_as_seen, METH_VARARGS,
     "cells_as_seen(cells: list[cell], contents: list) -> bool: whether every cell holds, by identity, "
     "the object at its index of `contents` (an empty cell holds nothing)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_namespace_reads",
    "Reads of namespaces for the bindings checks: dict version tags, values holding other callables.", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__namespace_reads(void)
{
    return PyModule_Create(&module);
}

/* Reads of namespaces for the in-process guard's bindings checks (bindings.py), one C call each.
 *
 * version: a dict's version tag (PEP 509). CPython 3.11 gives every dict a new tag, from one
 * process-wide counter, on every change: a namespace whose tag is the one a check saw last is
 * unchanged since, and the check need not compare it key by key (bindings.version_reader). Only where
 * the tag is where 3.11 keeps it and means what it means there; elsewhere the module has no `version`
 * and the guard compares every namespace.
 *
 * holding: the entries of a namespace whose values hold other callables or data in ways no binding
 * shows (a function with closure cells, keyword defaults or code compiled from a string, or an object
 * of one of the given exact types): what bindings.Snapshot.add_held records, found without a Python
 * step per value.
 *
 * defined_classes: the entries of a module's namespace that are classes it defines (their own
 * `__module__` is the module's name), whose namespaces and MROs bindings.Snapshot.add_module records;
 * changeable_classes: the entries that are classes whose namespace can be changed and that are not
 * among the given ones (Snapshot.add_unowned_classes).
 *
 * all_exact_str: whether every key of a dict (a class's own namespace) or every item of a list is an
 * exact str (returned_values.all_exact_str: a key of the program's runs its `__eq__` at a lookup).
 *
 * cells_as_seen, mros_as_seen, functions_as_seen, moved: whether closure cells, classes' MROs and
 * functions (code, defaults, cells) are as recorded, and which namespaces' tags moved
 * (bindings.make_checker, make_held_check): identity comparisons, one C call for thousands.
 *
 * All only read, and run no Python code (objects are compared by identity, strs by their characters,
 * and only ints are hashed): whoever calls them learns what they read, and can change nothing. */
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

/* The (key, value) entries of `dict` whose value `wanted(value, context)` accepts (1; 0: not; -1: an
 * error set), as a new list. */
static PyObject *
entries_where(PyObject *dict, int (*wanted)(PyObject *, PyObject *), PyObject *context)
{
    PyObject *found = PyList_New(0);
    if (found == NULL) {
        return NULL;
    }
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(dict, &pos, &key, &value)) {
        int verdict = wanted(value, context);
        if (verdict < 0) {
            Py_DECREF(found);
            return NULL;
        }
        if (!verdict) {
            continue;
        }
        PyObject *pair = PyTuple_Pack(2, key, value);
        if (pair == NULL || PyList_Append(found, pair) < 0) {
            Py_XDECREF(pair);
            Py_DECREF(found);
            return NULL;
        }
        Py_DECREF(pair);
    }
    return found;
}

/* A function with closure cells, keyword defaults (a dict, changeable in place) or code compiled from
 * a string (whose globals may be a namespace of its own), or an object whose exact type is one of
 * `kinds` (a tuple). */
static int
holds_callables(PyObject *value, PyObject *kinds)
{
    if (PyFunction_Check(value)) {
        if (PyFunction_GET_CLOSURE(value) != NULL || PyFunction_GET_KW_DEFAULTS(value) != NULL) {
            return 1;
        }
        PyObject *file = ((PyCodeObject *)PyFunction_GET_CODE(value))->co_filename;
        if (PyUnicode_Check(file) && PyUnicode_CompareWithASCIIString(file, "<string>") == 0) {
            return 1;
        }
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kinds); i++) {
        if ((PyObject *)Py_TYPE(value) == PyTuple_GET_ITEM(kinds, i)) {
            return 1;
        }
    }
    return 0;
}

static PyObject *
holding(PyObject *module, PyObject *args)
{
    PyObject *namespace, *kinds;
    if (!PyArg_ParseTuple(args, "OO!:holding", &namespace, &PyTuple_Type, &kinds)) {
        return NULL;
    }
    PyObject *dict = namespace_dict(namespace, "holding");
    return dict == NULL ? NULL : entries_where(dict, holds_callables, kinds);
}

/* The exact str a class's own namespace binds to "__module__", or NULL: its keys stepped through and
 * compared as strs (a str subclass by its characters), so that no key's own `__eq__` runs. */
static PyObject *
own_module_name(PyTypeObject *cls)
{
    PyObject *dict = cls->tp_dict, *key, *value;
    Py_ssize_t pos = 0;
    if (dict == NULL || !PyDict_Check(dict)) {
        return NULL;
    }
    while (PyDict_Next(dict, &pos, &key, &value)) {
        if (PyUnicode_Check(key) && PyUnicode_CompareWithASCIIString(key, "__module__") == 0) {
            return PyUnicode_CheckExact(value) ? value : NULL;
        }
    }
    return NULL;
}

/* A class whose own namespace binds `__module__` to the str `name`. */
static int
defined_in(PyObject *value, PyObject *name)
{
    if (!PyType_Check(value)) {
        return 0;
    }
    PyObject *own = own_module_name((PyTypeObject *)value);
    return own != NULL && PyUnicode_Compare(own, name) == 0;
}

static PyObject *
defined_classes(PyObject *module, PyObject *args)
{
    PyObject *namespace, *name;
    if (!PyArg_ParseTuple(args, "O!U:defined_classes", &PyDict_Type, &namespace, &name)) {
        return NULL;
    }
    return entries_where(namespace, defined_in, name);
}

/* A class whose namespace `setattr` can change (a heap type, not immutable) and whose id (an int) is
 * not in the set `skip`. */
static int
changeable_unless_in(PyObject *value, PyObject *skip)
{
    if (!PyType_Check(value)) {
        return 0;
    }
    unsigned long flags = ((PyTypeObject *)value)->tp_flags;
    if (!(flags & Py_TPFLAGS_HEAPTYPE) || (flags & Py_TPFLAGS_IMMUTABLETYPE)) {
        return 0;
    }
    PyObject *id = PyLong_FromVoidPtr(value);
    if (id == NULL) {
        return -1;
    }
    int known = PySet_Contains(skip, id);
    Py_DECREF(id);
    return known < 0 ? -1 : !known;
}

static PyObject *
changeable_classes(PyObject *module, PyObject *args)
{
    PyObject *namespace, *skip;
    if (!PyArg_ParseTuple(args, "OO!:changeable_classes", &namespace, &PySet_Type, &skip)) {
        return NULL;
    }
    PyObject *dict = namespace_dict(namespace, "changeable_classes");
    return dict == NULL ? NULL : entries_where(dict, changeable_unless_in, skip);
}

/* The arguments of the comparisons below: two lists of one length, and one more object where `extra` is
 * given. Their length, or -1 with an error set. */
static Py_ssize_t
paired_lists(PyObject *args, const char *function, PyObject **first, PyObject **second, PyObject **extra)
{
    if (PyTuple_GET_SIZE(args) != (extra ? 3 : 2) || !PyList_Check(PyTuple_GET_ITEM(args, 0))
            || !PyList_Check(PyTuple_GET_ITEM(args, 1))) {
        PyErr_Format(PyExc_TypeError, "%s: two lists%s", function, extra ? " and an object" : "");
        return -1;
    }
    *first = PyTuple_GET_ITEM(args, 0);
    *second = PyTuple_GET_ITEM(args, 1);
    if (extra) {
        *extra = PyTuple_GET_ITEM(args, 2);
    }
    if (PyList_GET_SIZE(*first) != PyList_GET_SIZE(*second)) {
        PyErr_Format(PyExc_ValueError, "%s: lists of one length", function);
        return -1;
    }
    return PyList_GET_SIZE(*first);
}

static PyObject *
cells_as_seen(PyObject *module, PyObject *args)
{
    PyObject *cells, *contents;
    Py_ssize_t n = paired_lists(args, "cells_as_seen", &cells, &contents, NULL);
    if (n < 0) {
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

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
static PyObject *
moved(PyObject *module, PyObject *args)
{
    PyObject *namespaces, *tags;
    Py_ssize_t n = paired_lists(args, "moved", &namespaces, &tags, NULL);
    if (n < 0) {
        return NULL;
    }
    PyObject *found = PyList_New(0);
    if (found == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *dict = namespace_dict(PyList_GET_ITEM(namespaces, i), "moved");
        unsigned long long tag = dict == NULL ? 0 : PyLong_AsUnsignedLongLong(PyList_GET_ITEM(tags, i));
        if (dict == NULL || (tag == (unsigned long long)-1 && PyErr_Occurred())) {
            Py_DECREF(found);
            return NULL;
        }
        if (((PyDictObject *)dict)->ma_version_tag != tag) {
            PyObject *index = PyLong_FromSsize_t(i);
            if (index == NULL || PyList_Append(found, index) < 0) {
                Py_XDECREF(index);
                Py_DECREF(found);
                return NULL;
            }
            Py_DECREF(index);
        }
    }
    return found;
}
#endif

static PyObject *
mros_as_seen(PyObject *module, PyObject *args)
{
    PyObject *classes, *mros;
    Py_ssize_t n = paired_lists(args, "mros_as_seen", &classes, &mros, NULL);
    if (n < 0) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *cls = PyList_GET_ITEM(classes, i);
        if (!PyType_Check(cls) || ((PyTypeObject *)cls)->tp_mro != PyList_GET_ITEM(mros, i)) {
            Py_RETURN_FALSE;
        }
    }
    Py_RETURN_TRUE;
}

/* Whether `function` runs what `state` says: (code, defaults, kwdefaults, closure cells' contents),
 * each compared by identity (an empty cell is as bindings._EMPTY_CELL, `empty`). */
static int
runs_as_seen(PyObject *function, PyObject *state, PyObject *empty)
{
    if (!PyFunction_Check(function) || !PyTuple_Check(state) || PyTuple_GET_SIZE(state) != 4) {
        return 0;
    }
    PyObject *defaults = PyFunction_GET_DEFAULTS(function), *kwdefaults = PyFunction_GET_KW_DEFAULTS(function);
    if (PyFunction_GET_CODE(function) != PyTuple_GET_ITEM(state, 0)
            || (defaults ? defaults : Py_None) != PyTuple_GET_ITEM(state, 1)
            || (kwdefaults ? kwdefaults : Py_None) != PyTuple_GET_ITEM(state, 2)) {
        return 0;
    }
    PyObject *closure = PyFunction_GET_CLOSURE(function), *cells = PyTuple_GET_ITEM(state, 3);
    Py_ssize_t n = closure ? PyTuple_GET_SIZE(closure) : 0;
    if (!PyTuple_Check(cells) || PyTuple_GET_SIZE(cells) != n) {
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *content = PyCell_GET(PyTuple_GET_ITEM(closure, i));
        if ((content ? content : empty) != PyTuple_GET_ITEM(cells, i)) {
            return 0;
        }
    }
    return 1;
}

static PyObject *
functions_as_seen(PyObject *module, PyObject *args)
{
    PyObject *functions, *states, *empty;
    Py_ssize_t n = paired_lists(args, "functions_as_seen", &functions, &states, &empty);
    if (n < 0) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!runs_as_seen(PyList_GET_ITEM(functions, i), PyList_GET_ITEM(states, i), empty)) {
            Py_RETURN_FALSE;
        }
    }
    Py_RETURN_TRUE;
}

/* Whether every key of a dict (of any dict's storage, a subclass's too: nothing of a subclass runs)
 * or of a class's own namespace, or every item of an exact list, is an exact str. */
static PyObject *
all_exact_str(PyObject *module, PyObject *items)
{
    if (PyList_CheckExact(items)) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
            if (!PyUnicode_CheckExact(PyList_GET_ITEM(items, i))) {
                Py_RETURN_FALSE;
            }
        }
        Py_RETURN_TRUE;
    }
    PyObject *dict = namespace_dict(items, "all_exact_str");
    if (dict == NULL) {
        return NULL;
    }
    Py_ssize_t at = 0;
    PyObject *key, *value;
    while (PyDict_Next(dict, &at, &key, &value)) {
        if (!PyUnicode_CheckExact(key)) {
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
     "value is a function with closure cells, keyword defaults or code compiled from a string, or an "
     "object whose exact type is one of `kinds`."},
    {"defined_classes", defined_classes, METH_VARARGS,
     "defined_classes(namespace: dict, name: str) -> list[(key, class)]: the entries whose value is a "
     "class whose own namespace binds `__module__` to the str `name`."},
    {"changeable_classes", changeable_classes, METH_VARARGS,
     "changeable_classes(namespace: dict | type, skip: set[int]) -> list[(key, class)]: the entries whose "
     "value is a class whose namespace can be changed (a heap type, not immutable) and whose id is not in "
     "`skip`."},
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
    {"moved", moved, METH_VARARGS,
     "moved(namespaces: list[dict | type], tags: list[int]) -> list[int]: the indices of the namespaces "
     "whose version tag is not the one at their index of `tags`."},
#endif
    {"mros_as_seen", mros_as_seen, METH_VARARGS,
     "mros_as_seen(classes: list[type], mros: list[tuple]) -> bool: whether each class's MRO is, by "
     "identity, the tuple at its index of `mros`."},
    {"functions_as_seen", functions_as_seen, METH_VARARGS,
     "functions_as_seen(functions, states: list, empty) -> bool: whether each function's code, "
     "defaults, keyword defaults and closure cells' contents are, by identity, those its state holds "
     "(code, defaults, kwdefaults, contents; `empty` stands for an empty cell)."},
    {"all_exact_str", all_exact_str, METH_O,
     "all_exact_str(items: dict | type | list) -> bool: whether every key of the dict (the class's own "
     "namespace) or every item of the exact list is an exact str."},
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

/* A dict's version tag (PEP 509), for the in-process guard's bindings checks (bindings.version_reader).
 *
 * CPython 3.11 gives every dict a new tag, from one process-wide counter, on every change: a namespace
 * whose tag is the one a check saw last is unchanged since, and the check need not compare it key by
 * key. Reading is all this does: whoever calls it learns a number, and can change nothing. Only where
 * the tag is where 3.11 keeps it and means what it means there; elsewhere the module has no `version`
 * and the guard compares every namespace. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
static PyObject *
version(PyObject *module, PyObject *namespace)
{
    if (PyType_Check(namespace)) {
        /* A class: its own namespace, the dict behind its __dict__'s mappingproxy. */
        namespace = ((PyTypeObject *)namespace)->tp_dict;
        if (namespace == NULL) {
            PyErr_SetString(PyExc_TypeError, "version(namespace): a class not yet ready");
            return NULL;
        }
    }
    if (!PyDict_Check(namespace)) {
        PyErr_SetString(PyExc_TypeError, "version(namespace): a dict or a class");
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(((PyDictObject *)namespace)->ma_version_tag);
}
#endif

static PyMethodDef methods[] = {
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
    {"version", version, METH_O,
     "version(namespace: dict | type) -> int: the dict's version tag (a class's: its namespace's), new "
     "after every change of the dict."},
#endif
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_dict_versions", "A dict's version tag (PEP 509), read in one C call.", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__dict_versions(void)
{
    return PyModule_Create(&module);
}

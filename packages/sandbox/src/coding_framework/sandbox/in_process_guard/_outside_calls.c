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
 * by library code. The first thing recorded stays recorded for the rest of the process.
 *
 * The watch is paused while a call of the program's runs, and while a coroutine such a call returned
 * is in flight: the profile function is removed (it slows every instruction of its thread). Each
 * pause is held by a key: the frame of the GuardedFunction call that paused (a call may pause only if
 * the tests' code started it: started_by_caller) or the coroutine in flight (only one a call the tests
 * started returned: `launch`); only that frame ends its pause, only that coroutine's landing ends its
 * flight. A count would let an instance of the guard's classes the program built itself pause without
 * resuming, or resume another's pause (red-team round 30). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

static PyObject *program_codes = NULL;   /* dict: id(code) -> code, every code object of the program */
static PyObject *test_codes = NULL;      /* dict: id(code) -> code, the tests' own code */
static PyObject *free_callers = NULL;    /* dict: id(code) -> code, whose frames may enter the program's */
static PyObject *callers = NULL;         /* dict: id(code) -> code, who may start a call of the program's */
static PyObject *call_pausers = NULL;    /* tuple of code objects that pause and resume for a call */
static PyObject *flight_pausers = NULL;  /* tuple of code objects that fly and land a coroutine */
static PyObject *handed_out = NULL;      /* dict: id(code) -> code, functions found in returned values */
static PyObject *registered = NULL;      /* dict: id(wrapper) -> wrapper, the harness's GuardedFunctions */
static PyObject *launched = NULL;        /* dict: id(coroutine) -> coroutine, returned by such calls */
static PyObject *pauses = NULL;          /* dict: id(key) -> key, the pauses standing (frames, coroutines) */
static PyObject *token = NULL;           /* what `allow` asks for: handed to the first `watch` only */
static PyThreadState *watched = NULL;    /* the tests' thread */
static PyObject *kept = NULL;            /* list: values calls returned, to be walked again (keep) */
static PyObject *graveyard = NULL;       /* list: kept values let go of that are not freed (retire) */
static PyObject *retirement = NULL;      /* what retire_unheld asks for: handed out once */
static PyObject *first = NULL;           /* what the watch recorded first: a str, or NULL */
static PyObject *first_change = NULL;    /* what walking the kept values again found first, or NULL */

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

/* Whether `item` is in `items` (a dict: id -> object), by identity; `unknown` where that cannot be
 * told (no memory for the key). */
static int
holds_by_id(PyObject *items, PyObject *item, int unknown)
{
    PyObject *key = PyLong_FromVoidPtr(item);
    if (key == NULL) {
        PyErr_Clear();
        return unknown;
    }
    PyObject *known = PyDict_GetItemWithError(items, key);
    Py_DECREF(key);
    if (known == NULL && PyErr_Occurred()) {
        PyErr_Clear();
        return unknown;
    }
    return known == item;
}

static int
add_by_id(PyObject *items, PyObject *item)
{
    PyObject *key = PyLong_FromVoidPtr(item);
    if (key == NULL) {
        return -1;
    }
    int done = PyDict_SetItem(items, key, item);
    Py_DECREF(key);
    return done;
}

/* 1 if `item` was in `items` and is taken out, 0 if it was not, -1 on an error. */
static int
take_by_id(PyObject *items, PyObject *item)
{
    if (!holds_by_id(items, item, 0)) {
        return 0;
    }
    PyObject *key = PyLong_FromVoidPtr(item);
    if (key == NULL) {
        return -1;
    }
    int done = PyDict_DelItem(items, key);
    Py_DECREF(key);
    return done < 0 ? -1 : 1;
}

static int
is_program_code(PyObject *code)
{
    return holds_by_id(program_codes, code, 1);  /* (cannot tell: counted as the program's) */
}

/* Whether a frame of `code` is what a test calls by name (a function or method, a class's `__init__`
 * or `__new__`, an object's `__call__`), not a special method the interpreter calls by itself (a
 * finalizer, a comparison, a subclass hook). */
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

/* Keep `what` in `slot` unless something is there already (the first finding stays). */
static void
keep_first(PyObject **slot, PyObject *what)
{
    if (*slot == NULL) {
        Py_INCREF(what);
        *slot = what;
    }
}

/* What `slot` holds, or None. */
static PyObject *
give(PyObject *slot)
{
    if (slot == NULL) {
        Py_RETURN_NONE;
    }
    Py_INCREF(slot);
    return slot;
}

static void
record(PyObject *what)
{
    keep_first(&first, what);
}

static void
record_text(const char *text)
{
    PyObject *what = PyUnicode_FromString(text);
    if (what == NULL) {
        PyErr_Clear();
        what = Py_True;  /* (still recorded, not None: no memory for the words) */
        Py_INCREF(what);
    }
    record(what);
    Py_DECREF(what);
}

/* Whether `given` is the token the first `watch` handed out and the watch's `state` exists; else
 * False, with `refusal` raised. */
static int
harness_token(PyObject *given, PyObject *state, const char *refusal)
{
    if (token == NULL || given != token || state == NULL) {
        PyErr_SetString(PyExc_RuntimeError, refusal);
        return 0;
    }
    return 1;
}

/* Whether a GuardedFunction.__call__ frame is a call of a GuardedFunction the harness registered
 * (its `self`): one the program built itself, with a `through` of its own, is no harness's. */
static int
registered_frame(PyFrameObject *frame)
{
    if (registered == NULL) {
        return 0;
    }
    PyObject *locals = PyFrame_GetLocals(frame);
    if (locals == NULL) {
        PyErr_Clear();
        return 0;
    }
    int found = 0;
    if (PyDict_CheckExact(locals)) {
        PyObject *self = PyDict_GetItemString(locals, "self");  /* (borrowed; a str key: no code runs) */
        found = self != NULL && holds_by_id(registered, self, 0);
    }
    Py_DECREF(locals);
    return found;
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
        if (back != NULL && call_pausers != NULL) {
            /* A GuardedFunction handing a call straight on (`through`) is not who called: its caller is. */
            PyObject *wrapper = (PyObject *)PyFrame_GetCode(back);
            if (wrapper == PyTuple_GET_ITEM(call_pausers, 0) && registered_frame(back)) {
                PyFrameObject *further = PyFrame_GetBack(back);
                Py_DECREF(back);
                back = further;
            }
            Py_DECREF(wrapper);
        }
        if (back != NULL) {
            PyObject *caller = (PyObject *)PyFrame_GetCode(back);
            /* (a frame of the program's calling another was itself judged as it was entered) */
            entered_from_outside = !(is_program_code(caller) || holds_by_id(free_callers, caller, 0)
                                     || ((holds_by_id(test_codes, caller, 0)
                                          || holds_by_id(handed_out, (PyObject *)code, 0))
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

/* Whether the thread asking is not the watched one (then pauses and flights are not its to change). */
static int
elsewhere(void)
{
    return watched == NULL || PyThreadState_Get() != watched;
}

/* The current frame (borrowed) if the watched thread asks from a frame of one of `pausers`; else
 * NULL, with an error set. */
static PyFrameObject *
pauser_frame(PyObject *pausers, const char *refusal)
{
    PyFrameObject *frame = PyEval_GetFrame();
    if (frame != NULL) {
        PyCodeObject *code = PyFrame_GetCode(frame);
        int ok = holds(pausers, (PyObject *)code);
        Py_DECREF(code);
        if (ok) {
            return frame;
        }
    }
    PyErr_SetString(PyExc_RuntimeError, refusal);
    return NULL;
}

/* Whether the caller of `frame` (the pauser's) is one of the callers: the tests' code, unittest's
 * where it calls what a test handed it. */
static int
started_by_caller(PyFrameObject *frame)
{
    PyFrameObject *back = PyFrame_GetBack(frame);
    if (back == NULL) {
        return 0;
    }
    PyObject *code = (PyObject *)PyFrame_GetCode(back);
    int allowed = holds_by_id(callers, code, 0);
    Py_DECREF(code);
    Py_DECREF(back);
    return allowed;
}

static int
set_profile(Py_tracefunc function)
{
    if (_PyEval_SetProfile(PyThreadState_Get(), function, NULL) < 0) {
        record_text("<the watch could not be set>");
        return -1;
    }
    return 0;
}

/* Stand a pause held by `key`; the profile function goes with the first. */
static int
stand(PyObject *key)
{
    if (holds_by_id(pauses, key, 0)) {
        return 0;
    }
    int first_pause = PyDict_GET_SIZE(pauses) == 0;
    if (add_by_id(pauses, key) < 0) {
        return -1;
    }
    return first_pause ? set_profile(NULL) : 0;
}

/* End the pause `key` holds; the profile function is back once none stands. 1 if `key` held one, 0
 * if it did not, -1 on an error. */
static int
end(PyObject *key)
{
    int taken = take_by_id(pauses, key);
    if (taken <= 0) {
        return taken;
    }
    if (PyDict_GET_SIZE(pauses) == 0 && set_profile(profile) < 0) {
        return -1;
    }
    return 1;
}

static PyObject *
watch(PyObject *module, PyObject *args)
{
    PyObject *codes, *tests, *free, *starters, *calls, *flights;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!:watch", &PyDict_Type, &codes, &PyDict_Type, &tests,
                          &PyDict_Type, &free, &PyDict_Type, &starters, &PyTuple_Type, &calls,
                          &PyTuple_Type, &flights)) {
        return NULL;
    }
    if (watched != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "sandbox: the watch is set already");
        return NULL;
    }
    PyFrameObject *frame = PyEval_GetFrame();
    if (frame == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "sandbox: the watch is set from Python code");
        return NULL;
    }
    program_codes = PyDict_Copy(codes);
    test_codes = PyDict_Copy(tests);
    free_callers = PyDict_Copy(free);
    callers = PyDict_Copy(starters);
    handed_out = PyDict_New();
    registered = PyDict_New();
    launched = PyDict_New();
    pauses = PyDict_New();
    kept = PyList_New(0);
    token = PyBaseObject_Type.tp_alloc(&PyBaseObject_Type, 0);
    if (program_codes == NULL || test_codes == NULL || free_callers == NULL || callers == NULL
            || handed_out == NULL || registered == NULL || launched == NULL || pauses == NULL || kept == NULL
            || token == NULL) {
        Py_CLEAR(program_codes);
        Py_CLEAR(test_codes);
        Py_CLEAR(free_callers);
        Py_CLEAR(callers);
        Py_CLEAR(handed_out);
        Py_CLEAR(registered);
        Py_CLEAR(launched);
        Py_CLEAR(pauses);
        Py_CLEAR(kept);
        Py_CLEAR(token);
        return NULL;
    }
    Py_INCREF(calls);
    call_pausers = calls;
    Py_INCREF(flights);
    flight_pausers = flights;
    watched = PyThreadState_Get();
    /* Paused until the first resume, by the frame setting the watch (the program loads meanwhile). */
    if (add_by_id(pauses, (PyObject *)frame) < 0) {
        return NULL;
    }
    Py_INCREF(token);
    return token;
}

static PyObject *
pause_watch(PyObject *module, PyObject *unused)
{
    if (elsewhere()) {
        Py_RETURN_NONE;
    }
    PyFrameObject *frame = pauser_frame(call_pausers, "sandbox: only the harness pauses its watch");
    if (frame == NULL) {
        return NULL;
    }
    if (!started_by_caller(frame)) {
        record_text("a call of the program's made by other code than the tests'");
        PyErr_SetString(PyExc_RuntimeError,
                        "sandbox: a call of the program's made by other code than the tests'");
        return NULL;
    }
    if (stand((PyObject *)frame) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* Whether a GuardedFunction's call goes straight on to the function it guards, unchecked: in another
 * thread than the watched one while a pause stands (the program's threads run within its calls); where
 * the caller is not
 * one of the callers (the tests' code, unittest's where it calls what a test handed it) and a pause
 * stands (the program's code calling its own methods within its call, or a coroutine of its in
 * flight), or, for a method (`method`), also where none stands: library code calling it, judged then
 * by the profile function as if it called the method itself (a Flask class-based view's methods).
 * Otherwise the call is the tests', checked: the caller pauses (pause) and the checks run. */
static PyObject *
through(PyObject *module, PyObject *method)
{
    if (elsewhere()) {
        /* Another thread: the program's own, within a call of its (a pause stands), or the tests' (a
         * test's thread pool calling the program's: checked, as ever). */
        if (watched != NULL && pauses != NULL && PyDict_GET_SIZE(pauses) > 0) {
            Py_RETURN_TRUE;
        }
        Py_RETURN_FALSE;
    }
    PyFrameObject *frame = pauser_frame(call_pausers, "sandbox: only the harness asks how a call goes");
    if (frame == NULL) {
        return NULL;
    }
    if (started_by_caller(frame)) {
        Py_RETURN_FALSE;
    }
    if (PyDict_GET_SIZE(pauses) > 0 || PyObject_IsTrue(method) == 1) {
        Py_RETURN_TRUE;
    }
    Py_RETURN_FALSE;
}

/* The GuardedFunctions the harness made for methods of the program's classes (`register`, with the
 * token): the value walk takes those in a class of the program's for guarded, and any other object
 * of the guard's class there for the program's (one it built itself, with checks of its own). */
static PyObject *
register_wrapper(PyObject *module, PyObject *args)
{
    PyObject *given, *wrapper;
    if (!PyArg_ParseTuple(args, "OO:register", &given, &wrapper)) {
        return NULL;
    }
    if (!harness_token(given, registered, "sandbox: only the harness registers its guards")) {
        return NULL;
    }
    if (add_by_id(registered, wrapper) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
is_registered(PyObject *module, PyObject *wrapper)
{
    if (registered != NULL && holds_by_id(registered, wrapper, 0)) {
        Py_RETURN_TRUE;
    }
    Py_RETURN_FALSE;
}

static PyObject *
resume_watch(PyObject *module, PyObject *unused)
{
    if (elsewhere()) {
        Py_RETURN_NONE;
    }
    PyFrameObject *frame = pauser_frame(call_pausers, "sandbox: only the harness resumes its watch");
    if (frame == NULL) {
        return NULL;
    }
    int ended = end((PyObject *)frame);
    if (ended < 0) {
        return NULL;
    }
    if (ended == 0) {
        record_text("a resume of the watch by a frame that had not paused it");
        PyErr_SetString(PyExc_RuntimeError, "sandbox: the watch was resumed by a frame that had not paused it");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
launch(PyObject *module, PyObject *coroutine)
{
    if (elsewhere()) {
        Py_RETURN_NONE;
    }
    PyFrameObject *frame = pauser_frame(call_pausers, "sandbox: only the harness launches a coroutine");
    if (frame == NULL) {
        return NULL;
    }
    if (!holds_by_id(pauses, (PyObject *)frame, 0) || !PyCoro_CheckExact(coroutine)) {
        PyErr_SetString(PyExc_RuntimeError, "sandbox: only a call the tests started launches a coroutine");
        return NULL;
    }
    if (add_by_id(launched, coroutine) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
fly(PyObject *module, PyObject *coroutine)
{
    if (elsewhere()) {
        Py_RETURN_NONE;
    }
    if (pauser_frame(flight_pausers, "sandbox: only the harness flies a coroutine") == NULL) {
        return NULL;
    }
    if (!holds_by_id(launched, coroutine, 0)) {
        record_text("a flight of a coroutine no call of the tests' returned");
        PyErr_SetString(PyExc_RuntimeError, "sandbox: a flight of a coroutine no call of the tests' returned");
        return NULL;
    }
    if (stand(coroutine) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
land(PyObject *module, PyObject *coroutine)
{
    if (elsewhere()) {
        Py_RETURN_NONE;
    }
    if (pauser_frame(flight_pausers, "sandbox: only the harness lands a coroutine") == NULL) {
        return NULL;
    }
    if (take_by_id(launched, coroutine) < 0 || end(coroutine) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
allow(PyObject *module, PyObject *args)
{
    PyObject *given, *codes;
    if (!PyArg_ParseTuple(args, "OO!:allow", &given, &PyList_Type, &codes)) {
        return NULL;
    }
    if (!harness_token(given, handed_out, "sandbox: only the harness tells the watch what was returned")) {
        return NULL;
    }
    /* Only for a value a call returned: the checks (this frame) sent it by a registered GuardedFunction's
     * call. The program can reach a GuardedFunction's checks (`send`) and tell them a value of its own
     * was returned, handing out functions of its choosing (red-team round 57b). */
    PyFrameObject *checks = PyEval_GetFrame();
    PyFrameObject *sender = checks == NULL ? NULL : PyFrame_GetBack(checks);
    int genuine = 0;
    if (sender != NULL) {
        PyObject *code = (PyObject *)PyFrame_GetCode(sender);
        genuine = call_pausers != NULL && code == PyTuple_GET_ITEM(call_pausers, 0) && registered_frame(sender);
        Py_DECREF(code);
        Py_DECREF(sender);
    }
    if (!genuine) {
        Py_RETURN_NONE;
    }
    Py_ssize_t n = PyList_GET_SIZE(codes);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *code = PyList_GET_ITEM(codes, i);
        if (PyCode_Check(code) && is_program_code(code) && add_by_id(handed_out, code) < 0) {
            return NULL;
        }
    }
    Py_RETURN_NONE;
}

/* The values calls of the program's returned, walked again as each call starts and as each test
 * ends (a value changed after its check by what no watch sees: a warnings filter of C callables
 * planted mock.ANY, red-team round 30; a callback of C callables in a returned Axes' registry, round
 * 31; a value returned in setUpClass, or changed back by a later call, round 32). `keep` asks for the
 * token; `kept` hands anyone the values kept (the most recent `n`, where given); `changed` records
 * what walking them again found; `drop_unheld` and `retire_unheld` retire those nothing else holds
 * (outside_calls.py says when each may). */
static PyObject *
keep(PyObject *module, PyObject *args)
{
    PyObject *given, *value;
    if (!PyArg_ParseTuple(args, "OO:keep", &given, &value)) {
        return NULL;
    }
    if (!harness_token(given, kept, "sandbox: only the harness keeps returned values")) {
        return NULL;
    }
    for (Py_ssize_t i = PyList_GET_SIZE(kept) - 1; i >= 0; i--) {
        if (PyList_GET_ITEM(kept, i) == value) {
            Py_RETURN_NONE;  /* (kept already: an object each of its methods' calls is walked with) */
        }
    }
    if (PyList_Append(kept, value) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
kept_values(PyObject *module, PyObject *args)
{
    Py_ssize_t recent = 0;
    if (!PyArg_ParseTuple(args, "|n:kept", &recent)) {
        return NULL;
    }
    if (kept == NULL) {
        return PyList_New(0);
    }
    Py_ssize_t n = PyList_GET_SIZE(kept);
    return PyList_GetSlice(kept, recent > 0 && recent < n ? n - recent : 0, n);
}

static PyObject *
changed(PyObject *module, PyObject *what)
{
    if (!PyUnicode_CheckExact(what)) {
        PyErr_SetString(PyExc_TypeError, "changed(what): a str");
        return NULL;
    }
    keep_first(&first_change, what);
    Py_RETURN_NONE;
}

static PyObject *
change_found(PyObject *module, PyObject *unused)
{
    return give(first_change);
}

/* Whether `value` can change nothing: an exact int, float, complex, str, bytes, bool or None. */
static int
scalar(PyObject *value)
{
    return value == Py_None || PyBool_Check(value) || PyLong_CheckExact(value) || PyFloat_CheckExact(value)
        || PyComplex_CheckExact(value) || PyUnicode_CheckExact(value) || PyBytes_CheckExact(value);
}

/* Whether `value`'s attribute `name` (read through its type's C getters) is None; -1 where unreadable. */
static int
attribute_none(PyObject *value, const char *name)
{
    PyObject *read = PyObject_GetAttrString(value, name);
    if (read == NULL) {
        PyErr_Clear();
        return -1;
    }
    int none = read == Py_None;
    Py_DECREF(read);
    return none;
}

/* Whether `value` is exactly a numpy array (numpy's own static type, read by name: no class of the
 * program's can be one) with no weak reference, of a plain numeric dtype (holding no Python objects;
 * no fields, sub-array or metadata, whose objects could carry finalizers: red-team round 60d), that
 * owns its data or views one such array (`depth` bases up: `reshape`, `.T` and slices are views).
 * Its attributes are read through numpy's C getters. */
static int
numeric_array(PyObject *value, int depth)
{
    PyTypeObject *kind = Py_TYPE(value);
    if (depth <= 0 || (kind->tp_flags & Py_TPFLAGS_HEAPTYPE) || strcmp(kind->tp_name, "numpy.ndarray") != 0) {
        return 0;
    }
    if (kind->tp_weaklistoffset > 0 && *(PyObject **)((char *)value + kind->tp_weaklistoffset) != NULL) {
        return 0;
    }
    PyObject *dtype = PyObject_GetAttrString(value, "dtype");
    if (dtype == NULL) {
        PyErr_Clear();
        return 0;
    }
    PyObject *objects = PyObject_GetAttrString(dtype, "hasobject");
    int plain = objects == Py_False && attribute_none(dtype, "names") == 1
        && attribute_none(dtype, "subdtype") == 1 && attribute_none(dtype, "metadata") == 1;
    if (objects == NULL) {
        PyErr_Clear();
    }
    Py_XDECREF(objects);
    Py_DECREF(dtype);
    if (!plain) {
        return 0;
    }
    PyObject *base = PyObject_GetAttrString(value, "base");
    if (base == NULL) {
        PyErr_Clear();
        return 0;
    }
    int owned = base == Py_None || numeric_array(base, depth - 1);
    Py_DECREF(base);
    return owned;
}

/* Whether `ok(item, depth - 1)` holds for every item of `value` (an exact tuple, list or set; a dict's
 * keys and values): 1 or 0; -1 where `value` is none of these. */
static int
every_part(PyObject *value, int depth, int (*ok)(PyObject *, int))
{
    if (PyTuple_CheckExact(value) || PyList_CheckExact(value)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(value);
        PyObject **items = PySequence_Fast_ITEMS(value);
        for (Py_ssize_t i = 0; i < n; i++) {
            if (!ok(items[i], depth - 1)) {
                return 0;
            }
        }
        return 1;
    }
    Py_ssize_t at = 0;
    PyObject *key, *item;
    if (PyDict_CheckExact(value)) {
        while (PyDict_Next(value, &at, &key, &item)) {
            if (!ok(key, depth - 1) || !ok(item, depth - 1)) {
                return 0;
            }
        }
        return 1;
    }
    if (PyAnySet_CheckExact(value)) {
        Py_hash_t hash;
        while (_PySet_NextEntry(value, &at, &item, &hash)) {
            if (!ok(item, depth - 1)) {
                return 0;
            }
        }
        return 1;
    }
    return -1;
}

static int parts_unheld(PyObject *value, int depth);

/* A part nothing but its container holds (a count of one reference; held twice by it counts as held
 * elsewhere), and so in turn; or a scalar. */
static int
part_unheld(PyObject *item, int depth)
{
    return scalar(item) || (Py_REFCNT(item) == 1 && parts_unheld(item, depth));
}

/* Whether nothing but `value` itself holds any part of it: it is a scalar, or an exact tuple, list,
 * dict (keys and values), set or frozenset whose every item is part_unheld (`depth` levels down).
 * Anything else may keep parts a test holds: not known to be unheld. */
static int
parts_unheld(PyObject *value, int depth)
{
    if (scalar(value)) {
        return 1;
    }
    return depth > 0 && every_part(value, depth, part_unheld) == 1;
}

/* Whether freeing `value` can run no code: a scalar, an exact tuple, list, dict (keys and values),
 * set or frozenset of such (none of them takes a weak reference or has a finalizer), or a numpy array
 * of numbers that owns its data or views one such (numeric_array; its deallocation frees memory only). */
static int
inert(PyObject *value, int depth)
{
    if (scalar(value)) {
        return 1;
    }
    if (depth <= 0) {
        return 0;
    }
    int all = every_part(value, depth, inert);
    return all >= 0 ? all : numeric_array(value, 4);
}

/* Let go of the kept value at `index`: freed where that runs no code (inert), else moved to the
 * graveyard, never freed while the child lives (a finalizer it carries, a `weakref.finalize` of C
 * callables such as `operator.setitem`, would run as it died, after its last walk, and rewrite a part
 * the tests still hold: red-team round 60a), and not walked again. */
static int
retire(Py_ssize_t index)
{
    PyObject *value = PyList_GET_ITEM(kept, index);
    if (!inert(value, 8)) {
        if (graveyard == NULL && (graveyard = PyList_New(0)) == NULL) {
            return -1;
        }
        if (PyList_Append(graveyard, value) < 0) {
            return -1;
        }
    }
    return PyList_SetSlice(kept, index, index + 1, NULL);
}

/* Anyone (recheck_kept, after each call's start walks the kept values): retire the kept values that
 * nothing else holds, an exact tuple, list, dict or set only if nothing else holds any part of it
 * either (parts_unheld): a container the tests unpacked (`a, n = f()`) stays kept, walked again, until
 * its test ends. (Another object's parts are not followed: a part the tests took from it, `x =
 * f().data`, is not watched once it is retired, as before; see outside_calls' docstring.) */
static PyObject *
drop_unheld(PyObject *module, PyObject *unused)
{
    if (kept == NULL) {
        Py_RETURN_NONE;
    }
    for (Py_ssize_t i = PyList_GET_SIZE(kept) - 1; i >= 0; i--) {  /* (retire runs no code) */
        PyObject *value = PyList_GET_ITEM(kept, i);
        /* (every_part: -1 for what is no exact container, whose parts are not followed) */
        if (Py_REFCNT(value) == 1 && every_part(value, 8, part_unheld) != 0 && retire(i) < 0) {
            return NULL;
        }
    }
    Py_RETURN_NONE;
}

/* The token retire_unheld asks for, handed out once (to the harness's thread, before the program
 * runs); None after that. */
static PyObject *
retirement_token(PyObject *module, PyObject *unused)
{
    if (retirement != NULL) {
        Py_RETURN_NONE;
    }
    retirement = PyBaseObject_Type.tp_alloc(&PyBaseObject_Type, 0);
    if (retirement == NULL) {
        return NULL;
    }
    Py_INCREF(retirement);
    return retirement;
}

/* The harness's thread, at the end of a test (once walked, the tests' thread waiting): retire every
 * kept value whose id is not in `retained` (a set of ints: what a later test can still compare,
 * suite_runner._Harness.held_across_tests), whoever else holds it. */
static PyObject *
retire_unheld(PyObject *module, PyObject *args)
{
    PyObject *given, *retained;
    if (!PyArg_ParseTuple(args, "OO!:retire_unheld", &given, &PySet_Type, &retained)) {
        return NULL;
    }
    if (retirement == NULL || given != retirement) {
        PyErr_SetString(PyExc_RuntimeError, "sandbox: only the harness retires kept values");
        return NULL;
    }
    if (kept == NULL) {
        Py_RETURN_NONE;
    }
    for (Py_ssize_t i = PyList_GET_SIZE(kept) - 1; i >= 0; i--) {
        PyObject *key = PyLong_FromVoidPtr(PyList_GET_ITEM(kept, i));
        if (key == NULL) {
            return NULL;
        }
        int held = PySet_Contains(retained, key);
        Py_DECREF(key);
        if (held < 0 || (!held && retire(i) < 0)) {
            return NULL;
        }
    }
    Py_RETURN_NONE;
}

static PyObject *
paused(PyObject *module, PyObject *unused)
{
    return PyLong_FromSsize_t(pauses == NULL ? 0 : PyDict_GET_SIZE(pauses));
}

static PyObject *
ran(PyObject *module, PyObject *unused)
{
    return give(first);
}

static PyMethodDef methods[] = {
    {"watch", watch, METH_VARARGS,
     "watch(program_codes, test_codes, free_callers, callers: dict[id, code], call_pausers, "
     "flight_pausers: tuple[code]) -> token: watch this thread, paused by the calling frame until it "
     "resumes. Once per process."},
    {"pause", pause_watch, METH_NOARGS,
     "pause(): a call pauser's frame, called by one of the callers, pauses the watch until it resumes."},
    {"resume", resume_watch, METH_NOARGS, "resume(): end the pause the calling frame stood."},
    {"through", through, METH_O,
     "through(method: bool) -> bool: a call pauser's frame asks whether its call goes straight on, unchecked."},
    {"register", register_wrapper, METH_VARARGS,
     "register(token, wrapper): a GuardedFunction of the harness's for a method of the program's."},
    {"registered", is_registered, METH_O, "registered(obj) -> bool: whether the harness registered obj."},
    {"launch", launch, METH_O,
     "launch(coroutine): a pausing call pauser's frame tells the watch its call returned this coroutine."},
    {"fly", fly, METH_O, "fly(coroutine): a flight pauser pauses the watch while a launched coroutine flies."},
    {"land", land, METH_O, "land(coroutine): the coroutine's flight ends."},
    {"allow", allow, METH_VARARGS,
     "allow(token, codes: list[code]): the program's functions found in a value its call returned may be "
     "called by library code by name (`token`: what watch returned)."},
    {"paused", paused, METH_NOARGS, "paused() -> int: the pauses standing (0: the watch runs)."},
    {"keep", keep, METH_VARARGS, "keep(token, value): a value a call returned, to be walked again."},
    {"kept", kept_values, METH_VARARGS, "kept(n=0) -> list: the values kept (the most recent n, n > 0)."},
    {"changed", changed, METH_O, "changed(what: str): record what walking them again found."},
    {"change_found", change_found, METH_NOARGS, "change_found() -> str | None: what `changed` recorded first."},
    {"drop_unheld", drop_unheld, METH_NOARGS,
     "drop_unheld(): retire the kept values that nothing else holds (an exact tuple, list, dict or set "
     "only if nothing else holds any part of it either)."},
    {"retirement_token", retirement_token, METH_NOARGS,
     "retirement_token() -> object | None: what retire_unheld asks for (the first call only)."},
    {"retire_unheld", retire_unheld, METH_VARARGS,
     "retire_unheld(token, retained: set[int]): retire the kept values whose id is not in `retained` "
     "(not walked again; freed only where that runs no code)."},
    {"ran", ran, METH_NOARGS,
     "ran() -> str | None: the first of the program's code entered from outside while the watch ran (its "
     "qualified name), or a word on the watch's misuse; None if nothing."},
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

"""Layer 3's value check: what a value the program returns may not be when tests in the same process
compare it — of a class taking a comparison or conversion method from the program, or a library object
told to equal anything (unittest.mock.ANY, a configured mock, pytest.approx).

Everything here reads classes and objects through type's own descriptors and CPython's C-level
attributes, never by calling anything of the value's class.
"""

from __future__ import annotations

import builtins
import collections
import contextvars
import dataclasses
import datetime
import enum
import functools
import inspect
import itertools
import opcode
import operator
import queue
import sys
import threading
import types
import typing
import weakref
from collections.abc import Callable

from coding_framework.sandbox.in_process_guard.outside_calls import registered
from coding_framework.sandbox.in_process_guard.thread_states import live_contexts as _live_contexts

try:  # (the compiled reads of namespaces; None where not built: the same in Python)
    from coding_framework.sandbox.in_process_guard._namespace_reads import all_exact_str as _C_ALL_STR
except ImportError:
    _C_ALL_STR = None

# Special methods the trusted tests' comparisons, conversions and checks call on a value: a value whose
# class (or metaclass) takes one of these from the program's code could answer a test with the
# program's logic (an `__eq__` that is always true).
ANSWERING_METHODS = frozenset({
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__", "__len__",
    "__iter__", "__next__", "__contains__", "__getitem__", "__float__", "__int__", "__index__",
    "__complex__", "__round__", "__abs__", "__neg__", "__add__", "__radd__", "__sub__", "__rsub__",
    "__mul__", "__rmul__", "__truediv__", "__rtruediv__", "__array__", "__array_ufunc__",
    "__array_function__", "__array_interface__", "__getattr__", "__getattribute__", "__str__",
    "__repr__", "__format__", "__instancecheck__", "__subclasscheck__", "__class__", "__dir__",
    "__fspath__", "__enter__", "__exit__", "__del__", "__missing__",
})
# Special methods of the program's classes that guard_class (guarded_calls) makes GuardedFunctions of,
# besides every method not named as a special method: what a test's own code asks of an object it holds
# (`len(x)`, `iter(x)`, `x[0]`, `str(x)`, making one), whose answers it must then compare, so that a
# forgery needs the answer. Not the comparisons and conversions (an always-equal object), `__contains__`
# (in everything), `__bool__`, `__exit__` (swallowing the test's failures), ...: those stay refused.
GUARDED_SPECIAL_METHODS = frozenset({
    "__init__", "__call__", "__len__", "__iter__", "__next__", "__reversed__", "__getitem__",
    "__setitem__", "__delitem__", "__repr__", "__str__", "__format__",
})
_UNGUARDED_ANSWERING = ANSWERING_METHODS - GUARDED_SPECIAL_METHODS
MAX_WALK = 500_000
"""Objects other than ints, floats, strings, bytes, bools and None looked at per returned value; a
value holding more is refused as too large to check (never passed unlooked-at). A matplotlib Axes
holds about 1,400 (2,900 once drawn), so a drawn 8x8 grid of plots about 116,000: the walk looks at
one in 2-5 µs here."""

# What the value checks call, bound here once: this module's namespace is compared (strictly) before
# they run, so the candidate cannot rebind them, and builtins it could. Class attributes are read
# through type's own descriptors, so a class or metaclass of the program's cannot answer for itself.
_type, _id, _issubclass, _list, _set, _len = builtins.type, builtins.id, builtins.issubclass, \
    builtins.list, builtins.set, builtins.len
_any, _map, _next, _enumerate = builtins.any, builtins.map, builtins.next, builtins.enumerate
_callable = builtins.callable
_all = builtins.all
_starts = str.startswith
_dict_keys, _dict_values, _object_getattribute = dict.keys, dict.values, object.__getattribute__
_MRO = type.__dict__["__mro__"].__get__
_TYPE_QUALNAME = type.__dict__["__qualname__"].__get__


def _QUALNAME(klass: type) -> str:
    """`klass.__qualname__` where it is an exact str; else a placeholder. A class's name may be a str
    subclass whose `__eq__` or `__hash__` is a C callable of the program's: comparing or hashing it
    (the walk asks of every class whether it is werkzeug's LocalProxy; `_maker` looks a class up by
    name) ran it with no frame to see, and it rewrote the value being walked (red-team round 61d)."""
    name = _TYPE_QUALNAME(klass)
    return name if _type(name) is str else "<a name that is not a str>"

_is, _repeat, _sum = operator.is_, itertools.repeat, builtins.sum
_registered = registered  # (outside_calls: the GuardedFunctions guard_class made)


def _ids(kinds) -> frozenset[int]:
    """The ids of `kinds` (classes that live as long as this module). Classes are looked up in sets and
    dicts by id here, never by value: hashing or comparing a class runs its metaclass's `__hash__` and
    `__eq__`, which may be the program's (red-team round 23: one that ran during the walk changed the
    value already checked, then removed itself from its metaclass before the metaclass was looked at)."""
    return frozenset(_map(_id, kinds))


_PLAIN = (int, float, complex, str, bytes, bool, type(None))
_PLAIN_IDS, _LIST, _chain = _ids(_PLAIN), list, itertools.chain.from_iterable
_PLAIN_OR_FLAT_IDS = _PLAIN_IDS | _ids((tuple, list))
_DEFAULTDICT = collections.defaultdict
_DEFAULT_FACTORY = collections.defaultdict.__dict__["default_factory"].__get__
_SEQUENCES = (list, tuple, set, frozenset, collections.deque)
_FUNCTION, _METHOD, _PARTIAL, _OBJECT, _TYPE, _DICT = (types.FunctionType, types.MethodType,
                                                       functools.partial, object, type, dict)


def foreign_answerer(
    value: object, is_trusted: Callable[[types.CodeType], bool], libraries: tuple | None = None,
    functions: list | None = None, classes: list | None = None, program_code_seen: bool = False,
    members: list | None = None, variables: list | None = None, contexts: list | None = None,
) -> str | None:
    """What in `value` (walking containers, numpy object arrays (numpy's types in `libraries`, see
    library_types), pandas containers and what instances of Python classes hold, the program's and
    libraries' alike) has a class or metaclass that takes an ANSWERING_METHODS method from untrusted
    code, or is a library object told to equal anything; None if nothing. `functions`, if given, gets
    the code of every function met (what library objects in the value may call: outside_calls).
    `classes`, if given, gets the classes of the objects met whose only methods of the program's are
    such as guard_class makes GuardedFunctions of (_guardable), which are then not refused here: the
    caller guards them before the test gets the value (a walk without `classes` refuses them until
    then). `members`, if given, gets (namespace, name, callable) for each callable of the program's
    (_program_member) that an object of the program's class or a SimpleNamespace holds as an attribute:
    the caller guards it there (`self.go = types.MethodType(_go, self)` escaped guard_class). With
    `program_code_seen`, methods of the program's (answering or not) are not refused: for
    values the tests may never compare (the program's globals), where the watch (outside_calls) finds
    such a method run outside a call, and guard_class guards those a test calls by name; what runs no
    code of the program's (a library object equal to anything) still is. `variables`, if given, gets
    each ContextVar a werkzeug LocalProxy in the value reads (context_values: the caller looks at what
    they hold again as each later call returns). `contexts`, if given, gets the live contexts, where
    the walk searched for them (an empty list: not searched): the caller's next walks and
    context_values of the same check need not search again."""
    libraries = library_types() if libraries is None else libraries
    todo, seen, budget = [value], _set(), MAX_WALK
    walked, weak_proxies, inside = [], [], []  # looked at; weakref proxies among it; see the loop
    # Per class met, what its checks find in the class alone (_ClassFacts): a matplotlib figure holds
    # thousands of objects of a few dozen classes. Kept for this walk only, which runs no code of the
    # program's, so no class can change under it.
    facts: dict[int, _ClassFacts] = {}  # (by the class's id)
    # Every live contextvars.Context, found once a LocalProxy is met (_proxied).
    contexts = [] if contexts is None else contexts
    while todo or inside:
        # (What pandas' objects hold is walked from `inside`, and what it leads to: there, pandas' own
        # extension arrays are data to look into, not values a test compares; see below.)
        out = todo if todo else inside
        item = out.pop()
        kind = _type(item)
        if _id(kind) in _PLAIN_IDS or _id(item) in seen:
            continue
        if budget == 0:
            return (f"a value too large to check: more than {MAX_WALK} objects other than numbers, strings "
                    "and bytes")
        budget -= 1
        seen.add(_id(item))
        walked.append(item)
        if _FLAGS(kind) & _HEAP_TYPE and _registered(item):
            continue  # (a GuardedFunction of the harness's: what it calls is guarded)
        if kind is _FUNCTION and functions is not None:
            _functions_held(item, functions)
        known = facts.get(_id(kind))
        if known is None:
            known = facts[_id(kind)] = _class_facts(kind, is_trusted, libraries)
            if known.guardable and classes is not None:
                classes.append(kind)
        # (Its methods are guarded before the test's turn, or the watch sees them run.)
        guarded = (known.guardable and classes is not None) or program_code_seen
        # First the program's code anywhere in the class (before any state of the value is read), then
        # library objects told what to answer, then comparison methods that answer anything without
        # the program's code (a genuine mock's are mock objects and proxies, judged by the second).
        culprit = ((None if guarded else known.answering)
                   or (known.maybe_permissive and _permissive_library_value(item, kind))
                   or (known.comparison_unseen if program_code_seen else known.comparison)
                   or (known.layout[1] is not None
                       and _method_set_on_instance(item, kind, is_trusted, known.layout))
                   or known.special)
        if culprit:
            return culprit
        if known.program_method and not guarded and _any(known.shape[0] is shape for shape in _CONTAINERS):
            # (Of a list, dict or UserList subclass too: UserList's own `__eq__` called the program's
            # `_UserList__cast`, which made the list equal itself, round 57b.)
            return (f"a {_QUALNAME(kind)} whose {known.program_method} is the program's (a test, or the "
                    "library's own methods, calling it runs the program's code)")
        # What the program's classes hold as class attributes: a library comparison a class of the
        # program's copies (UserList's or Fraction's `__eq__`) reads `self.data` or `self._numerator`,
        # found on the class when the instance has none (red-team round 21).
        _push(out, known.class_data)
        shape, detail = known.shape
        if known.heap and shape is not _AS_INSTANCE:
            # What an instance of a Python class holds beside what its shape reads: a pandas Series'
            # name (and what else the program set on a Series, DataFrame or Index; their data and
            # caches are read as pandas containers, below), a dict or list subclass's attributes
            # (red-team round 23).
            skip = _PANDAS_INTERNALS if shape is _AS_PANDAS else ()
            out.extend(_instance_state(item, kind, known.layout, skip))
        if shape is _AS_DICT:
            if detail and _makes_program_values(_DEFAULT_FACTORY(item), is_trusted):
                return (f"a {_QUALNAME(kind)} whose default_factory is the program's (what it makes for a "
                        "missing key is never seen)")
            _push(out, _dict_keys(item))
            _push(out, _dict_values(item))
        elif shape is _AS_SEQUENCE:
            _push(out, item)  # (a view iterates its dict's own storage, whatever the dict's class)
        elif shape is _AS_INSTANCE:
            # What instances of Python classes hold: the program's (the tests read their attributes,
            # `r.mean`), those comparing in Python (Fraction, a dataclass) and every other library
            # object: the tests read a genuine matplotlib Axes' line data through its own getters,
            # `ax.lines[0].get_ydata()`, which hand out what the program set there (red-team round 22).
            # (A class made in C cannot take a Python comparison: its namespace cannot be written.)
            if known.program_method and not guarded:
                return (f"a {_QUALNAME(kind)} whose {known.program_method} is the program's (a test reading "
                        "it runs the program's code)")
            if members is not None and (known.guardable or kind is _NAMESPACE or known.program_class):
                _program_members(item, kind, known.layout, is_trusted, members)
            (inside if known.pandas_object else out).extend(_instance_state(item, kind, known.layout))
        elif shape is _AS_ARRAY:
            if detail is None:
                return (f"a {_QUALNAME(kind)}, a subclass of numpy's ndarray that numpy did not make (its "
                        "methods answer what numpy's comparisons and tests read)")
            _push(out, _array_cells(item, detail))
        elif shape is _AS_ITERATOR:
            # An iterator the tests may unpack: what it will hand out is in what its C type pickles
            # (the sequence and position, the function and source of a map), read without advancing it.
            held = detail.__reduce__(item)[1:]
            parts = (f for part in held if _type(part) is tuple for f in part)
            if _any(_makes_program_values(f, is_trusted) for f in parts):
                return f"a {_QUALNAME(kind)} whose items the program's code makes as the test takes them"
            out.extend(held)
        elif shape is _AS_GENERATOR and item is not value:
            return "a generator inside the value (what it yields cannot be seen before the test takes it)"
        elif shape is _AS_WEAK_PROXY:
            weak_proxies.append(item)  # (judged once the walk is done, below)
        elif shape is _AS_MAPPING_PROXY and item is not _EMPTY_METADATA:
            return f"a {_QUALNAME(kind)}, whose comparisons are those of an object that cannot be read"
        elif shape is _AS_EXTENSION_ARRAY:
            if known.pandas_array and out is not inside and known.truth_refused:
                continue  # (its truth raises, as a numpy array's does: it is looked into as data, above)
            if out is inside and known.pandas_array:
                # pandas' own array inside pandas' objects (a groupby's keys, a Series' block): its
                # state is walked above. Met again as a value, it is refused, so not marked seen.
                seen.discard(_id(item))
                continue
            # `pd.array([7]) == 5` is an array of False whose truth is its length: "equal" in a test
            # (unless refuse_array_truth ran, before the program, in a process that had pandas loaded).
            return (f"a pandas {_QUALNAME(kind)}, whose comparison answers with an array that is true "
                    "whenever it is not empty")
        elif shape is _AS_DELEGATING:
            out.append(_held_data(item, kind))
        elif shape is _AS_PANDAS:
            if not detail:
                return (f"a {_QUALNAME(kind)}, a subclass of a pandas container that pandas did not make "
                        "(its own attributes decide what pandas' comparisons read)")
            own = _instance_dict(item, kind, known.layout)
            internal = _foreign_internals(own, detail, is_trusted)
            if internal:
                return (f"a pandas {detail} whose {internal} pandas did not make (pandas' own code, reading "
                        "the container, would run it)")
            arrays = _pandas_arrays(own, detail)
            foreign = _foreign_dtype(arrays, is_trusted, libraries[1])
            if foreign:
                return (f"a pandas {detail} holding a {foreign}, an array type pandas did not make (its "
                        "code answers what pandas reads)")
            # Its arrays (each block's values, an Index's data) and labels, read from what was vetted,
            # never through pandas' properties or a cached dtype (red-team rounds 24 and 25: the
            # block's or Index's cached dtype said int64 over object cells); then what pandas cached
            # for an Index (its dtype, levels, flags: the program's to set too, and pandas hands them
            # out), bar the lookup engine, a C object of pandas' own.
            inside.extend(arrays)
            out.extend(_pandas_labels(own, detail))
            cache = own.get("_cache")
            if _type(cache) is _DICT and all_exact_str(cache):
                engine = cache.get("_engine")
                if engine is not None and not _pandas_made(_type(engine), is_trusted):
                    return f"a pandas {detail} whose lookup engine pandas did not make"
                inside.extend(value for name, value in cache.items() if name != "_engine")
            elif cache is not None:
                return f"a pandas {detail} whose cache is no plain dict with names for keys"
        elif shape is _AS_CALL_HOLDER:
            out.extend(_held_by_callable(item, kind))  # what a bound method or partial calls with
        elif shape is _AS_CONTEXT_PROXY:
            # What it stands for in any context (its comparisons are that object's), walked as part of
            # the value; nothing where its context variable holds nothing (every comparison raises).
            targets = _proxied(item, kind, detail, is_trusted, contexts, variables)
            if targets is None:
                return (f"a {_QUALNAME(kind)} whose object cannot be read without running code (only a "
                        "proxy of a context variable's object, or of one plain attribute of it, is read)")
            out.extend(targets)
        elif shape is _AS_WEAK_REFERENCE:
            out.append(_WEAKREF_CALL(item))  # the object referred to (None once it is gone)
        elif shape is _AS_HIDDEN_ITEMS:
            out.extend(_queued(item))
        if known.reducer is not None:
            # What a C type keeps out of `__dict__` and slots, as its own C `__reduce__` or
            # `__getstate__` states it: an exception's args, a datetime's tzinfo, a slice's bounds,
            # an ElementTree element's text, attributes and children (red-team round 24). Only for the
            # C types themselves: on a subclass, a C reducer calls the subclass's methods
            # (`__getinitargs__`, `__getstate__`), the program's (round 25).
            _push(out, _c_state(item, known.reducer))
        for field in known.c_fields:
            out.append(field(item))  # a subclass's C base state, through the base's own getsets
    # A weakref proxy compares as the object behind it, which no C-level attribute shows: allowed only
    # where that object is part of the value, so the walk has looked at it (Flask's JSON provider holds
    # a proxy of its app). weakref.getweakrefs reads an object's weak references in C.
    if weak_proxies:
        behind = {_id(ref) for item in walked for ref in _getweakrefs(item)}
        for proxy in weak_proxies:
            if _id(proxy) not in behind:
                return (f"a {_QUALNAME(_type(proxy))} of an object outside the value, whose comparisons "
                        "are those of an object that cannot be read")
    return None


class _ClassFacts(typing.NamedTuple):
    """What foreign_answerer's checks find in a class alone, worked out once per class per walk."""

    answering: str | None  # an ANSWERING_METHODS method of the program's (_class_culprit)
    maybe_permissive: bool  # a class of mock's or pytest's whose instances may be told what to answer
    comparison: str | None  # a comparison that answers anything (none asked of a genuine mock)
    comparison_unseen: str | None  # one of those that is no function of the program's
    special: str | None  # a built-in or bound special method in a class of the program's
    class_data: list  # the data attributes of the program's classes in the MRO (_class_data)
    program_method: str | None  # a method of the program's in a Python class (construction aside)
    layout: tuple  # where instances keep their state, and the class's methods (_layout)
    shape: tuple  # (how the walk reads an instance, what it needs for that): _shape
    heap: bool  # a Python class (made by a class statement or type(), not in C)
    reducer: object  # a C type's own C `__reduce__`/`__getstate__` stating its state (_c_reducer), or None
    c_fields: tuple  # getters of what a Python subclass of a C type keeps in its C base (_c_fields)
    pandas_object: bool  # a class of pandas' (_pandas_made): what it holds is walked from `inside`
    truth_refused: bool  # its `__bool__` is refuse_array_truth's (a pandas array's, once guarded)
    pandas_array: bool  # pandas' own ExtensionArray class (_pandas_made, or known before the program ran)
    guardable: bool  # a class of the program's whose methods guard_class would guard, not all guarded yet
    program_class: bool  # a class of the program's (_program_classes holds it)


def _class_facts(kind: type, is_trusted: Callable[[types.CodeType], bool], libraries: tuple) -> _ClassFacts:
    for klass in (*_MRO(kind), *_MRO(_type(kind))):
        if not _class_keys_exact_str(klass):
            refused = (f"a {_QUALNAME(kind)} whose {_QUALNAME(klass)} holds a name that is not a str (a "
                       "lookup on it runs the program's code)")
            return _ClassFacts(refused, False, None, None, None, [], None, ([], None, {}, {}),
                               (_AS_NOTHING, None), False, None, (), False, False, False, False, False)
    own = _program_classes(kind, is_trusted)
    proxy = _context_proxy(kind, is_trusted) if _QUALNAME(kind) == "LocalProxy" else None
    shape = (_AS_CONTEXT_PROXY, proxy) if proxy is not None else _shape(kind, is_trusted, libraries)
    comparison, comparison_unseen, mock = None, None, _genuine_mock(kind, is_trusted)
    if not mock and proxy is None:  # (a context proxy's comparisons are werkzeug's own: _context_proxy)
        comparison = _class_culprit(kind, is_trusted, _COMPARISONS, comparisons=True)
        # (Not the program's own comparison functions: what answers anything with no code to watch.)
        comparison_unseen = comparison and _class_culprit(kind, is_trusted, _COMPARISONS, comparisons=True,
                                                          program_code_seen=True)
        if _QUALNAME(kind) == "LocalProxy":
            why = " (no werkzeug LocalProxy as werkzeug made it, or what its lookups run was changed)"
            comparison = comparison and comparison + why
            comparison_unseen = comparison_unseen and comparison_unseen + why
    answering = _class_culprit(kind, is_trusted, ANSWERING_METHODS, comparisons=False)
    # (A genuine mock's per-object subclass holds mock's own closures: judged by what it was told.)
    program_method = (_program_method(kind, is_trusted, () if mock else own)
                      if _FLAGS(kind) & _HEAP_TYPE else None)
    layout = _layout(kind)
    return _ClassFacts(
        answering=answering,
        maybe_permissive=_may_be_permissive(kind),
        comparison=comparison,
        comparison_unseen=comparison_unseen,
        special=_callable_special_method(kind, own),
        class_data=_class_data(own),
        program_method=program_method,
        layout=layout,
        shape=shape,
        heap=_FLAGS(kind) & _HEAP_TYPE != 0,
        reducer=_c_reducer(kind) if shape[0] is _AS_NOTHING and not _FLAGS(kind) & _HEAP_TYPE else None,
        c_fields=_c_fields(kind) if shape[0] is _AS_INSTANCE else (),
        pandas_object=bool(_FLAGS(kind) & _HEAP_TYPE) and _pandas_made(kind, is_trusted),
        truth_refused=layout[3].get("__bool__") is _ambiguous_truth,
        pandas_array=shape[0] is _AS_EXTENSION_ARRAY and (
            _pandas_made(kind, is_trusted) or _any(kind is known for known in libraries[1])),
        guardable=bool((answering or program_method) and own and not mock
                       and _guardable(kind, is_trusted, own)),
        program_class=_any(kind is mine for mine in own),
    )


def _program_members(item: object, kind: type, layout: tuple, is_trusted: Callable[[types.CodeType], bool],
                     members: list) -> None:
    """Add to `members` (namespace, name, value) for each attribute of `item` (an object of the
    program's class, or a SimpleNamespace) that is a callable of the program's: a function of its, or a
    bound method, partial or staticmethod over one (_unwrap)."""
    # (A SimpleNamespace keeps its dict in C, with no getset: its own reducer hands out that dict.)
    own = _NAMESPACE_REDUCE(item)[2] if kind is _NAMESPACE else _instance_dict(item, kind, layout)
    if _type(own) is not _DICT or not all_exact_str(own):
        return
    for name, value in own.items():
        func, _ = _unwrap(value)
        if _type(func) is _FUNCTION and not is_trusted(func.__code__) and not _registered(value):
            members.append((own, name, value))


def _guardable(kind: type, is_trusted: Callable[[types.CodeType], bool], own: list[type]) -> bool:
    """Whether every method of the program's on an object of `kind` that a test could run sits in a
    class of the program's (`own`) as guard_class makes a GuardedFunction of (guardable_attribute), or
    is one already: no comparison, conversion or other special method of the program's that stays
    refused (_UNGUARDED_ANSWERING), and none in a class a trusted module made. Every class in the MRO
    is the program's or made in C: a library's Python class calls its own methods on the object where
    the watch lets library code call handed-out functions (UserList's `__eq__` called the program's
    `_UserList__cast`, which made the list equal itself: round 57b)."""
    if not _lineage(kind, own):
        return False
    if _class_culprit(kind, is_trusted, _UNGUARDED_ANSWERING, comparisons=False) is not None:
        return False

    def guardable(klass: type, name: object, attr: object) -> bool:
        return _any(klass is mine for mine in own) and guardable_attribute(name, attr)

    return _program_method(kind, is_trusted, own, allowed=guardable) is None


def _lineage(kind: type, own: list[type]) -> bool:
    """Whether every class in `kind`'s MRO is the program's (`own`: _program_classes), made in C, or
    one of _PLAIN_BASES (_guardable): objects of only such classes are admitted as values with guarded
    methods."""
    return _all(not _FLAGS(klass) & _HEAP_TYPE or _any(klass is mine for mine in own)
                or _id(klass) in _PLAIN_BASES for klass in _MRO(kind))


# Library base classes whose own methods call none of a subclass's: an Enum's members compare by
# identity and print through the enum module's own attributes; Generic only parametrises. (Not
# UserList, whose `__eq__` casts through the subclass's method, nor collections.abc's mixins.)
_PLAIN_BASES = _ids((enum.Enum, typing.Generic))


def guarded_name(name: object) -> bool:
    """Whether guard_class guards a method of this name: any but a special method's, and those of
    GUARDED_SPECIAL_METHODS."""
    return _type(name) is str and (not (_starts(name, "__") and name.endswith("__"))
                                   or name in GUARDED_SPECIAL_METHODS)


def guardable_attribute(name: object, attr: object) -> bool:
    """Whether guard_class can guard the class attribute `name` (guarded_name): a function, a
    staticmethod or classmethod of one, or a property (exactly) whose getter, setter and deleter are
    functions or None; or a GuardedFunction the harness registered (outside_calls.registered), also
    held so."""
    if not guarded_name(name):
        return False
    kind = _type(attr)
    if kind is staticmethod or kind is classmethod:
        attr = _HOLDER_READ[_id(kind)](attr)
        kind = _type(attr)
    if kind is property:
        parts = (_PROPERTY_PART[0](attr), _PROPERTY_PART[1](attr), _PROPERTY_PART[2](attr))
        return _all(part is None or _type(part) is _FUNCTION or _registered(part) for part in parts)
    return kind is _FUNCTION or _registered(attr)


_PROPERTY_PART = (property.fget.__get__, property.fset.__get__, property.fdel.__get__)


# How the walk reads an instance of a class (_shape), compared by identity.
_AS_DICT, _AS_SEQUENCE, _AS_ITERATOR, _AS_GENERATOR = "dict", "sequence", "iterator", "generator"
_AS_WEAK_PROXY, _AS_MAPPING_PROXY, _AS_EXTENSION_ARRAY = "weak proxy", "mapping proxy", "extension array"
_AS_DELEGATING, _AS_PANDAS, _AS_ARRAY, _AS_INSTANCE = "delegating", "pandas", "array", "instance"
_AS_CALL_HOLDER, _AS_WEAK_REFERENCE, _AS_HIDDEN_ITEMS = "call holder", "weak reference", "hidden items"
_AS_CONTEXT_PROXY = "context proxy"
_AS_NOTHING = "nothing"


def _shape(kind: type, is_trusted: Callable[[types.CodeType], bool], libraries: tuple) -> tuple:
    """How the walk reads what an instance of `kind` holds, and what it needs for that: a dict (whether
    a defaultdict), a sequence or dict view, an iterator (its C base), a generator, a proxy, a pandas
    ExtensionArray, a UserList/UserDict/UserString, a pandas container (its name, "" for a subclass
    pandas did not make), a numpy array (its ndarray base, None for a subclass numpy did not make),
    an instance of a Python class (its slots and `__dict__`), a bound method, partial, staticmethod or
    classmethod (what it calls, and with), or nothing.
    Read with type() and issubclass(), never isinstance(): that would ask the object for its
    __class__."""
    if _issubclass(kind, _DICT):
        return _AS_DICT, _issubclass(kind, _DEFAULTDICT)
    if _issubclass(kind, _SEQUENCES) or _id(kind) in _VIEWS:
        return _AS_SEQUENCE, None
    if (base := _iterator_base(kind)) is not None:
        return _AS_ITERATOR, base
    if kind is _GENERATOR:
        return _AS_GENERATOR, None
    if _id(kind) in _WEAK_PROXIES:
        return _AS_WEAK_PROXY, None
    if kind is _MAPPING_PROXY:
        return _AS_MAPPING_PROXY, None
    if _library_class(kind, _EXTENSION_ARRAY_MODULES, ("ExtensionArray",)) is not None:
        return _AS_EXTENSION_ARRAY, None
    if _delegating_base(kind) is not None:
        return _AS_DELEGATING, None
    if (pandas := _pandas_container(kind, is_trusted)) is not None:
        return _AS_PANDAS, pandas
    # numpy's ndarray, also when the program imported numpy after the harness took `libraries`: a C type
    # (no class statement of the program's makes one) named so.
    ndarray = libraries[0]
    base = ndarray if ndarray is not None and _issubclass(kind, ndarray) else _numpy_ndarray(kind)
    if base is not None:
        foreign = _foreign_subclass(kind, _numpy_ndarray(kind) or ndarray, "numpy.", is_trusted)
        return _AS_ARRAY, None if foreign else base
    if _any(_id(klass) in _WEAK_REFERENCES for klass in _MRO(kind)):
        return _AS_WEAK_REFERENCE, None  # (weakref.WeakMethod's and the program's subclasses too)
    if _any(_id(klass) in _HIDDEN_ITEMS for klass in _MRO(kind)):
        return _AS_HIDDEN_ITEMS, None
    if kind is _NAMESPACE or _FLAGS(kind) & _HEAP_TYPE:
        return _AS_INSTANCE, None
    if _id(kind) in _CALL_HOLDERS:
        return _AS_CALL_HOLDER, None
    return _AS_NOTHING, None


_NAMESPACE = types.SimpleNamespace
_CONTAINERS = (_AS_DICT, _AS_SEQUENCE, _AS_DELEGATING)  # (shapes whose program methods _shape does not judge)
_NAMESPACE_REDUCE = types.SimpleNamespace.__reduce__
_BUILTIN_METHOD, _MODULE_TYPE = types.BuiltinMethodType, types.ModuleType
_BUILTIN_SELF = types.BuiltinMethodType.__dict__["__self__"].__get__
_BUILTIN_NAME = types.BuiltinMethodType.__dict__["__name__"].__get__
# Class attributes that hold methods or describe the class (walked elsewhere, or plain).
_NOT_CLASS_DATA = (types.FunctionType, classmethod, staticmethod, property, types.MemberDescriptorType,
                   types.GetSetDescriptorType)


def _program_classes(kind: type, is_trusted: Callable[[types.CodeType], bool]) -> list[type]:
    """The classes in `kind`'s MRO that no trusted module made (heap types without a maker: the
    program's)."""
    return [klass for klass in _MRO(kind) if _FLAGS(klass) & _HEAP_TYPE and _maker(klass, is_trusted) is None]


def _callable_special_method(kind: type, own: list[type]) -> str | None:
    """A special method of a class of the program's (no trusted module made it) that is a built-in
    function or a bound method: it answers as the program chose with no code of its own to find
    (`__sub__ = operator.not_`, every difference False, so assertAlmostEqual holds; `__getitem__ =
    [always_equal].__getitem__`: red-team round 22). Honest classes define them as functions; the
    C descriptors of extension classes (pandas' Cython ones are heap types too) are not these kinds.
    `own`: _program_classes(kind)."""
    for klass in own:
        for name, attr in _namespace(klass).items():
            if name in ANSWERING_METHODS and (_id(_type(attr)) in _ANSWERING_CALLABLES
                                              or _id(_type(_unwrap(attr)[0])) in _ANSWERING_CALLABLES):
                return f"a {_QUALNAME(kind)} whose {_QUALNAME(klass)}.{name} is the program's"
    return None


# Callables that carry what they answer with (a bound `__self__`, or nothing to look into).
_ANSWERING_CALLABLES = _ids((types.BuiltinFunctionType, types.MethodType, types.MethodWrapperType))


def _class_data(own: list[type]) -> list:
    """The data attributes of the program's classes `own` (_program_classes); not the GuardedFunctions
    guard_class put there (registered)."""
    return [value for klass in own for value in _namespace(klass).values()
            if not _issubclass(_type(value), _NOT_CLASS_DATA) and not _registered(value)]


def _foreign_subclass(kind: type, base: type | None, package: str, is_trusted) -> bool:
    """Whether a class in `kind`'s MRO before `base` was made by no trusted module of `package`."""
    if base is None or kind is base:
        return False
    for klass in _MRO(kind):
        if klass is base:
            return False
        if not _made_in(klass, package, is_trusted):
            return True
    return False


def _made_in(klass: type, package: str, is_trusted) -> bool:
    """Whether a trusted module of `package` (a name prefix) made `klass` (_maker)."""
    maker = _maker(klass, is_trusted)
    return _type(maker) is str and maker.startswith(package)


def _program_method(kind: type, is_trusted: Callable[[types.CodeType], bool],
                    own: list[type] = (), allowed: Callable[[type, object, object], bool] | None = None,
                    ) -> str | None:
    """A method, property or other descriptor of the program's in a class no trusted module made
    (construction aside): what a test calls or reads on such an object runs the program's code. In the
    program's classes (`own`: _program_classes(kind)) also a library function holding a closure, and
    any other callable but a class: what they run is what they hold, the program's choice
    (`functools.lru_cache` or `singledispatch` of the program's function: red-team round 25), unless
    the closure holds only trusted functions and plain data (dataclasses' `__repr__` wrapper). Not a
    GuardedFunction the harness registered (guard_class), nor what `allowed(class, name, attribute)`
    lets through."""
    lineage = _lineage(kind, own)
    for klass in _MRO(kind):
        if klass is _OBJECT:
            continue
        programs = _any(klass is mine for mine in own)
        for name, attr in _namespace(klass).items():
            if name in _CONSTRUCTION or name == "__init_subclass__":
                continue
            if allowed is not None and allowed(klass, name, attr):
                continue
            func, _ = _unwrap(attr)
            if _registered(func) and lineage:
                continue  # (guarded; in a class deriving from a library's Python class, still refused)
            if _type(func) is _FUNCTION:
                if not is_trusted(func.__code__) or (programs and not _closes_over_library(func, is_trusted)):
                    return f"{_QUALNAME(klass)}.{name}"
            elif programs and _callable(func) and _program_callable(func, is_trusted):
                return f"{_QUALNAME(klass)}.{name}"
    return None


def _program_callable(value: object, is_trusted: Callable[[types.CodeType], bool]) -> bool:
    """Whether a callable held by a class of the program's, other than a function, runs what the
    program chose: an `lru_cache` of a function of the program's (or of a library closure over one), or
    an object of a Python class (`singledispatchmethod`, the program's own callables). C functions of
    libraries (built-ins, Cython's, whose heap type is compiled) and classes run their own code."""
    kind = _type(value)
    if kind is _LRU_CACHE_WRAPPER:
        wrapped = _str_get(_LRU_CACHE_DICT(value), "__wrapped__")
        return not (_type(wrapped) is _FUNCTION and is_trusted(wrapped.__code__)
                    and _closes_over_library(wrapped, is_trusted))
    return _FLAGS(kind) & _HEAP_TYPE != 0 and not _issubclass(kind, _TYPE) and not _compiled(kind)


_LRU_CACHE_WRAPPER = _type(functools.lru_cache(None)(len))
_LRU_CACHE_DICT = _LRU_CACHE_WRAPPER.__dict__["__dict__"].__get__


def _closes_over_library(func: types.FunctionType, is_trusted: Callable[[types.CodeType], bool],
                         depth: int = 0) -> bool:
    """Whether a (trusted) function's closure runs none of the program's code: no function of the
    program's in its cells, bound there or held by a tuple, list or dict there (singledispatch's
    registry), nor in the closures of the library functions it holds."""
    for cell in func.__closure__ or ():
        try:
            held = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        kind = _type(held)
        if kind is tuple or kind is list:
            parts = held
        elif kind is _DICT:
            parts = _list(_dict_values(held))
        else:
            parts = (held,)
        for part in parts:
            inner, _ = _unwrap(part)
            if _type(inner) is not _FUNCTION:
                continue
            if not is_trusted(inner.__code__):
                return False
            if depth < 5 and not _closes_over_library(inner, is_trusted, depth + 1):
                return False
    return True


def _foreign_internals(own: dict | None, name: str,
                       is_trusted: Callable[[types.CodeType], bool]) -> str | None:
    """What in a pandas container's own `__dict__` (`own`) pandas' code would run that pandas did not
    make: the data manager of a Series or DataFrame and its blocks, an Index's levels (red-team round
    23: a manager of the program's handed `tolist()` always-equal objects, and its `arrays` property
    rewrote the value during the walk's own read). Read from the dict, never as attributes; `own` must
    have exact-str keys. A name, or None when all is pandas'."""
    if own is None or not all_exact_str(own):
        return "instance namespace"
    if name in ("Series", "DataFrame"):
        manager = own.get("_mgr")
        if not _pandas_made(_type(manager), is_trusted):
            return "data manager"
        blocks = _object_getattribute(manager, "blocks")
        if _type(blocks) is not tuple or not _all(_pandas_made(_type(block), is_trusted) for block in blocks):
            return "blocks"
    elif "_levels" in own:  # a MultiIndex
        levels = own.get("_levels")
        if not _pandas_made(_type(levels), is_trusted):
            return "levels"
    return None


def _pandas_made(kind: type, is_trusted: Callable[[types.CodeType], bool]) -> bool:
    """Whether every class in `kind`'s MRO is pandas' (a Python class a pandas module made, or a C type
    of a pandas extension module) or a built-in type."""
    for klass in _MRO(kind):
        if klass is _OBJECT:
            continue
        if _FLAGS(klass) & _HEAP_TYPE and not _compiled(klass):
            if not (_made_in(klass, "pandas.", is_trusted) or _data_only(klass)):
                return False
        elif not ((_type(module := _MODULE(klass)) is str and _starts(module, "pandas."))
                  or _id(klass) in _BUILT_IN_TYPES):
            return False  # (a C type: pandas' own, or a built-in one FrozenList derives from)
    return True


def _data_only(klass: type) -> bool:
    """Whether a class's namespace holds plain data only (numbers, strings, None, tuples of strings,
    annotations: pandas' DatetimeLikeBlock sets flags and `__slots__`, and has no function that would
    show who made it): such a class adds no code to what its bases, checked in turn, run."""
    for name, value in _namespace(klass).items():
        kind = _type(value)
        if name == "__annotations__" or _id(kind) in _PLAIN_IDS or _issubclass(kind, _TYPE):
            continue  # (annotations are read by type checkers, not by pandas; a class runs nothing held)
        if kind is tuple:
            if not _all(_type(part) is str for part in value):
                return False
        elif not (kind is _GETSET or kind is _MEMBER) or _OBJCLASS[_id(kind)](value) is not klass:
            return False  # (its own `__dict__`/`__weakref__` getsets and slot members are fine)
    return True


def _compiled(klass: type) -> bool:
    """Whether a class was made by compiled code (Cython's heap types, pandas' among them), not by a
    class statement: its namespace holds a C-level attribute of its own that no class statement can
    make (a method or slot descriptor, or a getset other than `__dict__`/`__weakref__`, whose
    `__objclass__` is the class itself; a C `__new__` bound to it)."""
    for name, attr in _namespace(klass).items():
        kind = _type(attr)
        if kind is _METHOD_DESCRIPTOR or kind is _SLOT_WRAPPER or (
                kind is _GETSET and name != "__dict__" and name != "__weakref__"):
            # (Under its own name: a class statement can copy its `__dict__` getset under another,
            # red-team round 25.)
            if _OBJCLASS[_id(kind)](attr) is klass and _DESCRIPTOR_NAMES[_id(kind)](attr) == name:
                return True
        elif name == "__new__" and kind is _BUILTIN_METHOD and _BUILTIN_SELF(attr) is klass:
            return True
    return False


def _pandas_arrays(own: dict, name: str) -> list:
    """The arrays a pandas container (its own `__dict__`, vetted by _foreign_internals) holds: its
    blocks' values, or an Index's `_data` (each level's, for a MultiIndex)."""
    if name in ("Series", "DataFrame"):
        blocks = _object_getattribute(own["_mgr"], "blocks")
        return [_object_getattribute(block, "values") for block in blocks]
    if "_levels" in own:
        spaces = [_instance_dict_of(level) for level in own["_levels"]]
        return [space["_data"] for space in spaces if _type(space) is _DICT and all_exact_str(space)
                and "_data" in space]
    return [own["_data"]] if "_data" in own else []  # (a RangeIndex holds a range)


def _pandas_labels(own: dict, name: str) -> list:
    """A Series' or DataFrame's axes (Index objects, walked in turn) from its vetted manager."""
    if name in ("Series", "DataFrame"):
        axes = _object_getattribute(own["_mgr"], "axes")
        return _list(axes) if _type(axes) is list else [axes]
    return []


def _instance_dict_of(item: object) -> dict | None:
    kind = _type(item)
    return _instance_dict(item, kind, _layout(kind))


def _foreign_dtype(arrays: list, is_trusted: Callable[[types.CodeType], bool],
                   known_arrays: frozenset = frozenset()) -> str | None:
    """The class of an array type among a pandas container's `arrays` (_pandas_arrays) that neither
    numpy (C) nor pandas made (_pandas_made: every class of its MRO): a pandas ExtensionArray of the
    program's, whose `dtype` and methods are its code. `known_arrays`: the ExtensionArray classes that
    existed before the program ran (library_types)."""
    for array in arrays:
        kind = _type(array)
        if _numpy_ndarray(kind) is not None and not _FLAGS(kind) & _HEAP_TYPE:
            continue
        known = _any(kind is array for array in known_arrays)  # (by identity, see _ids)
        if not known and not _pandas_made(kind, is_trusted):
            return _QUALNAME(kind)
    return None


# What pandas containers keep in their `__dict__` that the walk reads itself (_pandas_arrays and
# _pandas_labels, after _foreign_internals; the cache bar its engine): not walked a second time as
# plain state, where pandas' own extension arrays would be refused as values.
_PANDAS_INTERNALS = ("_mgr", "_data", "_references", "_id", "_cache")


def _push(todo: list, items) -> None:
    """Add `items` to the walk, unless all are numbers, strings, bytes and None, or exact tuples and
    lists of such (C-level passes over their types: a million ints or (word, count) pairs cost no step
    of the walk's budget)."""
    items = items if _type(items) is _LIST else _list(items)
    kinds = _set(_map(_id, _map(_type, items)))
    if kinds <= _PLAIN_IDS:
        return
    if kinds <= _PLAIN_OR_FLAT_IDS:
        flat = (item for item in items if _type(item) is tuple or _type(item) is list)
        if _set(_map(_id, _map(_type, _chain(flat)))) <= _PLAIN_IDS:
            return
    todo.extend(items)


def _class_culprit(kind: type, is_trusted: Callable[[types.CodeType], bool], names: frozenset[str], *,
                   comparisons: bool, program_code_seen: bool = False) -> str | None:
    """The reason to refuse a value of class `kind`, from `_untrusted_method` on it and its metaclass."""
    for cls in (kind, _type(kind)):
        culprit = _untrusted_method(cls, is_trusted, names, comparisons=comparisons,
                                    program_code_seen=program_code_seen)
        if culprit:
            return f"a {_QUALNAME(kind)} whose {culprit} is the program's"
    return None


# Views of a dict's (or OrderedDict's) keys, values and items; iterators whose C type pickles what they
# will hand out (their sequence and position, a map's function and source), found by their MRO.
_VIEWS = _ids(_type(view) for d in ({}, collections.OrderedDict())
             for view in (d.keys(), d.values(), d.items()))
_ITERATORS = _ids(_type(it) for it in (
    iter([]), iter(()), reversed([]), iter({}), iter({}.values()), iter({}.items()), iter(set()),
    iter(range(0)), iter(""), iter("\u0100"), iter(b""), iter(bytearray()), reversed(range(0)),
    iter(collections.deque()), reversed(collections.deque()),
    iter(collections.OrderedDict()), iter(collections.OrderedDict().values()),
    iter(collections.OrderedDict().items()), reversed(collections.OrderedDict()), iter(int, 1),
)) | _ids({map, filter, zip, enumerate, reversed} | {
    kind for kind in vars(itertools).values() if _type(kind) is type and kind.__module__ == "itertools"})
_GENERATOR = types.GeneratorType


def _iterator_base(kind: type) -> type | None:
    """The C iterator type in `kind`'s MRO (map, zip, ... can be subclassed), or None."""
    for klass in _MRO(kind):
        if _id(klass) in _ITERATORS:
            return klass
    return None


def _runs_program(value: object, is_trusted: Callable[[types.CodeType], bool]) -> bool:
    """Whether calling `value` (a map's or filter's function, say) runs the program's code."""
    func, _ = _unwrap(value)
    if _type(func) is _FUNCTION:
        return not is_trusted(func.__code__)
    if _issubclass(_type(func), _TYPE) and _untrusted_method(func, is_trusted, _CONSTRUCTION) is not None:
        return True  # a class whose construction is the program's (`iter(ProgramClass, stop)`)
    return _untrusted_method(_type(func), is_trusted, _DESCRIPTOR_METHODS) is not None


# What making an object runs (a dataclass's generated __init__ calls __post_init__): no test calls them on a
# value it was handed (a plain dataclass validating its fields in __post_init__ was refused: round 52).
_CONSTRUCTION = frozenset({"__new__", "__init__", "__post_init__"})


def _makes_program_values(value: object, is_trusted: Callable[[types.CodeType], bool]) -> bool:
    """Whether calling `value` runs the program's code or makes objects of a class answering with it
    (`defaultdict(AlwaysEqual)`, `map(AlwaysEqual, ...)`: what they make later is never seen)."""
    if _runs_program(value, is_trusted):
        return True
    return (_issubclass(_type(value), _TYPE)
            and _class_culprit(value, is_trusted, ANSWERING_METHODS, comparisons=False) is not None)


# Library containers whose comparisons are those of the value in their `data` attribute.
_DELEGATING = (collections.UserList, collections.UserDict, collections.UserString)
_INSTANCE_DICT = {_id(base): base.__dict__["__dict__"].__get__ for base in _DELEGATING}
_EXTENSION_ARRAY_MODULES = ("pandas.api.extensions", "pandas.core.arrays.base")  # over pandas versions
_WEAK_PROXIES = _ids((weakref.ProxyType, weakref.CallableProxyType))
_MAPPING_PROXY, _getweakrefs = types.MappingProxyType, weakref.getweakrefs
# The empty metadata every dataclass field holds unless given some (a proxy of a dict nothing else
# reaches; a dataclass's fields are class data the walk looks into).
_EMPTY_METADATA = getattr(dataclasses, "_EMPTY_METADATA", None)
_FLAGS = type.__dict__["__flags__"].__get__
_MODULE = type.__dict__["__module__"].__get__  # a C type's: from its C name
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement or type(), not C


# werkzeug's LocalProxy (Flask's `request`, `session`, `g`, `current_app`, which a Flask app's Jinja
# environment holds once it has rendered a template): every special method is a `_ProxyLookup` that
# asks the proxy for its current object (a closure werkzeug made over a ContextVar, and a name to read
# from what the variable holds) and redoes the operation on it. The walk reads that object itself, as
# werkzeug would, where it takes no code: the proxy then compares as what the walk looked at.
class _ProxyFacts(typing.NamedTuple):
    current_code: types.CodeType  # werkzeug's `_get_current_object` closure for a ContextVar
    identity: types.FunctionType  # werkzeug.local._identity (a proxy of the variable's object itself)
    current: object  # the LocalProxy slot holding its `_get_current_object`
    module: dict  # werkzeug.local's globals


_UNREADABLE, _NOTHING_PROXIED = object(), object()
_PROXY_BASES = _ids((typing.Generic, object))
_CONTEXT_VAR, _CONTEXT_VAR_GET = contextvars.ContextVar, contextvars.ContextVar.get
_ATTRGETTER, _ATTRGETTER_REDUCE = operator.attrgetter, operator.attrgetter.__reduce__
_CELL_CONTENTS = types.CellType.cell_contents.__get__
# What werkzeug's lookup for each comparison redoes: the operator itself, never another callable.
_PROXIED_COMPARISON = {"__eq__": operator.eq, "__ne__": operator.ne, "__lt__": operator.lt,
                       "__le__": operator.le, "__gt__": operator.gt, "__ge__": operator.ge,
                       "__contains__": operator.contains}


def _context_proxy(kind: type, is_trusted: Callable[[types.CodeType], bool]) -> _ProxyFacts | None:
    """_ProxyFacts if `kind` is werkzeug.local's own LocalProxy (exactly: its `__init__` trusted code
    whose module holds this class under that name; no base but Generic) and every one of its
    `_ProxyLookup`s is as werkzeug made it (_genuine_lookup), the functions a comparison runs reading
    werkzeug.local's globals as loaded (_werkzeug_function); else None, and the class is judged as
    any other (its lookups are no functions: refused as comparisons that answer anything)."""
    if (_live_contexts is None or _type(kind) is not _TYPE or not _FLAGS(kind) & _HEAP_TYPE
            or _any(klass is not kind and _id(klass) not in _PROXY_BASES for klass in _MRO(kind))):
        return None
    space = _namespace(kind)
    init = space.get("__init__")
    if _type(init) is not _FUNCTION or not is_trusted(init.__code__):
        return None
    module = init.__globals__
    if _type(module) is not _DICT or not all_exact_str(module) or module.get("LocalProxy") is not kind:
        return None
    lookup, identity = module.get("_ProxyLookup"), module.get("_identity")
    if (_type(lookup) is not _TYPE or not _FLAGS(lookup) & _HEAP_TYPE or _len(_MRO(lookup)) != 2
            or not _class_keys_exact_str(lookup) or not _werkzeug_function(identity, module, is_trusted)
            or identity.__code__.co_name != "_identity"):
        return None
    made = _CLASS_DICT(lookup)
    if not _all(_werkzeug_function(made.get(name), module, is_trusted) for name in ("__get__", "__call__")):
        return None
    made_init = made.get("__init__")
    if _type(made_init) is not _FUNCTION or not is_trusted(made_init.__code__):
        return None
    binders = {"partial" in code.co_names: code for code in made_init.__code__.co_consts
               if _type(code) is types.CodeType and code.co_name == "bind_f"}
    slots = (made.get("bind_f"), made.get("fallback"), made.get("name"))
    if _any(_type(slot) is not _MEMBER for slot in slots) or _len(binders) != 2:
        return None
    for name, attr in space.items():
        if _type(attr) is lookup:
            if not _genuine_lookup(name, attr, slots, binders, module, is_trusted):
                return None
        elif name in ANSWERING_METHODS and not (_type(attr) is _FUNCTION and is_trusted(attr.__code__)):
            return None
    current = [code for code in init.__code__.co_consts if _type(code) is types.CodeType
               and code.co_name == "_get_current_object" and "LookupError" in code.co_names]
    slot = space.get("_get_current_object")
    if _len(current) != 1 or _type(slot) is not _MEMBER:
        return None
    return _ProxyFacts(current[0], identity, slot, module)


def _werkzeug_function(func: object, module: dict, is_trusted: Callable[[types.CodeType], bool]) -> bool:
    """Whether `func` is a function of werkzeug.local's (trusted code, with its module's globals
    `module` and the real builtins) whose every name the module binds is bound as werkzeug loaded it:
    `partial` to functools', any other to the builtin of that name (`werkzeug.local.partial`
    rebound made every proxied comparison answer as the program chose)."""
    if (_type(func) is not _FUNCTION or not is_trusted(func.__code__) or func.__globals__ is not module
            or func.__builtins__ is not _BUILTINS):
        return False
    for name in func.__code__.co_names:
        bound = module.get(name, _ABSENT)
        if not (bound is _ABSENT or bound is _LOADED_AS.get(name, _BUILTINS.get(name, _ABSENT))
                or (_starts(name, "__") and name.endswith("__"))):  # (attribute names: `type(self).__doc__`)
            return False
    return True


_LOADED_AS, _ABSENT = {"partial": functools.partial}, object()


def _genuine_lookup(name: str, attr: object, slots: tuple, binders: dict, module: dict,
                    is_trusted: Callable[[types.CodeType], bool]) -> bool:
    """Whether werkzeug's `_ProxyLookup` `attr`, the LocalProxy's method `name`, redoes on the proxied
    object what werkzeug wrote: no bound function (getattr of its own name), or werkzeug's binder (its
    `bind_f` code, `binders`: {whether it is the C one: code}) over a C function or static type of
    a C module, or a function of werkzeug.local's holding only such (`_l_to_r_op`'s; another trusted
    function where `name` is no ANSWERING_METHODS method: `copy.copy`); a comparison over its operator
    only. Its fallback (what an unbound proxy answers) is a function of werkzeug.local's holding
    nothing. The functions are werkzeug.local's as loaded (_werkzeug_function)."""
    try:
        bind, fallback, its_name = (slot.__get__(attr) for slot in slots)
    except AttributeError:  # (an empty slot)
        return False
    if fallback is not None and (not _werkzeug_function(fallback, module, is_trusted)
                                 or fallback.__closure__ is not None):
        return False
    if bind is None:
        return name not in _PROXIED_COMPARISON and _type(its_name) is str and its_name == name
    if (not _werkzeug_function(bind, module, is_trusted) or bind.__closure__ is None
            or _len(bind.__closure__) != 1):
        return False
    try:
        redone = _CELL_CONTENTS(bind.__closure__[0])
    except ValueError:  # (an empty cell)
        return False
    if name in _PROXIED_COMPARISON:
        return bind.__code__ is binders.get(True) and redone is _PROXIED_COMPARISON[name]
    if bind.__code__ is binders.get(True):
        return _plain_c_callable(redone)
    if bind.__code__ is not binders.get(False):
        return False
    if not (_werkzeug_function(redone, module, is_trusted) if name in ANSWERING_METHODS
            else _type(redone) is _FUNCTION and is_trusted(redone.__code__)):
        return False
    try:
        return _all(_plain_c_callable(_CELL_CONTENTS(cell)) for cell in redone.__closure__ or ())
    except ValueError:
        return False


def _plain_c_callable(value: object) -> bool:
    """A built-in function of a C module (`operator.eq`, `repr`: nothing bound but the module) or a
    static type (`str`, `bool`): what answers from its arguments alone."""
    kind = _type(value)
    if kind is _BUILTIN_METHOD:
        return _type(_BUILTIN_SELF(value)) is _MODULE_TYPE
    return kind is _TYPE and not _FLAGS(value) & _HEAP_TYPE


def _proxied(item: object, kind: type, facts: _ProxyFacts, is_trusted: Callable[[types.CodeType], bool],
             contexts: list, variables: list | None) -> list | None:
    """What the LocalProxy `item` stands for in any context the tests may compare it in, read as
    werkzeug's closure would but without running code: what its ContextVar holds in the current
    context (its default included) and in every other live one (context_values: a program's coroutine
    run in a task of its own set the variable in the test's task context, through the waiter's
    callbacks, where the test then compared), or one attribute of each (_plain_attribute); nothing
    where the variable holds nothing (werkzeug raises RuntimeError: no comparison answers). None where
    the proxy holds anything else (a callable, a Local, another closure: what it stands for is code's
    answer). `contexts`: the walk's list of live contexts (filled here once); `variables`:
    foreign_answerer's."""
    try:
        current = facts.current.__get__(item, kind)
    except AttributeError:
        return None
    if (not _werkzeug_function(current, facts.module, is_trusted)
            or current.__code__ is not facts.current_code or current.__closure__ is None):
        return None
    try:
        contents = _map(_CELL_CONTENTS, current.__closure__)
        cells = dict(zip(current.__code__.co_freevars, contents, strict=True))
    except ValueError:
        return None
    variable, read = cells.get("local"), cells.get("get_name")
    if _type(variable) is not _CONTEXT_VAR:
        return None
    if read is facts.identity:
        name = None
    elif _type(read) is _ATTRGETTER:
        names = _ATTRGETTER_REDUCE(read)[1]
        if _len(names) != 1 or _type(names[0]) is not str or "." in names[0]:
            return None
        name = names[0]
    else:
        return None
    if variables is not None and not _any(known is variable for known in variables):
        variables.append(variable)
    if not contexts:
        contexts.extend(_live_contexts())
    held = context_values([variable], contexts)
    if name is None:
        return held
    targets = [_plain_attribute(value, name, is_trusted) for value in held]
    if _any(target is _UNREADABLE for target in targets):
        return None
    return [target for target in targets if target is not _NOTHING_PROXIED]


# (_live_contexts: thread_states.live_contexts, every live context, from the one gc walk the audit hook
# lets through in a unittest child; None where the extension is not built, and proxies are refused.)
_CONTEXT_GET = contextvars.Context.get
# Library properties a proxied attribute may be read through, by (module, class, name): each getter
# hands out what the object holds (`RequestContext.session` returns its `_session`).
_READABLE_PROPERTIES = frozenset({("flask.ctx", "RequestContext", "session")})


def context_values(variables: list, contexts: list | None = None, held: tuple | None = None) -> list:
    """What each ContextVar of `variables` holds in the current context (its default where it holds
    nothing there) and in each of `contexts` (_live_contexts() where not given): the objects a werkzeug
    LocalProxy over it compares as, wherever the test compares it. C reads only: no code runs.
    `held`, if given ([contexts], {their ids}), keeps every live context alive from here on."""
    if _live_contexts is None:
        return []  # (no proxy is read without the extension: _context_proxy)
    contexts = _live_contexts() if contexts is None else contexts
    if held is not None:
        held[0].extend(context for context in contexts if _id(context) not in held[1])
        held[1].update(_map(_id, contexts))
    found = []
    for variable in variables:
        try:
            current = _CONTEXT_VAR_GET(variable)
        except LookupError:
            current = _NOTHING_PROXIED
        if current is not _NOTHING_PROXIED:
            found.append(current)
        for context in contexts:
            value = _CONTEXT_GET(context, variable, _NOTHING_PROXIED)
            if value is not _NOTHING_PROXIED and not _any(value is seen for seen in found):
                found.append(value)
    return found


def _plain_attribute(obj: object, name: str, is_trusted: Callable[[types.CodeType], bool]) -> object:
    """`getattr(obj, name)` where it runs no code: from the instance's own `__dict__`, the name defined
    by no class in its MRO and no `__getattribute__` but object's (or SimpleNamespace's);
    _NOTHING_PROXIED where absent and no `__getattr__` (AttributeError). Where one of
    _READABLE_PROPERTIES answers for the name (a library's property whose getter hands out what the
    object holds), `obj` itself, walked whole. Else _UNREADABLE: another property's getter may read
    anything (round 61c: `flask.Request.max_content_length` reads the current app's config, which a
    call had set, through a context variable no proxy had registered)."""
    kind = _type(obj)
    fallback = False
    for klass in _MRO(kind):
        if not _class_keys_exact_str(klass):
            return _UNREADABLE
        space = _CLASS_DICT(klass)
        if klass is not _OBJECT and klass is not _NAMESPACE and "__getattribute__" in space:
            return _UNREADABLE  # (SimpleNamespace's is object's generic lookup, in C)
        if name in space:
            attr = space[name]
            getter = _HOLDER_READ[_id(property)](attr) if _type(attr) is property else None
            readable = (_type(getter) is _FUNCTION and is_trusted(getter.__code__)
                        and (_maker(klass, is_trusted), _QUALNAME(klass), name) in _READABLE_PROPERTIES)
            return obj if readable else _UNREADABLE
        fallback = fallback or "__getattr__" in space
    # (A SimpleNamespace keeps its dict in C, with no getset: its own reducer hands out that dict.)
    own = _NAMESPACE_REDUCE(obj)[2] if kind is _NAMESPACE else _instance_dict(obj, kind, _layout(kind))
    if _type(own) is not _DICT or not all_exact_str(own):
        return _UNREADABLE
    found = own.get(name, _NOTHING_PROXIED)
    return _UNREADABLE if found is _NOTHING_PROXIED and fallback else found


def _numpy_ndarray(kind: type) -> type | None:
    """numpy.ndarray if it is in `kind`'s MRO: the static (C) type of that name, never a class the
    program made and named so (a class statement makes heap types only)."""
    for klass in _MRO(kind):
        if not _FLAGS(klass) & _HEAP_TYPE and _QUALNAME(klass) == "ndarray" and _MODULE(klass) == "numpy":
            return klass
    return None


def _delegating_base(kind: type) -> type | None:
    """UserList, UserDict or UserString, if in `kind`'s MRO (found by identity: issubclass would ask
    their ABC machinery, which looks the class up by value)."""
    return _next((klass for klass in _MRO(kind) if _id(klass) in _INSTANCE_DICT), None)


def _held_data(item: object, kind: type) -> object:
    """The `data` a UserList/UserDict/UserString holds, read from its instance dict through the
    library class's own descriptor (a subclass of the program's cannot answer for it)."""
    state = _INSTANCE_DICT[_id(_delegating_base(kind))](item)
    return _str_get(state, "data")


# Comparisons a library object can be told to answer whatever the other side is: no expected value
# needed, so such an object forges equality (or order, or membership) without any code of the program.
_ANSWER_ANYTHING = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__contains__")
_COMPARISONS = frozenset(_ANSWER_ANYTHING)


def _permissive_library_value(item: object, kind: type) -> str | None:
    """unittest.mock.ANY, a mock told what to answer to a comparison or `in` (a configured return value
    or side effect, or a function set as the method), or a pytest.approx: library objects that can be
    made equal to anything with data alone. Found by the classes in the value's own MRO, never through
    `sys.modules` (which the program can rewrite), and read through the mock's own state, never by
    calling it. A class of the program's posing as one of these is the program's code, found above."""
    if _library_class(kind, _MOCK_MODULES, ("_ANY",)) is not None:
        return "unittest.mock.ANY, equal to everything"
    base = _library_class(kind, _MOCK_MODULES, ("NonCallableMock",))
    if base is not None:
        init = _namespace(base).get("__init__")
        if _type(init) is _FUNCTION:
            name = _configured_comparison(item, kind, base, init.__globals__)  # the real mock module's
            if name:
                return f"a mock whose {name} is told what to answer"
    if _library_class(kind, _APPROX_MODULES, ("Approx", "ApproxBase")) is not None:
        return "a pytest.approx, equal to whatever lies within its tolerance"
    return None


def _may_be_permissive(kind: type) -> bool:
    """Whether `kind` is a class of those _permissive_library_value looks at instances of."""
    return (_library_class(kind, _MOCK_MODULES, ("_ANY", "NonCallableMock")) is not None
            or _library_class(kind, _APPROX_MODULES, ("Approx", "ApproxBase")) is not None)


_MOCK_MODULES = ("unittest.mock",)
# Where pytest has kept approx's base classes over versions (9.x exports `Approx` as pytest.Approx).
_APPROX_MODULES = ("_pytest.approx", "_pytest.python_api", "pytest")


def _genuine_mock(kind: type, is_trusted: Callable[[types.CodeType], bool]) -> bool:
    """Whether `kind` derives from unittest.mock's own NonCallableMock, not a class of the program's
    named so (its `__module__` and `__qualname__` are the program's to set): the class's `__init__` is
    trusted code whose module holds this very class under that name."""
    base = _library_class(kind, _MOCK_MODULES, ("NonCallableMock",))
    init = _namespace(base).get("__init__") if base is not None else None
    return (_type(init) is _FUNCTION and is_trusted(init.__code__)
            and _str_get(init.__globals__, "NonCallableMock") is base)


def _library_class(kind: type, modules: tuple[str, ...], names: tuple[str, ...]) -> type | None:
    for klass in _MRO(kind):
        module = _namespace(klass).get("__module__")
        # (An exact str first: a class of the program's may set any object there, whose `==` is its code.)
        if _type(module) is str and module in modules and _QUALNAME(klass) in names:
            return klass
    return None


def _configured_comparison(item: object, kind: type, a_mock: type, mock: dict) -> str | None:
    try:
        children = _object_getattribute(item, "_mock_children")
    except AttributeError:
        return None
    own, default, mock_file = _namespace(kind), _str_get(mock, "DEFAULT"), _str_get(mock, "__file__")
    fixed_values = _str_get(mock, "_return_values")
    for name in _ANSWER_ANYTHING:
        method = own.get(name)
        if _type(method) is _FUNCTION and method.__code__.co_filename == mock_file and method.__closure__:
            # A function set as the method: mock wraps it in `method(self, ...)`, closing over it.
            held = method.__closure__[0].cell_contents
            if not _issubclass(_type(held), a_mock):
                return name
        child = _str_get(children, name)
        if child is None or not _issubclass(_type(child), a_mock):
            continue
        state = _object_getattribute(child, "__dict__")
        value, effect = _str_get(state, "_mock_return_value", default), _str_get(state, "_mock_side_effect")
        fixed = _str_get(fixed_values, name, default)
        if value is not default and value is not fixed and not _issubclass(_type(value), a_mock):
            return name
        own_effect = _type(effect) is _FUNCTION and effect.__code__.co_filename == mock_file
        if effect is not None and not own_effect:
            return name
    return None


# How a class attribute holds a function: directly, or wrapped in one of these (read with their own
# C-level attributes, never by calling anything of the class).
_FUNCTION_HOLDERS = {classmethod: "__func__", staticmethod: "__func__", property: "fget"}
_HOLDER_READ = {_id(kind): kind.__dict__[name].__get__ for kind, name in _FUNCTION_HOLDERS.items()}
# Callables that call another with arguments they hold, read through their own C-level attributes.
_CALL_WRAPPERS = {_id(functools.partial): functools.partial.func.__get__,
                  _id(functools.partialmethod): lambda held: _object_getattribute(held, "func"),
                  _id(functools.cached_property): lambda held: _object_getattribute(held, "func"),
                  _id(types.MethodType): types.MethodType.__func__.__get__}
_SLOT_WRAPPER, _METHOD_DESCRIPTOR = types.WrapperDescriptorType, types.MethodDescriptorType
_DESCRIPTOR_NAME = {kind: kind.__dict__["__name__"].__get__ for kind in (_SLOT_WRAPPER, _METHOD_DESCRIPTOR)}
_DESCRIPTOR_NAMES = {_id(kind): kind.__dict__["__name__"].__get__
                     for kind in (_SLOT_WRAPPER, _METHOD_DESCRIPTOR, types.GetSetDescriptorType)}
_OBJCLASS = {_id(kind): kind.__dict__["__objclass__"].__get__
             for kind in (_SLOT_WRAPPER, _METHOD_DESCRIPTOR, types.GetSetDescriptorType,
                          types.MemberDescriptorType)}
_GETSET = types.GetSetDescriptorType
_CO_VARARGS = inspect.CO_VARARGS
_LOAD_LOCAL = frozenset(opcode.opmap[op] for op in ("LOAD_FAST", "LOAD_FAST_CHECK") if op in opcode.opmap)


_HARMLESS_ATTRIBUTES = (types.BuiltinFunctionType, types.WrapperDescriptorType, types.MethodDescriptorType,
                        types.MethodWrapperType, type(None), bool, int, str)


class _AnyName(frozenset):
    def __contains__(self, name: object) -> bool:
        return True


_ANY_NAME = _AnyName()


def _untrusted_method(
    cls: type, is_trusted: Callable[[types.CodeType], bool], names: frozenset[str] = ANSWERING_METHODS,
    *, comparisons: bool = False, program_code_seen: bool = False,
) -> str | None:
    """`Class.name` of the first method among `names` in `cls`'s MRO that runs the program's code (a
    function of untrusted code, also held by a classmethod, staticmethod, property, partial or bound
    method; a descriptor or callable object whose class has such a method). With `comparisons`, also
    one of the comparison methods that can answer anything without the program's code (see
    _answers_anything): what a returned value may not have; the bindings check asks only the first."""
    resolved: set[str] = _set()  # names a class earlier in the MRO defines: the strict check is for those
    for klass in _MRO(cls):
        if klass is _OBJECT or klass is _TYPE:
            continue
        for name, attr in _namespace(klass).items():
            if name not in names:
                continue
            func, wrapped = _unwrap(attr)
            kind = _type(func)
            strict = comparisons and name in _COMPARISONS and name not in resolved
            resolved.add(name)
            if kind is _FUNCTION:
                # Strict: a library function called with arguments the program chose (wrapped), one not
                # named for this method (`__eq__ = functools.update_wrapper` returns self, `typing.cast`
                # the operand: true), or one that never reads the other operand (mock.ANY's `__eq__`,
                # reused by a class of the program's, is "equal" to everything). Libraries' own
                # comparison functions carry the method's name (functools.wraps, total_ordering set it).
                # Strict, too: a library function holding a closure, in a class no trusted module made.
                # What it runs is what its cells hold, which the program chose: functools.singledispatch
                # of the program's `__eq__`, numpy's `_binary_method(operator.is_not, ...)`, pandas'
                # `unpack_zerodim_and_defer` around the program's method (red-team round 20).
                if program_code_seen and not is_trusted(func.__code__):
                    continue  # (the watch sees it run: foreign_answerer's `program_code_seen`)
                if not is_trusted(func.__code__) or (strict and (
                        wrapped or not _named_for(func, name)
                        or _ignores_operand(func.__code__, _type(attr) is staticmethod)
                        or (func.__closure__ and _maker(klass, is_trusted) is None))):
                    return f"{_QUALNAME(klass)}.{name}"
            elif strict and _answers_anything(name, func):
                return f"{_QUALNAME(klass)}.{name}"

            elif not _issubclass(kind, _HARMLESS_ATTRIBUTES) and _untrusted_method(
                    kind, is_trusted, _DESCRIPTOR_METHODS, program_code_seen=program_code_seen):
                return f"{_QUALNAME(klass)}.{name}"  # a descriptor or callable object of the program's
    return None


# The comparison functions functools.total_ordering fills a class with (`_gt_from_lt`, ...), each for
# one method: by their code (id -> (code, the method it stands for), held).
_ORDERING_CODES = {_id(func.__code__): (func.__code__, slot)
                   for pairs in getattr(functools, "_convert", {}).values() for slot, func in pairs}
_BUILTINS = builtins.__dict__


def _named_for(func: types.FunctionType, name: str) -> bool:
    """Whether a trusted function standing as the comparison `name` was written as one: its code's own
    name is `name`, not only its `__name__`, which anyone may set (`typing.cast` or SciPy's generated
    `__new__` named `__eq__` answered with the operand or a new tuple: red-team round 60a); or it is
    the total_ordering method made for `name` (round 60c: `_ge_from_lt` renamed `__eq__`), or a closure
    named so by `functools.wraps` (pandas' comparison wrappers; a closure is allowed only in a class a
    trusted module made: _untrusted_method). Code compiled from a string (what dataclasses writes)
    must also find the builtins it names as builtins: it runs with the globals of the class's module,
    the program's (round 60c: `NotImplemented = True` there made every dataclass equal)."""
    code = func.__code__
    called = func.__name__
    if _type(called) is not str or called != name:  # (a str subclass's `__ne__` is the program's)
        return False
    if code.co_filename == "<string>":
        space = func.__globals__
        if func.__builtins__ is not _BUILTINS or _type(space) is not _DICT or not all_exact_str(space):
            return False
        for used in code.co_names:
            real = _BUILTINS.get(used, _BUILTINS)
            if real is not _BUILTINS and space.get(used, real) is not real:
                return False
    if code.co_name == name or func.__closure__ is not None:
        return True
    known = _ORDERING_CODES.get(_id(code))
    return known is not None and known[0] is code and known[1] == name


def _unwrap(attr: object) -> tuple[object, bool]:
    """The function a class attribute calls: itself, or what a classmethod, staticmethod, property,
    functools.partial / partialmethod or bound method holds (a partial hid the program's lambda), and
    whether it was held by one of the last three."""
    wrapped = False
    for _ in range(20):
        kind = _id(_type(attr))
        if kind in _HOLDER_READ:
            attr = _HOLDER_READ[kind](attr)
        elif kind in _CALL_WRAPPERS:
            attr, wrapped = _CALL_WRAPPERS[kind](attr), True
        else:
            break
    return attr, wrapped


def _ignores_operand(code: types.CodeType, static: bool) -> bool:
    """Whether a comparison function never reads the operand it compares with: the parameter after
    `self` (the first, for a staticmethod) or `*args`. A comparison that does not look at it answers
    the same for everything. Read off the bytecode (loads of that local, or its cell)."""
    index = 0 if static else 1
    if code.co_argcount <= index:
        if not code.co_flags & _CO_VARARGS:
            return False  # the call with the operand fails
        index = code.co_argcount + code.co_kwonlyargcount
    operand = code.co_varnames[index]
    if operand in code.co_cellvars:
        return False
    raw = code.co_code
    return not any(raw[i] in _LOAD_LOCAL and raw[i + 1] == index for i in range(0, len(raw), 2))


def _answers_anything(name: str, attr: object) -> bool:
    """Whether a comparison method that is no plain Python function can answer whatever it is asked.
    Python calls a class attribute that is no descriptor with the other operand alone: `__eq__ = id`
    (or `type`, `bool`, `len`, `operator.itemgetter(0)`, a bound method) answers `x == anything` with
    something true, `__eq__ = int.__ne__` inverts an int's own answer, and a descriptor (a subclass of
    property or classmethod, `enum.property`, `singledispatchmethod`, ...) hands back whatever function
    it holds. What passes: None and other values that cannot be called, a built-in type's own method of
    the same name (`int.__eq__`), and a compiled library's function of the same name (Cython's, as
    pandas' NA has: a C-level `__name__` and `__code__`, read through its type's own descriptors). A
    genuine mock's proxies never get here (foreign_answerer judges mocks by what they were told)."""
    kind = _type(attr)
    if attr is None or _id(kind) in _PLAIN_IDS:
        return False
    if kind is _SLOT_WRAPPER or kind is _METHOD_DESCRIPTOR:
        return _DESCRIPTOR_NAME[kind](attr) != name
    own = _namespace(kind)
    name_of, code_of = own.get("__name__"), own.get("__code__")
    if _type(name_of) is not _GETSET or _type(code_of) is not _GETSET:
        return True
    try:
        its_name, code = name_of.__get__(attr, kind), code_of.__get__(attr, kind)
    except TypeError:  # a descriptor copied from another type into a class of the program's
        return True
    return not (_type(its_name) is str and its_name == name and _type(code) is types.CodeType)


_DESCRIPTOR_METHODS = frozenset({"__get__", "__call__", "__getattr__", "__getattribute__"})


def _ambiguous_truth(self) -> bool:
    raise ValueError("the truth value of a pandas array is ambiguous (sandbox: as a numpy array's); "
                     "compare its items, with .tolist(), .all() or .any()")


def refuse_array_truth() -> bool:
    """Make `bool()` of pandas' ExtensionArrays raise, as numpy's arrays do, in a process where pandas
    is loaded; whether it was. Their truth was their length, so `assertEqual(pd.array([7]), 5)`,
    which compares `pd.array([7]) == 5`, an array of False, passed: returned pandas arrays had to be
    refused, and `.unique()` of a pandas 3 string column is one. Run before the program and before
    the bindings are recorded (a program deleting it is then found); the walk accepts a pandas array
    as a value only where its class's `__bool__` is this (_ClassFacts.truth_refused)."""
    base = getattr(sys.modules.get("pandas.core.arrays.base"), "ExtensionArray", None)
    if not _issubclass(_type(base), _TYPE):
        return False
    base.__bool__ = _ambiguous_truth
    return True


def library_types() -> tuple:
    """(numpy.ndarray or None when numpy is not loaded, every subclass of pandas' ExtensionArray
    there is) as loaded now. Taken by the harness before the program runs: later, `sys.modules` is the
    program's to rewrite, and a fake entry there must not decide which objects get walked (numpy
    loaded later is found by its C type, see _numpy_ndarray), and a class of the program's may derive
    from ExtensionArray."""
    numpy = sys.modules.get("numpy")
    base = getattr(sys.modules.get("pandas.core.arrays.base"), "ExtensionArray", None)
    arrays: set[type] = set()
    todo = [base] if _issubclass(_type(base), _TYPE) else []
    while todo:
        for sub in _TYPE.__subclasses__(todo.pop()):
            if sub not in arrays:
                arrays.add(sub)
                todo.append(sub)
    return (None if numpy is None else numpy.ndarray, frozenset(arrays))


def _array_cells(item: object, base: type) -> list:
    """Elements of a numpy object array (values the tests compare), `base` its ndarray class (_shape);
    none for any other dtype."""
    if _type(item) is not base:  # masked arrays, matrices, subclass views: their cells, as a plain view
        item = base.view(item, base)
    if item.dtype.char == "O":
        return _list(item.ravel())
    if item.dtype.hasobject:  # a structured dtype with object fields: each field, as its own array
        return [item[field] for field in item.dtype.names or ()]
    return []


# The C fields of compiled (Cython) classes the walk reads, through their own getsets: pandas'
# NDArrayBacked arrays keep their data and dtype there (a Categorical's categories are its dtype's).
_C_FIELDS = frozenset({"_ndarray", "_dtype"})


def _layout(kind: type) -> tuple[list, object | None, dict, dict]:
    """Where instances of `kind` keep their state, and its methods: (the member descriptors of its MRO,
    its slots, and the _C_FIELDS getsets of the compiled (Cython) classes in it; the getset
    descriptor reading an instance's `__dict__`, None where the class defines `__dict__` otherwise or
    not at all; {name: class attribute} for each name whose first definition
    in the MRO is a method, _METHODS; {name: class attribute} for every name, as the MRO resolves it)."""
    members, first = [], {}
    for klass in _MRO(kind):
        compiled = _FLAGS(klass) & _HEAP_TYPE and _compiled(klass)
        for name, attr in _namespace(klass).items():
            if _type(attr) is _MEMBER or (
                    compiled and _type(attr) is _GETSET and name in _C_FIELDS
                    and _OBJCLASS[_id(_GETSET)](attr) is klass):
                members.append(attr)
            if _type(name) is str and name not in first:
                first[name] = attr
    getset = first.get("__dict__")
    methods = {name: attr for name, attr in first.items() if _id(_type(attr)) in _METHODS}
    return members, getset if _type(getset) is _GETSET else None, methods, first


def _instance_state(item: object, kind: type, layout: tuple, skip: tuple[str, ...] = ()) -> list:
    """What an instance holds: its slots and its `__dict__`'s values, read through the C-level member
    and getset descriptors its classes own (`layout`: _layout(kind); a property of the program's named
    `__dict__` is not called: what it hides is then not looked at, nor compared by the library's
    comparison either). `skip`: names in the `__dict__` left out."""
    state = []
    for attr in layout[0]:
        try:
            state.append(attr.__get__(item, kind))
        except (AttributeError, TypeError, ValueError):  # an empty slot, a C field with nothing to give
            continue
    own = _instance_dict(item, kind, layout)
    if own is None:
        return state
    if skip and all_exact_str(own):
        return state + [value for name, value in own.items() if name not in skip]
    return state + _list(_dict_values(own))


def _instance_dict(item: object, kind: type, layout: tuple) -> dict | None:
    """The instance `__dict__` of `item`, through the getset descriptor its class owns (`layout`:
    _layout(kind)); None without one."""
    getset = layout[1]
    if getset is None:
        return None
    own = getset.__get__(item, kind)
    return own if _type(own) is _DICT else None


def _method_set_on_instance(
    item: object, kind: type, is_trusted: Callable[[types.CodeType], bool], layout: tuple | None = None
) -> str | None:
    """A function of the program's set on an object over a method of its class (`ax.get_title =
    lambda: answer` on a genuine matplotlib Axes, `getvalue` on the test's StringIO standing in for
    stdout, `randrange` on `random`'s shared generator): the test calling the method runs the
    program's code, whose answer no guarded call returned. `layout`: _layout(kind), if known."""
    layout = _layout(kind) if layout is None else layout
    methods = layout[2]
    own = _instance_dict(item, kind, layout)
    if not own:
        return None
    if not all_exact_str(own):
        # A str subclass (or any other key) equal to an attribute's name is found by attribute lookup,
        # which compares with its `__eq__`: over a method it went unseen here (red-team round 23).
        return f"a {_QUALNAME(kind)} whose attributes include a name that is not an exact str"
    if not methods:
        return None
    for name, value in own.items():
        if _type(name) is not str or name not in methods:
            continue  # data, a class, or nothing of the class's: the object's own business
        # Only a trusted function (also bound, or in a partial), a C extension object's own method
        # (_delegates) or a genuine mock (a test's own `patch.object`) may stand there: anything else
        # answers what the program chose (a bound method of a built-in value, `(0).__and__`; a
        # staticmethod over a partial of `next`, an lru_cache: red-team round 23), or runs the
        # program's code.
        # (What the wrappers hold, bound or given, is walked in turn: _held_by_callable.)
        func, _ = _unwrap(value)
        if _type(func) is _FUNCTION:
            replaced = not is_trusted(func.__code__)
        else:
            replaced = not (_delegates(name, value) or _genuine_mock(_type(value), is_trusted))
        if replaced:
            return (f"a {_QUALNAME(kind)} whose {name} is the program's (set on the object over its "
                    "class's method)")
    return None


def _delegates(name: str, value: object) -> bool:
    """Whether `value`, set on an object over its class's method `name`, is the method of that name of
    a pybind11 extension object, bound as its class binds it (CPython's instancemethod over the same C
    function): what matplotlib's RendererAgg does for its drawing methods (`self.draw_path =
    self._renderer.draw_path`), or a lock's (threading.Condition's `acquire`, `_release_save`). A
    built-in method of any other C object is not: a C type's state is out of the walk's sight (a
    `queue.SimpleQueue`'s `get` set over a library object's `get` answers with whatever the program
    put in the queue), nor is a method of another name."""
    if _type(value) is _BUILTIN_METHOD:
        # A lock's own method (threading.Condition copies its lock's `acquire`, `_release_save`, ...):
        # a lock holds no Python object.
        owner = _type(_BUILTIN_SELF(value))
        held = _layout(owner)[3].get(name) if _id(owner) in _LOCKS else None
        return (_type(held) is _METHOD_DESCRIPTOR and _BUILTIN_NAME(value) == name
                and _OBJCLASS[_id(_METHOD_DESCRIPTOR)](held) is owner)
    if _type(value) is not _METHOD or _type(_METHOD_FUNC(value)) is not _BUILTIN_METHOD:
        return False
    func, kind = _METHOD_FUNC(value), _type(_METHOD_SELF(value))
    if _BUILTIN_NAME(func) != name or _id(kind) in _BUILT_IN_TYPES or kind is _MODULE_TYPE:
        return False
    held = _layout(kind)[3].get(name)
    held_kind = _type(held)
    return (_QUALNAME(held_kind) == "instancemethod" and _MODULE(held_kind) == "builtins"
            and not _FLAGS(held_kind) & _HEAP_TYPE
            and _namespace(held_kind)["__func__"].__get__(held, held_kind) is func)


def _c_reducer(kind: type) -> object | None:
    """The C-level `__reduce__` (or else `__getstate__`) of the first class in `kind`'s MRO that
    defines one as a method descriptor of its own (`object`'s aside): what a C type says it holds."""
    for klass in _MRO(kind):
        if klass is _OBJECT:
            return None
        space = _namespace(klass)
        for name in ("__reduce__", "__getstate__"):
            attr = space.get(name)
            if _type(attr) is _METHOD_DESCRIPTOR and _OBJCLASS[_id(_METHOD_DESCRIPTOR)](attr) is klass:
                return attr
    return None


def _c_fields(kind: type) -> tuple:
    """Getters (C getsets) of what a Python subclass of an exception or datetime class keeps in its C
    base: an exception's args, a datetime's or time's tzinfo."""
    fields = ()
    for klass in _MRO(kind):
        if klass is BaseException:
            fields += (_EXCEPTION_ARGS,)
        elif klass is datetime.datetime or klass is datetime.time:
            fields += (_TZINFO[klass],)
    return fields


_EXCEPTION_ARGS = BaseException.__dict__["args"].__get__
_TZINFO = {klass: klass.__dict__["tzinfo"].__get__ for klass in (datetime.datetime, datetime.time)}


def _c_state(item: object, reducer: object) -> list:
    """What `reducer` (_c_reducer) states `item` holds: the parts of what it returns (a tuple or a
    dict's values); nothing where it refuses the object."""
    try:
        state = reducer(item)
    except Exception:  # C code refusing this object (an unpicklable one): nothing stated
        return []
    if _type(state) is tuple:
        return _list(state[1:])  # (the first is the class or function that rebuilds it)
    if _type(state) is _DICT:
        return _list(_dict_values(state))
    return [state]


def _held_by_callable(item: object, kind: type) -> list:
    """What a bound method, partial, staticmethod or classmethod (exact types: _CALL_HOLDERS) calls,
    and what it calls it with, read through their own C-level attributes: a method of a library
    object's that the program replaced with a trusted function bound to, or given, an always-equal
    object answers with that object (red-team round 23)."""
    if kind is _BUILTIN_METHOD:
        owner = _BUILTIN_SELF(item)
        return [] if _type(owner) is _MODULE_TYPE else [owner]
    if kind is _METHOD:
        return [_METHOD_FUNC(item), _METHOD_SELF(item)]
    if kind is _PARTIAL:
        return [_PARTIAL_FUNC(item), _PARTIAL_ARGS(item), _PARTIAL_KEYWORDS(item)]
    return [_HOLDER_READ[_id(kind)](item)]  # staticmethod, classmethod


_METHOD_FUNC, _METHOD_SELF = types.MethodType.__func__.__get__, types.MethodType.__self__.__get__
_PARTIAL_FUNC, _PARTIAL_ARGS = functools.partial.func.__get__, functools.partial.args.__get__
_PARTIAL_KEYWORDS = functools.partial.keywords.__get__
_WEAK_REFERENCES, _WEAKREF_CALL = _ids((weakref.ref,)), weakref.ref.__call__
_LOCKS = _ids((_type(threading.Lock()), _type(threading.RLock())))
# C types holding items that only taking them shows (a queue.SimpleQueue: read by taking them and
# putting them back, _queued).
_HIDDEN_ITEMS = _ids((queue.SimpleQueue,))
_QUEUE_GET, _QUEUE_PUT, _QUEUE_EMPTY = queue.SimpleQueue.get_nowait, queue.SimpleQueue.put, queue.Empty


def _queued(item: object) -> list:
    """What a `queue.SimpleQueue` holds (a ThreadPoolExecutor's work items and stop marks), taken and
    put back in order with its own C methods. Nothing else takes from it meanwhile: the checks run only
    when no thread the program started is alive (guarded_calls._call_checks)."""
    held = []
    try:
        while True:
            held.append(_QUEUE_GET(item))
    except _QUEUE_EMPTY:
        pass
    for value in held:
        _QUEUE_PUT(item, value)
    return held
_CALL_HOLDERS = _ids((types.BuiltinMethodType, types.MethodType, functools.partial, staticmethod,
                      classmethod))
_BUILT_IN_TYPES = _ids(kind for kind in vars(builtins).values() if _type(kind) is type)
_MEMBER = types.MemberDescriptorType
# What a class holds as a method, and the callables other than functions an object can be given over
# one (a genuine mock, the tests' own patch, is none of these).
_METHODS = _ids({types.FunctionType, types.WrapperDescriptorType, types.MethodDescriptorType,
                 types.BuiltinFunctionType, types.ClassMethodDescriptorType, classmethod, staticmethod})


# pandas' containers whose cells the tests compare, by name and the module whose class statement makes
# them (their `__module__` is "pandas" in pandas 3, the module's name before).
_PANDAS_CONTAINERS = {"Series": "pandas.core.series", "DataFrame": "pandas.core.frame",
                      "Index": "pandas.core.indexes.base"}


def _pandas_container(kind: type, is_trusted: Callable[[types.CodeType], bool]) -> str | None:
    """For a class deriving from pandas' Series, DataFrame or Index: that name, or "" when a class
    pandas did not make stands between (a subclass of the program's: its own attributes decide what
    pandas' methods read); None for any other class. Found in the MRO whether or not the harness saw
    pandas loaded (the tests need not import it), by the module that made each class (_maker), never
    by a name or `__module__` a class of the program's can copy."""
    for klass in _MRO(kind):
        name = _QUALNAME(klass)
        if name in _PANDAS_CONTAINERS and _maker(klass, is_trusted) == _PANDAS_CONTAINERS[name]:
            return "" if _foreign_subclass(kind, klass, "pandas.", is_trusted) else name
    return None


def _maker(klass: type, is_trusted: Callable[[types.CodeType], bool]) -> str | None:
    """The module whose class statement made `klass`, known by a trusted function of the class whose
    module namespace holds this very class under its name; None when no function of it shows one (a
    class of the program's: its functions are untrusted, and a library function it copies belongs to a
    module where its name is another class)."""
    name = _QUALNAME(klass)
    for attr in _namespace(klass).values():
        func, _ = _unwrap(attr)
        # (Not a method dataclasses wrote: trusted for what it does, it has the globals of whichever
        # module the class names as its own, the program's class's too.)
        if _type(func) is _FUNCTION and is_trusted(func.__code__) and func.__code__.co_filename != "<string>":
            space = func.__globals__  # (a decorator's wrapper has its own module's: look further)
            if _str_get(space, name) is klass:
                module = _str_get(space, "__name__")
                return module if _type(module) is str else None
    return None




_CLASS_DICT = type.__dict__["__dict__"].__get__  # a class's own namespace, whatever its metaclass says


def _functions_held(func: types.FunctionType, found: list, depth: int = 0) -> None:
    """Add to `found` the code of `func` and of the functions its closure holds, and theirs (a
    decorator's wrapper around the program's view: flask_login's `login_required`), and of the named
    methods of a class it carries as an attribute (flask's `View.as_view` sets `view.view_class`, whose
    `dispatch_request` and `get` Flask calls by name on an instance it makes: round 52), and its
    `__init__` and `__new__`, which making that instance runs (round 61b: a MethodView taking its
    store in `__init__`); also where guard_class has guarded them (a class the program defines at
    module level: its GuardedFunctions hand library callers straight on, to the function they hold).
    With each function, the code nested in its own (a view's generator that Flask's `Response` streams
    as the test client reads it, round 61b)."""
    _codes_within(func.__code__, found)
    if depth > 8:
        return
    for cell in func.__closure__ or ():
        try:
            held = cell.cell_contents
        except ValueError:  # (an empty cell)
            continue
        if _type(held) is _FUNCTION:
            _functions_held(held, found, depth + 1)
    attributes = _FUNCTION_DICT(func)
    if _type(attributes) is not _DICT or not all_exact_str(attributes):
        return
    for held in attributes.values():
        if not _issubclass(_type(held), _TYPE):
            continue
        for klass in _MRO(held):
            for name, attr in _namespace(klass).items():
                method, _ = _unwrap(attr)
                if _FLAGS(_type(method)) & _HEAP_TYPE and _registered(method):
                    method = _TUPLE_ITEM(method, 0)  # (the function a GuardedFunction holds)
                if (not name.startswith("__") or name in _CONSTRUCTION) and _type(method) is _FUNCTION:
                    found.append(method.__code__)


def _codes_within(code: types.CodeType, found: list, depth: int = 0) -> None:
    """Add to `found` `code` and the code objects nested in its constants, and theirs."""
    found.append(code)
    if depth < 8:
        for constant in code.co_consts:
            if _type(constant) is types.CodeType:
                _codes_within(constant, found, depth + 1)


_FUNCTION_DICT = types.FunctionType.__dict__["__dict__"].__get__
_TUPLE_ITEM = tuple.__getitem__


def all_exact_str(items, _sum=_sum, _map=_map, _is=_is, _type=_type, _repeat=_repeat, _str=str,
                  _len=_len, _compiled=_C_ALL_STR, _dict=dict, _list=list) -> bool:
    """Whether every item of `items` (a list; the keys of a dict or a class's mappingproxy) is an exact
    str, read in C (one call for an exact dict or list where `_namespace_reads` is built, else counted
    with C built-ins): no item's `__hash__`, `__eq__` or `__str__` runs. What it calls are its
    defaults, taken at import, so the harness's side (bindings) uses it whatever the program rebinds."""
    if _compiled is not None and (_type(items) is _dict or _type(items) is _list):
        return _compiled(items)
    return _sum(_map(_is, _map(_type, items), _repeat(_str))) == _len(items)


def _class_keys_exact_str(klass: type, _compiled=_C_ALL_STR) -> bool:
    """all_exact_str over `klass`'s own namespace (its dict, read in C where built: the walk asks this
    of every class in every MRO it meets, a quarter of its time when counted in Python)."""
    return _compiled(klass) if _compiled is not None else all_exact_str(_CLASS_DICT(klass))


def _namespace(klass: type):
    """`klass`'s own namespace (read through type's own descriptor, whatever its metaclass says) with
    exact-str keys only: its mappingproxy, or a copy without the other keys. A key of the program's
    there runs its `__hash__` or `__eq__` at any lookup of a name with the same hash, or any set
    membership test of it; a class holding one is refused where the walk meets it (_class_facts)."""
    space = _CLASS_DICT(klass)
    if _class_keys_exact_str(klass):
        return space
    return {name: attr for name, attr in space.items() if _type(name) is str}


def _str_get(space: object, key: str, default: object = None) -> object:
    """`space.get(key, default)` for a dict whose keys are all exact strs (a module's namespace, an
    instance's `__dict__`, both the program's to add any key to); `default` for anything else."""
    return space.get(key, default) if _type(space) is _DICT and all_exact_str(space) else default

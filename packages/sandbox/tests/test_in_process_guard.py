"""The run-time guard of unittest jobs (in_process_guard): genuine programs that use libraries reading
frames, building code or changing library state still pass; its parts behave as documented.

The attacks it stops are in test_attacks.py.
"""

from __future__ import annotations

import _thread
import os
import sys
import threading
import time
import types

import pytest

from coding_framework.sandbox import Limits, SandboxPool, Status, UnittestJob
from coding_framework.sandbox import in_process_guard as guard

# Each program is correct, and each uses something the guard must let through: logging's caller
# lookup, traceback formatting, namedtuple/enum/dataclass/typing (frames, exec), pandas warnings,
# matplotlib backend set-up, mimetypes/tempfile lazy state, mock.patch, threads and asyncio.
GENUINE = {
    "logging": (
        '''
import logging
logging.basicConfig(level=logging.INFO)
log = logging.getLogger("t")
def task_func(x):
    log.info("got %s", x)
    try:
        1 / 0
    except ZeroDivisionError:
        log.exception("boom")
    return x * 2
''',
        '''
import unittest
class T(unittest.TestCase):
    def test_a(self):
        with self.assertLogs("t", level="INFO") as cm:
            self.assertEqual(task_func(2), 4)
        self.assertIn("got 2", cm.output[0])
''',
    ),
    "traceback-and-warnings": (
        '''
import traceback, warnings
def task_func(x):
    try:
        raise ValueError(x)
    except ValueError:
        text = traceback.format_exc()
    traceback.print_stack(limit=2)
    stack = traceback.extract_stack()
    warnings.warn("careful", UserWarning)
    return "ValueError" in text and len(stack) > 1
''',
        '''
import unittest, warnings
class T(unittest.TestCase):
    def test_a(self):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            self.assertTrue(task_func(3))
        self.assertEqual(len(w), 1)
''',
    ),
    "classes": (
        '''
from collections import namedtuple
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple, TypeVar
import functools
P = namedtuple("P", "x y")
class Q(NamedTuple):
    a: int
Color = Enum("Color", "RED GREEN")
T = TypeVar("T")
@dataclass
class D:
    v: int
    items: list = field(default_factory=list)
def deco(f):
    @functools.wraps(f)
    def inner(*a):
        return f(*a)
    return inner
@functools.lru_cache(None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
@deco
def task_func(n):
    return (P(1, 2).x + Q(3).a + D(n).v + Color.RED.value, fib(20))
''',
        '''
import unittest
class T(unittest.TestCase):
    def test_a(self):
        self.assertEqual(task_func(4), (9, 6765))
''',
    ),
    "pandas-numpy": (
        '''
import numpy as np
import pandas as pd
import warnings
def task_func(n):
    np.random.seed(0)
    df = pd.DataFrame({"g": ["a", "b"] * n, "v": np.arange(2 * n)})
    out = df.groupby("g")["v"].sum()
    s = pd.Series([1, None, 3]).fillna(0)
    return out, s
''',
        '''
import unittest
import numpy as np
import pandas as pd
class T(unittest.TestCase):
    def test_a(self):
        out, s = task_func(3)
        pd.testing.assert_series_equal(out, pd.Series([6, 9], index=pd.Index(["a", "b"], name="g"), name="v"))
        np.testing.assert_array_equal(s.values, np.array([1.0, 0.0, 3.0]))
''',
    ),
    "matplotlib": (
        '''
import matplotlib
import matplotlib.pyplot as plt
import pandas as pd
def task_func(values):
    fig, ax = plt.subplots()
    ax.plot(values)
    ax.set_title("t")
    pd.Series(values).plot(ax=ax)
    return ax
''',
        '''
import unittest
import matplotlib.pyplot as plt
class T(unittest.TestCase):
    def test_a(self):
        ax = task_func([1, 2, 3])
        self.assertIsInstance(ax, plt.Axes)
        self.assertEqual(ax.get_title(), "t")
        plt.close("all")
    def test_b(self):
        ax = task_func([3, 2])
        self.assertEqual(len(ax.lines), 2)
''',
    ),
    "tempfile-mimetypes-mock": (
        '''
import tempfile, mimetypes, os, json, csv
def task_func(name):
    d = tempfile.mkdtemp()
    path = os.path.join(d, name)
    with open(path, "w") as fh:
        json.dump({"a": 1}, fh)
    return mimetypes.guess_type(path)[0], sorted(os.listdir(d))
''',
        '''
import unittest, os
from unittest.mock import patch
class T(unittest.TestCase):
    def test_a(self):
        self.assertEqual(task_func("x.json"), ("application/json", ["x.json"]))
    @patch("os.listdir", return_value=["fake"])
    def test_b(self, mocked):
        self.assertEqual(task_func("y.json")[1], ["fake"])
''',
    ),
    "threads-asyncio": (
        '''
import asyncio, threading
from concurrent.futures import ThreadPoolExecutor
async def double(x):
    await asyncio.sleep(0)
    return 2 * x
def task_func(xs):
    with ThreadPoolExecutor(2) as ex:
        a = list(ex.map(lambda v: v + 1, xs))
    t = threading.Thread(target=lambda: None)
    t.start(); t.join()
    async def main():
        return await asyncio.gather(*(double(v) for v in a))
    return asyncio.run(main())
''',
        '''
import unittest
class T(unittest.TestCase):
    def test_a(self):
        self.assertEqual(task_func([1, 2]), [4, 6])
''',
    ),
    # The tests' own code calls the program's by name outside its calls (outside_calls lets it): a
    # class's constructor and methods, a generator the test leaves half-used.
    "objects-and-generators-of-the-program": (
        '''
class Counter:
    def __init__(self, start):
        self.value = start
    def add(self, n):
        self.value += n
        return self
def task_func(start):
    return Counter(start).add(1).value
def evens(n):
    for i in range(n):
        yield 2 * i
''',
        '''
import unittest
class T(unittest.TestCase):
    def test_a(self):
        self.assertEqual(Counter(1).add(2).value, 3)
        self.assertEqual(task_func(5), 6)
    def test_b(self):
        items = evens(10)
        self.assertEqual(next(items), 0)
        self.assertEqual(task_func(0), 1)
''',
    ),
    # Library objects holding the program's functions, which the test makes the library call: the
    # watch lets library code call a function found in a value the program's call returned.
    "callbacks-in-returned-library-objects": (
        '''
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter
def task_func(values):
    fig, ax = plt.subplots()
    ax.plot(values)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, pos: f"{y:.0f}%"))
    return ax
def scaler(k):
    return np.vectorize(lambda x: k * x)
''',
        '''
import unittest
import matplotlib.pyplot as plt
class T(unittest.TestCase):
    def test_a(self):
        ax = task_func([1, 2, 3])
        ax.figure.canvas.draw()
        self.assertTrue(all(t.get_text().endswith("%") for t in ax.get_yticklabels() if t.get_text()))
        plt.close("all")
    def test_b(self):
        self.assertEqual(list(scaler(3)([1, 2])), [3, 6])
''',
    ),
    "stdout-capture-ast": (
        '''
import io, sys, ast, re, itertools, collections
def task_func(s):
    old = sys.stdout
    sys.stdout = buf = io.StringIO()
    print("hi")
    sys.stdout = old
    v = ast.literal_eval(s)
    return buf.getvalue(), v, collections.Counter("aab")["a"], list(itertools.islice(itertools.count(), 3))
''',
        '''
import unittest
class T(unittest.TestCase):
    def test_a(self):
        self.assertEqual(task_func("[1, 2]"), ("hi\\n", [1, 2], 2, [0, 1, 2]))
''',
    ),
    "tests setting process state": (
        '''
import sys, argparse
def task_func():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int)
    print("parsed")
    return parser.parse_args().n
''',
        '''
import io
import os
import sys
import unittest
class T(unittest.TestCase):
    def test_a(self):
        sys.argv = ["prog", "--n", "3"]
        sys.stdout = io.StringIO()
        os.environ = dict(os.environ, EXTRA="1")
        self.assertEqual(task_func(), 3)
''',
    ),
    "deep recursion": (
        '''
def task_func(n):
    return 0 if n == 0 else 1 + task_func(n - 1)
''',
        '''
import unittest
class T(unittest.TestCase):
    def test_a(self):
        self.assertEqual(task_func(900), 900)
''',
    ),
    # As in BigCodeBench's function-analysis tasks: inspect, importlib, vars() and __dict__ on the
    # functions and objects the tests hand over, a dataclass default_factory, typing.NamedTuple, native
    # standard-library modules imported late.
    "introspection": (
        '''
import importlib, inspect, typing
from dataclasses import dataclass, field
@dataclass
class Report:
    names: list = field(default_factory=list)
class Point(typing.NamedTuple):
    x: int
    y: int
def task_func(functions):
    json = importlib.import_module("json")
    import bz2, lzma  # native modules from the trusted library, loaded while the program runs
    assert lzma.decompress(lzma.compress(b"x")) == bz2.decompress(bz2.compress(b"x"))
    report = Report()
    for f in functions:
        params = inspect.signature(f).parameters
        report.names.append((f.__name__, len(params), inspect.isfunction(f)))
    return json.dumps({"n": len(vars(report)["names"]), "first": report.__dict__["names"][0][:2],
                       "point": list(Point(1, 2))})
''',
        '''
import inspect, json, unittest
class T(unittest.TestCase):
    def test_a(self):
        def sample(a, b=2):
            return a + b
        out = json.loads(task_func([sample, lambda: None]))
        self.assertEqual(out, {"n": 2, "first": ["sample", 2], "point": [1, 2]})

    def test_the_function_itself(self):
        # The tests see a guarded stand-in; what they read off the function is the function's.
        self.assertEqual((task_func.__name__, task_func.__qualname__), ("task_func", "task_func"))
        self.assertEqual(task_func.__code__.co_argcount, 1)
        self.assertIsNone(task_func.__defaults__)
        self.assertEqual(list(inspect.signature(task_func).parameters), ["functions"])
''',
    ),
    "own classes returned": (
        '''
from dataclasses import dataclass
from collections import namedtuple
@dataclass
class Result:
    total: int
Pair = namedtuple("Pair", "left right")
class Plain:
    def __init__(self, label):
        self.label = label
def task_func(a, b):
    return Result(a + b), Pair(a, b), Plain("plain")
''',
        '''
import unittest
class T(unittest.TestCase):
    def test_a(self):
        result, pair, plain = task_func(2, 3)
        self.assertEqual(result.total, 5)
        self.assertEqual(result, type(result)(5))
        self.assertEqual(pair, (2, 3))
        self.assertEqual(plain.label, "plain")
''',
    ),
    # Library values whose comparisons are C code or compiled (Cython) functions, not Python functions:
    # pandas' NA and Timestamp, numpy scalars, Decimal, Fraction, datetime, enum, namedtuple.
    "library values": (
        '''
import collections, datetime, decimal, enum, fractions, ipaddress
import numpy as np
import pandas as pd
Color = enum.Enum("Color", "RED")
Pair = collections.namedtuple("Pair", "a b")
def task_func():
    return [pd.NA, pd.Timestamp("2020-01-02"), np.float64(1.5), decimal.Decimal("2.5"),
            fractions.Fraction(1, 3), datetime.date(2020, 1, 2), Color.RED, Pair(1, 2),
            ipaddress.ip_address("10.0.0.1"), collections.UserList([1]), collections.UserDict(a=1)]
''',
        '''
import collections, datetime, decimal, fractions, ipaddress, unittest
import pandas as pd
class T(unittest.TestCase):
    def test_a(self):
        values = task_func()
        self.assertIs(values[0], type(values[0])())
        self.assertEqual(values[1:7], [pd.Timestamp("2020-01-02"), 1.5, decimal.Decimal("2.5"),
                                       fractions.Fraction(1, 3), datetime.date(2020, 1, 2), values[6]])
        self.assertEqual(values[7:], [(1, 2), ipaddress.ip_address("10.0.0.1"), [1], {"a": 1}])
''',
    ),
}


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(workers=2, limits=Limits(timeout_s=60.0, memory_mb=2048), require_isolation=True) as p:
        yield p


@pytest.mark.parametrize("name", sorted(GENUINE))
def test_genuine_programs_using_frame_reading_libraries_pass(pool, name):
    program, test = GENUINE[name]
    verdict = pool.run(UnittestJob(program=program, test=test))
    assert verdict.status is Status.PASSED, (verdict.message, verdict.stderr[-2000:])
    wrong = pool.run(UnittestJob(program=program.replace("def task_func(", "def _unused(", 1)
                                 + "\ndef task_func(*a):\n    return None\n", test=test))
    assert wrong.status in (Status.FAILED, Status.ERROR) and "tampering" not in wrong.message


def test_preimport_reaches_submodules_through_attribute_chains():
    reached = guard.preimport("import json as j\nfrom email import message\nimport os\n"
                              "def f():\n    return j.decoder.JSONDecoder, os.path.join\n")
    assert {"json", "json.decoder", "email", "email.message", "os", "posixpath"} <= reached
    assert "json.scanner" not in reached  # imported by json, but not named by the test


def fake_module(name: str, **bindings) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(bindings)
    return module


def test_checker_flags_rebinding_but_not_lazy_initialisation(monkeypatch):
    def original():
        return 1

    class Widget:
        def size(self):
            return 1

    Widget.__module__ = "strictmod"
    strict = fake_module("strictmod", fn=original, PI=3.14, _cache=None, _state=0, Widget=Widget)
    lenient = fake_module("lenientmod", fn=original, CONST=1)
    monkeypatch.setitem(sys.modules, "strictmod", strict)
    monkeypatch.setitem(sys.modules, "lenientmod", lenient)
    snapshot = guard.Snapshot()
    snapshot.add_module("strictmod", strict, "strict")
    snapshot.add_module("lenientmod", lenient, "functions")
    trusted_code = guard.CodeSet([original.__code__])
    changes = guard.make_checker([snapshot], guard.make_trust((), trusted_code))
    assert changes() == []

    strict._cache, strict._state, lenient.CONST = {"built": True}, 5, 2  # lazy state, not API
    assert changes() == []
    strict.PI = 3
    lenient.fn = lambda: 0
    Widget.size = lambda self: 0
    Widget.extra = 1
    found = changes()
    assert "strictmod.PI was rebound" in found and "lenientmod.fn was rebound" in found
    assert "strictmod.Widget.size was rebound" in found and "strictmod.Widget.extra was added" in found
    del strict.PI
    assert "strictmod.PI was deleted" in changes()
    monkeypatch.setitem(sys.modules, "lenientmod", fake_module("lenientmod"))
    assert "sys.modules['lenientmod'] was replaced or removed" in changes()


def test_dict_version_tag_moves_on_every_change_of_a_namespace():
    """What lets a check skip a namespace: its tag (read by the compiled reader) moves on every change,
    whatever made it: item and attribute stores (specialised ones too), deletions, dict methods."""
    from coding_framework.sandbox.in_process_guard import bindings

    assert bindings._C_VERSION is not None  # built by tools/setup
    module = fake_module("tagged", a=1)
    namespace = module.__dict__

    class Holder:
        pass

    class Plain:
        pass

    instance = Plain()

    def store_in_loop():  # the interpreter specialises the store after a few runs
        for i in range(20):
            instance.value = i

    def changes():
        yield lambda: namespace.__setitem__("a", 2)
        yield lambda: setattr(module, "a", 3)
        yield lambda: exec("a = 4", namespace)
        yield lambda: namespace.__delitem__("a")
        yield lambda: namespace.update(b=1)
        yield lambda: namespace.setdefault("c", 1)
        yield lambda: namespace.pop("c")
        yield lambda: namespace.popitem()
        yield lambda: dict.__init__(namespace, d=1)
        yield lambda: namespace.clear()
    for change in changes():
        read = bindings.version_reader(namespace)
        before = read()
        change()
        assert read() != before, change
    read = bindings.version_reader(Holder)
    for change in (lambda: setattr(Holder, "x", 1), lambda: setattr(Holder, "x", 2),
                   lambda: delattr(Holder, "x")):
        before = read()
        change()
        assert read() != before
    read = bindings.version_reader(instance.__dict__)
    store_in_loop()
    before = read()
    instance.value = -1
    store_in_loop()
    assert read() != before and instance.value == 19


def test_compiled_reads_tell_what_changed():
    """_namespace_reads' comparisons, which the checks trust to skip what is as recorded: each finds
    a change of what it compares (a tag, an MRO, a function's code, defaults or cell, a cell)."""
    from coding_framework.sandbox.in_process_guard import _namespace_reads as reads
    from coding_framework.sandbox.in_process_guard import bindings

    first, second = {"a": 1}, {"b": 2}

    class Base:
        pass

    class Other:
        pass

    class Child(Base):
        pass

    tags = [reads.version(first), reads.version(second), reads.version(Child)]
    assert reads.moved([first, second, Child], tags) == []
    second["c"] = 3
    Child.x = 1
    assert reads.moved([first, second, Child], tags) == [1, 2]

    mro = Child.__mro__
    assert reads.mros_as_seen([Child], [mro])
    Child.__bases__ = (Other,)
    assert not reads.mros_as_seen([Child], [mro])

    def outer():
        held = len

        def inner(x=1, *, y=2):
            return held(x)
        return inner

    def elsewhere():
        held = len

        def inner(x=1, *, y=2):
            return held(x) + 1
        return inner

    func = outer()
    state = bindings._function_state(func)
    assert reads.functions_as_seen([func], [state], bindings._EMPTY_CELL)
    changes = (lambda f: setattr(f.__closure__[0], "cell_contents", abs),
               lambda f: delattr(f.__closure__[0], "cell_contents"),
               lambda f: setattr(f, "__defaults__", (5,)), lambda f: setattr(f, "__kwdefaults__", {"y": 3}),
               lambda f: setattr(f, "__code__", elsewhere().__code__))
    for change in changes:
        func = outer()
        state = bindings._function_state(func)
        change(func)
        assert not reads.functions_as_seen([func], [state], bindings._EMPTY_CELL)
        assert not bindings._same_state(state, bindings._function_state(func))  # (the fallback agrees)
    cell = outer().__closure__[0]
    assert reads.cells_as_seen([cell], [len]) and not reads.cells_as_seen([cell], [abs])


def test_all_exact_str_reads_keys_and_items_as_the_python_count_does():
    """_namespace_reads.all_exact_str, which the value walk asks of every namespace it reads: the same
    answer as the Python count (the fallback) on dicts, a dict subclass's real keys, class namespaces
    and lists, with a str subclass or another key anywhere; nothing of theirs runs."""
    from coding_framework.sandbox.in_process_guard import _namespace_reads as reads
    from coding_framework.sandbox.in_process_guard import returned_values

    ran = []

    class Label(str):
        def __hash__(self):
            ran.append("__hash__")
            return str.__hash__(self)

        def __eq__(self, other):
            ran.append("__eq__")
            return str.__eq__(self, other)

    class Hiding(dict):
        def __iter__(self):  # (the Python count would run this: the C read does not)
            ran.append("__iter__")
            return dict.__iter__(self)

    plain = {"a": 1, "b": 2}
    odd = dict(plain)
    dict.__setitem__(odd, Label("c"), 3)
    holder, odd_holder = type("Holder", (), {"x": 1}), type("OddHolder", (), {"x": 1, Label("y"): 2})
    ran.clear()
    cases = [(plain, True), (odd, False), ({1: 0}, False), ({}, True), (["a", "b"], True),
             (["a", Label("b")], False), ([], True), (["a", 1], False)]
    for items, expected in cases:
        assert reads.all_exact_str(items) is expected, items
        assert returned_values.all_exact_str(items) is expected, items
        assert returned_values.all_exact_str.__defaults__[-3] is reads.all_exact_str
    hiding = Hiding(a=1)
    assert reads.all_exact_str(hiding) is True
    dict.__setitem__(hiding, 7, 0)
    assert reads.all_exact_str(hiding) is False

    assert reads.all_exact_str(holder) is True and returned_values._class_keys_exact_str(holder)
    assert reads.all_exact_str(odd_holder) is False and not returned_values._class_keys_exact_str(odd_holder)
    assert returned_values.all_exact_str(vars(odd_holder)) is False  # (a mappingproxy: the Python count)
    with pytest.raises(TypeError):
        reads.all_exact_str(("a",))
    assert ran == []


def test_defined_classes_are_those_whose_own_module_is_the_namespace_s():
    """_namespace_reads.defined_classes, which Snapshot.add_module records classes by, agrees with the
    Python reading: a class is the module's when its own `__module__` is that exact str."""
    from coding_framework.sandbox.in_process_guard import _namespace_reads as reads
    from coding_framework.sandbox.in_process_guard import bindings

    class Mine:
        pass

    class Elsewhere:
        pass

    class Inherits(Mine):  # its own __module__, not its base's
        pass

    class NamedOddly:
        pass

    class Label(str):
        pass

    Mine.__module__ = Inherits.__module__ = "owner"
    Elsewhere.__module__ = "owner.sub"
    type.__setattr__(NamedOddly, "__module__", Label("owner"))  # not an exact str
    Bare = type("Bare", (), {})  # a class made by type() names the caller's module
    type.__setattr__(Bare, "__module__", "owner")
    namespace = {"Mine": Mine, "again": Mine, "Elsewhere": Elsewhere, "Inherits": Inherits,
                 "NamedOddly": NamedOddly, "Bare": Bare, "instance": Mine(), "number": 1, 3: Mine}
    expected = [("Mine", Mine), ("again", Mine), ("Inherits", Inherits), ("Bare", Bare), (3, Mine)]
    assert reads.defined_classes(namespace, "owner") == expected
    assert reads.defined_classes(namespace, "owner.sub") == [("Elsewhere", Elsewhere)]
    assert reads.defined_classes(namespace, "nobody") == []
    compiled, bindings._C_DEFINED_CLASSES = bindings._C_DEFINED_CLASSES, None
    try:
        assert bindings._defined_classes(namespace, "owner") == expected  # (the fallback agrees)
    finally:
        bindings._C_DEFINED_CLASSES = compiled


def test_classes_no_module_record_holds_are_recorded_under_a_binding(monkeypatch):
    """A class whose `__module__` names a module that does not bind it, and a class nested in a class:
    recorded under the first label binding them (Snapshot.add_unowned_classes); C types are not."""
    from coding_framework.sandbox.in_process_guard import bindings

    class Stray:
        pass

    class Outer:
        class Inner:
            pass

    class Meta(type):
        pass

    class Hidden:  # bound nowhere: a base class only (tokenize.TokenInfo's namedtuple, round 59c)
        pass

    class Derived(Hidden, metaclass=Meta):
        pass

    Hidden.__qualname__, Meta.__qualname__ = "Hidden", "Meta"  # (labels name them so)
    Stray.__module__ = "importlib._bootstrap"  # as a namedtuple made in Cython says
    Outer.__module__ = Outer.Inner.__module__ = Derived.__module__ = "ownermod"
    module = fake_module("ownermod", Stray=Stray, Outer=Outer, Number=int, Derived=Derived)
    monkeypatch.setitem(sys.modules, "ownermod", module)
    for compiled in (True, False):
        saved = bindings._C_CHANGEABLE_CLASSES
        if not compiled:
            bindings._C_CHANGEABLE_CLASSES = None
        try:
            snapshot = guard.record(set())
        finally:
            bindings._C_CHANGEABLE_CLASSES = saved
        labels = {label: cls for label, _live, _saved, _mode, cls in snapshot.entries if cls is not None}
        assert labels["ownermod.Stray"] is Stray and labels["ownermod.Outer.Inner"] is Outer.Inner
        assert labels["ownermod.Derived.<base Hidden>"] is Hidden
        assert labels["ownermod.Derived.<metaclass Meta>"] is Meta
        assert [label for label, cls in labels.items() if cls is Stray] == ["ownermod.Stray"]
        assert "ownermod.Number" not in labels
        check = guard.make_checker([snapshot], guard.make_trust((), guard.CodeSet()))
        assert [finding for finding in check() if "ownermod" in finding] == []
        assert Outer.Inner.__annotations__ == {}  # (made on this first read, in the class's namespace)
        assert [finding for finding in check() if "ownermod" in finding] == []
        Stray.__eq__ = Outer.Inner.__eq__ = Hidden.__eq__ = Meta.__eq__ = slice
        try:
            assert {finding for finding in check() if "ownermod" in finding} == {
                "ownermod.Stray.__eq__ was added", "ownermod.Outer.Inner.__eq__ was added",
                "ownermod.Derived.<base Hidden>.__eq__ was added",
                "ownermod.Derived.<metaclass Meta>.__eq__ was added"}
        finally:
            del Stray.__eq__, Outer.Inner.__eq__, Hidden.__eq__, Meta.__eq__


def test_modules_left_out_are_not_recorded_unless_strict(monkeypatch):
    monkeypatch.setitem(sys.modules, "guardonly", fake_module("guardonly", fn=len))
    monkeypatch.setitem(sys.modules, "guardonly.sub", fake_module("guardonly.sub", fn=len))
    left_out = {"guardonly", "guardonly.sub"}
    labels = {label for label, *_ in guard.record(set(), leave_out=left_out).entries}
    assert "guardonly" not in labels and "guardonly.sub" not in labels and "builtins" in labels
    labels = {label for label, *_ in guard.record({"guardonly"}, leave_out=left_out).entries}
    assert {"guardonly", "guardonly.sub"} <= labels  # (what the tests import is recorded whatever)


def test_a_twin_record_holds_the_same_bindings_in_copies_of_its_own(monkeypatch):
    """Snapshot.twin, the tests' thread's record of the moment the harness recorded: the same
    namespaces and modes; a change of one's copies is not the other's, and each finds a change."""
    def original():
        return 1

    class Widget:
        def size(self):
            return 1

    Widget.__module__ = "twinmod"
    module = fake_module("twinmod", fn=original, Widget=Widget, CONST=1)
    monkeypatch.setitem(sys.modules, "twinmod", module)
    before = guard.record({"twinmod"}, private=True)
    twin = before.twin()
    assert not twin.private and before.private
    def shape(snapshot):
        return [(label, live, mode, cls) for label, live, _, mode, cls in snapshot.entries]

    assert shape(twin) == shape(before)
    assert all(a[2] == b[2] and a[2] is not b[2] for a, b in zip(twin.entries, before.entries, strict=True))
    assert [v is None for v in twin.versions] == [v is None for v in before.versions]
    assert twin.modules == before.modules and twin.class_mros == before.class_mros
    assert [label for label, _, _ in twin.sealed] == [label for label, _, _ in before.sealed] != []
    assert twin.cells is before.cells and twin.holders is before.holders
    trust = guard.make_trust((), guard.CodeSet([original.__code__]))
    checks = [guard.make_checker([snapshot], trust) for snapshot in (before, twin)]
    assert [check() for check in checks] == [[], []]
    twin_copy = {e[0]: e[2] for e in twin.entries}["twinmod"]
    twin_copy["CONST"] = 2  # (what a program holding the tests' record could do to it)
    assert {e[0]: e[2] for e in before.entries}["twinmod"]["CONST"] == 1
    twin_copy["CONST"] = 1
    module.fn = len
    Widget.size = len
    for check in checks:
        assert sorted(check()) == ["twinmod.Widget.size was rebound", "twinmod.fn was rebound"]


def test_checker_skips_a_namespace_found_as_recorded_until_it_changes(monkeypatch):
    def original():
        return 1

    module = fake_module("skipmod", fn=original, CONST=1)
    monkeypatch.setitem(sys.modules, "skipmod", module)
    snapshot = guard.Snapshot()
    snapshot.add_module("skipmod", module, "strict")
    changes = guard.make_checker([snapshot], guard.make_trust((), guard.CodeSet([original.__code__])))
    assert changes() == []
    # The recorded copy made to differ (as no program could): a namespace whose tag has not moved is
    # not compared again, so nothing is found ...
    saved = snapshot.entries[0][2]
    saved["CONST"] = 2
    assert changes() == []
    # ... until it changes, whatever the change.
    module.other = 1
    assert changes() == ["skipmod.CONST was rebound"]


def test_call_checker_looks_again_at_a_binding_it_let_pass(monkeypatch):
    """A test's mock in a library module passes the checks in the middle of a test; given the program's
    function as its side_effect afterwards (the module's namespace untouched), it is found."""
    from unittest import mock

    def original():
        return 1

    module = fake_module("patchedmod", fn=original)
    monkeypatch.setitem(sys.modules, "patchedmod", module)
    snapshot = guard.Snapshot()
    snapshot.add_module("patchedmod", module, "functions")
    # The standard library (unittest.mock) trusted, as in a job; this file's code is not.
    trust = guard.make_trust((os.path.dirname(os.__file__),), guard.CodeSet([original.__code__]))
    call_check = guard.make_checker([snapshot], trust, program_made_only=True)
    assert call_check() == []
    module.fn = mock.Mock(return_value=1)
    assert call_check() == [] and call_check() == []
    module.fn.side_effect = lambda: 0  # code no trusted module holds: the program's
    assert call_check() == ["patchedmod.fn was rebound"]


def test_what_library_functions_and_descriptors_hold_is_recorded_and_compared(monkeypatch):
    """Changed with no binding changed (red-team round 58c: a pandas decorator's cell): a closure cell
    that held a callable, and what a staticmethod, classmethod, property, partial, partialmethod or
    cached_property holds. A closure's own data (a counter) and a placeholder's first value are free."""
    import functools

    def decorate(func, name="check_dtype"):
        calls, made = 0, None

        def wrapper(*args):
            nonlocal calls, made
            calls += 1
            made = made or object()
            return func(*args) if name else None
        return wrapper

    @decorate
    def compare(a, b):
        return a == b

    class Widget:
        @staticmethod
        def make():
            return 1

        @classmethod
        def build(cls):
            return 2

        @property
        def size(self):
            return 3

        @functools.cached_property
        def area(self):
            return 4

        scaled = functools.partialmethod(lambda self, k: k, 2)

    Widget.__module__ = "heldmod"
    module = fake_module("heldmod", compare=compare, Widget=Widget, double=functools.partial(pow, 2))
    monkeypatch.setitem(sys.modules, "heldmod", module)
    snapshot = guard.Snapshot()
    snapshot.add_module("heldmod", module, "functions")
    snapshot.add_held()
    check = guard.make_checker([snapshot], guard.make_trust((), guard.CodeSet()), program_made_only=True)
    assert check() == []
    assert compare(1, 1) and check() == []  # the closure's own data moved: a counter, a first value
    cells = {name: cell for name, cell in zip(compare.__code__.co_freevars, compare.__closure__, strict=True)}
    original, cells["func"].cell_contents = cells["func"].cell_contents, "".format
    assert check() == ["heldmod.compare runs other code (a closure cell of it was changed)"]
    cells["func"].cell_contents = original
    assert check() == []
    # The names a wrapper was made with are not free (round 58d: pandas' deprecate_kwarg given other
    # argument names): another str is found, an equal one made anew is not.
    cells["name"].cell_contents = "atol"
    assert check() == ["heldmod.compare runs with other names (a closure cell of it was changed)"]
    cells["name"].cell_contents = "".join(["check_", "dtype"])
    assert check() == []
    changes = {
        "make": lambda: staticmethod.__init__(vars(Widget)["make"], len),
        "build": lambda: classmethod.__init__(vars(Widget)["build"], len),
        "size": lambda: property.__init__(vars(Widget)["size"], len),
        "area": lambda: setattr(vars(Widget)["area"], "func", len),
        "scaled": lambda: setattr(vars(Widget)["scaled"], "args", (3,)),
        "double": lambda: module.double.__setstate__((pow, (3,), {}, None)),
    }
    for name, change in changes.items():
        snapshot = guard.Snapshot()
        snapshot.add_module("heldmod", module, "functions")
        snapshot.add_held()
        check = guard.make_checker([snapshot], guard.make_trust((), guard.CodeSet()), program_made_only=True)
        assert check() == [], name
        change()
        label = f"heldmod.{name}" if name == "double" else f"heldmod.Widget.{name}"
        assert check() == [f"{label} holds another function than it did"], name


def test_trusted_roots_leave_out_writable_directories(tmp_path):
    inside = tmp_path / "pkg"
    inside.mkdir()
    roots = guard.trusted_roots([str(inside), "relative/dir", "/usr/lib"], [str(tmp_path)])
    assert not any(r.startswith(str(tmp_path)) for r in roots)
    assert "/usr/lib/" in roots and not any(r.startswith("relative") for r in roots)


def test_code_objects_include_nested_functions_and_classes():
    source = "def f():\n    def g():\n        return [x for x in ()]\nclass C:\n    pass\n"
    code = compile(source, "t.py", "exec")
    names = {c.co_name for c in guard.code_objects(code)}
    assert {"<module>", "f", "g", "C"} <= names


# Run in a fresh interpreter: an audit hook cannot be removed. The script's own code is trusted, so
# every refusal below is the harness thread's rule, not the candidate's.
HARNESS_THREAD_SCRIPT = '''
import _thread, gc, sys, threading
from coding_framework.sandbox import in_process_guard as guard
trusted = guard.code_objects(sys._getframe(0).f_code)
harness_frames = guard.install_audit_hook(guard.trusted_roots(sys.path, ()), trusted,
                                          main_thread=_thread.get_ident())
def refused(action):
    try:
        action()
    except RuntimeError as exc:
        return "in the harness's thread" in str(exc)
    return False
seen, ready, finish = {}, threading.Event(), threading.Event()
def other():
    seen["getframe"] = sys._getframe(0).f_code.co_name
    ready.set()
    finish.wait()
worker = threading.Thread(target=other)
worker.start()
ready.wait()
frames = harness_frames()
print(seen["getframe"], worker.ident in frames, frames[worker.ident].f_code.co_name)
print(refused(lambda: sys._getframe(0)), refused(sys._current_frames), refused(gc.get_objects),
      refused(lambda: sys.exc_info() or (1 / 0)))
try:
    1 / 0
except ZeroDivisionError as exc:
    print(refused(lambda: exc.__traceback__.tb_frame))
finish.set()
'''


def test_the_harness_thread_gets_no_frame_but_its_one_read_of_the_others():
    import subprocess

    done = subprocess.run([sys.executable, "-c", HARNESS_THREAD_SCRIPT], capture_output=True, text=True,
                          timeout=60, cwd="/")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert lines[0] == "other True wait", done.stdout  # the other thread, waiting on its event
    assert lines[1] == "True True True False", done.stdout
    assert lines[2] == "True", done.stdout


def test_the_reporters_tags_are_what_the_judge_checks():
    import socket

    from coding_framework.sandbox import plain_data, suite_runner, wire

    key, (ours, theirs) = b"k" * suite_runner.KEY_BYTES, socket.socketpair()
    with ours, theirs:
        report = suite_runner._make_reporter(wire.FdChannel(ours.fileno()), key)
        report("T.test_a", "pass", "")
        report("T.test_b", "fail", "x" * 3000)
        judge_end = wire.FdChannel(theirs.fileno())  # one reader: it buffers what it reads
        received = [plain_data.decode(wire.recv_frame(judge_end, 1 << 20)) for _ in range(2)]
    assert [r[:4] for r in received] == [("report", 0, "T.test_a", "pass"), ("report", 1, "T.test_b", "fail")]
    assert received[0][5] == suite_runner.mac(key, 0, "T.test_a", "pass")
    assert received[1][5] == suite_runner.mac(key, 1, "T.test_b", "fail") and len(received[1][4]) == 2000


STOP_PROGRAM_CODE_SCRIPT = '''
import json, sys
from coding_framework.sandbox import in_process_guard as guard, suite_runner
trust = guard.make_trust(guard.trusted_roots(sys.path, ()), guard.CodeSet())
sys.settrace(suite_runner._stop_program_code(trust))
json.dumps([1, {"a": 2}])
print("library code ran", flush=True)
exec("def program():\\n    print('program code ran', flush=True)\\nprogram()")
print("after the program", flush=True)
'''


def test_the_harness_thread_ends_the_child_when_program_code_starts_there():
    import subprocess

    from coding_framework.sandbox.suite_runner import HARNESS_THREAD_EXIT

    done = subprocess.run([sys.executable, "-c", STOP_PROGRAM_CODE_SCRIPT], capture_output=True, text=True,
                          timeout=60, cwd="/")
    assert done.returncode == HARNESS_THREAD_EXIT, done.stderr
    assert done.stdout == "library code ran\n", done.stdout  # not one line of the program's code


def test_code_written_as_a_test_method_at_its_line_is_not_the_tests_code():
    # Code objects compare equal whatever file they come from (red-team round 10: a program function
    # written as the test method, at the method's line, was trusted as the test itself).
    test_source = "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.f(1)\n"
    program_source = "\n\ndef test_a(self):\n        self.f(1)\n"
    trusted = guard.code_objects(compile(test_source, "test_solution.py", "exec"))
    namespace: dict = {}
    exec(compile(program_source, "/tmp/solution.py", "exec"), namespace)
    look_alike = namespace["test_a"].__code__
    assert any(code == look_alike for code in trusted)  # what a set of code objects goes by
    is_trusted = guard.make_trust(("/nonexistent/",), trusted)
    assert look_alike not in trusted and not is_trusted(look_alike)
    assert all(is_trusted(code) for code in trusted)


MODULE_CLASS_SCRIPT = '''
import importlib.util, math, sys, types
from coding_framework.sandbox import in_process_guard as guard
guard.install_audit_hook(guard.trusted_roots(sys.path, ()), guard.CodeSet(), main_thread=-1)
import torch.utils.deterministic  # sets its own module's class, from its top-level code, as imported
print(type(sys.modules["torch.utils.deterministic"]).__name__, flush=True)
try:
    importlib.util.LazyLoader(importlib.util.find_spec("math").loader).exec_module(math)
    print("set", flush=True)
except RuntimeError as exc:
    print("refused" if "of a module" in str(exc) else str(exc), flush=True)
'''


def test_only_a_module_being_imported_may_have_its_class_set_by_its_own_code():
    # Round 11: torch's config modules set their class while imported (the program's `import torch`
    # was an error); importlib's LazyLoader on a module already loaded stays refused (round 4).
    import subprocess

    done = subprocess.run([sys.executable, "-c", MODULE_CLASS_SCRIPT], capture_output=True, text=True,
                          timeout=120, cwd="/")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["_Deterministic", "refused"], done.stdout


def test_foreign_in_class_finds_what_the_tests_did_not_put_in_a_test_class():
    import unittest

    source = ("import unittest\nfrom unittest import mock\nclass Trusted(unittest.TestCase):\n"
              "    maxDiff = None\n    helper = mock.MagicMock()\n    def test_a(self):\n        pass\n"
              "    @mock.patch('os.getcwd')\n    def test_b(self, cwd):\n        pass\n"
              "    @classmethod\n    def setUpClass(cls):\n        pass\n")
    code = compile(source, "test_solution.py", "exec")
    namespace: dict = {}
    exec(code, namespace)
    trusted = namespace["Trusted"]
    own = guard.code_objects(code)
    is_trusted = guard.make_trust(guard.trusted_roots(sys.path, ("/tmp",)), own)
    recorded = {id(unittest.TestCase): unittest.TestCase}

    def foreign(cls):
        return guard.foreign_in_class(cls, own, recorded, (), is_trusted)

    assert foreign(trusted) is None  # data, a genuine mock, a mock.patch wrapper, a classmethod
    program = {}
    exec(compile("def noop(self):\n    pass\n", "/tmp/solution.py", "exec"), program)
    empty = type("Trusted", (trusted,), {"test_a": program["noop"]})
    assert "Trusted.test_a is not the tests' own code" in foreign(empty)
    assert "is a builtin_function_or_method" in foreign(type("Trusted", (trusted,), {"assertEqual": len}))
    # Round 14: trusted functions, even wrapped in a classmethod, are not the tests' own.
    for swapped in (classmethod(unittest.TestCase.assertNotEqual), unittest.TestCase.assertNotEqual):
        shadowing = type("Trusted", (trusted,), {"assertEqual": swapped})
        assert "Trusted.assertEqual is not the tests' own code" in foreign(shadowing)
    assert "is a type" in foreign(type("Trusted", (trusted,), {"assertEqual": slice}))
    assert foreign(type("Trusted", (trusted,), {"failureException": AssertionError})) is None
    assert foreign(type("Trusted", (trusted,), {})) is None


def test_methods_dataclasses_writes_are_trusted_and_look_alikes_are_not():
    # Classes made before the audit hook (a preloaded library's: scipy.stats' result classes) have
    # methods compiled from dataclasses' text under "<string>": trusted when equal to that text
    # written again for the same fields, whatever the flags; code merely named so is not.
    import dataclasses

    is_trusted = guard.make_trust(guard.trusted_roots(sys.path, ()), guard.CodeSet())
    for flags in ({}, {"order": True}, {"frozen": True}, {"unsafe_hash": True},
                  {"order": True, "frozen": True}):
        for fields in ((), ("a",), ("a", "b_2", "c")):
            made = dataclasses.make_dataclass("C", list(fields), **flags)
            written = {name: is_trusted(method.__code__) for name, method in vars(made).items()
                       if isinstance(method, types.FunctionType)
                       and method.__code__.co_filename == "<string>"}
            # (__init__ is construction, never asked about; its text holds the defaults.)
            assert written.pop("__init__") is False
            assert written and all(written.values()), (flags, fields, written)
    look_alike = "def __create_fn__():\n def __eq__(self,other):\n  return True\n return __eq__"
    module = compile(look_alike, "<string>", "exec")
    outer = next(c for c in module.co_consts if isinstance(c, types.CodeType))
    forged = next(c for c in outer.co_consts if isinstance(c, types.CodeType))
    assert forged.co_qualname == "__create_fn__.<locals>.__eq__" and not is_trusted(forged)
    assert guard.generated_code.dataclass_method_text("__init__", ("a",)) is None


def test_functions_scipy_writes_for_its_result_classes_are_trusted_and_look_alikes_are_not():
    # scipy.stats' tuple-like results (TtestResult, KstestResult, ...) are classes whose __new__,
    # __init__ and __setattr__ SciPy compiles from its own text (red-team round 59d: every returned
    # t-test result was refused as the program's). Trusted when equal to that text written again for
    # the same fields; the same names with another body, or another name, are not.
    from scipy._lib._bunch import _make_tuple_bunch

    is_trusted = guard.make_trust(guard.trusted_roots(sys.path, ()), guard.CodeSet())
    for fields, extra in ((["a"], []), (["statistic", "pvalue"], ["df"]), (["x", "y_2", "z"], [])):
        made = _make_tuple_bunch("Result", fields, extra)
        written = {name: is_trusted(getattr(made.__dict__[name], "__func__", made.__dict__[name]).__code__)
                   for name in ("__new__", "__init__", "__setattr__")}
        assert all(written.values()), (fields, written)
        assert made(*range(len(fields)), **dict.fromkeys(extra, 0)) == tuple(range(len(fields)))

    def functions(text):
        module = compile(text, "<string>", "exec", dont_inherit=True)
        return {c.co_name: c for c in module.co_consts if isinstance(c, types.CodeType)}

    honest = guard.generated_code.bunch_text(("a", "b"))
    assert all(map(is_trusted, functions(honest).values()))
    # The tuple built from constants, not the arguments; a __setattr__ that guards nothing; an
    # extra function among them: each compiled under the same names.
    forged = functions(honest.replace("(_cls, (a, b,))", "(_cls, (1, 2,))"))
    assert not is_trusted(forged["__new__"]) and is_trusted(forged["__init__"])
    forged = functions(honest.replace("if key in ('a', 'b'):", "if key in ():"))
    assert not is_trusted(forged["__setattr__"])
    forged = functions(honest + "def __eq__(self, other):\n    return True\n")
    assert not is_trusted(forged["__eq__"])
    assert guard.generated_code.bunch_text(()) is None


def test_what_library_objects_hold_is_looked_at_and_their_own_machinery_passes():
    # Red-team round 22: a genuine Axes's line data, set by the program, was never looked at.
    import weakref

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    is_trusted = guard.make_trust(guard.trusted_roots(sys.path, ()), guard.CodeSet())

    def answerer(value):
        return guard.foreign_answerer(value, is_trusted)

    class Anything:  # this test file's code: not trusted (its directory is no library root)
        def __eq__(self, other):
            return True

    fig, ax = plt.subplots()
    line, = ax.plot([0, 1], [2, 3])
    fig.canvas.draw()  # the renderer now holds its C renderer's methods as its own attributes
    renderer = fig.canvas.get_renderer()
    assert answerer(ax) is None and answerer(fig) is None
    line.set_ydata([Anything(), Anything()])
    assert "Anything.__eq__" in answerer(ax)
    line.set_ydata([2, 3])
    for name, replacement in (("draw_image", (0).__and__), ("draw_image", renderer._renderer.draw_markers)):
        held = renderer.__dict__[name]
        setattr(renderer, name, replacement)
        assert f"whose {name} is the program's" in answerer(fig), replacement
        setattr(renderer, name, held)
    assert answerer(fig) is None
    # A weakref proxy passes when what it stands for is part of the value, so looked at.
    assert "cannot be read" in answerer([weakref.proxy(line)])  # the line is not part of this value
    assert answerer([line, weakref.proxy(line)]) is None
    plt.close(fig)


def _until(condition, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.001)
    return True


def test_thread_states_counts_threads_not_yet_run_and_threads_being_torn_down():
    # What `_thread._count()` misses and the guard's thread rule needs (red-team round 27).
    assert guard.thread_states.AVAILABLE, "the compiled counter is missing: run tools/setup (needs gcc)"
    count, running = guard.thread_states.count, _thread._count
    assert _until(lambda: count() == 1 + running())  # this thread and whatever pytest left running
    base, base_running = count(), running()
    # A thread made but not run yet: no switch to it can happen between the two calls (a 30 s interval).
    interval = sys.getswitchinterval()
    sys.setswitchinterval(30)
    try:
        _thread.start_new_thread(time.sleep, (0,))
        made, made_running = count(), running()
    finally:
        sys.setswitchinterval(interval)
    assert (made, made_running) == (base + 1, base_running)
    assert _until(lambda: count() == base)
    # A thread whose function returned, while CPython clears its state: its thread-local's __del__ runs.
    inside, leave = threading.Event(), threading.Event()

    class Lingers:
        def __del__(self):
            inside.set()
            leave.wait(10)

    local = threading.local()
    threading.Thread(target=lambda: setattr(local, "keep", Lingers()), daemon=True).start()
    assert inside.wait(10)
    torn_down = (count(), running())
    leave.set()
    assert torn_down == (base + 1, base_running)
    assert _until(lambda: count() == base)


# The watch on the tests' thread (outside_calls), in a process of its own: it is set once per process.
WATCH_SCRIPT = '''
from coding_framework.sandbox.in_process_guard import outside_calls as watch
program = compile("class Hook:\\n    def __eq__(self, other):\\n        return True\\n"
                  "    def method(self):\\n        return helper()\\n"
                  "def helper():\\n    return 1\\n", "solution.py", "exec")
tests = compile("def test(ns):\\n    return ns['Hook']().method()\\n", "tests.py", "exec")
def codes(code):
    found = {id(code): code}
    for const in code.co_consts:
        if type(const) is type(code):
            found.update(codes(const))
    return found
def library(a, b):  # library code comparing what it is handed
    return a == b
def harness(function, *args):  # pauses the watch for a call of the program's
    watch.pause()
    try:
        return function(*args)
    finally:
        watch.resume()
def main():
    watch.watch(codes(program), codes(tests), {}, {id(main.__code__): main.__code__},
                (harness.__code__, main.__code__), ())
    ns, test_ns = {}, {}
    exec(program, ns)
    exec(tests, test_ns)
    watch.resume()
    print("loaded", watch.ran(), watch.paused())
    print("in a call", harness(ns["helper"]), watch.ran())
    print("called by the tests", test_ns["test"](ns), watch.ran())
    try:
        (lambda: watch.pause())()
    except RuntimeError as exc:
        print("refused", exc)
    print("compared by a library", library(ns["Hook"](), 5), watch.ran(), watch.paused())
main()
'''


def test_the_watch_finds_the_programs_code_entered_from_library_code_only():
    import subprocess
    done = subprocess.run([sys.executable, "-c", WATCH_SCRIPT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "loaded None 0",  # the program's load runs paused
        "in a call 1 None",
        "called by the tests 1 None",  # a method called by name by the tests' code, and what it calls
        "refused sandbox: only the harness pauses its watch",
        "compared by a library True Hook.__eq__ 0",  # a special method entered from library code
    ]
    assert guard.outside_calls.AVAILABLE, "the compiled watch is missing: run tools/setup (needs gcc)"

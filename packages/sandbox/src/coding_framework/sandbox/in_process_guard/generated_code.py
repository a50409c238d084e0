"""The texts library code generators compile, written again here so that the code they make can be
recognised (audit_hook.make_trust): a code object compiled from a string names no file, so it is
trusted only when it is equal (`==` of code objects: bytecode, constants, names, positions) to what
compiling the generator's own text for the same names gives.

Each text function takes the names a code object carries (read off it by make_trust, checked to be
exact strs that are identifiers and no keywords) and returns the whole text the generator compiles
for them, or None where it writes none for that method. They read no global name: make_trust calls
them while the program can rebind builtins and this module's names, so what a text is made of is
their own constants and the methods of exact strs.

A generator whose text a later version changes makes code that is simply not trusted there (a class
of it is refused, never passed): the texts are those of CPython 3.11's `dataclasses` and
`collections.namedtuple` and of SciPy's `_lib._bunch` (1.7 and later; 1.17 checked).
"""

from __future__ import annotations

# The methods `dataclasses` writes from text that make_trust may be asked about (comparisons, hash,
# repr, frozen-attribute guards; `__init__` is construction, and its text holds the defaults).
DATACLASS_METHODS = ("__eq__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__repr__", "__setattr__",
                     "__delattr__")
# The functions SciPy's `_make_tuple_bunch` compiles for each result class (`TtestResult`,
# `KstestResult`, ...: the tuple-like results of most of scipy.stats).
BUNCH_METHODS = ("__new__", "__init__", "__setattr__")


def dataclass_method_text(name: str, fields: tuple[str, ...]) -> str | None:
    """The text `dataclasses` (CPython 3.11) compiles for the method `name` of a dataclass whose fields
    (those compared, hashed, shown, or frozen) are `fields`, or None for a method it writes no such text for:
    an outer `__create_fn__` taking the method's free names, holding the method."""
    operators = {"__eq__": "==", "__lt__": "<", "__le__": "<=", "__gt__": ">", "__ge__": ">="}
    if name in operators or name == "__hash__":
        mine = "(" + ",".join(["self." + field for field in fields]) + ",)" if fields else "()"
        theirs = "(" + ",".join(["other." + field for field in fields]) + ",)" if fields else "()"
        free, args = "", "self,other"
        body = ("if other.__class__ is self.__class__:",
                " return " + mine + operators.get(name, "") + theirs, "return NotImplemented")
        if name == "__hash__":
            args, body = "self", ("return hash(" + mine + ")",)
    elif name == "__repr__":
        shown = ", ".join([field + "={self." + field + "!r}" for field in fields])
        free, args = "", "self"
        body = ('return self.__class__.__qualname__ + f"(' + shown + ')"',)
    elif name == "__setattr__" or name == "__delattr__":
        names = "(" + ",".join([field.__repr__() for field in fields]) + ",)" if fields else "()"
        setting = name == "__setattr__"
        free, args = "cls, FrozenInstanceError", "self,name,value" if setting else "self,name"
        body = ("if type(self) is cls or name in " + names + ":",
                ' raise FrozenInstanceError(f"cannot ' + ("assign to" if setting else "delete")
                + ' field {name!r}")',
                "super(cls, self)." + name + ("(name, value)" if setting else "(name)"))
    else:
        return None
    method = " def " + name + "(" + args + "):\n" + "\n".join(["  " + line for line in body])
    return "def __create_fn__(" + free + "):\n" + method + "\n return " + name


def namedtuple_new_text(fields: tuple[str, ...]) -> str:
    """The text `collections.namedtuple` (CPython 3.11) evaluates for a class's `__new__` with the fields
    `fields` (a lambda over the class and the fields, run with a namespace holding only `_tuple_new`,
    tuple's `__new__`)."""
    arguments = ", ".join(fields) + ("," if fields and not fields[1:] else "")  # (no builtin name)
    return "lambda _cls, " + arguments + ": _tuple_new(_cls, (" + arguments + "))"


def bunch_text(fields: tuple[str, ...]) -> str | None:
    """The text SciPy's `_make_tuple_bunch` compiles for a result class whose tuple fields are `fields`
    (one or more; the extra, attribute-only fields are not in it): module-level `__new__` (the tuple
    of the fields), `__init__` (checks the extra fields given as keywords and stores them) and
    `__setattr__` (refuses the tuple fields), run with a namespace holding only `_tuple_new` (tuple's
    `__new__`) and two exception types as builtins. None for no fields (SciPy refuses those)."""
    if not fields:
        return None
    arguments = ", ".join(fields)
    guarded = "(" + ", ".join([field.__repr__() for field in fields]) + ("," if not fields[1:] else "") + ")"
    return "\n".join([
        "def __new__(_cls, " + arguments + ", **extra_fields):",
        "    return _tuple_new(_cls, (" + arguments + ",))",
        "",
        "def __init__(self, " + arguments + ", **extra_fields):",
        "    for key in self._extra_fields:",
        "        if key not in extra_fields:",
        "            raise TypeError(\"missing keyword argument '%s'\" % (key,))",
        "    for key, val in extra_fields.items():",
        "        if key not in self._extra_fields:",
        "            raise TypeError(\"unexpected keyword argument '%s'\" % (key,))",
        "        self.__dict__[key] = val",
        "",
        "def __setattr__(self, key, val):",
        "    if key in " + guarded + ":",
        "        raise AttributeError(\"can't set attribute %r of class %r\"",
        "                             % (key, self.__class__.__name__))",
        "    else:",
        "        self.__dict__[key] = val",
        "",
    ])

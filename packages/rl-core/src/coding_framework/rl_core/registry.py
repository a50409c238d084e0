"""Name → function registries: what a config string such as `adv_estimator: grpo` resolves to.

A registry is built once, from an explicit dict, when its module is imported; it is read-only after
that (no decorators that mutate global state on import). Looking up a name it does not hold raises
`UnknownNameError`, whose message lists every valid name, so a typo in a config says what to type.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

F = TypeVar("F", bound=Callable)


class UnknownNameError(KeyError):
    """A registry lookup with a name the registry does not hold.

    A KeyError, so `Mapping.get` and `in` keep their usual meaning; its message (not KeyError's quoted
    repr) names the registry and lists the valid names.
    """

    def __init__(self, kind: str, name: object, valid: list[str]):
        self.kind, self.name, self.valid = kind, name, valid
        super().__init__(f"unknown {kind} {name!r}; valid names: {', '.join(valid)}")

    def __str__(self) -> str:
        return str(self.args[0])


class Registry(Mapping[str, F]):
    """An immutable, ordered mapping from a name to a function of one kind.

    Args:
        kind: what the entries are, in words ("advantage estimator"); used in error messages.
        entries: name → function; each function must have a docstring, whose first line is the
            one-line description `coding-framework algorithms` shows.
    """

    def __init__(self, kind: str, entries: Mapping[str, F]):
        if not kind:
            raise ValueError("Registry needs a kind, e.g. 'advantage estimator', for its error messages")
        for name, fn in entries.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"{kind} registry: names must be non-empty strings, got {name!r}")
            if not callable(fn):
                raise TypeError(f"{kind} registry: {name!r} maps to {fn!r}, which is not callable")
            if not inspect.getdoc(fn):
                raise ValueError(
                    f"{kind} registry: {name!r} needs a docstring (its first line is its summary)"
                )
        self.kind = kind
        self._entries: dict[str, F] = dict(entries)

    def __getitem__(self, name: str) -> F:
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            raise UnknownNameError(self.kind, name, list(self._entries)) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def summaries(self) -> dict[str, str]:
        """Each name with the first line of its function's docstring."""
        return {name: inspect.getdoc(fn).splitlines()[0] for name, fn in self._entries.items()}

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, [{', '.join(self._entries)}])"

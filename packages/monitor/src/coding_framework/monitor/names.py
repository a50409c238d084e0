"""Mapping free-form metric names onto what each store accepts, without silent collisions."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

log = logging.getLogger(__name__)

_MLFLOW_BAD = re.compile(r"[^/\w.\- :]")
_PROMETHEUS_BAD = re.compile(r"[^a-zA-Z0-9_:]")
MLFLOW_MAX_KEY = 250


def mlflow_key(name: str) -> str:
    """A name MLflow accepts: `@` → `_at_` (so `pass@1` → `pass_at_1`), other characters outside
    letters, digits, `_ - . : /` and space → `_`, empty and `.`/`..` path parts dropped (MLflow
    rejects keys that are not normalised paths), at most 250 characters."""
    text = _MLFLOW_BAD.sub("_", name.replace("@", "_at_"))
    parts = [part for part in text.split("/") if part not in ("", ".", "..")]
    return ("/".join(parts) or "_")[:MLFLOW_MAX_KEY]


def prometheus_name(namespace: str, name: str) -> str:
    """`<namespace>_<name>` with `@` → `_at_` and every other character outside [a-zA-Z0-9_:] → `_`."""
    return f"{namespace}_{_PROMETHEUS_BAD.sub('_', name.replace('@', '_at_'))}"


class NameMap:
    """Remembers which original name each store key came from; a second original name that maps to
    the same key is dropped for this store with one warning, rather than mixing two series."""

    def __init__(self, store: str, convert: Callable[[str], str]) -> None:
        self._store = store
        self._convert = convert
        self._key: dict[str, str | None] = {}
        self._owner: dict[str, str] = {}

    def reserve(self, key: str, owner: str) -> None:
        """Claim a store key for something other than a logged metric (e.g. the step gauge)."""
        self._owner[key] = owner

    def key(self, name: str) -> str | None:
        if name in self._key:
            return self._key[name]
        converted = self._convert(name)
        owner = self._owner.setdefault(converted, name)
        if owner != name:
            log.warning(
                "%s: %r and %r both become %r there; keeping %r and not logging %r to %s (rename one)",
                self._store, owner, name, converted, owner, name, self._store,
            )
            self._key[name] = None
        else:
            self._key[name] = converted
        return self._key[name]

"""Frozen-dataclass configuration from YAML plus Hydra-style `key=value` overrides.

Every key is checked against the dataclass fields: a misspelled key is an error that names the valid
keys (VERL's Hydra config silently ignores some misplaced keys; ours never does). Values are converted
to the field's declared type, and the dataclass's own `__post_init__` then validates them.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

import yaml

T = TypeVar("T")


class ConfigError(ValueError):
    """A configuration file or override is invalid; the message says which key and what to do."""


def load_yaml(path: str | Path) -> dict[str, Any]:
    """A YAML mapping from `path`; an unreadable file or a non-mapping document is a ConfigError."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a mapping of keys to values, got {type(data).__name__}")
    return data


def parse_overrides(overrides: Iterable[str]) -> dict[str, Any]:
    """`["engine.lr=1e-5", "seed=3"]` → `{"engine": {"lr": 1e-05}, "seed": 3}`; values parse as YAML."""
    nested: dict[str, Any] = {}
    for item in overrides:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key or any(not part for part in key.split(".")):
            raise ConfigError(f"override {item!r} is not of the form key=value (dotted keys for nesting)")
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            value = raw
        node = nested
        parts = key.split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"override {item!r} conflicts with an earlier override of {part!r}")
            node = child
        node[parts[-1]] = value
    return nested


def merge(base: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """Deep merge: mappings merge key by key, anything else in `update` replaces what `base` had."""
    merged = dict(base)
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def build(cls: type[T], data: Mapping[str, Any], *, where: str = "") -> T:
    """An instance of dataclass `cls` from a nested mapping, checking keys and converting values."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where or 'config'} must be a mapping of keys to values, got {data!r}")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    hints = get_type_hints(cls)
    unknown = [key for key in data if key not in fields]
    if unknown:
        key = unknown[0]
        full = f"{where}.{key}" if where else key
        close = difflib.get_close_matches(key, fields, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"unknown config key {full!r}{hint} Valid keys here: {', '.join(fields)}")
    kwargs = {}
    for name, value in data.items():
        full = f"{where}.{name}" if where else name
        kwargs[name] = _convert(hints[name], value, full)
    try:
        return cls(**kwargs)
    except ConfigError:
        raise
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where or cls.__name__}: {exc}") from None


def replace(instance: T, data: Mapping[str, Any], *, where: str = "") -> T:
    """`instance` with the keys of `data` (nested for nested dataclasses) replaced and re-validated."""
    return build(type(instance), merge(as_dict(instance, shallow=True), data), where=where)


def as_dict(instance: Any, *, shallow: bool = False) -> dict[str, Any]:
    """Plain dict of a dataclass: nested dataclasses become dicts (kept as objects when `shallow`)."""
    out: dict[str, Any] = {}
    for field in dataclasses.fields(instance):
        value = getattr(instance, field.name)
        if dataclasses.is_dataclass(value) and not shallow:
            value = as_dict(value)
        elif dataclasses.is_dataclass(value):
            value = as_dict(value, shallow=True)
        elif isinstance(value, Path):
            value = str(value)
        elif isinstance(value, tuple):
            value = list(value)
        out[field.name] = value
    return out


def _convert(tp: Any, value: Any, where: str) -> Any:
    origin = get_origin(tp)
    if dataclasses.is_dataclass(tp):
        if dataclasses.is_dataclass(value):
            return value
        return build(tp, value, where=where)
    if origin in (Union, types.UnionType):
        options = get_args(tp)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _convert(option, value, where)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0] if len(errors) == 1 else f"{where}: {value!r} fits none of {tp}")
    if origin is Literal:
        allowed = get_args(tp)
        if isinstance(value, bool) and value not in allowed:
            # YAML 1.1 reads on/off/yes/no as booleans; give them back their words.
            words = ("on", "yes", "true") if value else ("off", "no", "false")
            value = next((w for w in words if w in allowed), value)
        if value not in allowed:
            raise ConfigError(f"{where}={value!r} is not allowed; use one of {', '.join(map(str, allowed))}")
        return value
    if origin in (tuple, list) or tp in (tuple, list):
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where} must be a list, got {value!r}")
        args = get_args(tp)
        item_type = args[0] if args else Any
        items = [_convert(item_type, v, f"{where}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if (origin or tp) is tuple else items
    if tp is Any or tp is typing.Any:
        return value
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{where} must be true or false, got {value!r}")
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ConfigError(f"{where} must be an integer, got {value!r}")
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        # YAML 1.1 reads `1e-5` (no dot) as a string; as a float field's value it means the number.
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        raise ConfigError(f"{where} must be a number, got {value!r}")
    if tp is str:
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return str(value)
        raise ConfigError(f"{where} must be a string, got {value!r}")
    if tp is Path:
        if isinstance(value, (str, Path)):
            return Path(value)
        raise ConfigError(f"{where} must be a path, got {value!r}")
    if origin in (dict, Mapping) or tp in (dict, Mapping):
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where} must be a mapping, got {value!r}")
        return dict(value)
    return value

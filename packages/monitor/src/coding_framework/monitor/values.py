"""Normalising what callers log: metric values to floats, nested parameters to flat keys."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import numbers
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

ParamValue = str | int | float | bool | None | list[Any]


def coerce_metric(name: str, value: Any) -> float:
    """One metric value as a Python float.

    Accepts real numbers (bool counts as 0/1), numpy scalars and one-element arrays or tensors
    (anything with `.item()`); rejects everything else with a TypeError naming the metric.
    NaN and ±inf pass through: a diverging loss must be visible, not hidden.
    """
    if isinstance(value, numbers.Real):
        return float(value)
    item = getattr(value, "item", None)
    if callable(item):
        size = getattr(value, "size", None)
        numel = value.numel() if callable(getattr(value, "numel", None)) else size
        if numel in (None, 1):
            try:
                scalar = item()
            except (TypeError, ValueError) as exc:
                raise TypeError(f"metric {name!r}: cannot read a scalar from {type(value).__name__}") from exc
            if isinstance(scalar, numbers.Real):
                return float(scalar)
    raise TypeError(
        f"metric {name!r} has value {value!r} of type {type(value).__name__}; log a real number "
        "(int, float, bool, a numpy scalar or a one-element tensor)"
    )


def coerce_metrics(metrics: Mapping[str, Any]) -> dict[str, float]:
    """Validate a metrics mapping: non-empty string names, real-number values."""
    if not isinstance(metrics, Mapping):
        raise TypeError(f"metrics must be a mapping of name to number, got {type(metrics).__name__}")
    out: dict[str, float] = {}
    for name, value in metrics.items():
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"metric names must be non-empty strings, got {name!r}")
        out[name] = coerce_metric(name, value)
    return out


def finite_or_none(value: float) -> float | None:
    """JSON has no NaN/inf: such values are written as null."""
    return value if math.isfinite(value) else None


def flatten_params(
    params: Mapping[str, Any] | Any, *, prefix: str = "", sep: str = "."
) -> dict[str, ParamValue]:
    """Nested mappings and dataclasses flattened to `a.b.c` keys with JSON-safe leaf values.

    Leaves: str/int/float/bool/None stay; Paths and enums become their string/value; lists and
    tuples become lists (of flattened-leaf values); anything else becomes `str(value)`.
    """
    if dataclasses.is_dataclass(params) and not isinstance(params, type):
        params = {f.name: getattr(params, f.name) for f in dataclasses.fields(params)}
    if not isinstance(params, Mapping):
        raise TypeError(f"params must be a mapping or a dataclass instance, got {type(params).__name__}")
    flat: dict[str, ParamValue] = {}
    for key, value in params.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"parameter names must be non-empty strings, got {key!r}")
        full = f"{prefix}{sep}{key}" if prefix else key
        if isinstance(value, Mapping) or (dataclasses.is_dataclass(value) and not isinstance(value, type)):
            nested = flatten_params(value, prefix=full, sep=sep)
            flat.update(nested)
        else:
            flat[full] = _leaf(value)
    return flat


def _leaf(value: Any) -> ParamValue:
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, enum.Enum):
        return _leaf(value.value)
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_leaf(v) for v in value]
    return str(value)


def param_as_text(value: ParamValue) -> str:
    """How a parameter is shown to stores that keep only strings (MLflow)."""
    if isinstance(value, str):
        return value
    return json.dumps(value)

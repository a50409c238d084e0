"""The trusted classes numpy scalars arrive as on the judge's side of the sandbox (plain_data.py decodes
them): NumpyBool and NumpyFloat. Only their value crosses; these classes behave as numpy's scalars do
where the official harnesses would see a difference (identity with True, the type evalplus checks,
arithmetic, division by zero), so that a numpy answer is judged as it would be in the candidate's own
process, without numpy or anything of the candidate's on the trusted side."""

from __future__ import annotations

import math
import operator


class NumpyBool:
    """What a numpy bool (`np.bool_`, or a 0-d bool array) the candidate returns arrives as: equal to
    the bool it holds (and to 0/1), true or false as that bool, but neither a `bool` nor the `True` or
    `False` object — as numpy's is not. So `assert candidate(x) is True` fails, and `== True` passes,
    exactly as in the official harnesses, which compare numpy's own object in the candidate's process.
    Two instances exist: NUMPY_TRUE and NUMPY_FALSE."""

    __slots__ = ("_value",)

    def __init__(self, value: bool):
        self._value = value

    def __bool__(self) -> bool:
        return self._value

    def __eq__(self, other: object) -> bool:
        if type(other) is NumpyBool:
            return self._value is other._value
        if type(other) in (bool, int, float, complex):
            return self._value == other
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __float__(self) -> float:
        return float(self._value)

    def __repr__(self) -> str:
        return f"np.{self._value}_"

    def __str__(self) -> str:
        return str(self._value)

    # Arithmetic, logic and order as numpy's bool has them: with a bool (or another numpy bool) `+` is
    # `or`, `*` is `and`, `-` raises; with a number it counts as 0 or 1 (so `sum()` of them counts);
    # `& | ^ ~` give a numpy bool; comparisons give one too; it is not an index (`__index__`).
    def _operand(self, other: object):
        if type(other) is NumpyBool:
            return other._value
        return other if type(other) in (bool, int, float, complex) else None

    def _arithmetic(op, on_bools=None, reflected=False):
        """A binary operator: `on_bools` decides a bool operand (None: as the number 0 or 1; "raise": a
        TypeError, as numpy's `-` of two bools); a number operand meets 0 or 1."""
        def method(self, other):
            value = self._operand(other)
            if value is None:
                return NotImplemented
            if type(value) is bool and on_bools is not None:
                if on_bools == "raise":
                    raise TypeError("numpy boolean subtract, the `-` operator, is not supported")
                return NUMPY_TRUE if on_bools(self._value, value) else NUMPY_FALSE
            mine, theirs = int(self._value), int(value) if type(value) is bool else value
            base, exponent = (theirs, mine) if reflected else (mine, theirs)
            if op is operator.pow and type(exponent) is int and exponent < 0 and type(base) is int:
                raise ValueError("Integers to negative integer powers are not allowed.")
            return op(base, exponent)
        return method

    __add__ = __radd__ = _arithmetic(operator.add, operator.or_)
    __mul__ = __rmul__ = _arithmetic(operator.mul, operator.and_)
    __sub__, __rsub__ = _arithmetic(operator.sub, "raise"), _arithmetic(operator.sub, "raise", reflected=True)
    __truediv__, __rtruediv__ = _arithmetic(operator.truediv), _arithmetic(operator.truediv, reflected=True)
    __floordiv__ = _arithmetic(operator.floordiv)
    __rfloordiv__ = _arithmetic(operator.floordiv, reflected=True)
    __mod__, __rmod__ = _arithmetic(operator.mod), _arithmetic(operator.mod, reflected=True)
    __pow__, __rpow__ = _arithmetic(operator.pow), _arithmetic(operator.pow, reflected=True)

    def _logic(self, other: object, op):
        value = self._operand(other)
        if type(value) is bool:
            return NUMPY_TRUE if op(self._value, value) else NUMPY_FALSE
        return op(int(self._value), value) if type(value) is int else NotImplemented

    def __and__(self, other: object):
        return self._logic(other, operator.and_)

    def __or__(self, other: object):
        return self._logic(other, operator.or_)

    def __xor__(self, other: object):
        return self._logic(other, operator.xor)

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __invert__(self) -> NumpyBool:
        return NUMPY_FALSE if self._value else NUMPY_TRUE

    def _order(op):
        def method(self, other):
            value = self._operand(other)
            if value is None or type(value) is complex:
                return NotImplemented
            return NUMPY_TRUE if op(self._value, value) else NUMPY_FALSE
        return method

    __lt__, __le__ = _order(operator.lt), _order(operator.le)
    __gt__, __ge__ = _order(operator.gt), _order(operator.ge)
    del _arithmetic, _order


NUMPY_TRUE, NUMPY_FALSE = NumpyBool(True), NumpyBool(False)


class NumpyFloat(float):
    """What a numpy float (`np.float64`, `np.float32`, a 0-d float array) the candidate returns arrives
    as: a float in every use, but not of type `float`, as numpy's is not. evalplus requires
    `type(out) == type(expected)` before its tolerance check, so a numpy float answer that is not
    exactly the expected float fails there, and here."""

    __slots__ = ()

    def __truediv__(self, other: object):
        return _ieee_divide(float(self), other) if type(other) in (int, float, bool) else float.__truediv__(
            self, other)

    def __rtruediv__(self, other: object):
        return _ieee_divide(other, float(self)) if type(other) in (int, float, bool) else NotImplemented

    def __floordiv__(self, other: object):
        return _numpy_divmod(float(self), other)[0] if type(other) in (int, float, bool) else NotImplemented

    def __rfloordiv__(self, other: object):
        return _numpy_divmod(other, float(self))[0] if type(other) in (int, float, bool) else NotImplemented

    def __mod__(self, other: object):
        return _numpy_divmod(float(self), other)[1] if type(other) in (int, float, bool) else NotImplemented

    def __rmod__(self, other: object):
        return _numpy_divmod(other, float(self))[1] if type(other) in (int, float, bool) else NotImplemented

    def __divmod__(self, other: object):
        return _numpy_divmod(float(self), other) if type(other) in (int, float, bool) else NotImplemented

    def __rdivmod__(self, other: object):
        return _numpy_divmod(other, float(self)) if type(other) in (int, float, bool) else NotImplemented

    def __pow__(self, other: object, modulo=None):
        if modulo is not None or type(other) not in (int, float, bool):
            return NotImplemented
        return _numpy_power(float(self), float(other))

    def __rpow__(self, other: object, modulo=None):
        if modulo is not None or type(other) not in (int, float, bool):
            return NotImplemented
        return _numpy_power(float(other), float(self))


def _numpy_divmod(a, b) -> tuple[NumpyFloat, NumpyFloat]:
    """divmod as numpy's floats have it: by zero, (±inf or nan, nan) rather than ZeroDivisionError."""
    if b == 0:
        return _ieee_divide(a, b), NumpyFloat(math.nan)
    quotient, remainder = divmod(float(a), float(b))
    return NumpyFloat(quotient), NumpyFloat(remainder)


def _numpy_power(a: float, b: float) -> NumpyFloat:
    """a ** b as numpy's floats have it: nan where Python's gives a complex (a negative base, a fractional
    exponent), inf where it raises (0 to a negative power), inf on overflow."""
    if a < 0 and not b.is_integer():
        return NumpyFloat(math.nan)
    try:
        return NumpyFloat(a ** b)
    except ZeroDivisionError:
        return NumpyFloat(math.inf)
    except OverflowError:
        return NumpyFloat(math.inf if a > 0 or b % 2 == 0 else -math.inf)


def _ieee_divide(a, b):
    """a / b as numpy's floats divide: by zero gives ±inf or nan (numpy warns), not ZeroDivisionError."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return NumpyFloat(math.nan)
        return NumpyFloat(math.copysign(math.inf, a) * math.copysign(1, b))
    return NumpyFloat(a / b)

"""A tagged binary encoding of plain data: the only thing that crosses the sandbox boundary.

Types (exact built-in types only, never subclasses): None, bool, int, float (inf/nan included),
complex, str, bytes, list, tuple, dict, set, frozenset, range; and iterators/generators, which the
sender drains into an `iter([...])`. Decoding builds fresh built-in objects, so an object with a
forged `__eq__`, a subclass of a built-in, or a pickle-style payload cannot cross: the decoder knows no
other tags and rejects trailing bytes, oversize lengths and excess depth.

Layout: one tag byte, then a payload. Lengths and counts are 4-byte big-endian unsigned.
  N T F          None True False
  i <len><bytes> int, signed big-endian two's complement
  f <8 bytes>    float, IEEE-754 big-endian;  c <16 bytes> complex
  s <len><utf-8> str ('surrogatepass');  b <len><raw> bytes
  l t S z g <count><items>   list tuple set frozenset iterator
  d <count><key><value>...   dict;  r <int><int><int>  range(start, stop, step)
"""

from __future__ import annotations

import struct
import types

_U32 = struct.Struct(">I")
_F64 = struct.Struct(">d")
_C128 = struct.Struct(">dd")
MAX_INT_BYTES = 1 << 16  # ~158k decimal digits: more is a denial-of-service, not an answer


class EncodeError(ValueError):
    """The value is not plain data or is over the size/depth caps."""


class DecodeError(ValueError):
    """The bytes are not a well-formed encoding within the caps."""


_ITER_TYPES = (types.GeneratorType, type(iter([])), type(iter(())), type(iter("")), map, filter, zip,
               enumerate, reversed, type(iter(range(0))), type(iter({}.items())), type(iter({}.keys())),
               type(iter({}.values())), type(iter(set())))


def encode(value: object, *, max_bytes: int = 16 << 20, max_depth: int = 100) -> bytes:
    """Encode `value`; raises EncodeError naming the offending type or cap."""
    out: list[bytes] = []
    size = 0

    def put(chunk: bytes) -> None:
        nonlocal size
        size += len(chunk)
        if size > max_bytes:
            raise EncodeError(f"value is larger than the {max_bytes}-byte cap")
        out.append(chunk)

    def seq(tag: bytes, items, depth: int) -> None:
        items = list(items) if not isinstance(items, list | tuple) else items
        put(tag + _U32.pack(len(items)))
        for item in items:
            walk(item, depth + 1)

    def walk(v: object, depth: int) -> None:
        if depth > max_depth:
            raise EncodeError(f"value nests deeper than {max_depth} levels")
        t = type(v)
        if v is None:
            put(b"N")
        elif t is bool:
            put(b"T" if v else b"F")
        elif t is int:
            n = (v.bit_length() + 8) // 8
            if n > MAX_INT_BYTES:
                raise EncodeError(f"int of {v.bit_length()} bits is over the {MAX_INT_BYTES * 8}-bit cap")
            put(b"i" + _U32.pack(n) + v.to_bytes(n, "big", signed=True))
        elif t is float:
            put(b"f" + _F64.pack(v))
        elif t is str:
            data = v.encode("utf-8", "surrogatepass")
            put(b"s" + _U32.pack(len(data)))
            put(data)
        elif t is list:
            seq(b"l", v, depth)
        elif t is tuple:
            seq(b"t", v, depth)
        elif t is dict:
            put(b"d" + _U32.pack(len(v)))
            for key, item in v.items():
                walk(key, depth + 1)
                walk(item, depth + 1)
        elif t is set:
            seq(b"S", v, depth)
        elif t is frozenset:
            seq(b"z", v, depth)
        elif t is bytes:
            put(b"b" + _U32.pack(len(v)))
            put(v)
        elif t is complex:
            put(b"c" + _C128.pack(v.real, v.imag))
        elif t is range:
            put(b"r")
            for part in (v.start, v.stop, v.step):
                walk(part, depth + 1)
        elif t in _ITER_TYPES:
            drained = []
            for item in v:
                drained.append(item)
                if len(drained) > max_bytes:
                    raise EncodeError(f"iterator yields more than {max_bytes} items")
            seq(b"g", drained, depth)
        else:
            raise EncodeError(f"values of type {t.__module__}.{t.__qualname__} cannot cross the sandbox "
                              "boundary (plain built-in data only)")

    walk(value, 0)
    return b"".join(out)


def decode(data: bytes, *, max_depth: int = 100) -> object:
    """Decode bytes made by `encode`; raises DecodeError on anything else."""
    view = memoryview(data)
    end = len(view)
    pos = 0

    def take(n: int) -> memoryview:
        nonlocal pos
        if n > end - pos:
            raise DecodeError(f"truncated: need {n} bytes at offset {pos}, have {end - pos}")
        chunk = view[pos:pos + n]
        pos += n
        return chunk

    def count(per_item: int) -> int:
        n = _U32.unpack(take(4))[0]
        if n * per_item > end - pos:
            raise DecodeError(f"count {n} at offset {pos} exceeds the remaining {end - pos} bytes")
        return n

    def read(depth: int):
        if depth > max_depth:
            raise DecodeError(f"nesting deeper than {max_depth} levels")
        tag = bytes(take(1))
        if tag == b"N":
            return None
        if tag == b"T":
            return True
        if tag == b"F":
            return False
        if tag == b"i":
            n = count(1)
            if n > MAX_INT_BYTES:
                raise DecodeError(f"int of {n} bytes is over the {MAX_INT_BYTES}-byte cap")
            return int.from_bytes(take(n), "big", signed=True)
        if tag == b"f":
            return _F64.unpack(take(8))[0]
        if tag == b"s":
            try:
                return str(take(count(1)), "utf-8", "surrogatepass")
            except UnicodeDecodeError as exc:
                raise DecodeError(f"invalid UTF-8 in str: {exc}") from None
        if tag == b"b":
            return bytes(take(count(1)))
        if tag == b"c":
            real, imag = _C128.unpack(take(16))
            return complex(real, imag)
        if tag in (b"l", b"t", b"S", b"z", b"g"):
            items = [read(depth + 1) for _ in range(count(1))]
            if tag == b"l":
                return items
            if tag == b"t":
                return tuple(items)
            if tag == b"g":
                return iter(items)
            try:
                return set(items) if tag == b"S" else frozenset(items)
            except TypeError as exc:
                raise DecodeError(f"unhashable set element: {exc}") from None
        if tag == b"d":
            out = {}
            for _ in range(count(2)):
                key = read(depth + 1)
                try:
                    out[key] = read(depth + 1)
                except TypeError as exc:
                    raise DecodeError(f"unhashable dict key: {exc}") from None
            return out
        if tag == b"r":
            parts = [read(depth + 1) for _ in range(3)]
            if any(type(p) is not int for p in parts) or parts[2] == 0:
                raise DecodeError("malformed range")
            return range(*parts)
        raise DecodeError(f"unknown tag {tag!r} at offset {pos - 1}")

    value = read(0)
    if pos != end:
        raise DecodeError(f"{end - pos} trailing bytes after the value")
    return value

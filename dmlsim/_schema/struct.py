"""C-shaped mutable structs and the 8-byte DML_SCALAR_UNION.

A struct is positional in C field order and every field defaults to zero / None, so
``DML_BUFFER_TENSOR_DESC()`` is C++'s ``DML_BUFFER_TENSOR_DESC{}``.
"""
from __future__ import annotations

import struct as _pystruct
from typing import TYPE_CHECKING

import numpy as np

# C types that are floating point scalars; any pointer ("*") defaults to None.
_FLOAT_TYPES = {"FLOAT", "DOUBLE", "float", "double"}
# By-value struct types, filled in as struct classes are defined (name -> class).
BY_VALUE: dict[str, type] = {}


def _default(ctype: str):
    ctype = ctype.strip()
    if "*" in ctype or ctype.endswith("]") and not ctype.startswith("BYTE"):
        return None
    if ctype in _FLOAT_TYPES:
        return 0.0
    cls = BY_VALUE.get(ctype)
    if cls is not None:
        return cls()
    return 0


class Struct:
    """Base of every C struct mirror. Subclasses set ``_fields_ = (("Name", "C type"), ...)``."""

    _fields_: tuple = ()
    __slots__ = ()

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        BY_VALUE[cls.__name__] = cls

    def __init__(self, *args, **kwargs):
        names = [f[0] for f in self._fields_]
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__}: takes at most {len(names)} positional "
                            f"fields ({', '.join(names)}), got {len(args)}")
        for name, ctype in self._fields_:
            object.__setattr__(self, name, _default(ctype))
        for name, value in zip(names, args):
            object.__setattr__(self, name, value)
        for key, value in kwargs.items():
            if key not in names:
                raise TypeError(f"{type(self).__name__}: no field {key!r}; fields are "
                                f"{', '.join(names)}")
            if key in names[:len(args)]:
                raise TypeError(f"{type(self).__name__}: field {key!r} given twice")
            object.__setattr__(self, key, value)

    if not TYPE_CHECKING:  # type checkers see the annotated fields, and only those
        def __setattr__(self, key, value):
            if key not in self.field_names():
                raise AttributeError(f"{type(self).__name__} has no field {key!r}")
            object.__setattr__(self, key, value)

    @classmethod
    def field_names(cls):
        return tuple(f[0] for f in cls._fields_)

    def __repr__(self):
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n, _ in self._fields_)
        return f"{type(self).__name__}({inner})"

    def __eq__(self, other):
        return type(other) is type(self) and all(
            getattr(self, n) == getattr(other, n) for n, _ in self._fields_)

    # Mutable, like the C struct: not hashable.
    __hash__ = None  # type: ignore[assignment]


class Union(Struct):
    """Marker base for C unions."""


_SCALAR_FORMATS = {
    "Int8": "<b", "UInt8": "<B", "Int16": "<h", "UInt16": "<H", "Int32": "<i",
    "UInt32": "<I", "Int64": "<q", "UInt64": "<Q", "Float32": "<f", "Float64": "<d",
}


class DML_SCALAR_UNION(Union):
    """DML_SCALAR_UNION: every member aliases the same 8 little-endian bytes.

    Set ``Float32`` and read ``UInt32`` to get the bits, exactly as in C. Members narrower
    than 8 bytes leave the upper bytes as they were.
    """

    _fields_ = (("Bytes", "BYTE[8]"), ("Int8", "INT8"), ("UInt8", "UINT8"),
                ("Int16", "INT16"), ("UInt16", "UINT16"), ("Int32", "INT32"),
                ("UInt32", "UINT32"), ("Int64", "INT64"), ("UInt64", "UINT64"),
                ("Float32", "FLOAT"), ("Float64", "DOUBLE"))
    __slots__ = ("_b",)

    def __init__(self, *args, **kwargs):
        object.__setattr__(self, "_b", bytearray(8))
        names = self.field_names()
        if len(args) > 1:
            raise TypeError("DML_SCALAR_UNION: a union takes at most one positional value "
                            "(its first member, Bytes)")
        if args:
            self.Bytes = args[0]
        for key, value in kwargs.items():
            if key not in names:
                raise TypeError(f"DML_SCALAR_UNION: no member {key!r}")
            setattr(self, key, value)

    def __getattr__(self, key):
        if key == "Bytes":
            return bytes(self._b)
        fmt = _SCALAR_FORMATS.get(key)
        if fmt is None:
            raise AttributeError(f"DML_SCALAR_UNION has no member {key!r}")
        if fmt[1] in "fd":  # a NumPy scalar carries the exact bits (NaN payloads included)
            return np.frombuffer(bytes(self._b[:4 if fmt[1] == "f" else 8]),
                                 np.float32 if fmt[1] == "f" else np.float64)[0]
        size = _pystruct.calcsize(fmt)
        return _pystruct.unpack(fmt, bytes(self._b[:size]))[0]

    def __setattr__(self, key, value):
        if key == "Bytes":
            data = bytes(value)
            if len(data) > 8:
                raise ValueError("DML_SCALAR_UNION.Bytes: at most 8 bytes")
            self._b[:len(data)] = data
            return
        fmt = _SCALAR_FORMATS.get(key)
        if fmt is None:
            raise AttributeError(f"DML_SCALAR_UNION has no member {key!r}")
        if fmt[1] in "fd":
            target = np.float32 if fmt[1] == "f" else np.float64
            if isinstance(value, np.floating) and value.dtype == target:
                packed = value.tobytes()  # bit for bit
            else:
                packed = _pystruct.pack(fmt, float(value))
        else:
            size = _pystruct.calcsize(fmt)
            value = int(value)
            lo, hi = (-(1 << (8 * size - 1)), 1 << (8 * size - 1)) if fmt[1].islower() \
                else (0, 1 << (8 * size))
            if not lo <= value < hi:
                raise OverflowError(f"DML_SCALAR_UNION.{key}: {value} does not fit")
            packed = _pystruct.pack(fmt, value)
        self._b[:len(packed)] = packed

    def __repr__(self):
        return f"DML_SCALAR_UNION(Bytes={bytes(self._b)!r})"

    def __reduce__(self):  # copy, deepcopy and pickle: the eight bytes
        return (DML_SCALAR_UNION, (bytes(self._b),))

    def __eq__(self, other):
        return isinstance(other, DML_SCALAR_UNION) and bytes(other._b) == bytes(self._b)

    def as_type(self, np_dtype):
        """The value read as a NumPy scalar of ``np_dtype`` (the first itemsize bytes)."""
        dt = np.dtype(np_dtype)
        return np.frombuffer(bytes(self._b[:dt.itemsize]), dtype=dt)[0]

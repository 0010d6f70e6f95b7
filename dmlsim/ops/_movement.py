"""Shared pieces of the data-movement operators (slice, join, pad, tile, gather, ...).

Data movement is exact to the bit: kernels move each element's raw bits as the unsigned
integer of its width (``to_bits`` / ``from_bits``), so no float operation can touch a value
(NaN payloads, signaling NaNs, -0.0 and denormals survive on every backend). References move
NumPy arrays, which copy bits too.

Rules shared by the windowed operators: the ``DimensionCount`` field equals the tensors'
dimension count, each array field has DimensionCount entries, axes are in range.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core import dtypes
from .._core.dtypes import UNSIGNED_OF_SIZE

IN, OUT = "InputTensor", "OutputTensor"


def to_bits(x):
    """The elements of JAX array ``x`` as the unsigned integers of their bits."""
    u = UNSIGNED_OF_SIZE[np.dtype(x.dtype).itemsize]
    return x if x.dtype == u else lax.bitcast_convert_type(x, u)


def from_bits(u, dtype):
    dtype = np.dtype(dtype)
    return u if u.dtype == dtype else lax.bitcast_convert_type(u, dtype)


def bits_scalar(value, dtype):
    """A NumPy scalar of ``dtype`` as the unsigned scalar of its bits."""
    dtype = np.dtype(dtype)
    return np.asarray(value, dtype).view(UNSIGNED_OF_SIZE[dtype.itemsize])[()]


def dimension_count(*arrays, tensors=(IN, OUT), field="DimensionCount"):
    """``field`` equals the DimensionCount of ``tensors``; each of ``arrays`` (attribute
    fields) has that many entries."""
    def rule(spec, check):
        n = spec.attr.get(field)
        for t in tensors:
            ts = spec.tensor.get(t)
            if ts is not None and len(ts.sizes) != n:
                check.fail(f"{field} is {n} but {t}.DimensionCount is {len(ts.sizes)}; they must "
                           "match")
        for a in arrays:
            v = spec.attr.get(a)
            if v is None or len(v) != n:
                check.fail(f"{a} has {0 if v is None else len(v)} entries but {field} is {n}")
    rule.__doc__ = f"{field} matches {', '.join(tensors)} and the lengths of {', '.join(arrays)}."
    return rule


def axis_in_range(field="Axis", tensor=IN):
    def rule(spec, check):
        t = spec.tensor.get(tensor)
        if t is None:
            return
        axis = spec.attr[field]
        if not 0 <= axis < len(t.sizes):
            check.fail(f"{field} is {axis}; it must be in [0, {tensor}.DimensionCount - 1] = "
                       f"[0, {len(t.sizes) - 1}]")
    rule.__doc__ = f"{field} indexes a dimension of {tensor}."
    return rule


def tensor_type_value(value: float, data_type: int):
    """A FLOAT attribute converted to a tensor type "as a C cast": rounded to float32, then
    to nearest even for FLOAT16, truncated toward zero (saturating, NaN -> 0) for integers."""
    dt = dtypes.numpy_dtype(data_type)
    v = np.float32(value)
    if dt.kind == "f":
        return v.astype(dt)
    info = np.iinfo(dt)
    if np.isnan(v):
        return dt.type(0)
    t = int(np.trunc(np.float64(v))) if np.isfinite(v) else (info.max if v > 0 else info.min)
    return dt.type(min(max(t, info.min), info.max))


def take(x, index_arrays):
    """``x[index_arrays]`` (NumPy integer arrays) in JAX, moving bits."""
    return jnp.asarray(x)[tuple(jnp.asarray(i) for i in index_arrays)]

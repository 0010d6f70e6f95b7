"""NumPy helpers for the float64 references, written apart from the kernels' JAX helpers.

A reference shares no formula with its kernel: where a kernel uses ``_ieee.fmax`` (written
so that GPU compilers keep its NaN tests), the reference uses NumPy's own ``fmax`` and fixes
the sign of zero separately; where a kernel quantizes with ``jnp.round``, the reference
rounds each value with Python's ``round`` (half to even) on exact fractions.
"""
from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np


def ref_max(a, b):
    """HLSL max / IEEE 754-2019 maximumNumber: a NaN operand is ignored; max(-0, +0) = +0."""
    a, b = np.asarray(a), np.asarray(b)
    if not np.issubdtype(np.result_type(a, b), np.floating):
        return np.maximum(a, b)
    r = np.fmax(a, b)
    zeros = (a == 0) & (b == 0)
    return np.where(zeros, np.where(np.signbit(a) & np.signbit(b), -0.0, 0.0).astype(r.dtype), r)


def ref_min(a, b):
    """HLSL min / IEEE 754-2019 minimumNumber: a NaN operand is ignored; min(-0, +0) = -0."""
    a, b = np.asarray(a), np.asarray(b)
    if not np.issubdtype(np.result_type(a, b), np.floating):
        return np.minimum(a, b)
    r = np.fmin(a, b)
    zeros = (a == 0) & (b == 0)
    return np.where(zeros, np.where(np.signbit(a) | np.signbit(b), -0.0, 0.0).astype(r.dtype), r)


def int_bound(value, dtype) -> int:
    """A FLOAT attribute as an integer tensor type holds it (CLIP's remark): the float32 value
    truncated toward zero, saturated at the type's limits; NaN is 0."""
    v = float(np.float32(value))
    info = ml_dtypes.iinfo(dtype)
    if np.isnan(v):
        return 0
    if np.isinf(v):
        return int(info.max if v > 0 else info.min)
    return min(max(int(v), int(info.min)), int(info.max))


def round_half_even(v: float) -> float:
    """Python's round() on the exact value: ties go to the even integer; NaN and inf as is."""
    if not np.isfinite(v):
        return float(v)
    return float(round(Fraction(float(v))))


def saturate(v: float, dtype) -> int:
    """The integer ``dtype`` value nearest to ``v`` (NaN -> 0; +-inf -> the limits)."""
    info = ml_dtypes.iinfo(dtype)
    if np.isnan(v):
        return 0
    if v == np.inf:
        return int(info.max)
    if v == -np.inf:
        return int(info.min)
    return int(min(max(int(v), int(info.min)), int(info.max)))


def quantize_values(v, zero_point, dtype):
    """Element by element: saturate(round_half_even(v) + zero_point) in ``dtype``; ``v``
    float64 (NaN rounds to 0, so it gives the zero point)."""
    v = np.asarray(v, np.float64)
    zp = np.zeros(v.shape) if zero_point is None else \
        np.broadcast_to(np.asarray(zero_point, np.float64), v.shape)
    out = []
    for x, z in zip(v.reshape(-1), zp.reshape(-1)):
        r = round_half_even(x)
        r = 0.0 if np.isnan(r) else r
        out.append(saturate(r + z, dtype))
    return np.array(out, dtype).reshape(v.shape)


def quantize_fractions(values, zero_point, dtype):
    """Exact requantization: ``values`` (NumPy ``object``, Python integers or Fractions)
    rounded half to even, plus ``zero_point`` (broadcast), saturated to ``dtype``."""
    v = np.asarray(values, object)
    zp = np.zeros(v.shape, object) if zero_point is None else \
        np.broadcast_to(np.asarray(zero_point).astype(object), v.shape)
    info = ml_dtypes.iinfo(dtype)
    out = [min(max(round(Fraction(x)) + int(z), int(info.min)), int(info.max))
           for x, z in zip(v.reshape(-1), zp.reshape(-1))]
    return np.array(out, dtype).reshape(v.shape)


def fractions(x):
    """A float array as exact Fractions (NumPy ``object``)."""
    x = np.asarray(x, np.float64)
    return np.array([Fraction(float(v)) for v in x.reshape(-1)], object).reshape(x.shape)

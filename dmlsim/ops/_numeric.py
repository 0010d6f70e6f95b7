"""Arithmetic shared by the element-wise math operators, as JAX/NumPy twins.

Choices made where the pages are silent (each operator module repeats the ones it uses):

- Float ``max``/``min`` (MAX, MIN, CLIP, THRESHOLD) behave as HLSL's ``max``/``min`` on
  Direct3D hardware (IEEE 754-2008 maxNum/minNum): a NaN operand is ignored, so the result is
  NaN only when both operands are NaN. Between -0.0 and +0.0, max gives +0.0 and min -0.0.
  (``_ieee.fmax``/``fmin``, written so that GPU compilers keep the NaN tests.)
- Integer division by zero gives a quotient with every bit set (-1 signed, the maximum
  unsigned), as D3D's ``udiv``; the remainder is then ``a - b * q = a``. INT_MIN / -1 wraps to
  INT_MIN and INT_MIN % -1 is 0. Nothing faults.
- FLOAT attributes (Min, Max, Exponent) are C ``FLOAT``s: rounded to float32 first.
- Integer references are exact Python-integer arithmetic wrapped to the output type.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax


def is_int(dtype) -> bool:
    return not np.issubdtype(np.dtype(dtype), np.floating)


def is_signed(dtype) -> bool:
    return np.issubdtype(np.dtype(dtype), np.signedinteger)


def f32(value) -> np.float32:
    """A FLOAT attribute as the C struct holds it."""
    return np.float32(value)


def cast_attr(value, dtype):
    """A FLOAT attribute cast to the tensor type (CLIP's remark): floats round to nearest even;
    integers truncate toward zero, saturating at the type's limits (NaN gives 0)."""
    dtype, v = np.dtype(dtype), f32(value)
    if not is_int(dtype):
        return v.astype(dtype)
    info = np.iinfo(dtype)
    if np.isnan(v):
        return dtype.type(0)
    t = int(np.trunc(np.float64(v))) if np.isfinite(v) else (info.max if v > 0 else info.min)
    return dtype.type(min(max(t, info.min), info.max))


# ---- max / min -------------------------------------------------------------------------------

# ---- integer division ------------------------------------------------------------------------

def int_div(a, b):
    """Truncating integer division with the choices in the module docstring (JAX)."""
    special = (b == 0) | ((b == -1) if is_signed(a.dtype) else False)
    q = lax.div(a, jnp.where(special, jnp.ones_like(b), b))
    if is_signed(a.dtype):
        q = jnp.where(b == -1, -a, q)  # -INT_MIN wraps to INT_MIN
    all_bits = -1 if is_signed(a.dtype) else jnp.iinfo(a.dtype).max
    return jnp.where(b == 0, jnp.full_like(a, all_bits), q)


def int_rem(a, b, floor=False):
    """C remainder (sign of the dividend), or with ``floor`` Python's (sign of the divisor)."""
    special = (b == 0) | ((b == -1) if is_signed(a.dtype) else False)
    r = lax.rem(a, jnp.where(special, jnp.ones_like(b), b))
    r = jnp.where(b == 0, a, r)
    if floor and is_signed(a.dtype):
        r = jnp.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)
    return r


def float_rem(a, b, floor=False):
    """C fmod (exact), or Python's float % when ``floor`` (CPython's float_rem)."""
    r = lax.rem(a, b)
    if not floor:
        return r
    r = jnp.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)
    return jnp.where(r == 0, jnp.copysign(jnp.zeros_like(r), b), r)


# ---- exact integer references ----------------------------------------------------------------

def wrap(values, dtype):
    """Python ints (any size) -> ``dtype`` modulo 2^bits, as integer hardware wraps."""
    dtype = np.dtype(dtype)
    mask = (1 << (8 * dtype.itemsize)) - 1
    flat = [int(v) & mask for v in np.asarray(values, object).reshape(-1)]
    return np.array(flat, np.uint64).astype(dtype).reshape(np.shape(values))


def py(a):
    """An integer array as an object array of Python ints (exact, any size)."""
    return np.asarray(a).astype(object)


def trunc_div(x, y):
    if y == 0:
        return -1
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def np_int_div(a, b, dtype):
    q = np.frompyfunc(trunc_div, 2, 1)(py(a), py(b))
    if not is_signed(dtype):
        q = np.where(py(b) == 0, np.iinfo(dtype).max, q)
    return wrap(q, dtype)


def np_int_rem(a, b, dtype, floor=False):
    x, y = py(a), py(b)

    def rem(u, v):
        if v == 0:
            return u
        r = u - v * trunc_div(u, v)
        return r + v if floor and r != 0 and (r < 0) != (v < 0) else r
    return wrap(np.frompyfunc(rem, 2, 1)(x, y), dtype)

"""Ordering keys and reductions shared by REDUCE, ARGMIN/ARGMAX, TOP_K and the cumulative
operators.

Ordering operators (ARGMIN, ARGMAX, TOP_K, and REDUCE's ARGMIN/ARGMAX) compare values in
one total order where NaN (of either sign) is larger than every number, as ONNX's TopK and
NumPy's argmax order it, and -0.0 equals +0.0 (a tie). Ties go to the lowest index unless an
AxisDirection says otherwise. The key is an unsigned integer with that order (``sort_key``).
Reduced axes are moved last and flattened in increasing axis order, so an index over
several axes is row-major over them (the ARGMAX page's example 3).
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core.dtypes import UNSIGNED_OF_SIZE
from .._core.registry import Sizes
from .._schema.members import members


def sort_key(x):
    """Unsigned keys ordering ``x`` as the module docstring says (JAX)."""
    dt = np.dtype(x.dtype)
    u = UNSIGNED_OF_SIZE[dt.itemsize]
    top = jnp.asarray(np.iinfo(u).max, u)
    sign = jnp.asarray(1 << (8 * dt.itemsize - 1), u)
    if dt.kind == "u":
        return x
    if dt.kind == "i":
        return lax.bitcast_convert_type(x, u) ^ sign
    b = lax.bitcast_convert_type(jnp.where(x == 0, jnp.zeros((), dt), x), u)  # -0.0 is +0.0
    key = jnp.where((b & sign) != 0, ~b, b | sign)
    return jnp.where(jnp.isnan(x), top, key)


def reference_key(v):
    """The reference's key of one value: (is NaN, value) compared as a tuple."""
    v = v.item() if hasattr(v, "item") else v
    if isinstance(v, float) and v != v:
        return (1, 0)
    return (0, v + 0 if isinstance(v, int) else float(v) + 0.0)


def moved(x, axes):
    """``x`` with ``axes`` last, flattened into one: (array, kept shape with 1s)."""
    axes = tuple(sorted(axes))
    keep = [d for d in range(x.ndim) if d not in axes]
    y = jnp.transpose(x, keep + list(axes)) if hasattr(x, "at") else np.transpose(
        x, keep + list(axes))
    out_shape = tuple(1 if d in axes else x.shape[d] for d in range(x.ndim))
    return y.reshape(tuple(x.shape[d] for d in keep) + (-1,)), out_shape


def fold(fn, x, axes):
    """Left fold of ``fn`` along each of ``axes`` in turn, keeping dims (JAX or NumPy)."""
    for a in sorted(axes):
        at = (slice(None),) * a
        acc = x[at + (slice(0, 1),)]
        for i in range(1, x.shape[a]):
            acc = fn(acc, x[at + (slice(i, i + 1),)])
        x = acc
    return x


def arg_extreme(x, axes, largest, last):
    """Index (int64, keepdims) of the largest/smallest element over ``axes``; ties to the
    first, or the ``last``, in row-major order over the axes (JAX)."""
    flat, out_shape = moved(x, axes)
    key = sort_key(flat)
    if not largest:
        key = ~key
    if last:
        key = jnp.flip(key, axis=-1)
    idx = jnp.argmax(key, axis=-1)  # the first of the equal maxima
    if last:
        idx = flat.shape[-1] - 1 - idx
    return idx.reshape(out_shape)


def reference_arg_extreme(x, axes, largest, last):
    """The same, group by group over Python tuples of (is NaN, value)."""
    flat, out_shape = moved(np.asarray(x), axes)
    rows = flat.reshape(-1, flat.shape[-1])
    out = []
    for row in rows:
        keys = [reference_key(v) for v in row]
        best = max(keys) if largest else min(keys)
        hits = [i for i, k in enumerate(keys) if k == best]
        out.append(hits[-1] if last else hits[0])
    return np.array(out, np.int64).reshape(out_shape)


INCREASING, DECREASING = members("DML_AXIS_DIRECTION", "INCREASING DECREASING")


def direction_rule(spec, check):
    if spec.attr["AxisDirection"] not in (INCREASING, DECREASING):
        check.fail(f"AxisDirection is {spec.attr['AxisDirection']}, which is not a "
                   "DML_AXIS_DIRECTION (0 INCREASING, 1 DECREASING)")


def axes_rule(spec, check):
    axes, t = spec.attr.get("Axes"), spec.tensor.get("InputTensor")
    if t is None:
        return
    n = len(t.sizes)
    if not axes:
        check.fail(f"AxisCount is 0; at least one axis in [0, {n - 1}] is required")
    for i, a in enumerate(axes):
        if not 0 <= a < n:
            check.fail(f"Axes[{i}] is {a}; values must be in [0, InputTensor.DimensionCount - 1]"
                       f" = [0, {n - 1}]")
    if len(set(axes)) != len(axes):
        check.fail(f"Axes {list(axes)} lists an axis twice")


def reduced_sizes(spec, check, out="OutputTensor"):
    t = spec.tensor["InputTensor"]
    axes_rule(spec, check)
    return {out: Sizes([1 if d in spec.attr["Axes"] else s for d, s in enumerate(t.sizes)],
                       "InputTensor and Axes")}

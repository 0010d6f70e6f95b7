"""The maxima of MAX_POOLING(1, 2) (``max_pooling`` states the rules): with their flat input
indices (first of equals wins, NaN loses, padding never wins), the maxima alone (cheaper:
no index tracked), and the float64 reference walking every window."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ._pool_reduce import many_taps, window_best
from ._pooling import dilations, output_shape, reference_windows, spatial_out, taps


def max_pool(x, a):
    """(maxima, int64 flat input indices) (JAX)."""
    if many_taps(a):
        best, idx = window_best(x, a)
        return best, idx.astype(jnp.int64)
    best = idx = None
    plane = np.cumprod((1,) + x.shape[::-1])[::-1][1:]  # row-major element strides
    nc = (jnp.arange(x.shape[0]) * plane[0])[:, None] + (jnp.arange(x.shape[1]) * plane[1])
    dil = a.get("Dilations") or (1,) * a["DimensionCount"]
    grids = jnp.meshgrid(*[jnp.arange(o) for o in output_shape(x, a)[2:]], indexing="ij")
    for t, v, valid in taps(x, a, 0):
        pos = sum((g * a["Strides"][d] + t[d] * dil[d] - a["StartPadding"][d]) * plane[2 + d]
                  for d, g in enumerate(grids))
        here = jnp.broadcast_to(nc.reshape(nc.shape + (1,) * len(grids)) + pos, v.shape)
        if best is None:  # the first tap: may be padding, so start from "nothing yet"
            have = jnp.broadcast_to(valid, v.shape)
            best, idx = v, here
            continue
        nan_best = jnp.isnan(best) if jnp.issubdtype(v.dtype, jnp.floating) else False
        wins = valid & (~have | (v > best) | (nan_best & (v == v)))
        best, idx = jnp.where(wins, v, best), jnp.where(wins, here, idx)
        have = have | valid
    return best, idx.astype(jnp.int64)


def max_values(x, a):
    """The maxima alone (JAX): padding reads NaN (floats) or the type's minimum, which never
    win over an element, so no index or validity is tracked. One spatial dimension at a time,
    the last first (a 3x3 window is 3 + 3 slices, not 9): the first of the maxima in row-major
    window order is the first of the maxima of the first row holding one, so the same bits as
    walking every tap (1.6x faster on the H200). Windows of many taps: ``window_best``."""
    if many_taps(a):
        return window_best(x, a)[0]
    floating = jnp.issubdtype(x.dtype, jnp.floating)
    fill = np.nan if floating else np.iinfo(x.dtype).min
    dil, out = dilations(a), spatial_out(a, x.shape[2:])
    # On a CPU a large pooling runs channels last: XLA's CPU convolutions keep NHWC, and a
    # pooling between two of them then pads and slices in their layout instead of transposing
    # out of it and back (resnet18 b8: 0.83-0.85x the time, same bits). A small one, as in
    # PaddleOCR's models between convolutions done as channel products, stays (1.02-1.04x).
    last = jax.default_backend() == "cpu" and x.ndim > 3 and x.size >= 1 << 20
    first = 1 if last else 2
    pad = [(0, 0, 0)] * x.ndim
    for d, (p0, p1) in enumerate(zip(a["StartPadding"], a["EndPadding"])):
        pad[first + d] = (p0, p1, 0)
    best = lax.pad(jnp.moveaxis(x, 1, -1) if last else x, jnp.asarray(fill, x.dtype), pad)
    for d in reversed(range(a["DimensionCount"])):
        axis, stride, row = first + d, a["Strides"][d], None
        for t in range(a["WindowSize"][d]):
            start, limit, step = [0] * best.ndim, list(best.shape), [1] * best.ndim
            start[axis] = t * dil[d]
            limit[axis] = start[axis] + (out[d] - 1) * stride + 1
            step[axis] = stride
            v = lax.slice(best, start, limit, step)
            if row is None:
                row = v
            elif floating:
                row = jnp.where((v > row) | (jnp.isnan(row) & (v == v)), v, row)
            else:
                row = jnp.maximum(row, v)
        best = row
    return jnp.moveaxis(best, -1, 1) if last else best


def max_pool_reference(x, a):
    x = np.asarray(x)
    shape = output_shape(x, a)
    y, ind = np.zeros(shape, x.dtype), np.zeros(shape, np.int64)
    for o, items, _ in reference_windows(x, a):
        numbers = [(i, v) for i, v in items if v == v]  # NaN loses to every number
        if numbers:
            top = max(v for _, v in numbers)
            first = next(i for i, v in numbers if v == top)  # -0.0 == +0.0: the first
        else:
            first = items[0][0]
        y[o], ind[o] = x.reshape(-1)[first], first
    return y, ind

"""Pooling windows reduced whole, for windows of many taps, and the valid-tap counts of a
window geometry (``_pooling`` has the geometry and the tap-by-tap form)."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from ._pooling import dilations, spatial_out, taps

# Windows of more taps than this reduce through one reduce_window instead of a slice per tap:
# GlobalAveragePool over 120 x 160 was 19,200 slices and adds, a minute of XLA compilation.
TAPS_MAX = 64


def many_taps(a) -> bool:
    return int(np.prod(a["WindowSize"])) > TAPS_MAX


def _window_args(a):
    nd, dil = a["DimensionCount"], dilations(a)
    return ((1, 1) + tuple(a["WindowSize"]), (1, 1) + tuple(a["Strides"]),
            ((0, 0), (0, 0)) + tuple(zip(a["StartPadding"], a["EndPadding"])),
            (1, 1) + tuple(dil[:nd]))


def window_sum(x, a):
    """Each window's sum, padding adding 0 (JAX): tap by tap in row-major window order, or, past
    TAPS_MAX taps, one reduce_window in an order XLA picks (the error bounds hold for any)."""
    if not many_taps(a):
        total = jnp.zeros((), x.dtype)
        for _, v, _ in taps(x, a, 0):
            total = total + v
        return total
    window, strides, pad, dil = _window_args(a)
    return lax.reduce_window(x, jnp.zeros((), x.dtype), lax.add, window, strides, pad,
                             window_dilation=dil)


def window_best(x, a):
    """(maxima, flat input indices) of windows of more than TAPS_MAX taps (JAX): one variadic
    reduce_window under a total order -- padding below NaN below every number, equal values by
    the smaller index -- so the order XLA reduces in cannot matter: first of equals wins (-0.0
    and +0.0 included), NaN loses, padding never wins, as the tap-by-tap form decides."""
    floating = jnp.issubdtype(x.dtype, jnp.floating)
    plane = np.cumprod((1,) + x.shape[::-1])[::-1][1:]
    it = np.int64 if x.size >= 2 ** 31 else np.int32
    idx = sum(lax.broadcasted_iota(it, x.shape, d) * it(plane[d]) for d in range(x.ndim))
    pad_index = np.iinfo(it).max  # padding: the largest index, below every element

    def better(acc, new):
        (v, i), (w, j) = acc, new
        first = j < i
        if floating:
            vn, wn = v == v, w == w
            wins = (wn & (~vn | (w > v) | ((w == v) & first))) | (~wn & ~vn & first)
        else:
            wins = (w > v) | ((w == v) & first)
        return jnp.where(wins, w, v), jnp.where(wins, j, i)

    low = jnp.asarray(np.nan if floating else np.iinfo(x.dtype).min, x.dtype)
    window, strides, pad, dil = _window_args(a)
    return lax.reduce_window((x, idx), (low, jnp.asarray(pad_index, it)), better, window,
                             strides, pad, window_dilation=dil)


def valid_counts(shape, a):
    """How many input elements (not padding) each output position's window holds, shaped as
    the output's spatial dimensions (NumPy: the geometry alone)."""
    dil, out = dilations(a), spatial_out(a, shape[2:])
    counts = np.ones((), np.int64)
    for d, n in enumerate(shape[2:]):
        pos = (np.arange(out[d])[:, None] * a["Strides"][d] - a["StartPadding"][d] +
               np.arange(a["WindowSize"][d])[None, :] * dil[d])
        per = ((pos >= 0) & (pos < n)).sum(axis=1)
        counts = np.multiply.outer(counts, per)
    return counts

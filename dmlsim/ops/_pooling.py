"""Sliding-window pooling shared by AVERAGE_POOLING(1), LP_POOLING(1) and MAX_POOLING(1, 2):
the window geometry, its checks, the JAX taps and a float64 reference that walks every
output position apart from the kernel.

Per spatial dimension (the pages' formula), with the dilated window extent
wd = (WindowSize - 1) * Dilation + 1 (Dilation 1 for the operators without Dilations):

    out = (in + StartPadding + EndPadding - wd) / Stride + 1     (rounded down)

Output position o reads the taps o * Stride + t * Dilation - StartPadding, t in the window;
a tap outside the input is padding. Kernels read one strided slice of the padded input per
tap (``taps``), so NaN rules and index ties are exact, on every backend.
"""
from __future__ import annotations

import itertools

import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core.registry import Sizes

WINDOW = ("Strides", "WindowSize", "StartPadding", "EndPadding")


def dilations(a):
    return a.get("Dilations") or (1,) * a["DimensionCount"]


def spatial_out(a, sizes):
    dil = dilations(a)
    return [(n + a["StartPadding"][d] + a["EndPadding"][d] - (a["WindowSize"][d] - 1) * dil[d]
             - 1) // a["Strides"][d] + 1 for d, n in enumerate(sizes)]


def window_sizes(spec, check, outputs=("OutputTensor",)):
    """The pages' rules and output sizes, for every output field in ``outputs``."""
    a, x = spec.attr, spec.tensor["InputTensor"]
    nd = a["DimensionCount"]
    if nd != len(x.sizes) - 2:
        check.fail(f"DimensionCount is {nd} but InputTensor.DimensionCount is {len(x.sizes)}; it "
                   f"must be InputTensor.DimensionCount - 2 = {len(x.sizes) - 2}")
    for f in WINDOW + (("Dilations",) if "Dilations" in a else ()):
        if f in ("Strides", "WindowSize", "Dilations"):
            for i, v in enumerate(a[f]):
                if v < 1:
                    check.fail(f"{f}[{i}] is {v}; it must be at least 1")
    out = spatial_out(a, x.sizes[2:])
    dil = dilations(a)
    for d, o in enumerate(out):
        wd = (a["WindowSize"][d] - 1) * dil[d] + 1
        padded = x.sizes[2 + d] + a["StartPadding"][d] + a["EndPadding"][d]
        if o < 1 or padded < wd:
            check.fail(f"the window of spatial dimension {d} ({wd} elements, dilated) is larger "
                       f"than the padded input ({padded})")
        if a["StartPadding"][d] >= wd or a["EndPadding"][d] >= wd:
            check.fail(f"the padding of spatial dimension {d} ({a['StartPadding'][d]}, "
                       f"{a['EndPadding'][d]}) is not smaller than the window ({wd}): a window "
                       "would hold only padding")
    sizes = list(x.sizes[:2]) + out
    return {f: Sizes(sizes, "InputTensor and the window arrays") for f in outputs}


def taps(x, a, fill):
    """Yield (values, valid) per window tap in row-major window order: the strided slice of
    ``x`` padded with ``fill`` each output position reads, and whether it is an input
    element (JAX)."""
    nd, dil = a["DimensionCount"], dilations(a)
    pad = [(0, 0, 0)] * 2 + [(p0, p1, 0) for p0, p1 in zip(a["StartPadding"], a["EndPadding"])]
    xp = lax.pad(x, jnp.asarray(fill, x.dtype), pad)
    ones = lax.pad(jnp.ones(x.shape[2:], bool), False, pad[2:])
    out = spatial_out(a, x.shape[2:])
    for t in itertools.product(*[range(w) for w in a["WindowSize"]]):
        start = [t[d] * dil[d] for d in range(nd)]
        limit = [s + (o - 1) * st + 1 for s, o, st in zip(start, out, a["Strides"])]
        v = lax.slice(xp, [0, 0] + start, list(x.shape[:2]) + limit, [1, 1] + list(a["Strides"]))
        yield t, v, lax.slice(ones, start, limit, a["Strides"])


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


def reference_windows(x, a):
    """Yield (output index, [(flat input index, value) of the window's input elements],
    taps including padding) for every output element (NumPy, one position at a time)."""
    x = np.asarray(x)
    nd, dil = a["DimensionCount"], dilations(a)
    out = spatial_out(a, x.shape[2:])
    strides = np.cumprod((1,) + x.shape[::-1])[::-1][1:]  # element strides, row-major
    for n, c in np.ndindex(*x.shape[:2]):
        for o in np.ndindex(*out):
            items = []
            for t in np.ndindex(*a["WindowSize"]):
                pos = [o[d] * a["Strides"][d] + t[d] * dil[d] - a["StartPadding"][d]
                       for d in range(nd)]
                if all(0 <= p < x.shape[2 + d] for d, p in enumerate(pos)):
                    idx = (n, c) + tuple(pos)
                    items.append((int(np.dot(idx, strides)), x[idx]))
            yield (n, c) + o, items, int(np.prod(a["WindowSize"]))


def window_attrs(fields, **extra):
    """The window attributes of a kernel's keyword arguments (``locals()``), plus ``extra``."""
    a = {k: fields[k] for k in ("DimensionCount", "Strides", "WindowSize", "StartPadding",
                                "EndPadding")}
    a.update(extra)
    return a


def output_shape(x, a):
    return x.shape[:2] + tuple(spatial_out(a, x.shape[2:]))

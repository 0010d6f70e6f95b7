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

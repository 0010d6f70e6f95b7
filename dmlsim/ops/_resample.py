"""Resampling shared by UPSAMPLE_2D and RESAMPLE(1, 2, 3): the pages' coordinate map, the
per-dimension tap tables the kernels gather with, a float64 reference computed one output
element at a time, and the rules.

The pages relate the coordinates as OutputX = (InputX + InputPixelOffset) * Scale +
OutputPixelOffset, so output element o samples input coordinate

    x = (o - OutputPixelOffset) / Scale - InputPixelOffset.

- LINEAR: x is clamped to [0, n - 1] ("the output edges are clamped") and the two
  neighbours floor(x), floor(x) + 1 are weighted 1 - f, f (f = x - floor(x)); dimensions
  are interpolated one after the other (separable: bilinear ... quadrilinear).
- NEAREST_NEIGHBOR: RESAMPLE2/3 round x toward RoundingDirection (INCREASING ceil,
  DECREASING floor) and clamp; RESAMPLE and RESAMPLE1 are RESAMPLE2 with DECREASING and
  OutputPixelOffset lowered by 0.5, the equivalence RESAMPLE2's page states. Nearest copies
  bits.
- RESAMPLE3's Antialiased, LINEAR, on a dimension whose 1 / Scale > 2 (the page's
  conditions): the triangle filter is stretched by 1 / Scale, weights max(0, 1 - |i - x| *
  Scale) over the input elements i, normalized to sum 1.

The float64 reference, element by element, is in ``_resample_reference``. Integer tensors
(INT8, UINT8) interpolate in float64 and round half to even, saturating
(the pages are silent). Float tensors compute in float32 (FLOAT16 too, rounded once).
"""
from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from .._core.registry import Sizes
from .._schema.members import members

NEAREST, LINEAR = members("DML_INTERPOLATION_MODE", "NEAREST_NEIGHBOR LINEAR")
INCREASING, DECREASING = members("DML_AXIS_DIRECTION", "INCREASING DECREASING")


def source(o, scale, in_off, out_off):
    return (o - out_off) / scale - in_off


def taps(n_in, n_out, scale, in_off, out_off, mode, rounding, antialias=False):
    """(indices, weights) of shape (n_out, K): the input elements each output reads."""
    scale, in_off, out_off = (float(np.float32(v)) for v in (scale, in_off, out_off))
    o = np.arange(n_out, dtype=np.float64)
    x = source(o, scale, in_off, out_off)
    if mode == NEAREST:
        i = np.ceil(x) if rounding == INCREASING else np.floor(x)
        return np.clip(i, 0, n_in - 1).astype(np.int64)[:, None], np.ones((n_out, 1))
    if antialias and 1.0 / scale > 2:
        radius = 1.0 / scale
        k = int(math.ceil(2 * radius)) + 2
        first = np.floor(x - radius) + 1
        idx = first[:, None] + np.arange(k)[None, :]
        w = np.maximum(0.0, 1.0 - np.abs(idx - x[:, None]) * scale)
        w = np.where((idx >= 0) & (idx < n_in), w, 0.0)
        w = w / w.sum(axis=1, keepdims=True)
        return np.clip(idx, 0, n_in - 1).astype(np.int64), w
    x = np.clip(x, 0, n_in - 1)
    lo = np.floor(x)
    f = x - lo
    hi = np.minimum(lo + 1, n_in - 1)
    return np.stack([lo, hi], 1).astype(np.int64), np.stack([1 - f, f], 1)


def resample(x, out_sizes, scales, in_offs, out_offs, mode, rounding, antialias, ctx):
    """The kernel (JAX): one gather per dimension and tap."""
    integer = np.dtype(x.dtype).kind in "iu"
    y = x.astype(jnp.float64) if integer and mode != NEAREST else \
        (x if mode == NEAREST else ctx.upcast(x))
    for d, n_out in enumerate(out_sizes):
        idx, w = taps(y.shape[d], n_out, scales[d], in_offs[d], out_offs[d], mode, rounding,
                      antialias)
        if mode == NEAREST:
            y = jnp.take(y, jnp.asarray(idx[:, 0], np.int32), axis=d, mode="clip")
            continue
        shape = [1] * y.ndim
        shape[d] = n_out
        total = None
        for k in range(idx.shape[1]):
            v = jnp.take(y, jnp.asarray(idx[:, k], np.int32), axis=d, mode="clip")
            wk = jnp.asarray(w[:, k].reshape(shape), y.dtype)
            term = jnp.where(wk != 0, wk * v, jnp.zeros((), y.dtype))  # 0 x NaN is not NaN
            total = term if total is None else total + term
        y = total
    if integer and mode != NEAREST:
        info = np.iinfo(x.dtype)
        y = jnp.clip(jnp.round(y), info.min, info.max).astype(x.dtype)
    return y


def check_arrays(spec, check, n, fields):
    for f in fields:
        v = spec.attr.get(f)
        if v is None or len(v) != n:
            check.fail(f"{f} has {0 if v is None else len(v)} entries but InputTensor."
                       f"DimensionCount is {n}")
    for i, s in enumerate(spec.attr["Scales"]):
        if not (np.isfinite(s) and s > 0):
            check.fail(f"Scales[{i}] is {s}; scales must be finite and greater than 0")
    if spec.attr["InterpolationMode"] not in (NEAREST, LINEAR):
        check.fail(f"InterpolationMode is {spec.attr['InterpolationMode']}, which is not a "
                   "DML_INTERPOLATION_MODE (0 NEAREST_NEIGHBOR, 1 LINEAR)")
    for f in fields[1:]:
        for i, v in enumerate(spec.attr[f]):
            if not np.isfinite(v):
                check.fail(f"{f}[{i}] is {v}; offsets must be finite")


def output_sizes(spec, check, fields):
    """The desc's OutputTensor.Sizes (the scales need not be Output / Input, the pages say),
    or floor(InputSize * Scale) when inferring."""
    x, out = spec.tensor["InputTensor"], spec.tensor.get("OutputTensor")
    check_arrays(spec, check, len(x.sizes), fields)
    if out is not None:
        if len(out.sizes) != len(x.sizes):
            check.fail(f"OutputTensor.DimensionCount is {len(out.sizes)} but InputTensor's is "
                       f"{len(x.sizes)}; they must match")
        return {"OutputTensor": Sizes(out.sizes, "OutputTensor")}
    sizes = [max(1, int(math.floor(n * float(np.float32(s)))))
             for n, s in zip(x.sizes, spec.attr["Scales"])]
    return {"OutputTensor": Sizes(sizes, "InputTensor and Scales")}

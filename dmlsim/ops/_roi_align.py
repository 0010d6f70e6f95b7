"""ROI align shared by ROI_ALIGN and ROI_ALIGN1: the ROI_ALIGN1 page's pseudo-code, read
where it is not arithmetic, as a JAX kernel (a loop over sample indices up to the largest
sample count, masked per region) and a float64 reference stepping through every sample.

Per region r (ROITensor rows [x1, y1, x2, y2], BatchIndicesTensor[r] its batch), per axis:
size = (x2 - x1) * SpatialScaleX; n = clamp(ceil(|size| / outputSize), Minimum, Maximum)
samples per output element ("ScaledCropSize / OutputSize, then clamped": the pseudo-code's
loop "to <=" would take n + 1 samples and overlap the next element; dmlsim takes n, as ONNX
RoiAlign's sampling ratio does); sample s = out * n + j (j < n) reads input coordinate

    x = (s - OutputPixelOffset) * size / (outputSize * n) + x1 * SpatialScaleX - InputPixelOffset

or, with AlignRegionsToCorners, x = s * size / (outputSize * n - 1) + x1 * SpatialScaleX -
InputPixelOffset (the first sample on one corner, the last on the other). The pseudo-code
scales Y by the X size ("outputSampleToInputScaleY = scaledRegionSizeX / ..."), a slip:
dmlsim uses the Y size. ROI_ALIGN is ROI_ALIGN1 with InputPixelOffset 0.5, OutputPixelOffset
-0.5 and no corner alignment (its page).

Interpolation at (x, y): LINEAR, as ONNX RoiAlign: outside (-1, W] x (-1, H] the sample is
OutOfBoundsInputValue; otherwise coordinates below 0 are 0 and the bilinear neighbours clamp
to the last row/column. NEAREST_NEIGHBOR: the element at floor(x + 0.5), floor(y + 0.5), or
OutOfBoundsInputValue when that is outside the input. The samples are averaged
(DML_REDUCE_FUNCTION_AVERAGE) or their maximum taken (MAX; a NaN sample makes it NaN), in
float32; the sample coordinates are computed in float64 by the kernel and the reference
alike, so nearest-neighbour ties resolve the same way in both. The float64 reference is in
``_roi_align_reference``.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax
from .._core.registry import loop
from .._schema.members import members

AVERAGE, MAX = members("DML_REDUCE_FUNCTION", "AVERAGE MAX")
NEAREST, LINEAR = members("DML_INTERPOLATION_MODE", "NEAREST_NEIGHBOR LINEAR")


def axis_samples(lo, hi, scale, out, lo_n, hi_n, xp):
    size = (hi - lo) * scale
    ratio = xp.abs(size) / out
    n = xp.clip(xp.ceil(ratio), lo_n, hi_n)
    return lo * scale, size, n


def coords(start, size, n, o, j, out, a, xp):
    s = o * n + j
    if a["AlignRegionsToCorners"]:
        total = xp.maximum(out * n - 1, 1)
        return s * size / total + start - a["InputPixelOffset"]
    return (s - a["OutputPixelOffset"]) * size / (out * n) + start - a["InputPixelOffset"]


def _linear_axis(c, n):
    """(outside, low index, high index, fraction) of coordinate ``c`` on an axis of ``n``
    elements, ONNX's RoiAlign bounds (JAX)."""
    outside = (c < -1) | (c > n)
    c = jnp.maximum(c, 0)
    lo = jnp.minimum(jnp.floor(c), n - 1)
    c = jnp.where(lo >= n - 1, lo, c)
    return outside, lo, jnp.minimum(lo + 1, n - 1), c - lo


def roi_align(x, rois, batch, out_h, out_w, a, ctx):
    """The kernel (JAX)."""
    xc = ctx.upcast(x)
    n_img, ch, h, w = xc.shape
    r = rois.reshape(-1, 4).astype(jnp.float64)  # coordinates in float64: see the docstring
    b = jnp.clip(batch.reshape(-1).astype(jnp.int64), 0, n_img - 1)
    f = lambda v: jnp.asarray(float(np.float32(v)), jnp.float64)  # noqa: E731
    sx, size_x, nx = axis_samples(r[:, 0], r[:, 2], f(a["SpatialScaleX"]), out_w,
                           a["MinimumSamplesPerOutput"], a["MaximumSamplesPerOutput"], jnp)
    sy, size_y, ny = axis_samples(r[:, 1], r[:, 3], f(a["SpatialScaleY"]), out_h,
                           a["MinimumSamplesPerOutput"], a["MaximumSamplesPerOutput"], jnp)
    img = xc[b]  # R, C, H, W
    oy, ox = jnp.arange(out_h, dtype=jnp.float64), jnp.arange(out_w, dtype=jnp.float64)
    oob = jnp.asarray(np.float32(a["OutOfBoundsInputValue"]), xc.dtype)
    mx, my = jnp.max(nx).astype(jnp.int32), jnp.max(ny).astype(jnp.int32)
    pa = {k: f(a[k]) if k.endswith("Offset") else a[k]
          for k in ("AlignRegionsToCorners", "InputPixelOffset", "OutputPixelOffset")}

    def body(i, acc):
        jy, jx = (i // mx).astype(jnp.float64), (i % mx).astype(jnp.float64)
        yy = coords(sy[:, None], size_y[:, None], ny[:, None], oy[None], jy, out_h, pa, jnp)
        xx = coords(sx[:, None], size_x[:, None], nx[:, None], ox[None], jx, out_w, pa, jnp)
        v = _gather(img, yy, xx, h, w, oob, a["InterpolationMode"])  # R, C, OH, OW
        use = ((jy < ny) & (jx < nx))[:, None, None, None]
        total, best = acc
        return (total + jnp.where(use, v, 0), jnp.where(use & ~(v <= best), v, best))

    init = (jnp.zeros((r.shape[0], ch, out_h, out_w), xc.dtype),
            jnp.full((r.shape[0], ch, out_h, out_w), -jnp.inf, xc.dtype))
    total, best = loop(lax.fori_loop, 0, mx * my, body, init)
    if a["ReductionFunction"] == MAX:
        return best
    return total / (nx * ny).astype(xc.dtype)[:, None, None, None]


def _gather(img, yy, xx, h, w, oob, mode):
    """img [R, C, H, W] at yy [R, OH], xx [R, OW] -> [R, C, OH, OW]."""
    def at(yi, xi):
        rows = jnp.take_along_axis(img, yi.astype(jnp.int32)[:, None, :, None], axis=2)
        return jnp.take_along_axis(rows, xi.astype(jnp.int32)[:, None, None, :], axis=3)
    if mode == NEAREST:
        yi, xi = jnp.floor(yy + 0.5), jnp.floor(xx + 0.5)
        inside = ((yi >= 0) & (yi < h))[:, None, :, None] & ((xi >= 0) & (xi < w))[:, None, None]
        return jnp.where(inside, at(jnp.clip(yi, 0, h - 1), jnp.clip(xi, 0, w - 1)), oob)
    out_y, y0, y1, fy = _linear_axis(yy, h)
    out_x, x0, x1, fx = _linear_axis(xx, w)
    fy, fx = (w.astype(img.dtype) for w in (fy[:, None, :, None], fx[:, None, None, :]))
    v = (at(y0, x0) * (1 - fy) * (1 - fx) + at(y0, x1) * (1 - fy) * fx +
         at(y1, x0) * fy * (1 - fx) + at(y1, x1) * fy * fx)
    outside = out_y[:, None, :, None] | out_x[:, None, None, :]
    return jnp.where(outside, oob, v)


def region_rules(spec, check):
    """The rules ROI_ALIGN(1) and ROI_ALIGN_GRAD share; returns NumROIs."""
    t, a = spec.tensor, spec.attr
    roi, bi = t["ROITensor"], t["BatchIndicesTensor"]
    n = roi.sizes[-2] if len(roi.sizes) >= 2 else 0
    if roi.sizes[-1] != 4 or any(s != 1 for s in roi.sizes[:-2]):
        check.fail(f"ROITensor.Sizes is {list(roi.sizes)}; it must be {{NumROIs, 4}} (leading "
                   "1s allowed)")
    if bi.count != n or any(s != 1 for s in bi.sizes[:-1]):
        check.fail(f"BatchIndicesTensor.Sizes is {list(bi.sizes)}; it must be {{{n}}} (leading "
                   "1s allowed)")
    if a["ReductionFunction"] not in (AVERAGE, MAX):
        check.fail(f"ReductionFunction is {a['ReductionFunction']}; it must be "
                   "DML_REDUCE_FUNCTION_AVERAGE (2) or DML_REDUCE_FUNCTION_MAX (7)")
    if a["InterpolationMode"] not in (NEAREST, LINEAR):
        check.fail(f"InterpolationMode is {a['InterpolationMode']}, which is not a "
                   "DML_INTERPOLATION_MODE (0 NEAREST_NEIGHBOR, 1 LINEAR)")
    lo, hi = a["MinimumSamplesPerOutput"], a["MaximumSamplesPerOutput"]
    if not 1 <= lo <= hi:
        check.fail(f"MinimumSamplesPerOutput is {lo} and MaximumSamplesPerOutput {hi}; they "
                   "must satisfy 1 <= Minimum <= Maximum")
    return n

"""ROI_ALIGN_GRAD's shape rule and its ROI gradient (the page's pseudo-code, one sample per
output), shared by the kernel (JAX) and the reference (NumPy): see ``roi_align_grad``."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._core.hresult import E_NOTIMPL, fail
from .._core.registry import Sizes
from ._roi_align import MAX, axis_samples, coords, region_rules

X, DY, ROI, BI, DX, DR = ("InputTensor", "InputGradientTensor", "ROITensor",
                          "BatchIndicesTensor", "OutputGradientTensor", "OutputROIGradientTensor")
KEYS = ("ReductionFunction", "InterpolationMode", "SpatialScaleX", "SpatialScaleY",
        "InputPixelOffset", "OutputPixelOffset", "MinimumSamplesPerOutput",
        "MaximumSamplesPerOutput", "AlignRegionsToCorners")


def roi_gradient(x, dy, rois, batch, a, xp, take):
    """The page's pseudo-code, one sample per output (``xp`` jnp or np)."""
    n_img, ch, h, w = x.shape
    r = rois.reshape(-1, 4).astype(np.float64)
    b = xp.clip(batch.reshape(-1).astype(np.int64), 0, n_img - 1)
    oh, ow = dy.shape[2:]
    f = lambda v: float(np.float32(v))  # noqa: E731
    sx, size_x, nx = axis_samples(r[:, 0], r[:, 2], f(a["SpatialScaleX"]), ow, 1, 1, xp)
    sy, size_y, ny = axis_samples(r[:, 1], r[:, 3], f(a["SpatialScaleY"]), oh, 1, 1, xp)
    pa = {k: f(a[k]) if k.endswith("Offset") else a[k] for k in KEYS[4:6] + KEYS[8:]}
    oy, ox = xp.arange(oh, dtype=np.float64), xp.arange(ow, dtype=np.float64)
    yy = coords(sy[:, None], size_y[:, None], ny[:, None], oy[None], 0, oh, pa, xp)  # R, OH
    xx = coords(sx[:, None], size_x[:, None], nx[:, None], ox[None], 0, ow, pa, xp)  # R, OW
    top, bottom = xp.clip(xp.floor(yy), 0, h - 1), xp.clip(xp.ceil(yy), 0, h - 1)
    left, right = xp.clip(xp.floor(xx), 0, w - 1), xp.clip(xp.ceil(xx), 0, w - 1)
    ly, lx = (yy - xp.floor(yy))[:, None, :, None], (xx - xp.floor(xx))[:, None, None, :]
    img = x[b]
    tl, tr = take(img, top, left), take(img, top, right)
    bl, br = take(img, bottom, left), take(img, bottom, right)
    gy = ((1 - lx) * (bl - tl) + lx * (br - tr)) * dy
    gx = ((1 - ly) * (tr - tl) + ly * (br - bl)) * dy
    cx, cy = ox[None, None, None, :], oy[None, None, :, None]
    s = lambda v: v.sum(axis=(1, 2, 3))  # noqa: E731
    return xp.stack([s(gx * (w - cx)), s(gy * (h - cy)), s(gx * cx), s(gy * cy)], axis=1)


def take_jnp(img, yi, xi):
    rows = jnp.take_along_axis(img, yi.astype(jnp.int32)[:, None, :, None], axis=2)
    return jnp.take_along_axis(rows, xi.astype(jnp.int32)[:, None, None, :], axis=3)


def take_np(img, yi, xi):
    r = np.arange(img.shape[0])[:, None, None, None]
    c = np.arange(img.shape[1])[None, :, None, None]
    return img[r, c, yi.astype(int)[:, None, :, None], xi.astype(int)[:, None, None, :]]


def grad_sizes(spec, check):
    t, a = spec.tensor, spec.attr
    x, dy, roi = t.get(X), t[DY], t[ROI]
    dx, dr = t.get(DX), t.get(DR)
    n = region_rules(spec, check)
    lo, hi = a["MinimumSamplesPerOutput"], a["MaximumSamplesPerOutput"]
    if dy.sizes[0] != n:
        check.fail(f"InputGradientTensor.Sizes is {list(dy.sizes)}; its first dimension must "
                   f"be NumROIs = {n}")
    if x is None and (a["ReductionFunction"] == MAX or dr is not None):
        check.fail("InputTensor is null; it must be given for ReductionFunction MAX and when "
                   "OutputROIGradientTensor is given (the page)")
    if dr is not None and (lo, hi) != (1, 1):
        fail(E_NOTIMPL, f"{check.name}: OutputROIGradientTensor with Minimum/Maximum"
             f"SamplesPerOutput {lo}/{hi}: the page gives the ROI gradient only for 1 sample "
             "per output; dmlsim does not implement other counts")
    if dx is None and dr is None:
        check.fail("OutputGradientTensor and OutputROIGradientTensor are both null; at least one "
                   "must be given (the page)")
    out = {DR: Sizes(roi.sizes, "ROITensor")} if dr is not None else {}
    if x is not None and x.sizes[1] != dy.sizes[1]:
        check.fail(f"InputGradientTensor.Sizes {list(dy.sizes)} and InputTensor.Sizes "
                   f"{list(x.sizes)} differ in the channel count")
    if dx is not None:
        out[DX] = Sizes(x.sizes, "InputTensor") if x is not None else \
            Sizes(dx.sizes, "the forward input (OutputGradientTensor)")
    return out

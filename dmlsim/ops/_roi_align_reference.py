"""The float64 reference of ``_roi_align``: every region, output element and sample, one at a
time, with its own interpolation (written apart from the kernel's gathers)."""
from __future__ import annotations

import math

import numpy as np

from ._roi_align import MAX, NEAREST, axis_samples, coords


def _samples(x, rois, batch, out_h, out_w, a):
    """Yield (region, its image, out y, out x, [(y, x) of every sample]), one output element
    at a time (float64 coordinates, the kernel's formula)."""
    n_img = x.shape[0]
    f = lambda v: float(np.float32(v))  # noqa: E731
    lo, hi = a["MinimumSamplesPerOutput"], a["MaximumSamplesPerOutput"]
    pa = {k: (f(a[k]) if k.endswith("Offset") else a[k])
          for k in ("AlignRegionsToCorners", "InputPixelOffset", "OutputPixelOffset")}
    for r, (x1, y1, x2, y2) in enumerate(rois):
        img = x[min(max(int(batch[r]), 0), n_img - 1)]
        sx, size_x, nx = axis_samples(x1, x2, f(a["SpatialScaleX"]), out_w, lo, hi, np)
        sy, size_y, ny = axis_samples(y1, y2, f(a["SpatialScaleY"]), out_h, lo, hi, np)
        for oy in range(out_h):
            for ox in range(out_w):
                yield r, img, oy, ox, [(coords(sy, size_y, ny, oy, jy, out_h, pa, np),
                                        coords(sx, size_x, nx, ox, jx, out_w, pa, np))
                                       for jy in range(int(ny)) for jx in range(int(nx))]


def roi_align_reference(x, rois, batch, out_h, out_w, a):
    """Every region, output element and sample, in float64."""
    x = np.asarray(x, np.float64)
    _, ch, h, w = x.shape
    rois, batch = np.asarray(rois, np.float64).reshape(-1, 4), np.asarray(batch).reshape(-1)
    oob = float(np.float32(a["OutOfBoundsInputValue"]))
    y = np.zeros((len(rois), ch, out_h, out_w))
    for r, img, oy, ox, pts in _samples(x, rois, batch, out_h, out_w, a):
        vals = np.array([_point(img, yy, xx, h, w, oob, a["InterpolationMode"])
                         for yy, xx in pts])  # samples x C
        y[r, :, oy, ox] = vals.max(axis=0) if a["ReductionFunction"] == MAX else \
            vals.mean(axis=0)
    return y


def _point(img, yy, xx, h, w, oob, mode):
    if mode == NEAREST:
        yi, xi = math.floor(yy + 0.5), math.floor(xx + 0.5)
        return img[:, yi, xi] if 0 <= yi < h and 0 <= xi < w else np.full(img.shape[0], oob)
    if yy < -1 or yy > h or xx < -1 or xx > w:
        return np.full(img.shape[0], oob)
    yy, xx = max(yy, 0.0), max(xx, 0.0)
    y0, x0 = min(math.floor(yy), h - 1), min(math.floor(xx), w - 1)
    yy, xx = (float(y0) if y0 >= h - 1 else yy), (float(x0) if x0 >= w - 1 else xx)
    y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
    fy, fx = yy - y0, xx - x0
    return (img[:, y0, x0] * (1 - fy) * (1 - fx) + img[:, y0, x1] * (1 - fy) * fx +
            img[:, y1, x0] * fy * (1 - fx) + img[:, y1, x1] * fy * fx)


def _point_weights(yy, xx, h, w, mode):
    """[(row, column, weight)] of one sample, or None outside the input (``_point``'s)."""
    if mode == NEAREST:
        yi, xi = math.floor(yy + 0.5), math.floor(xx + 0.5)
        return [(yi, xi, 1.0)] if 0 <= yi < h and 0 <= xi < w else None
    if yy < -1 or yy > h or xx < -1 or xx > w:
        return None
    yy, xx = max(yy, 0.0), max(xx, 0.0)
    y0, x0 = min(math.floor(yy), h - 1), min(math.floor(xx), w - 1)
    yy, xx = (float(y0) if y0 >= h - 1 else yy), (float(x0) if x0 >= w - 1 else xx)
    y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
    fy, fx = yy - y0, xx - x0
    return [(y0, x0, (1 - fy) * (1 - fx)), (y0, x1, (1 - fy) * fx), (y1, x0, fy * (1 - fx)),
            (y1, x1, fy * fx)]


def sample_weights(x, rois, batch, out_h, out_w, a):
    """Yield (region, out y, out x, per channel [(row, column, weight)]): how each output
    element of the forward pass (OutOfBoundsInputValue 0) depends on the input: every
    sample's weights over the sample count (AVERAGE), or the picked sample's (MAX: the
    first largest, the kernel's rule)."""
    _, ch, h, w = x.shape
    for r, img, oy, ox, coords_ in _samples(x, rois, batch, out_h, out_w, a):
        pts = [_point_weights(yy, xx, h, w, a["InterpolationMode"]) for yy, xx in coords_]
        if a["ReductionFunction"] != MAX:
            flat = [(yi, xi, wt / len(pts)) for p in pts if p for yi, xi, wt in p]
            yield r, oy, ox, [flat] * ch
            continue
        picks = []
        for c in range(ch):
            best, pick = -np.inf, None
            for p in pts:
                v = sum(wt * img[c, yi, xi] for yi, xi, wt in p) if p else 0.0
                if not v <= best:
                    best, pick = v, p
            picks.append(pick or [])
        yield r, oy, ox, picks

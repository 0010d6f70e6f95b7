"""DML_OPERATOR_ROI_POOLING: the maximum of each PooledSize bin of each region of interest.

ROITensor is { 1, 1, NumROIs, 5 }, each row [BatchID, x1, y1, x2, y2] (inclusive corners);
OutputTensor is { NumROIs, ChannelCount, PooledSize.Height, PooledSize.Width }. The page's
equations, per output bin (Y, X): x1 = round(RoiX1 * SpatialScale) (and x2, y1, y2),
RegionHeight = y2 - y1 + 1, StartY = (Y * RegionHeight) / PooledSize.Height + y1, EndY =
((Y + 1) * RegionHeight + PooledSize.Height - 1) / PooledSize.Height + y1 (integer division),
the same for X; coordinates clamped to the input. The bin is [StartY, EndY) x [StartX, EndX).

Where the page is silent: round is half away from zero (C's round); the integer divisions
round toward minus infinity; an empty bin (after clamping) gives 0; NaN is ignored as HLSL's
max does (an all-NaN bin gives NaN); BatchID is truncated and clamped to the batch range.
Values are exact (a maximum).
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, Sizes, register, same_type

IN, ROI, OUT = "InputTensor", "ROITensor", "OutputTensor"


def _bins(rois, scale, ph, pw, h, w, xp):
    """(batch, StartY, EndY, StartX, EndX) per ROI and bin, as the page computes them."""
    r = rois.astype(xp.float64) if xp is np else rois.astype(jnp.float32)
    rnd = (lambda v: xp.sign(v) * xp.floor(xp.abs(v) + 0.5))  # half away from zero
    x1, y1 = rnd(r[:, 1] * scale), rnd(r[:, 2] * scale)
    x2, y2 = rnd(r[:, 3] * scale), rnd(r[:, 4] * scale)
    hh, ww = (y2 - y1 + 1)[:, None], (x2 - x1 + 1)[:, None]
    iy, ix = xp.arange(ph)[None, :], xp.arange(pw)[None, :]
    sy = xp.floor(iy * hh / ph) + y1[:, None]
    ey = xp.floor(((iy + 1) * hh + ph - 1) / ph) + y1[:, None]
    sx = xp.floor(ix * ww / pw) + x1[:, None]
    ex = xp.floor(((ix + 1) * ww + pw - 1) / pw) + x1[:, None]
    return (xp.clip(sy, 0, h), xp.clip(ey, 0, h), xp.clip(sx, 0, w), xp.clip(ex, 0, w))


def roi_pooling(InputTensor, ROITensor, *, SpatialScale, PooledSize, ctx):
    x = InputTensor
    n, c, h, w = x.shape
    pw, ph = PooledSize  # (Width, Height)
    rois = ROITensor.reshape(-1, 5)
    batch = jnp.clip(jnp.trunc(rois[:, 0].astype(jnp.float32)), 0, n - 1).astype(jnp.int32)
    sy, ey, sx, ex = _bins(rois, np.float32(SpatialScale), ph, pw, h, w, jnp)
    xb = x[batch]  # R, C, H, W
    hy, wx = jnp.arange(h), jnp.arange(w)
    rows = []
    for i in range(ph):
        cols = []
        for j in range(pw):
            in_y = (hy[None, :] >= sy[:, i, None]) & (hy[None, :] < ey[:, i, None])  # R, H
            in_x = (wx[None, :] >= sx[:, j, None]) & (wx[None, :] < ex[:, j, None])  # R, W
            m = (in_y[:, :, None] & in_x[:, None, :])[:, None]  # R, 1, H, W
            num = m & ~jnp.isnan(xb)
            best = jnp.max(jnp.where(num, xb, -jnp.inf), axis=(2, 3))
            any_num, any_el = jnp.any(num, axis=(2, 3)), jnp.any(m, axis=(2, 3))
            cols.append(jnp.where(any_num, best, jnp.where(any_el, jnp.nan, 0)).astype(x.dtype))
        rows.append(jnp.stack(cols, -1))
    return jnp.stack(rows, -2)


def roi_pooling_reference(InputTensor, ROITensor, *, SpatialScale, PooledSize, ctx):
    x = np.asarray(InputTensor)
    n, c, h, w = x.shape
    pw, ph = PooledSize
    rois = np.asarray(ROITensor).reshape(-1, 5)
    sy, ey, sx, ex = _bins(rois, float(np.float32(SpatialScale)), ph, pw, h, w, np)
    y = np.zeros((len(rois), c, ph, pw), x.dtype)
    for r in range(len(rois)):
        b = min(max(int(rois[r, 0]), 0), n - 1)
        for i in range(ph):
            for j in range(pw):
                win = x[b, :, int(sy[r, i]):int(ey[r, i]), int(sx[r, j]):int(ex[r, j])]
                win = win.reshape(c, -1)
                for ch in range(c):
                    vals = [v for v in win[ch] if v == v]
                    y[r, ch, i, j] = max(vals) if vals else (np.nan if win[ch].size else 0)
    return y


def roi_sizes(spec, check):
    x, roi, (pw, ph) = spec.tensor[IN], spec.tensor[ROI], spec.attr["PooledSize"]
    if len(roi.sizes) != 4 or roi.sizes[:2] != (1, 1) or roi.sizes[3] != 5:
        check.fail(f"ROITensor.Sizes is {list(roi.sizes)}; it must be {{1, 1, NumROIs, 5}}")
    if ph < 1 or pw < 1:
        check.fail(f"PooledSize is {pw} x {ph} (Width x Height); both must be at least 1")
    return {OUT: Sizes([roi.sizes[2], x.sizes[1], ph, pw],
                       "ROITensor, InputTensor and PooledSize")}


f32 = np.float32
X = f32(np.arange(16).reshape(1, 1, 4, 4))
register(OperatorDef(
    "DML_OPERATOR_ROI_POOLING", roi_pooling, roi_pooling_reference, output_sizes=roi_sizes,
    rules=(same_type(IN, ROI, OUT),), examples=(
        Example({IN: X, ROI: f32([[[[0, 0, 0, 3, 3]]]])}, {OUT: f32([[[[5, 7], [13, 15]]]])},
                {"SpatialScale": 1.0, "PooledSize": {"Width": 2, "Height": 2}},
                "the whole 4x4 input in 2x2 bins"),
        Example({IN: X, ROI: f32([[[[0, 1, 0, 2, 2], [0, 0.4, 0.6, 0.4, 0.6]]]])},
                {OUT: f32([[[[9, 10]]], [[[4, 4]]]])},
                {"SpatialScale": 1.0, "PooledSize": {"Width": 2, "Height": 1}},
                "columns 1-2 of rows 0-2; a region rounded to the single element (1, 0)"),
        Example({IN: X, ROI: f32([[[[0, 0, 0, 6, 6]]]])}, {OUT: f32([[[[15]]]])},
                {"SpatialScale": 0.5, "PooledSize": {"Width": 1, "Height": 1}},
                "SpatialScale 0.5: corners 0..3"),
    ), module=__name__))

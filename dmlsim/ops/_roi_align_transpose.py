"""The transpose of ROI_ALIGN1's sampling (JAX), for ROI_ALIGN_GRAD's OutputGradientTensor:
the forward's sample loop run again, each sample's interpolation weights scattering the
output element's gradient back onto the input (``_roi_align`` for the sampling rules)."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core.registry import loop
from ._roi_align import MAX, NEAREST, _gather, _linear_axis, axis_samples, coords


def _geometry(x, rois, batch, out_h, out_w, a):
    n_img = x.shape[0]
    r = rois.reshape(-1, 4).astype(jnp.float64)
    b = jnp.clip(batch.reshape(-1).astype(jnp.int64), 0, n_img - 1)
    f = lambda v: jnp.asarray(float(np.float32(v)), jnp.float64)  # noqa: E731
    lo, hi = a["MinimumSamplesPerOutput"], a["MaximumSamplesPerOutput"]
    sx, size_x, nx = axis_samples(r[:, 0], r[:, 2], f(a["SpatialScaleX"]), out_w, lo, hi, jnp)
    sy, size_y, ny = axis_samples(r[:, 1], r[:, 3], f(a["SpatialScaleY"]), out_h, lo, hi, jnp)
    pa = {k: f(a[k]) if k.endswith("Offset") else a[k]
          for k in ("AlignRegionsToCorners", "InputPixelOffset", "OutputPixelOffset")}
    oy, ox = jnp.arange(out_h, dtype=jnp.float64), jnp.arange(out_w, dtype=jnp.float64)
    mx = jnp.max(nx).astype(jnp.int32)

    def sample(i):
        jy, jx = (i // mx).astype(jnp.float64), (i % mx).astype(jnp.float64)
        yy = coords(sy[:, None], size_y[:, None], ny[:, None], oy[None], jy, out_h, pa, jnp)
        xx = coords(sx[:, None], size_x[:, None], nx[:, None], ox[None], jx, out_w, pa, jnp)
        return yy, xx, (jy < ny) & (jx < nx)
    return b, nx, ny, mx * jnp.max(ny).astype(jnp.int32), sample


def roi_align_transpose(x, dy, rois, batch, a):
    """d(sum(dy * ROI_ALIGN1(x))) / dx, OutOfBoundsInputValue 0 (JAX, x and dy upcast)."""
    n_img, ch, h, w = x.shape
    out_h, out_w = dy.shape[2:]
    b, nx, ny, count, sample = _geometry(x, rois, batch, out_h, out_w, a)
    zero = jnp.zeros((), x.dtype)
    if a["ReductionFunction"] == MAX:  # the forward's pick: the first strictly larger sample
        def pick(i, acc):
            yy, xx, use = sample(i)
            v = _gather(x[b], yy, xx, h, w, zero, a["InterpolationMode"])
            best, at = acc
            wins = use[:, None, None, None] & ~(v <= best)
            return jnp.where(wins, v, best), jnp.where(wins, i, at)
        init = (jnp.full(dy.shape, -jnp.inf, x.dtype), jnp.zeros(dy.shape, jnp.int32))
        _, chosen = loop(lax.fori_loop, 0, count, pick, init)
    rr = b[:, None, None, None]
    cc = jnp.arange(ch)[None, :, None, None]

    def scatter(i, dx):
        yy, xx, use = sample(i)
        if a["ReductionFunction"] == MAX:
            g = jnp.where(chosen == i, dy, zero)
        else:
            g = dy * (use / (nx * ny)).astype(x.dtype)[:, None, None, None]
        if a["InterpolationMode"] == NEAREST:
            yi, xi = jnp.floor(yy + 0.5), jnp.floor(xx + 0.5)
            inside = ((yi >= 0) & (yi < h))[:, None, :, None] & \
                ((xi >= 0) & (xi < w))[:, None, None, :]
            corners = [(jnp.clip(yi, 0, h - 1), jnp.clip(xi, 0, w - 1), inside.astype(x.dtype))]
        else:
            out_y, y0, y1, fy = _linear_axis(yy, h)
            out_x, x0, x1, fx = _linear_axis(xx, w)
            inside = ~(out_y[:, None, :, None] | out_x[:, None, None, :])
            fy, fx = fy[:, None, :, None].astype(x.dtype), fx[:, None, None, :].astype(x.dtype)
            corners = [(yi, xi, wy * wx * inside)
                       for yi, wy in ((y0, 1 - fy), (y1, fy)) for xi, wx in ((x0, 1 - fx),
                                                                             (x1, fx))]
        for yi, xi, wt in corners:
            idx = (rr, cc, yi.astype(jnp.int32)[:, None, :, None],
                   xi.astype(jnp.int32)[:, None, None, :])
            dx = dx.at[idx].add(g * wt)
        return dx
    return loop(lax.fori_loop, 0, count, scatter, jnp.zeros(x.shape, x.dtype))

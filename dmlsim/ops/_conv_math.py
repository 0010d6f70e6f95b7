"""The arithmetic of the convolutions described in ``_conv``: the JAX computation
(``lax.conv_general_dilated`` at float32 precision; BACKWARD as a forward convolution of the
stride-dilated input; a depthwise FORWARD one as a sum over filter taps and, on the CPU, a 1x1
one as a product over channels: ``_conv_forms``) and a float64 reference written as explicit sums over filter taps
(gathers FORWARD, scatters BACKWARD), apart from the kernel.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ._conv import FORWARD, flipped, spatial_out
from ._conv_forms import depthwise, depthwise_form, pointwise, padded_end as _padded_end


def conv(x, w, a, precision=lax.Precision.HIGHEST, accumulate=None):
    """The convolution (JAX), without bias: ``a`` the attributes."""
    nd, g = a["DimensionCount"], a["GroupCount"]
    spatial = "DHW"[3 - nd:]
    dims = ("NC" + spatial, "OI" + spatial, "NC" + spatial)
    if flipped(a["Mode"]):
        w = jnp.flip(w, tuple(range(2, w.ndim)))
    kd = [(k - 1) * d + 1 for k, d in zip(w.shape[2:], a["Dilations"])]
    if depthwise_form(a["Direction"], g, x.shape[1], w.shape):
        return depthwise(x, w, a, accumulate)
    if a["Direction"] == FORWARD and all(k == 1 for k in w.shape[2:]) and \
            jax.default_backend() == "cpu":  # on a GPU XLA's own layouts win inside a model
        return pointwise(x, w, a, precision, accumulate)
    if a["Direction"] == FORWARD:
        y = lax.conv_general_dilated(
            x, w, a["Strides"], list(zip(a["StartPadding"], a["EndPadding"])),
            rhs_dilation=a["Dilations"], dimension_numbers=dims, feature_group_count=g,
            precision=precision, preferred_element_type=accumulate)
        return _padded_end(y, a)
    # BACKWARD: a forward convolution of the stride-dilated input with the filter flipped
    # and its channel roles swapped per group, over the full extent, then cropped
    c, mg = w.shape[0], w.shape[1]
    wt = w.reshape((g, c // g, mg) + w.shape[2:]).swapaxes(1, 2)
    wt = jnp.flip(wt.reshape((g * mg, c // g) + w.shape[2:]), tuple(range(2, w.ndim)))
    y = lax.conv_general_dilated(
        x, wt, (1,) * nd, [(e - 1, e - 1) for e in kd], lhs_dilation=a["Strides"],
        rhs_dilation=a["Dilations"], dimension_numbers=dims, feature_group_count=g,
        precision=precision, preferred_element_type=accumulate)
    crop = tuple(slice(p0, y.shape[2 + d] - p1)
                 for d, (p0, p1) in enumerate(zip(a["StartPadding"], a["EndPadding"])))
    return _padded_end(y[(slice(None), slice(None)) + crop], a)


def conv_reference(x, w, a):
    """float64 NumPy, tap by tap: the sums of the module docstring."""
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    nd, g = a["DimensionCount"], a["GroupCount"]
    if flipped(a["Mode"]):
        w = np.flip(w, tuple(range(2, w.ndim)))
    n, c = x.shape[:2]
    st, dil, p0 = a["Strides"], a["Dilations"], a["StartPadding"]
    ks = w.shape[2:]
    out = [spatial_out(s, k, a, d, a["Direction"]) for d, (s, k) in
           enumerate(zip(x.shape[2:], ks))]
    if a["Direction"] == FORWARD:
        m = w.shape[0]
        y = np.zeros((n, m) + tuple(out))
        xp = np.pad(x, [(0, 0), (0, 0)] + [(p, a["EndPadding"][d] + st[d] * o)
                                           for d, (p, o) in enumerate(zip(p0, out))])
        for t in np.ndindex(*ks):
            win = tuple(slice(t[d] * dil[d], t[d] * dil[d] + st[d] * out[d], st[d])
                        for d in range(nd))
            patch = xp[(slice(None), slice(None)) + win]  # N, C, out..
            for gi in range(g):
                ci, mi = slice(gi * c // g, (gi + 1) * c // g), slice(gi * m // g,
                                                                    (gi + 1) * m // g)
                y[:, mi] += np.einsum("nc...,mc->nm...", patch[:, ci], w[(mi, slice(None)) + t])
    else:
        m = w.shape[1] * g
        y = np.zeros((n, m) + tuple(out))
        for i in np.ndindex(*x.shape[2:]):
            for t in np.ndindex(*ks):
                o = tuple(i[d] * st[d] + t[d] * dil[d] - p0[d] for d in range(nd))
                if not all(0 <= o[d] < out[d] for d in range(nd)):
                    continue
                for gi in range(g):
                    ci = slice(gi * c // g, (gi + 1) * c // g)
                    mi = slice(gi * m // g, (gi + 1) * m // g)
                    y[(slice(None), mi) + o] += x[(slice(None), ci) + i] @ \
                        w[(ci, slice(None)) + t]
    pad = a["OutputPadding"]
    return np.pad(y, [(0, 0), (0, 0)] + [(0, p) for p in pad]) if any(pad) else y


def int_conv(x, w, a):
    """FORWARD cross-correlation of INT32 ``x`` and ``w`` summed in INT32 (wrapping as 32-bit
    accumulators do): the zero-padded input gathered into patches { N, C, out, k } per
    spatial dimension (one gather per dimension, whatever the filter's size), contracted with
    the filter per group (an integer dot, which every backend has)."""
    nd, g = a["DimensionCount"], a["GroupCount"]
    n, c = x.shape[:2]
    m, ks = w.shape[0], w.shape[2:]
    out = [spatial_out(s, k, a, d, FORWARD) for d, (s, k) in enumerate(zip(x.shape[2:], ks))]
    p = jnp.pad(x, [(0, 0), (0, 0)] + list(zip(a["StartPadding"], a["EndPadding"])))
    for d in range(nd):  # axis 2 + 2d becomes (out_d, k_d)
        idx = (np.arange(out[d])[:, None] * a["Strides"][d] +
               np.arange(ks[d])[None, :] * a["Dilations"][d])
        axis = 2 + 2 * d
        p = jnp.take(p, jnp.asarray(idx.reshape(-1), np.int32), axis=axis)
        p = p.reshape(p.shape[:axis] + (out[d], ks[d]) + p.shape[axis + 1:])
    p = p.reshape((n, g, c // g) + p.shape[2:])
    o, k = "opq"[:nd], "uvw"[:nd]
    spatial = "".join(oi + ki for oi, ki in zip(o, k))
    y = jnp.einsum(f"ngc{spatial},gmc{k}->ngm{o}", p,
                   w.reshape((g, m // g, c // g) + tuple(ks)), preferred_element_type=jnp.int32)
    return y.reshape((n, m) + tuple(out))

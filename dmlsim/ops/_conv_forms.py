"""Convolution forms XLA runs faster than ``lax.conv_general_dilated``, with the same float32
products (``_conv_math.conv`` picks them): a depthwise FORWARD convolution as a sum over its
filter's taps (XLA's CPU backend runs a grouped convolution with one channel per group 10-60x
slower; on the H200 the sum is 1.2-1.6x faster than XLA's convolution), and on the CPU a 1x1
one as a product over channels (1.6-3x; on the H200 it is 1.6-1.7x faster alone but not inside
resnet18, where XLA's convolution layouts win)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ._conv import FORWARD


def padded_end(y, a):
    """``y`` with the OutputPadding zeros at the end of each spatial dimension."""
    pad = a["OutputPadding"]
    if not any(pad):
        return y
    return jnp.pad(y, [(0, 0), (0, 0)] + [(0, p) for p in pad])


def depthwise_form(direction, groups, channels, w_sizes) -> bool:
    """Whether ``_conv_math.conv`` runs a convolution as :func:`depthwise`'s tap walk: FORWARD,
    one input channel per group, at most 64 taps."""
    return direction == FORWARD and 1 < groups == channels and w_sizes[1] == 1 and \
        int(np.prod(w_sizes[2:])) <= 64


def depthwise(x, w, a, accumulate):
    """A FORWARD depthwise convolution (one input channel per group; output channel o reads
    input channel o // (M / C)) as a sum over the filter's taps, in tap order, of strided
    slices times the tap's weights: the same float32 products and sums as a convolution
    (FLOAT16 operands widened first). On the CPU, when the last spatial stride is above one,
    the taps are taken with the channels last: a slice strided along the innermost dimension
    is read element by element, one along an outer dimension keeps the channels' vectors
    (same bits; PaddleOCR det 0.78x the time, rec 0.95x, cls 1.01x; channels last for every
    depthwise convolution made cls 1.12x slower, the transposes costing more than they gave)."""
    nd, st, dil = a["DimensionCount"], a["Strides"], a["Dilations"]
    dt = accumulate or jnp.result_type(x, w)
    x, w = x.astype(dt), w.astype(dt)
    m, ks = w.shape[0], w.shape[2:]
    if m != x.shape[1]:
        x = jnp.repeat(x, m // x.shape[1], axis=1)
    last = st[-1] > 1 and jax.default_backend() == "cpu"
    if last:
        x = jnp.moveaxis(x, 1, -1)
    axes = list(range(1, 1 + nd)) if last else list(range(2, 2 + nd))  # the spatial ones
    pads = [(0, 0)] * x.ndim
    for d, ax in enumerate(axes):
        pads[ax] = (a["StartPadding"][d], a["EndPadding"][d])
    xp = jnp.pad(x, pads)
    out = [(xp.shape[ax] - (ks[d] - 1) * dil[d] - 1) // st[d] + 1 for d, ax in enumerate(axes)]
    w_shape = [1] * x.ndim
    w_shape[-1 if last else 1] = m
    y = None
    for t in np.ndindex(*ks):
        lo, hi, step = [0] * x.ndim, list(xp.shape), [1] * x.ndim
        for d, ax in enumerate(axes):
            lo[ax], step[ax] = t[d] * dil[d], st[d]
            hi[ax] = lo[ax] + (out[d] - 1) * st[d] + 1
        term = lax.slice(xp, lo, hi, step) * w[(slice(None), 0) + t].reshape(w_shape)
        y = term if y is None else y + term
    return padded_end(jnp.moveaxis(y, -1, 1) if last else y, a)


def pointwise(x, w, a, precision, accumulate):
    """A FORWARD convolution with a 1x1 filter as a product over channels (per group) of the
    padded, strided input. With one group and a batch above one, as one product per batch
    element (the filter broadcast over the batch): the product over the whole batch made XLA
    transpose the input to channels x (batch x positions) and the result back, and the
    per-element form runs PaddleOCR cls (batch 6) in 0.90x the time, resnet18 b8 0.97x (the
    same products; the library sums them in another order, so the last bits can move)."""
    g = a["GroupCount"]
    xp = jnp.pad(x, [(0, 0), (0, 0)] + list(zip(a["StartPadding"], a["EndPadding"])))
    xp = xp[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in a["Strides"])]
    n, c, m = x.shape[0], x.shape[1], w.shape[0]
    if g == 1 and n > 1:
        y = jnp.einsum("nmc,nc...->nm...", jnp.broadcast_to(w.reshape(1, m, c), (n, m, c)),
                       xp, precision=precision, preferred_element_type=accumulate)
        return padded_end(y, a)
    y = jnp.einsum("ngc...,gmc->ngm...", xp.reshape((n, g, c // g) + xp.shape[2:]),
                   w.reshape(g, m // g, c // g), precision=precision,
                   preferred_element_type=accumulate)
    return padded_end(y.reshape((n, m) + xp.shape[2:]), a)

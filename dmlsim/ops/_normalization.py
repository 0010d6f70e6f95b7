"""Pieces shared by the normalization operators: the broadcast rule of their parameter
tensors, mean-variance normalization over axes (JAX, float32 two-pass; and the float64
reference), and its tolerance.

Parameter tensors (Mean, Variance, Scale, Bias) have the input's DimensionCount and each
size either equal to the input's or 1 (broadcast), as the pages say.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ._ieee import correctly_rounded

U = 2.0 ** -24


def broadcastable(*fields, to="InputTensor"):
    def rule(spec, check):
        x = spec.tensor[to]
        for f in fields:
            t = spec.tensor.get(f)
            if t is None:
                continue
            if len(t.sizes) != len(x.sizes):
                check.fail(f"{f}.DimensionCount is {len(t.sizes)} but {to}.DimensionCount is "
                           f"{len(x.sizes)}; they must match")
            for d, (a, b) in enumerate(zip(t.sizes, x.sizes)):
                if a not in (1, b):
                    check.fail(f"{f}.Sizes {list(t.sizes)} must equal {to}.Sizes {list(x.sizes)} "
                               f"or be 1 in each dimension (dimension {d} is {a})")
    rule.__doc__ = f"{', '.join(fields)} broadcast to {to} (sizes equal or 1)."
    return rule


def axes_rule(spec, check):
    axes, n = spec.attr["Axes"], len(spec.tensor["InputTensor"].sizes)
    if not axes:
        check.fail("AxisCount is 0; at least one axis is required")
    for i, a in enumerate(axes):
        if not 0 <= a < n:
            check.fail(f"Axes[{i}] is {a}; values must be in [0, InputTensor.DimensionCount - 1]"
                       f" = [0, {n - 1}]")
    if len(set(axes)) != len(axes):
        check.fail(f"Axes {list(axes)} lists an axis twice")


def mvn(x, scale, bias, axes, use_mean, use_variance, epsilon, ctx):
    """Scale * ((x - mean) / sqrt(variance + Epsilon)) + Bias over ``axes`` (JAX). Without
    ``use_mean`` the mean is 0 (the variance is then the mean square); without
    ``use_variance`` the divisor is 1."""
    x = ctx.upcast(x)
    axes = tuple(axes)
    centered = x - jnp.mean(x, axis=axes, keepdims=True) if use_mean else x
    y = centered
    if use_variance:
        var = jnp.mean(centered * centered, axis=axes, keepdims=True)
        eps = jnp.asarray(np.float32(epsilon), x.dtype)
        y = correctly_rounded(lambda c, v: c / jnp.sqrt(v + eps))(centered, var)
    if scale is not None:
        y = y * ctx.upcast(scale)
    if bias is not None:
        y = y + ctx.upcast(bias)
    return y


def mvn_reference(x, scale, bias, axes, use_mean, use_variance, epsilon):
    x = np.asarray(x, np.float64)
    axes = tuple(axes)
    c = x - x.mean(axis=axes, keepdims=True) if use_mean else x
    y = c / np.sqrt((c * c).mean(axis=axes, keepdims=True) + float(np.float32(epsilon))) \
        if use_variance else c
    if scale is not None:
        y = y * np.asarray(scale, np.float64)
    if bias is not None:
        y = y + np.asarray(bias, np.float64)
    return y


def mvn_bound(x, scale, bias, axes, use_mean, use_variance, epsilon):
    """|error| <= |Scale| ((n + 4) u |z| + (n + 2) u mean|x| / s + 2 u |z|) + 2 u |Bias|,
    z the normalized value, s the divisor, n the reduction length: the mean's and the
    variance's float32 summation errors carried through the division."""
    x = np.asarray(x, np.float64)
    axes = tuple(axes)
    n = int(np.prod([x.shape[a] for a in axes]))
    z = np.abs(mvn_reference(x, None, None, axes, use_mean, use_variance, epsilon))
    s = np.sqrt(((x - x.mean(axis=axes, keepdims=True)) ** 2 if use_mean else x * x)
                .mean(axis=axes, keepdims=True) + float(np.float32(epsilon))) \
        if use_variance else 1.0
    m = np.abs(x).mean(axis=axes, keepdims=True)
    b = (n + 6) * U * z + ((n + 2) * U * m / s if use_mean else 0)
    if scale is not None:
        b = b * np.abs(np.asarray(scale, np.float64))
    if bias is not None:
        b = b + 2 * U * np.abs(np.asarray(bias, np.float64))
    return b

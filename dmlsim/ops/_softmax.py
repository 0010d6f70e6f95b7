"""The softmax family's formulas over a set of axes: JAX kernels, and float64 references
written group by group apart from them.

Each group of elements sharing their coordinates outside the axes is one softmax. The
kernels shift by the group's maximum (the same function, no overflow), give 1 exactly at the
maxima (equal infinities share the mass like equal values) and make a group with a NaN all
NaN; HARDMAX puts its 1 at the first maximum in row-major order over the reduced axes (a NaN
counts as the maximum).
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np


def _shifted(x, axes):
    """(x - max, exp(x - max) with exactly 1 at the maxima, sum of the others' exps)."""
    m = jnp.max(x, axis=axes, keepdims=True)
    at_max = x == m
    d = x - m
    e = jnp.where(at_max, jnp.ones_like(x), jnp.exp(jnp.where(at_max, jnp.zeros_like(x), d)))
    others = jnp.sum(jnp.where(at_max, 0, e), axis=axes, keepdims=True) + \
        (jnp.sum(at_max.astype(x.dtype), axis=axes, keepdims=True) - 1)
    # NaN anywhere in the group: the max is NaN, so is everything computed from it.
    others = jnp.where(jnp.isnan(m), m, others)
    return d, e, others


def softmax(x, axes):
    _, e, others = _shifted(x, axes)
    return e / (others + 1)


def log_softmax(x, axes):
    """(x - max) - ln(sum exp(x - max)), with ln(1 + others) via log1p (no cancellation)."""
    d, _, others = _shifted(x, axes)
    return jnp.where(x == jnp.max(x, axis=axes, keepdims=True), 0, d) - jnp.log1p(others)


def hardmax(x, axes):
    """1 at the first maximum of each group (row-major order over the reduced axes)."""
    axes = tuple(sorted(axes))
    keep = [d for d in range(x.ndim) if d not in axes]
    perm = keep + list(axes)
    xt = jnp.transpose(x, perm)
    lead = xt.shape[:len(keep)]
    flat = xt.reshape(lead + (-1,))
    idx = jnp.argmax(flat, axis=-1)[..., None]
    onehot = (jnp.arange(flat.shape[-1]) == idx).astype(x.dtype)
    return jnp.transpose(onehot.reshape(xt.shape), tuple(int(i) for i in np.argsort(perm)))


# ---- the float64 references, written group by group --------------------------------------

def _groups(x, axes):
    """``x`` with the reduced axes last, flattened to (groups, group size), and the inverse."""
    axes = tuple(sorted(axes))
    keep = [d for d in range(x.ndim) if d not in axes]
    xt = np.transpose(x, keep + list(axes))
    flat = xt.reshape(-1, int(np.prod([x.shape[a] for a in axes])))

    def back(y):
        return np.transpose(y.reshape(xt.shape), np.argsort(keep + list(axes)))
    return flat, back


def _ref_group(fn, x, axes):
    flat, back = _groups(x, axes)
    return back(np.stack([fn(row) for row in flat]))


def _softmax_row(row):
    if np.isnan(row).any():
        return np.full_like(row, np.nan)
    top = row.max()
    w = np.exp(np.where(row == top, 0.0, row - top))  # equal infinities share the mass
    return w / w.sum()


def _log_softmax_row(row):
    if np.isnan(row).any():
        return np.full_like(row, np.nan)
    top = row.max()
    d = np.where(row == top, 0.0, row - top)
    return d - np.log(np.exp(d).sum())


def _hardmax_row(row):
    out = np.zeros_like(row)
    nan = np.flatnonzero(np.isnan(row))  # NaN counts as the maximum
    out[nan[0] if nan.size else int(np.argmax(row))] = 1
    return out


def softmax_reference(x, axes):
    return _ref_group(_softmax_row, x, axes)


def log_softmax_reference(x, axes):
    return _ref_group(_log_softmax_row, x, axes)


def hardmax_reference(x, axes):
    return _ref_group(_hardmax_row, x, axes)

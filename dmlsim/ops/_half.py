"""FLOAT16 arithmetic under ALLOW_HALF_PRECISION_COMPUTATION with one meaning on every backend:
sums in a GPU shader's order, every partial sum rounded to FLOAT16."""
from __future__ import annotations

import jax.numpy as jnp
from jax import lax


HALF_LANE = 32  # terms one lane adds in order before the lanes' sums are added pairwise


def half_sum(terms, axes):
    """The sum over ``axes`` in FLOAT16 arithmetic (ALLOW_HALF_PRECISION_COMPUTATION), the same
    bits on every backend: each lane adds ``HALF_LANE`` consecutive terms in order, then the
    lanes' sums are added as a pairwise tree; the terms and every partial sum are rounded to
    FLOAT16 by ``reduce_precision`` (an operation XLA keeps, where it may drop a pair of
    converts and keep float32). Zeros pad the lengths (exact)."""
    keep = [a for a in range(terms.ndim) if a not in axes]
    x = _fp16(jnp.transpose(terms, keep + list(axes)).astype(jnp.float32))
    x = x.reshape([terms.shape[a] for a in keep] + [-1])
    pad = -x.shape[-1] % HALF_LANE
    x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, pad)])
    x = x.reshape(x.shape[:-1] + (-1, HALF_LANE))
    acc = x[..., 0]
    for j in range(1, HALF_LANE):
        acc = _fp16(acc + x[..., j])
    while acc.shape[-1] > 1:
        if acc.shape[-1] % 2:
            acc = jnp.concatenate([acc, jnp.zeros_like(acc[..., :1])], axis=-1)
        half = acc.shape[-1] // 2
        acc = _fp16(acc[..., :half] + acc[..., half:])
    sizes = [1 if a in axes else terms.shape[a] for a in range(terms.ndim)]
    return acc.reshape(sizes).astype(jnp.float16)


def _fp16(v):
    return lax.reduce_precision(v, exponent_bits=5, mantissa_bits=10)

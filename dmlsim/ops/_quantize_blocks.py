"""QUANTIZE / DEQUANTIZE's blocked quantization tensors: a scale or zero point whose size
along a dimension divides the input's covers blocks of consecutive elements (see
``quantize_dequantize``)."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np


def blocks(tensors, shape):
    """[Scale, ZeroPoint or None] of QUANTIZE / DEQUANTIZE, each repeated over its blocks to
    the input's ``shape`` (JAX): along a dimension of size s dividing n, element i reads
    value i // (n / s)."""
    out = []
    for q in tensors:
        q = jnp.asarray(q)
        for d, (s, n) in enumerate(zip(q.shape, shape)):
            if s not in (1, n):
                q = jnp.repeat(q, n // s, axis=d)
        out.append(q)
    return out + [None]


def blocks_reference(tensors, shape):
    """:func:`blocks` by index arithmetic (NumPy): element i reads q[i // block]."""
    idx = np.indices(shape)
    return [np.asarray(q)[tuple((idx[d] // (n // s)) if s not in (1, n) else
                                (idx[d] if s == n else 0 * idx[d])
                                for d, (s, n) in enumerate(zip(np.shape(q), shape)))]
            for q in tensors] + [None]

"""The packed 4-bit types, DML_TENSOR_DATA_TYPE_UINT4 and _INT4: two elements per byte.

DML_TENSOR_DATA_TYPE's page: "the first element in the low nibble of the byte; and the
second element in the high nibble (standard little-endian order). Dimensions don't need to
be byte-aligned": [1, 2, 3, 4, 5] is the 3 bytes [0x21, 0x43, 0x05]. Strides count elements
(nibbles), as DMLCalcBufferTensorSize counts them in bits, and a binding's offset counts
bytes: the element at indices i lives at nibble n = 2 x byte offset + sum(i x stride), in
byte n // 2, the low nibble when n is even. INT4 is two's complement in its nibble.

Kernels see ``ml_dtypes.int4`` / ``uint4`` arrays. The layout rule, the nibble indices and
the host-side (NumPy) halves live in ``dtypes``; this module is the traced half. Reading
gathers bytes and shifts; writing is a read-modify-write of each byte, done in two static
passes (even nibbles, then odd ones), so that two elements sharing a byte both land and the
other nibble of a byte that only one element touches keeps its bits (the "ignorable tail
nibble" included).
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from . import dtypes


def read(u8, idx: np.ndarray, data_type: int):
    """The elements at nibble indices ``idx`` of the byte array ``u8`` (JAX, traceable)."""
    flat = idx.reshape(-1)
    byte = jnp.take(u8, jnp.asarray(flat >> 1), mode="clip")
    shift = jnp.asarray(((flat & 1) * 4).astype(np.uint8))
    return dtypes.nibble_values((byte >> shift) & 15, data_type).reshape(idx.shape)


def write(u8, idx: np.ndarray, values):
    """``u8`` with ``values`` (shape of ``idx``) stored at nibble indices ``idx`` (JAX)."""
    flat, bits = idx.reshape(-1), dtypes.nibbles(jnp.asarray(values)).reshape(-1)
    for parity, keep in ((0, 0xF0), (1, 0x0F)):
        sel = np.nonzero((flat & 1) == parity)[0]
        if sel.size == 0:
            continue
        byte = jnp.asarray(flat[sel] >> 1)
        mine = bits if sel.size == flat.size else bits[jnp.asarray(sel)]
        new = (jnp.take(u8, byte, mode="clip") & keep) | (mine << (4 * parity))
        u8 = u8.at[byte].set(new.astype(np.uint8), mode="drop")
    return u8

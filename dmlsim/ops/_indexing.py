"""Index arithmetic of the gather, scatter and one-hot operators.

Negative indices (signed index types, FL 3_0) count from the end of their dimension, as the
pages say. Out-of-range indices are "invalid" and "will yield incorrect outputs, but no
failure will occur, and all reads will be clamped safely" (GATHER): dmlsim clamps every
index into [0, n - 1] after the negative wrap, for reads and writes alike, so an invalid
index reads or writes the nearest valid element (ONE_HOT, whose page says out-of-range
indices are ignored, does not use this). 64-bit indices are exact.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np


def normalize(idx, n):
    """JAX indices -> integers in [0, n - 1]: negative ones from the end, then clamped.
    The result is int32 when ``n`` fits (cheaper gathers), int64 otherwise."""
    out = jnp.int32 if n < 2 ** 31 else jnp.int64
    if jnp.issubdtype(idx.dtype, jnp.unsignedinteger):
        big = idx > jnp.asarray(n - 1, idx.dtype)
        return jnp.where(big, n - 1, idx).astype(out)
    i = idx.astype(jnp.int64)
    i = jnp.where(i < 0, i + n, i)
    return jnp.clip(i, 0, n - 1).astype(out)


def normalize_one(i, n) -> int:
    """The reference's version, one Python int at a time."""
    i = int(i)
    if i < 0:
        i += n
    return min(max(i, 0), n - 1)


def meaningful(sizes, count, check, field, what):
    """The last ``count`` sizes; the leading ones must be 1 ("irrelevant leading ones")."""
    if not 1 <= count <= len(sizes):
        check.fail(f"{what} is {count}; it must be in [1, {field}.DimensionCount] = "
                   f"[1, {len(sizes)}]")
    lead = sizes[:len(sizes) - count]
    if any(s != 1 for s in lead):
        check.fail(f"{field}.Sizes {list(sizes)} has leading sizes {list(lead)} outside its "
                   f"{what} = {count} meaningful dimensions; they must be 1")
    return tuple(sizes[len(sizes) - count:])


def right_aligned(sizes, count, check, what):
    """``sizes`` as ``count`` dimensions: leading 1s added, or leading 1s removed."""
    sizes = list(sizes)
    while len(sizes) > count and sizes[0] == 1:
        sizes.pop(0)
    if len(sizes) > count:
        check.fail(f"{what} has {len(sizes)} meaningful dimensions, more than the tensors' "
                   f"DimensionCount {count}")
    return [1] * (count - len(sizes)) + sizes


def last_wins(n_targets, target_flat, count):
    """For each of ``n_targets`` positions, the highest update position writing to it (or
    -1): a scatter's duplicates resolved deterministically, the last in row-major order of
    the updates winning (the pages leave it unspecified)."""
    return jnp.full((n_targets,), -1, jnp.int64).at[target_flat].max(
        jnp.arange(count, dtype=jnp.int64))


def reference_scatter(base, writes):
    """``base`` with ``writes`` ((flat target, value) in update order) applied in order."""
    out = np.array(base, copy=True).reshape(-1)
    for t, v in writes:
        out[t] = v
    return out.reshape(np.shape(base))

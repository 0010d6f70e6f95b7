"""Shared pieces of PADDING and PADDING1: the index maps of the padding modes, the kernel's
padding of raw bits, the float64 reference (which folds the index sequence literally, apart
from the kernel's modular formula), the shape rule, the mode rule and the page's examples.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core.registry import Example, Sizes, same_type
from ._movement import dimension_count, from_bits, to_bits
from .._schema.members import members

IN, OUT = "InputTensor", "OutputTensor"
CONSTANT, EDGE, REFLECTION, SYMMETRIC, WRAP = members(
    "DML_PADDING_MODE", "CONSTANT EDGE REFLECTION SYMMETRIC WRAP")


def source_index(i, n, mode):
    """The input index an output position ``i`` (input coordinates, may be outside) reads."""
    if 0 <= i < n:
        return i
    if mode == EDGE:
        return 0 if i < 0 else n - 1
    if mode == WRAP:  # periodic: the tensor repeats along the axis
        return i % n
    if mode == REFLECTION:
        if n == 1:
            return 0
        p = 2 * (n - 1)
        j = i % p
        return j if j < n else p - j
    p = 2 * n  # SYMMETRIC
    j = i % p
    return j if j < n else p - 1 - j


def pad(x, start, end, mode, value_bits):
    """CONSTANT: one lax.pad of the bits; the mirrored modes: one gather per padded axis."""
    u = to_bits(x)
    if mode == CONSTANT:
        fill = jnp.asarray(value_bits, u.dtype)
        return from_bits(lax.pad(u, fill, [(s, e, 0) for s, e in zip(start, end)]), x.dtype)
    for d, (n, s, e) in enumerate(zip(x.shape, start, end)):
        if s or e:
            idx = np.array([source_index(i, n, mode) for i in range(-s, n + e)])
            u = jnp.take(u, jnp.asarray(idx, np.int32), axis=d, mode="clip")
    return from_bits(u, x.dtype)




def folded(n, before, after, mode):
    """Input index of each output position along one dimension, by literally folding the
    index sequence over its edges until it covers the padding (the page's wording)."""
    seq, lead = list(range(n)), 0
    while lead < before or len(seq) - lead - n < after:
        if mode == WRAP:  # the whole period again on either side
            left, right = list(range(n)), list(range(n))
        elif mode == EDGE or (mode == REFLECTION and n == 1):
            left, right = [0], [n - 1]
        elif mode == REFLECTION:  # mirrored without the edge element
            left, right = seq[1:n][::-1], seq[-n:-1][::-1]
        else:  # SYMMETRIC: the edge element repeats
            left, right = seq[:n][::-1], seq[-n:][::-1]
        if lead < before:
            seq, lead = left + seq, lead + len(left)
        if len(seq) - lead - n < after:
            seq = seq + right
    return seq[lead - before:lead + n + after]


def reference(x, start, end, mode, value):
    x = np.asarray(x)
    maps = [folded(n, s, e, mode if mode != CONSTANT else EDGE)
            for n, s, e in zip(x.shape, start, end)]
    out = x[np.ix_(*[np.array(m) for m in maps])]
    if mode == CONSTANT:
        inside = np.ix_(*[np.arange(s, s + n) for s, n in zip(start, x.shape)])
        padded = np.full(out.shape, value, x.dtype)
        padded[inside] = x
        return padded
    return out


def padding_sizes(spec, check):
    a, t = spec.attr, spec.tensor[IN]
    return {OUT: Sizes([n + s + e for n, s, e in zip(t.sizes, a["StartPadding"],
                                                      a["EndPadding"])],
                       "InputTensor, StartPadding and EndPadding")}


def mode_rule(spec, check):
    mode = spec.attr["PaddingMode"]
    if mode not in (CONSTANT, EDGE, REFLECTION, SYMMETRIC, WRAP):
        check.fail(f"PaddingMode is {mode}, which is not a DML_PADDING_MODE (0 CONSTANT, 1 EDGE, "
                   "2 REFLECTION, 3 SYMMETRIC, 4 WRAP)")
    if mode == SYMMETRIC and check.level < 0x3000:
        check.fail("PaddingMode is DML_PADDING_MODE_SYMMETRIC, introduced in "
                   "DML_FEATURE_LEVEL_3_0")
    if mode == WRAP and check.level < 0x6400:  # the feature-level history's 6_4 entry
        check.fail("PaddingMode is DML_PADDING_MODE_WRAP, accepted from DML_FEATURE_LEVEL_6_4")


f32 = np.float32
PAGE = f32([[[[1, 2, 3, 4], [5, 6, 7, 8], [1, 2, 3, 4], [5, 6, 7, 8]]]])
PADS = {"StartPadding": (0, 0, 1, 2), "EndPadding": (0, 0, 3, 4)}
ROW_A, ROW_B = [1, 2, 3, 4], [5, 6, 7, 8]


EDGE_OUT = f32([[[[r[0], r[0], *r, r[3], r[3], r[3], r[3]] for r in
                  [ROW_A, ROW_A, ROW_B, ROW_A, ROW_B, ROW_B, ROW_B, ROW_B]]]])
REFL_OUT = f32([[[[r[2], r[1], *r, r[2], r[1], r[0], r[1]] for r in
                  [ROW_B, ROW_A, ROW_B, ROW_A, ROW_B, ROW_A, ROW_B, ROW_A]]]])
SYM_OUT = f32([[[[r[1], r[0], *r, r[3], r[2], r[1], r[0]] for r in
                 [ROW_A, ROW_A, ROW_B, ROW_A, ROW_B, ROW_B, ROW_A, ROW_B]]]])
WRAP_OUT = f32([[[[r[2], r[3], *r, r[0], r[1], r[2], r[3]] for r in
                  [ROW_B, ROW_A, ROW_B, ROW_A, ROW_B, ROW_A, ROW_B, ROW_A]]]])
CONST_OUT = np.full((1, 1, 8, 10), 9, f32)
CONST_OUT[0, 0, 1:5, 2:6] = PAGE[0, 0]
RULES = (dimension_count("StartPadding", "EndPadding"), same_type(IN, OUT), mode_rule)


def examples(value_attrs, type_attrs=None):
    type_attrs = type_attrs or {}
    return (
        Example({IN: PAGE}, {OUT: CONST_OUT}, {"PaddingMode": CONSTANT, **value_attrs, **PADS},
                "the page's example 1: CONSTANT 9"),
        Example({IN: PAGE}, {OUT: EDGE_OUT}, {"PaddingMode": EDGE, **type_attrs, **PADS},
                "example 2: EDGE"),
        Example({IN: PAGE}, {OUT: REFL_OUT}, {"PaddingMode": REFLECTION, **type_attrs, **PADS},
                "example 3: REFLECTION, folding over again past the edge"),
        Example({IN: PAGE}, {OUT: SYM_OUT}, {"PaddingMode": SYMMETRIC, **type_attrs, **PADS},
                "example 4: SYMMETRIC"),
        Example({IN: PAGE}, {OUT: WRAP_OUT}, {"PaddingMode": WRAP, **type_attrs, **PADS},
                "WRAP (FL 6_4, the feature-level history): the tensor repeats periodically"),
    )



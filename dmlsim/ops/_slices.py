"""Input windows of SLICE, SLICE1 and SLICE_GRAD: where a window starts, the elements it
reads, and the bounds rules the pages state.

Strides of 0 are rejected for all three (SLICE1's page: "Strides may not be 0"; SLICE_GRAD
needs them non-zero; SLICE's strides are UINT and a 0 would read one element repeatedly,
which the page's bounds wording does not allow for). A negative stride starts at the
window's end.
"""
from __future__ import annotations

import numpy as np


def starts_of(offsets, sizes, strides):
    return [o + (s - 1 if st < 0 else 0) for o, s, st in zip(offsets, sizes, strides)]


def indices(starts, strides, out_sizes):
    """Open-mesh index arrays of the elements a slice reads."""
    return np.ix_(*[np.arange(n) * st + s for s, st, n in zip(starts, strides, out_sizes)])


def window(spec, check, in_field, offsets, sizes, strides, out_sizes):
    t = spec.tensor[in_field]
    for i, (o, s, st, n) in enumerate(zip(offsets, sizes, strides, out_sizes)):
        if st == 0:
            check.fail(f"the stride of dimension {i} is 0; strides may not be 0")
        if s == 0:
            check.fail(f"the window of dimension {i} is empty (size 0)")
        if o + s > t.sizes[i]:
            check.fail(f"the window of dimension {i} is [{o}, {o + s}), past {in_field}.Sizes[{i}] "
                       f"= {t.sizes[i]}; out-of-bounds reads are not permitted")
        if n is not None and not 1 <= n <= 1 + (s - 1) // abs(st):
            check.fail(f"dimension {i} copies {n} elements, but the window of size {s} with "
                       f"stride {st} holds at most {1 + (s - 1) // abs(st)}")


def largest(sizes, strides):
    return [1 + (s - 1) // abs(st) if st else 1 for s, st in zip(sizes, strides)]

"""Input windows of SLICE, SLICE1 and SLICE_GRAD: where a window starts, the elements it
reads, and the bounds rules the pages state.

Strides of 0 are rejected for all three (SLICE1's page: "Strides may not be 0"; SLICE_GRAD
needs them non-zero; SLICE's strides are UINT and a 0 would read one element repeatedly,
which the page's bounds wording does not allow for). A negative stride starts at the
window's end.
"""
from __future__ import annotations

from jax import lax


def starts_of(offsets, sizes, strides):
    return [o + (s - 1 if st < 0 else 0) for o, s, st in zip(offsets, sizes, strides)]


def read_window(u, starts, strides, sizes):
    """The elements a window reads, as one static strided slice (lax.slice, with lax.rev on
    the dimensions of negative stride): no gather."""
    rev = [d for d, st in enumerate(strides) if st < 0]
    if rev:
        u = lax.rev(u, rev)
    first = [u.shape[d] - 1 - s if st < 0 else s
             for d, (s, st) in enumerate(zip(starts, strides))]
    step = [abs(st) for st in strides]
    limit = [f + (n - 1) * st + 1 for f, n, st in zip(first, sizes, step)]
    return lax.slice(u, first, limit, step)


def place_window(v, starts, strides, out_sizes, zero):
    """The inverse: ``v`` placed where read_window read it in a tensor of ``out_sizes``,
    ``zero`` elsewhere, as one lax.pad with interior padding (no scatter)."""
    rev = [d for d, st in enumerate(strides) if st < 0]
    if rev:
        v = lax.rev(v, rev)
    config = []
    for s, st, n, size in zip(starts, strides, v.shape, out_sizes):
        lo = s - (n - 1) * abs(st) if st < 0 else s  # the lowest position written
        config.append((lo, size - (lo + (n - 1) * abs(st) + 1), abs(st) - 1))
    return lax.pad(v, zero, config)


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

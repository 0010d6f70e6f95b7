"""The float64 reference of ``_resample``, one output element at a time: each dimension's
weights for that element, multiplied out over every combination of taps (written apart from
the kernel's per-dimension gathers)."""
from __future__ import annotations

import math

import numpy as np

from ._resample import INCREASING, NEAREST, source


def weights(in_shape, out_sizes, scales, in_offs, out_offs, mode, rounding, antialias):
    """Per dimension, per output index: {input index: weight} (the pages' coordinate map)."""
    per_dim = []
    for d, n_out in enumerate(out_sizes):
        s, a, b = (float(np.float32(v)) for v in (scales[d], in_offs[d], out_offs[d]))
        n_in = in_shape[d]
        rows = []
        for o in range(n_out):
            c = source(o, s, a, b)
            if mode == NEAREST:
                i = math.ceil(c) if rounding == INCREASING else math.floor(c)
                rows.append({min(max(i, 0), n_in - 1): 1.0})
            elif antialias and 1.0 / s > 2:
                ws = {i: max(0.0, 1 - abs(i - c) * s) for i in range(n_in)}
                total = sum(ws.values())
                rows.append({i: v / total for i, v in ws.items() if v})
            else:
                c = min(max(c, 0.0), n_in - 1.0)
                lo = math.floor(c)
                hi = min(lo + 1, n_in - 1)
                row = {lo: 1 - (c - lo)}
                row[hi] = row.get(hi, 0.0) + (c - lo)
                rows.append(row)
        per_dim.append(rows)
    return per_dim


def resample_reference(x, out_sizes, scales, in_offs, out_offs, mode, rounding, antialias):
    """Element by element: each output's per-dimension weights, multiplied out."""
    x = np.asarray(x)
    src = x.astype(np.float64)
    per_dim = weights(x.shape, out_sizes, scales, in_offs, out_offs, mode, rounding, antialias)
    y = np.zeros(tuple(out_sizes), np.float64 if mode != NEAREST else x.dtype)
    for o in np.ndindex(*out_sizes):
        if mode == NEAREST:
            y[o] = x[tuple(next(iter(per_dim[d][o[d]])) for d in range(len(o)))]
            continue
        terms = [[(i, w) for i, w in per_dim[d][o[d]].items() if w] for d in range(len(o))]
        y[o] = sum(math.prod(w for _, w in combo) * src[tuple(i for i, _ in combo)]
                   for combo in _product(terms))
    if x.dtype.kind in "iu" and mode != NEAREST:
        info = np.iinfo(x.dtype)
        return np.clip(np.round(y), info.min, info.max).astype(x.dtype)
    return y


def resample_grad_reference(dy, in_shape, scales, in_offs, out_offs, mode, rounding):
    """The transpose, element by element: each gradient element times each combination of
    its forward output's weights, added to the input element the combination names."""
    dy = np.asarray(dy, np.float64)
    per_dim = weights(in_shape, dy.shape, scales, in_offs, out_offs, mode, rounding, False)
    dx = np.zeros(tuple(in_shape))
    for o in np.ndindex(*dy.shape):
        terms = [[(i, w) for i, w in per_dim[d][o[d]].items() if w] for d in range(len(o))]
        for combo in _product(terms):
            dx[tuple(i for i, _ in combo)] += math.prod(w for _, w in combo) * dy[o]
    return dx


def _product(lists):
    if not lists:
        yield ()
        return
    for head in lists[0]:
        for rest in _product(lists[1:]):
            yield (head,) + rest

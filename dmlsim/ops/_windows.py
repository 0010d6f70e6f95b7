"""Sliding windows of FOLD and UNFOLD: block counts, the padded coordinates each (window
position, block) touches, and the checks both operators share.

BlocksPerDimension[d] = (Spatial[d] + StartPadding[d] + EndPadding[d] - Dilations[d] *
(WindowSizes[d] - 1) - 1) / Strides[d] + 1, BlockCount their product (the pages).
"""
from __future__ import annotations

import numpy as np

IN, OUT = "InputTensor", "OutputTensor"
ARRAYS = ("WindowSizes", "Strides", "Dilations", "StartPadding", "EndPadding")


def blocks(spatial, a):
    return [(s + p0 + p1 - d * (w - 1) - 1) // st + 1 for s, w, st, d, p0, p1 in
            zip(spatial, a["WindowSizes"], a["Strides"], a["Dilations"], a["StartPadding"],
                a["EndPadding"])]


def positions(spatial, a):
    """Per spatial dimension: the padded coordinate of (window position, block), shaped
    [prod(W), BlockCount] for a gather or a scatter."""
    ws, bs = a["WindowSizes"], blocks(spatial, a)
    w_grid = np.indices(ws).reshape(len(ws), -1)
    b_grid = np.indices(bs).reshape(len(ws), -1)
    return [w_grid[d][:, None] * a["Dilations"][d] + b_grid[d][None, :] * a["Strides"][d]
            for d in range(len(ws))]


def pairs(spatial, a):
    """(row offset w, column b, unpadded coordinates) of every window element, for the
    references: written as the pages' loops, apart from ``positions``."""
    bs = blocks(spatial, a)
    for wi, w in enumerate(np.ndindex(*a["WindowSizes"])):
        for bi, b in enumerate(np.ndindex(*bs)):
            yield wi, bi, [bb * st + ww * d - p for bb, ww, st, d, p in
                           zip(b, w, a["Strides"], a["Dilations"], a["StartPadding"])]


def check_window(spec, check, spatial):
    a, nd = spec.attr, spec.attr["DimensionCount"]
    for f in ARRAYS:
        if len(a[f]) != nd:
            check.fail(f"{f} has {len(a[f])} entries but DimensionCount is {nd}")
    for f in ("WindowSizes", "Strides", "Dilations"):
        if any(v < 1 for v in a[f]):
            check.fail(f"{f} {list(a[f])} has a value below 1")
    bs = blocks(spatial, a)
    if any(b < 1 for b in bs):
        check.fail(f"the window does not fit: BlocksPerDimension is {bs}")
    return bs

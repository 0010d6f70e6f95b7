"""DML_OPERATOR_UNFOLD (FL 6_4): extract sliding local blocks into columns.

InputTensor { N, C, *spatial } (DimensionCount spatial dimensions, 1 to 6) -> OutputTensor
{ N, C * prod(WindowSizes), BlockCount }: row c * prod(W) + w holds window position w
(row-major over the window) of channel c, column b the block b (row-major over the blocks);
padding is implicit zeros (see ``_windows`` for BlockCount). WindowSizes, Strides and
Dilations must be at least 1 and the window must fit. Values are copied bit for bit.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, Sizes, register
from ._movement import from_bits, to_bits
from ._windows import IN, OUT, check_window, pairs, positions


def unfold(InputTensor, *, WindowSizes, Strides, Dilations, StartPadding, EndPadding, ctx):
    a = dict(WindowSizes=WindowSizes, Strides=Strides, Dilations=Dilations,
             StartPadding=StartPadding, EndPadding=EndPadding)
    u = jnp.pad(to_bits(InputTensor), [(0, 0), (0, 0)] + list(zip(StartPadding, EndPadding)))
    pos = positions(InputTensor.shape[2:], a)
    g = u[(slice(None), slice(None)) + tuple(jnp.asarray(p) for p in pos)]  # N, C, prod W, L
    return from_bits(g.reshape(InputTensor.shape[0], -1, g.shape[-1]), InputTensor.dtype)


def unfold_reference(InputTensor, *, WindowSizes, Strides, Dilations, StartPadding, EndPadding,
                     ctx):
    x = np.asarray(InputTensor)
    a = dict(WindowSizes=WindowSizes, Strides=Strides, Dilations=Dilations,
             StartPadding=StartPadding, EndPadding=EndPadding)
    cells = list(pairs(x.shape[2:], a))
    k, count = int(np.prod(WindowSizes)), 1 + max(b for _, b, _ in cells)
    out = np.zeros((x.shape[0], x.shape[1] * k, count), x.dtype)
    for n, c in np.ndindex(*x.shape[:2]):
        for wi, bi, src in cells:
            if all(0 <= s < m for s, m in zip(src, x.shape[2:])):
                out[n, c * k + wi, bi] = x[(n, c) + tuple(src)]
    return out


def unfold_sizes(spec, check):
    t, nd = spec.tensor[IN], spec.attr["DimensionCount"]
    if len(t.sizes) != nd + 2:
        check.fail(f"InputTensor.DimensionCount is {len(t.sizes)}; it must be DimensionCount + 2 "
                   f"= {nd + 2} ({{N, C, spatial}})")
    bs = check_window(spec, check, t.sizes[2:])
    k = int(np.prod(spec.attr["WindowSizes"]))
    return {OUT: Sizes((t.sizes[0], t.sizes[1] * k, int(np.prod(bs))), "InputTensor")}


f32 = np.float32
WIN = {"WindowSizes": (3, 3), "Strides": (1, 1), "Dilations": (1, 1)}
X5 = f32(np.arange(25).reshape(1, 1, 5, 5))
ROWS1 = [[0, 1, 2, 5, 6, 7, 10, 11, 12]]
PAGE1 = f32([[r + o for r in ROWS1[0]] for o in (0, 1, 2, 5, 6, 7, 10, 11, 12)])[None]
PAGE2 = f32([[0, 0, 0, 0, 1, 2, 5, 6, 7, 10, 11, 12, 15, 16, 17],
             [0, 0, 0, 1, 2, 3, 6, 7, 8, 11, 12, 13, 16, 17, 18],
             [0, 0, 0, 2, 3, 4, 7, 8, 9, 12, 13, 14, 17, 18, 19],
             [0, 1, 2, 5, 6, 7, 10, 11, 12, 15, 16, 17, 20, 21, 22],
             [1, 2, 3, 6, 7, 8, 11, 12, 13, 16, 17, 18, 21, 22, 23],
             [2, 3, 4, 7, 8, 9, 12, 13, 14, 17, 18, 19, 22, 23, 24],
             [5, 6, 7, 10, 11, 12, 15, 16, 17, 20, 21, 22, 0, 0, 0],
             [6, 7, 8, 11, 12, 13, 16, 17, 18, 21, 22, 23, 0, 0, 0],
             [7, 8, 9, 12, 13, 14, 17, 18, 19, 22, 23, 24, 0, 0, 0]])[None]
register(OperatorDef(
    "DML_OPERATOR_UNFOLD", unfold, unfold_reference, output_sizes=unfold_sizes, examples=(
        Example({IN: X5}, {OUT: PAGE1}, {**WIN, "StartPadding": (0, 0), "EndPadding": (0, 0)},
                "the page's example 1"),
        Example({IN: X5}, {OUT: PAGE2}, {**WIN, "StartPadding": (1, 0), "EndPadding": (1, 0)},
                "the page's example 2: zeros from the padding"),
    ), module=__name__))

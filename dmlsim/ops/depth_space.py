"""SPACE_TO_DEPTH, SPACE_TO_DEPTH1, DEPTH_TO_SPACE and DEPTH_TO_SPACE1: move BlockSize x
BlockSize spatial blocks into channels, and back.

Tensors are { Batch, Channels, Height, Width } (4-D). SPACE_TO_DEPTH gives { Batch,
Channels * BlockSize^2, Height / BlockSize, Width / BlockSize }; DEPTH_TO_SPACE the inverse.
DML_DEPTH_SPACE_ORDER (the *1 operators, FL 2_1) says how the depth is laid out:
DEPTH_COLUMN_ROW (0) is [Batch, (BlockHeight, BlockWidth, Channels), H, W], COLUMN_ROW_DEPTH
(1) [Batch, (Channels, BlockHeight, BlockWidth), H, W]; the originals are DEPTH_COLUMN_ROW.

The SPACE_TO_DEPTH(1) pages' OutputTensor sentence (Channels / BlockSize^2, Height *
BlockSize) is DEPTH_TO_SPACE's, copied; their examples ({1, 2, 4, 6} -> {1, 8, 2, 3}) are
followed. BlockSize must be at least 1 and divide the spatial sizes (SPACE_TO_DEPTH) or the
channel count by BlockSize^2 (DEPTH_TO_SPACE); E_INVALIDARG otherwise. Values are copied bit
for bit.
"""
import numpy as np

from .._core.registry import Example, OperatorDef, Sizes, register, same_type
from ._movement import from_bits, to_bits
from .._schema.members import members

IN, OUT = "InputTensor", "OutputTensor"
DCR, CRD = members("DML_DEPTH_SPACE_ORDER", "DEPTH_COLUMN_ROW COLUMN_ROW_DEPTH")


def _to_depth(x, b, order):
    n, c, h, w = x.shape
    y = x.reshape(n, c, h // b, b, w // b, b)  # n, c, H, bh, W, bw
    perm = (0, 3, 5, 1, 2, 4) if order == DCR else (0, 1, 3, 5, 2, 4)
    return y.transpose(perm).reshape(n, c * b * b, h // b, w // b)


def _to_space(x, b, order):
    n, c, h, w = x.shape
    oc = c // (b * b)
    if order == DCR:
        y = x.reshape(n, b, b, oc, h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        y = x.reshape(n, oc, b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return y.reshape(n, oc, h * b, w * b)


def _reference(x, b, order, to_depth):
    """Element by element, from the layouts the DML_DEPTH_SPACE_ORDER page gives."""
    x = np.asarray(x)
    n, c, h, w = x.shape
    shape = (n, c * b * b, h // b, w // b) if to_depth else (n, c // (b * b), h * b, w * b)
    y = np.empty(shape, x.dtype)
    depth, space = (y, x) if to_depth else (x, y)
    cs = space.shape[1]
    for i in np.ndindex(*depth.shape):
        nn, d, hh, ww = i
        if order == DCR:
            bh, bw, ch = d // (b * cs), d // cs % b, d % cs
        else:
            ch, bh, bw = d // (b * b), d // b % b, d % b
        if to_depth:
            y[i] = x[nn, ch, hh * b + bh, ww * b + bw]
        else:
            y[nn, ch, hh * b + bh, ww * b + bw] = x[i]
    return y


def _sizes(to_depth):
    def output_sizes(spec, check):
        n, c, h, w = spec.tensor[IN].sizes
        b = spec.attr["BlockSize"]
        if b < 1:
            check.fail(f"BlockSize is {b}; it must be at least 1")
        if to_depth and (h % b or w % b):
            check.fail(f"InputTensor's Height {h} and Width {w} must be multiples of BlockSize {b}")
        if not to_depth and c % (b * b):
            check.fail(f"InputTensor's channel count {c} must be a multiple of BlockSize^2 = "
                       f"{b * b}")
        sizes = (n, c * b * b, h // b, w // b) if to_depth else (n, c // (b * b), h * b, w * b)
        return {OUT: Sizes(sizes, "InputTensor and BlockSize")}
    return output_sizes


def _order_rule(spec, check):
    if spec.attr["Order"] not in (DCR, CRD):
        check.fail(f"Order is {spec.attr['Order']}, which is not a DML_DEPTH_SPACE_ORDER "
                   "(0 DEPTH_COLUMN_ROW, 1 COLUMN_ROW_DEPTH)")


SPACE = np.array([[[[0, 18, 1, 19, 2, 20], [36, 54, 37, 55, 38, 56], [3, 21, 4, 22, 5, 23],
                    [39, 57, 40, 58, 41, 59]],
                   [[9, 27, 10, 28, 11, 29], [45, 63, 46, 64, 47, 65], [12, 30, 13, 31, 14, 32],
                    [48, 66, 49, 67, 50, 68]]]], np.uint32)
SPACE_CRD = np.array([[[[0, 9, 1, 10, 2, 11], [18, 27, 19, 28, 20, 29], [3, 12, 4, 13, 5, 14],
                        [21, 30, 22, 31, 23, 32]],
                       [[36, 45, 37, 46, 38, 47], [54, 63, 55, 64, 56, 65],
                        [39, 48, 40, 49, 41, 50], [57, 66, 58, 67, 59, 68]]]], np.uint32)
DEPTH = (np.arange(8)[:, None, None] * 9 + np.arange(6).reshape(2, 3)).astype(np.uint32)[None]


def _register(name, to_depth, ordered):
    move = _to_depth if to_depth else _to_space
    src, dst = (SPACE, DEPTH) if to_depth else (DEPTH, SPACE)
    src_crd, dst_crd = (SPACE_CRD, DEPTH) if to_depth else (DEPTH, SPACE_CRD)
    if ordered:
        def kernel(InputTensor, *, BlockSize, Order, ctx):
            return from_bits(move(to_bits(InputTensor), BlockSize, Order), InputTensor.dtype)

        def reference(InputTensor, *, BlockSize, Order, ctx):
            return _reference(InputTensor, BlockSize, Order, to_depth)
        examples = (Example({IN: src}, {OUT: dst}, {"BlockSize": 2, "Order": DCR},
                            "the page's example 1: DEPTH_COLUMN_ROW"),
                    Example({IN: src_crd}, {OUT: dst_crd}, {"BlockSize": 2, "Order": CRD},
                            "the page's example 2: COLUMN_ROW_DEPTH"))
        rules = (same_type(IN, OUT), _order_rule)
    else:
        def kernel(InputTensor, *, BlockSize, ctx):
            return from_bits(move(to_bits(InputTensor), BlockSize, DCR), InputTensor.dtype)

        def reference(InputTensor, *, BlockSize, ctx):
            return _reference(InputTensor, BlockSize, DCR, to_depth)
        examples = (Example({IN: src}, {OUT: dst}, {"BlockSize": 2}, "the page's example"),
                    Example({IN: src.astype(np.float32)}, {OUT: dst.astype(np.float32)},
                            {"BlockSize": 2}, "FLOAT32"))
        rules = (same_type(IN, OUT),)
    register(OperatorDef(name, kernel, reference, output_sizes=_sizes(to_depth), rules=rules,
                         examples=examples, module=__name__))


_register("DML_OPERATOR_SPACE_TO_DEPTH", True, False)
_register("DML_OPERATOR_SPACE_TO_DEPTH1", True, True)
_register("DML_OPERATOR_DEPTH_TO_SPACE", False, False)
_register("DML_OPERATOR_DEPTH_TO_SPACE1", False, True)

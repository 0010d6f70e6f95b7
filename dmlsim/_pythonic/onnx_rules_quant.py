"""ONNX's quantized operators onto DML's, as the DML provider maps them:

- ConvInteger -> CONVOLUTION_INTEGER; QLinearConv -> QUANTIZED_LINEAR_CONVOLUTION (the
  INT32 bias B in the accumulator's units, ONNX's and DML's reading alike): Conv's
  attributes (pads or auto_pad, strides, dilations, group), 1-D convolutions lifted to 2-D
  as Conv's are; zero points and scales per tensor, the filter's per tensor or per output
  channel ({1, M, 1, 1}).
- QLinearMatMul -> QUANTIZED_LINEAR_MATRIX_MULTIPLY: 2-D to 4-D operands with one batch
  shape (the DML operator broadcasts no batch dimension), A's and the output's scale and
  zero point per tensor or per row, B's per tensor or per column.
- DynamicQuantizeLinear -> DYNAMIC_QUANTIZE_LINEAR (UINT8) of the input joined with one
  0: ONNX widens the range to include 0 (scale = (max(0, x_max) - min(0, x_min)) / 255), DML's
  page computes it over the input alone; the appended 0 makes DML's range ONNX's, and a SLICE
  drops it again. (ORT's DML provider maps the node directly, so on DirectML an all-positive
  input quantizes differently from ONNX's definition.)
What DML cannot take (3-D convolutions, mismatched batch shapes) is E_NOTIMPL naming the
node.
"""
from __future__ import annotations

import numpy as np

from .._api import public as dml
from . import dmlx_functions as F
from .onnx_lower import Value, fail
from .onnx_rules import X
from .onnx_rules_nn import _as_4d, _spatial_pads


def _per(L, v, axis_sizes, name):
    """A scale or zero point as a 4-D tensor: one value, or one per index along the axis
    whose size ``axis_sizes`` puts -1 at (e.g. [1, -1, 1, 1]: per channel). A FLOAT16 scale
    is cast to FLOAT32, the type DML's quantized operators take (exactly)."""
    if v is None:
        return None
    n = int(np.prod(v.shape)) if len(v.shape) else 1
    sizes = [n if s == -1 else 1 for s in axis_sizes]
    if v.dtype == np.float16:
        if v.const is not None:
            v = Value(v.shape, np.dtype(np.float32), v.const.astype(np.float32), None)
        else:
            return F.Cast(L.view(v, sizes, name=name), dml.DML_TENSOR_DATA_TYPE_FLOAT32)
    return L.view(v, sizes, name=name)


def _window(L, node, attrs, x, w):
    if len(x.shape) > 4:
        fail(dml.E_NOTIMPL, f"{L.label(node)}: {len(x.shape) - 2}-D convolution; DML's integer "
                            "convolutions take 1 or 2 spatial dimensions")
    kernel = list(attrs.get("kernel_shape", w.shape[2:]))
    n = len(kernel)
    strides = list(attrs.get("strides", [1] * n))
    dilations = list(attrs.get("dilations", [1] * n))
    start, end = _spatial_pads(L, node, attrs, list(x.shape[2:]), kernel, strides, dilations)
    if len(x.shape) == 3:  # lifted to [N, C, 1, W]
        strides, dilations, start, end = [1] + strides, [1] + dilations, [0] + start, [0] + end
    return dict(strides=strides, dilations=dilations,
                startPadding=start, endPadding=end, groupCount=int(attrs.get("group", 1)))


def _shape(y, lifted):
    sizes = list(y.GetOutputDesc().sizes)
    return [sizes[0], sizes[1], sizes[3]] if lifted else sizes


def _conv_integer(L, node, ins, attrs, act):
    x, w = ins[0], ins[1]
    xz = ins[2] if len(ins) > 2 else None
    wz = ins[3] if len(ins) > 3 else None
    ex, lifted = _as_4d(L, x, node.input[0])
    ew, _ = _as_4d(L, w, node.input[1])
    y = X["ConvolutionInteger"](ex, _per(L, xz, [1, 1, 1, 1], "x_zero_point"), ew,
                                _per(L, wz, [1, -1, 1, 1], "w_zero_point"),
                                **_window(L, node, attrs, x, w))
    return L.new(y, _shape(y, lifted), np.int32)


def _qlinear_conv(L, node, ins, attrs, act):
    x, xs, xz, w, ws, wz, ys, yz = ins[:8]
    b = ins[8] if len(ins) > 8 else None
    ex, lifted = _as_4d(L, x, node.input[0])
    ew, _ = _as_4d(L, w, node.input[3])
    m = w.shape[0]
    eb = None if b is None else L.view(b, [1, m, 1, 1], name=node.input[8])
    one, chan = [1, 1, 1, 1], [1, -1, 1, 1]
    y = X["QuantizedLinearConvolution"](
        ex, _per(L, xs, one, "x_scale"), _per(L, xz, one, "x_zero_point"), ew,
        _per(L, ws, chan, "w_scale"), _per(L, wz, chan, "w_zero_point"), eb,
        _per(L, ys, one, "y_scale"), _per(L, yz, one, "y_zero_point"),
        **_window(L, node, attrs, x, w))
    return L.new(y, _shape(y, lifted), yz.dtype if yz is not None else x.dtype)


def _qlinear_matmul(L, node, ins, attrs, act):
    a, a_s, az, b, b_s, bz, ys, yz = ins[:8]
    if len(a.shape) < 2 or len(b.shape) < 2 or len(a.shape) > 4 or \
            tuple(a.shape[:-2]) != tuple(b.shape[:-2]):
        fail(dml.E_NOTIMPL, f"{L.label(node)}: operands {list(a.shape)} and {list(b.shape)}; "
                            "DML's quantized product takes 2-D to 4-D operands with one batch "
                            "shape")
    lead = [1] * (4 - len(a.shape))
    sa, sb = lead + list(a.shape), lead + list(b.shape)
    row, col = [1, 1, -1, 1], [1, 1, 1, -1]
    y = X["QuantizedLinearMatrixMultiply"](
        L.view(a, sa, name=node.input[0]), _per(L, a_s, row, "a_scale"),
        _per(L, az, row, "a_zero_point"), L.view(b, sb, name=node.input[3]),
        _per(L, b_s, col, "b_scale"), _per(L, bz, col, "b_zero_point"),
        _per(L, ys, row, "y_scale"), _per(L, yz, row, "y_zero_point"))
    return L.new(y, list(a.shape[:-1]) + [b.shape[-1]], yz.dtype if yz is not None else a.dtype)


def _dynamic_quantize_linear(L, node, ins, attrs, act):
    x = ins[0]
    n = int(np.prod(x.shape)) if x.shape else 1
    zero = Value((1, 1), x.dtype, np.zeros((1, 1), x.dtype), None)
    joined = F.Join([L.view(x, [1, n], name=node.input[0]), L.tensor(zero, "zero")], 1)
    q, scale, zp = X["DynamicQuantizeLinear"](joined)
    y = F.Slice(q, [0, 0], [1, n], [1, 1])
    return [L.new(y, x.shape, np.uint8), L.new(scale, (), np.float32),
            L.new(zp, (), np.uint8)]


RULES = {"ConvInteger": _conv_integer, "QLinearConv": _qlinear_conv,
         "QLinearMatMul": _qlinear_matmul, "DynamicQuantizeLinear": _dynamic_quantize_linear}

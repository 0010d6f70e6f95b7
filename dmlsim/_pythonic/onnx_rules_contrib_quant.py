"""ONNX Runtime's quantized com.microsoft operators (and the provider's other leftovers:
ConvTransposeWithDynamicPads, FusedMatMulActivation, NhwcConv) onto DML's, as its DML provider
registers and lowers them (definitions: ORT's ``docs/ContribOperators.md``):

- **MatMulIntegerToFloat** ``(A - a_zp) a_scale x (B - b_zp) b_scale + bias``:
  MATRIX_MULTIPLY_INTEGER_TO_FLOAT (FL 6_2), scales and zero points per tensor, B's also per
  column ({1, 1, 1, N}), the bias read through zero strides.
- **DynamicQuantizeMatMul**: A quantized as ONNX's DynamicQuantizeLinear does (UINT8, the range
  widened to 0: DYNAMIC_QUANTIZE_LINEAR of A joined with one 0), then
  MATRIX_MULTIPLY_INTEGER_TO_FLOAT with A's computed scale and zero point.
- **QLinearAdd**: ELEMENT_WISE_QUANTIZED_LINEAR_ADD (FL 4_0), the operands broadcast through
  zero strides. **QLinearSigmoid**: ELEMENT_WISE_DEQUANTIZE_LINEAR, ACTIVATION_SIGMOID,
  ELEMENT_WISE_QUANTIZE_LINEAR (the provider's three operators). **QLinearConcat**: each input
  dequantized with its own scale and zero point, JOIN, QUANTIZE_LINEAR with Y's.
- **QLinearAveragePool**, **QLinearGlobalAveragePool**: QUANTIZED_LINEAR_AVERAGE_POOLING
  (FL 6_2); ``channels_last`` input read as NCHW through permuted strides and the result
  transposed back by an ELEMENT_WISE_IDENTITY.
- **QAttention**: the input projection as MATRIX_MULTIPLY_INTEGER_TO_FLOAT, then Attention's
  MULTIHEAD_ATTENTION (``onnx_rules_attention.attend``); past / present not taken.
- **ConvTransposeWithDynamicPads**: ConvTranspose with its pads read from input 2 (a constant
  the CPU holds, as the provider requires).
- **FusedMatMulActivation** (the provider's own fusion of FusedMatMul and an activation): GEMM
  with the activation as its FusedActivation.
- **NhwcConv**: CONVOLUTION of the NHWC input and OHWI filters seen as NCHW / OIHW.
Where the zero point is absent it is 0 of the data's type, as the definitions say.
"""
from __future__ import annotations

import numpy as np
from onnx import helper

from .._api import public as dml
from . import dmlx_functions as F
from .dmlx_functions import FusedActivation
from .dmlx_graph import Reinterpret
from .onnx_lower import Value, fail, packed_strides
from .onnx_rules import ACT_TABLE, X
from .onnx_rules_attention import attend
from .onnx_rules_contrib_nn import RULES as CONTRIB_NN
from .onnx_rules_more import _permuted
from .onnx_rules_nn import _conv, _spatial_pads, _text
from .onnx_rules_quant import _per


def _scalar(L, v, rank, name):
    return _per(L, v, [1] * rank, name)


def _zero(dtype):
    return Value((), np.dtype(dtype), np.zeros((), dtype))


def _matmul_to_float(L, node, a, a_s, az, b, b_s, bz, bias, a_name, b_name):
    if len(b.shape) != 2 or len(a.shape) < 2 or len(a.shape) > 4:
        fail(dml.E_NOTIMPL, f"{L.label(node)}: A {list(a.shape)} and B {list(b.shape)}; lowered "
                            "for a 2-D to 4-D A and a 2-D B")
    if a.dtype != b.dtype:
        fail(dml.E_NOTIMPL, f"{L.label(node)}: A is {a.dtype} and B {b.dtype}; DML's "
                            "MATRIX_MULTIPLY_INTEGER_TO_FLOAT takes A and B of one type")
    m, n = a.shape[-2], b.shape[1]
    lead = [1] * (4 - len(a.shape)) + list(a.shape[:-2])
    ea = L.view(a, lead + list(a.shape[-2:]), name=a_name)
    eb = L.broadcast(b, tuple(lead) + tuple(b.shape))
    col = [1, 1, 1, -1]
    eh = None if bias is None else L.broadcast(bias, tuple(lead) + (m, n))
    y = X["MatrixMultiplyIntegerToFloat"](
        ea, _scalar(L, a_s, 4, "a_scale"), None if az is None else _scalar(L, az, 4, "a_zp"),
        eb, _per(L, b_s, col, "b_scale"), None if bz is None else _per(L, bz, col, "b_zp"), eh)
    return L.new(y, list(a.shape[:-1]) + [n], np.float32)


def _matmul_integer_to_float(L, node, ins, attrs, act):
    ins = list(ins) + [None] * (7 - len(ins))
    a, b, a_s, b_s, az, bz, bias = ins[:7]
    if a_s.dtype != np.float32:
        fail(dml.E_NOTIMPL, f"{L.label(node)}: {a_s.dtype} scales (the DML operator's output "
                            "is FLOAT32)")
    return _matmul_to_float(L, node, a, a_s, az, b, b_s, bz, bias, node.input[0], node.input[1])


def _dynamic_quantize_matmul(L, node, ins, attrs, act):
    ins = list(ins) + [None] * (5 - len(ins))
    a, b, b_s, bz, bias = ins[:5]
    n = int(np.prod(a.shape))
    zero = Value((1, 1), a.dtype, np.zeros((1, 1), a.dtype))
    joined = F.Join([L.view(a, [1, n], name=node.input[0]), L.tensor(zero, "zero")], 1)
    q, scale, zp = X["DynamicQuantizeLinear"](joined)
    qa = L.new(F.Slice(q, [0, 0], [1, n], [1, 1]), a.shape, np.uint8)
    sv = L.new(scale, (), np.float32)
    zv = L.new(zp, (), np.uint8)
    return _matmul_to_float(L, node, qa, sv, zv, b, b_s, bz, bias, "A quantized", node.input[1])


def _qlinear_add(L, node, ins, attrs, act):
    ins = list(ins) + [None] * (8 - len(ins))
    a, a_s, az, b, b_s, bz, c_s, cz = ins[:8]
    shape = tuple(np.broadcast_shapes(a.shape, b.shape))
    r = max(len(shape), 1)
    def full(v):  # a scale or zero point read through zero strides at the output's sizes
        return None if v is None else L.broadcast(v, shape, r)
    y = X["QuantizedLinearAdd"](L.broadcast(a, shape, r), full(a_s), full(az),
                                L.broadcast(b, shape, r), full(b_s), full(bz), full(c_s),
                                full(cz))
    return L.new(y, shape, a.dtype)


def _dequantized(L, v, scale, zp, name):
    r = max(len(v.shape), 1)
    zp = zp if zp is not None else _zero(v.dtype)
    return X["DequantizeLinear"](L.view(v, [int(s) for s in v.shape] or [1], name=name),
                                 L.broadcast(scale, v.shape, r), L.broadcast(zp, v.shape, r))


def _quantized(L, x, shape, scale, zp, dtype):
    r = max(len(shape), 1)
    zp = zp if zp is not None else _zero(dtype)
    return X["QuantizeLinear"](x, L.broadcast(scale, shape, r), L.broadcast(zp, shape, r))


def _qlinear_sigmoid(L, node, ins, attrs, act):
    ins = list(ins) + [None] * (5 - len(ins))
    x, xs, xz, ys, yz = ins[:5]
    f = X["ActivationSigmoid"](_dequantized(L, x, xs, xz, node.input[0]))
    return L.new(_quantized(L, f, x.shape, ys, yz, x.dtype), x.shape, x.dtype)


def _qlinear_concat(L, node, ins, attrs, act):
    ys, yz = ins[0], ins[1]
    groups = [ins[k:k + 3] for k in range(2, len(ins), 3)]
    first = groups[0][0]
    axis = L.axis(int(attrs["axis"]), len(first.shape))
    parts = [_dequantized(L, v, s, z, node.input[2 + 3 * i]) for i, (v, s, z) in
             enumerate(groups)]
    shape = list(first.shape)
    shape[axis] = sum(v.shape[axis] for v, _, _ in groups)
    joined = F.Join(parts, axis)
    return L.new(_quantized(L, joined, shape, ys, yz, yz.dtype), shape, yz.dtype)


def _qlinear_pool(global_):
    def rule(L, node, ins, attrs, act):
        ins = list(ins) + [None] * (5 - len(ins))
        x, xs, xz, ys, yz = ins[:5]
        if len(x.shape) != 4:
            fail(dml.E_NOTIMPL, f"{L.label(node)}: a {len(x.shape)}-D input (lowered for 4-D)")
        last = bool(int(attrs.get("channels_last", 0)))
        n, c, h, w = (x.shape[0], x.shape[3], x.shape[1], x.shape[2]) if last else x.shape
        if last:
            st = packed_strides([n, h, w, c])
            ex = Reinterpret(L.tensor(x), [n, c, h, w], [st[0], st[3], st[1], st[2]])
        else:
            ex = L.tensor(x)
        if global_:
            kernel, strides, start, end = [h, w], [1, 1], [0, 0], [0, 0]
        else:
            if int(attrs.get("ceil_mode", 0)):
                fail(dml.E_NOTIMPL, f"{L.label(node)}: ceil_mode=1")
            kernel = list(attrs["kernel_shape"])
            strides = list(attrs.get("strides", [1, 1]))
            start, end = _spatial_pads(L, node, attrs, [h, w], kernel, strides, [1, 1])
        y = X["QuantizedLinearAveragePooling"](
            ex, _scalar(L, xs, 4, "x_scale"), None if xz is None else _scalar(L, xz, 4, "x_zp"),
            _scalar(L, ys, 4, "y_scale"), None if yz is None else _scalar(L, yz, 4, "y_zp"),
            Strides=strides, WindowSize=kernel, StartPadding=start, EndPadding=end,
            Dilations=[1, 1], IncludePadding=int(attrs.get("count_include_pad", 0)))
        oh, ow = y.GetOutputDesc().sizes[2:]
        if last:
            st = packed_strides([n, oh, ow, c])
            y = X["Identity"](Reinterpret(y, [n, c, oh, ow], None))
            y = X["Identity"](Reinterpret(y, [n, oh, ow, c],
                                          [c * oh * ow, ow, 1, oh * ow]))
            return L.new(y, (n, oh, ow, c), x.dtype)
        return L.new(y, (n, c, oh, ow), x.dtype)
    return rule


def _qattention(L, node, ins, attrs, act):
    ins = list(ins) + [None] * (9 - len(ins))
    x, w, bias, xs, ws, mask, xz, wz, past = ins[:9]
    if past is not None or (len(node.output) > 1 and node.output[1]):
        fail(dml.E_NOTIMPL, f"{L.label(node)}: past / present are not lowered")
    if int(attrs.get("do_rotary", 0)):
        fail(dml.E_NOTIMPL, f"{L.label(node)}: do_rotary")
    b, s, d = x.shape
    total = w.shape[1]
    xv = Value((1, 1, b * s, d), x.dtype, None if x.const is None else
               x.const.reshape(1, 1, b * s, d), x.expr)
    proj = _matmul_to_float(L, node, xv, xs, xz, w, ws, wz, bias, node.input[0], node.input[1])
    return attend(L, node, attrs, x, w, L.view(proj, [1, 1, b * s, total]), mask, None)


def _conv_transpose_dynamic_pads(L, node, ins, attrs, act):
    pads = ins[2] if len(ins) > 2 else None
    attrs = dict(attrs)
    if pads is not None:
        attrs["pads"] = [int(p) for p in L.constant(node.input[2], node, "Pads").ravel()]
    rest = [ins[0], ins[1]] + ([ins[3]] if len(ins) > 3 and ins[3] is not None else [])
    conv = helper.make_node("ConvTranspose", [node.input[0], node.input[1]] + (
        [node.input[3]] if len(rest) > 2 else []), list(node.output), name=node.name)
    return _conv(L, conv, rest, attrs, act, backward=True)


def _nhwc_conv(L, node, ins, attrs, act):
    """NhwcConv: Conv of an [N, H, W, C] input with [M, kH, kW, C / group] filters into
    [N, oH, oW, M], the NCHW operands made by ELEMENT_WISE_IDENTITY transposes (the provider
    describes them with permuted strides instead: the same values)."""
    x, w = ins[0], ins[1]
    if len(x.shape) != 4 or len(w.shape) != 4:
        fail(dml.E_NOTIMPL, f"{L.label(node)}: a {len(x.shape)}-D input (lowered for 4-D)")
    b = ins[2] if len(ins) > 2 and ins[2] is not None else None
    xt, wt = _permuted(L, x, [0, 3, 1, 2]), _permuted(L, w, [0, 3, 1, 2])
    conv = helper.make_node("Conv", list(node.input[:3]), list(node.output), name=node.name)
    y = _conv(L, conv, [xt, wt] + ([b] if b is not None else []), attrs, act)
    return _permuted(L, y, [0, 2, 3, 1])


def _fused_matmul_activation(L, node, ins, attrs, act):
    name = _text(attrs, "activation", "")
    table = {k: v for k, v in ACT_TABLE.items()}
    if name not in table:
        fail(dml.E_NOTIMPL, f"{L.label(node)}: activation '{name}'")
    dml_name, params = table[name]
    given = {"alpha": attrs.get("activation_alpha"), "beta": attrs.get("activation_beta"),
             "gamma": attrs.get("activation_gamma")}
    fields = {field: float(given[key] if given.get(key) is not None else default)
              for key, (field, default) in params.items()}
    inner = {k: v for k, v in attrs.items() if not k.startswith("activation")}
    return CONTRIB_NN["com.microsoft.FusedMatMul"](L, node, ins, inner,
                                                    FusedActivation(dml_name, **fields))


RULES = {f"com.microsoft.{k}": v for k, v in {
    "MatMulIntegerToFloat": _matmul_integer_to_float,
    "DynamicQuantizeMatMul": _dynamic_quantize_matmul, "QLinearAdd": _qlinear_add,
    "QLinearSigmoid": _qlinear_sigmoid, "QLinearConcat": _qlinear_concat,
    "QLinearAveragePool": _qlinear_pool(False), "QLinearGlobalAveragePool": _qlinear_pool(True),
    "QAttention": _qattention, "ConvTransposeWithDynamicPads": _conv_transpose_dynamic_pads,
    "FusedMatMulActivation": _fused_matmul_activation, "NhwcConv": _nhwc_conv}.items()}

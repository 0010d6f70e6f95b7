"""Lowering rules for the activations, bias additions, matrix products, normalizations and
quantization nodes of ONNX Runtime's contrib set (BERT-, Whisper- and Stable-Diffusion-style
models), onto DML operators. Same rule signature as ``onnx_rules``.

- **Gelu**: ACTIVATION_GELU. **BiasGelu**: ELEMENT_WISE_ADD of the bias (zero strides), then
  ACTIVATION_GELU. **QuickGelu**: ``x * sigmoid(alpha * x)`` is ACTIVATION_SWISH with
  SigmoidInputScale = alpha (default 1.702).
- **FastGelu** (the tanh form, ``0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))``, after an
  optional bias): ELEMENT_WISE_MULTIPLY for x^2, ELEMENT_WISE_IDENTITY with a ScaleBias for
  ``0.044715 c x^2 + c``, MULTIPLY by x, ACTIVATION_TANH, IDENTITY with ScaleBias (0.5, 0.5),
  MULTIPLY by x: each step rounds to the tensor's type.
- **BiasAdd** (``X + bias + skip``, [N, S, C] with bias [C]): two ELEMENT_WISE_ADDs.
- **BiasSplitGelu** (``X + bias`` split in halves along the last axis, ``left * gelu(right)``):
  ELEMENT_WISE_ADD, the halves read as strided views of the sum, ACTIVATION_GELU of the right
  one, ELEMENT_WISE_MULTIPLY.
- **FusedMatMul** (``alpha * op(A) x op(B)``): GEMM with TransA / TransB and Alpha, batch
  dimensions through zero strides (up to two). ``transBatchA`` / ``transBatchB`` are not taken.
- **GroupNorm** (NHWC when ``channels_last``, the default; NCHW otherwise): the input read as
  [N, H x W, groups, C / groups] (NCHW: [N, groups, C / groups, H x W]), MEAN_VARIANCE_
  NORMALIZATION1 over the spatial and in-group axes with gamma and beta read through zero
  strides, and ``activation`` 1 (SiLU) as ACTIVATION_SWISH; in FLOAT32 (CASTs around it) when
  gamma and beta are FLOAT32 and the input FLOAT16, as the definition's types allow.
- **EmbedLayerNormalization** (BERT's embeddings): GATHERs of the word, position (0..S-1 from
  a FILL_VALUE_SEQUENCE, or position_ids) and segment embeddings, ELEMENT_WISE_ADDs, then
  MEAN_VARIANCE_NORMALIZATION1 over the hidden axis with gamma and beta; mask_index is the
  REDUCE SUM of the mask (CAST to INT32) over the sequence, and embedding_sum the sum before
  the normalization.
- **com.microsoft.QuantizeLinear / DequantizeLinear**: the ONNX operators' lowering (per tensor
  or per axis, ELEMENT_WISE_(DE)QUANTIZE_LINEAR; 4-bit onto QUANTIZE / DEQUANTIZE).
"""
from __future__ import annotations

import numpy as np

from .._api import public as dml
from . import dmlx_functions as F
from .dmlx_graph import Reinterpret
from .onnx_lower import fail, packed_strides
from .onnx_rules import RULES as ONNX_RULES, X
from .onnx_rules_contrib import cast_to


def _refuse(L, node, what):
    fail(dml.E_NOTIMPL, f"{L.label(node)}: {what} is not lowered")


def _gelu(L, node, ins, attrs, act):
    x = ins[0]
    return L.new(X["ActivationGelu"](L.tensor(x)), x.shape, x.dtype)


def _bias_gelu(L, node, ins, attrs, act):
    x, bias = ins[0], ins[1]
    total = X["Add"](L.tensor(x), L.broadcast(bias, x.shape))
    return L.new(X["ActivationGelu"](total), x.shape, x.dtype)


def _quick_gelu(L, node, ins, attrs, act):
    x = ins[0]
    y = X["ActivationSwish"](L.tensor(x), SigmoidInputScale=float(attrs.get("alpha", 1.702)))
    return L.new(y, x.shape, x.dtype)


def _fast_gelu(L, node, ins, attrs, act):
    x = ins[0]
    e = L.tensor(x)
    if len(ins) > 1 and ins[1] is not None:
        e = X["Add"](e, L.broadcast(ins[1], x.shape))
    c = float(np.sqrt(2.0 / np.pi))
    inner = X["Identity"](X["Multiply"](e, e), dml.DML_SCALE_BIAS(0.044715 * c, c))
    t = X["ActivationTanh"](X["Multiply"](e, inner))
    y = X["Multiply"](e, X["Identity"](t, dml.DML_SCALE_BIAS(0.5, 0.5)))
    return L.new(y, x.shape, x.dtype)


def _bias_add(L, node, ins, attrs, act):
    x, bias, skip = ins[:3]
    total = X["Add"](X["Add"](L.tensor(x), L.broadcast(bias, x.shape)),
                     L.broadcast(skip, x.shape))
    return L.new(total, x.shape, x.dtype)


def _bias_split_gelu(L, node, ins, attrs, act):
    x, bias = ins[0], ins[1]
    if x.shape[-1] % 2:
        fail(dml.E_INVALIDARG, f"{L.label(node)}: the last dimension {x.shape[-1]} is odd")
    total = X["Add"](L.tensor(x), L.broadcast(bias, x.shape))
    half = list(x.shape[:-1]) + [x.shape[-1] // 2]
    strides = packed_strides(x.shape)
    left = Reinterpret(total, half, strides)
    right = X["Identity"](F.Slice(total, [0] * (len(half) - 1) + [half[-1]], half,
                                  [1] * len(half)))
    y = X["Multiply"](X["Identity"](left), X["ActivationGelu"](right))
    return L.new(y, tuple(half), x.dtype)


def _fused_matmul(L, node, ins, attrs, act):
    a, b = ins[0], ins[1]
    if int(attrs.get("transBatchA", 0)) or int(attrs.get("transBatchB", 0)):
        _refuse(L, node, "transBatchA / transBatchB")
    if len(a.shape) < 2 or len(b.shape) < 2:
        _refuse(L, node, "a 1-D operand")
    ta, tb = int(attrs.get("transA", 0)), int(attrs.get("transB", 0))
    batch = tuple(np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    if len(batch) > 2:
        fail(dml.E_NOTIMPL, f"{L.label(node)}: {len(batch)} batch dimensions; DML's GEMM takes "
                            "at most 2")
    lead = (1,) * (2 - len(batch)) + batch
    ea = L.broadcast(a, lead + tuple(a.shape[-2:]))
    eb = L.broadcast(b, lead + tuple(b.shape[-2:]))
    trans = (dml.DML_MATRIX_TRANSFORM_NONE, dml.DML_MATRIX_TRANSFORM_TRANSPOSE)
    y = F.Gemm(ea, eb, None, transA=trans[ta], transB=trans[tb],
               alpha=float(attrs.get("alpha", 1.0)), fusedActivation=act)
    m = a.shape[-1] if ta else a.shape[-2]
    n = b.shape[-2] if tb else b.shape[-1]
    return L.new(y, batch + (m, n), a.dtype)


def _group_norm(L, node, ins, attrs, act):
    x, gamma, beta = ins[:3]
    if len(x.shape) != 4:
        fail(dml.E_INVALIDARG, f"{L.label(node)}: input has shape {list(x.shape)}; 4-D")
    groups = int(attrs["groups"])
    last = int(attrs.get("channels_last", 1))
    n = x.shape[0]
    c = x.shape[3] if last else x.shape[1]
    if c % groups:
        fail(dml.E_INVALIDARG, f"{L.label(node)}: {c} channels in {groups} groups")
    hw = x.shape[1] * x.shape[2] if last else x.shape[2] * x.shape[3]
    cg = c // groups
    if last:
        four, axes, chan = [n, hw, groups, cg], [1, 3], [0, 0, cg, 1]
    else:
        four, axes, chan = [n, groups, cg, hw], [2, 3], [0, cg, 1, 0]
    wide = np.float32 if np.float32 in (np.dtype(x.dtype), gamma.dtype, beta.dtype) else x.dtype
    scale, bias = (cast_to(Reinterpret(L.view(v, [1, 1, 1, c]), four, chan), wide)
                   for v in (gamma, beta))
    y = F.MeanVarianceNormalization(cast_to(L.view(x, four), wide), scale, bias, axes, True, True,
                                    float(attrs.get("epsilon", 1e-5)))
    if int(attrs.get("activation", 0)) == 1:
        y = X["ActivationSwish"](y, SigmoidInputScale=1.0)
    elif int(attrs.get("activation", 0)):
        _refuse(L, node, f"activation {attrs['activation']}")
    return L.new(cast_to(y, x.dtype), x.shape, x.dtype)


def _embed_layer_norm(L, node, ins, attrs, act):
    ins = list(ins) + [None] * 9
    ids, seg, word, pos, segemb, gamma, beta, mask, pos_ids = ins[:9]
    b, s = ids.shape
    h = word.shape[1]
    g = L.graph

    def rows(table, index_expr):  # GATHER [B, S] rows of a [V, H] table -> [1, B, S, H]
        return X["Gather"](L.view(table, [1, 1, table.shape[0], h]), index_expr, Axis=2,
                           IndexDimensions=2)

    total = rows(word, L.view(ids, [1, 1, b, s]))
    if pos_ids is not None:
        where = L.view(pos_ids, [1, 1, b, s], [0, 0, 0, 1] if pos_ids.shape[0] == 1 else None)
    else:
        seq = F.FillValueSequence(g, [1, 1, 1, s], dml.DML_TENSOR_DATA_TYPE_INT32, 0, 1)
        where = Reinterpret(seq, [1, 1, b, s], [0, 0, 0, 1])
    total = X["Add"](total, rows(pos, where))
    if seg is not None and segemb is not None:
        total = X["Add"](total, rows(segemb, L.view(seg, [1, 1, b, s])))
    y = F.MeanVarianceNormalization(total, L.broadcast(gamma, (1, b, s, h)),
                                    L.broadcast(beta, (1, b, s, h)), [3], True, True,
                                    float(attrs.get("epsilon", 1e-12)))
    out = [L.new(y, (b, s, h), word.dtype)]
    if len(node.output) > 1 and node.output[1]:
        if mask is None:
            _refuse(L, node, "mask_index without a mask input")
        counted = F.Reduce(F.Cast(L.view(mask, [1, 1, b, s]), dml.DML_TENSOR_DATA_TYPE_INT32),
                           dml.DML_REDUCE_FUNCTION_SUM, [3])
        out.append(L.new(counted, (b,), np.int32))
    elif len(node.output) > 1:
        out.append(None)
    if len(node.output) > 2 and node.output[2]:
        out.append(L.new(X["Identity"](total), (b, s, h), word.dtype))
    return out


RULES = {"com.microsoft.Gelu": _gelu, "com.microsoft.EmbedLayerNormalization": _embed_layer_norm, "com.microsoft.BiasGelu": _bias_gelu,
         "com.microsoft.QuickGelu": _quick_gelu, "com.microsoft.FastGelu": _fast_gelu, "com.microsoft.BiasAdd": _bias_add,
         "com.microsoft.BiasSplitGelu": _bias_split_gelu,
         "com.microsoft.FusedMatMul": _fused_matmul, "com.microsoft.GroupNorm": _group_norm,
         "com.microsoft.QuantizeLinear": ONNX_RULES["QuantizeLinear"],
         "com.microsoft.DequantizeLinear": ONNX_RULES["DequantizeLinear"]}

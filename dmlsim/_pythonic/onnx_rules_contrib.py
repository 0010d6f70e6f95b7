"""Lowering rules for the operators of ONNX Runtime's contrib set that language models built
for DirectML are made of (onnxruntime-genai's builder, ``-e dml``), onto DML operators as ONNX
Runtime's DirectML provider builds them (its ``DmlOperator*.cpp``; described here in dmlsim's
words). Same rule signature as ``onnx_rules``.

- **SimplifiedLayerNormalization** (ONNX domain, version 1, as the provider registers it; RMS
  normalization): MEAN_VARIANCE_NORMALIZATION2 with UseMean false over the axes from ``axis``;
  a FLOAT16 input with a FLOAT32 scale (or the reverse) is CAST to FLOAT32 first, and the result
  CAST to the scale's type, the output's. The inv_std_var output is not produced (the provider
  takes the node only with one output).
- **com.microsoft.SkipLayerNormalization / SkipSimplifiedLayerNormalization**: ELEMENT_WISE_ADD
  of input and skip (and of the bias, read through zero strides), then
  MEAN_VARIANCE_NORMALIZATION1 (MVN2 without the mean for the simplified form) over the last
  axis with gamma (and beta); output 3, input_skip_bias_sum, is the sum. The mean and
  inv_std_var outputs are not produced (the provider rejects the node when they are asked for).
- **com.microsoft.RotaryEmbedding**: the input [B, S, hidden] read as [B, S, heads, 2, H/2]
  (interleaved: [B, S, heads, H/2, 2]), SPLIT into its halves and JOINed swapped, multiplied by
  a FILL_VALUE_SEQUENCE sign pair {-1, 1}; cos and sin rows GATHERed by position_ids ([B, S], or
  a one-element offset added to a FILL_VALUE_SEQUENCE 0..S-1) and read through zero strides;
  ``x * cos + rotated * sin``. Head size is twice the cache's last dimension; a 4-D input, a
  ``rotary_embedding_dim`` other than the head size and a ``scale`` other than 1 are not taken
  (the provider's kernel assumes neither).
- **com.microsoft.GroupQueryAttention**: MULTIHEAD_ATTENTION1 with QueryHeadCount = num_heads
  and KeyValueHeadCount = kv_num_heads, MaskFilterValue -10000; FLOAT16 query, key and value
  are CAST to FLOAT32 and the outputs back (the provider does so: attention overflows in half
  precision). The provider hands MULTIHEAD_ATTENTION1 the past length of each batch as its
  PastSequenceLengthsTensor, whose page says "TBD", and aliases past and present (one buffer
  under ``past_present_share_buffer``). dmlsim writes what that computes with operators whose
  pages say what they do, all on the device, so a decode step's plan does not depend on the
  lengths: present has ``max(past buffer, total_sequence_length)`` positions; in a one-token
  step the new key and value land at position seqlens_k of each batch (an ELEMENT_WISE_IF of
  an EQUALS of a FILL_VALUE_SEQUENCE against seqlens_k), the rest keeps the past buffer's
  bytes (zeros past a growing cache's end), and key j is attended iff j <= seqlens_k (an IF of
  LESS_THAN_OR_EQUAL as RelativePositionBias, 0 or -inf); a multi-token step is a first
  prompt, as the provider takes it (its past length is 0, whatever seqlens_k says): the new
  positions from 0, causal, the rest of a shared buffer after them. The attention reads all
  present positions as Key and Value ([B, positions, kv heads x size], an IDENTITY transpose).
  ONNX Runtime's CPU kernel writes zeros into present past each batch's length; dmlsim keeps
  the buffer's bytes there, as the provider's aliased buffer does. Not taken (named): causal 0
  (the provider's own limit), a multi-token step after a past context in a growing cache,
  packed QKV, ``do_rotary``, ``softcap``, ``local_window_size``, ``smooth_softmax``, and the
  attention_bias, head_sink, position_ids and norm-weight inputs.
- **com.microsoft.MatMulNBits** (4- and 8-bit blocks): DEQUANTIZE of B read as UINT4 / UINT8
  [N, K] with its scales (and zero points) [N, K / block_size], then GEMM of A with it
  transposed, batch dimensions through zero strides. Where the node has no zero points the
  provider asks for DEQUANTIZE's SCALE form, whose rule the page leaves "TBD"; the contrib
  definition's default zero point is 2^(bits - 1), so dmlsim passes that value as an explicit
  constant zero point (SCALE_ZERO_POINT), which computes the definition. Not taken (named):
  g_idx, bias, floating-point zero points, and K not a multiple of block_size (the
  provider's own limit: DML's blocks must tile the axis).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from .._api import public as dml
from . import dmlx_functions as F
from .dmlx_graph import Reinterpret
from .dmlx_ops import make_node
from .onnx_lower import Value, dml_type, fail, given, packed_strides
from .onnx_rules import X

F32 = dml.DML_TENSOR_DATA_TYPE_FLOAT32


def _refuse(L, node, what):
    fail(dml.E_NOTIMPL, f"{L.label(node)}: {what} is not lowered (the DML provider's kernel "
                        "does not take it)")


def cast_to(expr, dtype):
    """``expr`` CAST to the DML type of numpy ``dtype`` (itself when it has that type)."""
    want = dml_type(dtype)
    return expr if expr.GetOutputDesc().dataType == want else F.Cast(expr, want)


# ---- the LayerNorm family ---------------------------------------------------------------------

def _normalize(L, x_expr, shape, dtype, scale, bias, axes, eps, use_mean):
    """MVN (1, or 2 without the mean) of ``x_expr`` [``shape``] with ``scale`` (and ``bias``)
    broadcast; computes in the wider of the input's and the scale's types, returns the scale's."""
    compute = np.float32 if np.float32 in (np.dtype(dtype), scale.dtype) else dtype
    es = cast_to(L.broadcast(scale, shape), compute)
    eb = None if bias is None else cast_to(L.broadcast(bias, shape), compute)
    y = F.MeanVarianceNormalization(cast_to(x_expr, compute), es, eb, axes, True, use_mean, eps)
    return cast_to(y, scale.dtype)


def _simplified_layernorm(L, node, ins, attrs, act):
    x, scale = ins[0], ins[1]
    if len(node.output) > 1 and any(node.output[1:]):
        _refuse(L, node, "the inv_std_var output")
    rank = len(x.shape)
    axis = L.axis(attrs.get("axis", -1), rank)
    y = _normalize(L, L.tensor(x), x.shape, x.dtype, scale, None, list(range(axis, rank)),
                   float(attrs.get("epsilon", 1e-5)), False)
    return L.new(y, x.shape, scale.dtype)


def _skip_layernorm(simplified):
    def rule(L, node, ins, attrs, act):
        ins = list(ins) + [None] * 5
        x, skip, gamma = ins[0], ins[1], ins[2]
        beta, bias = (None, ins[3]) if simplified else (ins[3], ins[4])
        if len(x.shape) not in (2, 3):
            fail(dml.E_INVALIDARG, f"{L.label(node)}: input has shape {list(x.shape)}; "
                                   "[batch, hidden] or [batch, sequence, hidden]")
        if any(k < len(node.output) and node.output[k] for k in (1, 2)):
            _refuse(L, node, "the mean / inv_std_var output")
        total = X["Add"](L.tensor(x), L.broadcast(skip, x.shape))
        if bias is not None:
            total = X["Add"](total, L.broadcast(bias, x.shape))
        y = _normalize(L, total, x.shape, x.dtype, gamma, beta, [len(x.shape) - 1],
                       float(attrs.get("epsilon", 1e-12)), not simplified)
        out = [L.new(y, x.shape, x.dtype), None, None]
        if len(node.output) > 3 and node.output[3]:
            out.append(L.new(X["Identity"](total), x.shape, x.dtype))
        return out[:len(node.output)]
    return rule


# ---- RotaryEmbedding --------------------------------------------------------------------------

def _rotary(L, node, ins, attrs, act):
    x, pos, cos, sin = ins
    if len(x.shape) != 3:
        _refuse(L, node, f"a {len(x.shape)}-D input (the provider takes [B, S, hidden])")
    if float(attrs.get("scale", 1.0)) != 1.0:
        _refuse(L, node, "scale other than 1")
    b, s, hidden = x.shape
    half = cos.shape[-1]
    hs = 2 * half
    if int(attrs.get("rotary_embedding_dim", 0)) not in (0, hs):
        _refuse(L, node, "rotary_embedding_dim other than the head size (partial rotation)")
    if hidden % hs:
        fail(dml.E_INVALIDARG, f"{L.label(node)}: hidden size {hidden} is not a multiple of "
                               f"the head size {hs} (twice cos_cache's last dimension)")
    if tuple(cos.shape) != tuple(sin.shape):
        fail(dml.E_INVALIDARG, f"{L.label(node)}: cos_cache {list(cos.shape)} and sin_cache "
                               f"{list(sin.shape)} differ")
    n, maxpos = hidden // hs, cos.shape[0]
    if s > maxpos:
        _refuse(L, node, "a sequence longer than the cos/sin caches")
    inter = bool(int(attrs.get("interleaved", 0)))
    five = [b, s, n, half, 2] if inter else [b, s, n, 2, half]
    pair = 4 if inter else 3
    ex = L.view(x, five)
    halves = F.Split(ex, pair, [1, 1])
    rotated = F.Join([halves[1], halves[0]], pair)
    graph = ex.graph
    sign = F.FillValueSequence(graph, [2], dml_type(x.dtype), -1.0, 2.0)
    sign_strides = [0, 0, 0, 0, 1] if inter else [0, 0, 0, 1, 0]
    rotated = X["Multiply"](rotated, Reinterpret(sign, five, sign_strides))
    if len(pos.shape) == 1 and pos.shape[0] == 1:   # an offset: offset + 0..S-1 per batch
        seq = F.FillValueSequence(graph, [1, 1, 1, s], dml_type(pos.dtype), 0, 1)
        idx = X["Add"](Reinterpret(seq, [1, 1, b, s], [0, 0, 0, 1]),
                       L.view(pos, [1, 1, b, s], [0, 0, 0, 0]))
    elif tuple(pos.shape) == (b, s):
        idx = L.view(pos, [1, 1, b, s])
    else:
        fail(dml.E_INVALIDARG, f"{L.label(node)}: position_ids has shape {list(pos.shape)}; "
                               f"[{b}, {s}] or [1] (an offset)")
    trig = []
    for cache in (cos, sin):
        g = X["Gather"](L.view(cache, [1, 1, maxpos, half]), idx, Axis=2, IndexDimensions=2)
        st = packed_strides([b, s, half])
        strides = [st[0], st[1], 0, 1, 0] if inter else [st[0], st[1], 0, 0, 1]
        trig.append(Reinterpret(g, five, strides))
    y = X["Add"](X["Multiply"](ex, trig[0]), X["Multiply"](rotated, trig[1]))
    return L.new(y, x.shape, x.dtype)


# ---- GroupQueryAttention ----------------------------------------------------------------------

_GQA_REFUSED = {7: "cos_cache (do_rotary)", 8: "sin_cache (do_rotary)", 9: "position_ids",
                10: "attention_bias", 11: "head_sink", 14: "q_norm_weight",
                15: "k_norm_weight"}


def _gqa(L, node, ins, attrs, act):
    ins = list(ins) + [None] * (16 - len(ins))
    if int(attrs.get("causal", 1)) != 1:
        _refuse(L, node, "causal 0")
    for k, what in _GQA_REFUSED.items():
        if given(node, k):
            _refuse(L, node, f"input {k} ({what})")
    for name, default in (("do_rotary", 0), ("softcap", 0.0), ("local_window_size", -1),
                          ("smooth_softmax", 0)):
        if attrs.get(name, default) != default:
            _refuse(L, node, f"{name} {attrs[name]}")
    q, k, v, pk, pv, seqlens = ins[:6]
    if k is None or v is None:
        _refuse(L, node, "packed QKV (no key and value inputs)")
    n, kvn = int(attrs["num_heads"]), int(attrs["kv_num_heads"])
    b, s = q.shape[:2]
    hs = q.shape[2] // n
    buf = 0 if pk is None else pk.shape[2]
    total = int(L.constant(node.input[6], node, "total_sequence_length").reshape(-1)[0])
    m = max(buf, total, s)   # present's positions
    if s > 1 and 0 < buf < total:
        _refuse(L, node, "a multi-token step after a past context in a growing cache (the "
                         "provider takes every multi-token step as a first prompt)")
    wide = np.dtype(np.float32) if q.dtype == np.float16 else q.dtype
    g = L.graph
    positions = [int(x) for x in (b, kvn, m, hs)]

    def heads(e, length):  # [B, L, kvn x hs] -> packed [B, kvn, L, hs]
        return X["Identity"](Reinterpret(e, [b, kvn, length, hs],
                                         [length * kvn * hs, hs, kvn * hs, 1]))

    def const(value, shape):
        return L.broadcast(Value((), wide, np.array(value, wide)), shape)

    def sequence(sizes, strides):  # 0, 1, ... m - 1 along the axis whose stride is 1
        seq = F.FillValueSequence(g, [1, 1, 1, m], dml.DML_TENSOR_DATA_TYPE_INT32, 0, 1)
        return Reinterpret(seq, sizes, strides)

    presents = []
    for new, past in ((k, pk), (v, pv)):
        fresh = heads(cast_to(L.tensor(new), wide), s)
        if s > 1:   # a first prompt: the new positions from 0, then the rest of the buffer
            rest = [] if m == s else [cast_to(F.Slice(L.tensor(past), [0, 0, s, 0],
                                                  [b, kvn, m - s, hs], [1, 1, 1, 1]), wide)]
            presents.append(F.Join([fresh] + rest, 2) if rest else fresh)
            continue
        old = [] if buf == 0 else [cast_to(L.tensor(past), wide)]
        if buf < m:
            old.append(const(0.0, (b, kvn, m - buf, hs)))
        old = F.Join(old, 2) if len(old) > 1 else old[0]
        here = X["Equals"](sequence(positions, [0, 0, 1, 0]),
                           L.view(seqlens, positions, [1, 0, 0, 0]))
        spread = Reinterpret(fresh, positions, [kvn * hs, hs, 0, 1])
        presents.append(X["If"](here, spread, old))
    if s > 1:   # causal over the first s positions
        allowed = np.arange(m)[None, :] <= np.arange(s)[:, None]
        bias = L.broadcast(Value((s, m), wide, np.where(allowed, 0, -np.inf).astype(wide)),
                           (b, n, s, m))
    else:       # key j attends iff j <= seqlens_k
        ok = X["LessThanOrEqual"](sequence([b, 1, 1, m], [0, 0, 0, 1]),
                                  L.view(seqlens, [b, 1, 1, m], [1, 0, 0, 0]))
        bias = X["If"](ok, const(0.0, (b, 1, 1, m)), const(-np.inf, (b, 1, 1, m)))
        bias = Reinterpret(bias, [b, n, 1, m], [m, 0, m, 1])
    kv3 = [Reinterpret(X["Identity"](Reinterpret(p, [b, m, kvn, hs],
                                                 [kvn * m * hs, hs, m * hs, 1])),
                       [b, m, kvn * hs], None) for p in presents]
    tensors = {"QueryTensor": cast_to(L.tensor(q), wide), "KeyTensor": kv3[0],
               "ValueTensor": kv3[1],
               "RelativePositionBiasTensor": bias}
    fields = {"Scale": float(attrs.get("scale", 1.0 / np.sqrt(hs))), "MaskFilterValue": -10000.0,
              "QueryHeadCount": n, "KeyValueHeadCount": kvn,
              "MaskType": dml.DML_MULTIHEAD_ATTENTION_MASK_TYPE_NONE}
    y = make_node(node.op_type, "MULTIHEAD_ATTENTION1", tensors, fields, graph=g)[0]
    out = [L.new(cast_to(y, q.dtype), (b, s, n * hs), q.dtype)]
    out += [L.new(cast_to(p, q.dtype), tuple(positions), q.dtype) for p in presents]
    return out[:len(node.output)]


# ---- MatMulNBits ------------------------------------------------------------------------------

def _unpack(data, bits, rows, cols):
    """ORT's packed B or zero points (uint8 bytes, row by row, low nibble first) as a
    [rows, cols] UINT4 / UINT8 array."""
    u8 = np.ascontiguousarray(data, np.uint8).reshape(rows, -1)
    if bits == 8:
        return u8[:, :cols].copy()
    nib = np.stack([u8 & 15, u8 >> 4], axis=-1).reshape(rows, -1)[:, :cols]
    return nib.astype(ml_dtypes.uint4)


def _matmul_nbits(L, node, ins, attrs, act):
    ins = list(ins) + [None] * 6
    a, scales, zp = ins[0], ins[2], ins[3]
    for k, what in ((4, "g_idx"), (5, "bias")):
        if given(node, k):
            _refuse(L, node, f"the {what} input")
    n, k, bits, block = (int(attrs[x]) for x in ("N", "K", "bits", "block_size"))
    if bits not in (4, 8):
        _refuse(L, node, f"bits {bits}")
    if block <= 0 or k % block:
        _refuse(L, node, f"K {k} not a multiple of block_size {block}")
    if a.shape[-1] != k:
        fail(dml.E_INVALIDARG, f"{L.label(node)}: A's last dimension is {a.shape[-1]}, K {k}")
    blocks = k // block
    q = _unpack(L.constant(node.input[1], node, "B, the quantized weights"), bits, n, k)
    if zp is None:
        zero = np.full((n, blocks), 1 << (bits - 1), np.uint8)
        zero = zero.astype(ml_dtypes.uint4) if bits == 4 else zero
    elif zp.dtype != np.uint8:
        _refuse(L, node, f"{zp.dtype.name} zero points")
    else:
        zero = _unpack(L.constant(node.input[3], node, "zero_points"), bits, n, blocks)
    quad = lambda x: (1, 1) + tuple(x)  # noqa: E731 -- DEQUANTIZE's 4-D sizes
    qv = Value(quad(q.shape), q.dtype, q.reshape(quad(q.shape)))
    zv = Value(quad(zero.shape), zero.dtype, zero.reshape(quad(zero.shape)))
    w = X["Dequantize"](L.tensor(qv, node.input[1]),
                        [L.view(scales, list(quad((n, blocks)))), L.tensor(zv)],
                        QuantizationType=2, outputDataType=dml_type(a.dtype))
    if len(a.shape) > 4:
        fail(dml.E_NOTIMPL, f"{L.label(node)}: {len(a.shape) - 2} batch dimensions; DML's GEMM "
                            "takes at most 2")
    lead = (1,) * (4 - len(a.shape)) + tuple(a.shape[:-2])
    ea = L.view(a, list(lead + tuple(a.shape[-2:])))
    eb = Reinterpret(w, list(lead[:2]) + [n, k], [0, 0, k, 1])
    y = F.Gemm(ea, eb, None, transB=dml.DML_MATRIX_TRANSFORM_TRANSPOSE, fusedActivation=act)
    return L.new(y, tuple(a.shape[:-1]) + (n,), a.dtype)


RULES = {"SimplifiedLayerNormalization": _simplified_layernorm,
         "com.microsoft.MatMulNBits": _matmul_nbits,
         "com.microsoft.SkipLayerNormalization": _skip_layernorm(False),
         "com.microsoft.SkipSimplifiedLayerNormalization": _skip_layernorm(True),
         "com.microsoft.RotaryEmbedding": _rotary,
         "com.microsoft.GroupQueryAttention": _gqa}

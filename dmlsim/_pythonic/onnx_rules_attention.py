"""ONNX's Attention onto DML_OPERATOR_MULTIHEAD_ATTENTION (MULTIHEAD_ATTENTION1, FL 6_3, when
key/value heads are fewer: grouped-query attention), where the DML operator matches; every
other Attention node is lowered through ONNX's function body for it (``onnx_functions``), to
GEMMs, a softmax and the element-wise operators around them.

The DML operator matches when the node asks for no ``qk_matmul_output``, no ``softcap``, no
sliding window, no ``nonpad_kv_seqlen``, a float32 softmax (``softmax_precision`` absent or
FLOAT: DML computes in float32) and no ``attn_mask``. A mask is left to the function body
because ONNX (opset 24+, and its reference for every version) makes a fully masked query row
a row of zeros, where MULTIHEAD_ATTENTION adds MaskFilterValue and gets the mean of the values
(a finite filter) or NaN (-inf). ``is_causal`` (bottom-right aligned: query i attends key j
iff j <= i + past length) never masks a whole row and becomes a constant
RelativePositionBias of 0 and -inf, read through zero strides over batch and heads.

Layouts: 3-D Q, K, V ([B, S, heads x size], ``q_num_heads`` / ``kv_num_heads``) are DML's
Query, Key and Value as they are, and Y [B, S, Hq x vhs] is DML's Output; 4-D ones ([B,
heads, S, size]) are first transposed by an ELEMENT_WISE_IDENTITY to [B, S, heads, size] (as
the DML provider does for its Attention), and the output back. past_key / past_value [B, Hkv,
P, size] and present_key / present_value [B, Hkv, P + L, size] are DML's tensors as they are.
Scale: ``scale``, else 1 / sqrt(head size) (ONNX scales Q and K by its square root each:
the same product up to rounding)."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from . import dmlx_functions as F
from .dmlx_graph import Reinterpret
from .dmlx_ops import make_node
from .._api import public as dml
from .onnx_lower import Value, fail, given, packed_strides
from .onnx_rules import X

PRESENT = ("OutputPresentKeyTensor", "OutputPresentValueTensor")
NO_MASK = dml.DML_MULTIHEAD_ATTENTION_MASK_TYPE_NONE


def takes(node, types) -> bool:
    """Whether MULTIHEAD_ATTENTION computes ``node`` as ONNX defines it (module docstring)."""
    a = {x.name: helper.get_attribute_value(x) for x in node.attribute}
    if len(node.output) > 3 and node.output[3]:
        return False
    if float(a.get("softcap", 0.0)) != 0.0 or int(a.get("left_window_size", -1)) != -1 or \
            int(a.get("right_window_size", -1)) != -1:
        return False
    if int(a.get("softmax_precision", TensorProto.FLOAT)) != TensorProto.FLOAT:
        return False
    return not given(node, 3) and not given(node, 6)


def _to_heads_last(L, v, name):
    """A 4-D [B, H, N, size] value as DML's packed [B, N, H x size] (an IDENTITY)."""
    b, h, n, s = v.shape
    st = packed_strides([b, h, n, s])
    moved = X["Identity"](L.view(v, [b, n, h, s], [st[0], st[2], st[1], st[3]], name=name))
    return Reinterpret(moved, [b, n, h * s], None)


def _causal(L, dtype, b, h, s, p, t):
    """The causal RelativePositionBias [B, H, S, P + T]: 0 where key j <= query i + P, else
    -inf, a constant [S, P + T] read through zero strides."""
    allowed = np.arange(p + t)[None, :] <= np.arange(s)[:, None] + p
    mask = Value((s, p + t), dtype, np.where(allowed, 0, -np.inf).astype(dtype))
    return L.broadcast(mask, (b, h, s, p + t))


def _attention(L, node, ins, attrs, act):
    q, k, v = ins[:3]
    past_k = ins[4] if len(ins) > 4 else None
    past_v = ins[5] if len(ins) > 5 else None
    four = len(q.shape) == 4
    if four:
        b, hq, s, hs = q.shape
        hkv, t, vhs = k.shape[1], k.shape[2], v.shape[3]
        eq, ek, ev = (_to_heads_last(L, x, n) for x, n in zip((q, k, v), node.input))
    else:
        b, s = q.shape[:2]
        t = k.shape[1]
        hq, hkv = int(attrs["q_num_heads"]), int(attrs["kv_num_heads"])
        hs, vhs = q.shape[2] // hq, v.shape[2] // hkv
        eq, ek, ev = (L.tensor(x, n) for x, n in zip((q, k, v), node.input))
    p = 0 if past_k is None else past_k.shape[2]
    scale = float(attrs["scale"]) if "scale" in attrs else 1.0 / np.sqrt(hs)
    bias = _causal(L, q.dtype, b, hq, s, p, t) if int(attrs.get("is_causal", 0)) else None
    tensors = {"QueryTensor": eq, "KeyTensor": ek, "ValueTensor": ev,
               "RelativePositionBiasTensor": bias,
               "PastKeyTensor": None if past_k is None else L.tensor(past_k, node.input[4]),
               "PastValueTensor": None if past_v is None else L.tensor(past_v, node.input[5])}
    fields = {"Scale": scale, "MaskFilterValue": -10000.0, "MaskType": NO_MASK}
    if hq == hkv:
        op, fields["HeadCount"] = "MULTIHEAD_ATTENTION", hq
    else:
        op = "MULTIHEAD_ATTENTION1"
        fields.update(QueryHeadCount=hq, KeyValueHeadCount=hkv)
    y, present = _multihead(L, node, op, tensors, fields, q.dtype, (b, hkv, p + t, hs, vhs))
    if four:
        st = packed_strides([b, s, hq, vhs])
        y = X["Identity"](Reinterpret(y, [b, hq, s, vhs], [st[0], st[2], st[1], st[3]]))
        out = L.new(y, (b, hq, s, vhs), q.dtype)
    else:
        out = L.new(y, (b, s, hq * vhs), q.dtype)
    return ([out] + present)[:len(node.output)]


def _multihead(L, node, op, tensors, fields, dtype, kv):
    """The MULTIHEAD_ATTENTION(1) node: (its Output, [present key, present value] Values when
    the ONNX node asks for either); ``kv`` = (B, key/value heads, P + L, size, value size)."""
    want = PRESENT if any(o for o in node.output[1:3]) else ()
    y, pk, pv = make_node(node.op_type, op, tensors, fields, graph=L.graph, want=want)
    if not want:
        return y, []
    b, h, n, hs, vhs = kv
    return y, [L.new(pk, (b, h, n, hs), dtype), L.new(pv, (b, h, n, vhs), dtype)]


_attention.takes = takes


def _mha(L, node, ins, attrs, act):
    """com.microsoft.MultiHeadAttention (ONNX Runtime's contrib operator, which the DML
    provider maps onto MULTIHEAD_ATTENTION): query [B, S, D] or packed QKV [B, S, N, 3, H]
    (StackedQueryKeyValue); key/value [B, L, D], [B, N, L, H] (transposed by an IDENTITY) or
    packed KV [B, L, N, 2, H] (StackedKeyValue); bias [D + D + D_v]; key_padding_mask (INT32)
    [B] key lengths (KEY_SEQUENCE_LENGTH), [2B] ends and starts (KEY_SEQUENCE_END_START),
    [B, T] or [B, S, T] (BOOLEAN); attention_bias [B or 1, N or 1, S, T]
    (RelativePositionBias, zero strides); past/present key and value [B, N, P(+L), H] (a
    past of length 0 is bound as none, and the present is then the key and value);
    ``unidirectional`` as the causal bias, added to attention_bias when both are given."""
    ins = list(ins) + [None] * (10 - len(ins))
    q, k, v, qkv_bias, mask, abias, pk, pv = ins[:8]
    if ins[8] is not None or ins[9] is not None:
        fail(dml.E_NOTIMPL, f"{L.label(node)}: past_sequence_length and cache_indirection "
                            "(DecoderMaskedMultiHeadAttention's inputs) are not lowered")
    if pk is not None and pv is not None and pk.shape[2] == 0 == pv.shape[2]:
        pk = pv = None  # the first step of a growing cache: no past (DML has no empty tensors)
    n = int(attrs["num_heads"])
    b, s = q.shape[:2]
    t = {}
    if len(q.shape) == 5:
        t["StackedQueryKeyValueTensor"] = L.tensor(q, node.input[0])
        length, hs, vhs = s, q.shape[4], q.shape[4]
    else:
        t["QueryTensor"] = L.tensor(q, node.input[0])
        hs = q.shape[2] // n
        if len(k.shape) == 5:
            t["StackedKeyValueTensor"] = L.tensor(k, node.input[1])
            length, vhs = k.shape[1], k.shape[4]
        elif len(k.shape) == 4:
            if qkv_bias is not None:
                fail(dml.E_NOTIMPL, f"{L.label(node)}: bias with [B, N, L, H] key and value")
            t["KeyTensor"], t["ValueTensor"] = (_to_heads_last(L, x, nm) for x, nm in
                                                zip((k, v), node.input[1:3]))
            length, vhs = k.shape[2], v.shape[3]
        else:
            t["KeyTensor"], t["ValueTensor"] = L.tensor(k, node.input[1]), L.tensor(v)
            length, vhs = k.shape[1], v.shape[2] // n
    p = 0 if pk is None else pk.shape[2]
    total = p + length
    fields = {"Scale": float(attrs.get("scale", 1.0 / np.sqrt(hs))), "HeadCount": n,
              "MaskFilterValue": float(attrs.get("mask_filter_value", -10000.0)),
              "MaskType": NO_MASK}
    if qkv_bias is not None:
        t["BiasTensor"] = L.tensor(qkv_bias, node.input[3])
    if mask is not None:
        fields["MaskType"], t["MaskTensor"] = _padding_mask(L, node, mask, b, s, total)
    rel = None if abias is None else L.broadcast(abias, (b, n, s, total))
    if int(attrs.get("unidirectional", 0)):
        causal = _causal(L, q.dtype, b, n, s, p, length)
        rel = causal if rel is None else X["Add"](rel, causal)
    t["RelativePositionBiasTensor"] = rel
    if pk is not None:
        t["PastKeyTensor"], t["PastValueTensor"] = L.tensor(pk), L.tensor(pv)
    y, present = _multihead(L, node, "MULTIHEAD_ATTENTION", t, fields, q.dtype,
                            (b, n, total, hs, vhs))
    return ([L.new(y, (b, s, n * vhs), q.dtype)] + present)[:len(node.output)]


def _padding_mask(L, node, mask, b, s, total):
    """(MaskType, MaskTensor) for key_padding_mask (module docstring of ``_mha``)."""
    shape = tuple(mask.shape)
    if shape == (b,):
        return dml.DML_MULTIHEAD_ATTENTION_MASK_TYPE_KEY_SEQUENCE_LENGTH, L.view(mask, [1, b])
    if shape == (2 * b,):
        return dml.DML_MULTIHEAD_ATTENTION_MASK_TYPE_KEY_SEQUENCE_END_START, L.view(mask, [2, b])
    if shape in ((b, total), (b, s, total)):
        return dml.DML_MULTIHEAD_ATTENTION_MASK_TYPE_BOOLEAN, \
            L.view(mask, [b, 1, 1 if len(shape) == 2 else s, total])
    fail(dml.E_NOTIMPL, f"{L.label(node)}: key_padding_mask of shape {list(shape)} (DML's "
                        "KEY_QUERY_SEQUENCE_LENGTH_START_END layout is garbled on its page)")


def _contrib_attention(L, node, ins, attrs, act):
    """com.microsoft.Attention (BERT- and Whisper-encoder-style self-attention with its input
    projection): one GEMM of the input [B, S, D] with the weights [D, Dq + Dk + Dv] and the bias
    (zero strides) as C, SLICEd into query, key and value, then MULTIHEAD_ATTENTION with
    mask_index as ``_padding_mask`` reads it ([B] lengths, [2B] ends and starts, [B, T] or
    [B, S, T] 0/1), attention_bias as RelativePositionBias and ``unidirectional`` as the causal
    bias. Not taken: past / present, past_sequence_length, do_rotary, a 4-D mask."""
    ins = list(ins) + [None] * (8 - len(ins))
    x, w, bias, mask, past, abias = ins[:6]
    for k, what in ((4, "past"), (6, "past_sequence_length"), (7, "cache_indirection")):
        if given(node, k):
            fail(dml.E_NOTIMPL, f"{L.label(node)}: the {what} input is not lowered")
    total = sum(_hidden(attrs, w))
    rows = x.shape[0] * x.shape[1]
    c = None if bias is None else L.broadcast(bias, (1, 1, rows, total))
    proj = X["Gemm"](L.view(x, [1, 1, rows, x.shape[2]]), L.view(w, [1, 1, x.shape[2], total]),
                     c)
    return attend(L, node, attrs, x, w, proj, mask, abias)


def _hidden(attrs, w):
    return [int(v) for v in attrs.get("qkv_hidden_sizes") or [w.shape[1] // 3] * 3]


def attend(L, node, attrs, x, w, proj, mask, abias):
    """com.microsoft.Attention after its input projection ``proj`` ([1, 1, B x S, Dq + Dk +
    Dv], FLOAT): what Attention and QAttention share."""
    if int(attrs.get("do_rotary", 0)) or int(attrs.get("past_present_share_buffer", 0)):
        fail(dml.E_NOTIMPL, f"{L.label(node)}: do_rotary / past_present_share_buffer")
    if len(node.output) > 1 and node.output[1]:
        fail(dml.E_NOTIMPL, f"{L.label(node)}: the present output is not lowered")
    n = int(attrs["num_heads"])
    b, s, d = x.shape
    hq, hk, hv = _hidden(attrs, w)
    rows = b * s
    parts = []
    for start, width in ((0, hq), (hq, hk), (hq + hk, hv)):
        part = F.Slice(proj, [0, 0, 0, start], [1, 1, rows, width], [1, 1, 1, 1])
        parts.append(Reinterpret(part, [b, s, width], None))
    t = {"QueryTensor": parts[0], "KeyTensor": parts[1], "ValueTensor": parts[2]}
    fields = {"Scale": float(attrs.get("scale", 1.0 / np.sqrt(hq // n))), "HeadCount": n,
              "MaskFilterValue": float(attrs.get("mask_filter_value", -10000.0)),
              "MaskType": NO_MASK}
    if mask is not None:
        fields["MaskType"], t["MaskTensor"] = _padding_mask(L, node, mask, b, s, s)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)  # QAttention: FLOAT
    rel = None if abias is None else L.broadcast(abias, (b, n, s, s))
    if int(attrs.get("unidirectional", 0)):
        causal = _causal(L, dtype, b, n, s, 0, s)
        rel = causal if rel is None else X["Add"](rel, causal)
    t["RelativePositionBiasTensor"] = rel
    y, _ = _multihead(L, node, "MULTIHEAD_ATTENTION", t, fields, dtype, None)
    return L.new(y, (b, s, hv), dtype)


RULES = {"Attention": _attention, "com.microsoft.MultiHeadAttention": _mha,
         "com.microsoft.Attention": _contrib_attention}

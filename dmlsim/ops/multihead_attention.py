"""MULTIHEAD_ATTENTION (FL 6_1) and MULTIHEAD_ATTENTION1 (FL 6_3, grouped key/value heads):
scaled dot-product attention over the heads (the computation, the layouts and the masks:
``_attention``; the shape rule: ``_mha_rules``). Exactly one source of Query, Key and Value
each: separate tensors, or stacked QK, KV or QKV (the pages).

MULTIHEAD_ATTENTION1's page leaves QueryHeadCount, KeyValueHeadCount and
PastSequenceLengthsTensor "TBD": dmlsim reads the head counts as grouped-query attention
(QueryHeadCount a multiple of KeyValueHeadCount; equal, it is MULTIHEAD_ATTENTION) and
answers E_NOTIMPL for a PastSequenceLengthsTensor, whose meaning the page does not give.
Float32 arithmetic (FLOAT16 too, rounded once). With ALLOW_HALF_PRECISION_COMPUTATION on a GPU,
FLOAT16 attention without a mask or relative-position bias runs cuDNN's fused flash-attention
kernel (``_attention_fused.unfused_because`` says when it does not). Tolerance (``error_bound``): with E the
score error bound (hs + 2) u |Scale| sum |q k|, (2 E + (P + L + 8) u) sum_j p_j |v_j| for
the output (u = 2^-24); the present key and value are exact sums with the bias.
"""
import jax
import jax.numpy as jnp
import numpy as np

from .._core.hresult import E_NOTIMPL, fail
from .._core.registry import Example, OperatorDef, register
from ._attention import BOOLEAN, KEY_LENGTH, attend, sources
from ._attention_fused import unfused_because
from ._mha_rules import attention_sizes

IN = ("QueryTensor", "KeyTensor", "ValueTensor", "StackedQueryKeyTensor",
      "StackedKeyValueTensor", "StackedQueryKeyValueTensor", "BiasTensor", "MaskTensor",
      "RelativePositionBiasTensor", "PastKeyTensor", "PastValueTensor")
OUT, PK, PV = "OutputTensor", "OutputPresentKeyTensor", "OutputPresentValueTensor"
U = 2.0 ** -24


def _run(ins, a, hq, hkv, ctx):
    t = dict(zip(IN, ins))
    fused = unfused_because(t, a, hq, hkv, ctx.half, jax.default_backend()) is None
    o, k, v = attend(t, a, hq, hkv, jnp, ctx.upcast, ctx.product_operand, fused)
    return tuple(x.reshape(ctx.outputs[f].sizes) if ctx.outputs.get(f) is not None else x
                 for x, f in ((o, OUT), (k, PK), (v, PV)))


def _ref(ins, a, hq, hkv, ctx):
    t = {f: (None if x is None else np.asarray(x)) for f, x in zip(IN, ins)}
    o, k, v = attend(t, a, hq, hkv, np, lambda x: np.asarray(x, np.float64))
    return tuple(x.reshape(ctx.outputs[f].sizes) if ctx.outputs.get(f) is not None else x
                 for x, f in ((o, OUT), (k, PK), (v, PV)))


def multihead_attention(QueryTensor, KeyTensor, ValueTensor, StackedQueryKeyTensor,
                        StackedKeyValueTensor, StackedQueryKeyValueTensor, BiasTensor,
                        MaskTensor, RelativePositionBiasTensor, PastKeyTensor, PastValueTensor,
                        *, Scale, MaskFilterValue, HeadCount, MaskType, ctx):
    ins = list(locals().values())[:11]
    return _run(ins, locals(), HeadCount, HeadCount, ctx)


def multihead_attention_reference(QueryTensor, KeyTensor, ValueTensor, StackedQueryKeyTensor,
                                  StackedKeyValueTensor, StackedQueryKeyValueTensor, BiasTensor,
                                  MaskTensor, RelativePositionBiasTensor, PastKeyTensor,
                                  PastValueTensor, *, Scale, MaskFilterValue, HeadCount,
                                  MaskType, ctx):
    ins = list(locals().values())[:11]
    return _ref(ins, locals(), HeadCount, HeadCount, ctx)


def multihead_attention1(QueryTensor, KeyTensor, ValueTensor, StackedQueryKeyTensor,
                         StackedKeyValueTensor, StackedQueryKeyValueTensor, BiasTensor,
                         MaskTensor, RelativePositionBiasTensor, PastKeyTensor, PastValueTensor,
                         PastSequenceLengthsTensor, *, Scale, MaskFilterValue, QueryHeadCount,
                         KeyValueHeadCount, MaskType, ctx):
    ins = list(locals().values())[:11]
    return _run(ins, locals(), QueryHeadCount, KeyValueHeadCount, ctx)


def multihead_attention1_reference(QueryTensor, KeyTensor, ValueTensor, StackedQueryKeyTensor,
                                   StackedKeyValueTensor, StackedQueryKeyValueTensor,
                                   BiasTensor, MaskTensor, RelativePositionBiasTensor,
                                   PastKeyTensor, PastValueTensor, PastSequenceLengthsTensor, *,
                                   Scale, MaskFilterValue, QueryHeadCount, KeyValueHeadCount,
                                   MaskType, ctx):
    ins = list(locals().values())[:11]
    return _ref(ins, locals(), QueryHeadCount, KeyValueHeadCount, ctx)


def _heads(a):
    return (a["HeadCount"],) * 2 if "HeadCount" in a else \
        (a["QueryHeadCount"], a["KeyValueHeadCount"])


def sizes(spec, check):
    if spec.tensor.get("PastSequenceLengthsTensor") is not None:
        fail(E_NOTIMPL, f"{spec.name}: PastSequenceLengthsTensor is not implemented in dmlsim: "
                        "its page says only 'TBD'")
    return attention_sizes(spec, check, *_heads(spec.attr))


def error_bound(inputs, spec, dtype):
    """Per output field: the output's bound of the module docstring, computed with the
    largest magnitudes (a uniform bound); the present key and value: one rounding."""
    hq, hkv = _heads(spec.attr)
    t = {f: np.asarray(inputs[f], np.float64) for f in IN if inputs.get(f) is not None}
    q, k, v = sources(t, hq, hkv)
    bias = float(np.abs(t["BiasTensor"]).max()) if "BiasTensor" in t else 0.0
    mq, mk, mv = (float(np.abs(x).max()) + bias for x in (q, k, v))
    n = k.shape[1]
    if "PastKeyTensor" in t:
        mk = max(mk, float(np.abs(t["PastKeyTensor"]).max()))
        mv = max(mv, float(np.abs(t["PastValueTensor"]).max()))
        n += t["PastKeyTensor"].shape[-2]
    hs = q.shape[-1]
    e = (hs + 2) * U * abs(float(np.float32(spec.attr["Scale"]))) * hs * mq * mk
    return {OUT: (2 * e + (n + 8) * U) * mv, PK: U * mk, PV: U * mv}


f32, i32 = np.float32, np.int32
QQ, KK, VV = f32([[[1]]]), f32([[[0], [0]]]), f32([[[4], [8]]])
BASE = {"Scale": 1.0, "MaskFilterValue": -10000.0, "HeadCount": 1, "MaskType": 0}
PRESENT = {PK: f32([[[[0], [0]]]]), PV: f32([[[[4], [8]]]])}


def _register(name, kernel, reference, examples):
    register(OperatorDef(f"DML_OPERATOR_{name}", kernel, reference, output_sizes=sizes,
                         error_bound=error_bound, ulp={"FLOAT32": 2, "FLOAT16": 1},
                         examples=examples, module=__name__))


_register("MULTIHEAD_ATTENTION", multihead_attention, multihead_attention_reference, (
    Example({IN[0]: QQ, IN[1]: KK, IN[2]: VV}, {OUT: f32([[[6]]]), **PRESENT}, BASE,
            "equal scores: the mean of the values; the present key and value"),
    Example({IN[0]: QQ, IN[1]: KK, IN[2]: VV, IN[7]: i32([[[[1, 0]]]])}, {OUT: f32([[[4]]])},
            {**BASE, "MaskType": BOOLEAN}, "BOOLEAN mask: key 1 gets -10000 added"),
    Example({IN[0]: QQ, IN[1]: KK, IN[2]: VV, IN[7]: i32([[1]])}, {OUT: f32([[[4]]])},
            {**BASE, "MaskType": KEY_LENGTH}, "KEY_SEQUENCE_LENGTH 1: only key 0"),
    Example({IN[5]: f32([1, 0, 4, 1, 0, 8]).reshape(1, 2, 1, 3, 1)}, {OUT: f32([[[6], [6]]])}, BASE,
            "stacked QKV [1, 2, 1, 3, 1]"),
    Example({IN[0]: QQ, IN[1]: f32([[[0]]]), IN[2]: f32([[[4]]]), IN[9]: f32([[[[0]]]]),
             IN[10]: f32([[[[2]]]])}, {OUT: f32([[[3]]]), PK: f32([[[[0], [0]]]]),
                                       PV: f32([[[[2], [4]]]])}, BASE,
            "past key/value prepended: values {2, 4}"),
))
_register("MULTIHEAD_ATTENTION1", multihead_attention1, multihead_attention1_reference, (
    Example({IN[0]: f32([[[1, 1]]]), IN[1]: KK, IN[2]: VV}, {OUT: f32([[[6, 6]]])},
            {"Scale": 1.0, "MaskFilterValue": -10000.0, "QueryHeadCount": 2,
             "KeyValueHeadCount": 1, "MaskType": 0},
            "two query heads share one key/value head"),
))

"""MULTIHEAD_ATTENTION(1) with random data against the float64 reference
(``dmlsim/ops/_attention.py``) for every input combination the pages list, within the
tolerance of ``dmlsim/ops/multihead_attention.py``; the rules broken once; E_NOTIMPL where the
page leaves the semantics out."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

import dmlsim as dml

from reference_rig import run_against_reference

B, S, L, P, H, HS, VHS = 2, 3, 4, 2, 2, 4, 3


def _r(key, *shape, dtype=np.float32):
    rng = np.random.default_rng(zlib.crc32(repr((key, shape)).encode()))
    return rng.standard_normal(shape).astype(dtype)


def _case(kind, dtype, hkv=H):
    q = _r(kind, B, S, H * HS, dtype=dtype)
    k = _r(kind + "k", B, L, hkv * HS, dtype=dtype)
    v = _r(kind + "v", B, L, hkv * VHS, dtype=dtype)
    ins = {"QueryTensor": q, "KeyTensor": k, "ValueTensor": v}
    attrs = {"Scale": 1 / np.sqrt(HS), "MaskFilterValue": -10000.0, "MaskType": 0}
    if kind == "qkv":
        ins = {"StackedQueryKeyValueTensor": _r(kind, B, S, H, 3, HS, dtype=dtype)}
    elif kind == "qk":
        ins = {"StackedQueryKeyTensor": _r(kind, B, S, H, 2, HS, dtype=dtype),
               "ValueTensor": _r(kind, B, S, H * VHS, dtype=dtype)}
    elif kind == "kv":
        ins = {"QueryTensor": q, "StackedKeyValueTensor": _r(kind, B, L, H, 2, HS, dtype=dtype)}
    elif kind == "bias":
        ins["BiasTensor"] = _r(kind, 2 * H * HS + H * VHS, dtype=dtype)
    elif kind == "relative":
        ins["RelativePositionBiasTensor"] = _r(kind, B, H, S, L, dtype=dtype)
    elif kind == "boolean":
        ins["MaskTensor"] = (_r(kind, B, 1, S, L) > 0).astype(np.int32)
        attrs["MaskType"] = 4
    elif kind == "boolean-2d":
        ins["MaskTensor"] = (_r(kind, S, L) > -0.5).astype(np.int32)
        attrs["MaskType"] = 4
    elif kind == "key-length":
        ins["MaskTensor"] = np.int32([[2, 4]])
        attrs["MaskType"] = 1
    elif kind == "end-start":
        ins["MaskTensor"] = np.int32([[3, 4], [1, 0]])
        attrs["MaskType"] = 2
    elif kind == "past":
        ins["PastKeyTensor"] = _r(kind, B, hkv, P, HS, dtype=dtype)
        ins["PastValueTensor"] = _r(kind + "v", B, hkv, P, VHS, dtype=dtype)
    return ins, attrs


KINDS = ["separate", "qkv", "qk", "kv", "bias", "relative", "boolean", "boolean-2d",
         "key-length", "end-start", "past"]


def _outputs(kind, dtype, hkv=H):
    n = L + (P if kind == "past" else 0)
    if kind in ("qkv", "qk"):
        n = S
    vh = HS if kind in ("qkv", "kv") else VHS
    return {"OutputPresentKeyTensor": np.zeros((B, hkv, n, HS), dtype),
            "OutputPresentValueTensor": np.zeros((B, hkv, n, vh), dtype)}


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["FLOAT32", "FLOAT16"])
@pytest.mark.parametrize("kind", KINDS)
def test_multihead_attention(kind, dtype):
    ins, attrs = _case(kind, dtype)
    run_against_reference("MULTIHEAD_ATTENTION", ins, {**attrs, "HeadCount": H},
                          outputs=_outputs(kind, dtype))


@pytest.mark.parametrize("kind", ["separate", "past", "boolean"])
def test_grouped_query_attention(kind):
    ins, attrs = _case(kind, np.float32, hkv=1)
    run_against_reference("MULTIHEAD_ATTENTION1", {**ins, "PastSequenceLengthsTensor": None},
                          {**attrs, "QueryHeadCount": H, "KeyValueHeadCount": 1},
                          outputs=_outputs(kind, np.float32, hkv=1))


def _create(name, **fields):
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    with pytest.raises(dml.HResultError) as info:
        dml.DMLCreateDevice(d3d, 0).CreateOperator(dml.operator_desc(name, **fields))
    return info.value


def test_sources_must_be_one_of_each_and_unknown_semantics_are_e_notimpl():
    ins, attrs = _case("separate", np.float32)
    out = np.zeros((B, S, H * VHS), np.float32)
    err = _create("MULTIHEAD_ATTENTION", QueryTensor=ins["QueryTensor"],
                  ValueTensor=ins["ValueTensor"], OutputTensor=out, HeadCount=H, **attrs)
    assert err.hresult == dml.E_INVALIDARG and "give exactly one of each" in err.message
    err = _create("MULTIHEAD_ATTENTION", **ins, OutputTensor=out, HeadCount=H,
                  **{**attrs, "MaskType": 3}, MaskTensor=np.zeros(3 * B + 2, np.int32))
    assert err.hresult == dml.E_NOTIMPL and "KEY_QUERY_SEQUENCE_LENGTH_START_END" in err.message
    err = _create("MULTIHEAD_ATTENTION1", **ins, OutputTensor=out, QueryHeadCount=H,
                  KeyValueHeadCount=H, PastSequenceLengthsTensor=np.zeros(B, np.float32),
                  **attrs)
    assert err.hresult == dml.E_NOTIMPL and "PastSequenceLengthsTensor" in err.message
    err = _create("MULTIHEAD_ATTENTION1", **ins, OutputTensor=out, QueryHeadCount=H,
                  KeyValueHeadCount=3, **attrs)
    assert err.message == ("DML_OPERATOR_MULTIHEAD_ATTENTION1: the head counts are 2 (query) and "
                           "3 (key/value); both at least 1, the query count a multiple of the "
                           "key/value count")


def test_the_fused_kernel_is_chosen_only_where_dml_allows_it():
    """cuDNN's flash attention keeps FLOAT16 probabilities between its products: only with
    ALLOW_HALF_PRECISION_COMPUTATION, on a GPU, FLOAT16, without a mask or relative-position
    bias, head sizes a multiple of 8 up to 128 (the reasons are named)."""
    from dmlsim.ops._attention_fused import unfused_because
    q = np.zeros((1, 4, 2 * 64), np.float16)
    t = {"QueryTensor": q, "KeyTensor": q, "ValueTensor": q}
    a = {"MaskType": 0, "Scale": 0.125}
    assert unfused_because(t, a, 2, 2, True, "gpu") is None
    kv = np.zeros((1, 4, 64), np.float16)  # grouped heads: 2 query heads, 1 key/value head
    assert unfused_because(dict(t, KeyTensor=kv, ValueTensor=kv), a, 2, 1, True, "gpu") is None
    assert "without ALLOW_HALF_PRECISION_COMPUTATION" in unfused_because(t, a, 2, 2, False, "gpu")
    assert unfused_because(t, a, 2, 2, True, "cpu") == "no fused kernel on the cpu backend"
    f32 = {k: v.astype(np.float32) for k, v in t.items()}
    assert unfused_because(f32, a, 2, 2, True, "gpu") == "not FLOAT16"
    masked = dict(t, MaskTensor=np.ones((1, 4), np.int32))
    assert unfused_because(masked, {"MaskType": 1, "Scale": 0.125}, 2, 2, True, "gpu") \
        .startswith("a mask")
    biased = dict(t, RelativePositionBiasTensor=np.zeros((1, 2, 4, 4), np.float16))
    assert unfused_because(biased, a, 2, 2, True, "gpu") == "a RelativePositionBiasTensor"
    assert unfused_because(t, a, 32, 32, True, "gpu") == \
        "head sizes other than one multiple of 8 up to 128"  # 128 / 32 = 4

"""compare's float64 references of contrib operators (``onnx_compare_refs``), each checked against
ONNX Runtime's CPU kernel on the same node: GroupQueryAttention with rotary, softcap, a local
window, packed QKV, attention_bias, smooth_softmax and head_sink, in a prompt and in a decode
step after a past; RotaryEmbedding on 3-D and 4-D inputs with a partial rotary dimension."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T, helper
from onnx.reference import ReferenceEvaluator

from dmlsim._pythonic.onnx_compare_refs import OPS

N, KVN, HS, MAXPOS = 4, 2, 16, 32  # ORT: rotary head sizes are multiples of 16


def _run_both(node, inputs: dict, outputs: list):
    """(ONNX Runtime CPU, dmlsim's reference) outputs of one node on float32/int inputs."""
    vi = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
          for k, v in inputs.items()]
    outs = [helper.make_tensor_value_info(o, T.FLOAT, None) for o in outputs]
    model = helper.make_model(helper.make_graph([node], "g", vi, outs),
                              opset_imports=[helper.make_opsetid("", 17),
                                             helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    got = ort.InferenceSession(model.SerializeToString(),
                               providers=["CPUExecutionProvider"]).run(None, inputs)
    ref = ReferenceEvaluator(model, new_ops=OPS).run(None, inputs)
    return got, ref


def _caches(rot):
    pos = np.arange(MAXPOS)[:, None] / (10000 ** (np.arange(rot // 2) / (rot // 2)))
    return np.cos(pos).astype(np.float32), np.sin(pos).astype(np.float32)


GQA_CASES = {
    "plain": {},
    "rotary": {"do_rotary": 1},
    "rotary interleaved": {"do_rotary": 1, "rotary_interleaved": 1},
    "softcap": {"softcap": 2.0},
    "local window": {"local_window_size": 2},
    "smooth softmax": {"smooth_softmax": 1},
    "everything": {"do_rotary": 1, "softcap": 5.0, "local_window_size": 3},
}


@pytest.mark.parametrize("packed", [False, True], ids=["separate", "packed"])
@pytest.mark.parametrize("past", [0, 5], ids=["prompt", "decode"])
@pytest.mark.parametrize("case", list(GQA_CASES))
def test_group_query_attention_reference_matches_onnx_runtime(case, past, packed):
    rng = np.random.default_rng(1)
    b, s = 2, (6 if past == 0 else 1)
    q = rng.standard_normal((b, s, N * HS)).astype(np.float32)
    k = rng.standard_normal((b, s, KVN * HS)).astype(np.float32)
    v = rng.standard_normal((b, s, KVN * HS)).astype(np.float32)
    inputs = {"query": np.concatenate([q, k, v], axis=2)} if packed else \
        {"query": q, "key": k, "value": v}
    names = ["query", "" if packed else "key", "" if packed else "value"]
    if past:
        inputs["past_key"] = rng.standard_normal((b, KVN, past, HS)).astype(np.float32)
        inputs["past_value"] = rng.standard_normal((b, KVN, past, HS)).astype(np.float32)
        names += ["past_key", "past_value"]
    else:
        names += ["", ""]
    inputs["seqlens_k"] = np.full(b, past + s - 1, np.int32)
    inputs["total_sequence_length"] = np.array(past + s, np.int32)
    names += ["seqlens_k", "total_sequence_length"]
    attrs = dict(GQA_CASES[case])
    if attrs.get("do_rotary"):
        inputs["cos_cache"], inputs["sin_cache"] = _caches(HS)
        names += ["cos_cache", "sin_cache"]
    node = helper.make_node("GroupQueryAttention", names, ["out", "present_key", "present_value"],
                            domain="com.microsoft", num_heads=N, kv_num_heads=KVN, **attrs)
    got, ref = _run_both(node, inputs, ["out", "present_key", "present_value"])
    np.testing.assert_allclose(ref[0], got[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ref[1], got[1], rtol=1e-5, atol=1e-6)  # rotated keys too


def test_group_query_attention_reference_with_bias_and_sink():
    rng = np.random.default_rng(2)
    b, s = 1, 4
    qkv = {n: rng.standard_normal((b, s, h * HS)).astype(np.float32)
           for n, h in (("query", N), ("key", KVN), ("value", KVN))}
    inputs = {**qkv, "seqlens_k": np.array([s - 1], np.int32),
              "total_sequence_length": np.array(s, np.int32),
              "attention_bias": rng.standard_normal((b, N, s, s)).astype(np.float32),
              "head_sink": rng.standard_normal(N).astype(np.float32)}
    names = ["query", "key", "value", "", "", "seqlens_k", "total_sequence_length", "", "", "",
             "attention_bias", "head_sink"]
    node = helper.make_node("GroupQueryAttention", names, ["out", "pk", "pv"],
                            domain="com.microsoft", num_heads=N, kv_num_heads=KVN)
    got, ref = _run_both(node, inputs, ["out", "pk", "pv"])
    np.testing.assert_allclose(ref[0], got[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("four_d", [False, True], ids=["3-D", "4-D"])
@pytest.mark.parametrize("rot", [HS, HS // 2], ids=["full", "partial"])
@pytest.mark.parametrize("interleaved", [0, 1])
def test_rotary_embedding_reference_matches_onnx_runtime(four_d, rot, interleaved):
    rng = np.random.default_rng(3)
    b, s = 2, 5
    x = rng.standard_normal((b, N, s, HS) if four_d else (b, s, N * HS)).astype(np.float32)
    cos, sin = _caches(rot)
    inputs = {"x": x, "position_ids": rng.integers(0, MAXPOS, (b, s)).astype(np.int64),
              "cos_cache": cos, "sin_cache": sin}
    attrs = {"interleaved": interleaved}
    if rot != HS:
        attrs["rotary_embedding_dim"] = rot
    attrs["num_heads"] = N  # ORT asks for it with a partial rotary dimension, 4-D too
    node = helper.make_node("RotaryEmbedding", list(inputs), ["y"], domain="com.microsoft",
                            **attrs)
    got, ref = _run_both(node, inputs, ["y"])
    np.testing.assert_allclose(ref[0], got[0], rtol=1e-5, atol=1e-6)

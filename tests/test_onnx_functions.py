"""dmlsim.onnx: Attention onto MULTIHEAD_ATTENTION / MULTIHEAD_ATTENTION1 where DML's operator
matches and through ONNX's function body where it does not; other operators lowered through
their function bodies (GroupNormalization, Mish); If with a constant condition; Range and
ConstantOfShape beyond the folding limit. Expected values: float64 NumPy written here from
ONNX's definitions."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dmlsim as dml
import dmlsim.onnx as donnx
from dmlsim._pythonic import onnx_lower

F32 = TensorProto.FLOAT


def _vi(name, shape, t=F32):
    return helper.make_tensor_value_info(name, t, shape)


def _model(nodes, inputs, outputs, opset=23, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def attention(q, k, v, bias=None, scale=None, past=None, causal=False, softcap=0.0):
    """ONNX Attention on 4-D [B, H, N, size] float64 arrays (GQA: key heads repeated)."""
    if past is not None:
        k, v = np.concatenate([past[0], k], 2), np.concatenate([past[1], v], 2)
    present = (k, v)
    rep = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, rep, 1), np.repeat(v, rep, 1)
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if softcap:
        s = softcap * np.tanh(s / softcap)
    n, t = s.shape[-2:]
    if causal:
        s = s + np.where(np.arange(t)[None] <= np.arange(n)[:, None] + (t - n), 0, -np.inf)
    if bias is not None:
        s = s + bias
    dead = np.all(np.isneginf(s), -1, keepdims=True)
    p = np.where(dead, 0, _softmax(np.where(dead, 0, s)))
    return p @ v, present


def _run(model, feeds):
    rep = donnx.Backend.prepare(model)
    return rep.run(feeds), rep.session.describe()


def test_attention_3d_gqa_causal_with_past_is_one_multihead_attention1():
    rng = np.random.default_rng(3)
    b, s, hq, hkv, hs, p = 2, 3, 4, 2, 8, 2
    q = rng.standard_normal((b, s, hq * hs)).astype(np.float32)
    k = rng.standard_normal((b, s, hkv * hs)).astype(np.float32)
    v = rng.standard_normal((b, s, hkv * hs)).astype(np.float32)
    pk = rng.standard_normal((b, hkv, p, hs)).astype(np.float32)
    pv = rng.standard_normal((b, hkv, p, hs)).astype(np.float32)
    node = helper.make_node("Attention", ["q", "k", "v", "", "pk", "pv"], ["y", "ck", "cv"],
                            q_num_heads=hq, kv_num_heads=hkv, is_causal=1)
    m = _model([node], [_vi("q", q.shape), _vi("k", k.shape), _vi("v", v.shape),
                        _vi("pk", pk.shape), _vi("pv", pv.shape)],
               [_vi("y", [b, s, hq * hs]), _vi("ck", [b, hkv, p + s, hs]),
                _vi("cv", [b, hkv, p + s, hs])])
    (y, ck, cv), text = _run(m, [q, k, v, pk, pv])
    assert text.count("DML_OPERATOR_MULTIHEAD_ATTENTION1") == 1
    assert "SOFTMAX" not in text and "GEMM" not in text

    def heads(x, h):
        return x.reshape(b, s, h, -1).transpose(0, 2, 1, 3).astype(np.float64)
    want, (wk, wv) = attention(heads(q, hq), heads(k, hkv), heads(v, hkv), causal=True,
                               past=(pk.astype(np.float64), pv.astype(np.float64)))
    np.testing.assert_allclose(y, want.transpose(0, 2, 1, 3).reshape(b, s, -1), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(ck, wk.astype(np.float32))  # the concatenation: exact
    np.testing.assert_array_equal(cv, wv.astype(np.float32))


def test_attention_4d_is_transposed_around_multihead_attention():
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((1, 2, n, 4)).astype(np.float32) for n in (3, 5, 5))
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"], scale=0.25)
    m = _model([node], [_vi("q", q.shape), _vi("k", k.shape), _vi("v", v.shape)],
               [_vi("y", [1, 2, 3, 4])])
    (y,), text = _run(m, [q, k, v])
    assert text.count("DML_OPERATOR_MULTIHEAD_ATTENTION") == 1
    assert text.count("DML_OPERATOR_ELEMENT_WISE_IDENTITY") == 4  # Q, K, V in; Y out
    want, _ = attention(*(x.astype(np.float64) for x in (q, k, v)), scale=0.25)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)


def test_attention_with_a_mask_or_softcap_goes_through_onnx_function_body():
    """A fully masked row is zeros in ONNX; MULTIHEAD_ATTENTION would give NaN or the mean."""
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((1, 1, 3, 4)).astype(np.float32) for _ in range(3))
    mask = np.array([[True, False, True], [False, False, False], [True, True, True]])
    node = helper.make_node("Attention", ["q", "k", "v", "m"], ["y"], softcap=2.0)
    m = _model([node], [_vi("q", q.shape), _vi("k", k.shape), _vi("v", v.shape),
                        _vi("m", [3, 3], TensorProto.BOOL)], [_vi("y", [1, 1, 3, 4])])
    (y,), text = _run(m, [q, k, v, mask])
    assert "MULTIHEAD_ATTENTION" not in text
    assert "DML_OPERATOR_GEMM" in text and "DML_OPERATOR_ACTIVATION_SOFTMAX1" in text
    want, _ = attention(*(x.astype(np.float64) for x in (q, k, v)),
                        bias=np.where(mask, 0, -np.inf), softcap=2.0)
    np.testing.assert_array_equal(y[0, 0, 1], np.zeros(4, np.float32))
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)


def test_group_normalization_and_mish_through_their_function_bodies():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 4, 3)).astype(np.float32)
    scale = rng.standard_normal(4).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    nodes = [helper.make_node("GroupNormalization", ["x", "s", "b"], ["g"], num_groups=2,
                              epsilon=1e-5),
             helper.make_node("Mish", ["g"], ["y"])]
    inits = [helper.make_tensor("s", F32, [4], scale), helper.make_tensor("b", F32, [4], bias)]
    m = _model(nodes, [_vi("x", x.shape)], [_vi("y", x.shape)], opset=21, inits=inits)
    (y,), text = _run(m, [x])
    g = x.astype(np.float64).reshape(2, 2, -1)
    g = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)
    g = g.reshape(x.shape) * scale[:, None] + bias[:, None]
    np.testing.assert_allclose(y, g * np.tanh(np.log1p(np.exp(g))), rtol=1e-5, atol=1e-5)
    assert text.count("DML_OPERATOR_REDUCE") == 2  # the body's mean and mean of squares
    assert "ACTIVATION_SOFTPLUS" in text and "ACTIVATION_TANH" in text  # Mish's body


def test_if_with_a_constant_condition_is_its_branch_and_a_runtime_one_is_read_on_the_cpu():
    def branch(name, value):
        c = helper.make_tensor(name + "_c", F32, [2], value)
        return helper.make_graph([helper.make_node("Add", ["x", name + "_c"], [name])],
                                 name, [], [_vi(name, [2])], [c])
    cond = helper.make_tensor("cond", TensorProto.BOOL, [], [False])
    node = helper.make_node("If", ["cond"], ["y"], name="if0",
                            then_branch=branch("t", [1, 1]), else_branch=branch("e", [5, 7]))
    m = _model([node], [_vi("x", [2])], [_vi("y", [2])], inits=[cond])
    (y,) = donnx.prepare(m).run(None, {"x": np.float32([1, 2])})
    np.testing.assert_array_equal(y, np.float32([6, 9]))
    # a condition fed at run time is read on the CPU (ORT runs If there): one plan per value
    m = _model([node], [_vi("x", [2]), _vi("cond", [], TensorProto.BOOL)], [_vi("y", [2])])
    session = donnx.prepare(m)
    for c, want in ((True, [2, 3]), (False, [6, 9]), (True, [2, 3])):
        (y,) = session.run(None, {"x": np.float32([1, 2]), "cond": np.array(c)})
        np.testing.assert_array_equal(y, np.float32(want))
    assert session.constants == {"cond"}
    assert session.plan_cache_info()[:2] == (1, 2)  # hits, misses


def test_large_range_and_constant_of_shape_become_fill_operators(monkeypatch):
    monkeypatch.setattr(onnx_lower, "FOLD_LIMIT", 4)
    i64 = TensorProto.INT64
    inits = [helper.make_tensor("a", i64, [], [3]), helper.make_tensor("l", i64, [], [-9]),
             helper.make_tensor("d", i64, [], [-2]), helper.make_tensor("s", i64, [2], [2, 3])]
    nodes = [helper.make_node("Range", ["a", "l", "d"], ["r"]),
             helper.make_node("ConstantOfShape", ["s"], ["c"],
                              value=helper.make_tensor("v", TensorProto.INT32, [1], [7]))]
    m = _model(nodes, [], [_vi("r", [6], i64), _vi("c", [2, 3], TensorProto.INT32)],
               inits=inits)
    session = donnx.prepare(m)
    text = session.describe()
    assert "FILL_VALUE_SEQUENCE" in text and "FILL_VALUE_CONSTANT" in text
    r, c = session.run(None, {})
    np.testing.assert_array_equal(r, np.arange(3, -9, -2))  # ceil((-9 - 3) / -2) = 6 elements
    np.testing.assert_array_equal(c, np.full((2, 3), 7, np.int32))


@pytest.mark.parametrize("level", ["6_4", "6_1"])
def test_scalar_constants_are_constant_nodes_from_feature_level_6_2(level):
    """The DML provider's rule: a constant under 8 bytes is a DML_GRAPH_NODE_TYPE_CONSTANT
    node (FL 6_2+); larger ones, and every one below 6_2, are OWNED_BY_DML graph inputs."""
    inits = [helper.make_tensor("two", F32, [], [2.0]),
             helper.make_tensor("w", F32, [3], [1.0, -1.0, 0.5])]
    nodes = [helper.make_node("Add", ["x", "two"], ["a"]),
             helper.make_node("Mul", ["a", "w"], ["y"])]
    m = _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])], inits=inits)
    session = donnx.prepare(m, feature_level=level)
    text = session.describe()
    constants = 1 if level == "6_4" else 0
    assert f"constant nodes (FL 6_2, under 8 bytes): {constants}" in text
    assert f"OWNED_BY_DML weights: {2 - constants} graph inputs" in text
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y,) = session.run(None, {"x": x})
    np.testing.assert_array_equal(y, (x + 2) * np.float32([1, -1, 0.5]))


# ---- com.microsoft.MultiHeadAttention against ONNX Runtime's CPU provider ---------------------

def _ort_and_dmlsim(node, inputs, outputs):
    ort = pytest.importorskip("onnxruntime")
    g = helper.make_graph([node], "g", [_vi(n, a.shape, helper.np_dtype_to_tensor_dtype(a.dtype))
                                        for n, a in inputs.items()],
                          [_vi(n, shape) for n, shape in outputs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid("com.microsoft", 1)],
                          ir_version=10)  # every supported ONNX Runtime reads IR 10
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, inputs)
    session = donnx.prepare(m)
    return session.run(None, inputs), want, session.describe()


@pytest.mark.parametrize("case", ["bias_and_boolean_mask", "key_lengths_and_unidirectional",
                                  "past_present_and_attention_bias", "empty_past"])
def test_contrib_multihead_attention_matches_onnx_runtime(case):
    """``empty_past``: a Whisper decoder's first step, past key and value of length 0 with
    ``unidirectional``: lowered with no past (DML has no empty tensors), present = key, value."""
    rng = np.random.default_rng(7)
    b, s, n, h, p = 2, 3, 2, 4, 0 if case == "empty_past" else 2

    def f(*shape):
        return rng.standard_normal(shape).astype(np.float32)
    ins = {"q": f(b, s, n * h), "k": f(b, s, n * h), "v": f(b, s, n * h)}
    names = ["q", "k", "v", "", "", "", "", ""]
    attrs = {"num_heads": n}
    outs = [("y", [b, s, n * h])]
    if case == "bias_and_boolean_mask":
        ins["bias"], names[3] = f(3 * n * h), "bias"
        ins["mask"] = np.array([[1, 0, 1], [1, 1, 0]], np.int32)
        names[4] = "mask"
    elif case == "key_lengths_and_unidirectional":
        ins["mask"], names[4] = np.array([2, 3], np.int32), "mask"
        attrs["unidirectional"] = 1
    else:
        if case == "empty_past":
            attrs["unidirectional"] = 1
        else:
            ins["ab"], names[5] = f(1, n, s, p + s), "ab"
        ins["pk"], ins["pv"] = f(b, n, p, h), f(b, n, p, h)
        names[6:8] = ["pk", "pv"]
        outs += [("ck", [b, n, p + s, h]), ("cv", [b, n, p + s, h])]
    node = helper.make_node("MultiHeadAttention", names, [o for o, _ in outs],
                            domain="com.microsoft", **attrs)
    got, want, text = _ort_and_dmlsim(node, ins, outs)
    assert text.count("DML_OPERATOR_MULTIHEAD_ATTENTION") == 1
    for g_, w in zip(got, want):
        np.testing.assert_allclose(g_, w, rtol=1e-5, atol=1e-6)

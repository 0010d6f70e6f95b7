"""ONNX Runtime's contrib operators that DirectML language models are made of, lowered onto DML
operators as the DML provider lowers them (``onnx_rules_contrib``): one-node models over the
provider's variants, FLOAT32 and FLOAT16, against ONNX Runtime's CPU provider on the same
file (FLOAT32 within 1e-4 and FLOAT16 within 1e-2 of the output's largest magnitude), the
variants the provider does not take refused by name, and the tiny genai LLM for DirectML
(prefill and decode, with and without the shared KV buffer) against ONNX Runtime."""
from pathlib import Path

import numpy as np
import pytest
from onnx import helper

import dmlsim as dml
import dmlsim.onnx as donnx
from helpers import llm_feeds

ort = pytest.importorskip("onnxruntime")

GENAI = Path(__file__).resolve().parent / "models" / "genai"
TOL = {np.float32: 1e-4, np.float16: 1e-2}
MS = "com.microsoft"
IR = 10  # an IR version every supported ONNX Runtime reads (1.30 stops at 13)


def _model(node, inputs, outputs, opset=17, out_dtype=None):
    vi = helper.make_tensor_value_info
    ins = [vi(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape) for n, a in inputs.items()]
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(out_dtype or next(iter(inputs.values())).dtype))
    outs = [vi(n, elem, None) for n in outputs]
    return helper.make_model(helper.make_graph([node], "contrib", ins, outs), ir_version=IR,
                             opset_imports=[helper.make_opsetid("", opset),
                                            helper.make_opsetid(MS, 1)])


def _check(node, inputs, outputs, dtype, out_dtype=None, valid=None):
    """Run both; ``valid`` {output: slices} compares only part of an output."""
    model = _model(node, inputs, outputs, out_dtype=out_dtype)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, inputs)
    got = donnx.InferenceSession(model).run(None, inputs)
    for name, g, w in zip(outputs, got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (name, g.shape, w.shape)
        if valid and name in valid:
            g, w = g[valid[name]], w[valid[name]]
        scale = float(np.abs(w.astype(np.float64)).max()) or 1.0
        err = float(np.abs(g.astype(np.float64) - w.astype(np.float64)).max())
        assert err <= TOL[dtype] * scale, (name, err, scale)
    return got


def _rand(rng, shape, dtype, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


# ---- the LayerNorm family ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("shape", [(2, 5, 16), (3, 8), (1, 2, 3, 8)])
def test_simplified_layer_normalization(dtype, shape):
    rng = np.random.default_rng(1)
    inputs = {"x": _rand(rng, shape, dtype, 3.0), "scale": _rand(rng, shape[-1:], dtype)}
    node = helper.make_node("SimplifiedLayerNormalization", ["x", "scale"], ["y"],
                            epsilon=1e-6, axis=-1)
    _check(node, inputs, ["y"], dtype)


def test_simplified_layer_normalization_with_a_float32_scale_on_float16_data():
    rng = np.random.default_rng(2)
    inputs = {"x": _rand(rng, (2, 4, 8), np.float16), "scale": _rand(rng, (8,), np.float32)}
    node = helper.make_node("SimplifiedLayerNormalization", ["x", "scale"], ["y"], axis=-1)
    (y,) = _check(node, inputs, ["y"], np.float16, out_dtype=np.float32)
    assert y.dtype == np.float32


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("simplified, bias, shape", [
    (True, False, (2, 5, 16)), (True, True, (2, 5, 16)), (False, True, (3, 16)),
    (False, False, (1, 4, 16))])
def test_skip_layer_normalizations_and_their_sum_output(dtype, simplified, bias, shape):
    rng = np.random.default_rng(3)
    h = shape[-1]
    inputs = {"x": _rand(rng, shape, dtype), "skip": _rand(rng, shape, dtype),
              "gamma": _rand(rng, (h,), dtype)}
    names = ["x", "skip", "gamma"]
    if not simplified:
        inputs["beta"] = _rand(rng, (h,), dtype)
        names.append("beta")
    if bias:
        inputs["bias"] = _rand(rng, (h,), dtype)
        names.append("bias")
    op = "SkipSimplifiedLayerNormalization" if simplified else "SkipLayerNormalization"
    node = helper.make_node(op, names, ["y", "", "", "sum"], domain=MS, epsilon=1e-5)
    _check(node, inputs, ["y", "sum"], dtype)


def test_skip_layer_normalization_mean_output_is_refused_by_name():
    x = np.ones((2, 8), np.float32)
    node = helper.make_node("SkipLayerNormalization", ["x", "x", "g"], ["y", "mean"],
                            domain=MS, name="sln")
    with pytest.raises(dml.HResultError) as e:
        donnx.InferenceSession(_model(node, {"x": x, "g": x[0]}, ["y", "mean"]))
    assert e.value.hresult == dml.E_NOTIMPL
    assert "'sln': ORT's DML EP takes it; dmlsim does not lower it: the mean / inv_std_var " \
        "output" in e.value.message


# ---- RotaryEmbedding --------------------------------------------------------------------------

def _caches(max_pos, half, dtype):
    freq = 1.0 / (10000 ** (np.arange(half) / half))
    angles = np.arange(max_pos)[:, None] * freq[None, :]
    return np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("offset", [False, True])
def test_rotary_embedding(dtype, interleaved, offset):
    rng = np.random.default_rng(4)
    b, s, n, hs = 2, 5, 3, 8
    cos, sin = _caches(32, hs // 2, dtype)
    pos = np.array([7], np.int64) if offset else rng.integers(0, 32, (b, s)).astype(np.int64)
    inputs = {"x": _rand(rng, (b, s, n * hs), dtype), "pos": pos, "cos": cos, "sin": sin}
    node = helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain=MS,
                            interleaved=interleaved)
    _check(node, inputs, ["y"], dtype)


def test_rotary_embedding_variants_the_provider_does_not_take_are_named():
    cos, sin = _caches(8, 2, np.float32)
    pos = np.zeros((1, 2), np.int64)
    for x, attrs, words in ((np.ones((1, 2, 2, 4), np.float32), {}, "a 4-D input"),
                            (np.ones((1, 2, 8), np.float32), {"scale": 0.5}, "scale"),
                            (np.ones((1, 2, 8), np.float32), {"rotary_embedding_dim": 2},
                             "rotary_embedding_dim")):
        node = helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"],
                                domain=MS, **attrs)
        with pytest.raises(dml.HResultError) as e:
            donnx.InferenceSession(_model(node, {"x": x, "pos": pos, "cos": cos, "sin": sin},
                                          ["y"]))
        assert e.value.hresult == dml.E_NOTIMPL and words in e.value.message


# ---- GroupQueryAttention ----------------------------------------------------------------------

def _gqa_inputs(rng, dtype, s, past, buf, n=4, kvn=2, hs=8, b=1):
    return {"q": _rand(rng, (b, s, n * hs), dtype), "k": _rand(rng, (b, s, kvn * hs), dtype),
            "v": _rand(rng, (b, s, kvn * hs), dtype),
            "pk": _rand(rng, (b, kvn, buf, hs), dtype), "pv": _rand(rng, (b, kvn, buf, hs), dtype),
            "seqlens": np.full((b,), past + s - 1, np.int32),
            "total": np.array(past + s, np.int32)}


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("s, past, buf", [(5, 0, 0), (1, 5, 5), (4, 0, 12), (1, 6, 12)],
                         ids=["prefill", "decode", "shared-prefill", "shared-decode"])
@pytest.mark.parametrize("kvn", [2, 4])
def test_group_query_attention(dtype, s, past, buf, kvn):
    """Present keys and values beyond the total length: ONNX Runtime's CPU kernel writes zeros
    there (its present is a buffer of its own); under the DML provider present is the past
    buffer (past_present_share_buffer aliases them), so that part keeps the past's bytes."""
    rng = np.random.default_rng(5)
    inputs = _gqa_inputs(rng, dtype, s, past, buf, kvn=kvn, b=2)
    node = helper.make_node("GroupQueryAttention", ["q", "k", "v", "pk", "pv", "seqlens",
                                                    "total"], ["y", "present_k", "present_v"],
                            domain=MS, num_heads=4, kv_num_heads=kvn)
    total = past + s
    head = (slice(None), slice(None), slice(0, total))
    y, pk, pv = _check(node, inputs, ["y", "present_k", "present_v"], dtype,
                       valid={"present_k": head, "present_v": head})
    assert pk.shape == (2, kvn, max(buf, total), 8)
    np.testing.assert_array_equal(pk[:, :, total:], inputs["pk"][:, :, total:])
    np.testing.assert_array_equal(pv[:, :, total:], inputs["pv"][:, :, total:])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_group_query_attention_decodes_batches_of_different_lengths(dtype):
    """One token per batch, each written at its own seqlens_k in the shared buffer, each
    attending its own keys; a plan that does not depend on the lengths."""
    rng = np.random.default_rng(7)
    inputs = _gqa_inputs(rng, dtype, 1, 5, 9, b=3)
    inputs["seqlens"] = np.array([5, 2, 7], np.int32)
    inputs["total"] = np.array(8, np.int32)
    node = helper.make_node("GroupQueryAttention", ["q", "k", "v", "pk", "pv", "seqlens",
                                                    "total"], ["y", "present_k", "present_v"],
                            domain=MS, num_heads=4, kv_num_heads=2)
    model = _model(node, inputs, ["y", "present_k", "present_v"])
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, inputs)
    session = donnx.InferenceSession(model)
    got = session.run(None, inputs)
    scale = np.abs(want[0].astype(np.float64)).max()
    assert np.abs(got[0].astype(np.float64) - want[0]).max() <= TOL[dtype] * scale
    for batch, length in enumerate(inputs["seqlens"] + 1):
        for g, w, past in ((got[1], want[1], inputs["pk"]), (got[2], want[2], inputs["pv"])):
            np.testing.assert_allclose(g[batch, :, :length], w[batch, :, :length],
                                       atol=TOL[dtype] * 4)
            np.testing.assert_array_equal(g[batch, :, length:], past[batch, :, length:])
    inputs["seqlens"] = np.array([1, 6, 3], np.int32)
    session.run(None, inputs)
    assert session.constants == {"total"}  # the provider reads it on the CPU; seqlens_k not
    assert session.plan_cache_info()[:2] == (1, 1)


def test_a_multi_token_step_after_a_growing_past_is_refused():
    inputs = _gqa_inputs(np.random.default_rng(8), np.float32, 3, 4, 4, b=1)
    node = helper.make_node("GroupQueryAttention", ["q", "k", "v", "pk", "pv", "seqlens",
                                                    "total"], ["y"], domain=MS, num_heads=4,
                            kv_num_heads=2)
    with pytest.raises(dml.HResultError) as e:
        donnx.InferenceSession(_model(node, inputs, ["y"])).run(None, inputs)
    assert e.value.hresult == dml.E_NOTIMPL and "multi-token step after a past" in \
        e.value.message


def test_group_query_attention_variants_the_provider_does_not_take_are_named():
    rng = np.random.default_rng(6)
    inputs = _gqa_inputs(rng, np.float32, 2, 0, 0)
    for attrs, words in (({"do_rotary": 1}, "do_rotary 1"), ({"softcap": 5.0}, "softcap"),
                         ({"local_window_size": 2}, "local_window_size")):
        node = helper.make_node("GroupQueryAttention", ["q", "k", "v", "pk", "pv", "seqlens",
                                                        "total"], ["y"], domain=MS, name="g",
                                num_heads=4, kv_num_heads=2, **attrs)
        with pytest.raises(dml.HResultError) as e:
            donnx.InferenceSession(_model(node, inputs, ["y"])).run(None, inputs)
        assert e.value.hresult == dml.E_NOTIMPL and words in e.value.message


# ---- the tiny LLM built for DirectML ----------------------------------------------------------

@pytest.mark.parametrize("folder,buf", [("llama-fp16", 16), ("llama-int4", None)],
                         ids=["shared-kv-buffer-llama-fp16", "growing-kv-llama-int4"])
def test_the_genai_llm_prefill_and_decode_match_onnx_runtime(folder, buf):
    """tests/models/genai/llama-fp16 and -int4 (tools/make_tiny_llm.py): logits and present KV
    of a 4-token prefill and a 1-token decode step, FLOAT16, against ONNX Runtime's CPU
    provider."""
    path = GENAI / folder / "model.onnx"
    session = donnx.InferenceSession(path)
    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds = llm_feeds([0, 5, 7, 9], buf=buf)
    for step in range(2):
        got, want = session.run(None, feeds), ref.run(None, feeds)
        for name, g, w in zip(session.output_names, got, want):
            assert g.shape == w.shape and g.dtype == np.float16, name
            err = np.abs(g.astype(np.float64) - w.astype(np.float64)).max()
            assert err <= 1e-2 * np.abs(w.astype(np.float64)).max(), (step, name, err)
        np.testing.assert_array_equal(got[0][0, -1].argmax(), want[0][0, -1].argmax())
        assert session.placement().all_dml  # as genai's DML models run under ORT
        feeds = llm_feeds([int(want[0][0, -1].argmax())], past=4,
                           kv=dict(zip(session.output_names, want)))


# ---- MatMulNBits ------------------------------------------------------------------------------

def _quantize_nbits(rng, n, k, bits, block, zero_points):
    """Random quantized weights in ORT's MatMulNBits layout, and their float64 dequantization
    by the contrib definition ((q - zero point) x scale, zero point 2^(bits - 1) by default)."""
    blocks = k // block
    q = rng.integers(0, 1 << bits, (n, k)).astype(np.uint8)
    scale = rng.uniform(0.01, 0.1, (n, blocks))
    zp = rng.integers(0, 1 << bits, (n, blocks)).astype(np.uint8) if zero_points else \
        np.full((n, blocks), 1 << (bits - 1), np.uint8)
    w = (q.astype(np.float64) - np.repeat(zp, block, axis=1)) * np.repeat(scale, block, axis=1)
    if bits == 4:
        packed = (q[:, 0::2] | (q[:, 1::2] << 4)).reshape(n, blocks, block // 2)
        zrow = np.pad(zp, ((0, 0), (0, blocks % 2)))
        zpacked = (zrow[:, 0::2] | (zrow[:, 1::2] << 4)).reshape(-1)
    else:
        packed, zpacked = q.reshape(n, blocks, block), zp.reshape(-1)
    return packed, scale, zpacked, w


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("bits, block, zero_points, a_shape", [
    (4, 16, False, (3, 64)), (4, 32, True, (2, 5, 64)), (4, 64, False, (1, 2, 192)),
    (4, 128, True, (4, 128)), (8, 32, True, (2, 64)), (8, 16, False, (1, 3, 48))])
def test_matmul_nbits_against_the_definition_and_onnx_runtime(dtype, bits, block, zero_points,
                                                             a_shape):
    rng = np.random.default_rng(8)
    n, k = 24, a_shape[-1]
    packed, scale, zpacked, w = _quantize_nbits(rng, n, k, bits, block, zero_points)
    a = _rand(rng, a_shape, dtype)
    inputs = {"a": a, "b": packed, "scales": scale.astype(dtype).reshape(-1)}
    names = ["a", "b", "scales"] + (["zp"] if zero_points else [])
    if zero_points:
        inputs["zp"] = zpacked
    node = helper.make_node("MatMulNBits", names, ["y"], domain=MS, K=k, N=n, bits=bits,
                            block_size=block)
    model = _model(node, inputs, ["y"])
    (got,) = donnx.InferenceSession(model).run(None, inputs)
    w = (np.asarray(scale.astype(dtype), np.float64).repeat(block, 1) *
         (w / np.repeat(scale, block, axis=1)))  # the scales as the model stores them
    want = a.astype(np.float64) @ w.T
    scale_out = np.abs(want).max()
    assert got.shape == want.shape and got.dtype == dtype
    assert np.abs(got - want).max() <= TOL[dtype] * scale_out
    if bits == 4:  # ONNX Runtime's CPU kernel, on the same file
        (ref,) = ort.InferenceSession(model.SerializeToString(),
                                      providers=["CPUExecutionProvider"]).run(None, inputs)
        assert np.abs(got.astype(np.float64) - ref).max() <= TOL[dtype] * scale_out


def test_matmul_nbits_variants_the_provider_does_not_take_are_named():
    rng = np.random.default_rng(9)
    packed, scale, _, _ = _quantize_nbits(rng, 8, 32, 4, 16, False)
    inputs = {"a": _rand(rng, (2, 32), np.float32), "b": packed,
              "scales": scale.astype(np.float32).reshape(-1),
              "zp": scale.astype(np.float32).reshape(-1)}
    node = helper.make_node("MatMulNBits", ["a", "b", "scales", "zp"], ["y"], domain=MS, K=32,
                            N=8, bits=4, block_size=16, name="mm")
    with pytest.raises(dml.HResultError) as e:  # B fed at run time is read on the CPU
        donnx.InferenceSession(_model(node, inputs, ["y"])).run(None, inputs)
    assert e.value.hresult == dml.E_NOTIMPL and "float32 zero points" in e.value.message


# ---- activations, bias additions, FusedMatMul, GroupNorm, quantization -----------------------

def _erf_gelu(x):
    from scipy.special import erf
    return 0.5 * x * (1 + erf(x / np.sqrt(2)))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("op", ["Gelu", "BiasGelu", "QuickGelu", "FastGelu", "FastGelu+bias"])
def test_gelu_family_against_onnx_runtime(dtype, op):
    rng = np.random.default_rng(10)
    inputs = {"x": _rand(rng, (2, 3, 16), dtype, 2.0)}
    names = ["x"]
    op, _, with_bias = op.partition("+")
    if op == "BiasGelu" or with_bias:
        inputs["bias"] = _rand(rng, (16,), dtype)
        names.append("bias")
    attrs = {"alpha": 1.5} if op == "QuickGelu" else {}
    _check(helper.make_node(op, names, ["y"], domain=MS, **attrs), inputs, ["y"], dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_bias_add_and_bias_split_gelu_against_their_definitions(dtype):
    """Both have CUDA kernels only in ONNX Runtime: float64 references from
    docs/ContribOperators.md's definitions."""
    rng = np.random.default_rng(11)
    x, skip = _rand(rng, (2, 6, 32), dtype), _rand(rng, (2, 6, 32), dtype)
    bias = _rand(rng, (32,), dtype)
    f64 = [v.astype(np.float64) for v in (x, bias, skip)]
    cases = [("BiasAdd", ["x", "bias", "skip"], f64[0] + f64[1] + f64[2]),
             ("BiasSplitGelu", ["x", "bias"],
              (f64[0] + f64[1])[..., :16] * _erf_gelu((f64[0] + f64[1])[..., 16:]))]
    for op, names, want in cases:
        inputs = {n: v for n, v in (("x", x), ("bias", bias), ("skip", skip)) if n in names}
        model = _model(helper.make_node(op, names, ["y"], domain=MS), inputs, ["y"])
        (got,) = donnx.InferenceSession(model).run(None, inputs)
        assert got.shape == want.shape and got.dtype == dtype
        assert np.abs(got - want).max() <= TOL[dtype] * np.abs(want).max(), op


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("ta, tb, a_shape, b_shape", [
    (0, 0, (3, 8), (8, 5)), (1, 0, (8, 3), (8, 5)), (0, 1, (2, 3, 8), (5, 8)),
    (1, 1, (4, 2, 8, 3), (4, 1, 5, 8))])
def test_fused_matmul_against_onnx_runtime(dtype, ta, tb, a_shape, b_shape):
    rng = np.random.default_rng(12)
    inputs = {"a": _rand(rng, a_shape, dtype), "b": _rand(rng, b_shape, dtype)}
    node = helper.make_node("FusedMatMul", ["a", "b"], ["y"], domain=MS, transA=ta, transB=tb,
                            alpha=0.75)
    _check(node, inputs, ["y"], dtype)


def _group_norm_reference(x, gamma, beta, groups, eps, last, silu):
    x = x.astype(np.float64)
    if last:
        x = x.transpose(0, 3, 1, 2)
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1)
    y = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + eps))
    y = y.reshape(x.shape) * gamma.astype(np.float64)[None, :, None, None] + \
        beta.astype(np.float64)[None, :, None, None]
    if silu:
        y = y / (1 + np.exp(-y))
    return y.transpose(0, 2, 3, 1) if last else y


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("last, silu", [(1, 0), (1, 1), (0, 1)])
def test_group_norm_against_its_definition(dtype, last, silu):
    """GroupNorm has CUDA kernels only in ONNX Runtime: a float64 reference."""
    rng = np.random.default_rng(13)
    shape = (2, 4, 5, 12) if last else (2, 12, 4, 5)
    inputs = {"x": _rand(rng, shape, dtype, 3.0), "gamma": _rand(rng, (12,), np.float32),
              "beta": _rand(rng, (12,), np.float32)}
    node = helper.make_node("GroupNorm", ["x", "gamma", "beta"], ["y"], domain=MS, groups=3,
                            epsilon=1e-5, activation=silu, channels_last=last)
    (got,) = donnx.InferenceSession(_model(node, inputs, ["y"])).run(None, inputs)
    want = _group_norm_reference(inputs["x"], inputs["gamma"], inputs["beta"], 3, 1e-5, last,
                                 silu)
    assert got.shape == want.shape and got.dtype == dtype
    assert np.abs(got - want).max() <= TOL[dtype] * np.abs(want).max()


@pytest.mark.parametrize("zp_type", [np.uint8, np.int8])
def test_contrib_quantize_and_dequantize_linear_are_exact(zp_type):
    rng = np.random.default_rng(14)
    x = _rand(rng, (3, 10), np.float32, 4.0)
    scale, zp = np.array(0.05, np.float32), np.array(3, zp_type)
    q = _check(helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], domain=MS),
               {"x": x, "s": scale, "z": zp}, ["q"], np.float32, out_dtype=zp_type)[0]
    ref = ort.InferenceSession(_model(helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"],
                                                       domain=MS), {"x": x, "s": scale, "z": zp},
                                      ["q"], out_dtype=zp_type).SerializeToString(),
                               providers=["CPUExecutionProvider"]).run(None, {"x": x, "s": scale,
                                                                              "z": zp})[0]
    np.testing.assert_array_equal(q, ref)
    d = _check(helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], domain=MS),
               {"q": q, "s": scale, "z": zp}, ["y"], np.float32, out_dtype=np.float32)[0]
    np.testing.assert_array_equal(d, (q.astype(np.float32) - np.float32(zp)) * scale)


# ---- an Olive-style UNet block against its unfused twin ---------------------------------------

def _unet_block(fused: bool):
    """x [B, H, W, C] -> GroupNorm(SiLU) -> packed-QKV self-attention -> BiasSplitGelu, written
    with the contrib operators (as Olive's Stable Diffusion for DirectML has it) or with plain
    ONNX operators (the unfused twin ONNX Runtime's CPU provider runs)."""
    rng = np.random.default_rng(15)
    b, h, w, c, heads, groups = 2, 3, 4, 16, 2, 4
    s, hd = h * w, c // heads
    init = {"gamma": rng.uniform(0.5, 1.5, c).astype(np.float32),
            "beta": _rand(rng, (c,), np.float32, 0.1),
            "wqkv": _rand(rng, (c, 3 * c), np.float32, 0.3),
            "wo": _rand(rng, (c, 2 * c), np.float32, 0.3),
            "bias": _rand(rng, (2 * c,), np.float32, 0.1)}
    consts = {"s_bsc": [b, s, c], "s_packed": [b, s, heads, 3, hd], "s_groups": [b, s, groups, -1],
              "s_x": [b, h, w, c], "half": [c, c]}
    N = helper.make_node
    if fused:
        nodes = [N("GroupNorm", ["x", "gamma", "beta"], ["g"], domain=MS, groups=groups,
                   activation=1, channels_last=1, epsilon=1e-5)]
    else:
        init["eps"], init["two"] = np.array(1e-5, np.float32), np.array(2.0, np.float32)
        nodes = [N("Reshape", ["x", "s_groups"], ["xg"]),
                 N("ReduceMean", ["xg"], ["mu"], axes=[1, 3]), N("Sub", ["xg", "mu"], ["d"]),
                 N("Pow", ["d", "two"], ["d2"]), N("ReduceMean", ["d2"], ["var"], axes=[1, 3]),
                 N("Add", ["var", "eps"], ["ve"]), N("Sqrt", ["ve"], ["sd"]),
                 N("Div", ["d", "sd"], ["nx"]), N("Reshape", ["nx", "s_x"], ["n4"]),
                 N("Mul", ["n4", "gamma"], ["ng"]), N("Add", ["ng", "beta"], ["nb"]),
                 N("Sigmoid", ["nb"], ["sg"]), N("Mul", ["nb", "sg"], ["g"])]
    nodes += [N("Reshape", ["g", "s_bsc"], ["hs"]), N("MatMul", ["hs", "wqkv"], ["qkv0"]),
              N("Reshape", ["qkv0", "s_packed"], ["qkv"])]
    if fused:
        nodes += [N("MultiHeadAttention", ["qkv"], ["att"], domain=MS, num_heads=heads)]
    else:
        init["scale"] = np.array(1 / np.sqrt(hd), np.float32)
        nodes += [N("Split", ["qkv"], ["q0", "k0", "v0"], axis=3)]
        for p in "qkv":
            nodes += [N("Squeeze", [f"{p}0", "ax3"], [f"{p}1"]),
                      N("Transpose", [f"{p}1"], [f"{p}2"], perm=[0, 2, 1, 3])]
        init["ax3"] = np.array([3], np.int64)
        nodes += [N("Transpose", ["k2"], ["kt"], perm=[0, 1, 3, 2]),
                  N("MatMul", ["q2", "kt"], ["sc0"]), N("Mul", ["sc0", "scale"], ["sc"]),
                  N("Softmax", ["sc"], ["p"], axis=-1), N("MatMul", ["p", "v2"], ["o0"]),
                  N("Transpose", ["o0"], ["o1"], perm=[0, 2, 1, 3]),
                  N("Reshape", ["o1", "s_bsc"], ["att"])]
    nodes += [N("MatMul", ["att", "wo"], ["proj"])]
    if fused:
        nodes += [N("BiasSplitGelu", ["proj", "bias"], ["y"], domain=MS)]
    else:
        init["sqrt2"], init["one"] = np.array(np.sqrt(2), np.float32), np.array(1, np.float32)
        init["halfc"] = np.array(0.5, np.float32)
        nodes += [N("Add", ["proj", "bias"], ["pb"]),
                  N("Split", ["pb", "half"], ["left", "right"], axis=-1),
                  N("Div", ["right", "sqrt2"], ["r1"]), N("Erf", ["r1"], ["r2"]),
                  N("Add", ["r2", "one"], ["r3"]), N("Mul", ["right", "r3"], ["r4"]),
                  N("Mul", ["r4", "halfc"], ["gelu"]), N("Mul", ["left", "gelu"], ["y"])]
    inits = [helper.make_tensor(k, helper.np_dtype_to_tensor_dtype(np.asarray(v).dtype),
                                np.shape(v), np.asarray(v).reshape(-1).tolist())
             for k, v in {**init, **{k: np.array(v, np.int64) for k, v in consts.items()}}.items()]
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(nodes, "unet_block", [vi("x", 1, [b, h, w, c])],
                              [vi("y", 1, [b, s, c])], inits)
    model = helper.make_model(graph, ir_version=IR, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    return model, (b, h, w, c)


def test_an_olive_style_unet_block_matches_its_unfused_twin_on_onnx_runtime():
    fused, shape = _unet_block(True)
    twin, _ = _unet_block(False)
    x = np.random.default_rng(16).standard_normal(shape).astype(np.float32)
    (want,) = ort.InferenceSession(twin.SerializeToString(),
                                   providers=["CPUExecutionProvider"]).run(None, {"x": x})
    session = donnx.InferenceSession(fused)
    (got,) = session.run(None, {"x": x})
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()
    text = session.describe()
    assert "MEAN_VARIANCE_NORMALIZATION1" in text and "MULTIHEAD_ATTENTION" in text


# ---- com.microsoft.Attention ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("variant", ["plain", "lengths", "raw-mask", "unidirectional",
                                     "qkv-sizes", "bias"])
def test_contrib_attention_against_onnx_runtime(dtype, variant):
    rng = np.random.default_rng(17)
    b, s, d, n = 2, 5, 16, 4
    sizes = [16, 16, 8] if variant == "qkv-sizes" else [16, 16, 16]
    inputs = {"x": _rand(rng, (b, s, d), dtype), "w": _rand(rng, (d, sum(sizes)), dtype, 0.3),
              "bias": _rand(rng, (sum(sizes),), dtype, 0.1)}
    names = ["x", "w", "bias"]
    attrs = {"num_heads": n}
    if variant == "qkv-sizes":
        attrs["qkv_hidden_sizes"] = sizes
    if variant == "lengths":
        inputs["mask"] = np.array([5, 3], np.int32)
    if variant == "raw-mask":
        inputs["mask"] = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], np.int32)
    if "mask" in inputs:
        names.append("mask")
    if variant == "unidirectional":
        attrs["unidirectional"] = 1
    if variant == "bias":
        names += ["", "", "abias"]
        inputs["abias"] = _rand(rng, (1, n, s, s), dtype)
    node = helper.make_node("Attention", names, ["y"], domain=MS, **attrs)
    _check(node, inputs, ["y"], dtype)


# ---- EmbedLayerNormalization ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("segments", [True, False])
def test_embed_layer_normalization_against_onnx_runtime(dtype, segments):
    rng = np.random.default_rng(18)
    b, s, h, vocab = 2, 6, 16, 30
    inputs = {"ids": rng.integers(0, vocab, (b, s)).astype(np.int32),
              "seg": rng.integers(0, 2, (b, s)).astype(np.int32),
              "word": _rand(rng, (vocab, h), dtype), "pos": _rand(rng, (16, h), dtype),
              "segemb": _rand(rng, (2, h), dtype), "gamma": _rand(rng, (h,), dtype),
              "beta": _rand(rng, (h,), dtype),
              "mask": np.array([[1] * 6, [1, 1, 1, 1, 0, 0]], np.int32)}
    names = ["ids", "seg" if segments else "", "word", "pos", "segemb" if segments else "",
             "gamma", "beta", "mask"]
    inputs = {k: v for k, v in inputs.items() if k in names}
    node = helper.make_node("EmbedLayerNormalization", names, ["y", "mask_index", "sum"],
                            domain=MS, epsilon=1e-5)
    model = _model(node, inputs, ["y", "mask_index", "sum"], out_dtype=dtype)
    model.graph.output[1].type.tensor_type.elem_type = 6  # INT32
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, inputs)
    got = donnx.InferenceSession(model).run(None, inputs)
    np.testing.assert_array_equal(got[1], want[1])
    for g, w in ((got[0], want[0]), (got[2], want[2])):
        assert g.shape == w.shape and g.dtype == w.dtype
        assert np.abs(g.astype(np.float64) - w).max() <= TOL[dtype] * np.abs(w).max()

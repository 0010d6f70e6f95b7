"""ONNX Runtime's quantized com.microsoft operators (and ConvTransposeWithDynamicPads,
FusedMatMulActivation) lowered onto DML's operators, each compared with ONNX Runtime's CPU provider
on the same one-node model (FusedMatMulActivation, which only the DML provider's fusion makes,
against a float64 reference). Each runs wholly on DML (fallback disabled). Quantized results
equal ORT's, or differ by one quantization step where the two round a half differently."""
import numpy as np
import pytest
from onnx import TensorProto as T, helper, numpy_helper

import dmlsim as dml
import dmlsim.onnx as donnx

ort = pytest.importorskip("onnxruntime")
MS = "com.microsoft"


def _session(nodes, feeds, out_type, inits=()):
    ins = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
           for k, v in feeds.items()]
    g = helper.make_graph(nodes, "g", ins, [helper.make_tensor_value_info("y", out_type, None)],
                          list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid(MS, 1)])
    m.ir_version = 8
    o = donnx.SessionOptions()
    o.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    return m, donnx.InferenceSession(m, o)


def _check(nodes, feeds, out_type, inits=(), steps=0, rtol=1e-5):
    m, s = _session(nodes, feeds, out_type, inits)
    got = s.run(None, feeds)[0]
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())
    else:
        assert np.abs(got.astype(np.int64) - want).max() <= steps


rng = np.random.default_rng(0)


def u8(*s):
    return rng.integers(0, 255, s).astype(np.uint8)


def f32(*s):
    return rng.standard_normal(s).astype(np.float32)


def sc(v):
    return np.array(v, np.float32)


def test_matmul_integer_to_float():
    _check([helper.make_node("MatMulIntegerToFloat", ["a", "b", "as", "bs", "az", "bz", "bias"],
                             ["y"], domain=MS)],
           {"a": u8(2, 3, 8), "b": u8(8, 5), "as": sc(0.02),
            "bs": (rng.random(5) * 0.05).astype(np.float32), "az": np.array(7, np.uint8),
            "bz": u8(5), "bias": f32(5)}, T.FLOAT)


def test_matmul_integer_to_float_mixed_signedness_is_named():
    with pytest.raises(dml.HResultError) as e:
        _session([helper.make_node("MatMulIntegerToFloat", ["a", "b", "as", "bs"], ["y"],
                                   domain=MS, name="mm")],
                 {"a": u8(2, 8), "b": np.zeros((8, 5), np.int8), "as": sc(0.1), "bs": sc(0.1)},
                 T.FLOAT)
    assert e.value.hresult == dml.E_NOTIMPL and "A and B of one type" in e.value.message


def test_dynamic_quantize_matmul():
    _check([helper.make_node("DynamicQuantizeMatMul", ["a", "b", "bs", "bz", "bias"], ["y"],
                             domain=MS)],
           {"a": f32(4, 8), "b": u8(8, 5), "bs": sc(0.03), "bz": np.array(3, np.uint8),
            "bias": f32(5)}, T.FLOAT)


def test_qlinear_add_broadcasts():
    _check([helper.make_node("QLinearAdd", ["a", "as", "az", "b", "bs", "bz", "cs", "cz"], ["y"],
                             domain=MS)],
           {"a": u8(2, 3, 4), "as": sc(0.05), "az": np.array(100, np.uint8), "b": u8(3, 4),
            "bs": sc(0.02), "bz": np.array(30, np.uint8), "cs": sc(0.07),
            "cz": np.array(90, np.uint8)}, T.UINT8)


def test_qlinear_sigmoid():
    _check([helper.make_node("QLinearSigmoid", ["x", "xs", "xz", "ys", "yz"], ["y"], domain=MS)],
           {"x": rng.integers(-128, 127, (2, 6)).astype(np.int8), "xs": sc(0.05),
            "xz": np.array(3, np.int8), "ys": sc(1 / 256), "yz": np.array(-128, np.int8)},
           T.INT8)


def test_qlinear_concat():
    _check([helper.make_node("QLinearConcat", ["ys", "yz", "a", "as", "az", "b", "bs", "bz"],
                             ["y"], domain=MS, axis=1)],
           {"ys": sc(0.05), "yz": np.array(120, np.uint8), "a": u8(2, 3), "as": sc(0.04),
            "az": np.array(100, np.uint8), "b": u8(2, 2), "bs": sc(0.06),
            "bz": np.array(110, np.uint8)}, T.UINT8)


@pytest.mark.parametrize("last", [0, 1], ids=["nchw", "channels_last"])
@pytest.mark.parametrize("pads", [[0, 0, 0, 0], [1, 1, 1, 1]], ids=["valid", "padded"])
def test_qlinear_average_pool(last, pads):
    x = u8(1, 3, 5, 6)
    _check([helper.make_node("QLinearAveragePool", ["x", "xs", "xz", "ys", "yz"], ["y"],
                             domain=MS, kernel_shape=[3, 3], pads=pads, channels_last=last)],
           {"x": np.ascontiguousarray(x.transpose(0, 2, 3, 1)) if last else x, "xs": sc(0.05),
            "xz": np.array(100, np.uint8), "ys": sc(0.04), "yz": np.array(90, np.uint8)},
           T.UINT8, steps=1)


def test_qlinear_global_average_pool():
    _check([helper.make_node("QLinearGlobalAveragePool", ["x", "xs", "xz", "ys", "yz"], ["y"],
                             domain=MS)],
           {"x": u8(1, 3, 6, 6), "xs": sc(0.05), "xz": np.array(100, np.uint8), "ys": sc(0.04),
            "yz": np.array(90, np.uint8)}, T.UINT8, steps=1)


def test_qattention():
    b, s, d = 2, 3, 8
    _check([helper.make_node("QAttention", ["x", "w", "bias", "xs", "ws", "", "xz", "wz"], ["y"],
                             domain=MS, num_heads=2)],
           {"x": u8(b, s, d), "w": u8(d, 3 * d), "bias": f32(3 * d), "xs": sc(0.02),
            "ws": sc(0.01), "xz": np.array(128, np.uint8), "wz": np.array(128, np.uint8)},
           T.FLOAT, rtol=1e-5)


def test_conv_transpose_with_dynamic_pads():
    _check([helper.make_node("ConvTransposeWithDynamicPads", ["x", "w", "p", "b"], ["y"],
                             domain=MS, strides=[2, 2])],
           {"x": f32(1, 2, 4, 4), "w": f32(2, 3, 3, 3), "b": f32(3)}, T.FLOAT,
           inits=[numpy_helper.from_array(np.array([1, 1, 0, 0], np.int64), "p")])


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-5), (np.float16, 1e-2)],
                         ids=["fp32", "fp16"])
def test_fused_matmul_activation_against_float64(dtype, tol):
    a, b = f32(2, 3, 4).astype(dtype), f32(2, 4, 5).astype(dtype)
    _, s = _session([helper.make_node("FusedMatMulActivation", ["a", "b"], ["y"], domain=MS,
                                      alpha=0.5, activation="LeakyRelu",
                                      activation_alpha=0.2)], {"a": a, "b": b},
                    helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))
    z = 0.5 * (a.astype(np.float64) @ b.astype(np.float64))
    want = np.where(z > 0, z, 0.2 * z)
    np.testing.assert_allclose(s.run(None, {"a": a, "b": b})[0], want, rtol=tol,
                               atol=tol * np.abs(want).max())
    (row,) = s.placement().rows
    assert row.device == "DML"


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-5), (np.float16, 1e-2)],
                         ids=["fp32", "fp16"])
def test_nhwc_conv_is_conv_in_nhwc(dtype, tol):
    """NhwcConv against ORT's float32 Conv on the transposed tensors (ORT's CPU has no
    NhwcConv); FLOAT16 within 1e-2 of the output's scale."""
    x, w, b = (f32(1, 6, 7, 4).astype(dtype), f32(6, 3, 3, 2).astype(dtype),
               f32(6).astype(dtype))
    _, s = _session([helper.make_node("NhwcConv", ["x", "w", "b"], ["y"], domain=MS, group=2,
                                      pads=[1, 1, 1, 1], strides=[2, 1])],
                    {"x": x, "w": w, "b": b}, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))
    conv = helper.make_model(helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["y"], group=2, pads=[1, 1, 1, 1],
                          strides=[2, 1])], "c",
        [helper.make_tensor_value_info(n, T.FLOAT, None) for n in "xwb"],
        [helper.make_tensor_value_info("y", T.FLOAT, None)]),
        opset_imports=[helper.make_opsetid("", 17)])
    conv.ir_version = 8
    f = np.float32
    want = ort.InferenceSession(conv.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x.transpose(0, 3, 1, 2).astype(f), "w": w.transpose(0, 3, 1, 2).astype(f),
               "b": b.astype(f)})[0].transpose(0, 2, 3, 1)
    got = s.run(None, {"x": x, "w": w, "b": b})[0]
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())

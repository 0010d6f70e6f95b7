"""dmlsim.onnx: ONNX's backend node tests through the Backend (tests/onnx_node_tests.txt:
two per lowered operator; tools/onnx_conformance.py runs all of them), three whole models
against ONNX Runtime's CPU provider, the CLI, and the errors."""
from pathlib import Path

import numpy as np
import onnx
import onnx.backend.test
import pytest
from onnx import TensorProto, helper, numpy_helper

import dmlsim as dml
import dmlsim.onnx as donnx
from dmlsim import cli

ort = pytest.importorskip("onnxruntime")

NODE_TESTS = Path(__file__).with_name("onnx_node_tests.txt").read_text().split()
_bt = onnx.backend.test.BackendTest(donnx.Backend, __name__)
for _name in NODE_TESTS:
    _bt.include(rf"^{_name}_cpu$")
globals().update(_bt.test_cases)


def test_the_node_test_list_covers_every_lowered_operator():
    from onnx.backend.test.runner import load_model_tests
    ops = set()
    for case in load_model_tests(kind="node"):
        if case.name in NODE_TESTS:
            ops |= {n.op_type for n in case.model.graph.node}
    missing = set(donnx.supported_operators()) - ops - {"ReduceLogSumExp"}  # float64 only
    assert not missing, sorted(missing)


# ---- whole models against ONNX Runtime --------------------------------------------------------

def _init(rng, name, shape, scale=0.3):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def _model(nodes, inputs, outputs, inits, opset=17):
    return helper.make_model(helper.make_graph(nodes, "m", inputs, outputs, inits),
                             opset_imports=[helper.make_opsetid("", opset)])


def _vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def mlp():
    rng = np.random.default_rng(1)
    inits = [_init(rng, "w1", (16, 32)), _init(rng, "b1", (32,)), _init(rng, "w2", (32, 10)),
             _init(rng, "b2", (10,))]
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"]),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Gemm", ["r", "w2", "b2"], ["z"]),
             helper.make_node("Softmax", ["z"], ["y"], axis=1)]
    return _model(nodes, [_vi("x", [8, 16])], [_vi("y", [8, 10])], inits), (8, 16)


def cnn():
    rng = np.random.default_rng(2)
    inits = [_init(rng, "w1", (8, 3, 3, 3)), _init(rng, "c1", (8,)),
             numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "scale"),
             _init(rng, "bias", (8,)), _init(rng, "mean", (8,)),
             numpy_helper.from_array(rng.uniform(0.5, 2, 8).astype(np.float32), "var"),
             _init(rng, "w2", (16, 8, 3, 3)), _init(rng, "w3", (16, 10)), _init(rng, "b3", (10,))]
    nodes = [helper.make_node("Conv", ["x", "w1", "c1"], ["a"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["a", "scale", "bias", "mean", "var"], ["b"]),
             helper.make_node("Relu", ["b"], ["c"]),
             helper.make_node("MaxPool", ["c"], ["d"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["d", "w2"], ["e"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["e"], ["f"]),
             helper.make_node("GlobalAveragePool", ["f"], ["g"]),
             helper.make_node("Flatten", ["g"], ["h"]),
             helper.make_node("Gemm", ["h", "w3", "b3"], ["z"]),
             helper.make_node("Softmax", ["z"], ["y"], axis=-1)]
    return _model(nodes, [_vi("x", [2, 3, 16, 16])], [_vi("y", [2, 10])], inits), (2, 3, 16, 16)


def transformer():
    """LayerNorm -> Q, K, V MatMuls -> 4 heads (Reshape, Transpose) -> scaled Softmax attention
    -> output projection + residual -> LayerNorm -> MLP (Relu) + residual."""
    rng = np.random.default_rng(3)
    b, s, d, h = 2, 8, 32, 4
    const = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
             (("heads", [b, s, h, d // h]), ("flat", [b, s, d]))]
    inits = const + [numpy_helper.from_array(np.ones(d, np.float32), "g1"),
                     numpy_helper.from_array(np.zeros(d, np.float32), "z1"),
                     numpy_helper.from_array(np.array(1 / np.sqrt(d // h), np.float32), "k")]
    inits += [_init(rng, n, (d, d)) for n in ("wq", "wk", "wv", "wo")]
    inits += [_init(rng, "w1", (d, 2 * d)), _init(rng, "w2", (2 * d, d))]
    N = helper.make_node
    nodes = [N("LayerNormalization", ["x", "g1", "z1"], ["n1"], axis=-1)]
    for p in "qkv":
        nodes += [N("MatMul", ["n1", f"w{p}"], [f"{p}0"]),
                  N("Reshape", [f"{p}0", "heads"], [f"{p}1"]),
                  N("Transpose", [f"{p}1"], [f"{p}2"], perm=[0, 2, 1, 3])]
    nodes += [N("Transpose", ["k2"], ["kt"], perm=[0, 1, 3, 2]),
              N("MatMul", ["q2", "kt"], ["s0"]), N("Mul", ["s0", "k"], ["s1"]),
              N("Softmax", ["s1"], ["p"], axis=-1), N("MatMul", ["p", "v2"], ["o0"]),
              N("Transpose", ["o0"], ["o1"], perm=[0, 2, 1, 3]),
              N("Reshape", ["o1", "flat"], ["o2"]), N("MatMul", ["o2", "wo"], ["o3"]),
              N("Add", ["o3", "x"], ["r1"]),
              N("LayerNormalization", ["r1", "g1", "z1"], ["n2"], axis=-1),
              N("MatMul", ["n2", "w1"], ["m1"]), N("Relu", ["m1"], ["m2"]),
              N("MatMul", ["m2", "w2"], ["m3"]), N("Add", ["m3", "r1"], ["y"])]
    return _model(nodes, [_vi("x", [b, s, d])], [_vi("y", [b, s, d])], inits), (b, s, d)


@pytest.mark.parametrize("build", [mlp, cnn, transformer], ids=["mlp", "cnn", "transformer"])
def test_models_match_onnx_runtime(build):
    model, shape = build()
    x = np.random.default_rng(9).standard_normal(shape).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    (got,) = donnx.prepare(model).run(None, {"x": x})
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-5)


def test_activations_fold_into_their_producers():
    model, _ = cnn()
    text = donnx.prepare(model).describe()
    assert text.count("DML_OPERATOR_CONVOLUTION") == 2
    assert "ACTIVATION_RELU" not in text  # both Relus are FusedActivations
    assert "DML_OPERATOR_BATCH_NORMALIZATION" in text and "DML_OPERATOR_MAX_POOLING2" in text


# ---- errors -----------------------------------------------------------------------------------

def test_dynamic_shapes_unlowered_operators_and_runtime_attributes_are_named():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])
    m = _model([helper.make_node("Relu", ["x"], ["y"])], [x], [_vi("y", ["n", 4])], [])
    with pytest.raises(dml.HResultError) as e:
        donnx.prepare(m)
    assert e.value.hresult == dml.E_INVALIDARG
    assert "value 'x' has a dynamic dimension 'n'" in e.value.message
    m = _model([helper.make_node("Einsum", ["x", "x"], ["y"], name="e1", equation="ij,ij->i")],
               [_vi("x", [2, 2])], [_vi("y", [2])], [])
    with pytest.raises(dml.HResultError) as e:
        donnx.prepare(m)
    assert e.value.hresult == dml.E_NOTIMPL
    assert e.value.message == ("dmlsim.onnx: node 0 'e1' (Einsum): no lowering in dmlsim.onnx "
                               "for Einsum")
    shape = helper.make_tensor_value_info("s", TensorProto.INT64, [2])
    m = _model([helper.make_node("Reshape", ["x", "s"], ["y"], name="r")],
               [_vi("x", [2, 2]), shape], [_vi("y", [4, 1])], [])
    with pytest.raises(dml.HResultError) as e:
        donnx.prepare(m)
    assert "node 0 'r' (Reshape): input 's' (shape) must be a constant" in e.value.message


def test_the_backend_binds_attribute_inputs_as_constants():
    """As ONNX Runtime's provider reads such inputs on the CPU: the shape fed is baked in."""
    shape = helper.make_tensor_value_info("s", TensorProto.INT64, [2])
    m = _model([helper.make_node("Reshape", ["x", "s"], ["y"])],
               [_vi("x", [2, 3]), shape], [_vi("y", [3, 2])], [])
    rep = donnx.Backend.prepare(m)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y,) = rep.run([x, np.array([3, 2], np.int64)])
    np.testing.assert_array_equal(y, x.reshape(3, 2))


# ---- the command line -------------------------------------------------------------------------

def test_cli_lower_and_run(tmp_path, capsys):
    model, shape = mlp()
    path = tmp_path / "mlp.onnx"
    onnx.save(model, path)
    assert cli.main(["lower", str(path)]) == 0
    out = capsys.readouterr().out
    assert "DML_OPERATOR_GEMM" in out and "inputs: x [8, 16] float32" in out
    x = np.ones(shape, np.float32)
    np.save(tmp_path / "x.npy", x)
    assert cli.main(["run", str(path), "--input", f"x={tmp_path / 'x.npy'}", "--output",
                     str(tmp_path)]) == 0
    y = np.load(tmp_path / "y.npy")
    np.testing.assert_allclose(y.sum(axis=1), np.ones(8), rtol=1e-5)

"""dmlsim.onnx: ONNX's backend node tests through the Backend (tests/onnx_node_tests.txt:
two per lowered operator, their data in tests/models/onnx_node_tests.npz from
tools/make_onnx_node_data.py; tools/onnx_conformance.py runs all of them), three whole models
against ONNX Runtime's CPU provider, the CLI, and the errors."""
import importlib.util
import json
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


class DmlOnly(donnx.Backend):
    """Every listed node test runs wholly on DML: a node placed on the CPU fails it (ORT's
    session.disable_cpu_ep_fallback), so none of them moves to the CPU unnoticed."""

    sess_options = donnx.SessionOptions()
    sess_options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")


# the listed tests' models and data, as onnx's generate-data writes them
# (tools/make_onnx_node_data.py; generating them here cost every worker 9.5 s of CPU)
with np.load(Path(__file__).with_name("models") / "onnx_node_tests.npz") as _z:
    NODE_DATA = {k: _z[k].tobytes() for k in _z.files}
NODE_CASES = json.loads(NODE_DATA["cases.json"])


def _node_tensors(name, kind):
    found, i = [], 0
    while f"{name}/{kind}_{i}.pb" in NODE_DATA:
        found.append(numpy_helper.to_array(onnx.load_tensor_from_string(
            NODE_DATA[f"{name}/{kind}_{i}.pb"])))
        i += 1
    return found


@pytest.mark.parametrize("name", NODE_TESTS)
def test_onnx_node(name):
    """ONNX's backend node test ``name`` as onnx's BackendTest runs it (its model through
    ``Backend.prepare``, its data set through ``run``, compared by
    ``BackendTest.assert_similar_outputs`` at the test's own tolerances), wholly on DML."""
    model = onnx.load_model_from_string(NODE_DATA[f"{name}/model.onnx"])
    outputs = list(DmlOnly.prepare(model, "CPU").run(_node_tensors(name, "input")))
    tol = NODE_CASES["tolerances"][name]
    onnx.backend.test.BackendTest.assert_similar_outputs(
        _node_tensors(name, "output"), outputs, rtol=tol["rtol"], atol=tol["atol"])


def test_the_node_test_list_covers_every_lowered_operator():
    ops = set()
    for name in NODE_TESTS:
        ops |= {n.op_type for n in onnx.load_model_from_string(
            NODE_DATA[f"{name}/model.onnx"]).graph.node}
    # com.microsoft operators, and SimplifiedLayerNormalization (ONNX Runtime's, registered in
    # the ONNX domain), have no ONNX node tests: tests/test_onnx_functions.py and
    # tests/test_onnx_contrib.py check them against ONNX Runtime; GlobalLpPool and MaxRoiPool
    # have none either (tests/test_onnx_partition.py checks them against ONNX Runtime)
    onnx_ops = {op for op in donnx.supported_operators() if "." not in op}
    missing = onnx_ops - ops - {"ReduceLogSumExp", "SimplifiedLayerNormalization",
                                "GlobalLpPool", "MaxRoiPool"}
    assert not missing, sorted(missing)
    assert sorted(NODE_CASES["tolerances"]) == sorted(NODE_TESTS)  # the data is the list's


# ---- whole models against ONNX Runtime --------------------------------------------------------

_spec = importlib.util.spec_from_file_location(
    "onnx_models", Path(__file__).resolve().parents[1] / "examples" / "onnx_models.py")
models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(models)
mlp, cnn, transformer = models.mlp, models.cnn, models.transformer
_model, _vi = models._model, models._vi


@pytest.mark.parametrize("build", [mlp, cnn, transformer], ids=["mlp", "cnn", "transformer"])
def test_models_match_onnx_runtime(build):
    model, shape = build()
    x = np.random.default_rng(9).standard_normal(shape).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    session = donnx.prepare(model)
    (got,) = session.run(None, {"x": x})
    assert session.placement().all_dml  # the example models run wholly on DML
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-5)


def test_activations_fold_into_their_producers():
    """The BatchNormalization after the first Conv folds into its weights (ORT's basic-level
    ConvBNFusion), the Relus into the Convs; ORT_DISABLE_ALL keeps both nodes of their own."""
    model, _ = cnn()
    text = donnx.prepare(model).describe()
    assert text.count("DML_OPERATOR_CONVOLUTION") == 2
    assert "ACTIVATION_RELU" not in text  # both Relus are FusedActivations
    assert "DML_OPERATOR_BATCH_NORMALIZATION" not in text and "MAX_POOLING2" in text
    opts = donnx.SessionOptions()
    opts.graph_optimization_level = donnx.GraphOptimizationLevel.ORT_DISABLE_ALL
    text = donnx.prepare(model, sess_options=opts).describe()
    assert "DML_OPERATOR_BATCH_NORMALIZATION" in text and "ACTIVATION_RELU" in text


# ---- errors -----------------------------------------------------------------------------------

def test_unlowered_operators_run_on_the_cpu_unless_fallback_is_disabled():
    m = _model([helper.make_node("Det", ["x"], ["y"], name="d1")],
               [_vi("x", [2, 2])], [_vi("y", [])], [])
    x = np.array([[2, 1], [1, 3]], np.float32)
    session = donnx.prepare(m)
    assert session.run(None, {"x": x})[0] == np.float32(5)
    row = session.placement().rows[0]
    assert (row.device, row.reason) == ("CPU", "ORT's DML EP registers no kernel for Det")
    opts = donnx.SessionOptions()
    opts.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    with pytest.raises(dml.HResultError) as e:
        donnx.InferenceSession(m, opts)
    assert e.value.hresult == dml.E_NOTIMPL
    assert e.value.message == ("dmlsim.onnx: node 0 'd1' (Det) would run on the CPU and "
                               "session.disable_cpu_ep_fallback is set: ORT's DML EP registers "
                               "no kernel for Det")
    # a Reshape's shape fed at run time is read on the CPU, as the DML provider reads it
    shape = helper.make_tensor_value_info("s", TensorProto.INT64, [2])
    m = _model([helper.make_node("Reshape", ["x", "s"], ["y"], name="r")],
               [_vi("x", [2, 2]), shape], [_vi("y", [4, 1])], [])
    session = donnx.prepare(m)
    x = np.arange(4, dtype=np.float32).reshape(2, 2)
    (y,) = session.run(None, {"x": x, "s": np.array([4, 1], np.int64)})
    np.testing.assert_array_equal(y, x.reshape(4, 1))
    assert session.constants == {"s"}


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


def test_cli_lower_and_run_a_model_with_dynamic_dimensions(tmp_path, capsys):
    path = tmp_path / "dyn.onnx"
    onnx.save(models.dynamic_transformer(), path)
    assert cli.main(["lower", str(path)]) == 1
    assert "dynamic dimensions (batch, seq); give each a size with --dim NAME=SIZE" in \
        capsys.readouterr().err
    assert cli.main(["lower", str(path), "--dim", "batch=1", "--dim", "seq=4"]) == 0
    assert "inputs: x [1, 4, 32] float32" in capsys.readouterr().out
    np.save(tmp_path / "x.npy", np.ones((2, 3, 32), np.float32))
    assert cli.main(["run", str(path), "--input", f"x={tmp_path / 'x.npy'}"]) == 0
    assert "y: float32 [2, 3, 32]" in capsys.readouterr().out

"""ONNX Runtime's partitioning in dmlsim.onnx: nodes DML cannot take run on the CPU between DML
partitions, the placement says where each node runs and why, copies are counted, and
``session.disable_cpu_ep_fallback`` turns a CPU node into an error naming it. Results are
compared with ONNX Runtime's CPU provider on the same file."""
import numpy as np
import pytest
from onnx import TensorProto as T, helper

import dmlsim as dml
import dmlsim.onnx as donnx

ort = pytest.importorskip("onnxruntime")


def _model(nodes, inputs, outputs, inits=(), opset=17, extra=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset), *extra])
    m.ir_version = 8
    return m


def _ort(m, feeds):
    return ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)


def _options(**entries):
    o = donnx.SessionOptions()
    for k, v in entries.items():
        o.add_session_config_entry(k.replace("__", "."), v)
    return o


def _det_in_the_middle():
    """Conv -> Relu -> (Det, which no DML operator computes) -> Mul; and a Sigmoid beside."""
    x = helper.make_tensor_value_info("x", T.FLOAT, [2, 1, 4, 4])
    w = helper.make_tensor("w", T.FLOAT, [3, 1, 2, 2], np.linspace(-1, 1, 12).tolist())
    s = helper.make_tensor("s", T.FLOAT, [1], [3.0])
    shape = helper.make_tensor("shape", T.INT64, [3], [2, 3, 9])
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Reshape", ["r", "shape"], ["r3"], name="reshape"),
             helper.make_node("Slice", ["r3", "st", "en", "ax"], ["sq"], name="slice"),
             helper.make_node("Det", ["sq"], ["d"], name="det"),
             helper.make_node("Mul", ["d", "s"], ["y"], name="mul"),
             helper.make_node("Sigmoid", ["x"], ["z"], name="sigmoid")]
    inits = [w, s, shape, helper.make_tensor("st", T.INT64, [2], [0, 0]),
             helper.make_tensor("en", T.INT64, [2], [3, 3]),
             helper.make_tensor("ax", T.INT64, [2], [1, 2])]
    return _model(nodes, [x], [helper.make_tensor_value_info("y", T.FLOAT, [2]),
                               helper.make_tensor_value_info("z", T.FLOAT, [2, 1, 4, 4])],
                  inits)


def test_an_unsupported_node_in_the_middle_runs_on_the_cpu_between_two_dml_partitions():
    m = _det_in_the_middle()
    x = np.random.default_rng(1).standard_normal((2, 1, 4, 4)).astype(np.float32)
    session = donnx.InferenceSession(m)
    got = session.run(None, {"x": x})
    for g, w in zip(got, _ort(m, {"x": x})):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    p = session.placement()
    where = {r.name: (r.device, r.step) for r in p.rows}
    assert where == {"conv": ("DML", 0), "relu": ("DML", 0), "reshape": ("DML", 0),
                     "slice": ("DML", 0), "det": ("CPU", 1), "mul": ("DML", 2),
                     "sigmoid": ("DML", 0)}
    assert [(k, kind) for k, kind, *_ in p.steps] == [(0, "DML"), (1, "CPU"), (2, "DML")]
    assert not p.all_dml
    det = next(r for r in p.rows if r.name == "det")
    assert det.reason == "ORT's DML EP registers no kernel for Det"
    conv = next(r for r in p.rows if r.name == "conv")
    assert conv.fused == "Relu 'relu' as FusedActivation"
    # x goes up once, the slice comes back for Det, Det's result goes up again, y and z come
    # back: 2 UPLOADs and 3 READBACKs through the faithful API
    t = p.transfers
    assert (t.uploads, t.readbacks) == (2, 3)
    assert t.upload_bytes == x.nbytes + 2 * 4 and t.readback_bytes == 2 * 9 * 4 + 2 * 4 + x.nbytes
    assert "det" in str(p) and "step 1: CPU" in str(p)


def test_disable_cpu_ep_fallback_names_the_node_and_why():
    with pytest.raises(dml.HResultError) as e:
        donnx.InferenceSession(_det_in_the_middle(),
                               _options(session__disable_cpu_ep_fallback="1"))
    assert e.value.hresult == dml.E_NOTIMPL
    assert e.value.message == ("dmlsim.onnx: node 4 'det' (Det) would run on the CPU and "
                               "session.disable_cpu_ep_fallback is set: ORT's DML EP registers "
                               "no kernel for Det")


def test_a_model_dml_takes_whole_is_one_partition():
    m = _model([helper.make_node("Relu", ["x"], ["y"], name="r")],
               [helper.make_tensor_value_info("x", T.FLOAT, [3])],
               [helper.make_tensor_value_info("y", T.FLOAT, [3])])
    s = donnx.InferenceSession(m, _options(session__disable_cpu_ep_fallback="1"))
    np.testing.assert_array_equal(s.run(None, {"x": np.array([-1, 0, 2], np.float32)})[0],
                                  [0, 0, 2])
    p = s.placement()
    assert p.all_dml and [r.device for r in p.rows] == ["DML"] and len(p.steps) == 1
    assert (p.transfers.uploads, p.transfers.readbacks) == (1, 1)


def test_types_dml_lacks_stay_on_the_cpu():
    """A bfloat16 Cast: DML has no BFLOAT16 (ORT's CPU provider runs it)."""
    m = _model([helper.make_node("Cast", ["x"], ["b"], to=T.BFLOAT16, name="to_bf16"),
                helper.make_node("Cast", ["b"], ["y"], to=T.FLOAT, name="back"),
                helper.make_node("Neg", ["y"], ["z"], name="neg")],
               [helper.make_tensor_value_info("x", T.FLOAT, [4])],
               [helper.make_tensor_value_info("z", T.FLOAT, [4])])
    x = np.array([1.0, 1.00390625, 3.14159, -2.5], np.float32)
    s = donnx.InferenceSession(m)
    np.testing.assert_array_equal(s.run(None, {"x": x})[0], _ort(m, {"x": x})[0])
    rows = {r.name: r for r in s.placement().rows}
    assert rows["to_bf16"].device == rows["back"].device == "CPU"
    assert "bfloat16 has no DML_TENSOR_DATA_TYPE" in rows["to_bf16"].reason
    assert rows["neg"].device == "DML"


def test_the_dml_ep_rules_place_what_ort_would():
    """Cast-23 (opset 23) has no DML EP kernel (registered at 6, 9, 13, 19, 21): dmlsim's rules
    keep it on DML and say so; the dml_ep rules put it on the CPU as ORT does."""
    m = _model([helper.make_node("Cast", ["x"], ["y"], to=T.INT32, name="c")],
               [helper.make_tensor_value_info("x", T.FLOAT, [3])],
               [helper.make_tensor_value_info("y", T.INT32, [3])], opset=23)
    x = np.array([1.5, -2.5, 7.0], np.float32)
    default = donnx.InferenceSession(m)
    strict = donnx.InferenceSession(m, _options(dmlsim__placement_rules="dml_ep"))
    for s in (default, strict):
        np.testing.assert_array_equal(s.run(None, {"x": x})[0], [1, -2, 7])
    (d,), (c,) = default.placement().rows, strict.placement().rows
    why = ("ORT's DML EP registers Cast at since-versions 6, 9, 13, 19, 21; this node is "
           "Cast-23 (opset 23)")
    assert (d.device, d.reason) == ("DML", f"ORT's DML EP would run it on the CPU: {why}")
    assert (c.device, c.reason) == ("CPU", why)


def test_the_dml_ep_type_constraints():
    from dmlsim._pythonic import onnx_dml_ep
    add = helper.make_node("Add", ["a", "b"], ["c"])
    assert onnx_dml_ep.verdict(add, 14, lambda n: T.FLOAT)[0]
    takes, why, _ = onnx_dml_ep.verdict(add, 14, lambda n: T.DOUBLE)
    assert not takes and why == "ORT's DML EP does not take Add with T = tensor(double) " \
                                "(input 'a')"
    assert onnx_dml_ep.registered("Reshape") == (5, 13, 14, 19, 21)
    assert onnx_dml_ep.registered("GroupQueryAttention", "com.microsoft") == (1,)
    assert onnx_dml_ep.registered("DynamicQuantizeLSTM", "com.microsoft") == ()
    assert not onnx_dml_ep.verdict(helper.make_node("NonZero", ["x"], ["y"]), 13,
                                   lambda n: T.FLOAT)[2]  # an EP kernel outside the graph


def test_com_microsoft_nodes_without_a_cpu_kernel_in_onnx_reference():
    """com.microsoft.Inverse: no DML EP kernel; onnx.reference lacks it, ORT's CPU has it."""
    m = _model([helper.make_node("Inverse", ["x"], ["y"], domain="com.microsoft", name="inv")],
               [helper.make_tensor_value_info("x", T.FLOAT, [2, 2])],
               [helper.make_tensor_value_info("y", T.FLOAT, [2, 2])],
               extra=[helper.make_opsetid("com.microsoft", 1)])
    x = np.array([[2, 1], [1, 3]], np.float32)
    with pytest.raises(dml.HResultError) as e:
        donnx.InferenceSession(m)
    assert e.value.hresult == dml.E_NOTIMPL
    assert "onnx.reference has no CPU kernel for node 'inv' (com.microsoft.Inverse)" in \
        e.value.message and "dmlsim.cpu_executor=onnxruntime" in e.value.message
    s = donnx.InferenceSession(m, _options(dmlsim__cpu_executor="onnxruntime"))
    np.testing.assert_allclose(s.run(None, {"x": x})[0], np.linalg.inv(x), rtol=1e-6)


@pytest.mark.parametrize("key, value", [("dmlsim.placement_rules", "ort"),
                                        ("dmlsim.cpu_executor", "numpy"),
                                        ("session.disable_cpu_ep_fallback", "yes")])
def test_bad_config_values_are_refused(key, value):
    with pytest.raises(dml.HResultError) as e:
        donnx.SessionOptions().add_session_config_entry(key, value)
    assert e.value.hresult == dml.E_INVALIDARG and key in e.value.message and \
        repr(value) in e.value.message


# ---- Einsum ------------------------------------------------------------------------------------

@pytest.mark.parametrize("eq, shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]), ("ij->ji", [(3, 4)]),
    ("ij->i", [(3, 4)]), ("i,j->ij", [(3,), (4,)]), ("ij,ij->", [(3, 4), (3, 4)]),
    ("abc,cd->abd", [(2, 3, 4), (4, 5)]), ("ijk,ikl->jl", [(2, 3, 4), (2, 4, 5)]),
    ("bij,jk", [(2, 3, 4), (4, 5)]), ("ab,bc->ca", [(3, 4), (4, 2)])])
def test_einsum_contractions_against_float64(eq, shapes):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    names = [f"x{k}" for k in range(len(arrays))]
    want = np.einsum(eq, *[a.astype(np.float64) for a in arrays])
    m = _model([helper.make_node("Einsum", names, ["y"], equation=eq, name="e")],
               [helper.make_tensor_value_info(n, T.FLOAT, a.shape)
                for n, a in zip(names, arrays)],
               [helper.make_tensor_value_info("y", T.FLOAT, None)])
    s = donnx.InferenceSession(m, _options(session__disable_cpu_ep_fallback="1"))
    got = s.run(None, dict(zip(names, arrays)))[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_einsum_forms_dml_does_not_take_run_on_the_cpu():
    m = _model([helper.make_node("Einsum", ["x"], ["y"], equation="ii->i", name="diag")],
               [helper.make_tensor_value_info("x", T.FLOAT, [3, 3])],
               [helper.make_tensor_value_info("y", T.FLOAT, [3])])
    x = np.arange(9, dtype=np.float32).reshape(3, 3)
    s = donnx.InferenceSession(m)
    np.testing.assert_array_equal(s.run(None, {"x": x})[0], [0, 4, 8])
    (row,) = s.placement().rows
    assert row.device == "CPU" and "repeated (diagonal) indices" in row.reason


# ---- fusions: only what each operator's FusedActivation accepts ---------------------------------

def _producers():
    rng = np.random.default_rng(5)

    def c(name, shape):
        return helper.make_tensor(name, T.FLOAT, shape, rng.standard_normal(shape).ravel())
    inits = [c("w", [2, 2, 2, 2]), c("g", [2, 3]), c("scale", [2]), c("bias", [2]),
             c("mean", [2]), helper.make_tensor("var", T.FLOAT, [2], [0.5, 2.0])]
    nodes = {"Conv": helper.make_node("Conv", ["x", "w"], ["p0"]),
             "ConvTranspose": helper.make_node("ConvTranspose", ["x", "w"], ["p1"]),
             "Gemm": helper.make_node("Gemm", ["m", "g"], ["p2"]),
             "MatMul": helper.make_node("MatMul", ["m", "g"], ["p3"]),
             "BatchNormalization": helper.make_node("BatchNormalization",
                                                    ["x", "scale", "bias", "mean", "var"], ["p4"]),
             "InstanceNormalization": helper.make_node("InstanceNormalization",
                                                       ["x", "scale", "bias"], ["p5"]),
             "Add": helper.make_node("Add", ["x", "x"], ["p6"])}
    return nodes, inits


@pytest.mark.parametrize("act", ["Relu", "Sigmoid", "Tanh", "Softsign", "Softplus", "LeakyRelu",
                                 "Elu", "Celu", "Selu", "HardSigmoid", "ThresholdedRelu",
                                 "Shrink", "HardSwish"])
def test_activations_fuse_only_where_dml_takes_them(act):
    """Each activation after each operator DML can fuse into: fused (the producer's row names
    it) exactly when the fused-activations guide lists its DML operator; the results equal ORT's
    CPU provider either way. HardSwish is never fused (DML refuses ACTIVATION_HARD_SWISH as a
    FusedActivation)."""
    from dmlsim._pythonic.onnx_rules import ACT_TABLE
    from dmlsim._schema.operators_generated import OPERATORS
    producers, inits = _producers()
    nodes, outs = [], []
    for k, (op, node) in enumerate(producers.items()):
        node.name = op
        nodes += [node, helper.make_node(act, [f"p{k}"], [f"y{k}"], name=f"{act}{k}")]
        outs.append(helper.make_tensor_value_info(f"y{k}", T.FLOAT, None))
    m = _model(nodes, [helper.make_tensor_value_info("x", T.FLOAT, [1, 2, 3, 3]),
                       helper.make_tensor_value_info("m", T.FLOAT, [4, 2])], outs, inits)
    rng = np.random.default_rng(6)
    feeds = {"x": rng.standard_normal((1, 2, 3, 3)).astype(np.float32),
             "m": rng.standard_normal((4, 2)).astype(np.float32)}
    s = donnx.InferenceSession(m)
    for g, w in zip(s.run(None, feeds), _ort(m, feeds)):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    usable = OPERATORS[f"DML_OPERATOR_ACTIVATION_{ACT_TABLE[act][0]}"].get(
        "usable_as_fused_activation", False)
    rows = {r.name: r for r in s.placement().rows}
    for k, op in enumerate(producers):
        assert bool(rows[op].fused) == usable, (op, act)
        assert rows[f"{act}{k}"].device == "DML"


# ---- lowerings the DML EP registers that the backend tests do not cover -------------------------

def test_global_lp_pool_and_max_roi_pool_against_onnx_runtime():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 6, 7)).astype(np.float32)
    rois = np.array([[0, 0, 0, 3, 3], [1, 1, 2, 6, 5], [0, 2, 1, 4, 6]], np.float32)
    xi = helper.make_tensor_value_info("x", T.FLOAT, x.shape)
    ri = helper.make_tensor_value_info("r", T.FLOAT, rois.shape)
    cases = [(helper.make_node("GlobalLpPool", ["x"], ["y"], p=3), {"x": x}, [xi]),
             (helper.make_node("MaxRoiPool", ["x", "r"], ["y"], pooled_shape=[2, 3],
                               spatial_scale=1.0), {"x": x, "r": rois}, [xi, ri])]
    for node, feeds, ins in cases:
        m = _model([node], ins, [helper.make_tensor_value_info("y", T.FLOAT, None)])
        s = donnx.InferenceSession(m, _options(session__disable_cpu_ep_fallback="1"))
        np.testing.assert_allclose(s.run(None, feeds)[0], _ort(m, feeds)[0], rtol=1e-6)


def test_the_repo_models_run_wholly_on_dml():
    """DxDispatch's ONNX sample models (tests/models/onnx_*.onnx) with fallback disabled."""
    from pathlib import Path
    models = Path(__file__).with_name("models")
    gemm = donnx.InferenceSession(models / "onnx_gemm.onnx",
                                  _options(session__disable_cpu_ep_fallback="1"))
    feeds = {a.name: np.ones([d if isinstance(d, int) else 2 for d in a.shape],
                             np.float32) for a in gemm.get_inputs()}
    gemm.run(None, feeds)
    assert gemm.placement().all_dml
    dyn = donnx.InferenceSession(models / "onnx_dynamic_shapes.onnx",
                                 _options(session__disable_cpu_ep_fallback="1"))
    feeds = {a.name: np.ones([d if isinstance(d, int) else 3 for d in a.shape], np.float32)
             for a in dyn.get_inputs()}
    dyn.run(None, feeds)
    assert dyn.placement().all_dml


def test_nonzero_runs_on_dml_with_its_count_read_back():
    """NonZero as ORT's DML EP runs it: NONZERO_COORDINATES, the count read back, the rows
    sliced by a partition planned per count (an empty result stays on the CPU)."""
    m = _model([helper.make_node("NonZero", ["x"], ["y"], name="nz")],
               [helper.make_tensor_value_info("x", T.FLOAT, [2, 3])],
               [helper.make_tensor_value_info("y", T.INT64, None)])
    s = donnx.InferenceSession(m)
    for x in (np.array([[1, 0, 2], [0, 3, 0]], np.float32),
              np.array([[0, 0, 0], [0, 0, 5]], np.float32), np.zeros((2, 3), np.float32),
              np.array([[1, 0, 2], [0, 3, 0]], np.float32)):
        got = s.run(None, {"x": x})[0]
        np.testing.assert_array_equal(got, np.array(np.nonzero(x), np.int64))
        assert got.dtype == np.int64
    rows = {r.name: r for r in s.placement().rows}
    assert rows["nz/coordinates"].device == "DML" and rows["nz/coordinates"].reason == ""
    assert rows["nz/rows"].device == "DML" and rows["nz/rows"].reason.startswith(
        "planned per run (reads 'nz/n' back at run time")
    assert [kind for _, kind, *_ in s.placement().steps] == ["DML", "DML"]

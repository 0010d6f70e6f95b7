"""dmlsim.onnx.InferenceSession: ONNX Runtime's Python session API (written from ORT's API docs:
NodeArg, SessionOptions, run), dynamic dimensions bound when the feeds arrive, one plan per
input signature in a bounded LRU cache, and ORT's free-dimension overrides. Compared with ONNX
Runtime's CPU provider on the same files."""
import gc
import importlib.util
import json
from pathlib import Path

import jax
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import dmlsim as dml
import dmlsim.onnx as donnx
from helpers import llm_feeds

ort = pytest.importorskip("onnxruntime")

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("onnx_models", ROOT / "examples" / "onnx_models.py")
models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(models)
LLM = ROOT / "tests" / "models" / "genai" / "llama-fp16"
IR = 10  # an IR version every supported ONNX Runtime reads (1.30 stops at 13)


def _ort(model):
    data = model if isinstance(model, (str, Path)) else model.SerializeToString()
    return ort.InferenceSession(str(data) if isinstance(data, Path) else data,
                                providers=["CPUExecutionProvider"])


def _tiny(dims=("seq", 8), denotation=None):
    """x [seq, 8] -> MatMul(w) -> Relu -> y, and a second output z = x + 1."""
    w = numpy_helper.from_array(np.arange(64, dtype=np.float32).reshape(8, 8) / 64, "w")
    one = numpy_helper.from_array(np.float32(1), "one")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(dims))
    if denotation:
        x.type.tensor_type.shape.dim[0].denotation = denotation
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"]),
             helper.make_node("Add", ["x", "one"], ["z"])]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(dims)) for n in "yz"]
    m = helper.make_model(helper.make_graph(nodes, "tiny", [x], outs, [w, one]),
                          opset_imports=[helper.make_opsetid("", 17)], ir_version=IR)
    m.producer_name, m.model_version, m.doc_string = "dmlsim-tests", 7, "a tiny model"
    helper.set_model_props(m, {"author": "dmlsim"})
    return m


def _rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2 ** 20


# ---- dynamic dimensions -----------------------------------------------------------------------

def test_a_transformer_with_symbolic_batch_and_seq_matches_onnx_runtime_at_three_shapes():
    model = models.dynamic_transformer()
    session, want = donnx.InferenceSession(model), _ort(model)
    assert session.get_inputs()[0].shape == ["batch", "seq", 32]
    rng = np.random.default_rng(4)
    for shape in [(1, 5, 32), (2, 8, 32), (3, 13, 32)]:
        x = rng.standard_normal(shape).astype(np.float32)
        (got,) = session.run(None, {"x": x})
        assert got.shape == shape and got.dtype == np.float32
        np.testing.assert_allclose(got, want.run(None, {"x": x})[0], rtol=1e-4, atol=2e-5)
    assert session.plan_cache_info() == donnx.PlanCacheInfo(0, 3, 0, 3, 16)


def test_paddle_style_free_dimensions_a_negative_size_and_question_marks():
    """paddle2onnx declares a free batch as dim_value -1 and every other free dimension as
    dim_param "?" (PaddleOCR's classifier: x [-1, 3, "?", "?"]). ONNX Runtime reads -1 as free
    and checks no symbol, so "?" may be 48 in one place and 192 in the next."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 3, "?", "?"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [-1, 3])
    nodes = [helper.make_node("ReduceMax", ["x"], ["y"], axes=[2, 3], keepdims=0)]
    model = helper.make_model(helper.make_graph(nodes, "paddle", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 17)], ir_version=IR)
    session, want = donnx.InferenceSession(model), _ort(model)
    assert session.get_inputs()[0].shape == want.get_inputs()[0].shape == [None, 3, "?", "?"]
    v = np.arange(6 * 3 * 4 * 10, dtype=np.float32).reshape(6, 3, 4, 10) % 17
    (got,) = session.run(None, {"x": v})
    np.testing.assert_array_equal(got, want.run(None, {"x": v})[0])
    np.testing.assert_array_equal(got, v.max(axis=(2, 3)))


def test_the_plan_cache_is_bounded_and_a_cached_shape_compiles_nothing():
    opts = donnx.SessionOptions()
    opts.plan_cache_size = 8
    session = donnx.InferenceSession(_tiny(), opts)
    compiles = []

    def listen(event, duration, **kw):
        if event == "/jax/core/compile/backend_compile_duration":
            compiles.append(event)
    x = np.ones((3, 8), np.float32)
    for _ in range(3):  # the first run goes record by record, the second compiles the list
        session.run(None, {"x": x})
    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        (y, z) = session.run(None, {"x": x})
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    assert compiles == [] and session.plan_cache_info().hits == 3
    np.testing.assert_array_equal(z, x + 1)
    rss = {}
    for n in range(1, 51):  # 50 lengths through a bound of 8 plans
        session.run(None, {"x": np.full((n, 8), 0.5, np.float32)})
        if n in (35, 50):
            gc.collect()
            rss[n] = _rss_mib()
    info = session.plan_cache_info()
    assert (info.currsize, info.maxsize) == (8, 8) and info.evictions == 50 - 8
    # flat once the bound is reached: ~0.2 MiB a length (JAX's own tracing caches); each
    # length kept ~3 MiB of copy programs for ever before the per-size programs were bounded
    assert rss[50] - rss[35] < 12, rss


def test_a_broadcast_initializer_is_bound_at_its_own_size():
    """An initializer an element-wise node broadcasts is one OWNED_BY_DML input read through
    zero strides, as ONNX Runtime's DML provider binds it: the persistent resource holds B's
    384 floats at every length of x (a copy per row of x made it grow with the sequence), and
    the sum is float32's own, bit for bit."""
    b = (np.arange(384, dtype=np.float32) - 100) / 7
    g = helper.make_graph([helper.make_node("Add", ["x", "B"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 384])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 384])],
                          [numpy_helper.from_array(b, "B")])
    session = donnx.InferenceSession(
        helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    rng = np.random.default_rng(3)
    for n in (1, 1000):
        x = rng.standard_normal((n, 384)).astype(np.float32)
        (y,) = session.run(None, {"x": x})
        assert y.view(np.uint32).tolist() == (x + b).view(np.uint32).tolist()
        plan = session.last_plan
        assert plan.compiled.GetBindingProperties().PersistentResourceSize == 384 * 4
        owned = [(t.sizes, t.strides, t.total_bytes) for _, _, t in plan._ins
                 if t is not None and t.owned_by_dml]
        assert owned == [((n, 384), (0 if n > 1 else 384, 1), 384 * 4)]


def test_values_a_desc_needs_are_read_from_the_feeds_and_key_the_plan():
    """A Reshape whose target is a graph input: read on the CPU, as the DML provider reads
    it; each value gets its own plan."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])
    s = helper.make_tensor_value_info("s", TensorProto.INT64, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    m = helper.make_model(helper.make_graph([helper.make_node("Reshape", ["x", "s"], ["y"])],
                                            "r", [x, s], [y]))
    session = donnx.InferenceSession(m)
    a = np.arange(12, dtype=np.float32)
    for target in ([3, 4], [4, 3], [3, 4], [2, -1]):
        (got,) = session.run(None, {"x": a, "s": np.array(target, np.int64)})
        np.testing.assert_array_equal(got, a.reshape(target))
    assert session.constants == {"s"}
    assert session.plan_cache_info()[:2] == (1, 3)


# ---- ORT's API --------------------------------------------------------------------------------

def test_sources_path_str_bytes_modelproto_and_external_data(tmp_path):
    m = _tiny()
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8)
    want = _ort(m).run(None, {"x": x})
    path = tmp_path / "tiny.onnx"
    external = onnx.ModelProto()
    external.CopyFrom(m)
    onnx.external_data_helper.convert_model_to_external_data(
        external, all_tensors_to_one_file=True, location="tiny.data", size_threshold=0)
    onnx.save_model(external, str(path))
    assert (tmp_path / "tiny.data").exists()
    for source in (m, m.SerializeToString(), str(path), path):
        got = donnx.InferenceSession(source).run(None, {"x": x})
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6)


def test_node_args_metadata_and_repr():
    session = donnx.InferenceSession(_tiny())
    (i,) = session.get_inputs()
    assert (i.name, i.type, i.shape) == ("x", "tensor(float)", ["seq", 8])
    assert [(o.name, o.type, o.shape) for o in session.get_outputs()] == \
        [("y", "tensor(float)", ["seq", 8]), ("z", "tensor(float)", ["seq", 8])]
    ref = _ort(_tiny())
    assert [(a.name, a.type, a.shape) for a in ref.get_inputs()] == [("x", "tensor(float)",
                                                                       ["seq", 8])]
    meta = session.get_modelmeta()
    assert (meta.producer_name, meta.graph_name, meta.description, meta.version,
            meta.custom_metadata_map) == ("dmlsim-tests", "tiny", "a tiny model", 7,
                                          {"author": "dmlsim"})
    text = repr(session)
    assert "x: tensor(float) ['seq', 8]" in text and "plans (0 of 16): none yet" in text
    session.run(None, {"x": np.ones((3, 8), np.float32)})
    assert "plans (1 of 16): x[3, 8]" in repr(session)


def test_output_selection_and_order():
    session = donnx.InferenceSession(_tiny())
    x = np.ones((2, 8), np.float32)
    y, z = session.run(None, {"x": x})
    z2, y2 = session.run(["z", "y"], {"x": x})
    (z3,) = session.run(["z"], {"x": x})
    np.testing.assert_array_equal(z, z2)
    np.testing.assert_array_equal(z, z3)
    np.testing.assert_array_equal(y, y2)
    assert session.run([], {"x": x})[1].shape == (2, 8)


@pytest.mark.parametrize("feed, words", [
    ({"x": np.ones((2, 8), np.float64)}, ["'x'", "tensor(double)", "tensor(float)"]),
    ({"x": np.ones((2, 8, 1), np.float32)}, ["rank", "'x'", "got 3", "expected 2"]),
    ({"x": np.ones((2, 5), np.float32)}, ["'x'", "index 1 got 5, expected 8"]),
    ({}, ["required inputs ['x'] are missing"]),
    ({"x": np.ones((2, 8), np.float32), "q": np.ones(1)}, ["invalid input name 'q'"]),
    ({"x": None}, ["input 'x' is None"]),
    ("x", ["input_feed is a str"]),
])
def test_wrong_feeds_are_invalid_arguments_naming_the_input(feed, words):
    session = donnx.InferenceSession(_tiny())
    with pytest.raises(dml.HResultError) as e:
        session.run(None, feed)
    assert e.value.hresult == dml.E_INVALIDARG
    assert all(w in e.value.message for w in words), e.value.message
    assert session.plan_cache_info().misses == 0  # nothing was planned


def test_wrong_output_names_and_lists_converted_as_ort_converts_them():
    session = donnx.InferenceSession(_tiny())
    x = [[0.5] * 8]  # a list takes the input's element type, as in ORT
    assert session.run(["y"], {"x": x})[0].dtype == np.float32
    for names in (["q"], "y", [3]):
        with pytest.raises(dml.HResultError) as e:
            session.run(names, {"x": x})
        assert e.value.hresult == dml.E_INVALIDARG


def test_free_dimension_overrides_by_name_and_by_denotation_plan_up_front():
    for how in ("name", "denotation"):
        opts = donnx.SessionOptions()
        if how == "name":
            opts.add_free_dimension_override_by_name("seq", 4)
            model = _tiny()
        else:
            opts.add_free_dimension_override_by_denotation("DATA_BATCH", 4)
            model = _tiny(denotation="DATA_BATCH")
        session = donnx.InferenceSession(model, opts)
        assert session.get_inputs()[0].shape == [4, 8]
        assert session.plan_cache_info().misses == 1  # planned in the constructor
        assert "DML_OPERATOR_GEMM" in session.describe()
        session.run(None, {"x": np.ones((4, 8), np.float32)})
        assert session.plan_cache_info()[:2] == (1, 1)
        with pytest.raises(dml.HResultError) as e:
            session.run(None, {"x": np.ones((3, 8), np.float32)})
        assert "index 0 got 3, expected 4" in e.value.message
    for bad in (0, -1, 2.0, "4", True, None):
        with pytest.raises(dml.HResultError) as e:
            donnx.SessionOptions().add_free_dimension_override_by_name("seq", bad)
        assert e.value.hresult == dml.E_INVALIDARG and "dim_value" in e.value.message


def test_graph_optimization_level_and_config_entries():
    opts = donnx.SessionOptions()
    opts.graph_optimization_level = donnx.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.add_session_config_entry("dmlsim.plan_cache_size", "2")
    opts.add_free_dimension_override_by_name("seq", 2)
    session = donnx.InferenceSession(_tiny(), opts)
    assert session.plan_cache_info().maxsize == 2
    assert "ACTIVATION_RELU" in session.describe()  # not fused into the GEMM
    opts2 = donnx.SessionOptions()
    opts2.add_free_dimension_override_by_name("seq", 2)
    assert "ACTIVATION_RELU" not in donnx.InferenceSession(_tiny(), opts2).describe()
    assert opts.get_session_config_entry("dmlsim.plan_cache_size") == "2"
    with pytest.raises(dml.HResultError):
        opts.add_session_config_entry("dmlsim.plan_cache_size", "0")


def test_a_dynamic_model_describes_its_last_plan():
    session = donnx.InferenceSession(_tiny())
    with pytest.raises(dml.HResultError) as e:
        session.describe()
    assert "dynamic dimensions ('seq')" in e.value.message
    session.run(None, {"x": np.ones((5, 8), np.float32)})
    assert "inputs: x [5, 8] float32" in session.describe()


@pytest.mark.parametrize("data", [b"", b"hello, this is text\n", b"\x89PNG\r\n\x1a\n" + bytes(40)])
def test_files_that_are_not_models_are_invalid_arguments(tmp_path, data):
    path = tmp_path / "broken.onnx"
    path.write_bytes(data)
    for source in (path, data):
        with pytest.raises(dml.HResultError) as e:
            donnx.InferenceSession(source)
        assert e.value.hresult == dml.E_INVALIDARG
    with pytest.raises(dml.HResultError) as e:
        donnx.InferenceSession(tmp_path / "missing.onnx")
    assert "no such file" in e.value.message
    with pytest.raises(dml.HResultError):
        donnx.InferenceSession(_tiny().SerializeToString()[:-9])


# ---- a language model built for DirectML by onnxruntime-genai's builder ------------------------

def test_a_genai_llm_for_directml_binds_its_dynamic_shapes_per_signature():
    """tests/models/genai/llama-fp16 (tools/make_tiny_llm.py): every input is dynamic
    (batch_size, sequence_length, total_sequence_length, past_sequence_length). Each prompt
    length and each total length is a signature of its own; nothing is read on the CPU
    (GroupQueryAttention's seqlens_k stays on the device; tests/test_onnx_contrib.py compares
    the numbers with ONNX Runtime)."""
    config = json.loads((LLM / "genai_config.json").read_text())
    assert config["model"]["decoder"]["num_key_value_heads"] == 2
    session = donnx.InferenceSession(LLM / "model.onnx")
    assert session.get_inputs()[0].shape == ["batch_size", "sequence_length"]
    assert session.plan_cache_info().misses == 0  # nothing static to plan up front
    for tokens in ([0, 5, 7, 9], [0, 5]):
        logits = session.run(["logits"], llm_feeds(tokens))[0]
        assert logits.shape == (1, len(tokens), 320) and logits.dtype == np.float16
    assert session.constants == set()
    assert session.plan_cache_info()[:2] == (0, 2)
    session.run(["logits"], llm_feeds([0, 5, 7, 9]))
    assert session.plan_cache_info()[:2] == (1, 2)


# ---- Gather with scalar indices (the silero-vad regression) ----------------------------------

def _node_vs_reference(op, data, idx, **attrs):
    node = helper.make_node(op, ["x", "i"], ["y"], **attrs)
    (got,) = donnx.Backend.run_node(node, [data, idx])
    vi = [helper.make_tensor_value_info("x", TensorProto.FLOAT, data.shape),
          helper.make_tensor_value_info("i", TensorProto.INT64, idx.shape)]
    model = helper.make_model(helper.make_graph(
        [node], "g", vi, [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)]))
    (want,) = ReferenceEvaluator(model).run(None, {"x": data, "i": idx})
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_gather_with_a_scalar_index(axis):
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    _node_vs_reference("Gather", data, np.array(1, np.int64), axis=axis)
    _node_vs_reference("Gather", data, np.array(-1, np.int64), axis=axis)


def test_scalar_results_of_gather_gather_elements_and_gather_nd():
    v = np.arange(5, dtype=np.float32) * 1.5
    _node_vs_reference("Gather", v, np.array(-2, np.int64))          # -> a scalar
    _node_vs_reference("GatherElements", v, np.array([3], np.int64))
    _node_vs_reference("GatherND", v, np.array([3], np.int64))       # -> a scalar
    _node_vs_reference("GatherND", np.arange(24, dtype=np.float32).reshape(2, 3, 4),
                       np.array([1, 2], np.int64))


def test_a_scalar_gather_inside_an_if_branch():
    """silero-vad's form: an If on a runtime condition whose branch gathers one row of a
    3-D state with a scalar index."""
    idx = numpy_helper.from_array(np.array(1, np.int64), "one")

    def branch(name, axis):
        return helper.make_graph([helper.make_node("Gather", ["state", "one"], [name],
                                                   axis=axis)], name, [],
                                 [helper.make_tensor_value_info(name, TensorProto.FLOAT, None)])
    node = helper.make_node("If", ["c"], ["y"], then_branch=branch("t", 0),
                            else_branch=branch("e", 0))
    vi = [helper.make_tensor_value_info("state", TensorProto.FLOAT, [2, "b", 4]),
          helper.make_tensor_value_info("c", TensorProto.BOOL, [])]
    model = helper.make_model(helper.make_graph(
        [node], "g", vi, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [idx]),
        opset_imports=[helper.make_opsetid("", 15)])
    state = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    (got,) = donnx.InferenceSession(model).run(None, {"state": state, "c": np.array(True)})
    np.testing.assert_array_equal(got, state[1])


def test_a_result_that_a_gemm_and_an_add_both_read_is_stored_once():
    """On a CPU, a node result that several nodes read, one of them not element-wise, is
    sealed by ``views.sealed_shared`` (XLA then stores it once instead of recomputing it in
    each reader: MiniLM's LayerNormalization chain), with the same bits as ``views.sealed``;
    a result that only element-wise nodes read (a HardSwish-like x * (x + 3)) is not."""
    import jax.numpy as jnp
    import onnxruntime as ort

    from dmlsim._core import views

    rng = np.random.default_rng(4)
    w = rng.standard_normal((8, 8)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(np.ones(8, np.float32), "g"),
             numpy_helper.from_array(np.zeros(8, np.float32), "b"),
             numpy_helper.from_array(np.float32(3), "three")]
    nodes = [helper.make_node("Add", ["x", "x"], ["r"]),
             helper.make_node("LayerNormalization", ["r", "g", "b"], ["n"], axis=-1),
             helper.make_node("MatMul", ["n", "W"], ["m"]),
             helper.make_node("Add", ["n", "m"], ["s"]),  # n: read by a GEMM and an ADD
             helper.make_node("Add", ["s", "three"], ["t"]),
             helper.make_node("Mul", ["s", "t"], ["y"])]  # s: read by an ADD and a MULTIPLY
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                     [4, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=IR)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    session = donnx.InferenceSession(model.SerializeToString())
    (got,) = session.run(None, {"x": x})
    core = session.last_plan.compiled._core
    assert {core.nodes[k].opdef.name for k, _ in core._stored_once()} == {
        "DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1"}
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # the same bits as the plain seal: every 16-bit word (signaling NaNs, denormals, -0 among
    # them) in each position of each width, and every byte
    zero = jnp.uint32(0)
    words = np.arange(65536, dtype=np.uint16)
    for dtype in (np.float32, np.float16, np.int8, np.uint64):
        n = np.dtype(dtype).itemsize // 2
        value = np.concatenate([np.roll(words, k) for k in range(max(n, 1))]).view(dtype)
        a = jax.jit(views.sealed_shared)(jnp.asarray(value), zero)
        b = jax.jit(views.sealed)(jnp.asarray(value), zero)
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes() == value.tobytes()
    # what the seal is for: XLA keeps the conditional, so a cheap producer read three times
    # (one of them a padding loop) is computed once, not copied into each reader
    def readers(v, z):
        s = views.sealed_shared(v * 2.5 + v, z)
        return s + 1, s - 3, jnp.pad(s, (1, 1))
    hlo = jax.jit(readers).lower(jnp.ones(64, jnp.float32), zero).compile().as_text()
    assert hlo.count(" conditional(") == 1 and hlo.count(" multiply(") == 1, hlo


def test_a_convolutions_input_is_stored_once():
    """A Conv asks to read its input stored (``cpu_stored_inputs``): the HardSwish-like chain
    before a depthwise Conv is stored once, not run inside the convolution's padding loop, and
    so is the Add before a 1x1 Conv; the Add inside the chain (read by one Mul) is not. The 1x1
    Conv's result (its Relu fused into it) before a 3x3 Conv, which XLA runs as a convolution
    reading NHWC, is stored channels last; the other two as they are (a tap walk and a product
    over channels read NCHW).
    Results as ONNX Runtime's."""
    import onnxruntime as ort

    rng = np.random.default_rng(6)
    inits = [numpy_helper.from_array(rng.standard_normal((4, 1, 3, 3)).astype(np.float32), "D"),
             numpy_helper.from_array(rng.standard_normal((4, 4, 1, 1)).astype(np.float32), "P"),
             numpy_helper.from_array(rng.standard_normal((4, 4, 3, 3)).astype(np.float32), "K"),
             numpy_helper.from_array(np.float32(3), "three")]
    nodes = [helper.make_node("Add", ["x", "three"], ["t"]),
             helper.make_node("Mul", ["x", "t"], ["h"]),  # read by the depthwise Conv
             helper.make_node("Conv", ["h", "D"], ["d"], group=4, pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["d"], ["r"]),
             helper.make_node("Add", ["r", "three"], ["u"]),  # read by the 1x1 Conv
             helper.make_node("Conv", ["u", "P"], ["p"]),
             helper.make_node("Relu", ["p"], ["v"]),  # read by the 3x3 Conv
             helper.make_node("Conv", ["v", "K"], ["y"], pads=[1, 1, 1, 1])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                     [1, 4, 5, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=IR)
    x = rng.standard_normal((1, 4, 5, 5)).astype(np.float32)
    session = donnx.InferenceSession(model.SerializeToString())
    (got,) = session.run(None, {"x": x})
    core = session.last_plan.compiled._core
    assert sorted((core.nodes[k].opdef.name, order)
                  for (k, _), order in core._stored_once().items()) == [
        ("DML_OPERATOR_CONVOLUTION", (0, 2, 3, 1)),
        ("DML_OPERATOR_ELEMENT_WISE_ADD", None), ("DML_OPERATOR_ELEMENT_WISE_MULTIPLY", None)]
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

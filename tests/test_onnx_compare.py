"""dmlsim.onnx.compare: planted divergences are found where they are planted, inherited error is
told apart from introduced error, integer and data-movement nodes report exactly 0."""
import importlib.util
import json
import time
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as T, helper, numpy_helper

import dmlsim as dml
import dmlsim.onnx as donnx
from dmlsim._pythonic.onnx_compare_ftz import flushed
from dmlsim._pythonic.onnx_compare_halfmm import half_accumulated
from dmlsim.cli import main

K = 4096


def _model(nodes, inputs, outputs, inits=()):
    m = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs, list(inits)),
                          opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _normalize():
    """x / sqrt(sum(x^2)) over 4096 FLOAT16 values: the ReduceSum is the long reduction."""
    nodes = [helper.make_node("Mul", ["x", "x"], ["sq"], name="square"),
             helper.make_node("ReduceSum", ["sq", "axes"], ["s"], name="sum", keepdims=1),
             helper.make_node("Sqrt", ["s"], ["r"], name="sqrt"),
             helper.make_node("Div", ["x", "r"], ["y"], name="normalize")]
    return _model(nodes, [helper.make_tensor_value_info("x", T.FLOAT16, [4, K])],
                  [helper.make_tensor_value_info("y", T.FLOAT16, [4, K])],
                  [numpy_helper.from_array(np.array([1], np.int64), "axes")])


# One large value, then 4,095 small ones (0.54 to 0.55): in FLOAT16 each small square (about
# 0.3) added to the running sum of the large one's lane (900, where FLOAT16's spacing is 0.5)
# rounds up, the absorption that half-precision accumulation suffers and FLOAT32 does not.
X = np.full((4, K), 0.55, np.float16) * \
    np.random.default_rng(0).uniform(0.98, 1.0, (4, K)).astype(np.float16)
X[:, 0] = 30


def test_a_reduction_that_diverges_only_with_half_precision_is_named():
    exact = donnx.compare(_normalize(), {"x": X})
    assert exact.first_divergent(ulp=1) is None  # FLOAT32 accumulation, one rounding: <= 0.5
    assert max(r.error_introduced for r in exact.rows) <= 0.5 + 1e-9
    half = donnx.compare(_normalize(), {"x": X}, half_precision=True)
    first = half.first_divergent(ulp=1)
    assert first is not None and first.name == "sum" and first.op_type == "ReduceSum"
    assert "<- first divergent" in half.table() and half.flags == 1


def test_inherited_error_is_told_apart_from_introduced_error():
    """Add(MatMul(x, w), b) cancels near zero: a large accumulated error that Relu and Reshape
    inherit (introduced exactly 0) and Add itself adds at most half a ULP to."""
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array((rng.standard_normal((64, 8)) * 0.1).astype(np.float16), "w")
    b = numpy_helper.from_array(rng.standard_normal(8).astype(np.float16), "b")
    shape = numpy_helper.from_array(np.array([2, 2, 8], np.int64), "shape")
    m = _model([helper.make_node("MatMul", ["x", "w"], ["mm"], name="matmul"),
                helper.make_node("Add", ["mm", "b"], ["a"], name="bias"),
                helper.make_node("Relu", ["a"], ["r"], name="relu"),
                helper.make_node("Reshape", ["r", "shape"], ["y"], name="reshape")],
               [helper.make_tensor_value_info("x", T.FLOAT16, [4, 64])],
               [helper.make_tensor_value_info("y", T.FLOAT16, [2, 2, 8])], [w, b, shape])
    x = rng.uniform(-1, 1, (4, 64)).astype(np.float16)
    rows = {r.name: r for r in donnx.compare(m, {"x": x}).rows}
    assert rows["relu"].error_introduced == 0 and rows["reshape"].error_introduced == 0
    assert rows["reshape"].max_ulp == rows["relu"].max_ulp > 0
    assert rows["bias"].error_introduced <= 0.5 and rows["matmul"].error_introduced <= 0.5


def _shrink_grow():
    """x * 1e-3 (FLOAT16: 0.01..0.04 become subnormals, below 6.1e-5) * 1024, then Relu."""
    nodes = [helper.make_node("Mul", ["x", "small"], ["t"], name="shrink"),
             helper.make_node("Mul", ["t", "big"], ["u"], name="grow"),
             helper.make_node("Relu", ["u"], ["y"], name="relu")]
    return _model(nodes, [helper.make_tensor_value_info("x", T.FLOAT16, [8])],
                  [helper.make_tensor_value_info("y", T.FLOAT16, [8])],
                  [numpy_helper.from_array(np.array(1e-3, np.float16), "small"),
                   numpy_helper.from_array(np.array(1024, np.float16), "big")])


def test_flushed_denormals_are_named_where_they_are_stored(tmp_path, capsys):
    """Default precision keeps FLOAT16 subnormals: every node within half an ULP, nothing named.
    With denormals flushed at node boundaries, 'shrink' stores its subnormal products as zero
    (introduced error far above 1 ULP, named first); 'grow' reads those zeros (its inputs flush
    too) and Relu, fed exact values, adds nothing."""
    x = np.array([0.01, 0.02, -0.03, 0.04, 1, 2, -3, 4], np.float16)
    keep = donnx.compare(_shrink_grow(), {"x": x})
    assert keep.mode == "default" and keep.first_divergent(1) is None
    assert max(r.error_introduced for r in keep.rows) <= 0.5
    flush = donnx.compare(_shrink_grow(), {"x": x}, flush_denormals=True)
    assert flush.mode == "default + flushed denormals"
    rows = {r.name: r for r in flush.rows}
    assert flush.first_divergent(1).name == "shrink" and rows["shrink"].error_introduced > 8
    assert rows["relu"].error_introduced == 0
    assert rows["relu"].max_rel_error == 1.0  # the small inputs came back as 0 (-0.0 for -0.03)
    import onnx
    onnx.save(_shrink_grow(), tmp_path / "m.onnx")
    np.save(tmp_path / "x.npy", x)
    assert main(["compare", str(tmp_path / "m.onnx"), "--input", f"x={tmp_path / 'x.npy'}",
                 "--flush-denormals", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["flush_denormals"] is True and data["rows"][0]["name"] == "shrink"


@pytest.mark.parametrize("dtype,elem", [(np.float16, T.FLOAT16), (np.float32, T.FLOAT)])
def test_the_flush_rewrite_keeps_signs_normals_and_specials(dtype, elem):
    """Subnormal inputs read as signed zeros, subnormal results stored as signed zeros; the
    smallest normal and infinities pass unchanged, bit for bit, and NaN stays NaN (run through
    DML)."""
    tiny = np.finfo(dtype).tiny
    m = _model([helper.make_node("Mul", ["x", "half"], ["y"], name="halve")],
               [helper.make_tensor_value_info("x", elem, [6])],
               [helper.make_tensor_value_info("y", elem, [6])],
               [numpy_helper.from_array(np.array(0.5, dtype), "half")])
    x = np.array([tiny / 4, -tiny / 4, 2 * tiny, -2 * tiny, np.nan, -np.inf], dtype)
    got = donnx.InferenceSession(flushed(m, {"x": elem, "y": elem, "half": elem})).run(
        None, {"x": x})[0]
    want = np.array([0.0, -0.0, tiny, -tiny, np.nan, -np.inf], dtype)
    assert np.isnan(got[4])  # a NaN's payload bits are the multiply's (0x7fff on an H200)
    assert np.delete(got, 4).tobytes() == np.delete(want, 4).tobytes()


def _long_matmul(k=2048):
    """MatMul over ``k`` positive FLOAT16 products, then a bias and Relu: the MatMul is the
    long reduction; the nodes after it inherit what it loses."""
    rng = np.random.default_rng(4)
    w = numpy_helper.from_array(rng.uniform(0, 1, (k, 8)).astype(np.float16), "w")
    b = numpy_helper.from_array(rng.uniform(-1, 1, 8).astype(np.float16), "b")
    return _model([helper.make_node("MatMul", ["x", "w"], ["mm"], name="matmul"),
                   helper.make_node("Add", ["mm", "b"], ["a"], name="bias"),
                   helper.make_node("Relu", ["a"], ["y"], name="relu")],
                  [helper.make_tensor_value_info("x", T.FLOAT16, [4, k])],
                  [helper.make_tensor_value_info("y", T.FLOAT16, [4, 8])], [w, b])


def test_a_long_matmul_that_diverges_only_with_half_accumulation_is_named(tmp_path, capsys):
    """DML's default and dmlsim's ALLOW_HALF_PRECISION_COMPUTATION (FLOAT16 operands, FLOAT32
    accumulator) both keep the MatMul within half a ULP. With half accumulators (half_matmul)
    it is named first, several ULP off, and Relu, fed exact values, introduces nothing."""
    x = np.random.default_rng(5).uniform(0, 1, (4, 2048)).astype(np.float16)
    for kw in ({}, {"half_precision": True}):
        report = donnx.compare(_long_matmul(), {"x": x}, **kw)
        assert report.first_divergent(ulp=1) is None, report.table()
    half = donnx.compare(_long_matmul(), {"x": x}, half_matmul=True)
    assert half.mode == "half + MatMul accumulating in FLOAT16" and half.flags == 1
    rows = {r.name: r for r in half.rows}
    assert half.first_divergent(ulp=1) is rows["matmul"] and rows["matmul"].error_introduced > 2
    assert rows["relu"].error_introduced == 0 and rows["relu"].max_ulp > 1
    assert rows["bias"].error_introduced <= 0.5
    import onnx  # the command line's flag, on a short MatMul (K = 64)
    onnx.save(_long_matmul(64), tmp_path / "m.onnx")
    np.save(tmp_path / "x.npy", x[:, :64])
    assert main(["compare", str(tmp_path / "m.onnx"), "--input", f"x={tmp_path / 'x.npy'}",
                 "--half-matmul", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["half_matmul"] is True and data["flags"] == 1
    assert [r["name"] for r in data["rows"]] == ["matmul", "bias", "relu"]


def _k_loop(a, b):
    """NumPy's model of a half-accumulating K loop: 16 products at a time summed exactly and
    rounded to FLOAT16, the partial sums added in order, each sum rounded to FLOAT16."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    acc = None
    for j in range(0, a.shape[-1], 16):
        part = (a64[..., j:j + 16] @ b64[..., j:j + 16, :]).astype(np.float16)
        acc = part if acc is None else (acc.astype(np.float64) + part).astype(np.float16)
    return acc


@pytest.mark.parametrize("opset", [11, 17])
@pytest.mark.parametrize("case", ["2d", "batched", "vector-matrix", "matrix-vector", "gemm"])
def test_the_half_matmul_rewrite_is_the_k_loop(case, opset):
    """The rewrite (Pad, Reshape, batched MatMul, Split, an Add chain) run through DML gives,
    bit for bit, NumPy's K loop (K = 37: two full steps and a padded one)."""
    rng = np.random.default_rng(6)
    shapes = {"2d": ((3, 37), (37, 5)), "batched": ((2, 3, 37), (37, 5)),
              "vector-matrix": ((37,), (37, 5)), "matrix-vector": ((3, 37), (37,)),
              "gemm": ((37, 3), (5, 37))}[case]
    a, b = (rng.uniform(-4, 4, s).astype(np.float16) for s in shapes)
    c = rng.uniform(-4, 4, (5,)).astype(np.float16)
    if case == "gemm":
        node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1, transB=1, alpha=0.75,
                                beta=-1.5)
        loop = _k_loop(a.T, b.T)
        alpha = (loop.astype(np.float64) * 0.75).astype(np.float16)
        want = (alpha.astype(np.float64) + (c.astype(np.float64) * -1.5).astype(np.float16))
    else:
        node = helper.make_node("MatMul", ["a", "b"], ["y"])
        a2 = a[None] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        want = _k_loop(a2, b2)
        want = want[0] if a.ndim == 1 else want[..., 0] if b.ndim == 1 else want
    want = np.asarray(want).astype(np.float16)
    inputs = [helper.make_tensor_value_info(n, T.FLOAT16, v.shape)
              for n, v in (("a", a), ("b", b), ("c", c))][:len(node.input)]
    m = helper.make_model(helper.make_graph([node], "g", inputs, [
        helper.make_tensor_value_info("y", T.FLOAT16, want.shape)]),
        opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    feeds = {n: v for n, v in (("a", a), ("b", b), ("c", c))[:len(node.input)]}
    rewritten = half_accumulated(m, {"y": T.FLOAT16}, {k: v.shape for k, v in feeds.items()})
    got = donnx.InferenceSession(rewritten).run(None, feeds)[0]
    assert got.shape == want.shape and got.tobytes() == want.tobytes()


def test_integer_and_data_movement_nodes_report_exactly_zero():
    m = _model([helper.make_node("Cast", ["x"], ["i"], to=T.INT32, name="cast"),
                helper.make_node("Add", ["i", "i"], ["j"], name="add"),
                helper.make_node("Transpose", ["j"], ["t"], perm=[1, 0], name="transpose"),
                helper.make_node("Gather", ["t", "idx"], ["g"], axis=0, name="gather"),
                helper.make_node("Greater", ["g", "g"], ["y"], name="greater")],
               [helper.make_tensor_value_info("x", T.FLOAT, [3, 5])],
               [helper.make_tensor_value_info("y", T.BOOL, None)],
               [numpy_helper.from_array(np.array([4, 0, 2], np.int64), "idx")])
    x = np.random.default_rng(2).uniform(-100, 100, (3, 5)).astype(np.float32)
    rows = donnx.compare(m, {"x": x}).rows
    assert [r.name for r in rows] == ["cast", "add", "transpose", "gather", "greater"]
    assert all(r.max_ulp == r.max_abs_error == r.error_introduced == 0 for r in rows)


def test_the_example_models_are_compared_within_a_minute():
    spec = importlib.util.spec_from_file_location(
        "onnx_models", Path(__file__).resolve().parents[1] / "examples" / "onnx_models.py")
    models = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(models)
    start = time.perf_counter()
    for build in (models.mlp, models.cnn, models.transformer):
        model, shape = build()
        x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
        report = donnx.compare(model, {"x": x})
        assert report.rows and report.first_divergent(ulp=64) is None, report.table()
    assert time.perf_counter() - start < 60


def test_the_cli_prints_the_table_and_json(tmp_path, capsys):
    import onnx
    path = tmp_path / "norm.onnx"
    onnx.save(_normalize(), path)
    np.save(tmp_path / "x.npy", X)
    assert main(["compare", str(path), "--input", f"x={tmp_path / 'x.npy'}",
                 "--half-precision", "--top", "0"]) == 0
    out = capsys.readouterr().out
    assert "ReduceSum" in out and "<- first divergent" in out
    assert main(["compare", str(path), "--input", f"x={tmp_path / 'x.npy'}", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in data["rows"]] == ["square", "sum", "sqrt", "normalize"]


@pytest.mark.parametrize("kw", [{"half_precision": "yes"}, {"execution_flags": -1},
                                {"execution_flags": 1.0}, {"flush_denormals": 1},
                                {"half_matmul": None}])
def test_bad_arguments_are_refused(kw):
    with pytest.raises(dml.HResultError) as e:
        donnx.compare(_normalize(), {"x": X}, **kw)
    assert e.value.hresult == dml.E_INVALIDARG and "compare" in e.value.message


def test_what_the_reference_lacks_is_named():
    m = _model([helper.make_node("Gelu", ["x"], ["y"], domain="com.microsoft", name="g")],
               [helper.make_tensor_value_info("x", T.FLOAT, [3])],
               [helper.make_tensor_value_info("y", T.FLOAT, [3])])
    with pytest.raises(dml.HResultError) as e:
        donnx.compare(m, {"x": np.ones(3, np.float32)})
    assert e.value.hresult == dml.E_NOTIMPL and "com.microsoft.Gelu" in e.value.message


@pytest.mark.parametrize("folder", ["llama-fp16"])  # the fp16 (int4: the CLI test's)
def test_a_genai_llm_prefill_is_compared_within_a_minute(folder):
    """The float64 references of the contrib operators (onnx_compare_refs) agree with the DML
    lowerings: no node of the tiny genai LLMs introduces more than about one FLOAT16 ULP."""
    from dmlsim import genai
    start = time.perf_counter()
    llm = genai.Model(Path(__file__).with_name("models") / "genai" / folder)
    ids = genai.Tokenizer(llm).encode("Hello there, tiny model").astype(np.int64)[None]
    report = donnx.compare(llm.config.decoder_file,
                           genai.step_feeds(llm, ids, 0, ids.shape[1], {}))
    assert time.perf_counter() - start < 60
    ops = {r.op_type for r in report.rows}
    assert {"GroupQueryAttention", "RotaryEmbedding", "SkipSimplifiedLayerNormalization",
            "SimplifiedLayerNormalization"} <= ops
    assert ("MatMulNBits" in ops) == folder.endswith("int4")
    assert max(r.error_introduced for r in report.rows) < 1.5, report.table(top=5)
    assert report.rows[-1].op_type in ("MatMul", "MatMulNBits")  # the logits, compared too


def test_the_cli_compares_a_genai_folder(capsys):
    folder = Path(__file__).with_name("models") / "genai" / "qwen2-int4"
    assert main(["compare", str(folder), "--prompt", "Hi there", "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "qwen2-int4/model.onnx" in out and "first node introducing" in out
    assert main(["compare", str(folder)]) == 1  # a folder needs --prompt
    assert "needs --prompt" in capsys.readouterr().err

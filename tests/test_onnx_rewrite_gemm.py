"""ONNX Runtime's MatMulAddFusion (``_pythonic/onnx_rewrite_gemm.py``): the pairs ORT 1.32 turns
into a Gemm (with Reshapes around an N-D A of static shape) become one here too, the pairs it
keeps are kept (ORT's own optimized model, ORT_ENABLE_BASIC, is the reference), results match
ORT's CPU provider on the same file, and a fused FLOAT16 pair rounds once."""
import collections

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import dmlsim.onnx as donnx
from dmlsim._pythonic.onnx_rewrite_gemm import fuse_matmul_add

from helpers import ort_optimized

IR = 10  # an IR version every supported ONNX Runtime reads (1.30 stops at 13)
F, H = TensorProto.FLOAT, TensorProto.FLOAT16
ARITHMETIC = ("MatMul", "Add", "Gemm")


def _pair(a, b, c, dtype=F, b_const=True, c_const=True, bias_first=False, also=None,
          matmul_is_output=False):
    """y = MatMul(A, B) + C; ``also``: another node reading the MatMul's output."""
    npdt = np.float32 if dtype == F else np.float16
    rng = np.random.default_rng(len(a) * 7 + len(c))
    inputs, inits = [helper.make_tensor_value_info("A", dtype, a)], []
    for name, shape, const in (("B", b, b_const), ("C", c, c_const)):
        if const:
            inits.append(numpy_helper.from_array(rng.standard_normal(shape).astype(npdt), name))
        else:
            inputs.append(helper.make_tensor_value_info(name, dtype, shape))
    nodes = [helper.make_node("MatMul", ["A", "B"], ["m"], name="mm"),
             helper.make_node("Add", ["C", "m"] if bias_first else ["m", "C"], ["y"])]
    outputs = [helper.make_tensor_value_info("y", dtype, None)]
    if also is not None:
        nodes.append(helper.make_node(also, ["m"], ["r"]))
        outputs.append(helper.make_tensor_value_info("r", dtype, None))
    if matmul_is_output:
        outputs.append(helper.make_tensor_value_info("m", dtype, None))
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=IR)


CASES = {  # name: (model, fused by ORT 1.32)
    "2-D, bias N": (_pair([4, 3], [3, 5], [5]), True),
    "2-D, bias 1 x N": (_pair([4, 3], [3, 5], [1, 5]), True),
    "2-D, bias M x 1": (_pair([4, 3], [3, 5], [4, 1]), True),
    "2-D, bias M x N, first": (_pair([4, 3], [3, 5], [4, 5], bias_first=True), True),
    "2-D, M named, bias M x 1 an input": (_pair(["M", 3], [3, 5], ["M", 1], c_const=False), True),
    "2-D, B an input": (_pair([4, 3], [3, 5], [5], b_const=False), True),
    "3-D static": (_pair([2, 4, 3], [3, 5], [5]), True),
    "4-D static": (_pair([2, 2, 4, 3], [3, 5], [5]), True),
    "1-D A": (_pair([3], [3, 5], [5]), True),
    "2-D, scalar bias": (_pair([4, 3], [3, 5], []), False),
    "2-D, bias 1 x 1 x N": (_pair([4, 3], [3, 5], [1, 1, 5]), False),
    "3-D static, bias 1 x N": (_pair([2, 4, 3], [3, 5], [1, 5]), False),
    "3-D, batch named": (_pair(["b", 4, 3], [3, 5], [5]), False),
    "3-D B": (_pair([2, 4, 3], [2, 3, 5], [5]), False),
    "MatMul read twice": (_pair([4, 3], [3, 5], [5], also="Relu"), False),
    "MatMul a graph output": (_pair([4, 3], [3, 5], [5], matmul_is_output=True), False),
}


def _arithmetic(model):
    return collections.Counter(n.op_type for n in model.graph.node if n.op_type in ARITHMETIC)


def _feeds(model, rng):
    feeds = {}
    for vi in model.graph.input:
        shape = [d.dim_value or 4 for d in vi.type.tensor_type.shape.dim]
        dt = np.float32 if vi.type.tensor_type.elem_type == F else np.float16
        feeds[vi.name] = rng.standard_normal(shape).astype(dt)
    return feeds


@pytest.mark.parametrize("name", list(CASES))
def test_pairs_fuse_where_onnx_runtime_fuses_them(name, tmp_path):
    model, fused = CASES[name]
    ours, theirs = _arithmetic(fuse_matmul_add(model)), _arithmetic(ort_optimized(model, tmp_path))
    assert ours == theirs == (collections.Counter(Gemm=1) if fused else
                              collections.Counter(MatMul=1, Add=1))
    feeds = _feeds(model, np.random.default_rng(1))
    got = donnx.InferenceSession(model.SerializeToString()).run(None, feeds)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def _bert_attention():
    """A BERT attention block of static shape: LayerNormalization -> Q, K, V projections
    (MatMul + Add), attention, output projection (MatMul + Add), residual Add."""
    rng = np.random.default_rng(2)
    b, s, d, heads = 2, 4, 8, 2

    def init(name, shape, values=None):
        v = rng.standard_normal(shape).astype(np.float32) if values is None else values
        return numpy_helper.from_array(v, name)
    inits = [init("g", [d]), init("beta", [d])] + [init(f"W{k}", [d, d]) for k in "qkvo"] + \
        [init(f"b{k}", [d]) for k in "qkvo"] + \
        [init("heads", None, np.array([b, s, heads, d // heads], np.int64)),
         init("merged", None, np.array([b, s, d], np.int64))]
    nodes = [helper.make_node("LayerNormalization", ["x", "g", "beta"], ["ln"], axis=-1)]
    for k, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3])):
        nodes += [helper.make_node("MatMul", ["ln", f"W{k}"], [f"{k}m"]),
                  helper.make_node("Add", [f"{k}m", f"b{k}"], [f"{k}a"]),
                  helper.make_node("Reshape", [f"{k}a", "heads"], [f"{k}r"]),
                  helper.make_node("Transpose", [f"{k}r"], [f"{k}t"], perm=perm)]
    nodes += [helper.make_node("MatMul", ["qt", "kt"], ["scores"]),
              helper.make_node("Softmax", ["scores"], ["p"], axis=-1),
              helper.make_node("MatMul", ["p", "vt"], ["ctx"]),
              helper.make_node("Transpose", ["ctx"], ["ctxt"], perm=[0, 2, 1, 3]),
              helper.make_node("Reshape", ["ctxt", "merged"], ["ctxr"]),
              helper.make_node("MatMul", ["ctxr", "Wo"], ["om"]),
              helper.make_node("Add", ["om", "bo"], ["oa"]),
              helper.make_node("Add", ["oa", "ln"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [b, s, d])],
                          [helper.make_tensor_value_info("y", F, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=IR)


def test_a_bert_attentions_projections_are_kept_for_its_attention_fusion(tmp_path):
    """ORT keeps the four projections of this pattern (its attention fusion wants them), so
    every 3-D MatMul + Add here stays; ORT_DISABLE_ALL is not needed for that."""
    model = _bert_attention()
    ours, theirs = _arithmetic(fuse_matmul_add(model)), _arithmetic(ort_optimized(model, tmp_path))
    assert ours == theirs == collections.Counter(MatMul=6, Add=5)
    x = np.random.default_rng(3).standard_normal((2, 4, 8)).astype(np.float32)
    (got,) = donnx.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    (want,) = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_fused_float16_pair_rounds_once():
    """A = [1, 1], B = [2048, 1]^T, C = 1: the product 2049 is not a FLOAT16 (2048 and 2050
    are), so MatMul then Add rounds twice (2049 -> 2048, 2049 -> 2048) and the fused Gemm once
    (2050), as ORT's CPU provider computes it (a float32 Gemm between Casts) and the DML
    provider runs the Gemm ORT made; ORT_DISABLE_ALL keeps the two roundings."""
    h = np.float16
    g = helper.make_graph(
        [helper.make_node("MatMul", ["A", "B"], ["m"]), helper.make_node("Add", ["m", "C"], ["y"])],
        "g", [helper.make_tensor_value_info("A", H, [1, 2])],
        [helper.make_tensor_value_info("y", H, None)],
        [numpy_helper.from_array(np.array([[2048], [1]], h), "B"),
         numpy_helper.from_array(np.array([1], h), "C")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=IR).SerializeToString()
    a = {"A": np.array([[1, 1]], h)}
    (fused,) = donnx.InferenceSession(model).run(None, a)
    (theirs,) = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, a)
    options = donnx.SessionOptions()
    options.graph_optimization_level = donnx.GraphOptimizationLevel.ORT_DISABLE_ALL
    (apart,) = donnx.InferenceSession(model, options).run(None, a)
    assert fused.tolist() == theirs.tolist() == [[2050.0]]
    assert apart.tolist() == [[2048.0]]

"""ONNX Runtime's basic-level Conv rewrites (``_pythonic/onnx_rewrite.py``): the folded weights
and biases are the initializers of ORT's own optimized model bit for bit, the nodes ORT keeps
are kept, and a session's results match ORT's CPU provider on the same file."""
import numpy as np
import onnxruntime as ort
import pytest
import onnx
from onnx import helper, numpy_helper

import dmlsim.onnx as donnx
from dmlsim._pythonic import onnx_rewrite

from helpers import ort_optimized

C = 6
IR = 10  # an IR version every supported ONNX Runtime reads (1.30 stops at 13)


def _model(dtype, nodes, inits, out="z", inputs=()):
    tp = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", tp, [1, 3, 7, 7])] + list(inputs),
        [helper.make_tensor_value_info(out, tp, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)], ir_version=IR)


def _chain(dtype, bias, rng, tail=("bn", "mul", "add")):
    """Conv [-> BatchNormalization] [-> Mul by a scalar] [-> Add of 1 x C x 1 x 1] -> Relu."""
    inits = {"W": (rng.standard_normal((C, 3, 3, 3)) * 2).astype(dtype)}
    if bias:
        inits["cb"] = rng.standard_normal(C).astype(dtype)
    nodes = [helper.make_node("Conv", ["x", "W"] + (["cb"] if bias else []), ["c"],
                              pads=[1, 1, 1, 1])]
    last = "c"
    if "bn" in tail:
        for k in "sbm":
            inits[k] = rng.standard_normal(C).astype(dtype)
        inits["v"] = (rng.random(C) * 2 + 1e-3).astype(dtype)
        nodes.append(helper.make_node("BatchNormalization", [last, "s", "b", "m", "v"], ["n"],
                                      epsilon=0.0123))
        last = "n"
    if "mul" in tail:
        inits["k"] = np.asarray(rng.standard_normal(), dtype)
        nodes.append(helper.make_node("Mul", [last, "k"], ["p"]))
        last = "p"
    if "add" in tail:
        inits["a"] = rng.standard_normal((1, C, 1, 1)).astype(dtype)
        nodes.append(helper.make_node("Add", [last, "a"], ["q"]))
        last = "q"
    nodes.append(helper.make_node("Relu", [last], ["z"]))
    return _model(dtype, nodes, inits)


def _conv_params(model):
    """The Conv's (W, B) arrays, through the Casts ORT's CPU provider puts before FLOAT16."""
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    cast_of = {n.output[0]: n.input[0] for n in model.graph.node if n.op_type == "Cast"}
    conv = next(n for n in model.graph.node if n.op_type == "Conv")
    return [inits[cast_of.get(n, n)] for n in conv.input[1:]]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("bias", [False, True])
def test_conv_bn_mul_add_fold_as_onnx_runtime_folds_them(dtype, bias, tmp_path):
    rng = np.random.default_rng(7 + bias)
    model = _chain(dtype, bias, rng)
    ours = onnx_rewrite.fold_convolutions(model)
    theirs = ort_optimized(model, tmp_path)
    assert [n.op_type for n in ours.graph.node] == ["Conv", "Relu"]
    assert [n.op_type for n in theirs.graph.node if n.op_type != "Cast"] == ["Conv", "Relu"]
    for a, b in zip(_conv_params(ours), _conv_params(theirs), strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()
    assert [i.name for i in model.graph.initializer][:1] == ["W"]  # the caller's model unchanged
    if dtype == np.float32:
        x = rng.standard_normal((1, 3, 7, 7)).astype(dtype)
        (got,) = donnx.InferenceSession(model.SerializeToString()).run(None, {"x": x})
        want = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_the_folded_batch_normalization_is_its_arithmetic_step_by_step():
    """ConvBNFusion's steps, each rounded to float32: s = scale / sqrt(var + eps), W' = W * s,
    B' = (B - mean) * s + beta; 1 x 1 x 1 x 1 numbers a reader can check."""
    f = np.float32
    inits = {"W": np.full((1, 1, 1, 1), 3, f), "cb": np.array([5], f), "s": np.array([2], f),
             "b": np.array([1], f), "m": np.array([1], f), "v": np.array([3], f)}
    nodes = [helper.make_node("Conv", ["x", "W", "cb"], ["c"]),
             helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["z"],
                              epsilon=1.0)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, [1, 1, 2, 2])],
                          [helper.make_tensor_value_info("z", 1, None)],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    w, b = _conv_params(onnx_rewrite.fold_convolutions(helper.make_model(g)))
    assert w.reshape(()) == f(3) * f(1)  # s = 2 / sqrt(4) = 1
    assert b.tolist() == [5.0]  # (5 - 1) * 1 + 1


def test_what_onnx_runtime_does_not_fold_is_kept(tmp_path):
    rng = np.random.default_rng(3)
    W = rng.standard_normal((C, 3, 3, 3)).astype(np.float32)
    k = rng.standard_normal((1, C, 1, 1)).astype(np.float32)
    conv = helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1])
    cases = {
        "constant first": [conv, helper.make_node("Mul", ["k", "c"], ["p"]),
                           helper.make_node("Relu", ["p"], ["z"])],
        "a scalar added": [conv, helper.make_node("Add", ["c", "s"], ["p"]),
                           helper.make_node("Relu", ["p"], ["z"])],
        "conv read twice": [conv, helper.make_node("Mul", ["c", "k"], ["p"]),
                            helper.make_node("Add", ["p", "c"], ["z"])],
        "operand not constant": [conv, helper.make_node("Mul", ["c", "u"], ["z"])],
    }
    for name, nodes in cases.items():
        model = _model(np.float32, nodes, {"W": W, "k": k, "s": np.float32(2)},
                       inputs=[helper.make_tensor_value_info("u", 1, [1, C, 1, 1])])
        ours = onnx_rewrite.fold_convolutions(model)
        theirs = ort_optimized(model, tmp_path)
        assert ours is model, name
        assert [n.op_type for n in theirs.graph.node] == [n.op_type for n in nodes], name


def test_a_reshaped_constant_folds_and_ort_disable_all_keeps_every_node():
    """PaddleOCR writes a Conv's bias as Add(conv, Reshape(constant)): ORT folds the Reshape,
    then the Add. ORT_DISABLE_ALL keeps both (the same values, not the same bits)."""
    rng = np.random.default_rng(5)
    inits = {"W": rng.standard_normal((C, 3, 3, 3)).astype(np.float32),
             "a": rng.standard_normal(C).astype(np.float32),
             "shape": np.array([1, C, 1, 1], np.int64)}
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"]),
             helper.make_node("Reshape", ["a", "shape"], ["ar"]),
             helper.make_node("Add", ["c", "ar"], ["z"])]
    model = _model(np.float32, nodes, inits)
    folded = onnx_rewrite.fold_convolutions(model)
    assert [n.op_type for n in folded.graph.node] == ["Conv", "Reshape"]  # a constant now
    assert folded.graph.node[0].output[0] == "z"
    assert _conv_params(folded)[1].tobytes() == inits["a"].tobytes()
    x = rng.standard_normal((1, 3, 7, 7)).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    opts = donnx.SessionOptions()
    opts.graph_optimization_level = donnx.GraphOptimizationLevel.ORT_DISABLE_ALL
    for o in (None, opts):
        (got,) = donnx.InferenceSession(model.SerializeToString(), o).run(None, {"x": x})
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_constant_nodes_are_read_as_the_reference_evaluator_reads_them():
    """``evaluate`` reads a Constant's tensor, float(s) or int(s) directly (most constant nodes
    a lowering folds): the same dtype, shape and bytes as onnx's reference evaluator gives."""
    from onnx import AttributeProto
    from onnx.reference import ReferenceEvaluator

    def empty(name, kind):
        node = helper.make_node("Constant", [], ["y"])
        node.attribute.add(name=name, type=kind)
        return node
    tensor = lambda a: helper.make_node("Constant", [], ["y"],  # noqa: E731
                                        value=numpy_helper.from_array(a))
    nodes = [tensor(np.array([[1.5, -0.0], [np.nan, 3]], np.float16)),
             tensor(np.array(7, np.int32)), tensor(np.array([True, False])),
             tensor(np.array([1, 2**63], np.uint64)),
             helper.make_node("Constant", [], ["y"], value_float=2.5),
             helper.make_node("Constant", [], ["y"], value_floats=[1.0, 2.25]),
             helper.make_node("Constant", [], ["y"], value_int=-3),
             helper.make_node("Constant", [], ["y"], value_ints=[4, 5, 6]),
             empty("value_ints", AttributeProto.INTS), empty("value_floats", AttributeProto.FLOATS)]
    opsets = [helper.make_opsetid("", 17)]
    for node in nodes:
        assert onnx_rewrite._constant(node) is not None
        (fast,) = onnx_rewrite.evaluate(node, [], opsets)
        graph = helper.make_graph([node], "g", [], [helper.make_tensor_value_info(
            "y", onnx.TensorProto.UNDEFINED, None)])
        (slow,) = ReferenceEvaluator(helper.make_model(graph, opset_imports=opsets)).run(None, {})
        slow = np.asarray(slow)
        assert (fast.dtype, fast.shape, fast.tobytes()) == (slow.dtype, slow.shape, slow.tobytes())
    strings = helper.make_node("Constant", [], ["y"], value_strings=["a"])
    assert onnx_rewrite._constant(strings) is None  # the evaluator's
    assert onnx_rewrite.evaluate(strings, [], opsets)[0].tolist() == ["a"]

"""Three small ONNX models built with onnx.helper, run through dmlsim.onnx and compared with
ONNX Runtime's CPU provider when it is installed: an MLP (Gemm, Relu, Softmax), a CNN (Conv,
BatchNormalization, Relu, MaxPool, GlobalAveragePool, Flatten, Gemm, Softmax) and a transformer
block (LayerNormalization, MatMul, Reshape, Transpose, Softmax, residual Adds). Each prints the
DML graph it became (``session.describe()``) and the largest difference from ONNX Runtime.

    python examples/onnx_models.py
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

import dmlsim.onnx as donnx


def _init(rng, name, shape, scale=0.3):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def _model(nodes, inputs, outputs, inits, opset=17):
    return helper.make_model(helper.make_graph(nodes, "m", inputs, outputs, inits),
                             opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=10)  # every supported ONNX Runtime reads IR 10


def _vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def mlp(batch=8):
    rng = np.random.default_rng(1)
    inits = [_init(rng, "w1", (16, 32)), _init(rng, "b1", (32,)), _init(rng, "w2", (32, 10)),
             _init(rng, "b2", (10,))]
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"]),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Gemm", ["r", "w2", "b2"], ["z"]),
             helper.make_node("Softmax", ["z"], ["y"], axis=1)]
    return _model(nodes, [_vi("x", [batch, 16])], [_vi("y", [batch, 10])], inits), (batch, 16)


def cnn(batch=2):
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
    return _model(nodes, [_vi("x", [batch, 3, 16, 16])], [_vi("y", [batch, 10])], inits), \
        (batch, 3, 16, 16)


def transformer(batch=2):
    """LayerNorm -> Q, K, V MatMuls -> 4 heads (Reshape, Transpose) -> scaled Softmax attention
    -> output projection + residual -> LayerNorm -> MLP (Relu) + residual."""
    rng = np.random.default_rng(3)
    b, s, d, h = batch, 8, 32, 4
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


def dynamic_transformer():
    """The transformer block with symbolic ``batch`` and ``seq`` dimensions, as exporters write
    it: the head reshapes take their target from Shape -> Gather -> Concat (queries) or from 0
    and -1 entries (keys, values, output), so every shape follows from the feed's."""
    model, _ = transformer()
    g = model.graph
    N = helper.make_node
    d, h = 32, 4
    extra = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
             (("i0", [0]), ("i1", [1]), ("hd", [h, d // h]), ("kv", [0, 0, h, d // h]),
              ("back", [0, 0, -1]))]
    shape_nodes = [N("Shape", ["x"], ["xs"]), N("Gather", ["xs", "i0"], ["xb"], axis=0),
                   N("Gather", ["xs", "i1"], ["xq"], axis=0),
                   N("Concat", ["xb", "xq", "hd"], ["qheads"], axis=0)]
    nodes = []
    for n in g.node:
        if n.op_type == "Reshape":
            target = {"q0": "qheads", "o1": "back"}.get(n.input[0], "kv")
            n = N("Reshape", [n.input[0], target], list(n.output))
        nodes.append(n)
    inits = [i for i in g.initializer if i.name not in ("heads", "flat")] + extra
    dims = ["batch", "seq", d]
    return _model(shape_nodes + nodes, [_vi("x", dims)], [_vi("y", dims)], inits)


MODELS = {"mlp": mlp, "cnn": cnn, "transformer": transformer}


def main():
    try:
        import onnxruntime as ort
    except ImportError:
        ort = None
    for name, build in MODELS.items():
        model, shape = build()
        x = np.random.default_rng(9).standard_normal(shape).astype(np.float32)
        session = donnx.prepare(model)
        (got,) = session.run(None, {"x": x})
        print(f"== {name}\n{session.describe()}")
        if ort is not None:
            want = ort.InferenceSession(model.SerializeToString(),
                                        providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
            print(f"max |dmlsim - onnxruntime| = {np.abs(got - want).max():.2e}")


if __name__ == "__main__":
    main()

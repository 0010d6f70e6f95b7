"""A small convolutional network as one compiled DirectML graph, built two ways.

    conv 3x3 (pad 1) + bias + fused ReLU -> max pool 2x2 -> upsample x2 (nearest)
      -> residual add with the conv output, fused ReLU (ELEMENT_WISE_ADD1)
      -> global average pool -> GEMM head (+ bias)

Once with raw DML operators and IDMLDevice1::CompileGraph (every node, edge and tensor desc
written out, as a C++ program would), once with dmlsim.dmlx (DirectMLX). Both run in
FLOAT32 and FLOAT16 and in NCHW and NHWC layouts (NHWC: DirectMLX's InterleavedChannel
strides on every tensor); weights are generated deterministically and bound OWNED_BY_DML at
initialization; each result is checked against a float64 NumPy reference.

    python examples/small_cnn.py
"""
import numpy as np

import dmlsim as dml
from dmlsim import dmlx

N, C, H, W, M, CLASSES = 1, 4, 8, 8, 8, 3
TOLERANCE = {"FLOAT32": 1e-5, "FLOAT16": 2e-3}  # max |error| / max |reference|


def weights(dtype):
    rng = np.random.default_rng(2026)
    return {"x": rng.standard_normal((N, C, H, W)), "w1": rng.standard_normal((M, C, 3, 3)) / 4,
            "b1": rng.standard_normal((1, M, 1, 1)), "fc": rng.standard_normal((1, 1, M, CLASSES)),
            "fcb": rng.standard_normal((1, 1, 1, CLASSES))}


def reference(v):
    """float64 NumPy, written apart from dmlsim's kernels."""
    x = np.pad(v["x"], ((0, 0), (0, 0), (1, 1), (1, 1)))
    conv = np.zeros((N, M, H, W))
    for i in range(3):
        for j in range(3):
            conv += np.einsum("nchw,mc->nmhw", x[:, :, i:i + H, j:j + W], v["w1"][:, :, i, j])
    conv = np.maximum(conv + v["b1"], 0)
    pooled = conv.reshape(N, M, H // 2, 2, W // 2, 2).max(axis=(3, 5))
    up = pooled.repeat(2, axis=2).repeat(2, axis=3)
    res = np.maximum(up + conv, 0)
    gap = res.mean(axis=(2, 3)).reshape(1, 1, N, M)
    return gap @ v["fc"] + v["fcb"]


def layout(sizes, nhwc):
    """DirectMLX's InterleavedChannel strides (NHWC order for NCHW sizes), or packed."""
    return dmlx.TensorPolicy.InterleavedChannel().Get(0, 0, sizes)[0] if nhwc else None


def desc(data_type, sizes, nhwc=False, flags=0):
    strides = layout(sizes, nhwc)
    b = dml.DML_BUFFER_TENSOR_DESC(data_type, flags, len(sizes), sizes, strides,
                                   dml.DMLCalcBufferTensorSize(data_type, len(sizes), sizes,
                                                               strides))
    return dml.DML_TENSOR_DESC(dml.DML_TENSOR_TYPE_BUFFER, b)


def build_raw(device, data_type, nhwc):
    """DML operators and a DML_GRAPH_DESC written out by hand."""
    owned = dml.DML_TENSOR_FLAG_OWNED_BY_DML
    x = desc(data_type, [N, C, H, W], nhwc)
    w1, b1 = desc(data_type, [M, C, 3, 3], flags=owned), desc(data_type, [1, M, 1, 1],
                                                                flags=owned)
    act, half = desc(data_type, [N, M, H, W], nhwc), desc(data_type, [N, M, H // 2, W // 2], nhwc)
    gap = desc(data_type, [N, M, 1, 1], nhwc)
    row = desc(data_type, [1, 1, N, M])  # the pooled vector, reinterpreted as GEMM's A
    fc, fcb = desc(data_type, [1, 1, M, CLASSES], flags=owned), desc(
        data_type, [1, 1, 1, CLASSES], flags=owned)
    out = desc(data_type, [1, 1, N, CLASSES])
    relu = dml.operator_desc("ACTIVATION_RELU")
    ops = [
        dml.operator_desc("CONVOLUTION", InputTensor=x, FilterTensor=w1, BiasTensor=b1,
                          OutputTensor=act, Mode=dml.DML_CONVOLUTION_MODE_CROSS_CORRELATION,
                          Direction=dml.DML_CONVOLUTION_DIRECTION_FORWARD, DimensionCount=2,
                          Strides=[1, 1], Dilations=[1, 1], StartPadding=[1, 1],
                          EndPadding=[1, 1], OutputPadding=[0, 0], GroupCount=1,
                          FusedActivation=relu),
        dml.operator_desc("MAX_POOLING", InputTensor=act, OutputTensor=half, DimensionCount=2,
                          Strides=[2, 2], WindowSize=[2, 2], StartPadding=[0, 0],
                          EndPadding=[0, 0]),
        dml.operator_desc("UPSAMPLE_2D", InputTensor=half, OutputTensor=act, ScaleSize=(2, 2),
                          InterpolationMode=dml.DML_INTERPOLATION_MODE_NEAREST_NEIGHBOR),
        dml.operator_desc("ELEMENT_WISE_ADD1", ATensor=act, BTensor=act, OutputTensor=act,
                          FusedActivation=relu),
        dml.operator_desc("AVERAGE_POOLING", InputTensor=act, OutputTensor=gap, DimensionCount=2,
                          Strides=[1, 1], WindowSize=[H, W], StartPadding=[0, 0],
                          EndPadding=[0, 0], IncludePadding=0),
        dml.operator_desc("GEMM", ATensor=row, BTensor=fc, CTensor=fcb, OutputTensor=out,
                          TransA=0, TransB=0, Alpha=1.0, Beta=1.0),
    ]
    nodes = [dml.DML_GRAPH_NODE_DESC(dml.DML_GRAPH_NODE_TYPE_OPERATOR,
                                     dml.DML_OPERATOR_GRAPH_NODE_DESC(device.CreateOperator(o),
                                                                      name))
             for o, name in zip(ops, ["conv", "pool", "upsample", "residual", "gap", "head"])]

    def edge_in(graph_input, node, slot):
        return dml.DML_GRAPH_EDGE_DESC(dml.DML_GRAPH_EDGE_TYPE_INPUT,
                                       dml.DML_INPUT_GRAPH_EDGE_DESC(graph_input, node, slot))

    def edge(src, dst, slot):
        return dml.DML_GRAPH_EDGE_DESC(dml.DML_GRAPH_EDGE_TYPE_INTERMEDIATE,
                                       dml.DML_INTERMEDIATE_GRAPH_EDGE_DESC(src, 0, dst, slot))

    inputs = [edge_in(0, 0, 0), edge_in(1, 0, 1), edge_in(2, 0, 2), edge_in(3, 5, 1),
              edge_in(4, 5, 2)]
    # gap -> head: [N, M, 1, 1] and [1, 1, N, M] hold the same bytes when N = 1 (sizes may
    # differ across an edge; TotalTensorSizeInBytes may not)
    mids = [edge(0, 1, 0), edge(1, 2, 0), edge(2, 3, 0), edge(0, 3, 1), edge(3, 4, 0),
            edge(4, 5, 0)]
    outputs = [dml.DML_GRAPH_EDGE_DESC(dml.DML_GRAPH_EDGE_TYPE_OUTPUT,
                                       dml.DML_OUTPUT_GRAPH_EDGE_DESC(5, 0, 0))]
    graph = dml.DML_GRAPH_DESC(5, 1, len(nodes), nodes, len(inputs), inputs, len(outputs),
                               outputs, len(mids), mids)
    compiled = device.CompileGraph(graph, dml.DML_EXECUTION_FLAG_NONE)
    return compiled, [x, w1, b1, fc, fcb], [out]


def build_dmlx(device, data_type, nhwc):
    """The same network in DirectMLX's words."""
    policy = dmlx.TensorPolicy.InterleavedChannel() if nhwc else dmlx.TensorPolicy.Default()
    graph = dmlx.Graph(device, policy)
    owned = dml.DML_TENSOR_FLAG_OWNED_BY_DML
    x = dmlx.InputTensor(graph, 0, dmlx.TensorDesc(data_type, [N, C, H, W], policy))
    w1 = dmlx.InputTensor(graph, 1, dmlx.TensorDesc(data_type, owned, [M, C, 3, 3]))
    b1 = dmlx.InputTensor(graph, 2, dmlx.TensorDesc(data_type, owned, [1, M, 1, 1]))
    fc = dmlx.InputTensor(graph, 3, dmlx.TensorDesc(data_type, owned, [1, 1, M, CLASSES]))
    fcb = dmlx.InputTensor(graph, 4, dmlx.TensorDesc(data_type, owned, [1, 1, 1, CLASSES]))
    with dmlx.NameScope(graph, "block"):
        conv = dmlx.ConvolutionBuilder(x, w1, b1).StartPadding([1, 1]).EndPadding(
            [1, 1]).FusedActivation(dmlx.FusedActivation.Relu()).Build()
        pooled, _ = dmlx.MaxPooling(conv, [2, 2], [2, 2])
        up = dmlx.Upsample2D(pooled, (2, 2), dml.DML_INTERPOLATION_MODE_NEAREST_NEIGHBOR)
        res = dmlx.Add(up, conv, dmlx.FusedActivation.Relu())
    gap = dmlx.AveragePooling(res, [1, 1], [H, W], [0, 0], [0, 0], [], False)
    row = dmlx.Reinterpret(gap, [1, 1, N, M], None)
    out = dmlx.Gemm(row, fc, fcb)
    compiled = graph.Compile(dml.DML_EXECUTION_FLAG_NONE, [out])
    ins = [e.GetOutputDesc().AsDml() for e in (x, w1, b1, fc, fcb)]
    return compiled, ins, [out.GetOutputDesc().AsDml()]


def main():
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    device = dml.DMLCreateDevice(d3d, dml.DML_CREATE_DEVICE_FLAG_NONE)
    results = []
    for type_name in ("FLOAT32", "FLOAT16"):
        data_type = getattr(dml, "DML_TENSOR_DATA_TYPE_" + type_name)
        v = weights(type_name)
        np_type = np.float32 if type_name == "FLOAT32" else np.float16
        arrays = [v[k].astype(np_type) for k in ("x", "w1", "b1", "fc", "fcb")]
        want = reference({k: a.astype(np.float64) for k, a in zip(
            ("x", "w1", "b1", "fc", "fcb"), arrays)})
        for nhwc in (False, True):
            same = []
            for how, build in (("raw CompileGraph", build_raw), ("dmlx", build_dmlx)):
                compiled, ins, outs = build(device, data_type, nhwc)
                got = dml.run_compiled(compiled, ins, outs, arrays, device=device)[0]
                same.append(got.tobytes())
                err = float(np.abs(got.astype(np.float64) - want).max() / np.abs(want).max())
                ok = err <= TOLERANCE[type_name]
                results.append(ok)
                print(f"{type_name} {'NHWC' if nhwc else 'NCHW'} {how:17s} logits "
                      f"{np.round(got.astype(np.float64).ravel(), 4)}  relative error "
                      f"{err:.2e} {'ok' if ok else 'FAIL'}")
            results.append(same[0] == same[1])  # the same graph: the same bits
        print(f"{type_name} reference logits {np.round(want.ravel(), 4)}")
    return all(results)


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)

"""Benchmark d: model-level comparison on the CPU against ONNX Runtime's CPU provider.

Each model is built twice from one description: an ONNX graph run by an
``onnxruntime.InferenceSession`` (CPUExecutionProvider), and a dmlsim command list (UPLOAD ->
DEFAULT copies, one dispatch per node with a UAV barrier after each, a copy to a READBACK
buffer). One *run* is what an application does per inference: write the inputs (ORT: pass
NumPy arrays; dmlsim: write the mapped UPLOAD buffers), execute, wait, read the output
(ORT: the returned array; dmlsim: copy out of the mapped READBACK buffer). Models: every
operator of this repository that has a one-node ONNX equivalent (FLOAT32), and a few
element-wise chains. Reported: time per run for both and the ratio dmlsim / ORT (above 1:
dmlsim is slower), whatever it is. Outputs are compared (1e-5 relative for floats).

    pip install onnxruntime onnx     # or: pip install -e ".[bench]"
    python benchmarks/bench_onnx.py [--quick] [--json out.json]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import dmlsim as dml
from dmlsim._core import registry
from dmlsim._schema.operators_generated import DESC_STRUCTS, OPERATORS

from _rig import Rig, machine, print_table, write_json

F32, U8 = dml.DML_TENSOR_DATA_TYPE_FLOAT32, dml.DML_TENSOR_DATA_TYPE_UINT8
UNARY, BINARY = ("InputTensor",), ("ATensor", "BTensor")

# DML operator -> (ONNX op, DML input fields, DML attrs, ONNX attrs, output type, input domain)
OPS = {
    "ELEMENT_WISE_IDENTITY": ("Identity", UNARY, {}, {}, F32, "any"),
    "ELEMENT_WISE_ABS": ("Abs", UNARY, {}, {}, F32, "any"),
    "ELEMENT_WISE_NEGATE": ("Neg", UNARY, {}, {}, F32, "any"),
    "ELEMENT_WISE_EXP": ("Exp", UNARY, {}, {}, F32, "any"),
    "ELEMENT_WISE_LOG": ("Log", UNARY, {}, {}, F32, "positive"),
    "ELEMENT_WISE_SQRT": ("Sqrt", UNARY, {}, {}, F32, "positive"),
    "ELEMENT_WISE_SIN": ("Sin", UNARY, {}, {}, F32, "any"),
    "ELEMENT_WISE_COS": ("Cos", UNARY, {}, {}, F32, "any"),
    "ELEMENT_WISE_TANH": ("Tanh", UNARY, {}, {}, F32, "any"),
    "ELEMENT_WISE_ERF": ("Erf", UNARY, {}, {}, F32, "any"),
    "ELEMENT_WISE_FLOOR": ("Floor", UNARY, {}, {}, F32, "any"),
    "ELEMENT_WISE_CEIL": ("Ceil", UNARY, {}, {}, F32, "any"),
    "ELEMENT_WISE_RECIP": ("Reciprocal", UNARY, {}, {}, F32, "positive"),
    "ELEMENT_WISE_SIGN": ("Sign", UNARY, {}, {}, F32, "any"),
    "ELEMENT_WISE_IS_NAN": ("IsNaN", UNARY, {}, {}, U8, "any"),
    "ELEMENT_WISE_IS_INFINITY": ("IsInf", UNARY, {"InfinityMode": 0}, {}, U8, "any"),
    "ELEMENT_WISE_ADD": ("Add", BINARY, {}, {}, F32, "any"),
    "ELEMENT_WISE_SUBTRACT": ("Sub", BINARY, {}, {}, F32, "any"),
    "ELEMENT_WISE_MULTIPLY": ("Mul", BINARY, {}, {}, F32, "any"),
    "ELEMENT_WISE_DIVIDE": ("Div", BINARY, {}, {}, F32, "positive"),
    "ELEMENT_WISE_MAX": ("Max", BINARY, {}, {}, F32, "any"),
    "ELEMENT_WISE_MIN": ("Min", BINARY, {}, {}, F32, "any"),
    "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL": ("LessOrEqual", BINARY, {}, {}, U8, "any"),
    "ELEMENT_WISE_LOGICAL_GREATER_THAN": ("Greater", BINARY, {}, {}, U8, "any"),
    "ELEMENT_WISE_LOGICAL_EQUALS": ("Equal", BINARY, {}, {}, U8, "any"),
    "ACTIVATION_RELU": ("Relu", UNARY, {}, {}, F32, "any"),
    "ACTIVATION_SIGMOID": ("Sigmoid", UNARY, {}, {}, F32, "any"),
    "ACTIVATION_TANH": ("Tanh", UNARY, {}, {}, F32, "any"),
    "ACTIVATION_SOFTSIGN": ("Softsign", UNARY, {}, {}, F32, "any"),
    "ACTIVATION_SOFTPLUS": ("Softplus", UNARY, {"Steepness": 1.0}, {}, F32, "any"),
    "ACTIVATION_ELU": ("Elu", UNARY, {"Alpha": 1.0}, {"alpha": 1.0}, F32, "any"),
    "ACTIVATION_LEAKY_RELU": ("LeakyRelu", UNARY, {"Alpha": 0.01}, {"alpha": 0.01}, F32, "any"),
    "ACTIVATION_SHRINK": ("Shrink", UNARY, {"Bias": 0.5, "Threshold": 0.5},
                          {"bias": 0.5, "lambd": 0.5}, F32, "any"),
}


def chains():
    """Element-wise chains: (name, inputs, nodes); a node is (DML op, input names, output)."""
    out = [("mul_add x4 (8 nodes)", ["x", "a", "b"],
            [(op, [src, w], f"t{i}") for i, (op, src, w) in enumerate(
                [("ELEMENT_WISE_MULTIPLY", "x", "a"), ("ELEMENT_WISE_ADD", "t0", "b"),
                 ("ELEMENT_WISE_MULTIPLY", "t1", "a"), ("ELEMENT_WISE_ADD", "t2", "b"),
                 ("ELEMENT_WISE_MULTIPLY", "t3", "a"), ("ELEMENT_WISE_ADD", "t4", "b"),
                 ("ELEMENT_WISE_MULTIPLY", "t5", "a"), ("ELEMENT_WISE_ADD", "t6", "b")])])]
    acts = [("ELEMENT_WISE_MULTIPLY", ["x", "a"], "t0"), ("ELEMENT_WISE_ADD", ["t0", "b"], "t1"),
            ("ACTIVATION_RELU", ["t1"], "t2"), ("ACTIVATION_SIGMOID", ["t2"], "t3"),
            ("ELEMENT_WISE_MULTIPLY", ["t3", "x"], "t4")]
    out.append(("x * sigmoid(relu(x*a+b)) (5 nodes)", ["x", "a", "b"], acts))
    deep = []
    src = "x"
    for i in range(32):
        op = ("ELEMENT_WISE_ADD", "ELEMENT_WISE_MULTIPLY", "ACTIVATION_TANH")[i % 3]
        ins = [src] if op == "ACTIVATION_TANH" else [src, "a"]
        deep.append((op, ins, f"d{i}"))
        src = f"d{i}"
    out.append(("add/mul/tanh x32 (32 nodes)", ["x", "a"], deep))
    return out


def _onnx_model(inputs, nodes, n):
    import onnx
    from onnx import TensorProto, helper
    proto = {F32: TensorProto.FLOAT, U8: TensorProto.BOOL}
    graph_nodes = [helper.make_node(OPS[op][0], ins, [out], **OPS[op][3])
                   for op, ins, out in nodes]
    last_op, _, last = nodes[-1]
    g = helper.make_graph(
        graph_nodes, "bench",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [n]) for x in inputs],
        [helper.make_tensor_value_info(last, proto[OPS[last_op][4]], [n])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


class DmlModel:
    """The same nodes as one dmlsim command list (uploads, dispatches, readback)."""

    def __init__(self, rig, inputs, nodes, n, compiled_cache):
        self.rig, self.n = rig, n
        bufs = {x: rig.buffer(4 * n) for x in inputs}
        self.uploads = {x: rig.buffer(4 * n, dml.D3D12_HEAP_TYPE_UPLOAD) for x in inputs}
        cl = rig.command_list()
        for x in inputs:
            cl.CopyBufferRegion(bufs[x], 0, self.uploads[x], 0, 4 * n)
        cl.ResourceBarrier([dml.CD3DX12_RESOURCE_BARRIER.UAV(None)])
        for op, ins, out in nodes:
            out_type = OPS[op][4]
            key = (op, n)
            if key not in compiled_cache:
                compiled_cache[key] = _compile(rig, op, n)
            c = compiled_cache[key]
            bufs[out] = rig.buffer(max(4, n * (4 if out_type == F32 else 1)))
            table = rig.table(c, [bufs[i] for i in ins], [bufs[out]])
            rig.recorder.RecordDispatch(cl, c, table)
            cl.ResourceBarrier([dml.CD3DX12_RESOURCE_BARRIER.UAV(None)])
        last_op, _, last = nodes[-1]
        self.out_dtype = np.float32 if OPS[last_op][4] == F32 else np.uint8
        width = bufs[last].GetDesc().Width
        self.readback = rig.buffer(width, dml.D3D12_HEAP_TYPE_READBACK)
        cl.CopyResource(self.readback, bufs[last])
        cl.Close()
        self.cl = cl
        self.maps = {x: u.Map(0, None) for x, u in self.uploads.items()}

    def run(self, feeds):
        for x, arr in feeds.items():
            self.maps[x][:4 * self.n] = arr.view(np.uint8)
        self.rig.submit(self.cl, close=False)
        self.rig.wait()
        raw = self.readback.Map(0, None)
        return raw[:self.n * np.dtype(self.out_dtype).itemsize].view(self.out_dtype).copy()


def _compile(rig, op, n):
    name = "DML_OPERATOR_" + op
    _, fields, attrs, _, out_type, _ = OPS[op]
    desc = DESC_STRUCTS[name]()
    for f in fields:
        setattr(desc, f, _tensor(F32, n))
    desc.OutputTensor = _tensor(out_type, n)
    for k, v in attrs.items():
        setattr(desc, k, v)
    compiled = rig.dev.CompileOperator(
        rig.dev.CreateOperator(dml.DML_OPERATOR_DESC(OPERATORS[name]["value"], desc)), 0)
    init = rig.dev.CreateOperatorInitializer([compiled])
    cl = rig.command_list()
    rig.recorder.RecordDispatch(cl, init, rig.table(init))
    rig.submit(cl)
    rig.wait()
    return compiled


def _tensor(dtype, n):
    b = dml.DML_BUFFER_TENSOR_DESC(dtype, 0, 1, [n], None)
    b.TotalTensorSizeInBytes = dml.DMLCalcBufferTensorSize(dtype, 1, [n], None)
    return dml.DML_TENSOR_DESC(dml.DML_TENSOR_TYPE_BUFFER, b)


def _feeds(inputs, n, positive, rng):
    lo = 0.1 if positive else -3.0
    return {x: rng.uniform(lo, 3.0, n).astype(np.float32) for x in inputs}


def _time(fn, repeats, inner):
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        best = min(best, (time.perf_counter() - t0) / inner)
    return best


def main(argv=None):
    import onnxruntime as ort
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    rig = Rig(heap_size=16384)
    registered = set(registry.names())
    models = [(op, UNARY_OR_BINARY(op), [(op, UNARY_OR_BINARY(op), "y")])
              for op in OPS if "DML_OPERATOR_" + op in registered]
    models += [c for c in chains() if all("DML_OPERATOR_" + o in registered for o, _, _ in c[2])]
    sizes = (1 << 10, 1 << 20) if args.quick else (1 << 10, 1 << 16, 1 << 20)
    if args.quick:
        models = models[:6] + [m for m in models if " nodes)" in m[0]]
    repeats = 3 if args.quick else 5
    rng = np.random.default_rng(0)
    opts = ort.SessionOptions()
    cache, rows = {}, []
    for n in sizes:
        inner = 200 if n <= 1 << 16 else 10
        for name, inputs, nodes in models:
            positive = any(OPS[o][5] == "positive" for o, _, _ in nodes)
            feeds = _feeds(inputs, n, positive, rng)
            sess = ort.InferenceSession(_onnx_model(inputs, nodes, n), opts,
                                        providers=["CPUExecutionProvider"])
            model = DmlModel(rig, inputs, nodes, n, cache)
            expect = sess.run(None, feeds)[0]
            got = model.run(feeds)
            got = model.run(feeds)  # the second execution runs the compiled list
            if expect.dtype == bool:
                ok = np.array_equal(got, expect.astype(np.uint8))
            else:
                ok = np.allclose(got, expect, rtol=1e-5, atol=1e-6, equal_nan=True)
            t_ort = _time(lambda: sess.run(None, feeds), repeats, inner)
            t_dml = _time(lambda: model.run(feeds), repeats, inner)
            rows.append({"model": name, "nodes": len(nodes), "elements": n,
                         "ort_us": t_ort * 1e6, "dmlsim_us": t_dml * 1e6,
                         "ratio_dmlsim_over_ort": t_dml / t_ort, "outputs_match": bool(ok)})
    print_table("d. CPU model-level: dmlsim vs ONNX Runtime CPUExecutionProvider "
                "(µs per run: inputs in, execute, wait, output out)",
                ["model", "elements", "ORT µs", "dmlsim µs", "dmlsim/ORT", "outputs match"],
                [[r["model"], r["elements"], f"{r['ort_us']:.1f}", f"{r['dmlsim_us']:.1f}",
                  f"{r['ratio_dmlsim_over_ort']:.2f}", r["outputs_match"]] for r in rows])
    ratios = [r["ratio_dmlsim_over_ort"] for r in rows]
    geo = float(np.exp(np.mean(np.log(ratios))))
    print(f"geometric mean dmlsim/ORT: {geo:.2f} over {len(rows)} runs "
          f"(onnxruntime {ort.__version__})")
    payload = {"machine": machine(), "onnxruntime": ort.__version__, "d_onnx": rows,
               "geomean_ratio": geo}
    write_json(args.json, payload)
    return payload


def UNARY_OR_BINARY(op):  # noqa: N802 - reads as a constant at the call site
    return ["x"] if OPS[op][1] == UNARY else ["x", "a"]


if __name__ == "__main__":
    main()

"""Make the ONNX files of the DxDispatch ONNX samples in tests/models (DxDispatch's
``onnx_gemm`` and ``onnx_dynamic_shapes``, rebuilt with onnx.helper to the same graphs: two
Gemms added, and a Concat of two [N, 2] inputs)::

    python tools/make_dxdispatch_onnx_models.py tests/models
"""
import sys
from pathlib import Path

import onnx
from onnx import TensorProto, helper


def gemm():
    vi = helper.make_tensor_value_info
    nodes = [helper.make_node("Gemm", ["A0", "B0"], ["gemm_0"]),
             helper.make_node("Gemm", ["A1", "B1"], ["gemm_1"]),
             helper.make_node("Add", ["gemm_0", "gemm_1"], ["add"])]
    ins = [vi(n, TensorProto.FLOAT, s) for n, s in (("A0", [3, 2]), ("B0", [2, 4]),
                                                     ("A1", [3, 2]), ("B1", [2, 4]))]
    g = helper.make_graph(nodes, "GEMM Network", ins, [vi("add", TensorProto.FLOAT, [3, 4])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def dynamic_shapes():
    vi = helper.make_tensor_value_info
    g = helper.make_graph([helper.make_node("Concat", ["x0", "x1"], ["y"], axis=0)], "my_graph",
                          [vi("x0", TensorProto.FLOAT, ["N", 2]),
                           vi("x1", TensorProto.FLOAT, ["N", 2])],
                          [vi("y", TensorProto.FLOAT, [None, 2])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "tests/models")
    for name, build in (("onnx_gemm", gemm), ("onnx_dynamic_shapes", dynamic_shapes)):
        model = build()
        onnx.checker.check_model(model)
        onnx.save(model, str(out / f"{name}.onnx"))
        print(f"wrote {out / name}.onnx")

"""``compare(..., half_matmul=True)``: a model rewritten so that every FLOAT16 MatMul and Gemm
accumulates in FLOAT16, as a driver whose half-precision GEMM keeps half accumulators does.

``DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION`` lets a driver compute FLOAT16 math in
half precision; dmlsim's own GEMM under the flag still feeds the FLOAT16 operands to a
FLOAT32-accumulating product (tensor-core arithmetic), which is what most hardware does. Some
drivers' kernels keep the running sum in FLOAT16 instead (matrix instructions with half
accumulators), and a long reduction then loses digits. This mode models them: the K dimension
is cut into steps of ``STEP`` (16, the K of the FLOAT16 matrix instructions of current GPUs),
each step's partial product is computed and rounded to FLOAT16, and the partial products are
added one after the other, each sum rounded to FLOAT16 -- the order of a GEMM kernel's K loop.

The rewrite uses ONNX operators that DML computes exactly apart from the roundings it models:

- ``A`` (..., M, K) is zero-padded to a multiple of ``STEP`` along K, reshaped to
  (..., M, C, STEP) and transposed to (..., C, M, STEP); ``B`` (..., K, N) is padded and reshaped
  to (..., C, STEP, N) (zeros add exact zeros to every sum);
- one batched MatMul gives the C partial products (..., C, M, N), each rounded to FLOAT16;
- ``Split`` along C and a chain of ``Add`` sums them in order; ``Squeeze`` drops the step axis.

A 1-D operand is unsqueezed to a matrix first and the extra axis squeezed away, as MatMul
defines. Gemm transposes A and B as asked, sums the same way, then multiplies by ``alpha`` and
adds ``beta * C``, each rounded to FLOAT16. Other products (convolutions, attention,
MatMulNBits) keep their lowering's accumulation: the mode answers "which MatMul loses digits
to a half accumulator, and what does that do downstream".
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

STEP = 16


def _const(name, values, dtype=np.int64):
    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(np.asarray(values, dtype), name))


def _with_ints(op, inputs, outputs, name, values, opset, since, tag, **attrs) -> list:
    """``op`` with the integer list ``name`` as an input (from opset ``since``) or an
    attribute (before it)."""
    outputs = [outputs] if isinstance(outputs, str) else outputs
    if opset >= since:
        return [_const(tag, values), helper.make_node(op, inputs + [tag], outputs, **attrs)]
    return [helper.make_node(op, inputs, outputs, **{name: values}, **attrs)]


def _summed(a: str, b: str, ra: int, rb: int, k: int, out: str, tag: str, opset: int) -> list:
    """Nodes computing ``out`` = MatMul(a, b) (ranks ``ra``, ``rb`` >= 2, inner size ``k``)
    with the K loop accumulated in FLOAT16, ``STEP`` products at a time."""
    steps = -(-k // STEP)
    pad = steps * STEP - k
    n = []
    if pad:
        n += _with_ints("Pad", [a], f"{tag}_a0", "pads", [0] * (2 * ra - 1) + [pad], opset, 11,
                        f"{tag}_pa")
        n += _with_ints("Pad", [b], f"{tag}_b0", "pads", [0] * (2 * rb - 2) + [pad, 0], opset,
                        11, f"{tag}_pb")
        a, b = f"{tag}_a0", f"{tag}_b0"
    perm = list(range(ra - 2)) + [ra - 1, ra - 2, ra]
    n += [_const(f"{tag}_sa", [0] * (ra - 1) + [steps, STEP]),
          _const(f"{tag}_sb", [0] * (rb - 2) + [steps, STEP, -1]),
          helper.make_node("Reshape", [a, f"{tag}_sa"], [f"{tag}_a1"]),
          helper.make_node("Transpose", [f"{tag}_a1"], [f"{tag}_a2"], perm=perm),
          helper.make_node("Reshape", [b, f"{tag}_sb"], [f"{tag}_b1"]),
          helper.make_node("MatMul", [f"{tag}_a2", f"{tag}_b1"], [f"{tag}_p"])]
    parts = [f"{tag}_p{j}" for j in range(steps)]
    n += _with_ints("Split", [f"{tag}_p"], parts, "split", [1] * steps, opset, 13,
                    f"{tag}_sp", axis=-3)
    total = parts[0]
    for j, part in enumerate(parts[1:], 1):
        n.append(helper.make_node("Add", [total, part], [f"{tag}_s{j}"]))
        total = f"{tag}_s{j}"
    return n + _with_ints("Squeeze", [total], out, "axes", [-3], opset, 13, f"{tag}_ax")


def _matmul(node, rank, k, tag, opset) -> list:
    a, b = node.input
    n, out, drop = [], node.output[0], []
    if rank[a] == 1:  # (K) is (1, K), the 1 dropped from the result
        n += _with_ints("Unsqueeze", [a], f"{tag}_a", "axes", [0], opset, 13, f"{tag}_u0")
        a, drop = f"{tag}_a", [-2]
    if rank[b] == 1:  # (K) is (K, 1), the 1 dropped from the result
        n += _with_ints("Unsqueeze", [b], f"{tag}_b", "axes", [1], opset, 13, f"{tag}_u1")
        b, drop = f"{tag}_b", (drop and [-2, -1]) or [-1]
    ra, rb = max(rank[node.input[0]], 2), max(rank[node.input[1]], 2)
    n += _summed(a, b, ra, rb, k, f"{tag}_y" if drop else out, tag, opset)
    if drop:
        n += _with_ints("Squeeze", [f"{tag}_y"], out, "axes", drop, opset, 13, f"{tag}_d")
    return n


def _gemm(node, k, tag, opset) -> list:
    att = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    a, b = node.input[0], node.input[1]
    n = []
    if att.get("transA", 0):
        n.append(helper.make_node("Transpose", [a], [f"{tag}_ta"], perm=[1, 0]))
        a = f"{tag}_ta"
    if att.get("transB", 0):
        n.append(helper.make_node("Transpose", [b], [f"{tag}_tb"], perm=[1, 0]))
        b = f"{tag}_tb"
    alpha, beta = float(att.get("alpha", 1.0)), float(att.get("beta", 1.0))
    has_c = len(node.input) > 2 and node.input[2]
    last = f"{tag}_ab" if alpha != 1.0 or has_c else node.output[0]
    n += _summed(a, b, 2, 2, k, last, tag, opset)
    for name, value, src, dst in (("alpha", alpha, last, f"{tag}_y"),
                                  ("beta", beta, node.input[2] if has_c else "", f"{tag}_bc")):
        if not src or value == 1.0:
            continue
        n += [helper.make_node("Constant", [], [f"{tag}_{name}"], value=numpy_helper.from_array(
                  np.array(value, np.float16), f"{tag}_{name}")),
              helper.make_node("Mul", [src, f"{tag}_{name}"], [dst])]
    y = f"{tag}_y" if alpha != 1.0 else last
    if has_c:
        c = f"{tag}_bc" if beta != 1.0 else node.input[2]
        n.append(helper.make_node("Add", [y, c], [node.output[0]]))
    elif alpha != 1.0:
        n.append(helper.make_node("Identity", [y], [node.output[0]]))
    return n


def half_accumulated(model, types: dict, shapes: dict):
    """A copy of ``model`` whose FLOAT16 MatMul and Gemm nodes accumulate in FLOAT16.
    ``types``: {value: TensorProto element type}; ``shapes``: {value: shape} of the nodes'
    inputs (compare's reference run knows them)."""
    out = type(model)()
    out.CopyFrom(model)
    g = out.graph
    rank = {name: len(s) for name, s in shapes.items()}
    opset = next((o.version for o in out.opset_import if o.domain in ("", "ai.onnx")), 1)
    nodes = []
    for k, node in enumerate(g.node):
        half = node.domain in ("", "ai.onnx") and node.output and \
            types.get(node.output[0]) == TensorProto.FLOAT16
        if half and node.op_type == "MatMul" and node.input[0] in shapes:
            nodes += _matmul(node, rank, int(shapes[node.input[0]][-1]), f"__hmm{k}", opset)
        elif half and node.op_type == "Gemm" and node.input[0] in shapes:
            trans = any(a.name == "transA" and a.i for a in node.attribute)
            nodes += _gemm(node, int(shapes[node.input[0]][0 if trans else 1]), f"__hmm{k}",
                           opset)
        else:
            nodes.append(node)
    del g.node[:]
    g.node.extend(nodes)
    return out

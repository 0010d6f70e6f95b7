"""ONNX Runtime's MatMulAddFusion, a basic-level rewrite that changes a model's arithmetic, done
on the model before it is lowered, as ORT does it before it assigns nodes to providers (the DML
provider then runs one GEMM with its C input: the product and the bias are added before the one
rounding to the output type, where MatMul and Add round twice).

The conditions are ORT's (``onnxruntime/core/optimizer/matmul_add_fusion.cc``): a MatMul whose
output is read by one node input, an Add, and is not a graph output; A's type is the Add's first
input's type and a float type; A's and B's shapes are known and B is a matrix. With A a matrix
the pair becomes ``Gemm(A, B, bias)``; with A of another rank, when A's shape and B's are all
numbers, ``Reshape(A, [M, K])``, the Gemm, and ``Reshape`` to the MatMul's output shape, unless
the pair is one of a BERT attention's four projections (ORT keeps those for its attention
fusion: a LayerNormalization read by three MatMuls, one Add and Shapes, the Add's other input
the output projection's Add). The bias (the Add's other input) must be N, or with A a matrix
1 x N, M x 1 or M x N. Shapes are onnx's shape inference's, as ORT resolves them. All as ONNX
Runtime 1.32 does it (later sources also keep a MatMul whose A is an attention's output).
"""
from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from . import onnx_shapes
from .onnx_rewrite import fresh_name

FLOAT_TYPES = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16)
ONNX_DOMAINS = ("", "ai.onnx")


def _dims(vi):
    """A value's dims as a list of int (a number), str (a name) or None, or None unknown."""
    t = vi.type.tensor_type
    if not vi.type.HasField("tensor_type") or not t.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else
            (d.dim_param or None) if d.HasField("dim_param") else None for d in t.shape.dim]


def _same(a, b) -> bool:
    """ONNX's dimension equality: the same number, or the same non-empty name."""
    return a is not None and a == b


def _is(node, op, domain=ONNX_DOMAINS) -> bool:
    return node is not None and node.op_type == op and node.domain in domain


class _Graph:
    def __init__(self, model):
        g = model.graph
        self.producer = {o: n for n in g.node for o in n.output if o}
        self.readers: dict = {}
        for n in g.node:
            for name in n.input:
                if name:
                    self.readers.setdefault(name, []).append(n)
        self.outputs = {o.name for o in g.output}
        self.attn_ln: set = set()
        self.attn_add: set = set()
        self.info: dict = {}

    def candidates(self) -> bool:
        """Whether some MatMul's output is read by an Add (else no shapes are needed)."""
        return any(_is(n, "MatMul") and any(_is(r, "Add") for r in self.readers.get(o, []))
                   for o, n in self.producer.items())

    def infer(self, model) -> None:
        self.info = onnx_shapes.value_infos(model)
        for init in model.graph.initializer:
            if init.name not in self.info:
                self.info[init.name] = helper.make_tensor_value_info(
                    init.name, init.data_type, list(init.dims))

    def elem(self, name):
        vi = self.info.get(name)
        return vi.type.tensor_type.elem_type if vi is not None else None

    def dims(self, name):
        vi = self.info.get(name)
        return _dims(vi) if vi is not None else None

    def input_node(self, node, k=0):
        return self.producer.get(node.input[k]) if len(node.input) > k else None

    def bert_projection(self, matmul, add) -> bool:
        """ORT's AttentionPatternCache: one of a BERT attention's four MatMul + Add pairs."""
        parent = self.input_node(matmul)
        if id(parent) in self.attn_ln or id(add) in self.attn_add:
            return True
        if parent is None or parent.op_type != "LayerNormalization":
            return False
        edges = [r for o in parent.output if o for r in self.readers.get(o, [])
                 for i in r.input if i == o]
        kinds = [r.op_type for r in edges]
        if kinds.count("Add") != 1 or kinds.count("MatMul") != 3 or \
                kinds.count("Shape") != len(edges) - 4:
            return False
        ln_add = edges[kinds.index("Add")]
        other = ln_add.input[1] if ln_add.input[0] == parent.output[0] else ln_add.input[0]
        attn_add = self.producer.get(other)
        if attn_add is None or attn_add.op_type != "Add":
            return False
        self.attn_ln.add(id(parent))
        self.attn_add.add(id(attn_add))
        return True


def fuse_matmul_add(model) -> onnx.ModelProto:
    """``model`` with ORT's MatMulAddFusion applied (a copy; ``model`` itself when nothing
    fuses, or when onnx cannot infer its shapes, as ORT then cannot load it)."""
    g0 = model.graph
    if next((o.version for o in model.opset_import if o.domain in ONNX_DOMAINS), 0) < 7:
        return model
    g = _Graph(model)
    if not g.candidates():
        return model
    try:
        g.infer(model)
    except Exception:  # noqa: BLE001 -- the lowering reports what is wrong with the model
        return model
    replaced: dict = {}  # id(node) -> nodes in its place ([] for a removed Add)
    new_inits, taken = [], {n.name for n in g0.node} | set(g.info) | set(g.producer)
    for node in g0.node:
        fused = _fuse(g, node, replaced, taken, new_inits)
        if fused is not None:
            add, nodes = fused
            # in the Add's place: after the MatMul's inputs and the bias's producer
            replaced[id(node)], replaced[id(add)] = [], nodes
    if not replaced:
        return model
    result = onnx.ModelProto()
    result.CopyFrom(model)
    del result.graph.node[:]
    for node in g0.node:
        result.graph.node.extend(replaced.get(id(node), [node]))
    result.graph.initializer.extend(new_inits)
    return result


def _fuse(g, matmul, replaced, taken, new_inits):
    if not _is(matmul, "MatMul") or id(matmul) in replaced or len(matmul.input) != 2:
        return None
    out = matmul.output[0]
    edges = [(r, i) for r in g.readers.get(out, []) for i in r.input if i == out]
    if len(edges) != 1 or out in g.outputs:
        return None
    add = edges[0][0]
    if not _is(add, "Add") or id(add) in replaced or len(add.input) != 2:
        return None
    a_type = g.elem(matmul.input[0])
    if a_type != g.elem(add.input[0]) or a_type not in FLOAT_TYPES:
        return None
    a_dims, b_dims = g.dims(matmul.input[0]), g.dims(matmul.input[1])
    if a_dims is None or b_dims is None or len(b_dims) != 2:
        return None
    reshape = len(a_dims) != 2
    if reshape:
        if g.bert_projection(matmul, add):
            return None
        if not all(isinstance(d, int) for d in a_dims + b_dims):
            return None
    bias = add.input[1] if add.input[0] == out else add.input[0]
    c = g.dims(bias)
    n = b_dims[1]
    if c is None or not ((len(c) == 1 and _same(c[0], n)) or
                         (not reshape and len(c) == 2 and c[0] == 1 and _same(c[1], n)) or
                         (not reshape and len(c) == 2 and _same(c[0], a_dims[0]) and
                          (c[1] == 1 or _same(c[1], n)))):
        return None
    name = matmul.name or out
    if not reshape:
        gemm = helper.make_node("Gemm", [matmul.input[0], matmul.input[1], bias],
                                list(add.output), name=fresh_name(f"{name}/MatMulAddFusion", taken))
        return add, [gemm]
    shapes = []
    for part, shape in (("input", [math.prod(a_dims[:-1]), b_dims[0]]),
                        ("output", a_dims[:-1] + [n])):
        init = numpy_helper.from_array(np.asarray(shape, np.int64),
                                       fresh_name(f"gemm_{part}_shape", taken))
        new_inits.append(init)
        shapes.append(init.name)
    flat_in, flat_out = fresh_name("gemm_input_reshape_arg", taken), \
        fresh_name("gemm_output_reshape_arg", taken)
    return add, [
        helper.make_node("Reshape", [matmul.input[0], shapes[0]], [flat_in],
                         name=fresh_name("gemm_input_reshape", taken)),
        helper.make_node("Gemm", [flat_in, matmul.input[1], bias], [flat_out],
                         name=fresh_name(f"{name}/MatMulAddFusion", taken)),
        helper.make_node("Reshape", [flat_out, shapes[1]], list(add.output),
                         name=fresh_name("gemm_output_reshape", taken))]


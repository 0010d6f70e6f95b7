"""dmlx's graph: DirectMLX's Graph, Expression, TensorDesc, TensorPolicy, NameScope,
InputTensor, ConstantData and Reinterpret, and Graph.Compile through IDMLDevice1::CompileGraph.

As in DirectMLX, each operator function creates its IDMLOperator at the call (so a mistake
is reported there, with the function's name) and returns Expressions, weak handles to the
node's outputs; output descs come from the operators' shape rules (``dmlsim.infer_outputs``)
laid out by the graph's TensorPolicy. Compile walks back from the requested outputs: only the
nodes they need become graph nodes (in creation order), reinterpretations are followed to
their source, graph inputs become input edges and constants (FL 6_2) constant nodes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._api import public as dml
from .._core import dtypes
from .dml_graph_file import write_serialized_graph
from .run import Prepared, _Tensor, device_state, execute


def _fail(function, message, hr=None):
    raise dml.HResultError(dml.E_INVALIDARG if hr is None else hr, f"dmlx.{function}: {message}")


class TensorPolicy:
    """Strides, size and alignment for the tensors dmlx creates: ``Default()`` packed,
    ``InterleavedChannel()`` NHWC-ordered strides for NCHW sizes (dimension order 0, 2..n, 1),
    or any function (dataType, flags, sizes) -> (strides or None, total bytes, alignment)."""

    def __init__(self, fn=None):
        self.fn = fn

    @staticmethod
    def Default():
        return TensorPolicy()

    @staticmethod
    def InterleavedChannel():
        return TensorPolicy(_interleaved)

    def Get(self, data_type, flags, sizes):
        if self.fn is None:
            return None, dml.DMLCalcBufferTensorSize(data_type, len(sizes), list(sizes), None), 0
        return self.fn(data_type, flags, sizes)


def _interleaved(data_type, flags, sizes):
    n = len(sizes)
    strides = [0] * n
    if n >= 1:
        strides[0] = int(np.prod(sizes[1:])) if n > 1 else 1
    if n >= 2:
        strides[1] = 1
    step = sizes[1] if n >= 2 else 1
    for i in range(n - 1, 1, -1):
        strides[i] = step
        step *= sizes[i]
    return strides, dml.DMLCalcBufferTensorSize(data_type, n, list(sizes), strides), 0


class TensorDesc:
    """DirectMLX's TensorDesc: dataType, flags, sizes, strides, totalTensorSizeInBytes,
    guaranteedBaseOffsetAlignment. ``TensorDesc(dataType, sizes, policy=None)`` or
    ``TensorDesc(dataType, flags, sizes, policy=None)`` lay it out by ``policy`` (default:
    packed), or ``TensorDesc.of(dml_tensor_desc)``."""

    def __init__(self, dataType=0, flags=0, sizes=None, policy=None):
        if isinstance(flags, (list, tuple)):  # TensorDesc(dataType, sizes[, policy])
            flags, sizes, policy = 0, flags, sizes
        sizes = [int(s) for s in (sizes or [])]
        if not isinstance(policy, (TensorPolicy, type(None))):
            _fail("TensorDesc", f"policy is {type(policy).__name__}; a TensorPolicy is required")
        strides, total, align = (policy or TensorPolicy()).Get(int(dataType), int(flags), sizes)
        self.dataType, self.flags, self.sizes = int(dataType), int(flags), sizes
        self.strides = None if strides is None else [int(s) for s in strides]
        self.totalTensorSizeInBytes, self.guaranteedBaseOffsetAlignment = int(total), int(align)

    @classmethod
    def make(cls, data_type, sizes, policy=None, flags=0):
        return cls(data_type, flags, sizes, policy)

    @classmethod
    def raw(cls, data_type, flags, sizes, strides, total, align=0):
        d = cls.__new__(cls)
        d.dataType, d.flags, d.sizes = int(data_type), int(flags), [int(s) for s in sizes]
        d.strides = None if strides is None else [int(s) for s in strides]
        d.totalTensorSizeInBytes, d.guaranteedBaseOffsetAlignment = int(total), int(align)
        return d

    def __repr__(self):
        return (f"TensorDesc(dataType={self.dataType}, flags={self.flags}, sizes={self.sizes}, "
                f"strides={self.strides}, totalTensorSizeInBytes={self.totalTensorSizeInBytes})")

    @classmethod
    def of(cls, desc):
        """From a DML_TENSOR_DESC or DML_BUFFER_TENSOR_DESC."""
        b = desc.Desc if isinstance(desc, dml.DML_TENSOR_DESC) else desc
        return cls.raw(b.DataType, b.Flags or 0, b.Sizes, b.Strides, b.TotalTensorSizeInBytes,
                       b.GuaranteedBaseOffsetAlignment or 0)

    def AsDml(self):
        b = dml.DML_BUFFER_TENSOR_DESC(self.dataType, self.flags, len(self.sizes),
                                       list(self.sizes), self.strides,
                                       self.totalTensorSizeInBytes,
                                       self.guaranteedBaseOffsetAlignment)
        return dml.DML_TENSOR_DESC(dml.DML_TENSOR_TYPE_BUFFER, b)


@dataclass(eq=False)
class Node:
    kind: str                       # "input", "operator", "reinterpret", "constant"
    name: str = ""
    index: int = 0                  # input: the graph input index
    op: Any = None                  # operator: the IDMLOperator
    inputs: list = field(default_factory=list)   # per flattened input slot: Expression/None
    outputs: list = field(default_factory=list)  # TensorDesc per output slot (None: absent)
    data: bytes = b""
    op_type: str = ""               # operator: its DML_OPERATOR_TYPE name


class Expression:
    """A weak handle to one output of a node (DirectMLX's Expression)."""

    def __init__(self, graph, node, output=0):
        self.graph, self.node, self.output = graph, node, output

    def GetOutputDesc(self) -> TensorDesc:
        return self.node.outputs[self.output]

    def GetGraph(self):
        return self.graph

    def Impl(self):
        return self.node

    def __repr__(self):
        d = self.GetOutputDesc()
        return f"<dmlx.Expression {self.node.name or self.node.kind} sizes={d.sizes}>"

    if TYPE_CHECKING:  # DirectMLX's overloads, installed by dmlx_functions (which needs this class)
        def __add__(self, other: Expression | float) -> Expression: ...
        def __radd__(self, other: float) -> Expression: ...
        def __sub__(self, other: Expression | float) -> Expression: ...
        def __rsub__(self, other: float) -> Expression: ...
        def __mul__(self, other: Expression | float) -> Expression: ...
        def __rmul__(self, other: float) -> Expression: ...
        def __truediv__(self, other: Expression | float) -> Expression: ...
        def __rtruediv__(self, other: float) -> Expression: ...
        def __neg__(self) -> Expression: ...


class NameScope:
    """``with NameScope(graph, "block1"):`` names the nodes created inside ``block1_...``."""

    def __init__(self, graph, name):
        self.graph, self.name = graph, name

    def __enter__(self):
        self.graph.scopes.append(self.name)
        return self

    def __exit__(self, *exc):
        self.graph.scopes.pop()


class Graph:
    """DirectMLX's Graph over an IDMLDevice (one that supports IDMLDevice1::CompileGraph)."""

    def __init__(self, device, policy: TensorPolicy | None = None):
        if not isinstance(device, dml.IDMLDevice1):
            _fail("Graph", f"device is {type(device).__name__}; an IDMLDevice is required")
        self.device = device
        self.policy = policy or TensorPolicy.Default()
        self.nodes: list = []
        self.scopes: list = []

    def SetTensorPolicy(self, policy):
        self.policy = policy or TensorPolicy.Default()

    def GetTensorPolicy(self):
        return self.policy

    def _name(self, base):
        return "_".join(self.scopes + [base]) if self.scopes else base

    def add(self, node):
        self.nodes.append(node)
        return node

    # ---- compile ---------------------------------------------------------------------------
    def Compile(self, flags, outputs, inputCount=None):
        """DirectMLX's Graph::Compile: an IDMLCompiledOperator through CompileGraph."""
        return self._compile(flags, outputs, inputCount)[0]

    def compile(self, outputs, flags=0, inputCount=None):
        """dmlsim's convenience: a callable running the compiled graph on NumPy arrays."""
        compiled, ins, outs = self._compile(flags, outputs, inputCount)
        return Compiled(self.device, compiled, ins, outs,
                        lambda: self._compile(flags, outputs, inputCount)[0])

    def save(self, path, outputs, inputCount=None) -> bytes:
        """dmlsim addition: write the graph of ``outputs`` as a serialized DML graph (the
        flatbuffer DxDispatch's ``dmlSerializedGraph`` dispatchables and
        ``dmlsim.read_serialized_graph`` read); graph inputs are named ``input{i}``, outputs
        ``output{i}``. Returns the bytes written."""
        desc = self._graph_desc(outputs, inputCount)[0]
        return write_serialized_graph(desc, path)

    def _compile(self, flags, outputs, input_count):
        desc, ins, outs = self._graph_desc(outputs, input_count)
        return self.device.CompileGraph(desc, flags), ins, outs

    def _graph_desc(self, outputs, input_count):
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        for i, e in enumerate(outputs):
            if not isinstance(e, Expression) or e.graph is not self:
                _fail("Graph.Compile", f"outputs[{i}] is not an Expression of this graph")
        needed, stack = set(), [e.node for e in outputs]
        while stack:
            n = stack.pop()
            if n in needed:
                continue
            needed.add(n)
            stack.extend(x.node for x in n.inputs if x is not None)
        ops = [n for n in self.nodes if n in needed and n.kind == "operator"]
        consts = [n for n in self.nodes if n in needed and n.kind == "constant"]
        index = {n: k for k, n in enumerate(ops + consts)}
        inputs = {n.index: n for n in self.nodes if n in needed and n.kind == "input"}
        count = input_count if input_count is not None else \
            max([n.index + 1 for n in self.nodes if n.kind == "input"], default=0)
        nodes = [dml.DML_GRAPH_NODE_DESC(dml.DML_GRAPH_NODE_TYPE_OPERATOR,
                                         dml.DML_OPERATOR_GRAPH_NODE_DESC(n.op, n.name or None))
                 for n in ops]
        nodes += [dml.DML_GRAPH_NODE_DESC(dml.DML_GRAPH_NODE_TYPE_CONSTANT,
                                          dml.DML_CONSTANT_DATA_GRAPH_NODE_DESC(
                                              n.data, len(n.data), n.name or None))
                  for n in consts]
        in_edges, mid_edges, out_edges = [], [], []
        for n in ops:
            for i, e in enumerate(n.inputs):
                if e is None:
                    continue
                src, o = _source(e)
                if src.kind == "input":
                    in_edges.append(dml.DML_GRAPH_EDGE_DESC(
                        dml.DML_GRAPH_EDGE_TYPE_INPUT,
                        dml.DML_INPUT_GRAPH_EDGE_DESC(src.index, index[n], i, None)))
                else:
                    mid_edges.append(dml.DML_GRAPH_EDGE_DESC(
                        dml.DML_GRAPH_EDGE_TYPE_INTERMEDIATE,
                        dml.DML_INTERMEDIATE_GRAPH_EDGE_DESC(index[src], o, index[n], i, None)))
        out_descs = []
        for g, e in enumerate(outputs):
            src, o = _source(e)
            if src.kind != "operator":
                what = f"graph input {src.index}" if src.kind == "input" else "constant data"
                _fail("Graph.Compile", f"outputs[{g}] is {what} itself; a graph output must "
                                       "come from an operator (wrap it in dmlx.Identity)")
            out_edges.append(dml.DML_GRAPH_EDGE_DESC(
                dml.DML_GRAPH_EDGE_TYPE_OUTPUT, dml.DML_OUTPUT_GRAPH_EDGE_DESC(index[src], o, g,
                                                                               None)))
            out_descs.append(src.outputs[o])
        desc = dml.DML_GRAPH_DESC(count, len(outputs), len(nodes), nodes, len(in_edges), in_edges,
                                  len(out_edges), out_edges, len(mid_edges), mid_edges)
        ins = [(f"input {i}", None, _Tensor(inputs[i].outputs[0].AsDml()) if i in inputs
                else None) for i in range(count)]
        outs = [(f"output {g}", None, _Tensor(d.AsDml())) for g, d in enumerate(out_descs)]
        return desc, ins, outs


def _source(e):
    """(node, output) an expression's data comes from, through reinterpretations."""
    n, o = e.node, e.output
    while n.kind == "reinterpret":
        n, o = n.inputs[0].node, n.inputs[0].output
    return n, o


class Compiled:
    """A compiled dmlx graph as a function of NumPy arrays, one per graph input (by position
    or as ``input0=...``), returning the outputs as NumPy arrays (a list, or one array).

    The operator is initialized once, on the first call (an operator is initialized exactly
    once: OWNED_BY_DML inputs are read then, as DirectML reads them); later calls execute the
    same prepared command list with new input arrays (a training loop feeding its weights
    back). Graphs whose inputs or outputs are strided (TensorPolicy layouts) are compiled
    again per call instead."""

    def __init__(self, device, compiled, ins, outs, recompile=None):
        self.device, self.op, self.ins, self.outs = device, compiled, ins, outs
        self._recompile, self._prepared, self._used = recompile, None, False
        self._packed = all(t is None or t.strides == dtypes.packed_strides(t.sizes)
                           for _, _, t in list(ins) + list(outs))

    def __repr__(self):
        def text(rows):
            return ", ".join(f"{f} {dtypes.SHORT_NAMES.get(t.data_type)} {list(t.sizes)}"
                             for f, _, t in rows if t is not None) or "none"
        return f"<dmlx.Compiled {text(self.ins)} -> {text(self.outs)}>"

    def __call__(self, *arrays, **named):
        arrays = list(arrays) + [None] * (len(self.ins) - len(arrays))
        for key, value in named.items():
            arrays[int(key.replace("input", ""))] = value
        for i, ((_, _, t), a) in enumerate(zip(self.ins, arrays)):
            if t is not None and a is None and not (t.owned_by_dml and self._prepared):
                _fail("Compiled", f"graph input {i} needs an array")
        st = device_state(self.device)
        if self._packed:
            if self._prepared is None:
                owned = {i: a for i, ((_, _, t), a) in enumerate(zip(self.ins, arrays))
                         if t is not None and t.owned_by_dml}
                self._prepared = Prepared(st, self.op, self.ins, self.outs, owned)
            results = self._prepared(arrays)
        else:
            if self._used and self._recompile is not None:
                self.op = self._recompile()
            results = execute(st, self.op, self.ins, self.outs, arrays)
            self._used = True
        return results[0] if len(results) == 1 else results


def InputTensor(graph, index, desc):
    """Graph input ``index`` with ``desc`` (a TensorDesc or DML_TENSOR_DESC)."""
    d = desc if isinstance(desc, TensorDesc) else TensorDesc.of(desc)
    if any(n.kind == "input" and n.index == index for n in graph.nodes):
        _fail("InputTensor", f"graph input {index} was already created")
    return Expression(graph, graph.add(Node("input", graph._name(f"input{index}"), index,
                                            outputs=[d])))


def ConstantData(graph, data, desc):
    """Constant data (FL 6_2): ``data`` (bytes or an array) copied, read as ``desc``."""
    d = desc if isinstance(desc, TensorDesc) else TensorDesc.of(desc)
    raw = np.ascontiguousarray(data).tobytes() if not isinstance(data, bytes) else data
    if len(raw) != d.totalTensorSizeInBytes:
        _fail("ConstantData", f"data holds {len(raw)} bytes but the desc's "
                              f"TotalTensorSizeInBytes is {d.totalTensorSizeInBytes}")
    return Expression(graph, graph.add(Node("constant", graph._name("constant"), outputs=[d],
                                            data=raw)))


def Reinterpret(input, newTypeOrSizes=None, newSizes=None, newStrides=None):
    """The same data with another type, sizes or strides (TotalTensorSizeInBytes kept):
    ``Reinterpret(x, sizes, strides)`` or ``Reinterpret(x, dataType, sizes, strides)``."""
    src = input.GetOutputDesc()
    if isinstance(newTypeOrSizes, (list, tuple)):
        data_type, sizes, strides = src.dataType, newTypeOrSizes, newSizes
    else:
        data_type = src.dataType if newTypeOrSizes is None else int(newTypeOrSizes)
        sizes, strides = (src.sizes if newSizes is None else newSizes), newStrides
    need = dml.DMLCalcBufferTensorSize(data_type, len(sizes), list(sizes), strides)
    if need > src.totalTensorSizeInBytes:
        _fail("Reinterpret", f"sizes {list(sizes)} with strides {strides} need {need} bytes but "
                             f"the input holds {src.totalTensorSizeInBytes}")
    d = TensorDesc.raw(data_type, src.flags, sizes, strides, src.totalTensorSizeInBytes,
                       src.guaranteedBaseOffsetAlignment)
    g = input.graph
    return Expression(g, g.add(Node("reinterpret", g._name("reinterpret"), inputs=[input],
                                    outputs=[d])))

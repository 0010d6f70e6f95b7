"""dmlsim.onnx's lowering: an ONNX model to one DirectML graph, as ONNX Runtime's DirectML
provider builds it, through dmlx (dmlsim's DirectMLX) and IDMLDevice1::CompileGraph.

The model is shape-inferred (``onnx.shape_inference``; every shape must be static) and lowered
node by node with one rule per ONNX operator (``onnx_rules.RULES``). Conventions of the DML
provider that the rules follow:

- every tensor a node produces is packed; broadcasting reads an input through zero strides
  (``Lowering.broadcast``), Reshape/Flatten/Squeeze/Unsqueeze are reinterpretations of the same
  bytes, Transpose and Expand are ELEMENT_WISE_IDENTITY of a strided view;
- initializers become graph inputs flagged OWNED_BY_DML, bound once at initialization;
- ONNX inputs that DML takes as desc fields (shape, axes, pads, starts/ends, K, ...) must be
  constants: a node whose inputs are all constants is folded on the CPU with ONNX's reference
  evaluator (``onnx.reference``), so Shape -> Gather -> Concat chains disappear; otherwise the
  rule fails naming the node and input;
- an activation whose only consumer is Conv, ConvTranspose, Gemm, MatMul, BatchNormalization,
  InstanceNormalization or Add is folded into that node's FusedActivation (Add becomes ADD1);
- bool tensors are UINT8; int64 is native.

Errors: a node dmlsim cannot lower is E_NOTIMPL naming the node and its op type; a desc DML
rejects is E_INVALIDARG, ``dmlsim.onnx: node 3 'conv1' (Conv): dmlx.Convolution: ...``.

With a ``placement`` (``onnx_partition.Placement``) the lowering is a probe for ONNX Runtime's
graph partitioner: a node that cannot be lowered (E_NOTIMPL, a desc DML refuses, a desc field
only the CPU knows at run time, or one the placement's rules give to the CPU) is recorded as a CPU
node, its outputs become runtime inputs of the probe graph, and lowering goes on; the
partitioner then cuts the model into DML partitions and CPU steps.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .._api import public as dml
from .._core import dtypes
from .._schema.operators_generated import OPERATORS
from . import dmlx_graph as G, onnx_rewrite, progress
from .dmlx_functions import Identity
from .onnx_functions import expand
from .onnx_shapes import infer

FUSABLE_INTO = {"Conv", "ConvTranspose", "Gemm", "MatMul", "BatchNormalization",
                "InstanceNormalization", "Add"}
FOLD_LIMIT = 1 << 20  # elements: larger all-constant nodes run on the device instead
# A constant whose DML tensor is under 8 bytes (a scalar: totals round up to 4 bytes) is a
# DML_GRAPH_NODE_TYPE_CONSTANT node from DML_FEATURE_LEVEL_6_2, as the DML provider makes it
# (c_maxConstNodeDataSize); larger ones, and all of them below 6_2, are OWNED_BY_DML inputs.
CONSTANT_NODE_BYTES = 8
CONSTANT_NODE_LEVEL = dml.DML_FEATURE_LEVEL_6_2


def fail(hr, message):
    raise dml.HResultError(hr, f"dmlsim.onnx: {message}")


class DmlRefused(dml.HResultError):
    """A desc DML's own validation refused (E_INVALIDARG from a DML or dmlx call)."""


class Late(dml.HResultError):
    """A node whose inputs' shapes (or desc-field values) are known only at run time, after a
    CPU node: a DML partition planned when the values arrive."""


class NeedsConstant(dml.HResultError):
    """A rule needs ``name`` as a constant (a desc field); sessions that know the graph
    inputs' values (the ONNX backend) bind such inputs as constants and lower again."""

    inputs: tuple = ()  # the graph inputs ``name`` is computed from

    def __init__(self, name, message):
        super().__init__(dml.E_INVALIDARG, f"dmlsim.onnx: {message}")
        self.name = name


@dataclass
class Value:
    """An ONNX value: its shape and numpy dtype, a constant's data, and (once the graph needs it
    as a tensor) the dmlx Expression holding it, packed, with sizes ``shape`` (or [1])."""

    shape: tuple
    dtype: np.dtype
    const: np.ndarray | None = None
    expr: Any = None
    empty: bool = False  # a zero-sized graph input: its type and shape only, no tensor


def _not_empty(name, shape):
    if 0 in shape:
        fail(dml.E_NOTIMPL, f"value '{name}' is empty ({list(shape)}); DML has no zero-sized "
                            "dimensions")


def given(node, k) -> bool:
    """Whether optional input ``k`` of ``node`` is given (present and not the empty name)."""
    return k < len(node.input) and node.input[k] != ""


def sizes_of(shape) -> list:
    return [int(s) for s in shape] or [1]


def packed_strides(sizes) -> list:
    return list(dtypes.packed_strides(tuple(sizes)))


def dml_type(np_dtype) -> int:
    d = np.dtype(np_dtype)
    try:
        return dtypes.dml_type_of(np.dtype(np.uint8) if d == np.bool_ else d)
    except dml.HResultError:
        fail(dml.E_NOTIMPL, f"element type {d.name} has no DML_TENSOR_DATA_TYPE")


class Lowering:
    """Lowers one ONNX graph onto a dmlx Graph; ``compile()`` gives the session's pieces."""

    def __init__(self, model, device, rules: dict, activations: dict, fuse=True, base_dir="",
                 placement=None):
        self.rules, self.activations, self.fuse = rules, activations, fuse
        self.placement = placement  # None: every node must lower (no CPU fallback)
        self.cpu: dict = {}         # node index -> why it runs on the CPU
        self.folded: set = set()    # node indices folded on the CPU at plan time
        self.fused: dict = {}       # producer node index -> activation node index
        self.unknown: dict = {}     # values DML cannot hold (shape or type) -> why
        self.deferred: dict = {}    # node index -> why it is planned at run time
        self.late: set = set()      # values whose shape is known only at run time
        self.base_dir = base_dir  # where initializers kept as external data are read from
        model = onnx.load(model) if isinstance(model, str) else model
        if model.graph.sparse_initializer:
            fail(dml.E_NOTIMPL, "sparse initializers are not supported")
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
                          1)
        model = expand(infer(model), self._takes, self.opset, infer)
        self.model, self.device = model, device
        query = dml.DML_FEATURE_QUERY_FEATURE_LEVELS(2, [dml.DML_FEATURE_LEVEL_1_0,
                                                         CONSTANT_NODE_LEVEL])
        self.constant_nodes = device.CheckFeatureSupport(
            dml.DML_FEATURE_FEATURE_LEVELS, query).MaxSupportedFeatureLevel == CONSTANT_NODE_LEVEL
        self.graph = G.Graph(device)
        self.values: dict = {}
        self.owned: list = []    # (graph input index, array) bound at initialization
        self.inputs: list = []   # (name, graph input index, Value) runtime inputs
        self.next_index = 0
        self.types = {vi.name: vi for vi in list(model.graph.value_info) +
                      list(model.graph.input) + list(model.graph.output)}
        self.lowered: list = []  # (node index, node, [output Values]) for `dmlsim lower`
        self.const_views: dict = {}

    def array(self, init):
        """An initializer's values (external data read from ``base_dir``)."""
        try:
            return numpy_helper.to_array(init, self.base_dir)
        except (OSError, ValueError) as e:
            fail(dml.E_INVALIDARG, f"initializer '{init.name}': its data cannot be read: {e}")

    def _takes(self, node, types) -> bool:
        """Whether a rule lowers ``node`` (else ONNX's function body for it is inlined)."""
        rule = self.rules.get(node.op_type)
        takes = getattr(rule, "takes", None)
        return rule is not None and (takes is None or takes(node, types))

    # ---- values --------------------------------------------------------------------------
    def info(self, name):
        vi = self.types.get(name)
        if vi is None or not vi.type.HasField("tensor_type"):
            fail(dml.E_NOTIMPL, f"value '{name}' is not a tensor (sequences, maps and optional "
                                "types are not supported)")
        t = vi.type.tensor_type
        if not t.HasField("shape"):
            fail(dml.E_INVALIDARG, f"value '{name}' has no shape after shape inference")
        if t.elem_type == onnx.TensorProto.STRING:
            fail(dml.E_NOTIMPL, f"value '{name}' is a string tensor; DirectML has no strings")
        dims = []
        for d in t.shape.dim:
            if not d.HasField("dim_value"):
                fail(dml.E_INVALIDARG, f"value '{name}' has a dynamic dimension "
                                       f"'{d.dim_param or '?'}'; DirectML graphs need static "
                                       "shapes (give the input a fixed shape)")
            dims.append(int(d.dim_value))
        return tuple(dims), helper.tensor_dtype_to_np_dtype(t.elem_type)

    def tensor(self, v: Value, name="constant"):
        """The Expression holding ``v`` (constants become OWNED_BY_DML graph inputs)."""
        if v.expr is None:
            if v.const is None:
                if v.empty:
                    fail(dml.E_NOTIMPL, f"value '{name}' is empty ({list(v.shape)}); DML has "
                                        "no zero-sized dimensions")
                fail(dml.E_INVALIDARG, f"value '{name}' has no tensor")
            data = np.ascontiguousarray(v.const.astype(np.uint8) if v.dtype == np.bool_
                                        else v.const)
            if self._constant_node(v):
                plain = G.TensorDesc(dml_type(v.dtype), sizes_of(v.shape))
                raw = data.tobytes().ljust(plain.totalTensorSizeInBytes, b"\0")
                v.expr = G.ConstantData(self.graph, raw, plain)
                return v.expr
            index = self.next_index
            self.next_index += 1
            desc = G.TensorDesc(dml_type(v.dtype), dml.DML_TENSOR_FLAG_OWNED_BY_DML,
                                sizes_of(v.shape))
            v.expr = G.InputTensor(self.graph, index, desc)
            self.owned.append((index, data))
        return v.expr

    def _strided_input(self, v: Value, sizes, strides, name):
        """An OWNED_BY_DML input reading constant ``v``'s elements through ``strides`` (a
        broadcast bias stays its own size, as ONNX Runtime's DML provider binds it)."""
        flat = np.ascontiguousarray(v.const.astype(np.uint8) if v.dtype == np.bool_
                                    else v.const).reshape(-1)
        sizes, strides = [int(n) for n in sizes], [int(t) for t in strides]
        reach = 1 + sum((n - 1) * t for n, t in zip(sizes, strides))
        if reach > flat.size:
            fail(dml.E_INVALIDARG, f"value '{name}': sizes {sizes} with strides {strides} reach "
                                   f"element {reach - 1} of a {flat.size}-element tensor")
        dtype = dml_type(v.dtype)
        total = dml.DMLCalcBufferTensorSize(dtype, len(sizes), sizes, strides)
        index = self.next_index
        self.next_index += 1
        desc = G.TensorDesc.raw(dtype, dml.DML_TENSOR_FLAG_OWNED_BY_DML, sizes, strides, total)
        self.owned.append((index, np.lib.stride_tricks.as_strided(
            flat, tuple(sizes), tuple(t * flat.itemsize for t in strides), writeable=False)))
        return G.InputTensor(self.graph, index, desc)

    def _constant_node(self, v: Value) -> bool:
        """Whether constant ``v`` is a CONSTANT node (its views are reinterpretations)."""
        return v.const is not None and self.constant_nodes and dml.DMLCalcBufferTensorSize(
            dml_type(v.dtype), len(sizes_of(v.shape)), sizes_of(v.shape), None) < \
            CONSTANT_NODE_BYTES

    def constant(self, name, node, what):
        """An input DML needs as a desc field: it must be a constant."""
        v = self.values.get(name)
        if v is None or v.const is None:
            e = NeedsConstant(name, f"{self.label(node)}: input '{name}' ({what}) must be a "
                                    "constant (an initializer or foldable from them); "
                                    "DirectML takes it as an operator attribute")
            e.inputs = tuple(self.sources(name))
            raise e
        return v.const

    def sources(self, name) -> list:
        """The graph inputs (not initializers) that value ``name`` is computed from."""
        producer = {}

        def walk(nodes):
            for n in nodes:
                reads = list(n.input)
                for a in n.attribute:
                    for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                        walk(g.node)
                        reads += [i for m in g.node for i in m.input]
                for o in n.output:  # dmlsim's NonZero coordinates: values, not inputs' data
                    producer[o] = reads if n.domain != "com.dmlsim" else []
        walk(self.model.graph.node)
        inits = {i.name for i in self.model.graph.initializer}
        runtime = {i.name for i in self.model.graph.input if i.name not in inits}
        seen, todo, out = set(), [name], []
        while todo:
            v = todo.pop()
            if v in seen or not v:
                continue
            seen.add(v)
            if v in runtime:
                out.append(v)
            elif v in producer:
                todo.extend(producer[v])
        return sorted(out)

    def label(self, node):
        return f"node {self.node_index} '{node.name}' ({node.op_type})"

    # ---- lowering ------------------------------------------------------------------------
    def lower(self):
        g = self.model.graph
        for init in g.initializer:
            arr = self.array(init)
            self.values[init.name] = Value(tuple(arr.shape), arr.dtype, arr)
        for vi in g.input:
            if vi.name in self.values:
                continue
            if self.placement is not None:
                try:
                    shape, dt = self.info(vi.name)
                    dml_type(dt)
                except dml.HResultError as e:  # its readers run on the CPU
                    self.unknown[vi.name] = e.message.removeprefix("dmlsim.onnx: ")
                    continue
                if 0 in shape:  # a reader that needs its data runs on the CPU
                    self.values[vi.name] = Value(shape, dt, empty=True)
                    continue
            shape, dt = self.info(vi.name)
            v = Value(shape, dt)
            index = self.next_index
            self.next_index += 1
            v.expr = G.InputTensor(self.graph, index, G.TensorDesc(dml_type(dt),
                                                                   sizes_of(shape)))
            self.values[vi.name] = v
            self.inputs.append((vi.name, index, v))
        self.fused = fused = self._fusions()
        for k, node in enumerate(progress.nodes(g.node, "lowering")):
            self.node_index = k
            if k in fused.values():
                continue
            if self.placement is None:
                self._lower_node(node, fused.get(k))
                continue
            why = self.placement.refuses(self, node)
            try:
                if why:
                    if not self._try_fold(node):
                        self._to_cpu(k, node, why)
                    continue
                self._lower_node(node, fused.get(k))
            except NeedsConstant as e:
                if e.inputs:
                    raise  # the session reads those graph inputs on the CPU and plans again
                self._defer(k, node, f"reads '{e.name}' back at run time: DML takes it as "
                                     "a desc field")
            except Late as e:
                self._defer(k, node, e.message.removeprefix("dmlsim.onnx: "))
            except dml.HResultError as e:
                if e.hresult != dml.E_NOTIMPL and not isinstance(e, DmlRefused):
                    raise
                self._to_cpu(k, node, e.message.removeprefix("dmlsim.onnx: "))
        return self

    def _try_fold(self, node) -> bool:
        ins = [self.values.get(n) if n else None for n in node.input]
        if node.op_type == "Constant" or self._foldable(node, ins):
            self._fold(node, ins)
            self.folded.add(self.node_index)
            return True
        return False

    def _defer(self, k, node, why):
        """Node ``k`` is DML work planned per run (its outputs are late too)."""
        self.deferred[k] = why
        if k in self.fused:
            del self.fused[k]
        for name in node.output:
            if name and name not in self.values:
                self.unknown[name] = "its shape is known only at run time"
                self.late.add(name)

    def _to_cpu(self, k, node, why):
        """Node ``k`` runs on the CPU: its outputs are runtime inputs of what follows."""
        self.cpu[k] = why
        if k in self.fused:  # its activation is lowered on its own when reached
            del self.fused[k]
        for name in node.output:
            if not name or name in self.values:
                continue
            try:
                shape, dt = self.info(name)
                dml_type(dt)
                _not_empty(name, shape)
            except dml.HResultError as e:
                self.unknown[name] = e.message.removeprefix("dmlsim.onnx: ")
                if "DML_TENSOR_DATA_TYPE" not in e.message and "string" not in e.message and \
                        "empty" not in e.message:
                    self.late.add(name)  # shape (or type) known only when computed
                continue
            v = Value(shape, dt)
            v.expr = G.InputTensor(self.graph, self.next_index,
                                   G.TensorDesc(dml_type(dt), sizes_of(shape)))
            self.next_index += 1
            self.values[name] = v

    def _fusable(self, fa) -> bool:
        """Whether DML takes ``fa`` as a FusedActivation on this device: the activations the
        fused-activations guide (and the feature-level history) list, at the device's level."""
        schema = OPERATORS.get(f"DML_OPERATOR_ACTIVATION_{fa.activation}")
        if schema is None or not schema.get("usable_as_fused_activation"):
            return False
        query = dml.DML_FEATURE_QUERY_FEATURE_LEVELS(2, [dml.DML_FEATURE_LEVEL_1_0,
                                                         schema["introduced"]])
        return self.device.CheckFeatureSupport(
            dml.DML_FEATURE_FEATURE_LEVELS, query).MaxSupportedFeatureLevel == \
            schema["introduced"]

    def _fusions(self) -> dict:
        """{producer node index: activation node index} for foldable activations."""
        ACTIVATIONS = self.activations
        g = self.model.graph
        if not self.fuse:
            return {}
        consumers: dict = {}
        for k, node in enumerate(g.node):
            for name in node.input:
                consumers.setdefault(name, []).append(k)
        outputs = {o.name for o in g.output}
        producer = {o: k for k, node in enumerate(g.node) for o in node.output}
        out = {}
        for k, node in enumerate(g.node):
            if node.op_type not in ACTIVATIONS or len(node.input) != 1:
                continue
            src = node.input[0]
            p = producer.get(src)
            if p is None or g.node[p].op_type not in FUSABLE_INTO or src in outputs or \
                    len(consumers.get(src, [])) != 1 or len(g.node[p].output) != 1:
                continue
            fa = ACTIVATIONS[node.op_type](node, self)
            if fa is None or not self._fusable(fa):
                continue
            out[p] = k
        return out

    def _lower_node(self, node, fused_index):
        g = self.model.graph
        ins = [self.values.get(n) if n else None for n in node.input]
        missing = [n for n, v in zip(node.input, ins) if n and v is None]
        late = [n for n in missing if n in self.unknown]
        if late:
            key = node.op_type if node.domain in ("", "ai.onnx") else \
                f"{node.domain}.{node.op_type}"
            if all(n in self.late for n in late) and key in self.rules:
                raise Late(dml.E_NOTIMPL, f"dmlsim.onnx: input '{late[0]}' has a shape known "
                                          "only at run time")
            fail(dml.E_NOTIMPL, f"{self.label(node)}: input '{late[0]}' stays on the CPU: "
                                f"{self.unknown[late[0]]}")
        if missing:
            fail(dml.E_INVALIDARG, f"{self.label(node)}: input '{missing[0]}' is not produced "
                                   "by any earlier node")
        if node.op_type == "Constant" or self._foldable(node, ins):
            self._fold(node, ins)
            self.folded.add(self.node_index)
            return
        for name in node.output:
            if name and name in self.types and self._elements(name) == 0 and \
                    self.types[name].type.tensor_type.shape.dim:
                dims = [d.dim_value for d in self.types[name].type.tensor_type.shape.dim]
                if 0 in dims and all(d.HasField("dim_value") for d in
                                     self.types[name].type.tensor_type.shape.dim):
                    fail(dml.E_NOTIMPL, f"{self.label(node)}: output '{name}' is empty "
                                        f"({dims}); DML has no zero-sized dimensions (ORT "
                                        "runs such nodes on the CPU)")
        key = node.op_type if node.domain in ("", "ai.onnx") else \
            f"{node.domain}.{node.op_type}"
        if key not in self.rules:
            fail(dml.E_NOTIMPL, f"{self.label(node)}: no lowering in dmlsim.onnx for {key}")
        act = None
        names = list(node.output)
        if fused_index is not None:
            act_node = g.node[fused_index]
            act = self.activations[act_node.op_type](act_node, self)
            names = list(act_node.output)
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        try:
            outs = self.rules[key](self, node, ins, attrs, act)
        except dml.HResultError as e:
            if e.message.startswith("dmlsim.onnx: "):
                raise
            raise DmlRefused(e.hresult, f"dmlsim.onnx: {self.label(node)}: {e.message}") \
                from None
        except Exception as e:  # noqa: BLE001 -- a node its operator's schema does not allow
            fail(dml.E_INVALIDARG, f"{self.label(node)}: the node is malformed for "
                                   f"{node.op_type} (inputs {list(node.input)}, attributes "
                                   f"{sorted(attrs)}): {type(e).__name__}: {e}")
        outs = outs if isinstance(outs, list) else [outs]
        made = []
        for name, v in zip(names, outs):
            if name and v is not None:
                self.values[name] = v
                made.append(v)
        self.lowered.append((self.node_index, node, made))
        if made and all(v.const is not None for v in made):  # Shape, Size: known at plan time
            self.folded.add(self.node_index)

    def lower_inner(self, node):
        """Lower a node of a subgraph taken in place (an If's branch)."""
        self._lower_node(node, None)

    def _foldable(self, node, ins) -> bool:
        if not ins or any(v is None or v.const is None for v in ins if v is not None):
            return False
        if any(a.HasField("g") or a.graphs for a in node.attribute):
            return False  # a subgraph reads outer values by name: its rule lowers it
        if all(v is None for v in ins) or not node.output:
            return False
        return all(self._elements(o) <= FOLD_LIMIT for o in node.output if o in self.types)

    def _elements(self, name) -> int:
        """Elements of value ``name`` by shape inference; 0 where a dimension is unknown (a
        node of constants folds then: its result's shape is what the folding finds)."""
        t = self.types[name].type
        if not t.HasField("tensor_type"):
            return 0
        dims = t.tensor_type.shape.dim
        if any(not d.HasField("dim_value") for d in dims):
            return 0
        return int(np.prod([d.dim_value for d in dims] or [1]))

    def _fold(self, node, ins):
        try:
            results = onnx_rewrite.evaluate(node, [None if v is None else v.const for v in ins],
                                            self.model.opset_import)
        except Exception as e:  # noqa: BLE001 -- the reference evaluator says why
            fail(dml.E_INVALIDARG, f"{self.label(node)}: folding this all-constant node "
                                   f"failed: {e}")
        for name, arr in zip(node.output, results):
            if name:
                self.values[name] = Value(tuple(arr.shape), arr.dtype, arr)

    # ---- helpers for the rules -----------------------------------------------------------
    def new(self, expr, shape, dtype) -> Value:
        """A Value for a node's output ``expr``; its sizes are reinterpreted to ``shape``."""
        if len(shape) > 8:  # DML tensors have at most 8 dimensions
            fail(dml.E_NOTIMPL, f"an output of {len(shape)} dimensions (DML has at most 8)")
        want = sizes_of(shape)
        if list(expr.GetOutputDesc().sizes) != want:
            expr = G.Reinterpret(expr, want, None)
        return Value(tuple(int(s) for s in shape), np.dtype(dtype), None, expr)

    def view(self, v: Value, sizes, strides=None, name="value"):
        """``v``'s tensor read with other sizes (same bytes; packed unless ``strides``). A
        constant gets its own OWNED_BY_DML input per view (dmlsim stores an OWNED_BY_DML
        input once, so its consumers must agree on its desc): reshaped data for other sizes,
        the constant's own elements read through ``strides`` (a broadcast) otherwise."""
        if v.const is not None and (list(sizes) != sizes_of(v.shape) or strides is not None) \
                and not self._constant_node(v):
            key = (id(v), tuple(sizes), None if strides is None else tuple(strides))
            if key not in self.const_views:  # v held too: its id stays unique
                self.const_views[key] = (v, self.tensor(Value(
                    tuple(sizes), v.dtype, np.ascontiguousarray(v.const).reshape(sizes)), name)
                    if strides is None else self._strided_input(v, sizes, strides, name))
            return self.const_views[key][1]
        e = self.tensor(v, name)
        if list(e.GetOutputDesc().sizes) == list(sizes) and strides is None and \
                e.GetOutputDesc().strides is None:
            return e
        return G.Reinterpret(e, [int(s) for s in sizes],
                             None if strides is None else [int(s) for s in strides])

    def broadcast(self, v: Value, shape, rank=None):
        """``v`` read as ``shape`` (numpy broadcasting, right-aligned) through zero strides,
        with leading 1s up to ``rank`` dimensions."""
        shape = tuple(shape)
        if rank is not None and len(shape) < rank:
            shape = (1,) * (rank - len(shape)) + shape
        src = (1,) * (len(shape) - len(v.shape)) + tuple(v.shape)
        if len(src) != len(shape) or any(s not in (1, t) for s, t in zip(src, shape)):
            fail(dml.E_INVALIDARG, f"a {list(v.shape)} operand does not broadcast to "
                                   f"{list(shape)}")
        if src == shape:
            return self.view(v, sizes_of(shape))
        packed = packed_strides(sizes_of(src))
        strides = [0 if s == 1 and t != 1 else p for s, t, p in zip(src, shape, packed)]
        return self.view(v, sizes_of(shape), strides)

    def axis(self, axis, rank):
        axis = int(axis)
        return axis + rank if axis < 0 else axis

    # ---- the result ----------------------------------------------------------------------
    def outputs(self):
        """(name, Expression, Value) per graph output: an IDENTITY where the output is a
        graph input, a constant or a reinterpretation (graph outputs come from operators)."""
        out = []
        for o in self.model.graph.output:
            if o.type.WhichOneof("value") not in (None, "tensor_type"):
                fail(dml.E_NOTIMPL, f"graph output '{o.name}' is not a tensor (sequences, maps "
                                    "and optional types are not supported)")
            v = self.values.get(o.name)
            if v is None:
                fail(dml.E_INVALIDARG, f"graph output '{o.name}' is not produced by any node")
            if len(v.shape) > 8:
                fail(dml.E_NOTIMPL, f"graph output '{o.name}' has {len(v.shape)} dimensions "
                                    "(DML has at most 8)")
            e = self.tensor(v, o.name)
            src, _ = G._source(e)
            if src.kind != "operator" or e.GetOutputDesc().strides is not None:
                e = Identity(e)
            out.append((o.name, e, v))
        return out

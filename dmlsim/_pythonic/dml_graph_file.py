"""Serialized DirectML graphs: read one into a DML_GRAPH_DESC and compile it, or write a
DML_GRAPH_DESC (or a dmlx graph) as one, so a graph built in dmlsim replays in DxDispatch.

The file is DirectML's flatbuffer ``DmlGraphDesc`` (``dml_graph_fb``). Reading follows
DirectML's own deserializer and ``ConvertGraphDesc`` (DxDispatch's ``DirectMLHelpers``):

- edges are names: a node input named as a graph input is an input edge (its index in
  ``graphInputNames``), any other non-empty name must be an output of an earlier node (nodes
  are in topological order) and makes an intermediate edge; a node output named as a graph
  output is an output edge. An empty name is an absent optional tensor.
- an operator node lists the tensor descs of its present inputs and outputs and one attribute
  per attribute field of the operator's schema, in the schema's order (count fields
  included; an absent optional attribute has no value). A tensor-array field takes the
  remaining tensor descs.
- a constant node holds its bytes (a DML_CONSTANT_DATA_GRAPH_NODE_DESC, FL 6_2) or names a
  file: ``NAME.bin`` beside the graph file (what ONNX Runtime writes for large weights). A named
  constant becomes one more graph input, after the largest graph input index in order of
  first use, and the tensors it feeds are OWNED_BY_DML, bound at initialization.

Where dmlsim differs: a graph with no graph-input edges numbers its named constants from 0
(DirectML's helper from 1, leaving input 0 unbound); every failure is an HResultError naming
the node, where DirectML's helper throws C++ exceptions.
Writing keeps what the format can hold: tensor flags (OWNED_BY_DML on graph inputs) and
GuaranteedBaseOffsetAlignment are not in it, so a reader sees plain tensors there.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .._api import public as dml
from .._schema.operators_generated import DESC_STRUCTS, OPERATORS
from . import dml_graph_fb as fb
from .run import _Tensor, run_compiled, schema_of

_KIND = {"uint": "UInt32", "int": "Int32", "float": "Float32", "uint_array": "UIntArray",
         "int_array": "IntArray", "float_array": "FloatArray", "scale_bias": "ScaleBias",
         "size_2d": "Size2D", "scalar_union": "ScalarUnionData", "bool": "Bool",
         "operator_desc": "Activation", "operator_desc_array": "ActivationArray"}
"""The AttributeFieldVariant member that holds each kind of desc field."""


def _fail(message: str, hr=dml.E_INVALIDARG):
    raise dml.HResultError(hr, f"serialized graph: {message}")


class SerializedGraph:
    """A serialized graph read for one IDMLDevice: ``desc`` (the DML_GRAPH_DESC, its
    operators created), ``input_names`` / ``output_names`` by graph input / output index (the
    named constants last), ``constants`` ({node name: (graph input index, bytes)}),
    ``input_descs`` / ``output_descs`` (the DML_TENSOR_DESC bound at each index).
    ``compile(flags)`` is CompileGraph; ``run(*arrays)`` runs it on NumPy arrays, one per
    graph input that is not a named constant."""

    def __init__(self, device, desc, input_names, output_names, constants, input_descs,
                 output_descs):
        self.device, self.desc = device, desc
        self.input_names, self.output_names = input_names, output_names
        self.constants, self.input_descs, self.output_descs = constants, input_descs, \
            output_descs
        self._compiled: dict = {}

    def __repr__(self):
        graph_inputs = [n for n in self.input_names if n not in self.constants]
        return (f"<SerializedGraph {self.desc.NodeCount} nodes, inputs {graph_inputs}, "
                f"outputs {self.output_names}, {len(self.constants)} named constants>")

    def compile(self, flags: int = 0):
        """IDMLDevice1::CompileGraph of ``desc`` (one compiled operator per flags value)."""
        if int(flags) not in self._compiled:
            self._compiled[int(flags)] = self.device.CompileGraph(self.desc, flags)
        return self._compiled[int(flags)]

    def run(self, *arrays, flags: int = 0) -> list:
        """The graph's outputs for ``arrays`` (one per graph input that is not a named
        constant, in index order), named constants filled from their files."""
        free = [i for i, n in enumerate(self.input_names) if n not in self.constants]
        if len(arrays) != len(free):
            _fail(f"run: arrays: the graph takes {len(free)} inputs "
                  f"({', '.join(self.input_names[i] for i in free)}), got {len(arrays)}")
        values: list = [None] * len(self.input_names)
        for i, a in zip(free, arrays):
            values[i] = a
        for index, data in self.constants.values():
            t = _Tensor(self.input_descs[index])
            values[index] = np.frombuffer(data, t.np_dtype)[:int(np.prod(t.sizes))].reshape(
                t.sizes)
        return run_compiled(self.compile(flags), self.input_descs, self.output_descs, values,
                            device=self.device)


def read_serialized_graph(source, device, constants_dir=None) -> SerializedGraph:
    """Read a serialized DML graph (a path, or the file's bytes) for ``device`` (an
    IDMLDevice1): its operators are created there, named constants read from
    ``NAME.bin`` in ``constants_dir`` (default: the graph file's folder)."""
    if not isinstance(device, dml.IDMLDevice1):
        _fail(f"device is {type(device).__name__}; an IDMLDevice1 is required")
    if isinstance(source, (bytes, bytearray, memoryview)):
        data, folder = bytes(source), constants_dir
    elif isinstance(source, (str, Path)):
        try:
            data = Path(source).read_bytes()
        except (OSError, ValueError) as e:
            _fail(f"cannot read '{source}': {getattr(e, 'strerror', None) or e}")
        folder = constants_dir if constants_dir is not None else Path(source).parent
    else:
        _fail(f"source is {type(source).__name__}; a path or bytes is required")
    try:
        graph = fb.read(data)
    except fb.FormatError as e:
        _fail(str(e))
    return _Reader(graph, device, folder).result()


class _Reader:
    def __init__(self, graph: fb.Graph, device, folder):
        self.graph, self.device, self.folder = graph, device, folder
        self.inputs = {n: i for i, n in enumerate(graph.input_names) if n}
        self.outputs = {n: i for i, n in enumerate(graph.output_names) if n}
        self.producer: dict = {}        # edge name -> (file node index, output slot)
        self.named: dict = {}           # edge name -> named-constant node index
        self.new_index: dict = {}       # file node index -> DML graph node index
        self.nodes, self.in_edges, self.out_edges, self.mid_edges = [], [], [], []
        self.consumer_desc: dict = {}   # named-constant node index -> a tensor it feeds
        self.input_desc: dict = {}      # graph input index -> a tensor it feeds
        self.named_nodes = {k for k, n in enumerate(graph.nodes) if n.constant_name is not None}

    def result(self) -> SerializedGraph:
        pending = []                    # (from node, output, to node, slot, name)
        for k, node in enumerate(self.graph.nodes):
            if not node.name:
                _fail(f"node {k} has no name")
            descs = self._create(k, node)
            for slot, name in enumerate(node.input_names):
                if not name:
                    continue
                if slot >= len(descs):
                    _fail(f"node '{node.name}': input name {slot} ('{name}') has no tensor slot")
                if name in self.inputs:
                    self.in_edges.append((self.inputs[name], k, slot, name))
                    self.input_desc.setdefault(self.inputs[name], descs[slot])
                elif name in self.producer:
                    src, out = self.producer[name]
                    pending.append((src, out, k, slot, name))
                    if src in self.named_nodes:
                        self.consumer_desc[src] = descs[slot]
                else:
                    _fail(f"node '{node.name}': input {slot} is '{name}', which is neither a "
                          "graph input nor an output of an earlier node")
            for slot, name in enumerate(node.output_names):
                if name:
                    self.producer[name] = (k, slot)
                    if name in self.outputs:
                        self.out_edges.append((self.outputs[name], k, slot, name))
        return self._assemble(pending)

    def _create(self, k: int, node: fb.Node) -> list:
        """Add the node's DML graph node (none for a named constant); return the input
        tensor desc of each of its input slots."""
        if node.constant_name is not None:
            if not node.constant_name:
                _fail(f"constant node '{node.name}' names no data file")
            for name in node.output_names:
                self.named[name] = k
            return []
        self.new_index[k] = len(self.nodes)
        if not node.op_type:  # constant bytes in the file
            self.nodes.append(dml.DML_GRAPH_NODE_DESC(
                dml.DML_GRAPH_NODE_TYPE_CONSTANT,
                dml.DML_CONSTANT_DATA_GRAPH_NODE_DESC(node.constant_data,
                                                      len(node.constant_data), node.name)))
            return []
        desc, ins = _operator_desc(node, {n for n in node.input_names if n in self.named})
        try:
            op = self.device.CreateOperator(desc)
        except dml.HResultError as e:
            _fail(f"node '{node.name}': {e.message}", e.hresult)
        self.nodes.append(dml.DML_GRAPH_NODE_DESC(
            dml.DML_GRAPH_NODE_TYPE_OPERATOR, dml.DML_OPERATOR_GRAPH_NODE_DESC(op, node.name)))
        return ins

    def _assemble(self, pending) -> SerializedGraph:
        top = max([e[0] for e in self.in_edges], default=-1)
        constant_index, constants = {}, {}
        mids, ins = [], [dml.DML_GRAPH_EDGE_DESC(dml.DML_GRAPH_EDGE_TYPE_INPUT,
                                                 dml.DML_INPUT_GRAPH_EDGE_DESC(
                                                     g, self.new_index[k], slot, name))
                         for g, k, slot, name in self.in_edges]
        for src, out, k, slot, name in pending:
            node = self.graph.nodes[src]
            if node.constant_name is None:
                mids.append(dml.DML_GRAPH_EDGE_DESC(
                    dml.DML_GRAPH_EDGE_TYPE_INTERMEDIATE, dml.DML_INTERMEDIATE_GRAPH_EDGE_DESC(
                        self.new_index[src], out, self.new_index[k], slot, name)))
                continue
            if node.name not in constant_index:
                top += 1
                constant_index[node.name] = top
                constants[node.name] = (top, self._constant_bytes(node))
                self.input_desc[top] = self.consumer_desc[src]
            ins.append(dml.DML_GRAPH_EDGE_DESC(dml.DML_GRAPH_EDGE_TYPE_INPUT,
                                               dml.DML_INPUT_GRAPH_EDGE_DESC(
                                                   constant_index[node.name],
                                                   self.new_index[k], slot, name)))
        outs, out_descs = [], [None] * len(self.graph.output_names)
        for g, k, slot, name in self.out_edges:
            outs.append(dml.DML_GRAPH_EDGE_DESC(dml.DML_GRAPH_EDGE_TYPE_OUTPUT,
                                                dml.DML_OUTPUT_GRAPH_EDGE_DESC(
                                                    self.new_index[k], slot, g, name)))
            out_descs[g] = _output_desc(self.graph.nodes[k], slot)
        count = top + 1
        desc = dml.DML_GRAPH_DESC(count, len(self.graph.output_names), len(self.nodes),
                                  self.nodes, len(ins), ins, len(outs), outs, len(mids), mids)
        names = list(self.graph.input_names[:count]) + [""] * max(0, count - len(
            self.graph.input_names))
        for name, index in constant_index.items():
            names[index] = name
        return SerializedGraph(self.device, desc, names, list(self.graph.output_names),
                               constants, [self.input_desc.get(i) for i in range(count)],
                               out_descs)

    def _constant_bytes(self, node: fb.Node) -> bytes:
        if self.folder is None:
            _fail(f"constant node '{node.name}' names '{node.constant_name}.bin' and the graph "
                  "came as bytes: pass constants_dir")
        path = Path(self.folder) / f"{node.constant_name}.bin"
        try:
            return path.read_bytes()
        except (OSError, ValueError) as e:  # ValueError: a NUL in the name
            _fail(f"constant node '{node.name}': cannot read '{path}': "
                  f"{getattr(e, 'strerror', None) or e}")


def _tensor_desc(t: fb.Tensor, flags: int = 0):
    data_type = getattr(dml.DML_TENSOR_DATA_TYPE, t.data_type, None)
    if data_type is None:
        _fail(f"dataType '{t.data_type}' is not a DML_TENSOR_DATA_TYPE")
    return dml.DML_TENSOR_DESC(dml.DML_TENSOR_TYPE_BUFFER, dml.DML_BUFFER_TENSOR_DESC(
        int(data_type), flags, len(t.sizes), list(t.sizes), t.strides, t.total_bytes))


def _output_desc(node: fb.Node, slot: int):
    present = [i for i, n in enumerate(node.output_names) if n]
    return _tensor_desc(node.outputs[present.index(slot)]) if slot in present and \
        present.index(slot) < len(node.outputs) else None


def _operator_desc(node: fb.Node, constant_inputs: set):
    """(DML_OPERATOR_DESC, input tensor desc per input name slot) of an operator node."""
    schema = OPERATORS.get(node.op_type)
    if schema is None:
        _fail(f"node '{node.name}': type '{node.op_type}' is not a DML_OPERATOR_TYPE")
    desc = DESC_STRUCTS[node.op_type]()
    queues = {"input_tensor": (list(node.inputs), list(node.input_names)),
              "output_tensor": (list(node.outputs), list(node.output_names))}
    attributes = list(node.attributes)
    per_slot: list = []
    for f in schema["fields"]:
        if f["kind"] == "attribute":
            if not attributes:
                _fail(f"node '{node.name}': no attribute for {f['name']} (the {node.op_type} "
                      f"schema has more attribute fields than the node)")
            setattr(desc, f["name"], _attribute_value(node.name, f, attributes.pop(0)))
            continue
        tensors, names = queues[f["kind"]]
        is_input = f["kind"] == "input_tensor"
        if f["schema_type"] == "tensor_desc_array":
            value = []
            while tensors:
                name = names.pop(0) if names else ""
                value.append(_tensor_desc(tensors.pop(0), _owned(name, constant_inputs)))
                per_slot += [value[-1]] if is_input else []
            setattr(desc, f["name"], value)
            continue
        if not names:
            _fail(f"node '{node.name}': no {'input' if is_input else 'output'} name for "
                  f"{f['name']}")
        name = names.pop(0)
        value = None
        if name:
            if not tensors:
                _fail(f"node '{node.name}': no tensor desc for {f['name']} ('{name}')")
            value = _tensor_desc(tensors.pop(0), _owned(name, constant_inputs) if is_input
                                 else 0)
        setattr(desc, f["name"], value)
        per_slot += [value] if is_input else []
    return dml.DML_OPERATOR_DESC(schema["value"], desc), per_slot


def _owned(name: str, constant_inputs: set) -> int:
    return dml.DML_TENSOR_FLAG_OWNED_BY_DML if name in constant_inputs else 0


def _attribute_value(node_name: str, f: dict, a: fb.Attribute):
    want = _KIND[f["schema_type"]]
    if a.kind == "NONE":
        if f["schema_type"] in ("operator_desc", "scale_bias"):
            return None
        if f["schema_type"] == "operator_desc_array":
            return []
        _fail(f"node '{node_name}': attribute {f['name']} has no value")
    if a.kind != want:
        _fail(f"node '{node_name}': attribute {f['name']} is a {a.kind}; its field needs a "
              f"{want}")
    if want == "ScaleBias":
        return dml.DML_SCALE_BIAS(*a.value)
    if want == "Size2D":
        return dml.DML_SIZE_2D(*a.value)
    if want == "ScalarUnionData":
        union = dml.DML_SCALAR_UNION()
        union.Bytes = a.value
        return union
    if want == "Activation":
        return _activation_desc(node_name, a.value)
    if want == "ActivationArray":
        return [_activation_desc(node_name, v) for v in a.value]
    return list(a.value) if isinstance(a.value, (list, tuple)) else a.value


def _activation_desc(node_name: str, value):
    op_type, attributes = value
    schema = OPERATORS.get(op_type)
    if schema is None:
        _fail(f"node '{node_name}': fused activation '{op_type}' is not a DML_OPERATOR_TYPE")
    desc = DESC_STRUCTS[op_type]()
    fields = [f for f in schema["fields"] if f["kind"] == "attribute"]
    for f, a in zip(fields, attributes):
        setattr(desc, f["name"], _attribute_value(node_name, f, a))
    return dml.DML_OPERATOR_DESC(schema["value"], desc)


def write_serialized_graph(graph_desc, path=None, input_names=None, output_names=None) -> bytes:
    """The serialized form of ``graph_desc`` (a DML_GRAPH_DESC whose operators dmlsim
    created), written to ``path`` too when given. Graph inputs and outputs are named by their
    edges' Name, else ``input{i}`` / ``output{i}`` (or by ``input_names`` / ``output_names``);
    constant-data nodes keep their bytes in the file."""
    if not isinstance(graph_desc, dml.DML_GRAPH_DESC):
        _fail(f"write: graph_desc is {type(graph_desc).__name__}; a DML_GRAPH_DESC is required")
    graph = _Writer(graph_desc, input_names, output_names).graph()
    data = fb.write(graph)
    if path is not None:
        try:
            Path(path).write_bytes(data)
        except OSError as e:
            _fail(f"write: cannot write '{path}': {e.strerror}")
    return data


class _Writer:
    def __init__(self, desc, input_names, output_names):
        self.desc = desc
        self.used: set = set()
        edges = {t: [e.Desc for e in (getattr(desc, f) or []) if e.Type == t]
                 for t, f in ((dml.DML_GRAPH_EDGE_TYPE_INPUT, "InputEdges"),
                              (dml.DML_GRAPH_EDGE_TYPE_OUTPUT, "OutputEdges"),
                              (dml.DML_GRAPH_EDGE_TYPE_INTERMEDIATE, "IntermediateEdges"))}
        self.ins = edges[dml.DML_GRAPH_EDGE_TYPE_INPUT]
        self.outs = edges[dml.DML_GRAPH_EDGE_TYPE_OUTPUT]
        self.mids = edges[dml.DML_GRAPH_EDGE_TYPE_INTERMEDIATE]
        self.input_names = self._names(input_names, desc.InputCount, "input", self.ins,
                                       "GraphInputIndex")
        self.output_names = self._names(output_names, desc.OutputCount, "output", self.outs,
                                        "GraphOutputIndex")

    def _unique(self, name: str) -> str:
        base, k = name, 1
        while name in self.used:
            name, k = f"{base}_{k}", k + 1
        self.used.add(name)
        return name

    def _names(self, given, count, prefix, edges, index_field) -> list:
        if given is not None:
            given = [str(n) for n in given]
            if len(given) != count or len(set(given)) != count or not all(given):
                _fail(f"write: {prefix}_names must be {count} distinct non-empty names")
            self.used.update(given)
            return given
        names = {}
        for e in edges:
            names.setdefault(int(getattr(e, index_field)), e.Name)
        return [self._unique(names.get(i) or f"{prefix}{i}") for i in range(count)]

    def graph(self) -> fb.Graph:
        nodes = list(self.desc.Nodes or [])
        node_names = [self._unique(getattr(n.Desc, "Name", None) or f"node{i}")
                      for i, n in enumerate(nodes)]
        descs = [dml.operator_desc_of(n.Desc.Operator)
                 if n.Type == dml.DML_GRAPH_NODE_TYPE_OPERATOR else None for n in nodes]
        slots = [(_slot_count(d, "inputs"), _slot_count(d, "outputs")) if d is not None
                 else (0, 1) for d in descs]
        out_names = [[""] * n_out for _, n_out in slots]
        for e in self.outs:
            k, o, g = int(e.FromNodeIndex), int(e.FromNodeOutputIndex), int(e.GraphOutputIndex)
            if out_names[k][o]:
                _fail(f"write: output {o} of node '{node_names[k]}' feeds more than one graph "
                      "output; the format names each node output once", dml.E_NOTIMPL)
            out_names[k][o] = self.output_names[g]
        for k, d in enumerate(descs):  # every present output is named, used or not
            present = [True] * slots[k][1] if d is None else \
                [t is not None for t in _flat(d, "outputs")]
            for o, here in enumerate(present):
                if here and not out_names[k][o]:
                    out_names[k][o] = self._unique(f"{node_names[k]}_output{o}")
        in_names = [[""] * n_in for n_in, _ in slots]
        for e in self.ins:
            in_names[int(e.ToNodeIndex)][int(e.ToNodeInputIndex)] = \
                self.input_names[int(e.GraphInputIndex)]
        for e in self.mids:
            in_names[int(e.ToNodeIndex)][int(e.ToNodeInputIndex)] = \
                out_names[int(e.FromNodeIndex)][int(e.FromNodeOutputIndex)]
        return fb.Graph([self._node(nodes[k], descs[k], node_names[k], in_names[k],
                                    out_names[k]) for k in self._order(len(nodes))],
                        self.input_names, self.output_names)

    def _order(self, count: int) -> list:
        """Node indices in a topological order (the format requires one), stable: a node
        keeps its place unless an edge makes it wait for a later one."""
        waits = {k: set() for k in range(count)}
        for e in self.mids:
            waits[int(e.ToNodeIndex)].add(int(e.FromNodeIndex))
        order, done = [], set()
        while len(order) < count:
            ready = next((k for k in range(count) if k not in done and waits[k] <= done), None)
            if ready is None:
                _fail("write: the graph's intermediate edges form a cycle")
            order.append(ready)
            done.add(ready)
        return order

    @staticmethod
    def _node(node, desc, name, in_names, out_names) -> fb.Node:
        if desc is None:
            return fb.Node(name, [], out_names, constant_data=bytes(node.Desc.Data or b""))
        schema = schema_of(desc)
        return fb.Node(name, in_names, out_names, schema["name"],
                       [_ir_tensor(t) for t in _flat(desc, "inputs") if t is not None],
                       [_ir_tensor(t) for t in _flat(desc, "outputs") if t is not None],
                       _ir_attributes(schema, desc.Desc))


def _flat(desc, kind: str) -> list:
    schema = schema_of(desc)
    out = []
    for name in schema[kind]:
        value = getattr(desc.Desc, name)
        out.extend(value if isinstance(value, list) else [value])
    return out


def _slot_count(desc, kind: str) -> int:
    return len(_flat(desc, kind))


def _ir_tensor(t) -> fb.Tensor:
    b = t.Desc
    return fb.Tensor(dml.DML_TENSOR_DATA_TYPE(int(b.DataType)).name, [int(s) for s in b.Sizes],
                     None if b.Strides is None else [int(s) for s in b.Strides],
                     int(b.TotalTensorSizeInBytes))


def _ir_attributes(schema: dict, desc) -> list:
    out = []
    for f in schema["fields"]:
        if f["kind"] != "attribute":
            continue
        value, kind = getattr(desc, f["name"]), _KIND[f["schema_type"]]
        if value is None or (kind == "ActivationArray" and not value):
            out.append(fb.Attribute(f["name"], "NONE"))
        elif kind == "ScaleBias":
            out.append(fb.Attribute(f["name"], kind, (float(value.Scale), float(value.Bias))))
        elif kind == "Size2D":
            out.append(fb.Attribute(f["name"], kind, (int(value.Width), int(value.Height))))
        elif kind == "ScalarUnionData":
            out.append(fb.Attribute(f["name"], kind, bytes(value.Bytes)))
        elif kind == "Activation":
            out.append(fb.Attribute(f["name"], kind, _ir_activation(value)))
        elif kind == "ActivationArray":
            out.append(fb.Attribute(f["name"], kind, [_ir_activation(v) for v in value]))
        else:
            out.append(fb.Attribute(f["name"], kind, list(value) if isinstance(value, (list, tuple))
                                    else value))
    return out


def _ir_activation(op_desc) -> tuple:
    schema = schema_of(op_desc)
    return schema["name"], _ir_attributes(schema, op_desc.Desc)

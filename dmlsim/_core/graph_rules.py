"""The rules of DML_GRAPH_DESC (ns-directml-dml_graph_desc.md and its edge and node pages),
each failure an E_INVALIDARG that names the node (index, name, operator), the edge (array,
index, name) and the field, where DirectML's validator says only E_INVALIDARG.

- every edge points at a node and a slot that exist; a node input is fed by one edge; an
  edge into a slot whose operator has no tensor there (an optional tensor left out) is wrong;
- GraphInputIndex < InputCount; GraphOutputIndex < OutputCount, each output fed exactly once;
- "You must define a connection for the input and output of each supplied node, except for
  inputs and outputs that are optional for the associated operator": every input the
  operator has a tensor for is connected, every required output is consumed;
- the graph is acyclic ("must be a directed acyclic graph");
- connected tensors have the same TotalTensorSizeInBytes (they may differ in sizes, types and
  strides), constant data included (DataSize);
- OWNED_BY_DML inputs come from graph inputs, and every input connected to one graph input
  uses or omits the flag alike ("must use or omit this flag equivalently"); dmlsim also asks
  them to agree on the whole desc (the persistent resource stores the tensor once);
- operators belong to the compiling device; constant nodes need DML_FEATURE_LEVEL_6_2.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .hresult import E_INVALIDARG, fail

WHAT = "IDMLDevice1::CompileGraph"


@dataclass(frozen=True)
class GraphNode:
    op: object = None        # an Operator (core), or None for a constant node
    data: bytes | None = None
    name: str = ""


@dataclass(frozen=True)
class GraphSpec:
    input_count: int
    output_count: int
    nodes: tuple
    input_edges: tuple = ()         # (GraphInputIndex, ToNodeIndex, ToNodeInputIndex, Name)
    output_edges: tuple = ()        # (FromNodeIndex, FromNodeOutputIndex, GraphOutputIndex, Name)
    intermediate_edges: tuple = ()  # (FromNode, FromOutput, ToNode, ToInput, Name)


@dataclass
class Plan:
    order: list
    sources: dict = field(default_factory=dict)   # (node, input slot) -> source
    reads: list = field(default_factory=list)      # graph-input reads (graph._Read)
    outputs: list = field(default_factory=list)    # per graph output: (node, output slot)


def node_label(g: GraphSpec, k: int) -> str:
    n = g.nodes[k]
    kind = n.op.spec.name if n.op is not None else "constant data"
    return f"node {k}{f' {n.name!r}' if n.name else ''} ({kind})"


def _edge(array, e, name):
    return f"{array}[{e}]{f' {name!r}' if name else ''}"


def _slots(g, k, kind):
    n = g.nodes[k]
    if n.op is None:
        return [] if kind == "input" else [("the constant data", None, None)]
    return n.op.spec.slots(kind)


def _node(g, k, where, field_name):
    if not 0 <= k < len(g.nodes):
        fail(E_INVALIDARG, f"{WHAT}: {where}: {field_name} is {k} but NodeCount is "
                           f"{len(g.nodes)}")


def _to(g, where, k, i, fed):
    """Check the destination of an edge into node ``k``'s input ``i``."""
    _node(g, k, where, "ToNodeIndex")
    slots = _slots(g, k, "input")
    if not 0 <= i < len(slots):
        fail(E_INVALIDARG, f"{WHAT}: {where}: ToNodeInputIndex is {i} but {node_label(g, k)} "
                           f"has {len(slots)} input(s)")
    fname, idx, spec = slots[i]
    if spec is None:
        fail(E_INVALIDARG, f"{WHAT}: {where}: {node_label(g, k)} input {i} ({fname}) has no "
                           "tensor: the operator was created without this optional tensor")
    if (k, i) in fed:
        fail(E_INVALIDARG, f"{WHAT}: {where}: {node_label(g, k)} input {i} ({fname}) is "
                           f"already fed by {fed[(k, i)]}; a node input takes one edge")
    fed[(k, i)] = where
    return spec


def _from(g, where, k, o):
    _node(g, k, where, "FromNodeIndex")
    slots = _slots(g, k, "output")
    if not 0 <= o < len(slots):
        fail(E_INVALIDARG, f"{WHAT}: {where}: FromNodeOutputIndex is {o} but "
                           f"{node_label(g, k)} has {len(slots)} output(s)")
    fname, _, spec = slots[o]
    if g.nodes[k].op is not None and spec is None:
        fail(E_INVALIDARG, f"{WHAT}: {where}: {node_label(g, k)} output {o} ({fname}) has no "
                           "tensor: the operator was created without this optional tensor")
    return spec


def _size_of(g, k, o, spec):
    return len(g.nodes[k].data) if g.nodes[k].op is None else spec.total_bytes


def check_graph(device, g: GraphSpec, read_type) -> Plan:
    if not g.nodes:
        fail(E_INVALIDARG, f"{WHAT}: NodeCount is 0; a graph needs at least one node")
    if g.output_count < 1:
        fail(E_INVALIDARG, f"{WHAT}: OutputCount is 0; a graph needs at least one output")
    for k, n in enumerate(g.nodes):
        if n.op is None:
            if device.feature_level < 0x6200:
                fail(E_INVALIDARG, f"{WHAT}: {node_label(g, k)} is a DML_GRAPH_NODE_TYPE_CONSTANT "
                                   "node, introduced in DML_FEATURE_LEVEL_6_2")
            if not n.data:
                fail(E_INVALIDARG, f"{WHAT}: {node_label(g, k)}: DataSize is 0")
        elif n.op.device is not device:
            fail(E_INVALIDARG, f"{WHAT}: {node_label(g, k)}: the operator was created by another "
                               "DirectML device")
    plan, fed, consumed = Plan(order=[]), {}, set()
    by_input: dict = {}
    for e, (gi, k, i, name) in enumerate(g.input_edges):
        where = _edge("InputEdges", e, name)
        if not 0 <= gi < g.input_count:
            fail(E_INVALIDARG, f"{WHAT}: {where}: GraphInputIndex is {gi} but InputCount is "
                               f"{g.input_count}")
        spec = _to(g, where, k, i, fed)
        first = by_input.setdefault(gi, (where, k, i, spec))
        _agree_on_input(g, gi, first, (where, k, i, spec))
        plan.sources[(k, i)] = ("input", len(plan.reads))
        plan.reads.append(read_type(gi, k, i, spec))
    for e, (fk, fo, tk, ti, name) in enumerate(g.intermediate_edges):
        where = _edge("IntermediateEdges", e, name)
        src = _from(g, where, fk, fo)
        dst = _to(g, where, tk, ti, fed)
        if dst.owned_by_dml:
            fail(E_INVALIDARG, f"{WHAT}: {where}: {node_label(g, tk)} input {ti} is "
                               "OWNED_BY_DML; such inputs must be connected to graph inputs")
        if _size_of(g, fk, fo, src) != dst.total_bytes:
            fail(E_INVALIDARG, f"{WHAT}: {where}: {node_label(g, fk)} output {fo} has "
                               f"{_size_of(g, fk, fo, src)} bytes (TotalTensorSizeInBytes) but "
                               f"{node_label(g, tk)} input {ti} has {dst.total_bytes}; "
                               "connected tensors must have the same size")
        plan.sources[(tk, ti)] = ("node", fk, fo) if g.nodes[fk].op is not None else \
            ("const", fk)
        consumed.add((fk, fo))
    outs: dict = {}
    for e, (k, o, go, name) in enumerate(g.output_edges):
        where = _edge("OutputEdges", e, name)
        _from(g, where, k, o)
        if g.nodes[k].op is None:
            fail(E_INVALIDARG, f"{WHAT}: {where}: {node_label(g, k)} cannot feed a graph output; "
                               "constant data reaches operators through intermediate edges")
        if not 0 <= go < g.output_count:
            fail(E_INVALIDARG, f"{WHAT}: {where}: GraphOutputIndex is {go} but OutputCount is "
                               f"{g.output_count}")
        if go in outs:
            fail(E_INVALIDARG, f"{WHAT}: {where}: graph output {go} is already fed by "
                               f"{outs[go][2]}; each graph output takes one edge")
        outs[go] = (k, o, where)
        consumed.add((k, o))
    for go in range(g.output_count):
        if go not in outs:
            fail(E_INVALIDARG, f"{WHAT}: graph output {go} has no output edge (OutputCount is "
                               f"{g.output_count})")
    plan.outputs = [outs[go][:2] for go in range(g.output_count)]
    _connected(g, fed, consumed)
    plan.order = _topological(g)
    return plan


def _agree_on_input(g, gi, first, other):
    where0, k0, i0, s0 = first
    where, k, i, s = other
    if s.owned_by_dml != s0.owned_by_dml:
        fail(E_INVALIDARG, f"{WHAT}: {where}: graph input {gi} feeds {node_label(g, k)} input "
                           f"{i} {'with' if s.owned_by_dml else 'without'} "
                           f"DML_TENSOR_FLAG_OWNED_BY_DML but {node_label(g, k0)} input {i0} "
                           f"({where0}) {'with' if s0.owned_by_dml else 'without'}; every input "
                           "connected to one graph input must use or omit the flag alike")
    if s.total_bytes != s0.total_bytes:
        fail(E_INVALIDARG, f"{WHAT}: {where}: graph input {gi} is read with "
                           f"TotalTensorSizeInBytes {s.total_bytes} by {node_label(g, k)} input "
                           f"{i} but {s0.total_bytes} by {node_label(g, k0)} input {i0}; they "
                           "must be identical")
    if s.owned_by_dml and s != s0:
        fail(E_INVALIDARG, f"{WHAT}: {where}: the OWNED_BY_DML graph input {gi} is described "
                           f"differently by {node_label(g, k)} input {i} and {node_label(g, k0)} "
                           f"input {i0}; dmlsim stores it once and needs one tensor desc")


def _connected(g, fed, consumed):
    for k, n in enumerate(g.nodes):
        if n.op is None:
            continue
        optional = {f["name"] for f in n.op.schema["fields"] if f.get("optional")}
        for i, (fname, idx, spec) in enumerate(n.op.spec.slots("input")):
            if spec is not None and (k, i) not in fed:
                fail(E_INVALIDARG, f"{WHAT}: {node_label(g, k)} input {i} ({fname}) is not "
                                   "connected; every input the operator has a tensor for needs "
                                   "an input or intermediate edge")
        for o, (fname, idx, spec) in enumerate(n.op.spec.slots("output")):
            if spec is not None and fname not in optional and (k, o) not in consumed:
                fail(E_INVALIDARG, f"{WHAT}: {node_label(g, k)} output {o} ({fname}) is not "
                                   "connected; a required output needs an output or "
                                   "intermediate edge")


def _topological(g):
    preds = {k: set() for k in range(len(g.nodes))}
    for fk, _, tk, _, _ in g.intermediate_edges:
        preds[tk].add(fk)
    order, ready = [], sorted(k for k, p in preds.items() if not p)
    remaining = {k: set(p) for k, p in preds.items()}
    while ready:
        k = ready.pop(0)
        order.append(k)
        for j in sorted(remaining):
            if k in remaining[j]:
                remaining[j].discard(k)
                if not remaining[j] and j not in order and j not in ready:
                    ready.append(j)
    if len(order) != len(g.nodes):
        stuck = [k for k in range(len(g.nodes)) if k not in order]
        fail(E_INVALIDARG, f"{WHAT}: the graph has a cycle through "
                           f"{', '.join(node_label(g, k) for k in stuck)}; it must be a directed "
                           "acyclic graph")
    return order

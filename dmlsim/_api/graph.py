"""IDMLDevice1::CompileGraph's argument checks: the C structs of a DML_GRAPH_DESC read into the
core's neutral GraphSpec. Type and shape mistakes of the structs themselves are found here
(the node and edge Types, the Desc classes, the counts, the operators' device); the graph
rules are the core's (``_core/graph_rules``)."""
from __future__ import annotations

from typing import Any

from .._core.graph_rules import GraphNode, GraphSpec
from .._core.hresult import E_INVALIDARG, E_POINTER, fail
from .._schema import structs_generated as S
from .._schema.enums_generated import DML_GRAPH_EDGE_TYPE, DML_GRAPH_NODE_TYPE

WHAT = "IDMLDevice1::CompileGraph"


def _uint(value, where):
    if isinstance(value, bool) or not isinstance(value, int) and not hasattr(value, "__index__"):
        fail(E_INVALIDARG, f"{WHAT}: {where} is {value!r}; a UINT is required")
    v = int(value)
    if not 0 <= v < 1 << 32:
        fail(E_INVALIDARG, f"{WHAT}: {where} is {v}; a UINT is required")
    return v


def _name(value, where):
    if value is None:
        return ""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        fail(E_INVALIDARG, f"{WHAT}: {where}.Name is {value!r}; a string or None is required")
    return value


def _array(desc, field, count_field):
    seq = getattr(desc, field)
    seq = [] if seq is None else list(seq)
    count = getattr(desc, count_field)
    if count not in (None, 0) and _uint(count, count_field) != len(seq):
        fail(E_INVALIDARG, f"{WHAT}: {count_field} is {count} but {field} has {len(seq)} entries")
    return seq


def _node(device, k, node, operator_type):
    where = f"Nodes[{k}]"
    if not isinstance(node, S.DML_GRAPH_NODE_DESC):
        fail(E_INVALIDARG, f"{WHAT}: {where} is {type(node).__name__}; a DML_GRAPH_NODE_DESC is "
                           "required")
    t, d = node.Type, node.Desc
    if t == DML_GRAPH_NODE_TYPE.DML_GRAPH_NODE_TYPE_OPERATOR:
        if not isinstance(d, S.DML_OPERATOR_GRAPH_NODE_DESC):
            fail(E_INVALIDARG, f"{WHAT}: {where}.Desc must be a DML_OPERATOR_GRAPH_NODE_DESC for "
                               "DML_GRAPH_NODE_TYPE_OPERATOR")
        if not isinstance(d.Operator, operator_type):
            fail(E_POINTER if d.Operator is None else E_INVALIDARG,
                 f"{WHAT}: {where}.Desc.Operator is {type(d.Operator).__name__}; an IDMLOperator "
                 "is required")
        if d.Operator._device._core is not device._core:
            fail(E_INVALIDARG, f"{WHAT}: {where}: the operator was created by another DirectML "
                               "device")
        return GraphNode(d.Operator._core, None, _name(d.Name, where))
    if t == DML_GRAPH_NODE_TYPE.DML_GRAPH_NODE_TYPE_CONSTANT:
        if not isinstance(d, S.DML_CONSTANT_DATA_GRAPH_NODE_DESC):
            fail(E_INVALIDARG, f"{WHAT}: {where}.Desc must be a DML_CONSTANT_DATA_GRAPH_NODE_DESC "
                               "for DML_GRAPH_NODE_TYPE_CONSTANT")
        try:
            data = bytes(memoryview(d.Data).cast("B")) if d.Data is not None else b""
        except TypeError:
            fail(E_INVALIDARG, f"{WHAT}: {where}.Desc.Data is {type(d.Data).__name__}; bytes or "
                               "an array are required")
        size = _uint(d.DataSize, f"{where}.Desc.DataSize")
        if size > len(data):
            fail(E_INVALIDARG, f"{WHAT}: {where}.Desc.DataSize is {size} but Data holds "
                               f"{len(data)} bytes")
        return GraphNode(None, data[:size], _name(d.Name, where))
    fail(E_INVALIDARG, f"{WHAT}: {where}.Type is {t!r}, which is not a DML_GRAPH_NODE_TYPE "
                       "(1 OPERATOR, 2 CONSTANT)")


_EDGES = (("InputEdges", "InputEdgeCount", "INPUT", S.DML_INPUT_GRAPH_EDGE_DESC,
           ("GraphInputIndex", "ToNodeIndex", "ToNodeInputIndex")),
          ("OutputEdges", "OutputEdgeCount", "OUTPUT", S.DML_OUTPUT_GRAPH_EDGE_DESC,
           ("FromNodeIndex", "FromNodeOutputIndex", "GraphOutputIndex")),
          ("IntermediateEdges", "IntermediateEdgeCount", "INTERMEDIATE",
           S.DML_INTERMEDIATE_GRAPH_EDGE_DESC,
           ("FromNodeIndex", "FromNodeOutputIndex", "ToNodeIndex", "ToNodeInputIndex")))


def graph_spec(device, desc: Any, operator_type) -> GraphSpec:
    """The GraphSpec of ``desc`` (a DML_GRAPH_DESC) for IDMLDevice1 ``device``."""
    if desc is None:
        fail(E_POINTER, f"{WHAT}: desc is NULL; a DML_GRAPH_DESC is required")
    if not isinstance(desc, S.DML_GRAPH_DESC):
        fail(E_INVALIDARG, f"{WHAT}: desc is {type(desc).__name__}; a DML_GRAPH_DESC is required")
    nodes = _array(desc, "Nodes", "NodeCount")
    spec_nodes = tuple(_node(device, k, n, operator_type) for k, n in enumerate(nodes))
    edges = {}
    for field, count_field, kind, cls, keys in _EDGES:
        out = []
        for e, edge in enumerate(_array(desc, field, count_field)):
            where = f"{field}[{e}]"
            want = getattr(DML_GRAPH_EDGE_TYPE, f"DML_GRAPH_EDGE_TYPE_{kind}")
            if not isinstance(edge, S.DML_GRAPH_EDGE_DESC) or edge.Type != want or \
                    not isinstance(edge.Desc, cls):
                fail(E_INVALIDARG, f"{WHAT}: {where} must be a DML_GRAPH_EDGE_DESC of Type "
                                   f"DML_GRAPH_EDGE_TYPE_{kind} with a {cls.__name__}")
            d = edge.Desc
            out.append(tuple(_uint(getattr(d, k), f"{where}.Desc.{k}") for k in keys) +
                       (_name(d.Name, where),))
        edges[field] = tuple(out)
    return GraphSpec(_uint(desc.InputCount, "InputCount"), _uint(desc.OutputCount, "OutputCount"),
                     spec_nodes, edges["InputEdges"], edges["OutputEdges"],
                     edges["IntermediateEdges"])

"""IDMLDevice1::CompileGraph: graphs built from DML_GRAPH_DESC structs execute through the
faithful path (initializer, binding table, dispatch) and give what their operators give one
at a time, bit for bit; every rule of DML_GRAPH_DESC broken once gives E_INVALIDARG with the
message that names the node, the edge and the field."""
from __future__ import annotations

import numpy as np
import pytest

import dmlsim as dml
from dmlsim._pythonic.run import _Tensor, device_state, execute

from helpers import feature_level

A = np.arange(4, dtype=np.float32)


def node(op, name=None):
    return dml.DML_GRAPH_NODE_DESC(dml.DML_GRAPH_NODE_TYPE_OPERATOR,
                                   dml.DML_OPERATOR_GRAPH_NODE_DESC(op, name))


def const(data, name=None):
    data = np.ascontiguousarray(data).tobytes()
    return dml.DML_GRAPH_NODE_DESC(dml.DML_GRAPH_NODE_TYPE_CONSTANT,
                                   dml.DML_CONSTANT_DATA_GRAPH_NODE_DESC(data, len(data), name))


def inp(g, n, i, name=None):
    return dml.DML_GRAPH_EDGE_DESC(dml.DML_GRAPH_EDGE_TYPE_INPUT,
                                   dml.DML_INPUT_GRAPH_EDGE_DESC(g, n, i, name))


def out(n, o, g, name=None):
    return dml.DML_GRAPH_EDGE_DESC(dml.DML_GRAPH_EDGE_TYPE_OUTPUT,
                                   dml.DML_OUTPUT_GRAPH_EDGE_DESC(n, o, g, name))


def mid(fn, fo, tn, ti, name=None):
    return dml.DML_GRAPH_EDGE_DESC(dml.DML_GRAPH_EDGE_TYPE_INTERMEDIATE,
                                   dml.DML_INTERMEDIATE_GRAPH_EDGE_DESC(fn, fo, tn, ti, name))


@pytest.fixture(scope="module")
def dev():
    return dml.DMLCreateDevice(dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0), 0)


def op(dev, name, **fields):
    return dev.CreateOperator(dml.operator_desc(name, **fields))


def binary(dev, name, a=A):
    return op(dev, name, ATensor=a, BTensor=a, OutputTensor=a)


def slots(*descs):
    return [(f"graph input {i}", None, None if d is None else _Tensor(d))
            for i, d in enumerate(descs)]


def run(dev, graph, ins, outs, arrays, flags=0):
    return execute(device_state(dev), dev.CompileGraph(graph, flags), ins, outs, arrays)


def fma_graph(dev):
    """x * y + z as a MULTIPLY node feeding an ADD node."""
    return dml.DML_GRAPH_DESC(
        InputCount=3, OutputCount=1,
        Nodes=[node(binary(dev, "ELEMENT_WISE_MULTIPLY"), "mul"),
               node(binary(dev, "ELEMENT_WISE_ADD"), "add")],
        InputEdges=[inp(0, 0, 0), inp(1, 0, 1), inp(2, 1, 1)], OutputEdges=[out(1, 0, 0)],
        IntermediateEdges=[mid(0, 0, 1, 0)])


def test_a_chain_rounds_each_node_like_separate_dispatches(dev):
    """The graph's x * y + z equals MULTIPLY then ADD run one at a time, bit for bit: each
    node's result is rounded as it would be stored (no fused multiply-add across nodes)."""
    rng = np.random.default_rng(1)
    x, y, z = (rng.standard_normal(4).astype(np.float32) for _ in range(3))
    t = dml.tensor_desc(A)
    (got,) = run(dev, fma_graph(dev), slots(t, t, t), slots(t), [x, y, z])
    prod = dml.run(dml.operator_desc("ELEMENT_WISE_MULTIPLY", ATensor=x, BTensor=y), x, y)
    want = dml.run(dml.operator_desc("ELEMENT_WISE_ADD", ATensor=x, BTensor=z), prod, z)
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()
    assert dev.CompileGraph(fma_graph(dev), 0).GetBindingProperties().RequiredDescriptorCount == 6


def test_fan_out_unused_inputs_reinterpreted_edges_and_two_outputs(dev):
    """Graph input 0 feeds both nodes; graph input 1 is unused (bound NONE); the ADD's [4]
    result is read by IDENTITY as [2, 2] (same TotalTensorSizeInBytes); two outputs."""
    square = np.zeros((2, 2), np.float32)
    ident = op(dev, "ELEMENT_WISE_IDENTITY", InputTensor=square, OutputTensor=square)
    g = dml.DML_GRAPH_DESC(
        InputCount=2, OutputCount=2, Nodes=[node(binary(dev, "ELEMENT_WISE_ADD")), node(ident)],
        InputEdges=[inp(0, 0, 0), inp(0, 0, 1)], IntermediateEdges=[mid(0, 0, 1, 0)],
        OutputEdges=[out(1, 0, 0), out(0, 0, 1)])
    t = dml.tensor_desc(A)
    got = run(dev, g, slots(t, None), [("y0", None, _Tensor(dml.tensor_desc(square))),
                                       ("y1", None, _Tensor(t))], [A, None])
    assert got[0].tolist() == [[0, 2], [4, 6]] and got[1].tolist() == [0, 2, 4, 6]


def owned_gemm_graph(dev):
    """(a, b, B's desc, graph): a @ b by GEMM with an OWNED_BY_DML B from graph input 1."""
    a = np.float32([[1, 2], [3, 4]])
    b = np.float32([[1, 0], [1, 1]])
    owned = dml.tensor_desc(b, flags=dml.DML_TENSOR_FLAG_OWNED_BY_DML)
    gemm = op(dev, "GEMM", ATensor=a, BTensor=owned, OutputTensor=a, Alpha=1.0)
    g = dml.DML_GRAPH_DESC(InputCount=2, OutputCount=1, Nodes=[node(gemm, "gemm")],
                           InputEdges=[inp(0, 0, 0), inp(1, 0, 1)], OutputEdges=[out(0, 0, 0)])
    return a, b, owned, g


def test_owned_by_dml_weights_are_bound_once_at_initialization(dev):
    """GEMM with an OWNED_BY_DML B: the initializer takes one BUFFER_ARRAY of InputCount
    entries with only the owned one filled; execution binds NONE there."""
    a, b, owned, g = owned_gemm_graph(dev)
    compiled = dev.CompileGraph(g, 0)
    assert compiled.GetBindingProperties().PersistentResourceSize == 256
    (got,) = run(dev, g, slots(dml.tensor_desc(a), owned), slots(dml.tensor_desc(a)), [a, b])
    assert got.tolist() == [[3, 2], [7, 4]]


def test_owned_weights_are_kept_as_their_operator_keeps_them(dev, monkeypatch):
    """An operator that keeps an OWNED_BY_DML input its own way (``persistent_layout``; here
    GEMM's BTensor column-major, as a driver keeps a pre-transposed filter) keeps it so in a
    compiled graph too: the graph's persistent resource holds that layout and the result is
    unchanged."""
    import dataclasses

    from dmlsim._core import registry
    from dmlsim._core.tensor import TensorSpec
    name = "DML_OPERATOR_GEMM"

    def column_major(spec, field, t):
        return t if field != "BTensor" else TensorSpec(t.data_type, t.sizes, (1, t.sizes[0]),
                                                       t.flags, t.total_bytes)
    monkeypatch.setitem(registry._REGISTRY, name, dataclasses.replace(
        registry.get(name), persistent_layout=column_major))
    a, b, owned, g = owned_gemm_graph(dev)
    compiled = dev.CompileGraph(g, 0)
    assert compiled._core.layout.inputs[1].stored.strides == (1, 2)
    (got,) = run(dev, g, slots(dml.tensor_desc(a), owned), slots(dml.tensor_desc(a)), [a, b])
    assert got.tolist() == [[3, 2], [7, 4]]


def test_constant_nodes_feed_operators_through_intermediate_edges(dev):
    with feature_level(0x6200):
        d = dml.DMLCreateDevice(dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0), 0)
    g = dml.DML_GRAPH_DESC(InputCount=1, OutputCount=1,
                           Nodes=[node(binary(d, "ELEMENT_WISE_ADD")), const(A * 10, "tens")],
                           InputEdges=[inp(0, 0, 0)], IntermediateEdges=[mid(1, 0, 0, 1)],
                           OutputEdges=[out(0, 0, 0)])
    t = dml.tensor_desc(A)
    assert run(d, g, slots(t), slots(t), [A])[0].tolist() == [0, 11, 22, 33]


def test_graphs_run_in_recorded_lists_and_again(dev):
    """Executed twice (the second time as a compiled whole list): the same bits."""
    t = dml.tensor_desc(A)
    first = run(dev, fma_graph(dev), slots(t, t, t), slots(t), [A, A, A])
    second = run(dev, fma_graph(dev), slots(t, t, t), slots(t), [A, A, A])
    assert first[0].tolist() == second[0].tolist() == [0, 2, 6, 12]


# ---- every rule, broken once ------------------------------------------------------------

def _broken(dev, **changes):
    mul, add = binary(dev, "ELEMENT_WISE_MULTIPLY"), binary(dev, "ELEMENT_WISE_ADD")
    fields = dict(InputCount=3, OutputCount=1, Nodes=[node(mul, "mul"), node(add, "add")],
                  InputEdges=[inp(0, 0, 0), inp(1, 0, 1), inp(2, 1, 1)],
                  OutputEdges=[out(1, 0, 0)], IntermediateEdges=[mid(0, 0, 1, 0)])
    fields.update(changes)
    with pytest.raises(dml.HResultError) as info:
        dev.CompileGraph(dml.DML_GRAPH_DESC(**fields), 0)
    assert info.value.hresult == dml.E_INVALIDARG
    return info.value.message


W = "IDMLDevice1::CompileGraph: "
MUL = "node 0 'mul' (DML_OPERATOR_ELEMENT_WISE_MULTIPLY)"
ADD = "node 1 'add' (DML_OPERATOR_ELEMENT_WISE_ADD)"
RULES = [
    ("cycle", dict(InputEdges=[inp(0, 0, 0), inp(2, 1, 1)],
                   IntermediateEdges=[mid(0, 0, 1, 0), mid(1, 0, 0, 1)]),
     f"the graph has a cycle through {MUL}, {ADD}; it must be a directed acyclic graph"),
    ("input unconnected", dict(InputEdges=[inp(0, 0, 0), inp(2, 1, 1)]),
     f"{MUL} input 1 (BTensor) is not connected; every input the operator has a tensor for "
     "needs an input or intermediate edge"),
    ("output unconnected", dict(OutputEdges=[out(0, 0, 0)], IntermediateEdges=[],
                                InputEdges=[inp(0, 0, 0), inp(1, 0, 1), inp(2, 1, 1),
                                            inp(0, 1, 0)]),
     f"{ADD} output 0 (OutputTensor) is not connected; a required output needs an output or "
     "intermediate edge"),
    ("no such node", dict(InputEdges=[inp(0, 0, 0), inp(1, 0, 1), inp(2, 5, 1)]),
     "InputEdges[2]: ToNodeIndex is 5 but NodeCount is 2"),
    ("no such slot", dict(InputEdges=[inp(0, 0, 0), inp(1, 0, 1), inp(2, 1, 2, "bias")]),
     f"InputEdges[2] 'bias': ToNodeInputIndex is 2 but {ADD} has 2 input(s)"),
    ("no such output", dict(OutputEdges=[out(1, 1, 0)]),
     f"OutputEdges[0]: FromNodeOutputIndex is 1 but {ADD} has 1 output(s)"),
    ("two edges into one input", dict(InputEdges=[inp(0, 0, 0), inp(1, 0, 1), inp(2, 1, 1),
                                                  inp(2, 1, 0)]),
     f"IntermediateEdges[0]: {ADD} input 0 (ATensor) is already fed by InputEdges[3]; a node "
     "input takes one edge"),
    ("graph input out of range", dict(InputEdges=[inp(0, 0, 0), inp(3, 0, 1), inp(2, 1, 1)]),
     "InputEdges[1]: GraphInputIndex is 3 but InputCount is 3"),
    ("graph output out of range", dict(OutputEdges=[out(1, 0, 1)]),
     "OutputEdges[0]: GraphOutputIndex is 1 but OutputCount is 1"),
    ("graph output twice", dict(OutputCount=1, OutputEdges=[out(1, 0, 0), out(0, 0, 0)]),
     "OutputEdges[1]: graph output 0 is already fed by OutputEdges[0]; each graph output "
     "takes one edge"),
    ("graph output missing", dict(OutputCount=2),
     "graph output 1 has no output edge (OutputCount is 2)"),
    ("no nodes", dict(Nodes=[], InputEdges=[], OutputEdges=[], IntermediateEdges=[]),
     "NodeCount is 0; a graph needs at least one node"),
]


@pytest.mark.parametrize("rule,changes,message", RULES, ids=[r[0] for r in RULES])
def test_each_graph_rule(dev, rule, changes, message):
    assert _broken(dev, **changes) == W + message


def test_size_mismatch_owned_flags_devices_and_constants(dev):
    half = np.zeros(2, np.float32)
    small = op(dev, "ELEMENT_WISE_IDENTITY", InputTensor=half, OutputTensor=half)
    msg = _broken(dev, Nodes=[node(binary(dev, "ELEMENT_WISE_MULTIPLY"), "mul"), node(small)],
                  InputEdges=[inp(0, 0, 0), inp(1, 0, 1)], OutputEdges=[out(1, 0, 0)],
                  IntermediateEdges=[mid(0, 0, 1, 0)])
    assert msg == (f"{W}IntermediateEdges[0]: {MUL} output 0 has 16 bytes "
                   "(TotalTensorSizeInBytes) but node 1 (DML_OPERATOR_ELEMENT_WISE_IDENTITY) "
                   "input 0 has 8; connected tensors must have the same size")
    owned = dml.tensor_desc(A, flags=dml.DML_TENSOR_FLAG_OWNED_BY_DML)
    add_owned = op(dev, "ELEMENT_WISE_ADD", ATensor=dml.tensor_desc(A), BTensor=owned,
                   OutputTensor=A)
    msg = _broken(dev, Nodes=[node(binary(dev, "ELEMENT_WISE_MULTIPLY"), "mul"),
                              node(add_owned, "add")],
                  InputEdges=[inp(0, 0, 0), inp(0, 0, 1), inp(0, 1, 1)])
    assert "graph input 0 feeds node 1 'add'" in msg and "use or omit the flag alike" in msg
    msg = _broken(dev, Nodes=[node(binary(dev, "ELEMENT_WISE_MULTIPLY"), "mul"),
                              node(add_owned, "add")],
                  InputEdges=[inp(0, 0, 0), inp(1, 0, 1), inp(2, 1, 0)],
                  IntermediateEdges=[mid(0, 0, 1, 1)])
    assert msg == (f"{W}IntermediateEdges[0]: node 1 'add' (DML_OPERATOR_ELEMENT_WISE_ADD) input "
                   "1 is OWNED_BY_DML; such inputs must be connected to graph inputs")
    other = dml.DMLCreateDevice(dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0), 0)
    msg = _broken(dev, Nodes=[node(binary(other, "ELEMENT_WISE_MULTIPLY")),
                              node(binary(dev, "ELEMENT_WISE_ADD"))])
    assert msg == f"{W}Nodes[0]: the operator was created by another DirectML device"
    with feature_level(0x6100):
        old = dml.DMLCreateDevice(dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0), 0)
    msg = _broken(old, Nodes=[node(binary(old, "ELEMENT_WISE_ADD")), const(A)],
                  InputEdges=[inp(0, 0, 0)], IntermediateEdges=[mid(1, 0, 0, 1)],
                  OutputEdges=[out(0, 0, 0)], InputCount=1)
    assert msg == (f"{W}node 1 (constant data) is a DML_GRAPH_NODE_TYPE_CONSTANT node, "
                   "introduced in DML_FEATURE_LEVEL_6_2")


def test_struct_mistakes_name_the_field(dev):
    with pytest.raises(dml.HResultError) as info:
        dev.CompileGraph(None, 0)
    assert info.value.hresult == dml.E_POINTER
    msg = _broken(dev, InputEdges=[inp(0, 0, 0), out(1, 0, 0), inp(2, 1, 1)])
    assert msg == (f"{W}InputEdges[1] must be a DML_GRAPH_EDGE_DESC of Type "
                   "DML_GRAPH_EDGE_TYPE_INPUT with a DML_INPUT_GRAPH_EDGE_DESC")
    msg = _broken(dev, NodeCount=3)
    assert msg == f"{W}NodeCount is 3 but Nodes has 2 entries"


@pytest.mark.parametrize("data_type,sizes,strides", [
    (dml.DML_TENSOR_DATA_TYPE_FLOAT32, (2, 3), None),
    (dml.DML_TENSOR_DATA_TYPE_FLOAT32, (1, 4, 2, 3), (0, 1, 0, 4)),   # broadcast and strided
    (dml.DML_TENSOR_DATA_TYPE_FLOAT16, (3, 2), (1, 3)),               # transposed
    (dml.DML_TENSOR_DATA_TYPE_INT64, (2, 2, 2), (0, 0, 1)),
    (dml.DML_TENSOR_DATA_TYPE_UINT8, (5,), (2,)),
])
def test_a_constant_reads_as_a_view_of_its_bytes(data_type, sizes, strides):
    """A graph's constant is one NumPy constant in the program (views.read_constant), with
    the values read_view reads from the same bytes: sizes, strides, broadcasts."""
    import jax.numpy as jnp

    from dmlsim._core import dtypes, views
    from dmlsim._core.tensor import TensorSpec
    t = TensorSpec(data_type, sizes, strides)
    span = 1 + sum((s - 1) * st for s, st in zip(sizes, t.element_strides))
    data = np.random.default_rng(1).integers(0, 255, span * t.itemsize, np.uint8).tobytes()
    want = views.read_view(jnp.asarray(np.frombuffer(data + bytes(8), np.uint8)), t, 0)
    got = np.broadcast_to(views.read_constant(data, t), sizes)
    assert got.dtype == dtypes.numpy_dtype(data_type)
    assert np.array_equal(got.view(np.uint8), np.asarray(want).view(np.uint8))


@pytest.mark.parametrize("order", [(0, 1, 2, 3), (0, 2, 3, 1), (2, 3, 1, 0), (3, 1, 0, 2)])
def test_a_view_stored_in_another_dimension_order_reads_and_writes_its_elements(order):
    """Strides that store every element once in another dimension order (NHWC strides over
    NCHW sizes, a pre-transposed filter) read and write through a slice and a transpose: the
    element at index i is the one at byte offset + 4 * sum(i * strides), on both ways; a
    size-1 dimension may carry any stride."""
    import jax.numpy as jnp

    from dmlsim._core import views
    from dmlsim._core.tensor import TensorSpec
    sizes, strides, step = (2, 3, 4, 5), [0] * 4, 1
    for d in reversed(order):
        strides[d], step = step, step * sizes[d]
    for sizes, strides in ((sizes, tuple(strides)), ((2, 1) + sizes[2:], (strides[0], 999)
                                                      + tuple(strides[2:]))):
        t = TensorSpec(dml.DML_TENSOR_DATA_TYPE_FLOAT32, sizes, strides)
        words = np.random.default_rng(3).integers(0, 2**32, 130, np.uint32)
        want = np.lib.stride_tricks.as_strided(words[2:], sizes, [4 * s for s in strides])
        got = np.asarray(views.read_view(jnp.asarray(words), t, 8)).view(np.uint32)
        assert np.array_equal(got, want)
        value = np.random.default_rng(4).standard_normal(sizes).astype(np.float32)
        out = np.asarray(views.write_view(jnp.asarray(words), t, 8, jnp.asarray(value)))
        expect = words.copy()
        np.lib.stride_tricks.as_strided(expect[2:], sizes, [4 * s for s in strides])[...] = \
            value.view(np.uint32)
        assert np.array_equal(out, expect)

"""Serialized DirectML graphs (DirectML's flatbuffer DmlGraphDesc, as DxDispatch's
``dmlSerializedGraph`` dispatchables read it): a dmlx graph written and read back computes the
same bits, a file with a named constant runs through DxDispatch's JSON form, the bytes sit at
the format's documented vtable slots, and a broken file or misuse is an HResultError."""
from __future__ import annotations

import json
import random
import struct

import flatbuffers
import numpy as np
import pytest
from flatbuffers.table import Table

import dmlsim as dml
from dmlsim import dmlx
from dmlsim._pythonic import dml_graph_fb as fb
from dmlsim._pythonic import dxdispatch

F32 = dml.DML_TENSOR_DATA_TYPE_FLOAT32


@pytest.fixture(scope="module")
def device():
    return dml.DMLCreateDevice(dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0), 0)


def _dmlx_graph(device):
    """GEMM (fused LEAKY_RELU) + a constant (FL 6_2 node) + SPLIT + IDENTITY with ScaleBias."""
    g = dmlx.Graph(device)
    a = dmlx.InputTensor(g, 0, dmlx.TensorDesc(F32, [1, 1, 2, 3]))
    b = dmlx.InputTensor(g, 1, dmlx.TensorDesc(F32, [1, 1, 3, 4]))
    w = dmlx.ConstantData(g, np.arange(8, dtype=np.float32).tobytes(),
                          dmlx.TensorDesc(F32, [1, 1, 2, 4]))
    y = dmlx.Gemm(a, b, alpha=0.5, fusedActivation=dmlx.FusedActivation.LeakyRelu(0.25))
    z = dmlx.Add(y, w)
    left, right = dmlx.Split(z, 3, [1, 3])
    return g, [z, left, dmlx.Identity(right, dml.DML_SCALE_BIAS(2.0, 0.5))]


def test_a_dmlx_graph_written_and_read_back_computes_the_same_bits(device, tmp_path):
    g, outs = _dmlx_graph(device)
    data = g.save(tmp_path / "g.dml", outs)
    assert (tmp_path / "g.dml").read_bytes() == data
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1, 1, 2, 3)).astype(np.float32)
    b = rng.standard_normal((1, 1, 3, 4)).astype(np.float32)
    want = g.compile(outs)(a, b)
    graph = dml.read_serialized_graph(tmp_path / "g.dml", device)
    assert graph.input_names == ["input0", "input1"]
    assert graph.output_names == ["output0", "output1", "output2"]
    assert graph.desc.NodeCount == 5 and graph.constants == {}
    got = graph.run(a, b)
    for x, y in zip(got, want):
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
    # and exactly what DML computes: 0.5 * a @ b, LEAKY_RELU(0.25), + the constant 0..7
    mm = 0.5 * (a[0, 0].astype(np.float64) @ b[0, 0])
    ref = np.where(mm >= 0, mm, 0.25 * mm) + np.arange(8).reshape(2, 4)
    np.testing.assert_allclose(got[0][0, 0], ref, rtol=1e-6, atol=1e-6)
    # the reader's desc writes back to the same bytes
    assert dml.write_serialized_graph(graph.desc, input_names=graph.input_names,
                                      output_names=graph.output_names) == data


def test_operator_desc_of_gives_back_what_create_operator_froze(device):
    desc = dml.operator_desc("GEMM", ATensor=np.ones((1, 1, 2, 2), np.float32),
                             BTensor=np.ones((1, 1, 2, 2), np.float32), Alpha=2.0,
                             FusedActivation={"Type": "LEAKY_RELU", "Alpha": 0.5})
    op = device.CreateOperator(desc)
    again = dml.operator_desc_of(op)
    assert again.Desc.Alpha == 2.0 and again.Desc.FusedActivation.Desc.Alpha == 0.5
    assert again.Desc.CTensor is None and list(again.Desc.OutputTensor.Desc.Sizes) == [1, 1, 2, 2]
    assert repr(device.CreateOperator(again)) == repr(op)
    with pytest.raises(dml.HResultError) as e:
        dml.operator_desc_of(desc)
    assert e.value.hresult == dml.E_INVALIDARG and "operator_desc_of: op is DML_OPERATOR_DESC" \
        in str(e.value)


def _tensor(sizes):
    return fb.Tensor("DML_TENSOR_DATA_TYPE_FLOAT32", sizes, None, 4 * int(np.prod(sizes)))


def _gemm_graph(constant_name="weights", alpha=("Float32", 2.0)) -> fb.Graph:
    """x [1,1,2,3] @ W [1,1,3,2] (a named constant: weights.bin) * 2, RELU, as ONNX Runtime
    writes a partition whose large weight stays in a file of its own."""
    gemm = fb.Node("gemm", ["x", "W", ""], ["y"], "DML_OPERATOR_GEMM",
                   [_tensor([1, 1, 2, 3]), _tensor([1, 1, 3, 2])], [_tensor([1, 1, 2, 2])],
                   [fb.Attribute("TransA", "UInt32", 0), fb.Attribute("TransB", "UInt32", 0),
                    fb.Attribute("Alpha", *alpha), fb.Attribute("Beta", "Float32", 1.0),
                    fb.Attribute("FusedActivation", "Activation",
                                 ("DML_OPERATOR_ACTIVATION_RELU", []))])
    return fb.Graph([fb.Node("W", [], ["W"], constant_name=constant_name), gemm], ["x"], ["y"])


def _write_partition(folder, graph=None):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Partition_0.bin").write_bytes(fb.write(graph or _gemm_graph()))
    np.arange(-3, 3, dtype=np.float32).tofile(folder / "weights.bin")
    return folder / "Partition_0.bin"


def test_a_named_constant_is_a_graph_input_bound_at_initialization(device, tmp_path):
    graph = dml.read_serialized_graph(_write_partition(tmp_path), device)
    assert graph.input_names == ["x", "W"] and list(graph.constants) == ["W"]
    assert graph.constants["W"][0] == 1
    assert graph.input_descs[1].Desc.Flags == dml.DML_TENSOR_FLAG_OWNED_BY_DML
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 2, 3)
    (y,) = graph.run(x)
    assert y.reshape(-1).tolist() == [0.0, 8.0, 0.0, 8.0]  # relu(2 x @ [[-3,-2],[-1,0],[1,2]])


def test_dxdispatch_runs_a_serialized_graph_dispatchable(tmp_path):
    """microsoft/DirectML's dmlSerializedGraph_matmul_add.json form: bindings by the graph's
    input and output names, the named constant read from weights.bin beside the graph."""
    _write_partition(tmp_path / "mm")
    model = {"resources": {"x": {"initialValuesDataType": "FLOAT32",
                                 "initialValues": [1, 2, 3, 4, 5, 6]},
                           "y": {"initialValuesDataType": "FLOAT32",
                                 "initialValues": {"valueCount": 4, "value": 0}}},
             "dispatchables": {"mm": {"type": "dmlSerializedGraph",
                                      "sourcePath": "mm/Partition_0.bin"}},
             "commands": [{"type": "dispatch", "dispatchable": "mm",
                           "bindings": {"x": "x", "y": "y"}},
                          {"type": "print", "resource": "y"}]}
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model))
    printed: list = []
    dxdispatch.run_model(dxdispatch.load(path), out=printed.append)
    assert printed == ["Resource 'y': 0, 8, 0, 8"]


def _field(t: Table, vt: int) -> int:
    o = t.Offset(vt)
    assert o, f"field at vtable offset {vt} is absent"
    return o


def test_written_bytes_sit_at_the_formats_vtable_slots(device):
    """Read with flatbuffers' bare Table at the VT_* offsets of DirectML's
    DmlGraphDesc_generated.h (not through dmlsim's reader): DmlGraphDesc VT_NODES 4,
    VT_GRAPHINPUTNAMES 6; DmlGraphNode VT_DESC_TYPE 4, VT_DESC 6, VT_NAME 8, VT_INPUTNAMES 10;
    OperatorNodeDesc VT_TYPE 4, VT_ATTRIBUTES 10; AttributeDesc VT_NAME 4, VT_VAL_TYPE 6,
    VT_VAL 8 (Float32 = 6, a struct)."""
    g, outs = _dmlx_graph(device)
    buf = g.save(None, outs)
    root = Table(buf, struct.unpack_from("<I", buf)[0])
    assert root.VectorLen(_field(root, 4)) == 5
    names = root.Vector(_field(root, 6))
    assert root.String(names) == b"input0"
    first = Table(buf, root.Indirect(root.Vector(_field(root, 4))))
    assert first.Get(flatbuffers.number_types.Uint8Flags, first.Pos + _field(first, 4)) == 1
    assert first.String(first.Pos + _field(first, 8)) == b"Gemm"
    assert first.String(first.Vector(_field(first, 10))) == b"input0"
    op = Table(buf, first.Indirect(first.Pos + _field(first, 6)))
    assert op.String(op.Pos + _field(op, 4)) == b"DML_OPERATOR_GEMM"
    attrs = op.Vector(_field(op, 10))
    alpha = Table(buf, op.Indirect(attrs + 4 * 2))  # TransA, TransB, Alpha, ...
    assert alpha.String(alpha.Pos + _field(alpha, 4)) == b"Alpha"
    assert alpha.Get(flatbuffers.number_types.Uint8Flags, alpha.Pos + _field(alpha, 6)) == 6
    assert struct.unpack_from("<f", buf, alpha.Indirect(alpha.Pos + _field(alpha, 8)))[0] == 0.5


@pytest.mark.parametrize("graph,message", [
    (_gemm_graph(constant_name="missing"), "constant node 'W': cannot read '"),
    (_gemm_graph(alpha=("UInt32", 2)), "node 'gemm': attribute Alpha is a UInt32; its field "
                                       "needs a Float32"),
    (fb.Graph([fb.Node("n", ["nowhere"], ["y"], "DML_OPERATOR_ELEMENT_WISE_IDENTITY",
                       [_tensor([2])], [_tensor([2])], [fb.Attribute("ScaleBias", "NONE")])],
              [], ["y"]), "node 'n': input 0 is 'nowhere', which is neither a graph input nor "
                          "an output of an earlier node"),
    (fb.Graph([fb.Node("n", [], ["y"], "DML_OPERATOR_NOT_AN_OPERATOR")], [], ["y"]),
     "node 'n': type 'DML_OPERATOR_NOT_AN_OPERATOR' is not a DML_OPERATOR_TYPE"),
    (fb.Graph([fb.Node("", [], ["y"], constant_data=b"1234")], [], []), "node 0 has no name"),
    (fb.Graph([fb.Node("n", ["x"], ["y"], "DML_OPERATOR_ELEMENT_WISE_IDENTITY",
                       [_tensor([2])], [_tensor([3])], [fb.Attribute("ScaleBias", "NONE")])],
              ["x"], ["y"]), "node 'n': DML_OPERATOR_ELEMENT_WISE_IDENTITY"),
])
def test_a_graph_that_cannot_be_built_names_the_node(device, tmp_path, graph, message):
    path = _write_partition(tmp_path, graph)
    with pytest.raises(dml.HResultError) as e:
        dml.read_serialized_graph(path, device)
    assert e.value.hresult == dml.E_INVALIDARG
    assert str(e.value).startswith("serialized graph: " + message), str(e.value)


def test_broken_bytes_and_misuse_are_hresult_errors(device, tmp_path):
    good = fb.write(_gemm_graph())
    rng = random.Random(7)
    for _ in range(300):  # flipped bytes and cut files: an HResultError, nothing else
        raw = bytearray(good[:rng.randrange(len(good) + 1)] if rng.random() < 0.3 else good)
        for _ in range(rng.randrange(1, 4)):
            if raw:
                raw[rng.randrange(len(raw))] = rng.randrange(256)
        try:
            dml.read_serialized_graph(bytes(raw), device, constants_dir=tmp_path)
        except dml.HResultError as e:
            assert str(e).startswith("serialized graph: ")
    for args, message in [
        ((b"xy", device), "serialized graph: 2 bytes is too short for a flatbuffer"),
        ((good, None), "serialized graph: device is NoneType; an IDMLDevice1 is required"),
        ((3, device), "serialized graph: source is int; a path or bytes is required"),
        ((tmp_path / "nothing.bin", device), "serialized graph: cannot read '"),
        ((good, device), "serialized graph: constant node 'W' names 'weights.bin' and the "
                         "graph came as bytes: pass constants_dir"),
    ]:
        with pytest.raises(dml.HResultError) as e:
            dml.read_serialized_graph(*args)
        assert e.value.hresult == dml.E_INVALIDARG and str(e.value).startswith(message)
    with pytest.raises(dml.HResultError) as e:
        dml.write_serialized_graph({"Nodes": []})
    assert str(e.value).startswith("serialized graph: write: graph_desc is dict; a "
                                   "DML_GRAPH_DESC is required")


def test_one_node_output_feeding_two_graph_outputs_cannot_be_written(device):
    g = dmlx.Graph(device)
    x = dmlx.InputTensor(g, 0, dmlx.TensorDesc(F32, [2]))
    y = dmlx.Sqrt(x)
    with pytest.raises(dml.HResultError) as e:
        g.save(None, [y, y])
    assert e.value.hresult == dml.E_NOTIMPL
    assert "output 0 of node 'Sqrt' feeds more than one graph output" in str(e.value)

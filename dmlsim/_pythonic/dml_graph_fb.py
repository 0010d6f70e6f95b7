"""DirectML's serialized graph format (``dml::ir::DmlGraphDesc``, a flatbuffer), read and
written with the ``flatbuffers`` package.

The format is the one ONNX Runtime's DML provider writes when it dumps a partition and that
DxDispatch's ``dmlSerializedGraph`` dispatchables read (microsoft/DirectML:
``DxDispatch/src/dxdispatch/DirectMLHelpers/DmlGraphDesc_generated.h`` and
``OperatorFieldTypes_generated.h``). Its tables, with their field slots in order::

    DmlGraphDesc      { nodes: [DmlGraphNode], graphInputNames: [string], graphOutputNames: [string] }
    DmlGraphNode      { desc: NodeDesc (union), name: string, inputNames: [string], outputNames: [string] }
    NodeDesc          = OperatorNodeDesc (1) | ConstantNodeDesc (2)
    OperatorNodeDesc  { type: string, inputs: [DmlBufferTensorDesc], outputs: [DmlBufferTensorDesc],
                        attributes: [AttributeDesc] }
    DmlBufferTensorDesc { dataType: string, sizes: [uint], strides: [uint], totalTensorSizeInBytes: ulong }
    ConstantNodeDesc  { data: ConstantName (1) { name } | ConstantRawData (2) { data: [ubyte] } }
    AttributeDesc     { name: string, val: AttributeFieldVariant (union) }
    AttributeFieldVariant = Activation (1) { type, attributes } | ActivationArray (2) { data } |
        UInt32 (3) | UInt64 (4) | Int32 (5) | Float32 (6) (structs) | UIntArray (7) | IntArray (8)
        | FloatArray (9) { data } | ScaleBias (10) | Size2D (11) (structs) |
        ScalarUnionData (12) { data: ByteArray (1), an 8-byte struct } | Bool (13) (struct)

This module knows only the format: a file becomes a :class:`Graph` of plain values and back.
What the values mean (DML_GRAPH_DESC, edges, constants) is ``dml_graph_file``'s. A buffer that
does not hold this format is a :class:`FormatError` naming where it broke.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import flatbuffers
import numpy as np
from flatbuffers import number_types as N
from flatbuffers.table import Table

KINDS = ("NONE", "Activation", "ActivationArray", "UInt32", "UInt64", "Int32", "Float32",
         "UIntArray", "IntArray", "FloatArray", "ScaleBias", "Size2D", "ScalarUnionData", "Bool")
"""AttributeFieldVariant's members by their union tag."""
_STRUCTS = {"UInt32": "<I", "UInt64": "<Q", "Int32": "<i", "Float32": "<f", "ScaleBias": "<ff",
            "Size2D": "<II", "Bool": "<?"}
_ALIGN = {"UInt64": 8, "Bool": 1, "ByteArray": 1}  # the others: 4
_ARRAYS = {"UIntArray": "<u4", "IntArray": "<i4", "FloatArray": "<f4"}


class FormatError(Exception):
    """The bytes are not a DmlGraphDesc flatbuffer (the message says where)."""


@dataclass
class Tensor:
    data_type: str                  # "DML_TENSOR_DATA_TYPE_FLOAT32"
    sizes: list
    strides: list | None = None
    total_bytes: int = 0


@dataclass
class Attribute:
    name: str
    kind: str                       # one of KINDS
    value: object = None            # Activation: (type, [Attribute]); arrays: list; ScaleBias:
    #                                 (scale, bias); Size2D: (width, height); ScalarUnionData:
    #                                 8 bytes; ActivationArray: [(type, [Attribute])]


@dataclass
class Node:
    name: str
    input_names: list = field(default_factory=list)
    output_names: list = field(default_factory=list)
    op_type: str = ""               # an operator node's DML_OPERATOR_* name
    inputs: list = field(default_factory=list)     # Tensor per present input
    outputs: list = field(default_factory=list)    # Tensor per present output
    attributes: list = field(default_factory=list)
    constant_name: str | None = None   # a constant node whose data is in "<name>.bin"
    constant_data: bytes | None = None  # a constant node with its bytes inline


@dataclass
class Graph:
    nodes: list
    input_names: list
    output_names: list


# --- reading ---------------------------------------------------------------------------------

class _Reader:
    """One table of the buffer: fields by slot, every offset checked against the buffer."""

    def __init__(self, buf: bytes, pos: int, what: str):
        if not 0 <= pos <= len(buf) - 4:
            raise FormatError(f"{what}: table offset {pos} is outside the {len(buf)}-byte buffer")
        self.buf, self.t, self.what = buf, Table(buf, pos), what

    def _at(self, slot: int) -> int:
        return self.t.Offset(4 + 2 * slot)

    def _target(self, slot: int) -> int:
        o = self._at(slot)
        return 0 if o == 0 else self.t.Indirect(self.t.Pos + o)

    def u8(self, slot: int) -> int:
        o = self._at(slot)
        return 0 if o == 0 else self.t.Get(N.Uint8Flags, self.t.Pos + o)

    def u64(self, slot: int) -> int:
        o = self._at(slot)
        return 0 if o == 0 else self.t.Get(N.Uint64Flags, self.t.Pos + o)

    def present(self, slot: int) -> bool:
        return self._at(slot) != 0

    def string(self, slot: int, what: str) -> str:
        o = self._at(slot)
        return "" if o == 0 else self._decode(self.t.String(self.t.Pos + o), what)

    def _decode(self, raw: bytes, what: str) -> str:
        try:
            return bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            raise FormatError(f"{self.what}.{what}: not UTF-8 text") from None

    def _vector(self, slot: int, itemsize: int, what: str) -> tuple[int, int]:
        o = self._at(slot)
        if o == 0:
            return 0, 0
        start, count = self.t.Vector(o), self.t.VectorLen(o)
        if start + count * itemsize > len(self.buf):
            raise FormatError(f"{self.what}.{what}: {count} entries run past the buffer's end")
        return start, count

    def tables(self, slot: int, what: str) -> list:
        start, count = self._vector(slot, 4, what)
        return [_Reader(self.buf, self.t.Indirect(start + 4 * i), f"{self.what}.{what}[{i}]")
                for i in range(count)]

    def strings(self, slot: int, what: str) -> list:
        start, count = self._vector(slot, 4, what)
        return [self._decode(self.t.String(start + 4 * i), f"{what}[{i}]")
                for i in range(count)]

    def numbers(self, slot: int, dtype: str, what: str) -> list:
        start, count = self._vector(slot, np.dtype(dtype).itemsize, what)
        return np.frombuffer(self.buf, dtype, count, start).tolist() if count else []

    def table(self, slot: int, what: str) -> _Reader | None:
        pos = self._target(slot)
        return None if pos == 0 else _Reader(self.buf, pos, f"{self.what}.{what}")

    def struct(self, slot: int, fmt: str, what: str) -> tuple:
        pos = self._target(slot)
        if pos == 0 or pos + struct.calcsize(fmt) > len(self.buf):
            raise FormatError(f"{self.what}.{what}: the struct is outside the buffer")
        return struct.unpack_from(fmt, self.buf, pos)


def _tensor(r: _Reader) -> Tensor:
    return Tensor(r.string(0, "dataType"), r.numbers(1, "<u4", "sizes"),
                  r.numbers(2, "<u4", "strides") if r.present(2) else None, r.u64(3))


def _activation(r: _Reader, depth: int) -> tuple:
    return r.string(0, "type"), [_attribute(a, depth + 1) for a in r.tables(1, "attributes")]


def _attribute(r: _Reader, depth: int = 0) -> Attribute:
    if depth > 2:
        raise FormatError(f"{r.what}: activations nested deeper than a fused activation")
    tag = r.u8(1)
    if tag >= len(KINDS):
        raise FormatError(f"{r.what}: attribute variant {tag} is not an AttributeFieldVariant")
    kind, name = KINDS[tag], r.string(0, "name")
    if kind == "NONE":
        return Attribute(name, kind)
    if kind in _STRUCTS:
        value = r.struct(2, _STRUCTS[kind], kind)
        return Attribute(name, kind, value if len(value) > 1 else value[0])
    inner = r.table(2, kind)
    if inner is None:
        raise FormatError(f"{r.what}: the {kind} value is missing")
    if kind == "Activation":
        return Attribute(name, kind, _activation(inner, depth))
    if kind == "ActivationArray":
        return Attribute(name, kind, [_activation(a, depth) for a in inner.tables(0, "data")])
    if kind in _ARRAYS:
        return Attribute(name, kind, inner.numbers(0, _ARRAYS[kind], "data"))
    if inner.u8(0) != 1:  # ScalarUnionData: DirectML writes (and reads) the ByteArray member
        raise FormatError(f"{inner.what}: scalar union variant {inner.u8(0)} is not ByteArray")
    return Attribute(name, kind, bytes(inner.struct(1, "<8B", "data")))


def _node(r: _Reader) -> Node:
    node = Node(r.string(2, "name"), r.strings(3, "inputNames"), r.strings(4, "outputNames"))
    tag, desc = r.u8(0), r.table(1, "desc")
    if tag not in (1, 2) or desc is None:
        raise FormatError(f"{r.what}: desc is neither an OperatorNodeDesc nor a "
                          f"ConstantNodeDesc (variant {tag})")
    if tag == 1:
        node.op_type = desc.string(0, "type")
        node.inputs = [_tensor(t) for t in desc.tables(1, "inputs")]
        node.outputs = [_tensor(t) for t in desc.tables(2, "outputs")]
        node.attributes = [_attribute(a) for a in desc.tables(3, "attributes")]
        return node
    detail, data = desc.u8(0), desc.table(1, "data")
    if detail not in (1, 2) or data is None:
        raise FormatError(f"{desc.what}: data is neither a ConstantName nor ConstantRawData")
    if detail == 1:
        node.constant_name = data.string(0, "name")
    else:
        node.constant_data = bytes(data.numbers(0, "<u1", "data"))
    return node


def read(buf: bytes) -> Graph:
    """The Graph a DmlGraphDesc flatbuffer holds; FormatError when it holds none."""
    buf = bytes(buf)
    try:
        if len(buf) < 8:
            raise FormatError(f"{len(buf)} bytes is too short for a flatbuffer")
        root = _Reader(buf, struct.unpack_from("<I", buf, 0)[0], "DmlGraphDesc")
        return Graph([_node(n) for n in root.tables(0, "nodes")], root.strings(1, "graphInputNames"),
                     root.strings(2, "graphOutputNames"))
    except (struct.error, IndexError, ValueError, OverflowError, TypeError, RecursionError) as e:
        raise FormatError(f"not a DmlGraphDesc flatbuffer ({type(e).__name__}: {e})") from None


# --- writing ---------------------------------------------------------------------------------

def _offsets(b: flatbuffers.Builder, offsets: list) -> int:
    b.StartVector(4, len(offsets), 4)
    for o in reversed(offsets):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()


def _strings(b: flatbuffers.Builder, values: list) -> int:
    return _offsets(b, [b.CreateString(v) for v in values])


def _table(b: flatbuffers.Builder, fields: list) -> int:
    """A table of (slot, kind, value) fields made beforehand: "offset", "u8" or "u64"."""
    b.StartObject(max((f[0] for f in fields), default=-1) + 1)
    for slot, kind, value in fields:
        if kind == "offset":
            b.PrependUOffsetTRelativeSlot(slot, value, 0)
        elif kind == "u8":
            b.PrependUint8Slot(slot, value, 0)
        else:
            b.PrependUint64Slot(slot, value, 0)
    return b.EndObject()


def _write_struct(b: flatbuffers.Builder, kind: str, value) -> int:
    fmt = "<8B" if kind == "ByteArray" else _STRUCTS[kind]
    raw = struct.pack(fmt, *(value if isinstance(value, (tuple, list, bytes)) else (value,)))
    b.Prep(_ALIGN.get(kind, 4), len(raw))
    for byte in reversed(raw):
        b.PrependUint8(byte)
    return b.Offset()


def _write_tensor(b: flatbuffers.Builder, t: Tensor) -> int:
    fields = [(0, "offset", b.CreateString(t.data_type)),
              (1, "offset", b.CreateNumpyVector(np.asarray(t.sizes, "<u4")))]
    if t.strides is not None:
        fields.append((2, "offset", b.CreateNumpyVector(np.asarray(t.strides, "<u4"))))
    return _table(b, fields + [(3, "u64", int(t.total_bytes))])


def _write_activation(b: flatbuffers.Builder, value) -> int:
    op_type, attributes = value
    attrs = _offsets(b, [_write_attribute(b, a) for a in attributes])
    return _table(b, [(0, "offset", b.CreateString(op_type)), (1, "offset", attrs)])


def _write_attribute(b: flatbuffers.Builder, a: Attribute) -> int:
    if a.kind == "NONE":
        val = None
    elif a.kind in _STRUCTS:
        val = _write_struct(b, a.kind, a.value)
    elif a.kind == "Activation":
        val = _write_activation(b, a.value)
    elif a.kind == "ActivationArray":
        items = _offsets(b, [_write_activation(b, v) for v in a.value])
        val = _table(b, [(0, "offset", items)])
    elif a.kind in _ARRAYS:
        val = _table(b, [(0, "offset", b.CreateNumpyVector(np.asarray(a.value, _ARRAYS[a.kind])))])
    else:  # ScalarUnionData
        raw = _write_struct(b, "ByteArray", bytes(a.value))
        val = _table(b, [(0, "u8", 1), (1, "offset", raw)])
    name = b.CreateString(a.name)
    fields = [(0, "offset", name)]
    if val is not None:
        fields += [(1, "u8", KINDS.index(a.kind)), (2, "offset", val)]
    return _table(b, fields)


def _write_node(b: flatbuffers.Builder, n: Node) -> int:
    if n.op_type:
        ins = _offsets(b, [_write_tensor(b, t) for t in n.inputs])
        outs = _offsets(b, [_write_tensor(b, t) for t in n.outputs])
        attrs = _offsets(b, [_write_attribute(b, a) for a in n.attributes])
        desc = _table(b, [(0, "offset", b.CreateString(n.op_type)), (1, "offset", ins),
                          (2, "offset", outs), (3, "offset", attrs)])
        tag = 1
    else:
        if n.constant_name is not None:
            detail, data = 1, _table(b, [(0, "offset", b.CreateString(n.constant_name))])
        else:
            raw = b.CreateNumpyVector(np.frombuffer(n.constant_data or b"", np.uint8))
            detail, data = 2, _table(b, [(0, "offset", raw)])
        desc, tag = _table(b, [(0, "u8", detail), (1, "offset", data)]), 2
    name, ins_, outs_ = (b.CreateString(n.name), _strings(b, n.input_names),
                         _strings(b, n.output_names))
    return _table(b, [(0, "u8", tag), (1, "offset", desc), (2, "offset", name),
                      (3, "offset", ins_), (4, "offset", outs_)])


def write(graph: Graph) -> bytes:
    """The DmlGraphDesc flatbuffer of ``graph``."""
    b = flatbuffers.Builder(1024)
    nodes = _offsets(b, [_write_node(b, n) for n in graph.nodes])
    ins, outs = _strings(b, graph.input_names), _strings(b, graph.output_names)
    b.Finish(_table(b, [(0, "offset", nodes), (1, "offset", ins), (2, "offset", outs)]))
    return bytes(b.Output())

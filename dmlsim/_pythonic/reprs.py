"""Notebook reprs: ``_repr_html_`` (and a readable ``__repr__``) for resources, descriptor
heaps, binding tables, command lists and tensor descs.

Importing this module attaches the methods to the API classes (``dmlsim/__init__`` imports it).
Every name a user chose (SetName) is escaped with ``html.escape``. Nothing here changes state:
UPLOAD/READBACK bytes are shown as the CPU sees them now, without landing pending GPU writes.
"""
from __future__ import annotations

from html import escape

from .._api import d3d12_types as T
from .._api.d3d12 import ID3D12DescriptorHeap, ID3D12GraphicsCommandList, ID3D12Resource
from .._api.dml import IDMLBindingTable, IDMLCompiledOperator, IDMLOperator
from .._core import commands as C, dtypes
from .._core.dml import DmlDispatch
from .._schema.enums_generated import DML_TENSOR_FLAGS
from .._schema.structs_generated import DML_BUFFER_TENSOR_DESC, DML_TENSOR_DESC

PREVIEW_BYTES = 16
_HEAPS = {T.D3D12_HEAP_TYPE_DEFAULT: "DEFAULT", T.D3D12_HEAP_TYPE_UPLOAD: "UPLOAD",
          T.D3D12_HEAP_TYPE_READBACK: "READBACK"}
_STYLE = "border-collapse:collapse;font-family:monospace;font-size:90%"


def _flags(enum_cls, value, prefix) -> str:
    try:
        name = enum_cls(int(value)).name
    except ValueError:
        name = None
    return (name or f"0x{int(value):X}").replace(prefix, "")


def state_name(state) -> str:
    return _flags(T.D3D12_RESOURCE_STATES, state, "D3D12_RESOURCE_STATE_")


def _table(headers, rows) -> str:
    th = "" if headers is None else "<tr>" + "".join(
        f"<th style='text-align:left;padding:0 6px'>{escape(str(h))}</th>" for h in headers) + \
        "</tr>"
    body = "".join("<tr>" + "".join(f"<td style='padding:0 6px'>{escape(str(c))}</td>"
                                    for c in row) + "</tr>" for row in rows)
    return f"<table style='{_STYLE}'>{th}{body}</table>"


def _box(title, summary, body="") -> str:
    return (f"<div style='font-family:monospace'><b>{escape(title)}</b> {escape(summary)}"
            f"{body}</div>")


def _range(binding) -> str:
    return "" if binding is None else f"[{binding.offset}, {binding.offset + binding.size})"


# ---- resources -----------------------------------------------------------------------------

def _resource_fields(res):
    b = res._core
    return (b.label(), _HEAPS.get(b.heap_type, str(b.heap_type)), b.width, state_name(b.state),
            f"0x{b.gpu_va:X}")


def _preview(b):
    if not b.memory.host:
        return None
    data = b.memory.bytes[:PREVIEW_BYTES]
    text = " ".join(f"{x:02x}" for x in data) + (" ..." if b.width > PREVIEW_BYTES else "")
    if b.memory.pending_arrays():
        text += "  (GPU writes pending until a fence wait)"
    return text


def resource_repr(res) -> str:
    label, heap, width, state, va = _resource_fields(res)
    return f"<ID3D12Resource {label} {heap} {width} bytes {state} va={va}>"


def resource_html(res) -> str:
    label, heap, width, state, va = _resource_fields(res)
    rows = [("heap type", heap), ("width", f"{width} bytes"), ("state", state), ("GPU VA", va)]
    preview = _preview(res._core)
    if preview is not None:
        rows.append((f"first {PREVIEW_BYTES} bytes", preview))
    return _box("ID3D12Resource", label, _table(None, rows))


# ---- descriptor heaps ---------------------------------------------------------------------

def _heap_summary(h) -> str:
    kind = _flags(T.D3D12_DESCRIPTOR_HEAP_TYPE, h.type, "D3D12_DESCRIPTOR_HEAP_TYPE_")
    used = sum(s is not None for s in h.slots)
    vis = "shader-visible" if h.shader_visible else "CPU-only"
    name = f"'{h.name}' " if h.name else ""
    return f"{name}{kind}, {h.count} descriptors, {vis}, {used} set"


def heap_repr(heap) -> str:
    return f"<ID3D12DescriptorHeap {_heap_summary(heap._core)}>"


def heap_html(heap) -> str:
    h = heap._core
    rows = [(i, d.buffer.label(), _range(d)) for i, d in enumerate(h.slots) if d is not None]
    return _box("ID3D12DescriptorHeap", _heap_summary(h),
                _table(("slot", "buffer", "bytes"), rows) if rows else "")


# ---- binding tables -----------------------------------------------------------------------

def _dispatchable_label(d) -> str:
    name = f"'{d.name}' " if d.name else ""
    lay = d.layout
    if lay.groups is not None:
        ops = ", ".join(o.layout.name for o in d.initializes) or "no operators"
        return f"{name}{lay.kind} of {ops}"
    return f"{name}{lay.kind} {lay.name}"


def _short(name: str) -> str:
    return name.replace("DML_OPERATOR_", "")


def binding_rows(t):
    """(descriptor index, kind, field, binding or None, TensorSpec or None) per slot, in the
    binding table's descriptor order (docs/binding.md), from the dispatchable's layout."""
    lay, rows = t.layout, []
    if lay.groups is None:
        rows += [("input", s.name, b, s.spec) for s, b in zip(lay.inputs, t.inputs)]
        rows += [("output", s.name, b, s.spec) for s, b in zip(lay.outputs, t.outputs)]
    else:
        for g in lay.groups:
            rows += [("input", f"{_short(g.owner)}.{lay.inputs[j].name}", t.inputs[j],
                      lay.inputs[j].spec) for j in range(g.start, g.stop)]
        rows += [("persistent output", _short(g.owner), b, None)
                 for g, b in zip(lay.groups, t.outputs)]
    rows.append(("temporary", "", t.temporary, None))
    if lay.has_persistent:
        rows.append(("persistent", "", t.persistent, None))
    return [(t.cpu_index + i, *r) for i, r in enumerate(rows[:t.size])]


def _table_summary(t) -> str:
    name = f"'{t.name}' " if t.name else ""
    rows = binding_rows(t)
    bound = sum(r[3] is not None for r in rows)
    return f"{name}for {_dispatchable_label(t.dispatchable)}: {bound}/{len(rows)} slots bound"


def binding_table_repr(table) -> str:
    if table._core is None:
        return "<IDMLBindingTable empty>"
    return f"<IDMLBindingTable {_table_summary(table._core)}>"


def binding_table_html(table) -> str:
    t = table._core
    if t is None:
        return _box("IDMLBindingTable", "empty (null DML_BINDING_TABLE_DESC)")
    rows = []
    for index, kind, field, b, spec in binding_rows(t):
        tensor = "" if spec is None else \
            f"{dtypes.SHORT_NAMES.get(spec.data_type, spec.data_type)} {list(spec.sizes)}"
        if spec is not None and spec.owned_by_dml and kind == "input" and \
                t.layout.groups is None:
            tensor += " (OWNED_BY_DML: read from the persistent resource)"
        rows.append((index, kind, field, "" if b is None else b.buffer.label(), _range(b),
                     tensor))
    return _box("IDMLBindingTable", _table_summary(t),
                _table(("descriptor", "slot", "field", "buffer", "bytes", "tensor"), rows))


# ---- command lists ------------------------------------------------------------------------

def _copy_text(r) -> str:
    src = r.src.label() + (f"+{r.src_offset}" if r.src_offset else "")
    dst = r.dst.label() + (f"+{r.dst_offset}" if r.dst_offset else "")
    return f"CopyBufferRegion {r.size} bytes {src} -> {dst}"


def _barrier_text(r) -> str:
    res = "" if r.resource is None else " " + r.resource.label()
    if r.kind == C.TRANSITION:
        return f"ResourceBarrier Transition{res} {state_name(r.before)} -> {state_name(r.after)}"
    return f"ResourceBarrier {'UAV' if r.kind == C.UAV else 'Aliasing'}{res}"


def _heaps_text(r) -> str:
    return "SetDescriptorHeaps " + ", ".join(h.name and f"'{h.name}'" or f"heap@0x{h.gpu_base:X}"
                                             for h in r.heaps)


def _dispatch_text(r) -> str:
    d = r.dispatchable
    if d.layout.groups is not None:
        return "RecordDispatch initializer of " + ", ".join(o.layout.name for o in d.initializes)
    return f"RecordDispatch {d.layout.name}"


# The line of each record kind this module knows; another kind gets its fields.
RECORD_TEXT = {C.CopyRegion: _copy_text, C.Barrier: _barrier_text, C.SetHeaps: _heaps_text,
               DmlDispatch: _dispatch_text}


def record_text(r) -> str:
    """One line per command record, e.g. "CopyBufferRegion 16 bytes 'up' -> 'x'"."""
    text = RECORD_TEXT.get(type(r))
    if text is not None:
        return text(r)
    fields = getattr(r, "__dataclass_fields__", {})
    return " ".join([type(r).__name__] + [f"{f}={getattr(r, f)!r}" for f in fields])


def _list_summary(cl) -> str:
    name = f"'{cl.name}' " if cl.name else ""
    return f"{name}{'open' if cl.open else 'closed'}, {len(cl.records)} records" + \
        (f", error: {cl.error}" if cl.error is not None else "")


def command_list_repr(cl) -> str:
    return f"<ID3D12GraphicsCommandList {_list_summary(cl._core)}>"


def command_list_html(cl) -> str:
    c = cl._core
    rows = [(i, record_text(r)) for i, r in enumerate(c.records)]
    return _box("ID3D12GraphicsCommandList", _list_summary(c),
                _table(("#", "record"), rows) if rows else "")


# ---- tensor descs -------------------------------------------------------------------------

def tensor_desc_html(desc) -> str:
    b = desc.Desc if isinstance(desc, DML_TENSOR_DESC) else desc
    title = type(desc).__name__
    if not isinstance(b, DML_BUFFER_TENSOR_DESC):
        return _box(title, f"Type {desc.Type}, Desc {type(b).__name__}")
    sizes = list(b.Sizes or [])[:int(b.DimensionCount or len(b.Sizes or []))]
    strides = f"{list(b.Strides)[:len(sizes)]}" if b.Strides is not None else \
        f"packed {list(dtypes.packed_strides(sizes))}"
    rows = [("data type", dtypes.name(b.DataType).replace("DML_TENSOR_DATA_TYPE_", "")),
            ("sizes", sizes), ("strides", strides),
            ("total bytes", b.TotalTensorSizeInBytes),
            ("flags", _flags(DML_TENSOR_FLAGS, b.Flags or 0, "DML_TENSOR_FLAG_"))]
    if b.GuaranteedBaseOffsetAlignment:
        rows.append(("base offset alignment", b.GuaranteedBaseOffsetAlignment))
    return _box(title, "", _table(None, rows))


def tensor_text(data_type, sizes) -> str:
    """``FLOAT32 [2, 3]``: a tensor's type and sizes."""
    return f"{dtypes.SHORT_NAMES.get(int(data_type), data_type)} {list(sizes)}"


def _slots_text(rows) -> str:
    return ", ".join(f"{label} {tensor_text(t.data_type, t.sizes)}" for label, t in rows
                     if t is not None) or "none"


def operator_repr(op) -> str:
    """``<IDMLOperator DML_OPERATOR_ELEMENT_WISE_IDENTITY: InputTensor FLOAT32 [2, 3] ->
    OutputTensor FLOAT32 [2, 3]>``; a compiled operator adds its flags, a compiled graph says
    its node count and its graph inputs and outputs."""
    c = op._core
    kind = type(op).__name__
    if hasattr(c, "spec"):
        spec = c.spec
        label = lambda f, i: f if i is None else f"{f}[{i}]"  # noqa: E731
        ins = [(label(f, i), t) for f, i, t in spec.slots("input")]
        outs = [(label(f, i), t) for f, i, t in spec.slots("output")]
        flags = f", flags 0x{c.flags:X}" if hasattr(c, "flags") else ""
        head = f"{spec.name}{flags}"
    else:  # a compiled graph
        ins = [(s.label, s.spec) for s in c.layout.inputs]
        outs = [(s.label, s.spec) for s in c.layout.outputs]
        head = f"{c.layout.name.removeprefix('the ')}, flags 0x{c.flags:X}"
    name = f" '{c.name}'" if getattr(c, "name", "") else ""
    return f"<{kind}{name} {head}: {_slots_text(ins)} -> {_slots_text(outs)}>"


IDMLOperator.__repr__ = IDMLCompiledOperator.__repr__ = operator_repr
ID3D12Resource.__repr__, ID3D12Resource._repr_html_ = resource_repr, resource_html
ID3D12DescriptorHeap.__repr__, ID3D12DescriptorHeap._repr_html_ = heap_repr, heap_html
IDMLBindingTable.__repr__, IDMLBindingTable._repr_html_ = binding_table_repr, binding_table_html
ID3D12GraphicsCommandList.__repr__ = command_list_repr
ID3D12GraphicsCommandList._repr_html_ = command_list_html
DML_TENSOR_DESC._repr_html_ = DML_BUFFER_TENSOR_DESC._repr_html_ = tensor_desc_html

"""Binding rules of IDMLBindingTable and IDMLCommandRecorder::RecordDispatch.

Every rule reads the dispatchable's :class:`~.layout.BindingLayout`, nothing else. Each check
returns normalized bindings (:class:`~.resources.Range`) or raises the core's Misuse (made by
:func:`misuse`: E_INVALIDARG) with the DirectML debug layer's wording ("The value of
SizeInBytes is too small. 4 was provided, but 36 was expected.") and the debug catalogue name
of the message. The shells' guard turns it into device removal (or a raise in strict mode).
"""
from __future__ import annotations

from .._schema.d3d12_enums import D3D12_HEAP_TYPE, D3D12_RESOURCE_FLAGS
from .._schema.enums_generated import DML_BINDING_TYPE
from .hresult import E_INVALIDARG, Misuse
from .layout import ALIGN, FORBIDDEN, REQUIRED, BindingLayout
from .resources import Range

NONE = int(DML_BINDING_TYPE.DML_BINDING_TYPE_NONE)
BUFFER = int(DML_BINDING_TYPE.DML_BINDING_TYPE_BUFFER)
BUFFER_ARRAY = int(DML_BINDING_TYPE.DML_BINDING_TYPE_BUFFER_ARRAY)
DEFAULT = D3D12_HEAP_TYPE.D3D12_HEAP_TYPE_DEFAULT
_UAV = D3D12_RESOURCE_FLAGS.D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS


def misuse(message: str, message_id: str = "DML_INVALID_BINDING") -> Misuse:
    """A binding or recording mistake (E_INVALIDARG); ``message_id`` names its debug catalogue
    entry."""
    return Misuse(E_INVALIDARG, message, message_id)


def _heap_name(heap_type) -> str:
    return D3D12_HEAP_TYPE(heap_type).name.removeprefix("D3D12_HEAP_TYPE_")


def buffer_binding(b, what, *, need=0, align=16, heaps=(DEFAULT,), uav=True) -> Range:
    """Validate one DML_BUFFER_BINDING (given as a core (buffer, offset, size) triple)."""
    buf, offset, size = b
    if buf is None:
        raise misuse(f"{what}: Buffer is null")
    if offset % align:
        raise misuse(f"{what}: the value of Offset is misaligned. {offset} was provided, but it "
                     f"must be a multiple of {align}.")
    if offset + size > buf.width:
        raise misuse(f"{what}: the range [{offset}, {offset + size}) is past the end of "
                     f"{buf.label()}, whose width is {buf.width} bytes.")
    if size < need:
        raise misuse(f"{what}: the value of SizeInBytes is too small. {size} was provided, but "
                     f"{need} was expected.")
    if buf.heap_type not in heaps:
        raise misuse(f"{what}: {buf.label()} is on a {_heap_name(buf.heap_type)} heap; this "
                     f"binding needs {' or '.join(_heap_name(h) for h in heaps)}.")
    if uav and buf.heap_type == DEFAULT and not buf.flags & _UAV:
        raise misuse(f"{what}: {buf.label()} was created without "
                     "D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS, so DirectML cannot access it.")
    return Range(buf, int(offset), int(size))


def _slot_binding(slot, triple, label=None):
    return buffer_binding(triple, label or slot.label, need=slot.need, align=slot.align,
                          heaps=slot.heaps, uav=slot.uav)


def _count_message(lay: BindingLayout, n: int, what: str) -> str:
    if lay.groups is not None and what == "input":
        return (f"{n} input bindings were provided, but the operator initializer has "
                f"{len(lay.groups)} operators (one DML_BUFFER_ARRAY_BINDING each).")
    if lay.kind == "operator initializer":
        return (f"{n} output bindings were provided, but the operator initializer has "
                f"{len(lay.outputs)} operators (one persistent resource each).")
    count = len(lay.inputs) if what == "input" else len(lay.outputs)
    tail = " (optional tensors keep their slot: bind DML_BINDING_TYPE_NONE)" \
        if what == "input" else ""
    return f"{n} {what} bindings were provided, but {lay.name} has {count} {what}s{tail}."


def inputs(lay: BindingLayout, bindings):
    """``bindings``: list of (type, payload): payload a triple (BUFFER) or a list of
    triples-or-None (BUFFER_ARRAY). Returns one Range or None per input slot."""
    if not bindings:
        return [None] * len(lay.inputs)
    if lay.groups is not None:
        return _group_inputs(lay, bindings)
    if len(bindings) != len(lay.inputs):
        raise misuse(_count_message(lay, len(bindings), "input"))
    out = []
    for slot, (btype, payload) in zip(lay.inputs, bindings):
        if btype == NONE:
            out.append(None)
        elif btype == BUFFER_ARRAY:
            raise misuse(f"{slot.label}: DML_BINDING_TYPE_BUFFER_ARRAY is only for operator "
                         f"initializers; a {lay.kind} takes DML_BINDING_TYPE_BUFFER")
        elif btype != BUFFER:
            raise misuse(f"{slot.label}: binding Type {btype} is not a DML_BINDING_TYPE")
        elif slot.rule == FORBIDDEN:
            raise misuse(f"{slot.label}: {slot.why}")
        else:
            out.append(_slot_binding(slot, payload))
    return out


def _group_inputs(lay: BindingLayout, bindings):
    if len(bindings) != len(lay.groups):
        raise misuse(_count_message(lay, len(bindings), "input"))
    out = [None] * len(lay.inputs)
    for k, (g, (btype, payload)) in enumerate(zip(lay.groups, bindings)):
        if btype == NONE:
            if g.needed:
                raise misuse(f"input {k}: {g.label} has OWNED_BY_DML inputs, so it needs a "
                             "DML_BUFFER_ARRAY_BINDING")
            continue
        if btype != BUFFER_ARRAY:
            raise misuse(f"input {k}: an operator initializer takes one "
                         "DML_BINDING_TYPE_BUFFER_ARRAY per operator")
        if not payload and not g.needed:  # "an empty DML_BUFFER_ARRAY_BINDING"
            continue
        if len(payload) != g.stop - g.start:
            raise misuse(f"input {k}: the value of BindingCount is wrong. {len(payload)} was "
                         f"provided, but {g.stop - g.start} was expected ({g.owner}'s inputs)")
        for j, triple in zip(range(g.start, g.stop), payload):
            slot = lay.inputs[j]
            bound = triple is not None and triple[0] is not None
            if slot.rule == REQUIRED and not bound:
                raise misuse(f"{slot.label}: the tensor has DML_TENSOR_FLAG_OWNED_BY_DML, so its "
                             "data must be bound to the initializer")
            if slot.rule == FORBIDDEN and bound:
                raise misuse(f"{slot.label}: {slot.why}")
            if bound:
                out[j] = _slot_binding(slot, triple)
    return out


def outputs(lay: BindingLayout, bindings):
    if not bindings:
        return [None] * len(lay.outputs)
    if len(bindings) != len(lay.outputs):
        raise misuse(_count_message(lay, len(bindings), "output"))
    out = []
    for i, (slot, (btype, payload)) in enumerate(zip(lay.outputs, bindings)):
        if btype == NONE:
            out.append(None)
        elif btype != BUFFER:
            raise misuse(f"output {i}: outputs take DML_BINDING_TYPE_BUFFER")
        elif slot.rule == FORBIDDEN:
            raise misuse(f"{slot.label}: {slot.why}")
        else:
            out.append(_slot_binding(slot, payload))
    return out


def resource(lay: BindingLayout, payload, kind):
    if payload is None:
        return None
    if kind == "persistent" and not lay.has_persistent:
        raise misuse("an operator initializer has no persistent resource; bind the persistent "
                     "resources as the initializer's outputs")
    need = lay.temporary_size if kind == "temporary" else lay.persistent_size
    return buffer_binding(payload, f"{kind} resource", need=need, align=ALIGN)


def missing(lay: BindingLayout, table) -> list:
    """Required bindings that are not set, for RecordDispatch without DESCRIPTORS_VOLATILE."""
    problems = []
    if lay.groups is not None:
        for k, g in enumerate(lay.groups):
            if g.needed and any(table.inputs[j] is None for j in range(g.start, g.stop)
                                if lay.inputs[j].rule == REQUIRED):
                problems.append(f"input {k} (OWNED_BY_DML data of {g.owner})")
            if lay.outputs[k].rule == REQUIRED and table.outputs[k] is None:
                problems.append(lay.outputs[k].label)
    else:
        for slot, b in zip(lay.inputs + lay.outputs, list(table.inputs) + list(table.outputs)):
            if slot.rule == REQUIRED and b is None:
                problems.append(slot.label)
        if lay.persistent_size and table.persistent is None:
            problems.append("the persistent resource")
    if lay.temporary_size and table.temporary is None:
        problems.append("the temporary resource")
    return problems


def hazards(lay: BindingLayout, ins, outs, temporary, persistent):
    """The binding hazard rules of IDMLBindingTable::BindInputs (DirectML 1.7.0) over bound
    Ranges (or None) per slot; the text names each binding by slot (``input 1 (BTensor)
    'buf' bytes [0, 64)``). None when there is no hazard."""
    ins = [(s.label, b) for s, b in zip(lay.inputs, ins) if b is not None]
    outs = [(i, s.label, b) for i, (s, b) in enumerate(zip(lay.outputs, outs)) if b is not None]
    for la, a in ins:
        for i, lo, o in outs:
            if lay.copies_inputs and a.buffer is o.buffer:
                return (f"initializer input {a.describe()} and output {o.describe()} reference the "
                        "same resource; initializer inputs are copied into the output")
            if not lay.copies_inputs and a.overlaps(o):
                if (a.offset, a.size) != (o.offset, o.size):
                    return (f"{la} {a.describe()} and {lo} {o.describe()} overlap but are not "
                            "identical; such bindings are never valid")
                if not lay.in_place:
                    return (f"{la} {a.describe()} and {lo} {o.describe()} alias, but "
                            f"{lay.name} does not support in-place execution")
    for n, (i, lo, o) in enumerate(outs):
        for i2, lo2, o2 in outs[:n]:
            if o.overlaps(o2):
                return f"outputs {i2} and {i} overlap ({lo2} {o2.describe()}, {lo} {o.describe()})"
    p, t = persistent, temporary
    if p is not None:
        for i, lo, o in outs:
            if p.overlaps(o):
                return f"the persistent resource {p.describe()} overlaps {lo} {o.describe()}"
    if t is not None:
        for lb, b in ins + [(lo, o) for _, lo, o in outs] + \
                ([("the persistent resource", p)] if p is not None else []):
            if t.overlaps(b):
                return f"the temporary resource {t.describe()} overlaps {lb} {b.describe()}"
    return None


"""Binding rules of IDMLBindingTable and IDMLCommandRecorder::RecordDispatch.

Each check returns normalized bindings or raises :class:`Misuse` with the DirectML debug
layer's wording ("The value of SizeInBytes is too small. 4 was provided, but 36 was
expected."). The API layer turns Misuse into device removal (or a raise in strict mode).
"""
from __future__ import annotations

from .dml import ALIGN, BufferBinding, CompiledOperator
from .runtime import FLAG_ALLOW_UNORDERED_ACCESS, HEAP_DEFAULT, HEAP_UPLOAD

NONE, BUFFER, BUFFER_ARRAY = 0, 1, 2


class Misuse(Exception):
    pass


def buffer_binding(b, what, *, need=0, align=16, heaps=(HEAP_DEFAULT,), uav=True):
    """Validate one DML_BUFFER_BINDING (given as a core (buffer, offset, size) triple)."""
    buf, offset, size = b
    if buf is None:
        raise Misuse(f"{what}: Buffer is null")
    if offset % align:
        raise Misuse(f"{what}: the value of Offset is misaligned. {offset} was provided, but it "
                     f"must be a multiple of {align}.")
    if offset + size > buf.width:
        raise Misuse(f"{what}: the range [{offset}, {offset + size}) is past the end of "
                     f"{buf.label()}, whose width is {buf.width} bytes.")
    if size < need:
        raise Misuse(f"{what}: the value of SizeInBytes is too small. {size} was provided, but "
                     f"{need} was expected.")
    if buf.heap_type not in heaps:
        names = {1: "DEFAULT", 2: "UPLOAD", 3: "READBACK"}
        raise Misuse(f"{what}: {buf.label()} is on a {names.get(buf.heap_type)} heap; this "
                     f"binding needs {' or '.join(names[h] for h in heaps)}.")
    if uav and buf.heap_type == HEAP_DEFAULT and not buf.flags & FLAG_ALLOW_UNORDERED_ACCESS:
        raise Misuse(f"{what}: {buf.label()} was created without "
                     "D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS, so DirectML cannot access it.")
    return BufferBinding(buf, int(offset), int(size))


def inputs(table, bindings):
    """``bindings``: list of (type, payload): payload a triple (BUFFER) or a list of
    triples-or-None (BUFFER_ARRAY)."""
    d = table.dispatchable
    if not bindings:
        return [None] * len(table.inputs)
    if isinstance(d, CompiledOperator):
        if len(bindings) != len(d.in_slots):
            raise Misuse(f"{len(bindings)} input bindings were provided, but {d.spec.name} has "
                         f"{len(d.in_slots)} inputs (optional tensors keep their slot: bind "
                         "DML_BINDING_TYPE_NONE).")
        out = []
        for i, ((field, idx, t), (btype, payload)) in enumerate(zip(d.in_slots, bindings)):
            label = f"input {i} ({field if idx is None else f'{field}[{idx}]'})"
            if btype == NONE:
                out.append(None)
            elif btype == BUFFER_ARRAY:
                raise Misuse(f"{label}: DML_BINDING_TYPE_BUFFER_ARRAY is only for operator "
                             "initializers; a compiled operator takes DML_BINDING_TYPE_BUFFER")
            elif btype != BUFFER:
                raise Misuse(f"{label}: binding Type {btype} is not a DML_BINDING_TYPE")
            elif t is None:
                raise Misuse(f"{label}: the operator was created without this optional tensor, "
                             "so it must be bound as DML_BINDING_TYPE_NONE")
            elif t.owned_by_dml:
                raise Misuse(f"{label}: the tensor has DML_TENSOR_FLAG_OWNED_BY_DML, so it is "
                             "bound only to the operator initializer; bind NONE for execution")
            else:
                out.append(buffer_binding(payload, label, need=t.total_bytes,
                                          align=t.offset_alignment))
        return out
    if len(bindings) != len(d.operators):
        raise Misuse(f"{len(bindings)} input bindings were provided, but the operator initializer "
                     f"has {len(d.operators)} operators (one DML_BUFFER_ARRAY_BINDING each).")
    out = []
    for k, (op, (btype, payload)) in enumerate(zip(d.operators, bindings)):
        if btype == NONE:
            if op.persistent_offsets:
                raise Misuse(f"input {k}: operator {k} ({op.spec.name}) has OWNED_BY_DML inputs, "
                             "so it needs a DML_BUFFER_ARRAY_BINDING")
            out.append(None)
            continue
        if btype != BUFFER_ARRAY:
            raise Misuse(f"input {k}: an operator initializer takes one "
                         "DML_BINDING_TYPE_BUFFER_ARRAY per operator")
        if not payload and not op.persistent_offsets:  # "an empty DML_BUFFER_ARRAY_BINDING"
            out.append(None)
            continue
        if len(payload) != len(op.in_slots):
            raise Misuse(f"input {k}: the value of BindingCount is wrong. {len(payload)} was "
                         f"provided, but {len(op.in_slots)} was expected ({op.spec.name}'s inputs)")
        arr = []
        for i, ((field, _, t), triple) in enumerate(zip(op.in_slots, payload)):
            bound = triple is not None and triple[0] is not None
            label = f"input {k}, array element {i} ({field})"
            if t is not None and t.owned_by_dml:
                if not bound:
                    raise Misuse(f"{label}: the tensor has DML_TENSOR_FLAG_OWNED_BY_DML, so its "
                                 "data must be bound to the initializer")
                arr.append(buffer_binding(triple, label, need=t.total_bytes,
                                          align=t.offset_alignment,
                                          heaps=(HEAP_DEFAULT, HEAP_UPLOAD), uav=False))
            else:
                if bound:
                    raise Misuse(f"{label}: only OWNED_BY_DML tensors are bound to an operator "
                                 "initializer; this one must be left unbound")
                arr.append(None)
        out.append(arr)
    return out


def outputs(table, bindings):
    d = table.dispatchable
    if not bindings:
        return [None] * len(table.outputs)
    compiled = isinstance(d, CompiledOperator)
    expected = len(d.out_slots) if compiled else len(d.operators)
    if len(bindings) != expected:
        what = f"{d.spec.name} has {expected} outputs" if compiled else \
            f"the operator initializer has {expected} operators (one persistent resource each)"
        raise Misuse(f"{len(bindings)} output bindings were provided, but {what}.")
    out = []
    for i, (btype, payload) in enumerate(bindings):
        if btype == NONE:
            out.append(None)
            continue
        if btype != BUFFER:
            raise Misuse(f"output {i}: outputs take DML_BINDING_TYPE_BUFFER")
        if compiled:
            field, idx, t = d.out_slots[i]
            if t is None:
                raise Misuse(f"output {i} ({field}): the operator was created without this "
                             "optional tensor; bind DML_BINDING_TYPE_NONE")
            out.append(buffer_binding(payload, f"output {i} ({field})", need=t.total_bytes,
                                      align=t.offset_alignment))
        else:
            op = d.operators[i]
            out.append(buffer_binding(payload, f"output {i} (persistent resource of "
                                               f"{op.spec.name})", need=op.persistent_size,
                                      align=ALIGN))
    return out


def resource(table, payload, kind):
    d = table.dispatchable
    if payload is None:
        return None
    need = d.temporary_size if kind == "temporary" else d.persistent_size
    if kind == "persistent" and not isinstance(d, CompiledOperator):
        raise Misuse("an operator initializer has no persistent resource; bind the persistent "
                     "resources as the initializer's outputs")
    return buffer_binding(payload, f"{kind} resource", need=need, align=ALIGN)


def missing(table):
    """Required bindings that are not set, for RecordDispatch without DESCRIPTORS_VOLATILE."""
    d = table.dispatchable
    problems = []
    if isinstance(d, CompiledOperator):
        for i, ((field, idx, t), b) in enumerate(zip(d.in_slots, table.inputs)):
            if t is not None and not t.owned_by_dml and b is None:
                problems.append(f"input {i} ({field})")
        for i, ((field, idx, t), b) in enumerate(zip(d.out_slots, table.outputs)):
            if t is not None and b is None and not _optional_output(d, field):
                problems.append(f"output {i} ({field})")
        if d.persistent_size and table.persistent is None:
            problems.append("the persistent resource")
    else:
        for k, op in enumerate(d.operators):
            if op.persistent_offsets and table.inputs[k] is None:
                problems.append(f"input {k} (OWNED_BY_DML data of {op.spec.name})")
            if op.persistent_size and table.outputs[k] is None:
                problems.append(f"output {k} (persistent resource of {op.spec.name})")
    if d.temporary_size and table.temporary is None:
        problems.append("the temporary resource")
    return problems


def _optional_output(d, field):
    return any(f["name"] == field and f.get("optional") for f in d.op.schema["fields"])


def hazards(table):
    """The binding hazard rules of IDMLBindingTable::BindInputs (DirectML 1.7.0); the text
    names each binding by slot (``input 1 (BTensor) 'buf' bytes [0, 64)``)."""
    d = table.dispatchable
    compiled = isinstance(d, CompiledOperator)

    def slot(kind, i, slots):
        return f"{kind} {i}" + (f" ({slots[i][0]})" if compiled and i < len(slots) else "")
    ins = [(slot("input", j, getattr(d, "in_slots", ())), b) for j, b in enumerate(
        table.inputs if compiled else [x for arr in table.inputs if arr for x in arr])
        if b is not None]
    outs = [(i, slot("output", i, getattr(d, "out_slots", ())), b)
            for i, b in enumerate(table.outputs) if b is not None]
    for la, a in ins:
        for i, lo, o in outs:
            if not compiled and a.buffer is o.buffer:
                return (f"initializer input {a.describe()} and output {o.describe()} reference the "
                        "same resource; initializer inputs are copied into the output")
            if compiled and a.overlaps(o):
                identical = (a.offset, a.size) == (o.offset, o.size)
                if not identical:
                    return (f"{la} {a.describe()} and {lo} {o.describe()} overlap but are not "
                            "identical; such bindings are never valid")
                if not d.op.schema.get("in_place"):
                    return (f"{la} {a.describe()} and {lo} {o.describe()} alias, but "
                            f"{d.spec.name} does not support in-place execution")
    for n, (i, lo, o) in enumerate(outs):
        for i2, lo2, o2 in outs[:n]:
            if o.overlaps(o2):
                return f"outputs {i2} and {i} overlap ({lo2} {o2.describe()}, {lo} {o.describe()})"
    p, t = table.persistent, table.temporary
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

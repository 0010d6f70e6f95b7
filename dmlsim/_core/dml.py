"""The DirectML side of the runtime: device, operators, compiled operators, initializers,
binding tables and the dispatch command.

Binding-table policy (documented in docs/binding.md):
- a compiled operator uses one descriptor per flattened input slot, one per output slot,
  then one for the temporary and one for the persistent resource;
- an initializer uses, per operator, one descriptor per input slot, then one persistent
  output descriptor per operator, then one temporary descriptor;
- TemporaryResourceSize is 0 (every kernel works in registers and in its outputs);
- PersistentResourceSize is the sum of the OWNED_BY_DML input tensors' TotalTensorSizeInBytes,
  each rounded up to DML_PERSISTENT_BUFFER_ALIGNMENT: the initializer copies those tensors
  there and execution reads them from there.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import config, registry, validation
from .hresult import (DXGI_ERROR_DEVICE_REMOVED, E_INVALIDARG, E_NOTIMPL, HResultError, fail,
                      hresult_name)
from .runtime import Buffer, Device, ExecutionFault, handler
from .tensor import OpSpec

ALIGN = 256  # DML_PERSISTENT_BUFFER_ALIGNMENT == DML_TEMPORARY_BUFFER_ALIGNMENT
EXEC_HALF, EXEC_DISABLE_META, EXEC_VOLATILE = 1, 2, 4


def _align(n: int, a: int = ALIGN) -> int:
    return (n + a - 1) // a * a


class DmlDevice:
    def __init__(self, d3d: Device, flags: int, feature_level: int):
        self.d3d = d3d
        self.flags = flags
        self.feature_level = feature_level
        self.own_removed_reason = 0
        self.own_removed_message = ""
        self.compile_cache: dict = {}
        self.name = ""

    @property
    def debug(self) -> bool:
        return bool(self.flags & 1)

    @property
    def removed_reason(self) -> int:
        return self.own_removed_reason or self.d3d.removed_reason

    @property
    def removed_message(self) -> str:
        return self.own_removed_message or self.d3d.removed_message

    def check_alive(self, method: str) -> None:
        if self.removed_reason:
            fail(DXGI_ERROR_DEVICE_REMOVED,
                 f"{method}: the DirectML device was removed "
                 f"({hresult_name(self.removed_reason)}): {self.removed_message}")

    def misuse(self, method: str, message: str, hr: int = E_INVALIDARG, **objects) -> None:
        """Misuse in a void method: raise in strict mode, otherwise remove the device.
        ``objects`` (table=, cmd_list=, dispatchable=) name the objects for the debug layer."""
        text = f"{method}: {message}"
        self.d3d.notify("dml_misuse", method=method, message=text, hresult=hr, device=self,
                        **objects)
        if config.settings.strict:
            fail(hr, text)
        if not self.own_removed_reason:
            self.own_removed_reason = hr
            self.own_removed_message = text
            self.d3d.notify("device_removed", reason=hr, message=text, device=self)

    # ---- operators -----------------------------------------------------------------------
    def create_operator(self, op_desc, schemas_by_value) -> "Operator":
        self.check_alive("IDMLDevice::CreateOperator")
        schema = schemas_by_value.get(getattr(op_desc, "Type", None))
        if schema is not None and registry.get(schema["name"]) is None:
            fail(E_NOTIMPL, f"{schema['name']}: not implemented in dmlsim (see `dmlsim ops` for "
                            "the implemented operators)")
        spec = validation.operator_desc(op_desc, schemas_by_value)
        opdef = registry.get(spec.name)
        validation.check_support(spec, schema, self.feature_level, config.settings.x64,
                                 opdef.condition and (lambda c: opdef.condition(spec, c)))
        for rule in opdef.rules:
            if getattr(rule, "needs_feature_level", False):  # POW: "until 3_0, ..."
                rule(spec, self.feature_level)
            else:
                rule(spec)
        for fused in validation.fused_activations(spec, schemas_by_value, self.feature_level):
            self._check_fused(spec, fused, self.feature_level)
        return Operator(self, spec, opdef, schema)

    @staticmethod
    def _check_fused(spec, fused, level) -> None:
        """A fused activation's own rules (SOFTPLUS's Steepness >= 1, ...), reported under
        the operator that fuses it."""
        fdef = registry.get(fused.name)
        if fdef is None:
            fail(E_NOTIMPL, f"{spec.name}: FusedActivation {fused.name} is not implemented "
                            "in dmlsim")
        for rule in fdef.rules:
            try:
                if getattr(rule, "needs_feature_level", False):
                    rule(fused, level)
                else:
                    rule(fused)
            except HResultError as e:
                fail(e.hresult, f"{spec.name}: FusedActivation: {e.message}")


class Operator:
    def __init__(self, device, spec: OpSpec, opdef, schema):
        self.device, self.spec, self.opdef, self.schema = device, spec, opdef, schema
        self.name = ""


@dataclass(frozen=True)
class BufferBinding:
    buffer: Buffer
    offset: int
    size: int

    def overlaps(self, other: "BufferBinding") -> bool:
        return self.buffer is other.buffer and self.offset < other.offset + other.size and \
            other.offset < self.offset + self.size

    def describe(self) -> str:
        return f"{self.buffer.label()} bytes [{self.offset}, {self.offset + self.size})"


class Dispatchable:
    kind = "dispatchable"
    temporary_size = 0

    def __init__(self, device: DmlDevice):
        self.device = device
        self.name = ""

    def binding_properties(self):
        return (self.descriptor_count, self.temporary_size, self.persistent_size)


class CompiledOperator(Dispatchable):
    kind = "compiled operator"

    def __init__(self, op: Operator, flags: int):
        super().__init__(op.device)
        self.op, self.spec, self.opdef, self.flags = op, op.spec, op.opdef, flags
        self.in_slots = self.spec.slots("input")
        self.out_slots = self.spec.slots("output")
        self.persistent_offsets = {}
        off = 0
        for i, (_, _, t) in enumerate(self.in_slots):
            if t is not None and t.owned_by_dml:
                self.persistent_offsets[i] = off
                off += _align(t.total_bytes)
        self.persistent_size = off
        self.descriptor_count = len(self.in_slots) + len(self.out_slots) + 2
        self.initialized = False
        self.programs: dict = {}
        self.last_binding = None  # (descriptors, memories, program, written) of the last run
        self.ctx = registry.KernelContext(flags)

    @property
    def volatile(self) -> bool:
        return bool(self.flags & EXEC_VOLATILE)

    def kernel_call(self, inputs):
        """Run the kernel on flattened typed inputs; returns flattened outputs."""
        grouped: dict = {}
        for (name, idx, _), value in zip(self.in_slots, inputs):
            if idx is None:
                grouped[name] = value
            else:
                grouped.setdefault(name, []).append(value)
        result = self.opdef.kernel(grouped, self.spec, self.ctx)
        flat = []
        for name, idx, _ in self.out_slots:
            value = result.get(name)
            flat.append(value if idx is None or value is None else value[idx])
        return flat


class OperatorInitializer(Dispatchable):
    kind = "operator initializer"

    def __init__(self, device: DmlDevice, operators):
        super().__init__(device)
        self.reset(operators)

    def reset(self, operators) -> None:
        self.operators = tuple(operators)
        self.descriptor_count = max(1, sum(len(o.in_slots) for o in self.operators) +
                                    len(self.operators) + 1)
        self.persistent_size = 0


class BindingTable:
    """Bindings written into a descriptor heap range; remembers what was bound per slot."""

    def __init__(self, device: DmlDevice, dispatchable, heap, cpu_index, gpu_index, size):
        self.device = device
        self.name = ""
        self.reset(dispatchable, heap, cpu_index, gpu_index, size)

    def reset(self, dispatchable, heap, cpu_index, gpu_index, size) -> None:
        self.dispatchable, self.heap = dispatchable, heap
        self.cpu_index, self.gpu_index, self.size = cpu_index, gpu_index, size
        d = dispatchable
        if isinstance(d, CompiledOperator):
            n_in, n_out = len(d.in_slots), len(d.out_slots)
        else:
            n_in = sum(len(o.in_slots) for o in d.operators)
            n_out = len(d.operators)
        self.inputs = [None] * (n_in if isinstance(d, CompiledOperator) else len(d.operators))
        self.outputs = [None] * n_out
        self.temporary = None
        self.persistent = None
        self._write_all()

    # descriptor layout --------------------------------------------------------------------
    def _flat_inputs(self):
        if isinstance(self.dispatchable, CompiledOperator):
            return list(self.inputs)
        flat = []
        for op, arr in zip(self.dispatchable.operators, self.inputs):
            flat.extend(arr if arr is not None else [None] * len(op.in_slots))
        return flat

    def _write_all(self) -> None:
        flat = self._flat_inputs() + list(self.outputs) + [self.temporary, self.persistent]
        from .runtime import Descriptor
        for i, b in enumerate(flat[:self.size]):
            self.heap.slots[self.cpu_index + i] = None if b is None else \
                Descriptor(b.buffer, b.offset, b.size)

    def commit(self, **changes) -> None:
        for key, value in changes.items():
            setattr(self, key, value)
        self._write_all()


@dataclass(frozen=True)
class DmlDispatch:
    """The record RecordDispatch appends: descriptors are read from ``heap`` at execution."""

    dispatchable: Dispatchable
    heap: object
    gpu_index: int
    count: int
    recorded: tuple  # the descriptors at record time (for the debug layer)


def _descriptors(cmd: DmlDispatch):
    return cmd.heap.slots[cmd.gpu_index:cmd.gpu_index + cmd.count]


@handler(DmlDispatch)
def _dispatch(cmd: DmlDispatch, ctx):
    d = cmd.dispatchable
    if d.device.removed_reason:
        raise ExecutionFault(f"the DirectML device was removed: {d.device.removed_message}")
    descs = _descriptors(cmd)
    if isinstance(d, CompiledOperator):
        _execute_operator(d, descs, ctx)
    else:
        _execute_initializer(d, descs, ctx)


def _check_descriptor(d, label, desc, spec, where):
    if desc.size < spec.total_bytes:
        raise ExecutionFault(f"IDMLCommandRecorder::RecordDispatch: {where}: {label} is bound to "
                             f"{desc.size} bytes but the tensor needs {spec.total_bytes}")


def operator_views(d: CompiledOperator, descs, slot):
    """(input views, output views) of one execution of ``d`` with the descriptors ``descs``
    read from the heap; ``slot(descriptor, extra byte offset, spec)`` makes a view. Raises
    ExecutionFault for what DirectML finds wrong when the work executes."""
    name = d.spec.name
    n_in, n_out = len(d.in_slots), len(d.out_slots)
    persistent = descs[n_in + n_out + 1] if len(descs) > n_in + n_out + 1 else None
    views_in, views_out = [], []
    for i, (field, idx, t) in enumerate(d.in_slots):
        label = field if idx is None else f"{field}[{idx}]"
        if t is None:
            views_in.append(None)
            continue
        if t.owned_by_dml:
            if persistent is None:
                raise ExecutionFault(f"{name}: {label} is OWNED_BY_DML but no persistent resource "
                                     "is bound")
            views_in.append(slot(persistent, d.persistent_offsets[i], t))
            continue
        desc = descs[i]
        if desc is None:
            raise ExecutionFault(f"{name}: input {i} ({label}) is not bound")
        _check_descriptor(d, label, desc, t, name)
        views_in.append(slot(desc, 0, t))
    for i, (field, idx, t) in enumerate(d.out_slots):
        desc = descs[n_in + i]
        label = field if idx is None else f"{field}[{idx}]"
        if t is None or desc is None:
            if t is not None and not _optional(d, field):
                raise ExecutionFault(f"{name}: output {i} ({label}) is not bound")
            views_out.append(None)
            continue
        _check_descriptor(d, label, desc, t, name)
        views_out.append(slot(desc, 0, t))
    return views_in, views_out


def operator_program(d: CompiledOperator, memories, views_in, views_out):
    """(jitted program, written memory indices) of ``d`` for one binding layout: one program
    per layout, shared by every compilation of the same desc and flags."""
    key = (tuple((m.array.dtype, m.array.shape[0]) for m in memories),
           tuple(None if v is None else v[:2] for v in views_in),
           tuple(None if v is None else v[:2] for v in views_out))
    prog = d.programs.get(key)
    if prog is None:
        from .views import build_program, jit_program
        run, written = build_program(d.kernel_call, views_in, views_out, len(memories))
        prog = d.programs[key] = (jit_program(run, written), written)
    return prog


def _execute_operator(d: CompiledOperator, descs, ctx) -> None:
    if not d.initialized:
        raise ExecutionFault(f"{d.spec.name}: the compiled operator was executed before an "
                             "operator initializer initialized it")
    last = d.last_binding  # descriptors usually repeat: skip re-deriving the layout
    if last is not None and last[0] == descs:
        _, memories, fn, written = last
    else:
        memories, index = [], {}

        def slot(desc, offset_extra, spec):
            mem = desc.buffer.memory
            j = index.get(id(mem))
            if j is None:
                j = index[id(mem)] = len(memories)
                memories.append(mem)
            return (j, desc.offset + offset_extra, spec)

        views_in, views_out = operator_views(d, descs, slot)
        fn, written = operator_program(d, memories, views_in, views_out)
        d.last_binding = (list(descs), memories, fn, written)
    results = fn(*[m.array for m in memories])
    touched = ctx.touched
    for j, arr in zip(written, results):
        memories[j].array = arr
        touched.add(memories[j])


def _optional(d, field) -> bool:
    return any(f["name"] == field and f.get("optional") for f in d.op.schema["fields"])


def _execute_initializer(init: OperatorInitializer, descs, ctx) -> None:
    pos = 0
    n_ops = len(init.operators)
    in_descs = []
    for op in init.operators:
        in_descs.append(descs[pos:pos + len(op.in_slots)])
        pos += len(op.in_slots)
    out_descs = descs[pos:pos + n_ops]
    for op, ins, out in zip(init.operators, in_descs, out_descs):
        if op.initialized:
            raise ExecutionFault(f"{op.spec.name}: the compiled operator was initialized twice; "
                                 "an operator is initialized exactly once")
        for i, off in op.persistent_offsets.items():
            t = op.in_slots[i][2]
            src = ins[i]
            if src is None or out is None:
                raise ExecutionFault(f"{op.spec.name}: OWNED_BY_DML input {i} needs both its "
                                     "initializer input binding and the persistent resource")
            dst_mem, src_mem = out.buffer.memory, src.buffer.memory
            if src_mem.host:
                dst_mem.write_host_bytes(out.offset + off,
                                         src_mem.flush()[src.offset:src.offset + t.total_bytes])
            else:
                dst_mem.copy_from(out.offset + off, src_mem, src.offset, t.total_bytes)
            ctx.touched.add(dst_mem)
        op.initialized = True

"""The DirectML side of the runtime: device, operators, dispatchables (compiled operators and
operator initializers), binding tables and the dispatch record.

A dispatchable describes its bindings once, as a :class:`~.layout.BindingLayout`, and says
what one execution does as typed steps (``build``, steps.py) from the descriptors a dispatch
reads at execution; those that can join a whole-list program (``compilable``) give a Dispatch
step over their views and kernel.

Binding-table policy (docs/binding.md): a compiled operator uses one descriptor per flattened
input slot, one per output slot, then one for the temporary and one for the persistent
resource; an initializer uses, per operator, one descriptor per input slot, then one
persistent output descriptor per operator, then one temporary descriptor. The temporary size
is the operator's ``temporary_bytes`` (0 by default); the persistent size its
``persistent_bytes`` (by default the OWNED_BY_DML inputs as stored, each rounded up to
DML_PERSISTENT_BUFFER_ALIGNMENT): the initializer stores those tensors there and execution
reads them from there.
"""
from __future__ import annotations

from dataclasses import dataclass

from .._schema.d3d12_enums import D3D12_COMMAND_LIST_TYPE
from .._schema.enums_generated import DML_CREATE_DEVICE_FLAGS
from .._schema.members import members
from . import binding, config, registry, validation
from .commands import Record
from .hresult import DXGI_ERROR_DEVICE_REMOVED, E_INVALIDARG, E_NOTIMPL, FAULT, HResultError, \
    Misuse, fail, hresult_name
from .layout import OPTIONAL, BindingLayout, align_up, initializer_layout, operator_layout
from .resources import Device, Range
from .memory import DeviceMemory
from .steps import View
from .tensor import OpSpec

def fault(message: str):
    """A Misuse found when work executes: the device is removed (DXGI_ERROR_DEVICE_REMOVED)."""
    return Misuse(DXGI_ERROR_DEVICE_REMOVED, message, FAULT)

_DISPATCH_LISTS = (D3D12_COMMAND_LIST_TYPE.D3D12_COMMAND_LIST_TYPE_DIRECT,
                   D3D12_COMMAND_LIST_TYPE.D3D12_COMMAND_LIST_TYPE_COMPUTE)
EXEC_HALF, EXEC_DISABLE_META, EXEC_VOLATILE = members(
    "DML_EXECUTION_FLAGS",
    "ALLOW_HALF_PRECISION_COMPUTATION DISABLE_META_COMMANDS DESCRIPTORS_VOLATILE")


class DmlDevice:
    def __init__(self, d3d: Device, flags: int, feature_level: int):
        self.d3d = d3d
        self.flags = flags
        self.feature_level = feature_level
        self.own_removed_reason = 0
        self.own_removed_message = ""
        self.name = ""

    @property
    def debug(self) -> bool:
        return bool(self.flags & DML_CREATE_DEVICE_FLAGS.DML_CREATE_DEVICE_FLAG_DEBUG)

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

    def misuse(self, method: str, message: str, hr: int = E_INVALIDARG,
               message_id: str = "DML_INVALID_BINDING", **objects) -> None:
        """Misuse in a void method: raise in strict mode, otherwise remove the device.
        ``objects`` (table=, cmd_list=, dispatchable=) name the objects for the debug layer;
        ``message_id`` is the debug catalogue entry the message belongs to."""
        text = f"{method}: {message}"
        obs = self.d3d.observers
        if obs:
            obs.dml_misuse(method=method, message=text, hresult=hr, device=self,
                           message_id=message_id, **objects)
        if config.settings.strict:
            fail(hr, text)
        if not self.own_removed_reason:
            self.own_removed_reason = hr
            self.own_removed_message = text
            if obs:
                obs.device_removed(reason=hr, message=text, device=self)

    # ---- operators -----------------------------------------------------------------------
    def create_operator(self, op_desc, schemas_by_value) -> "Operator":
        self.check_alive("IDMLDevice::CreateOperator")
        schema = schemas_by_value.get(getattr(op_desc, "Type", None))
        if schema is not None and registry.get(schema["name"]) is None:
            fail(E_NOTIMPL, f"{schema['name']}: not implemented in dmlsim (see `dmlsim ops` for "
                            "the implemented operators)")
        spec = validation.operator_desc(op_desc, schemas_by_value)
        opdef = registry.get(spec.name)
        level = self.feature_level
        validation.check_support(spec, schema, level, config.settings.x64,
                                 opdef.condition and (lambda c: opdef.condition(spec, c)))
        check = registry.Check(spec.name, level)
        for rule in opdef.rules:
            rule(spec, check)
        registry.check_output_sizes(opdef, spec, check)
        for label, fused in validation.fused_activations(spec, schemas_by_value, level):
            check_fused(spec, fused, level, label)
        return Operator(self, spec, opdef, schema)


def check_fused(spec, fused, level, label="FusedActivation") -> None:
    """A fused (or recurrent) activation's own rules (SOFTPLUS's Steepness >= 1, ...),
    reported under the operator that uses it and the field (``label``)."""
    fdef = registry.get(fused.name)
    if fdef is None:
        fail(E_NOTIMPL, f"{spec.name}: {label} {fused.name} is not implemented in dmlsim")
    check = registry.Check(fused.name, level)
    for rule in fdef.rules:
        try:
            rule(fused, check)
        except HResultError as e:
            fail(e.hresult, f"{spec.name}: {label}: {e.message}")


class Operator:
    def __init__(self, device, spec: OpSpec, opdef, schema):
        self.device, self.spec, self.opdef, self.schema = device, spec, opdef, schema
        self.name = ""


class Dispatchable:
    """What RecordDispatch accepts. Subclasses set ``layout`` and implement ``build``."""

    kind = "dispatchable"
    compilable = False  # its Dispatch step can join a whole-list program (views, kernel_call)
    seals = False       # its kernel seals its own nodes (a compiled graph): kernel_with_seal
    volatile = False    # compiled with DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE
    initializes: tuple = ()  # dispatchables an initializer initializes
    layout: BindingLayout

    def __init__(self, device: DmlDevice):
        self.device = device
        self.name = ""
        self.initialized = False

    def binding_properties(self):
        lay = self.layout
        return (lay.descriptor_count, lay.temporary_size, lay.persistent_size)

    def build(self, b, descs) -> bool:
        """Append one execution's steps to builder ``b``; see Record.build."""
        raise NotImplementedError

    def kernel_with_seal(self, seal, shared=False):
        """The traced function of one execution inside a whole-list program; ``seal`` is the
        program's runtime zero (a compiled graph seals its own nodes with it)."""
        return self.kernel_call

    def cpu_compiler_options(self) -> dict:
        """XLA options its operators ask of a CPU program (OperatorDef.cpu_compiler_options)."""
        return {}

    def cpu_stored_inputs(self) -> dict:
        """{input index: dimension order or None}: the inputs a CPU program stores once
        (OperatorDef.cpu_stored_inputs)."""
        return {}

    def cpu_input_orders(self) -> dict:
        """{input index: dimension order}: the inputs whose typed copy a CPU program makes in
        that order (``Plan.pins``: an OWNED_BY_DML filter in the layout XLA's convolutions
        read)."""
        return {i: order for i, order in self.cpu_stored_inputs().items() if order is not None}


class CompiledOperator(Dispatchable):
    kind = "compiled operator"
    compilable = True

    def __init__(self, op: Operator, flags: int):
        super().__init__(op.device)
        self.op, self.spec, self.opdef, self.flags = op, op.spec, op.opdef, flags
        self.in_slots = self.spec.slots("input")
        self.out_slots = self.spec.slots("output")
        stored, off = {}, 0
        for i, (fname, _, t) in enumerate(self.in_slots):
            if t is not None and t.owned_by_dml:
                st = self.opdef.stored(self.spec, fname, t)
                stored[i] = (off, st)
                off += align_up(st.total_bytes)
        persistent = off
        if self.opdef.persistent_bytes is not None:
            persistent = max(off, int(self.opdef.persistent_bytes(self.spec, off)))
        temporary = int(self.opdef.temporary_bytes(self.spec)) \
            if self.opdef.temporary_bytes is not None else 0
        self.layout = operator_layout(self.spec, op.schema, stored, persistent, temporary)
        self.ctx = registry.KernelContext.of(self.spec, flags, op.device.feature_level)

    @property
    def volatile(self) -> bool:
        return bool(self.flags & EXEC_VOLATILE)

    @property
    def signature(self):
        """What the program computes: the same for every compilation of one desc and flags
        (programs are shared through the device's plan cache)."""
        return (self.spec, self.flags)

    def cpu_compiler_options(self) -> dict:
        hook = self.opdef.cpu_compiler_options
        return dict(hook(self.spec) or {}) if hook is not None else {}

    def cpu_stored_inputs(self) -> dict:
        hook = self.opdef.cpu_stored_inputs
        fields = dict(hook(self.spec) or {}) if hook is not None else {}
        return {i: fields[name] for i, (name, _, _) in enumerate(self.in_slots)
                if name in fields}

    def kernel_call(self, inputs):
        """Run the kernel on flattened typed inputs; returns flattened outputs."""
        grouped: dict = {}
        for (name, idx, _), value in zip(self.in_slots, inputs):
            if idx is None:
                grouped[name] = value
            else:
                grouped.setdefault(name, []).append(value)
        result = dict(zip(self.opdef.outputs, self.opdef.run(grouped, self.spec, self.ctx)))
        flat = []
        for name, idx, _ in self.out_slots:
            value = result.get(name)
            flat.append(value if idx is None or value is None else value[idx])
        return flat

    def views(self, descs, view):
        """(input views, output views) of one execution with the descriptors ``descs`` read
        from the heap; ``view(descriptor, extra byte offset, spec)`` makes a View. Raises the
        fault (a Misuse) DirectML finds when the work executes."""
        name, lay = self.spec.name, self.layout
        ins, outs, _, persistent = lay.split(descs)
        views_in, views_out = [], []
        for s, desc in zip(lay.inputs, ins):
            if s.spec is None:
                views_in.append(None)
            elif s.owned:
                if persistent is None:
                    raise fault(f"{name}: {s.name} is OWNED_BY_DML but no persistent "
                                "resource is bound")
                views_in.append(view(persistent, s.persistent_at, s.stored))
            elif desc is None:
                raise fault(f"{name}: {s.label} is not bound")
            else:
                _check_size(name, s, desc)
                views_in.append(view(desc, 0, s.spec))
        for s, desc in zip(lay.outputs, outs):
            if s.spec is None or desc is None:
                if s.spec is not None and s.rule != OPTIONAL:
                    raise fault(f"{name}: {s.label} is not bound")
                views_out.append(None)
                continue
            _check_size(name, s, desc)
            views_out.append(view(desc, 0, s.spec))
        return views_in, views_out

    def build(self, b, descs) -> bool:
        if not self.initialized:
            raise fault(f"{self.spec.name}: the compiled operator was executed before an "
                        "operator initializer initialized it")
        return dispatch_steps(self, b, descs)


def dispatch_steps(d, b, descs) -> bool:
    """The Dispatch step of compilable ``d`` with the descriptors ``descs``."""
    for x in descs:
        if x is not None and x.buffer.memory.host:
            raise fault(f"{d.layout.name}: a descriptor it reads names {x.describe()}, on an "
                        "UPLOAD or READBACK heap; DirectML binds DEFAULT-heap buffers")

    owned = []  # the views read from the persistent resource (OWNED_BY_DML inputs)
    persistent = d.layout.split(descs)[3] if d.layout.persistent_size else None

    def view(desc, extra, spec):
        v = View(b.mem(desc.buffer.memory), desc.offset + extra, spec)
        if desc is persistent and persistent is not None:
            owned.append(v)
        return v
    views_in, views_out = d.views(descs, view)
    b.dispatch(d, views_in, views_out,
               tuple(v is not None and v in owned for v in views_in) if owned else ())
    return True


def _check_size(name, s, desc):
    if desc.size < s.spec.total_bytes:
        raise fault(f"IDMLCommandRecorder::RecordDispatch: {name}: {s.name} is bound to "
                    f"{desc.size} bytes but the tensor needs {s.spec.total_bytes}")


class OperatorInitializer(Dispatchable):
    kind = "operator initializer"

    def __init__(self, device: DmlDevice, operators):
        super().__init__(device)
        self.reset(operators)

    def reset(self, operators) -> None:
        self.operators = self.initializes = tuple(operators)
        self.layout = initializer_layout([o.layout for o in self.operators])

    def build(self, b, descs) -> bool:
        """Store every OWNED_BY_DML input in its operator's persistent resource, then mark the
        operators initialized. Never part of a whole-list program; built at every execution
        (initializing twice faults). Weights bound in one buffer at the distances their
        persistent places keep are one copy (the persistent resource's padding between them
        takes the bytes between them: what a persistent resource holds there is undefined): an
        application that packs its weights in order costs one copy, not one per weight."""
        if b.whole:
            return False
        b.cacheable = False
        lay = self.layout
        ins, outs, _, _ = lay.split(descs)
        for op, g, out in zip(self.operators, lay.groups, outs):
            if op.initialized:
                raise fault(f"{op.layout.name}: the compiled operator was initialized twice; "
                            "an operator is initialized exactly once")
            runs: list = []  # byte copies: [src memory, src offset, dst offset, size]
            for j in range(g.start, g.stop):
                s, src = lay.inputs[j], ins[j]
                if not s.owned:
                    continue
                if src is None or out is None:
                    raise fault(f"{op.layout.name}: OWNED_BY_DML input {j - g.start} needs "
                                "both its initializer input binding and the persistent resource")
                dst = out.offset + s.persistent_at
                if s.stored != s.spec:  # stored in another layout: its values, converted
                    _store(b, src, s, out.buffer.memory, dst)
                    runs.append(None)  # no copy spans what this wrote
                    continue
                mem, n, last = src.buffer.memory, s.spec.total_bytes, runs[-1] if runs else None
                if last is not None and last[0] is mem and dst >= last[2] + last[3] and \
                        src.offset - last[1] == dst - last[2]:
                    last[3] = dst + n - last[2]  # the next weight at the same distance: one copy
                else:
                    runs.append([mem, src.offset, dst, n])
            for mem, src_offset, dst, n in filter(None, runs):
                b.copy(out.buffer.memory, dst, mem, src_offset, n)
        b.after.append(lambda: [setattr(op, "initialized", True) for op in self.operators])
        return True


def _store(b, src: Range, s, dst_mem, dst_offset: int) -> None:
    """Steps storing an OWNED_BY_DML tensor in the persistent resource as its layout stores
    it: the bytes themselves, or the values in the stored layout."""
    src_mem, offset, n = src.buffer.memory, src.offset, s.spec.total_bytes
    if s.stored == s.spec:  # kept as bound: the bytes themselves
        b.copy(dst_mem, dst_offset, src_mem, offset, n)
        return
    if src_mem.host:  # the values go through a device copy of the bytes
        tmp = DeviceMemory(n, dst_mem.device)
        b.copy(tmp, 0, src_mem, offset, n)
        src_mem, offset = tmp, 0
    b.store(View(b.mem(src_mem), offset, s.spec), View(b.mem(dst_mem), dst_offset, s.stored))


class BindingTable:
    """Bindings written into a descriptor heap range; remembers what was bound per slot."""

    def __init__(self, device: DmlDevice, dispatchable, heap, cpu_index, gpu_index, size):
        self.device = device
        self.name = ""
        self.reset(dispatchable, heap, cpu_index, gpu_index, size)

    def reset(self, dispatchable, heap, cpu_index, gpu_index, size) -> None:
        self.dispatchable, self.heap = dispatchable, heap
        self.layout = dispatchable.layout
        self.cpu_index, self.gpu_index, self.size = cpu_index, gpu_index, size
        self.inputs = [None] * len(self.layout.inputs)
        self.outputs = [None] * len(self.layout.outputs)
        self.temporary = None
        self.persistent = None
        self._write_all()

    def _write_all(self) -> None:
        flat = list(self.inputs) + list(self.outputs) + [self.temporary]
        if self.layout.has_persistent:
            flat.append(self.persistent)
        for i, b in enumerate(flat[:self.size]):
            self.heap.slots[self.cpu_index + i] = b
        self.heap.version += 1

    def commit(self, **changes) -> None:
        for key, value in changes.items():
            setattr(self, key, value)
        self._write_all()


@dataclass(frozen=True)
class DmlDispatch(Record):
    """The record RecordDispatch appends: descriptors are read from ``heap`` at execution."""

    dispatchable: Dispatchable
    heap: object
    gpu_index: int
    count: int
    recorded: tuple  # the descriptors at record time (for the debug layer)
    reads_descriptors = True

    def descriptors(self):
        return self.heap.slots[self.gpu_index:self.gpu_index + self.count]

    def note(self, st, i) -> None:
        st.dispatch(i, self)

    def build(self, b, descs) -> bool:
        d = self.dispatchable
        if d.device.removed_reason:
            raise fault(f"the DirectML device was removed: {d.device.removed_message}")
        hazard = volatile_hazard(d, descs)
        if hazard:
            raise fault(f"binding hazard: {hazard} (DESCRIPTORS_VOLATILE: checked at "
                        "execution, when the descriptors are read)")
        return d.build(b, descs)


def record_dispatch(device: DmlDevice, cl, d, table) -> DmlDispatch:
    """IDMLCommandRecorder::RecordDispatch: check the call, append the record to command list
    ``cl`` (core objects of ``device``; None where the caller passed none) and return it."""
    bad = "DML_INVALID_RECORD_DISPATCH"
    if cl is None or d is None or table is None:
        raise binding.misuse("commandList, dispatchable and bindings are required", bad)
    if not cl.open:
        raise binding.misuse("the command list is closed; it must be open", bad)
    if cl.type not in _DISPATCH_LISTS:
        raise binding.misuse(f"the command list has type {cl.type}; it must be "
                             "D3D12_COMMAND_LIST_TYPE_DIRECT or D3D12_COMMAND_LIST_TYPE_COMPUTE",
                             bad)
    if d.device is not device or table.device is not device:
        raise binding.misuse("the dispatchable and binding table must come from this DirectML "
                             "device", bad)
    if table.dispatchable is not d:
        raise binding.misuse("the binding table was created (or Reset) for a different "
                             "dispatchable", bad)
    heap = table.heap
    if heap not in cl.heaps:
        raise binding.misuse("the descriptor heap holding the binding table is not set on the "
                             "command list; call ID3D12GraphicsCommandList::SetDescriptorHeaps "
                             "first", "DML_DESCRIPTOR_HEAP_NOT_SET")
    lay = table.layout
    if not d.volatile:
        missing = binding.missing(lay, table)
        if missing:
            raise binding.misuse("required bindings are not set: " + ", ".join(missing) +
                                 " (bind them before recording, or compile with "
                                 "DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE)", "DML_MISSING_BINDING")
        hazard = binding.hazards(lay, table.inputs, table.outputs, table.temporary,
                                 table.persistent)
        if hazard:
            raise binding.misuse(f"binding hazard: {hazard}", "DML_ILLEGAL_ALIASING")
    count = lay.descriptor_count
    rec = DmlDispatch(d, heap, table.gpu_index, count,
                      tuple(heap.slots[table.gpu_index:table.gpu_index + count]))
    cl.append(rec)
    if device.d3d.observers:
        device.d3d.observers.record_dispatch(cmd_list=cl, record=rec, table=table)
    return rec


def volatile_hazard(d, descs):
    """For a DESCRIPTORS_VOLATILE dispatchable, whose bindings RecordDispatch could not check:
    the binding hazard of the descriptors read at execution (binding.hazards' text), or None."""
    if not d.volatile:
        return None
    return binding.hazards(d.layout, *d.layout.split(descs))

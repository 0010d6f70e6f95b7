"""``dmlsim.run``: one call from NumPy arrays to NumPy results, through the faithful API.

It does what a DirectML program does (CreateOperator, CompileOperator, an initializer,
a binding table, upload, RecordDispatch, ExecuteCommandLists, a fence wait, readback), so
whatever it returns is what the full object model computes. It uses public names only.
"""
from __future__ import annotations

import difflib
import functools
import math

from typing import Any

import numpy as np

from .._api import public as dml
from .._core import config, dtypes
from .._schema.operators_generated import DESC_STRUCTS, OPERATORS

_STATE: dict = {}  # dmlsim.run's own default device (created on first use)
_RUN_STATE = "_dmlsim_run_state"  # the attribute of an IDMLDevice holding its execute state


def tensor_desc(array_or_dtype, sizes=None, strides=None, flags=0, total_bytes=None):
    """A DML_TENSOR_DESC for a NumPy array (or dtype + sizes); packed unless ``strides``."""
    dt = dtypes.dml_type_of(array_or_dtype)
    if sizes is None:
        sizes = list(np.shape(array_or_dtype)) or [1]
    sizes = [int(s) for s in sizes]
    b = dml.DML_BUFFER_TENSOR_DESC(dt, flags, len(sizes), sizes,
                                   None if strides is None else [int(s) for s in strides])
    b.TotalTensorSizeInBytes = total_bytes if total_bytes is not None else \
        dml.DMLCalcBufferTensorSize(dt, len(sizes), sizes, b.Strides)
    return dml.DML_TENSOR_DESC(dml.DML_TENSOR_TYPE_BUFFER, b)


def operator_desc(op_name: str, **fields) -> Any:
    """DML_OPERATOR_DESC for ``op_name`` ("ELEMENT_WISE_ADD" or the full C name). Tensor
    fields may be NumPy arrays; ScaleBias may be (scale, bias); a DML_SIZE_2D (Width, Height)
    or {"Width": .., "Height": ..}; scalar unions NumPy scalars; FusedActivation and
    ActivationDescs entries "RELU" or {"Type": "LEAKY_RELU", "Alpha": 0.1}.
    Required output tensors left out are inferred from the operator's shape rule
    (``dmlsim.infer_outputs``) when every required input is given and the rule can; call
    ``dmlsim.infer_outputs`` directly to see why it cannot."""
    name = _operator_name(op_name)
    schema = OPERATORS[name]
    desc = DESC_STRUCTS[name]()
    kinds = {f["name"]: f for f in schema["fields"]}
    for key, value in fields.items():
        f = kinds.get(key)
        if f is None:
            close = difflib.get_close_matches(key, list(kinds), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f" (fields: {', '.join(kinds)})"
            raise dml.HResultError(dml.E_INVALIDARG,
                                   f"operator_desc: {name} has no field {key!r}{hint}")
        st = f.get("schema_type")
        if st == "tensor_desc" and isinstance(value, np.ndarray):
            value = tensor_desc(value)
        elif st == "tensor_desc_array":
            value = [tensor_desc(v) if isinstance(v, np.ndarray) else v for v in value]
        elif st == "scale_bias" and isinstance(value, tuple):
            value = dml.DML_SCALE_BIAS(*value)
        elif st == "size_2d" and isinstance(value, (tuple, list)):
            value = dml.DML_SIZE_2D(*value)  # (Width, Height), C field order
        elif st == "size_2d" and isinstance(value, dict):
            value = dml.DML_SIZE_2D(**value)
        elif st == "scalar_union" and isinstance(value, np.generic):
            u = dml.DML_SCALAR_UNION()
            u.Bytes = value.tobytes()
            value = u
        elif st == "operator_desc" and isinstance(value, (str, dict)):
            value = _nested(value)
        elif st == "operator_desc_array":
            value = [_nested(v) if isinstance(v, (str, dict)) else v for v in value]
        setattr(desc, key, value)
    op = dml.DML_OPERATOR_DESC(schema["value"], desc)
    missing = [f for f in schema["outputs"] if getattr(desc, f) in (None, []) and
               not kinds[f].get("optional")]
    inputs_given = all(getattr(desc, f) is not None for f in schema["inputs"]
                       if not kinds[f].get("optional")) and schema["inputs"]
    if missing and inputs_given:
        try:
            inferred = dml.infer_outputs(op)
        except dml.HResultError:  # not inferable (SPLIT's sizes) or invalid: CreateOperator says
            inferred = {}
        for f in missing:
            if f in inferred:
                setattr(desc, f, inferred[f])
    return op


def _operator_name(op_name) -> str:
    """The DML_OPERATOR_* name for "ELEMENT_WISE_ADD", "element_wise_add" or the full C name;
    an unknown one is E_INVALIDARG with the closest names."""
    if not isinstance(op_name, str):
        raise dml.HResultError(dml.E_INVALIDARG, f"operator_desc: op_name is {op_name!r}; an "
                                                 "operator name such as 'ELEMENT_WISE_ADD'")
    name = op_name.strip().upper()
    name = name if name.startswith("DML_OPERATOR_") else "DML_OPERATOR_" + name
    if name not in OPERATORS:
        short = [n[len("DML_OPERATOR_"):] for n in OPERATORS]
        close = difflib.get_close_matches(name[len("DML_OPERATOR_"):], short, n=3, cutoff=0.7)
        hint = f"; did you mean {', '.join(close)}?" if close else " (dmlsim ops lists them)"
        raise dml.HResultError(dml.E_INVALIDARG,
                               f"operator_desc: no operator {op_name!r}{hint}")
    return name


def _nested(value):
    """A fused activation given as "RELU" / "ACTIVATION_LEAKY_RELU" or as a dict
    {"Type": "LEAKY_RELU", "Alpha": 0.1}: its DML_OPERATOR_DESC, tensors NULL."""
    fields = dict(value) if isinstance(value, dict) else {"Type": value}
    name = str(fields.pop("Type")).replace("DML_OPERATOR_", "")
    if "DML_OPERATOR_" + name not in OPERATORS:
        name = "ACTIVATION_" + name
    return operator_desc(name, **fields)


class _Tensor:
    """What ``run`` needs of one DML_BUFFER_TENSOR_DESC."""

    def __init__(self, desc):
        b = desc.Desc
        self.sizes = tuple(int(s) for s in b.Sizes)
        self.data_type = int(b.DataType)
        self.np_dtype = dtypes.numpy_dtype(self.data_type)
        self.itemsize = dtypes.itemsize(self.data_type)  # 0 for the packed 4-bit types
        self.total_bytes = int(b.TotalTensorSizeInBytes)
        self.strides = tuple(int(s) for s in b.Strides) if b.Strides is not None else \
            dtypes.packed_strides(self.sizes)
        self.owned_by_dml = bool(int(b.Flags or 0) & dml.DML_TENSOR_FLAG_OWNED_BY_DML)


_SCHEMA_BY_VALUE = {s["value"]: s for s in OPERATORS.values()}


def schema_of(op_desc) -> dict:
    """The spec schema of a DML_OPERATOR_DESC, by its Type."""
    return _SCHEMA_BY_VALUE[int(op_desc.Type)]


def slots(op_desc, kind: str) -> list:
    """(field, array index or None, _Tensor or None) per flattened binding slot of ``kind``
    ("inputs" or "outputs"), in the schema's order (an absent optional tensor keeps its
    slot, a tensor array stands for one slot per element)."""
    schema = schema_of(op_desc)
    arrays = {f["name"] for f in schema["fields"] if f.get("schema_type") == "tensor_desc_array"}
    out: list[tuple[str, int | None, _Tensor | None]] = []
    for name in schema[kind]:
        value = getattr(op_desc.Desc, name)
        if name in arrays:
            out.extend((name, i, _Tensor(v)) for i, v in enumerate(value or []))
        else:
            out.append((name, None, None if value is None else _Tensor(value)))
    return out


def _device():
    key = config.settings.feature_level
    st = _STATE.get(key)
    if st is None or st["dml"].GetDeviceRemovedReason() != dml.S_OK:
        d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
        st = _STATE[key] = {
            "d3d": d3d, "dml": dml.DMLCreateDevice(d3d, dml.DML_CREATE_DEVICE_FLAG_NONE),
            "queue": d3d.CreateCommandQueue(dml.D3D12_COMMAND_QUEUE_DESC(
                dml.D3D12_COMMAND_LIST_TYPE_DIRECT)),
            "fence": d3d.CreateFence(0, 0), "value": 0}
    return st


def _buffer(d3d, size, heap):
    flags = dml.D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS if heap == 1 else 0
    state = {1: dml.D3D12_RESOURCE_STATE_UNORDERED_ACCESS, 2: dml.D3D12_RESOURCE_STATE_GENERIC_READ,
             3: dml.D3D12_RESOURCE_STATE_COPY_DEST}[heap]
    return d3d.CreateCommittedResource(dml.CD3DX12_HEAP_PROPERTIES(heap), 0,
                                       dml.CD3DX12_RESOURCE_DESC.Buffer(max(4, size), flags),
                                       state, None)


def _submit(st, cl, alloc=None):
    """Close (if open) and execute ``cl`` on ``st``'s queue, then wait for it."""
    if alloc is not None:
        cl.Close()
    st["queue"].ExecuteCommandLists([cl])
    st["value"] += 1
    st["queue"].Signal(st["fence"], st["value"])
    st["fence"].SetEventOnCompletion(st["value"], None)
    removed = st["dml"].GetDeviceRemovedReason()
    if removed:
        raise dml.HResultError(removed, st["dml"].GetDeviceRemovedMessage())


def _physical_index(t):
    """Element index in the buffer of every logical element of tensor ``t``; None when ``t``
    is packed (its elements are the buffer's first ones, in order)."""
    return _index(tuple(int(s) for s in t.sizes), tuple(int(s) for s in t.strides))


@functools.lru_cache(maxsize=64)
def _index(sizes, strides):
    if strides == tuple(dtypes.packed_strides(sizes)):
        return None
    index = sum(np.indices(sizes)[d] * strides[d] for d in range(len(sizes)))
    index.setflags(write=False)
    return index


def _strided(flat, sizes, strides):
    """The elements of a tensor of ``sizes`` and ``strides`` in ``flat`` (its type's array over
    the buffer) as a strided view, when the strides reach no element twice and stay inside
    ``flat``; else None. A transposed weight is then written at memory speed: the index array
    of :func:`_physical_index` (a scatter, and index arrays twice the weight's size) is for
    overlapping strides only (``store`` writes a broadcast tensor's core through this view). A
    packed tensor is the buffer's first elements."""
    sizes, strides = tuple(int(s) for s in sizes), tuple(int(s) for s in strides)
    if strides == tuple(dtypes.packed_strides(sizes)):
        return flat[:math.prod(sizes)].reshape(sizes)
    reach = 1  # elements spanned by the dimensions of smaller strides
    for stride, size in sorted((st, sz) for sz, st in zip(sizes, strides) if sz != 1):
        if stride < reach:
            return None
        reach += stride * (size - 1)
    if reach > flat.shape[0]:
        return None
    return np.lib.stride_tricks.as_strided(flat, sizes, [s * flat.itemsize for s in strides])


def store(raw, t, values, slot="an input") -> None:
    """Write ``values`` (broadcast to ``t.sizes``) into the host bytes ``raw`` (a uint8
    array: a Map or a staging copy) at tensor ``t``'s element positions, in place. An array
    that does not fit is E_INVALIDARG naming ``slot`` and the sizes it needed."""
    try:
        v = np.broadcast_to(np.asarray(values, dtype=t.np_dtype), t.sizes)
    except (ValueError, TypeError):
        shape = getattr(values, "shape", None)
        got = f"an array of shape {tuple(shape)}" if shape is not None else repr(values)[:60]
        raise dml.HResultError(dml.E_INVALIDARG, f"{slot}: {got} does not fit the tensor's "
                               f"sizes {list(t.sizes)} (give that shape, or one that "
                               "broadcasts to it)") from None
    if dtypes.is_packed4(t.data_type):
        dtypes.host_write(raw, dtypes.nibble_indices(0, t.sizes, t.strides), v)
        return
    flat = raw[:raw.shape[0] // t.itemsize * t.itemsize].view(t.np_dtype)
    sizes = t.sizes
    if 0 in t.strides:  # a broadcast dimension's elements share one position: the last one's
        spread = [int(n) > 1 and int(st) == 0 for n, st in zip(t.sizes, t.strides)]
        v = v[tuple(slice(-1, None) if b else slice(None) for b in spread)]
        sizes = tuple(1 if b else n for b, n in zip(spread, t.sizes))
    view = _strided(flat, sizes, t.strides)
    if view is not None:
        view[...] = v
    else:
        flat[_physical_index(t)] = v


def slot_label(k, field, idx) -> str:
    """How an error names input slot ``k``: "input 0 (ATensor)", "input 2 (InputTensors[1])"."""
    name = field if idx is None else f"{field}[{idx}]"
    return f"input {k} ({name})" if name and not str(name).startswith("input") else f"input {k}"


def load(raw, t) -> np.ndarray:
    """The values of tensor ``t`` in the host bytes ``raw`` (a copy, shape ``t.sizes``)."""
    if dtypes.is_packed4(t.data_type):
        return dtypes.host_read(raw, dtypes.nibble_indices(0, t.sizes, t.strides),
                                 t.data_type)
    flat = raw[:raw.shape[0] // t.itemsize * t.itemsize].view(t.np_dtype)
    view = _strided(flat, t.sizes, t.strides)
    return (view if view is not None else flat[_physical_index(t)]).copy()


def run(op_desc, *arrays, flags: int = 0) -> np.ndarray | list[np.ndarray]:
    """Execute ``op_desc`` (a DML_OPERATOR_DESC) on ``arrays`` (one per flattened input slot,
    None for absent optional tensors) and return the outputs as NumPy arrays (a list, or
    the single array when the operator has one output: a type checker sees both, so narrow
    with ``isinstance`` or unpack a list)."""
    st = _device()
    op = st["dml"].CreateOperator(op_desc)
    compiled = st["dml"].CompileOperator(op, flags)
    ins, outs = slots(op_desc, "inputs"), slots(op_desc, "outputs")
    if len(arrays) != len(ins):
        names = ", ".join(f if i is None else f"{f}[{i}]" for f, i, _ in ins)
        raise dml.HResultError(dml.E_INVALIDARG, f"run: arrays: the operator takes {len(ins)} "
                               f"input arrays ({names}), got {len(arrays)}")
    results = execute(st, compiled, ins, outs, arrays)
    return results[0] if len(results) == 1 else results


def device_state(dml_device):
    """The queue, fence and D3D12 device ``execute`` uses with an IDMLDevice of the caller's
    (one set per device, held by the device itself: dropping the device drops them)."""
    st = getattr(dml_device, _RUN_STATE, None)
    if st is None:
        d3d = dml_device.GetParentDevice()
        st = {
            "d3d": d3d, "dml": dml_device,
            "queue": d3d.CreateCommandQueue(dml.D3D12_COMMAND_QUEUE_DESC(
                dml.D3D12_COMMAND_LIST_TYPE_DIRECT)),
            "fence": d3d.CreateFence(0, 0), "value": 0}
        setattr(dml_device, _RUN_STATE, st)
    return st


def run_compiled(compiled, input_descs, output_descs, arrays, device=None) -> list:
    """Initialize and execute ``compiled`` (an IDMLCompiledOperator from CompileOperator or
    CompileGraph) on NumPy ``arrays``, one per entry of ``input_descs`` (the DML_TENSOR_DESC
    of each input binding: graph inputs in GraphInputIndex order, None where nothing is
    bound); OWNED_BY_DML ones are bound at initialization. Returns one NumPy array per entry
    of ``output_descs``. ``device``: the IDMLDevice that compiled it (default: dmlsim.run's)."""
    st = _device() if device is None else device_state(device)
    ins = [(f"input {i}", None, None if d is None else _Tensor(d))
           for i, d in enumerate(input_descs)]
    outs = [(f"output {i}", None, None if d is None else _Tensor(d))
            for i, d in enumerate(output_descs)]
    if len(arrays) != len(ins):
        raise dml.HResultError(dml.E_INVALIDARG, f"run_compiled: arrays: {len(ins)} input descs "
                               f"but {len(arrays)} arrays")
    return execute(st, compiled, ins, outs, arrays)


def _recording(st, dispatchable, count):
    """(descriptor heap, allocator, open command list with the heap set, binding table) for
    ``dispatchable`` with ``count`` descriptors: what every dmlsim.run path records with."""
    d3d, dev = st["d3d"], st["dml"]
    count = max(1, count)
    heap = d3d.CreateDescriptorHeap(dml.D3D12_DESCRIPTOR_HEAP_DESC(
        dml.D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV, count,
        dml.D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE))
    alloc = d3d.CreateCommandAllocator(dml.D3D12_COMMAND_LIST_TYPE_DIRECT)
    cl = d3d.CreateCommandList(0, dml.D3D12_COMMAND_LIST_TYPE_DIRECT, alloc, None)
    cl.SetDescriptorHeaps([heap])
    table = dev.CreateBindingTable(dml.DML_BINDING_TABLE_DESC(
        dispatchable, heap.GetCPUDescriptorHandleForHeapStart(),
        heap.GetGPUDescriptorHandleForHeapStart(), count))
    return heap, alloc, cl, table


def execute(st, compiled, ins, outs, arrays) -> list:
    """Initialize ``compiled`` (an IDMLCompiledOperator: an operator or a graph), upload
    ``arrays`` (one per input slot of ``ins``: (field, index, _Tensor or None)), execute and
    read back every output slot of ``outs``, through the faithful API on ``st``'s device."""
    d3d, dev = st["d3d"], st["dml"]
    persistent = execute_init(st, compiled, ins, arrays)
    props_e = compiled.GetBindingProperties()
    heap, alloc, cl, table = _recording(st, compiled, props_e.RequiredDescriptorCount)
    recorder = dev.CreateCommandRecorder()
    keep: list = []

    def upload(arr, t, slot):
        data = np.zeros(t.total_bytes, np.uint8)
        store(data, t, arr, slot)
        up = _buffer(d3d, t.total_bytes, 2)
        dst = _buffer(d3d, t.total_bytes, 1)
        up.Map(0, None)[:t.total_bytes] = data
        cl.CopyBufferRegion(dst, 0, up, 0, t.total_bytes)
        return dst, up

    if persistent is not None:
        table.BindPersistentResource(dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER,
                                                          dml.DML_BUFFER_BINDING(
                                                              persistent, 0,
                                                              props_e.PersistentResourceSize)))
    in_bindings = []
    for k, ((field, idx, t), a) in enumerate(zip(ins, arrays)):
        if t is None or t.owned_by_dml or a is None:
            in_bindings.append(dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_NONE, None))
            continue
        buf, up = upload(a, t, slot_label(k, field, idx))
        keep.append(up)
        in_bindings.append(dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER,
                                                dml.DML_BUFFER_BINDING(buf, 0, t.total_bytes)))
    out_bufs: list = []
    out_bindings: list = []
    for _, _, t in outs:
        if t is None:
            out_bufs.append(None)
            out_bindings.append(dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_NONE, None))
            continue
        buf = _buffer(d3d, t.total_bytes, 1)
        out_bufs.append(buf)
        out_bindings.append(dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER,
                                                 dml.DML_BUFFER_BINDING(buf, 0, t.total_bytes)))
    table.BindInputs(in_bindings)
    table.BindOutputs(out_bindings)
    recorder.RecordDispatch(cl, compiled, table)
    readbacks: list = []
    for buf, (_, _, t) in zip(out_bufs, outs):
        if buf is None:
            readbacks.append(None)
            continue
        rb = _buffer(d3d, t.total_bytes, 3)
        cl.CopyResource(rb, buf)
        readbacks.append(rb)
    _submit(st, cl, alloc)
    results: list = []
    for rb, (_, _, t) in zip(readbacks, outs):
        if rb is None:
            results.append(None)
            continue
        results.append(load(rb.Map(0, None), t))
        rb.Unmap(0, None)
    return results


class Prepared:
    """A compiled operator or graph made ready once (initialized with its OWNED_BY_DML arrays,
    buffers and one closed command list: uploads, the dispatch, readbacks), then executed per
    call: write the mapped UPLOAD buffers, ExecuteCommandLists the same list, wait on the fence,
    read the mapped READBACK buffers. Inputs and outputs must be packed tensors. What an
    application does per inference; what ``dmlsim.onnx`` sessions use."""

    def __init__(self, st, compiled, ins, outs, owned):
        self.st, self.compiled, self.ins, self.outs = st, compiled, ins, outs
        for _, _, t in list(ins) + list(outs):  # OWNED_BY_DML weights are written once
            if t is not None and not t.owned_by_dml and \
                    t.strides != dtypes.packed_strides(t.sizes):
                raise TypeError("Prepared: inputs and outputs must be packed tensors")
        d3d, dev = st["d3d"], st["dml"]
        init_arrays = [owned.get(i) if t is not None and t.owned_by_dml else None
                       for i, (_, _, t) in enumerate(ins)]
        self._persistent = execute_init(st, compiled, ins, init_arrays)
        props = compiled.GetBindingProperties()
        self._heap, self._alloc, cl, table = _recording(st, compiled,
                                                        props.RequiredDescriptorCount)
        self._cl = cl
        if self._persistent is not None:
            table.BindPersistentResource(dml.DML_BINDING_DESC(
                dml.DML_BINDING_TYPE_BUFFER, dml.DML_BUFFER_BINDING(
                    self._persistent, 0, props.PersistentResourceSize)))
        if props.TemporaryResourceSize:
            self._temp = _buffer(d3d, props.TemporaryResourceSize, 1)
            table.BindTemporaryResource(dml.DML_BINDING_DESC(
                dml.DML_BINDING_TYPE_BUFFER, dml.DML_BUFFER_BINDING(
                    self._temp, 0, props.TemporaryResourceSize)))
        self._uploads, bindings = [], []
        for _, _, t in ins:
            if t is None or t.owned_by_dml:
                self._uploads.append(None)
                bindings.append(dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_NONE, None))
                continue
            up, buf = _buffer(d3d, t.total_bytes, 2), _buffer(d3d, t.total_bytes, 1)
            cl.CopyBufferRegion(buf, 0, up, 0, max(4, t.total_bytes))
            self._uploads.append((up, buf, t))
            bindings.append(dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER,
                                                 dml.DML_BUFFER_BINDING(buf, 0, t.total_bytes)))
        table.BindInputs(bindings)
        self._readbacks, bindings = [], []
        for _, _, t in outs:
            buf = _buffer(d3d, t.total_bytes, 1)
            self._readbacks.append((buf, _buffer(d3d, t.total_bytes, 3), t))
            bindings.append(dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER,
                                                 dml.DML_BUFFER_BINDING(buf, 0, t.total_bytes)))
        table.BindOutputs(bindings)
        cl.ResourceBarrier([dml.CD3DX12_RESOURCE_BARRIER.UAV(None)])
        dev.CreateCommandRecorder().RecordDispatch(cl, compiled, table)
        cl.ResourceBarrier([dml.CD3DX12_RESOURCE_BARRIER.UAV(None)])
        for buf, rb, _ in self._readbacks:
            cl.CopyResource(rb, buf)
        cl.SetCompileOnFirstExecution(True)  # executed per call: compile its program once
        cl.Close()
        self._table = table

    def __call__(self, arrays) -> list:
        st = self.st
        for k, (entry, a) in enumerate(zip(self._uploads, arrays)):
            if entry is None:
                continue
            up, _, t = entry
            store(up.Map(0, None), t, a, slot_label(k, *self.ins[k][:2]))
            up.Unmap(0, None)
        _submit(st, self._cl)  # closed once, executed again each call
        out = []
        for _, rb, t in self._readbacks:
            out.append(load(rb.Map(0, None), t))
            rb.Unmap(0, None)
        return out


def execute_init(st, compiled, ins, arrays):
    """Initialize ``compiled`` with the OWNED_BY_DML ``arrays`` (per input slot, None for the
    rest); returns its persistent resource (or None). As an application loads its weights: all
    of them packed in one UPLOAD buffer (each at a DML_PERSISTENT_BUFFER_ALIGNMENT boundary),
    one copy into one DEFAULT buffer, and the initializer's BUFFER_ARRAY binding each at its
    offset (one copy program, not one per weight size)."""
    d3d, dev = st["d3d"], st["dml"]
    init = dev.CreateOperatorInitializer([compiled])
    props_i, props_e = init.GetBindingProperties(), compiled.GetBindingProperties()
    heap, alloc, cl, table = _recording(st, init, props_i.RequiredDescriptorCount)
    persistent = None
    if props_e.PersistentResourceSize:
        persistent = _buffer(d3d, props_e.PersistentResourceSize, 1)
        placed, total = [], 0
        for k, ((field, idx, t), a) in enumerate(zip(ins, arrays)):
            if t is None or not t.owned_by_dml or a is None:
                placed.append(None)
                continue
            placed.append(total)
            align = dml.DML_PERSISTENT_BUFFER_ALIGNMENT  # the persistent resource's spacing
            total += -(-t.total_bytes // align) * align
        items = [None] * len(placed)
        if total:
            up, buf = _buffer(d3d, total, 2), _buffer(d3d, total, 1)
            data = up.Map(0, None)  # written in place: the weights are copied once here
            for k, ((field, idx, t), a, at) in enumerate(zip(ins, arrays, placed)):
                if at is not None:
                    store(data[at:at + t.total_bytes], t, a, slot_label(k, field, idx))
                    items[k] = dml.DML_BUFFER_BINDING(buf, at, t.total_bytes)
            up.Unmap(0, None)
            cl.CopyBufferRegion(buf, 0, up, 0, total)
        cl.ResourceBarrier([dml.CD3DX12_RESOURCE_BARRIER.UAV(None)])
        table.BindInputs([dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER_ARRAY,
                                               dml.DML_BUFFER_ARRAY_BINDING(len(items), items))])
        size = props_e.PersistentResourceSize
        table.BindOutputs([dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER,
                                                dml.DML_BUFFER_BINDING(persistent, 0, size))])
    dev.CreateCommandRecorder().RecordDispatch(cl, init, table)
    _submit(st, cl, alloc)
    return persistent

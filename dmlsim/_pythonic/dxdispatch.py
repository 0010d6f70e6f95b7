"""Run DxDispatch-format JSON models (microsoft/DirectML's DxDispatch tool) on dmlsim.

The model is validated with ``jsonschema`` against ``dxdispatch_schema.json`` (the subset dmlsim
runs: buffer resources, DirectML operator dispatchables, ``dispatch`` and ``print`` commands),
then executed through the faithful API exactly as a DirectML program would: one DEFAULT buffer
per resource (filled through an UPLOAD buffer), CreateOperator/CompileOperator/initializer per
dispatchable, a binding table per dispatch, a readback for each ``print``.
"""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np

from .._api import public as dml
from .._core import dtypes
from .._schema.operators_generated import DESC_STRUCTS, OPERATORS
from .run import _buffer, _device, _submit, slots

_SCHEMA = Path(__file__).with_name("dxdispatch_schema.json")


def _dtype(name):
    short = name.replace("DML_TENSOR_DATA_TYPE_", "")
    return dtypes.numpy_dtype(dtypes.BY_SHORT_NAME[short]), dtypes.BY_SHORT_NAME[short]


def _values(spec):
    dt, _ = _dtype(spec["initialValuesDataType"])
    iv = spec["initialValues"]
    if isinstance(iv, list):
        data = np.array([float(v) if isinstance(v, str) else v for v in iv]).astype(dt)
    elif "value" in iv:
        data = np.full(iv["valueCount"], float(iv["value"])).astype(dt)
    else:
        data = (float(iv["valueStart"]) + float(iv["valueDelta"]) *
                np.arange(iv["valueCount"])).astype(dt)
    return data


def _enum_value(value, ctype):
    if isinstance(value, str):
        for candidate in (value, f"{ctype.replace('DML_', 'DML_', 1)}_{value}",
                          f"{ctype}_{value}", f"{ctype[:-1]}_{value}" if ctype.endswith("S") else ""):
            if candidate and hasattr(dml, candidate):
                return int(getattr(dml, candidate))
        if ctype.endswith("_FLAGS"):
            return int(getattr(dml, ctype[:-1] + "_" + value))
        raise ValueError(f"dispatch: {value!r} is not a {ctype} value")
    return value


def _tensor(desc):
    _, dt = _dtype(desc["DataType"])
    sizes = desc["Sizes"]
    strides = desc.get("Strides")
    flags = desc.get("Flags", 0)
    if isinstance(flags, str):
        flags = dml.DML_TENSOR_FLAG_OWNED_BY_DML if "OWNED_BY_DML" in flags else 0
    b = dml.DML_BUFFER_TENSOR_DESC(dt, flags, len(sizes), sizes, strides)
    b.TotalTensorSizeInBytes = desc.get("TotalTensorSizeInBytes") or \
        dml.DMLCalcBufferTensorSize(dt, len(sizes), sizes, strides)
    b.GuaranteedBaseOffsetAlignment = desc.get("GuaranteedBaseOffsetAlignment", 0)
    return dml.DML_TENSOR_DESC(dml.DML_TENSOR_TYPE_BUFFER, b)


def operator_desc_from_json(op_type: str, desc: dict):
    """DML_OPERATOR_DESC from DxDispatch's JSON desc (C field names; enums by name)."""
    name = op_type if op_type.startswith("DML_OPERATOR_") else "DML_OPERATOR_" + op_type
    if name not in OPERATORS:
        raise ValueError(f"dispatch: {op_type!r} is not a DML_OPERATOR_TYPE")
    schema = OPERATORS[name]
    out = DESC_STRUCTS[name]()
    for f in schema["fields"]:
        if f["name"] not in desc:
            continue
        v, st = desc[f["name"]], f.get("schema_type")
        if st == "tensor_desc":
            v = None if v is None else _tensor(v)
        elif st == "tensor_desc_array":
            v = [_tensor(t) for t in v]
        elif st == "scale_bias":
            v = None if v is None else dml.DML_SCALE_BIAS(v["Scale"], v["Bias"])
        elif st == "size_2d":
            v = dml.DML_SIZE_2D(v["Width"], v["Height"])
        elif st == "operator_desc":
            v = None if v is None else operator_desc_from_json(v["type"], v.get("desc", {}))
        elif st == "scalar_union":
            u = dml.DML_SCALAR_UNION()
            for member, value in v.items():
                setattr(u, member, value)
            v = u
        elif f["type"].startswith("DML_") and not f["type"].endswith("*"):
            v = _enum_value(v, f["type"])
        setattr(out, f["name"], v)
    return dml.DML_OPERATOR_DESC(schema["value"], out)


def load(path):
    model = json.loads(Path(path).read_text())
    jsonschema.validate(model, json.loads(_SCHEMA.read_text()))
    return model


def run_model(model, out=print) -> dict:
    """Execute a loaded model; returns {resource name: NumPy array} after all commands."""
    st = _device()
    d3d, dev = st["d3d"], st["dml"]
    alloc = d3d.CreateCommandAllocator(dml.D3D12_COMMAND_LIST_TYPE_DIRECT)
    cl = d3d.CreateCommandList(0, dml.D3D12_COMMAND_LIST_TYPE_DIRECT, alloc, None)

    def flush():
        _submit(st, cl, alloc)
        alloc.Reset()
        cl.Reset(alloc, None)

    resources, kinds = {}, {}
    for name, spec in model["resources"].items():
        data = _values(spec).view(np.uint8)
        off = spec.get("initialValuesOffsetInBytes", 0)
        size = max(spec.get("sizeInBytes", 0), off + data.shape[0])
        size = (size + 3) // 4 * 4
        buf = _buffer(d3d, size, 1)
        up = _buffer(d3d, size, 2)
        up.Map(0, None)[off:off + data.shape[0]] = data
        cl.CopyBufferRegion(buf, 0, up, 0, size)
        resources[name], kinds[name] = (buf, size, up), spec["initialValuesDataType"]
    compiled = {}
    for name, spec in model["dispatchables"].items():
        flags = 0
        for f in spec.get("executionFlags", []):
            flags |= _enum_value(f, "DML_EXECUTION_FLAGS")
        desc = operator_desc_from_json(spec["type"], spec["desc"])
        op = dev.CreateOperator(desc)
        compiled[name] = (dev.CompileOperator(op, flags), desc)
    for command in model["commands"]:
        if command["type"] == "dispatch":
            _dispatch(dev, d3d, cl, *compiled[command["dispatchable"]], command["bindings"],
                      resources, flush)
        else:
            buf, size, _ = resources[command["resource"]]
            rb = _buffer(d3d, size, 3)
            cl.CopyResource(rb, buf)
            flush()
            dt, _ = _dtype(kinds[command["resource"]])
            values = rb.Map(0, None)[:size // dt.itemsize * dt.itemsize].view(dt).copy()
            out(f"Resource '{command['resource']}': " + ", ".join(str(v) for v in values))
    flush()
    result = {}
    for name, (buf, size, _) in resources.items():
        rb = _buffer(d3d, size, 3)
        cl.CopyResource(rb, buf)
        flush()
        dt, _ = _dtype(kinds[name])
        result[name] = rb.Map(0, None)[:size // dt.itemsize * dt.itemsize].view(dt).copy()
    return result


def _binding(value, resources, t):
    if isinstance(value, str):
        value = {"name": value}
    buf, size, _ = resources[value["name"]]
    offset = value.get("elementOffset", 0) * (t.itemsize if t is not None else 4)
    return dml.DML_BUFFER_BINDING(buf, offset, size - offset)


def _dispatch(dev, d3d, cl, compiled, desc, bindings, resources, flush):
    init = dev.CreateOperatorInitializer([compiled])
    props = compiled.GetBindingProperties()
    count = max(props.RequiredDescriptorCount, init.GetBindingProperties().RequiredDescriptorCount)
    heap = d3d.CreateDescriptorHeap(dml.D3D12_DESCRIPTOR_HEAP_DESC(0, count, 1))
    cl.SetDescriptorHeaps([heap])
    tdesc = dml.DML_BINDING_TABLE_DESC(init, heap.GetCPUDescriptorHandleForHeapStart(),
                                       heap.GetGPUDescriptorHandleForHeapStart(), count)
    table = dev.CreateBindingTable(tdesc)
    rec = dev.CreateCommandRecorder()
    persistent = None
    ins = slots(desc, "inputs")

    def bound(field, idx, t):
        v = bindings.get(field)
        if isinstance(v, list):
            v = v[idx]
        return None if v is None or t is None else _binding(v, resources, t)

    if props.PersistentResourceSize:
        persistent = d3d.CreateCommittedResource(
            dml.CD3DX12_HEAP_PROPERTIES(1), 0, dml.CD3DX12_RESOURCE_DESC.Buffer(
                props.PersistentResourceSize, dml.D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS),
            dml.D3D12_RESOURCE_STATE_UNORDERED_ACCESS, None)
        arr = [bound(f, i, t) if t is not None and t.owned_by_dml else None for f, i, t in ins]
        table.BindInputs([dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER_ARRAY,
                                               dml.DML_BUFFER_ARRAY_BINDING(len(arr), arr))])
        table.BindOutputs([dml.DML_BINDING_DESC(1, dml.DML_BUFFER_BINDING(
            persistent, 0, props.PersistentResourceSize))])
    rec.RecordDispatch(cl, init, table)
    flush()
    cl.SetDescriptorHeaps([heap])
    tdesc.Dispatchable = compiled
    table.Reset(tdesc)
    if persistent is not None:
        table.BindPersistentResource(dml.DML_BINDING_DESC(1, dml.DML_BUFFER_BINDING(
            persistent, 0, props.PersistentResourceSize)))

    def descs(slots, skip_owned):
        out = []
        for f, i, t in slots:
            b = None if (skip_owned and t is not None and t.owned_by_dml) else bound(f, i, t)
            out.append(dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER, b) if b is not None
                       else dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_NONE, None))
        return out

    table.BindInputs(descs(ins, True))
    table.BindOutputs(descs(slots(desc, "outputs"), False))
    rec.RecordDispatch(cl, compiled, table)
    cl.ResourceBarrier([dml.CD3DX12_RESOURCE_BARRIER.UAV(None)])
    flush()

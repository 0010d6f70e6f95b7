"""Run DxDispatch JSON models (microsoft/DirectML's DxDispatch tool) on dmlsim.

``load`` reads a model as DxDispatch's parser does (``dxdispatch_parse``: comments, every
initializer form, nested descs, scalar unions as numbers, enum suffixes) and checks its
structure with ``jsonschema`` against ``dxdispatch_schema.json``. ``run_model`` then does what
DxDispatch's executor does, through the faithful API: one DEFAULT buffer per resource (filled
through an UPLOAD buffer), every dispatchable created, compiled (``CompileOperator``, or
``IDMLDevice1::CompileGraph`` of a one-node graph for ``"dmlCompileType": "DmlCompileGraph"``)
and initialized before the first command (OWNED_BY_DML tensors bound from the dispatchable's
own ``bindings``), then the commands in order: ``dispatch``, ``print`` (DxDispatch's
formatting: C++ stream defaults, ``%g`` for floats, the initial values' element count) and
``writeFile`` (.npy with ``dimensions``, other extensions raw bytes).

ONNX dispatchables (``"type": "onnx"``, and an ``.onnx`` file given in place of a JSON model,
as DxDispatch takes one) run through a ``dmlsim.onnx`` InferenceSession on the same DML device
(``dxdispatch_onnx``), with ``"deferred"`` resources taking their type, shape and values from
the output bound to them. ``dmlSerializedGraph`` dispatchables read DirectML's serialized graph
(``dml_graph_file``: named constants from ``NAME.bin`` beside it) and CompileGraph it; their
bind points are the graph's input and output names. HLSL dispatchables are refused at load
with the dispatchable's name and type. Where DxDispatch prints UINT8/INT8 values as characters
(``operator<<`` of a char type), dmlsim prints the numbers.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

import jsonschema
import numpy as np

from .._api import public as dml
from .._core import dtypes
from .._schema.operators_generated import OPERATORS
from .dml_graph_file import read_serialized_graph
from .dxdispatch_onnx import OnnxDispatchable, deferred_type
from .dxdispatch_parse import ModelError, dispatchable_desc, enum_value, initial_values, \
    load_text, operator_desc, refuse_image
from .run import _Tensor, _buffer, _device, _submit, slots

_SCHEMA = Path(__file__).with_name("dxdispatch_schema.json")


@functools.lru_cache(maxsize=1)  # one schema: one validator
def _validator():
    """The model schema's validator, built (and the schema checked) once per process."""
    schema = json.loads(_SCHEMA.read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


_NOT_DML = {"hlsl": "HLSL compute shaders"}


def load(path) -> dict:
    """Read and check a model file; relative file paths in it resolve against its folder. An
    ``.onnx`` file is DxDispatch's shorthand: one ONNX dispatchable, dispatched once with no
    bindings."""
    if str(path).lower().endswith(".onnx"):
        name = Path(path).stem
        return {"resources": {}, "commands": [{"type": "dispatch", "dispatchable": name,
                                                "bindings": {}}],
                "dispatchables": {name: {"type": "onnx", "sourcePath": Path(path).name}},
                "$base": str(Path(path).resolve().parent)}
    model = load_text(path)
    error = jsonschema.exceptions.best_match(_validator().iter_errors(model))
    if error is not None:  # what jsonschema.validate raises, without re-checking the schema
        raise error
    for name, spec in model["dispatchables"].items():
        kind = str(spec["type"])
        if kind.lower() in ("onnx", "dmlserializedgraph"):
            continue
        is_op = kind.startswith("DML_OPERATOR_") or f"DML_OPERATOR_{kind}" in OPERATORS or \
            "desc" in spec or "Desc" in spec
        if kind.lower() in _NOT_DML or not is_op:
            what = _NOT_DML.get(kind.lower(), "not a DirectML operator")
            raise ModelError(f"dispatchable '{name}': type '{kind}' is not supported by dmlsim "
                             f"({what}); dmlsim runs DirectML operator, ONNX and "
                             "dmlSerializedGraph dispatchables")
    for command in model["commands"]:
        if str(command.get("type", "")).lower() == "writefile":
            refuse_image(command.get("targetPath", ""), "writeFile targetPath")
        if str(command.get("type", "")).lower() == "dispatch":
            _check_bind_counts(model, command)
    model["$base"] = str(Path(path).resolve().parent)
    return model


def _check_bind_counts(model, command) -> None:
    """DxDispatch's check: a bind point gets as many resources as its tensor field has
    tensors (an array field: its count), before anything runs."""
    spec = model["dispatchables"].get(command.get("dispatchable"))
    if spec is None or str(spec["type"]).lower() in ("onnx", "dmlserializedgraph"):
        return
    desc = operator_desc(spec["type"], dispatchable_desc(spec))
    need: dict = {}
    for f, _, t in slots(desc, "inputs") + slots(desc, "outputs"):
        if t is not None:
            need[f] = need.get(f, 0) + 1
    for field, value in command.get("bindings", {}).items():
        if field in need:
            got = len(value) if isinstance(value, list) else 1
            if got != need[field]:
                raise ModelError(f"Bind point '{field}' requires {need[field]} resources, but "
                                 f"{got} were bound.")


class _Resource:
    def __init__(self, name, spec, base, d3d, cl):
        self.name = name
        self.is_deferred = spec["initialValues"] == "deferred"
        self.deferred = None  # the array an ONNX output resolved a deferred resource to
        if self.is_deferred:
            self.data, self.data_type, self.size, self.buffer = b"", 0, 0, None
            return
        if isinstance(spec["initialValues"], str):
            raise ModelError(f"resource '{name}': The 'initialValuesDataType' only supports "
                             "deferred")
        self.data, self.data_type = initial_values(spec, base)
        offset = int(spec.get("initialValuesOffsetInBytes", 0))
        size = int(spec["sizeInBytes"]) if "sizeInBytes" in spec else \
            (len(self.data) + 3) // 4 * 4
        if len(self.data) + offset > size:
            raise ModelError(f"resource '{name}': the buffer size ({size} bytes) is too small "
                             f"for the initialValues ({len(self.data)} bytes) at offset "
                             f"{offset} bytes.")
        self.size = size
        self.buffer = _buffer(d3d, size, 1)
        self.upload = _buffer(d3d, size, 2)
        self.upload.Map(0, None)[offset:offset + len(self.data)] = np.frombuffer(self.data,
                                                                                 np.uint8)
        cl.CopyBufferRegion(self.buffer, 0, self.upload, 0, size)

    @property
    def itemsize(self):
        return dtypes.numpy_dtype(self.data_type).itemsize if self.data_type else 1

    def resolve(self, value: np.ndarray) -> None:
        """A deferred resource becomes an ONNX output: its type, shape and values."""
        self.deferred = np.ascontiguousarray(value.astype(np.uint8) if value.dtype == np.bool_
                                             else value)
        self.data_type = deferred_type(value)
        self.data = self.deferred.tobytes()
        self.size = len(self.data)


class _Dispatchable:
    """A compiled operator (or one-node graph) and the bind points it takes."""

    def __init__(self, name, spec, dev):
        self.name = name
        self.desc = operator_desc(spec["type"], dispatchable_desc(spec))
        flags = enum_value(spec.get("executionFlags", []), "DML_EXECUTION_FLAGS")
        op = dev.CreateOperator(self.desc)
        self.ins, self.outs = slots(self.desc, "inputs"), slots(self.desc, "outputs")
        self.graph = spec.get("dmlCompileType", "DmlCompileOp") == "DmlCompileGraph"
        if self.graph:
            self.ins = [s for s in self.ins if s[2] is not None]
            self.outs = [s for s in self.outs if s[2] is not None]
            self.compiled = dev.CompileGraph(_one_node_graph(op, self.desc, len(self.ins),
                                                             len(self.outs)), flags)
        else:
            self.compiled = dev.CompileOperator(op, flags)
        self.init_bindings = spec.get("bindings", {})
        self.persistent = None


class _GraphDispatchable:
    """A ``dmlSerializedGraph`` dispatchable: the graph file read and compiled on the device
    (``dml_graph_file``). Its bind points are the graph's input and output names; its named
    constants become resources of their own (named as their nodes), bound at initialization."""

    def __init__(self, name, spec, base: Path, dev):
        self.name = name
        path = base / spec["sourcePath"]
        try:
            graph = read_serialized_graph(path, dev)
        except dml.HResultError as e:
            raise ModelError(f"dispatchable '{name}': {e.message}") from None
        flags = enum_value(spec.get("executionFlags", []), "DML_EXECUTION_FLAGS")
        self.compiled = graph.compile(flags)
        self.ins = [(n, None, None if d is None else _Tensor(d))
                    for n, d in zip(graph.input_names, graph.input_descs)]
        self.outs = [(n, None, None if d is None else _Tensor(d))
                     for n, d in zip(graph.output_names, graph.output_descs)]
        self.constants = {n: (index, data) for n, (index, data) in graph.constants.items()}
        self.init_bindings = {n: n for n in self.constants}
        self.persistent = None

    def constant_resources(self, d3d, cl) -> dict:
        """A resource per named constant, filled with its file's bytes."""
        out = {}
        for n, (index, data) in self.constants.items():
            t = self.ins[index][2]
            spec = {"initialValuesDataType": dtypes.SHORT_NAMES[t.data_type],
                    "initialValues": {"valueCount": max(1, len(data) // max(1, t.itemsize)),
                                      "value": 0}, "sizeInBytes": max(4, (len(data) + 3) // 4 * 4)}
            out[n] = _Resource(n, spec, Path("."), d3d, cl)
            out[n].upload.Map(0, None)[:len(data)] = np.frombuffer(data, np.uint8)
            out[n].data = data
        return out


def _one_node_graph(op, desc, n_in, n_out):
    """DxDispatch's CompileGraph form: edges only for the bind points that are present."""
    node = dml.DML_GRAPH_NODE_DESC(dml.DML_GRAPH_NODE_TYPE_OPERATOR,
                                   dml.DML_OPERATOR_GRAPH_NODE_DESC(op, "dispatchable"))
    ins, outs = [], []
    for kind, rows, target in (("inputs", ins, n_in), ("outputs", outs, n_out)):
        k = 0
        for slot, (_, _, t) in enumerate(slots(desc, kind)):
            if t is None:
                continue
            if kind == "inputs":
                rows.append(dml.DML_GRAPH_EDGE_DESC(dml.DML_GRAPH_EDGE_TYPE_INPUT,
                                                    dml.DML_INPUT_GRAPH_EDGE_DESC(k, 0, slot)))
            else:
                rows.append(dml.DML_GRAPH_EDGE_DESC(dml.DML_GRAPH_EDGE_TYPE_OUTPUT,
                                                    dml.DML_OUTPUT_GRAPH_EDGE_DESC(0, slot, k)))
            k += 1
    return dml.DML_GRAPH_DESC(n_in, n_out, 1, [node], len(ins), ins, len(outs), outs, 0, [])


def _source(value, resources, where):
    """DML_BUFFER_BINDING of one binding source: a name or {name, elementOffset, ...}."""
    if isinstance(value, str):
        value = {"name": value}
    res = resources.get(value["name"])
    if res is None:
        raise ModelError(f"{where}: no resource named '{value['name']}'")
    if res.is_deferred:
        raise ModelError(f"{where}: resource '{res.name}' is deferred; only ONNX dispatchables "
                         "bind deferred resources")
    size = int(value.get("elementSizeInBytes") or res.itemsize)
    offset = int(value.get("elementOffset", 0)) * size
    if offset >= res.size:
        raise ModelError(f"{where}: elementOffset {value.get('elementOffset')} x {size} bytes "
                         f"is past the end of '{res.name}' ({res.size} bytes)")
    return dml.DML_BUFFER_BINDING(res.buffer, offset, res.size - offset)


def _bound(bindings, field, idx, resources, where):
    v = bindings.get(field)
    if isinstance(v, list):
        v = v[idx or 0] if len(v) > (idx or 0) else None
    return None if v is None else _source(v, resources, f"{where} binding {field}")


class _Runner:
    def __init__(self, model):
        self.st = _device()
        self.d3d, self.dev = self.st["d3d"], self.st["dml"]
        self.alloc = self.d3d.CreateCommandAllocator(dml.D3D12_COMMAND_LIST_TYPE_DIRECT)
        self.cl = self.d3d.CreateCommandList(0, dml.D3D12_COMMAND_LIST_TYPE_DIRECT, self.alloc,
                                             None)
        base = Path(model.get("$base", "."))
        self.resources = {n: _Resource(n, s, base, self.d3d, self.cl)
                          for n, s in model.get("resources", {}).items()}
        self.flush()
        kinds = {"onnx": lambda n, s: OnnxDispatchable(n, s, base, self.dev),
                 "dmlserializedgraph": lambda n, s: _GraphDispatchable(n, s, base, self.dev)}
        self.dispatchables = {
            n: kinds.get(str(s["type"]).lower(), lambda n, s: _Dispatchable(n, s, self.dev))(n, s)
            for n, s in model["dispatchables"].items()}
        for d in self.dispatchables.values():
            if isinstance(d, _GraphDispatchable):
                for n, res in d.constant_resources(self.d3d, self.cl).items():
                    if n in self.resources:
                        raise ModelError(f"dispatchable '{d.name}': constant node '{n}' has "
                                         "the name of a resource")
                    self.resources[n] = res
                self.flush()
        for d in self.dispatchables.values():
            if not isinstance(d, OnnxDispatchable):
                self.initialize(d)

    def resource(self, name, where):
        res = self.resources.get(name)
        if res is None:
            raise ModelError(f"{where}: no resource named '{name}'")
        return res

    def upload(self, res, raw: np.ndarray) -> None:
        """Write ``raw`` bytes at the start of ``res``'s DEFAULT buffer (UPLOAD + copy)."""
        up = _buffer(self.d3d, max(4, (raw.size + 3) // 4 * 4), 2)
        up.Map(0, None)[:raw.size] = raw
        up.Unmap(0, None)
        self.cl.CopyBufferRegion(res.buffer, 0, up, 0, raw.size // 4 * 4)
        self.flush()
        if raw.size % 4:  # a copy moves 4-byte words: the tail through a read-modify-write
            tail = raw.size // 4 * 4
            old = np.frombuffer(self.download(res.name), np.uint8).copy()
            old[tail:raw.size] = raw[tail:]
            up.Map(0, None)[:4] = old[tail:tail + 4]
            up.Unmap(0, None)
            self.cl.CopyBufferRegion(res.buffer, tail, up, 0, 4)
            self.flush()

    def flush(self):
        _submit(self.st, self.cl, self.alloc)
        self.alloc.Reset()
        self.cl.Reset(self.alloc, None)

    def table(self, dispatchable):
        props = dispatchable.GetBindingProperties()
        count = max(1, props.RequiredDescriptorCount)
        heap = self.d3d.CreateDescriptorHeap(dml.D3D12_DESCRIPTOR_HEAP_DESC(
            dml.D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV, count,
            dml.D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE))
        self.cl.SetDescriptorHeaps([heap])
        return self.dev.CreateBindingTable(dml.DML_BINDING_TABLE_DESC(
            dispatchable, heap.GetCPUDescriptorHandleForHeapStart(),
            heap.GetGPUDescriptorHandleForHeapStart(), count)), props

    def initialize(self, d):
        init = self.dev.CreateOperatorInitializer([d.compiled])
        table, _ = self.table(init)
        props = d.compiled.GetBindingProperties()
        if props.PersistentResourceSize:
            d.persistent = _buffer(self.d3d, props.PersistentResourceSize, 1)
            where = f"dispatchable '{d.name}'"
            arr = [_bound(d.init_bindings, f, i, self.resources, where)
                   if t is not None and t.owned_by_dml else None for f, i, t in d.ins]
            table.BindInputs([dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER_ARRAY,
                                                   dml.DML_BUFFER_ARRAY_BINDING(len(arr), arr))])
            table.BindOutputs([dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER,
                                                    dml.DML_BUFFER_BINDING(
                                                        d.persistent, 0,
                                                        props.PersistentResourceSize))])
        self.dev.CreateCommandRecorder().RecordDispatch(self.cl, init, table)
        self.flush()

    def dispatch(self, command):
        d = self.dispatchables.get(command["dispatchable"])
        if d is None:
            raise ModelError(f"dispatch: no dispatchable named '{command['dispatchable']}'")
        if isinstance(d, OnnxDispatchable):
            d.dispatch(self, command)
            return
        table, props = self.table(d.compiled)
        if d.persistent is not None:
            table.BindPersistentResource(dml.DML_BINDING_DESC(
                dml.DML_BINDING_TYPE_BUFFER, dml.DML_BUFFER_BINDING(
                    d.persistent, 0, props.PersistentResourceSize)))
        temp = None
        if props.TemporaryResourceSize:
            temp = _buffer(self.d3d, props.TemporaryResourceSize, 1)
            table.BindTemporaryResource(dml.DML_BINDING_DESC(
                dml.DML_BINDING_TYPE_BUFFER, dml.DML_BUFFER_BINDING(
                    temp, 0, props.TemporaryResourceSize)))
        where = f"dispatch '{d.name}'"

        def descs(rows, skip_owned):
            out = []
            for f, i, t in rows:
                b = None if t is None or (skip_owned and t.owned_by_dml) else \
                    _bound(command["bindings"], f, i, self.resources, where)
                out.append(dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER, b) if b is not None
                           else dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_NONE, None))
            return out

        table.BindInputs(descs(d.ins, True))
        table.BindOutputs(descs(d.outs, False))
        self.dev.CreateCommandRecorder().RecordDispatch(self.cl, d.compiled, table)
        self.cl.ResourceBarrier([dml.CD3DX12_RESOURCE_BARRIER.UAV(None)])
        self.flush()

    def download(self, name) -> bytes:
        res = self.resources.get(name)
        if res is None:
            raise ModelError(f"no resource named '{name}'")
        if res.is_deferred:
            if res.deferred is None:
                raise ModelError(f"resource '{name}' is deferred and no ONNX output has been "
                                 "bound to it yet")
            return res.data
        rb = _buffer(self.d3d, res.size, 3)
        self.cl.CopyResource(rb, res.buffer)
        self.flush()
        data = bytes(rb.Map(0, None)[:res.size])
        rb.Unmap(0, None)
        return data


def format_values(values: np.ndarray) -> str:
    """DxDispatch's print: C++ ``operator<<`` defaults (``%g`` for floats)."""
    if values.dtype.kind == "f":
        def one(v):
            v = float(v)
            return ("-nan" if np.signbit(v) else "nan") if v != v else f"{v:g}"
        return ", ".join(one(v) for v in values)
    return ", ".join(str(int(v)) for v in values)


def format_verbose(values: np.ndarray) -> str:
    """DxDispatch's ``"verbose": true`` print: one element per line, ``[index] value (0xHEX)``,
    the index right-aligned to the widest index and the hex (the element's little-endian bytes
    as one unsigned number) to two digits per byte, space-padded as ``fmt`` pads, each line
    ending in a newline."""
    if values.size == 0:
        return ""
    index_width = len(str(values.size))  # floor(log10(count)) + 1
    hex_width = 2 * values.dtype.itemsize
    bits = values.view(f"<u{values.dtype.itemsize}")
    return "".join(f"[{i:{index_width}}] {format_values(values[i:i + 1])} "
                   f"(0x{int(b):{hex_width}X})\n" for i, b in enumerate(bits))


def run_model(model, out=print, output_dir=None) -> dict:
    """Execute a loaded model; returns {resource name: NumPy array over its whole buffer}."""
    r = _Runner(model)
    output_dir = Path(output_dir or ".")
    for command in model["commands"]:
        kind = command["type"].lower()
        if kind == "dispatch":
            r.dispatch(command)
            continue
        res = r.resources.get(command["resource"])
        if res is None:
            raise ModelError(f"{command['type']}: no resource named '{command['resource']}'")
        if not res.data_type:
            raise ModelError(f"{command['type']}: resource '{res.name}' has no "
                             "initialValuesDataType")
        np_type = dtypes.numpy_dtype(res.data_type)
        data = r.download(res.name)
        if kind == "print":
            count = len(res.data) // np_type.itemsize
            values = np.frombuffer(data[:count * np_type.itemsize], np_type)
            if command.get("verbose", False):
                out(f"Resource '{res.name}':\n" + format_verbose(values))
            else:
                out(f"Resource '{res.name}': " + format_values(values))
        else:  # writeFile
            target = output_dir / command["targetPath"]
            if target.suffix.lower() == ".npy":
                dims = command.get("dimensions") or [res.size // np_type.itemsize]
                count = int(np.prod(dims))
                array = np.frombuffer(data[:count * np_type.itemsize], np_type).reshape(dims)
                np.save(target, array, allow_pickle=False)
            else:
                target.write_bytes(data)
            out(f"Resource '{res.name}' written to '{target}'")
    result = {}
    for name, res in r.resources.items():
        data = r.download(name)
        np_type = dtypes.numpy_dtype(res.data_type) if res.data_type else np.dtype(np.uint8)
        result[name] = np.frombuffer(data[:len(data) // np_type.itemsize * np_type.itemsize],
                                     np_type).copy()
    return result


__all__ = ["ModelError", "format_values", "load", "run_model"]

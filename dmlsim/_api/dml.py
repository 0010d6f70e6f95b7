"""DirectML interfaces: IDMLDevice(1), operators, compiled operators, initializers,
binding tables, command recorders; DMLCreateDevice(1) and DMLCalcBufferTensorSize."""
from __future__ import annotations

from typing import Any, Sequence


from .._core import binding as B, config, dtypes, registry
from .._core import dml as core
from .._core.hresult import (DXGI_ERROR_DEVICE_REMOVED, DXGI_ERROR_UNSUPPORTED, E_INVALIDARG,
                             HResultError, S_OK, fail)
from .._core.resources import Buffer, heap_of
from .._core.validation import support_block
from .._debug import install
from .._schema import enums_generated as EG, structs_generated as S
from .._schema.d3d12_enums import D3D12_DESCRIPTOR_HEAP_TYPE
from .._schema.operators_generated import OPERATORS
from .._core.graph import CompiledGraph
from . import limits
from .com import NamedObject, adopt, seq_arg, entry
from .graph import graph_spec

_CBV_SRV_UAV = D3D12_DESCRIPTOR_HEAP_TYPE.D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV

_BY_VALUE = {s["value"]: s for s in OPERATORS.values()}


_EMPTY_TABLE = ("the binding table is empty (created or Reset with a null DML_BINDING_TABLE_DESC); "
                "Reset it with a DML_BINDING_TABLE_DESC first")


class IDMLObject(NamedObject):
    _live_message: str | None = "DML_LIVE_OBJECT"

    def _report_failure(self, method, err):
        """A failed HRESULT method (``_reported_methods``) also reaches the debug layer, as
        DirectML's debug layer prints them; free when no debug layer is installed."""
        dev = self._device._core if hasattr(self, "_device") else self._core
        if dev.d3d.observers and err.hresult != DXGI_ERROR_DEVICE_REMOVED:
            dev.d3d.observers.dml_error(device=dev, method=method, message=err.message,
                                        hresult=err.hresult)


class IDMLDeviceChild(IDMLObject):
    def GetDevice(self):
        return self._device


class IDMLPageable(IDMLDeviceChild):
    pass


class IDMLOperator(IDMLDeviceChild):
    def __init__(self, device, core_op):
        self._device, self._core = device, core_op


class IDMLDispatchable(IDMLPageable):
    def GetBindingProperties(self) -> S.DML_BINDING_PROPERTIES:
        n, t, p = self._core.binding_properties()
        return S.DML_BINDING_PROPERTIES(n, t, p)


class IDMLCompiledOperator(IDMLDispatchable):
    def __init__(self, device, c):
        self._device, self._core = device, c


class IDMLOperatorInitializer(IDMLDispatchable):
    _reported_methods = frozenset({"Reset"})
    def __init__(self, device, c):
        self._device, self._core = device, c

    def Reset(self, *args: Any) -> int:
        ops = _compiled_list(self._device, "IDMLOperatorInitializer::Reset", args)
        self._core.reset(ops)
        return S_OK


def _compiled_list(device, method, args):
    device._alive(method)
    ops = seq_arg(method, args, "operator array")
    for i, o in enumerate(ops):
        if not isinstance(o, IDMLCompiledOperator):
            fail(E_INVALIDARG, f"{method}: operator {i} is a {type(o).__name__}, not an "
                               "IDMLCompiledOperator")
        if o._device is not device:
            fail(E_INVALIDARG, f"{method}: operator {i} belongs to another DirectML device")
    return [o._core for o in ops]


def _binding_payload(b, method, i):
    """DML_BINDING_DESC -> (type, core payload)."""
    if b is None:
        return (B.NONE, None)
    btype = int(b.Type)
    if btype == B.NONE:
        return (B.NONE, None)
    if btype == B.BUFFER:
        return (B.BUFFER, _triple(b.Desc))
    if btype == B.BUFFER_ARRAY:
        arr = b.Desc
        items = list(arr.Bindings or [])
        if arr.BindingCount not in (0, None) and int(arr.BindingCount) != len(items):
            raise B.misuse(f"binding {i}: BindingCount is {arr.BindingCount} but Bindings has "
                           f"{len(items)} entries")
        return (B.BUFFER_ARRAY, [None if x is None else _triple(x) for x in items])
    return (btype, None)


def _triple(bb):
    if bb is None:
        raise B.misuse("a DML_BINDING_DESC of type BUFFER has a null Desc")
    offset, size = int(bb.Offset), int(bb.SizeInBytes)
    if offset < 0 or size < 0:
        raise B.misuse(f"DML_BUFFER_BINDING Offset {offset} and SizeInBytes {size} must be "
                       "non-negative (they are UINT64)")
    buf = bb.Buffer
    if buf is not None and not isinstance(getattr(buf, "_core", None), Buffer):
        raise B.misuse(f"DML_BUFFER_BINDING Buffer is {type(buf).__name__}, not an "
                       "ID3D12Resource")
    return (None if buf is None else buf._core, offset, size)


class IDMLBindingTable(IDMLDeviceChild):
    """Writes descriptors into the heap at Bind time; dispatches read them at execution."""
    _reported_methods = frozenset({"Reset"})
    _void_methods = frozenset({"BindInputs", "BindOutputs", "BindTemporaryResource",
                               "BindPersistentResource"})

    def _void_failure(self, method, err, args=(), kwargs=None):
        _dml_misuse(self._device, method, err, table=self._core)

    def __init__(self, device, c):
        self._device, self._core = device, c

    def _table(self):
        """The core table to bind into; None (nothing to do) once the device was removed."""
        if self._device._core.removed_reason:
            return None
        if self._core is None:  # created or Reset with a null desc
            raise B.misuse(_EMPTY_TABLE)
        return self._core

    def BindInputs(self, *args: Any) -> None:
        t = self._table()
        if t is not None:
            items = seq_arg("IDMLBindingTable::BindInputs", args, "binding array")
            payload = [_binding_payload(b, "BindInputs", i) for i, b in enumerate(items)]
            t.commit(inputs=B.inputs(t.layout, payload))

    def BindOutputs(self, *args: Any) -> None:
        t = self._table()
        if t is not None:
            items = seq_arg("IDMLBindingTable::BindOutputs", args, "binding array")
            payload = [_binding_payload(b, "BindOutputs", i) for i, b in enumerate(items)]
            t.commit(outputs=B.outputs(t.layout, payload))

    def _bind_resource(self, method, binding, kind):
        t = self._table()
        if t is not None:
            bt, p = _binding_payload(binding, method, 0)
            if bt not in (B.NONE, B.BUFFER):
                raise B.misuse(f"the {kind} resource takes DML_BINDING_TYPE_BUFFER or NONE")
            t.commit(**{kind: B.resource(t.layout, p, kind)})

    def BindTemporaryResource(self, binding: S.DML_BINDING_DESC | None = None) -> None:
        self._bind_resource("BindTemporaryResource", binding, "temporary")

    def BindPersistentResource(self, binding: S.DML_BINDING_DESC | None = None) -> None:
        self._bind_resource("BindPersistentResource", binding, "persistent")

    def Reset(self, desc: S.DML_BINDING_TABLE_DESC | None = None) -> int:
        self._device._alive("IDMLBindingTable::Reset")
        if desc is None:  # "This may be nullptr, indicating an empty binding table."
            self._core = None
            return S_OK
        args = self._device._table_args(desc, "IDMLBindingTable::Reset")
        if self._core is None:
            self._core = core.BindingTable(self._device._core, *args)
        else:
            self._core.reset(*args)
        return S_OK


class IDMLCommandRecorder(IDMLDeviceChild):
    _void_methods = frozenset({"RecordDispatch"})

    def _void_failure(self, method, err, args=(), kwargs=None):
        named = dict(zip(("commandList", "dispatchable", "bindings"), args), **(kwargs or {}))
        _dml_misuse(self._device, method, err,
                    cmd_list=getattr(named.get("commandList"), "_core", None),
                    dispatchable=getattr(named.get("dispatchable"), "_core", None),
                    table=getattr(named.get("bindings"), "_core", None))

    def __init__(self, device, c=None):
        self._device = device
        self._core = c if c is not None else type("Recorder", (), {"name": ""})()

    def RecordDispatch(self, commandList: Any, dispatchable: IDMLDispatchable,
                       bindings: IDMLBindingTable) -> None:
        """Validates, then appends a dispatch record; misuse removes the DirectML device."""
        dev = self._device._core
        if dev.removed_reason:
            return
        if bindings is not None and bindings._core is None:  # created or Reset with null
            raise B.misuse(_EMPTY_TABLE, "DML_INVALID_RECORD_DISPATCH")
        core.record_dispatch(dev, getattr(commandList, "_core", None),
                             getattr(dispatchable, "_core", None),
                             getattr(bindings, "_core", None))


def _dml_misuse(device, method, err, **objects) -> None:
    """A DirectML void method failed: the DirectML device's misuse policy (device removal, the
    debug layer's message; a raise in strict mode)."""
    text = err.message or str(err)
    device._core.misuse(method, text.removeprefix(method + ": "), err.hresult,
                        message_id=getattr(err, "message_id", None) or "DML_INVALID_BINDING",
                        **objects)


class IDMLDevice(IDMLObject):
    _reported_methods = frozenset({"CheckFeatureSupport", "CreateOperator", "CompileOperator",
                                   "CreateOperatorInitializer", "CreateBindingTable"})
    def __init__(self, d3d_api, flags, level):
        self._d3d = d3d_api
        self._core = core.DmlDevice(d3d_api._core, int(flags), level)
        self._core.api = self

    def _adopt(self, shell):
        return adopt(self._d3d._core, shell)

    def _extra_interfaces(self):
        if self._core.debug:
            return ((IDMLDebugDevice, lambda: IDMLDebugDevice(self)),)
        return ()

    def _alive(self, method):
        self._core.check_alive(method)

    def GetParentDevice(self, *_):
        return self._d3d

    def GetDeviceRemovedReason(self) -> int:
        return self._core.removed_reason

    def GetDeviceRemovedMessage(self) -> str:
        """dmlsim addition: why the device was removed ("" while it is not)."""
        return self._core.removed_message

    def CheckFeatureSupport(self, feature: int, featureQueryData: Any = None, *rest: Any) -> Any:
        """(feature, query) -> DML_FEATURE_DATA_*; the C sizes may be passed and are ignored."""
        self._alive("IDMLDevice::CheckFeatureSupport")
        query = featureQueryData if not isinstance(featureQueryData, int) else rest[0]
        level = self._core.feature_level
        if feature == EG.DML_FEATURE_FEATURE_LEVELS:
            requested = seq_arg("IDMLDevice::CheckFeatureSupport", (
                query.RequestedFeatureLevelCount, query.RequestedFeatureLevels)
                if query.RequestedFeatureLevelCount else (query.RequestedFeatureLevels,),
                "RequestedFeatureLevels")
            if not requested:
                fail(E_INVALIDARG, "IDMLDevice::CheckFeatureSupport: RequestedFeatureLevels is empty")
            ok = [int(r) for r in requested if int(r) <= level]
            return S.DML_FEATURE_DATA_FEATURE_LEVELS(max(ok) if ok else 0)
        if feature == 0:  # DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT
            return S.DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT(
                data_type_supported(int(query.DataType), level))
        fail(DXGI_ERROR_UNSUPPORTED, f"IDMLDevice::CheckFeatureSupport: feature {feature} is not "
                                     "a DML_FEATURE this device recognizes")

    def CreateOperator(self, desc: S.DML_OPERATOR_DESC) -> IDMLOperator:
        return self._adopt(IDMLOperator(self, self._core.create_operator(desc, _BY_VALUE)))

    def CompileOperator(self, op: IDMLOperator, flags: int = 0) -> IDMLCompiledOperator:
        self._alive("IDMLDevice::CompileOperator")
        if not isinstance(op, IDMLOperator) or op._device is not self:
            fail(E_INVALIDARG, "IDMLDevice::CompileOperator: op must be an IDMLOperator created "
                               "by this device")
        flags = limits.uint32_arg("IDMLDevice::CompileOperator", "flags", flags)
        if flags & ~0x7:
            fail(E_INVALIDARG, f"IDMLDevice::CompileOperator: flags 0x{flags:X} has bits that "
                               "are not DML_EXECUTION_FLAGS")
        c = core.CompiledOperator(op._core, int(flags))
        # Programs are shared by every compilation of one desc and flags (the plan cache).
        return self._adopt(IDMLCompiledOperator(self, c))

    def CreateOperatorInitializer(self, *args: Any) -> IDMLOperatorInitializer:
        ops = _compiled_list(self, "IDMLDevice::CreateOperatorInitializer", args)
        return self._adopt(IDMLOperatorInitializer(self, core.OperatorInitializer(self._core, ops)))

    def _table_args(self, desc, method):
        if desc is None:
            fail(E_INVALIDARG, f"{method}: a DML_BINDING_TABLE_DESC is required")
        d = desc.Dispatchable
        if not isinstance(d, IDMLDispatchable) or d._device is not self:
            fail(E_INVALIDARG, f"{method}: Dispatchable must be a compiled operator or operator "
                               "initializer of this device")
        cpu, gpu = int(desc.CPUDescriptorHandle.ptr), int(desc.GPUDescriptorHandle.ptr)
        heap = heap_of(self._core.d3d, cpu)
        size = int(desc.SizeInDescriptors)
        need = d._core.layout.descriptor_count
        if heap is None:
            fail(E_INVALIDARG, f"{method}: CPUDescriptorHandle 0x{cpu:X} is not in a descriptor heap")
        if heap.type != _CBV_SRV_UAV:  # the page: "must have type D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV"
            fail(E_INVALIDARG, f"{method}: the descriptor heap has type {heap.type}; binding "
                               "tables need a D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV heap")
        if heap_of(self._core.d3d, gpu, gpu=True) is not heap or \
                heap.index_of(cpu) != heap.index_of(gpu, True):
            fail(E_INVALIDARG, f"{method}: GPUDescriptorHandle does not name the same descriptor "
                               "as CPUDescriptorHandle")
        if size < need:
            fail(E_INVALIDARG, f"{method}: SizeInDescriptors is {size} but the dispatchable needs "
                               f"{need} (GetBindingProperties().RequiredDescriptorCount)")
        if not heap.contains(cpu, size):
            fail(E_INVALIDARG, f"{method}: {size} descriptors from the handle run past the end of "
                               f"the heap ({heap.count} descriptors)")
        return d._core, heap, heap.index_of(cpu), heap.index_of(gpu, True), size

    def CreateBindingTable(self, desc: S.DML_BINDING_TABLE_DESC | None = None
                           ) -> IDMLBindingTable:
        self._alive("IDMLDevice::CreateBindingTable")
        if desc is None:  # "This may be nullptr, indicating an empty binding table."
            return self._adopt(IDMLBindingTable(self, None))
        args = self._table_args(desc, "IDMLDevice::CreateBindingTable")
        return self._adopt(IDMLBindingTable(self, core.BindingTable(self._core, *args)))

    def CreateCommandRecorder(self) -> IDMLCommandRecorder:
        self._alive("IDMLDevice::CreateCommandRecorder")
        return self._adopt(IDMLCommandRecorder(self))

    def Evict(self, *args: Any) -> int:
        self._alive("IDMLDevice::Evict")
        seq_arg("IDMLDevice::Evict", args, "pageable array")
        return S_OK

    def MakeResident(self, *args: Any) -> int:
        self._alive("IDMLDevice::MakeResident")
        seq_arg("IDMLDevice::MakeResident", args, "pageable array")
        return S_OK


class IDMLDevice1(IDMLDevice):
    _reported_methods = frozenset({"CompileGraph"})
    def CompileGraph(self, desc: Any, flags: int = 0) -> IDMLCompiledOperator:
        """One compiled operator for a whole DAG of operators (and, from FL 6_2, constant data):
        ``_core/graph.py``; every graph rule broken answers E_INVALIDARG saying which."""
        self._alive("IDMLDevice1::CompileGraph")
        if int(flags) & ~0x7:
            fail(E_INVALIDARG, f"IDMLDevice1::CompileGraph: flags 0x{int(flags):X} has bits that "
                               "are not DML_EXECUTION_FLAGS")
        g = graph_spec(self, desc, IDMLOperator)
        return self._adopt(IDMLCompiledOperator(self, CompiledGraph(self._core, g, int(flags))))


class IDMLDebugDevice(IDMLObject):
    _live_message = None  # a debug interface: not reported as a leak

    def __init__(self, device):
        self._device, self._core = device, device._core

    def SetMuteDebugOutput(self, mute: bool) -> None:
        self._core.d3d.mute_debug_output = bool(mute)


def data_type_supported(data_type: int, level: int) -> bool:
    """True when some operator implemented by dmlsim supports ``data_type`` at ``level``,
    from the same support tables CreateOperator uses."""
    short = dtypes.SHORT_NAMES.get(data_type)
    if short is None:
        return False
    if data_type in dtypes.SIXTY_FOUR_BIT and not config.settings.x64:
        return False
    for name in registry.names():
        schema = OPERATORS[name]
        if schema["introduced"] > level:
            continue
        block = support_block(schema, level)
        if block and any(short in row.get("types", ()) for row in block["tensors"]):
            return True
    return False


@entry("DMLCreateDevice")
def DMLCreateDevice(d3d12Device: Any, flags: int = 0, *_: Any) -> IDMLDevice1:
    return DMLCreateDevice1(d3d12Device, flags, 0x1000)


@entry("DMLCreateDevice1")
def DMLCreateDevice1(d3d12Device: Any, flags: int = 0, minimumFeatureLevel: int = 0x1000,
                     *_: Any) -> IDMLDevice1:
    """Create a DirectML device emulating ``dmlsim.set_feature_level`` (default 6_4);
    DXGI_ERROR_UNSUPPORTED when ``minimumFeatureLevel`` is above it."""
    if d3d12Device is None:
        fail(E_INVALIDARG, "DMLCreateDevice: d3d12Device is null")
    d3d12Device._core.check_alive("DMLCreateDevice")
    if int(flags) & ~1:
        fail(E_INVALIDARG, f"DMLCreateDevice: flags 0x{int(flags):X} has bits that are not "
                           "DML_CREATE_DEVICE_FLAGS")
    level = config.settings.feature_level
    if int(minimumFeatureLevel) > level:
        fail(DXGI_ERROR_UNSUPPORTED, f"DMLCreateDevice1: minimumFeatureLevel "
                                     f"{config.fl_name(int(minimumFeatureLevel))} is above the "
                                     f"emulated {config.fl_name(level)}")
    dev = adopt(d3d12Device._core, IDMLDevice1(d3d12Device, flags, level))
    if int(flags) & EG.DML_CREATE_DEVICE_FLAG_DEBUG:
        install(d3d12Device._core)  # the debug layer observes the D3D12 device's work
        d3d12Device._core.observers.dml_debug_device(device=dev._core)
    return dev


@entry("DMLCalcBufferTensorSize")
def DMLCalcBufferTensorSize(dataType: int, dimensionCount: int, sizes: Sequence[int],
                            strides: Sequence[int] | None = None) -> int:
    """Bytes a buffer tensor spans: (sum((Sizes[i]-1)*Strides[i]) + 1) * element size,
    rounded up to 4; packed strides when ``strides`` is None."""
    m = "DMLCalcBufferTensorSize"
    dt = limits.uint32_arg(m, "dataType", dataType)  # an unknown type is 0 bytes (the page)
    count = limits.uint32_arg(m, "dimensionCount", dimensionCount)
    sizes = _uint_list(m, "sizes", sizes)
    if count > len(sizes):
        fail(E_INVALIDARG, f"{m}: dimensionCount is {count} but sizes has {len(sizes)} values")
    sizes = sizes[:count] if count else sizes
    if strides is not None:
        strides = _uint_list(m, "strides", strides)
        if len(strides) < len(sizes):
            fail(E_INVALIDARG, f"{m}: strides has {len(strides)} values for {len(sizes)} "
                               "dimensions")
        strides = strides[:len(sizes)]
    return dtypes.calc_buffer_tensor_size(dt, sizes, strides)


def _uint_list(method, name, values) -> list:
    """A C ``const UINT*`` array argument: a sequence of UINTs (each checked)."""
    if values is None or isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        fail(E_INVALIDARG, f"{method}: {name} is {values!r}; a sequence of UINT is required")
    return [limits.uint32_arg(method, f"{name}[{i}]", v) for i, v in enumerate(values)]


__all__ = ["IDMLObject", "IDMLDeviceChild", "IDMLPageable", "IDMLOperator", "IDMLDispatchable",
           "IDMLCompiledOperator", "IDMLOperatorInitializer", "IDMLBindingTable",
           "IDMLCommandRecorder", "IDMLDevice", "IDMLDevice1", "IDMLDebugDevice",
           "DMLCreateDevice", "DMLCreateDevice1", "DMLCalcBufferTensorSize"]

"""Invalid usage, each misuse with its exact answer.

Four kinds, as DirectML and D3D12 answer them:
- HRESULT methods raise HResultError with the exact code; the message starts with the
  operator or method name and says what was wrong; the device stays alive.
- Void DirectML methods (BindInputs, RecordDispatch, ...) do not raise: the device is removed,
  GetDeviceRemovedReason() returns the code, the removal message names the method and the
  problem, and later HRESULT methods return DXGI_ERROR_DEVICE_REMOVED (dml-errors.md). With
  dmlsim.set_strict(True) the same call raises at the call site and removes nothing.
- Command-list recording errors are sticky: Close() fails with E_INVALIDARG naming the
  recorded problem (strict mode: the recording call raises).
- Faults found when the work executes remove the D3D12 device (ExecuteCommandLists).

Every case's docstring cites the reference page (shared/spec/docs) or the D3D12 rule it checks.
A failed call changes no state: see the tests at the end.
"""
from __future__ import annotations

import numpy as np
import pytest

import dmlsim as dml

from helpers import NONE, UPLOAD, READBACK, Env, array_binding, binding, strict_mode, tensor

E_INVALIDARG, E_FAIL = dml.E_INVALIDARG, dml.E_FAIL
OWNED = dml.DML_TENSOR_FLAG_OWNED_BY_DML
ADD = "DML_OPERATOR_ELEMENT_WISE_ADD"


class Ctx(Env):
    """An Env plus the objects most misuses start from."""

    def add_desc(self, a=None, b=None, out=None, dtype=np.float32, sizes=(4,)):
        a, b, out = (t if t is not None else tensor(dtype, sizes) for t in (a, b, out))
        return dml.DML_OPERATOR_DESC(dml.DML_OPERATOR_ELEMENT_WISE_ADD,
                                     dml.DML_ELEMENT_WISE_ADD_OPERATOR_DESC(a, b, out))

    def add(self, flags=0, **kw):
        return self.dml.CompileOperator(self.dml.CreateOperator(self.add_desc(**kw)), flags)

    def owned_add(self):
        return self.add(b=tensor(np.float32, [4], flags=OWNED))

    def isinf(self):
        desc = dml.DML_OPERATOR_DESC(dml.DML_OPERATOR_ELEMENT_WISE_IS_INFINITY,
                                     dml.DML_ELEMENT_WISE_IS_INFINITY_OPERATOR_DESC(
                                         tensor(np.float32, [4]), tensor(np.uint8, [4]), 0))
        return self.dml.CompileOperator(self.dml.CreateOperator(desc), 0)

    def bound(self, compiled, inputs, outputs):
        """A binding table with ``inputs``/``outputs`` bound, its heap set on the list."""
        table, heap, _ = self.table(compiled)
        table.BindInputs(len(inputs), inputs)
        table.BindOutputs(len(outputs), outputs)
        self.cl.SetDescriptorHeaps(1, [heap])
        return table

    def init_table(self, compiled):
        init = self.dml.CreateOperatorInitializer(1, [compiled])
        table, heap, _ = self.table(init)
        self.cl.SetDescriptorHeaps(1, [heap])
        return init, table


HR, VOID, RECORD, EXEC = [], [], [], []


def hr(code, prefix, *snippets):
    """A misuse of an HRESULT method: ``fn(c)`` must raise ``code``."""
    def deco(fn):
        HR.append(pytest.param(fn, code, prefix, snippets, id=fn.__name__))
        return fn
    return deco


def void(method, *snippets, code=E_INVALIDARG, device="dml"):
    """A misuse of a void method: ``fn(c)`` returns the offending call as a thunk."""
    def deco(fn):
        VOID.append(pytest.param(fn, method, snippets, code, device, id=fn.__name__))
        return fn
    return deco


def record(method, *snippets):
    """A command-list recording error: ``fn(c)`` returns the recording call as a thunk."""
    def deco(fn):
        RECORD.append(pytest.param(fn, method, snippets, id=fn.__name__))
        return fn
    return deco


def execution(*snippets):
    def deco(fn):
        EXEC.append(pytest.param(fn, snippets, id=fn.__name__))
        return fn
    return deco


# ==== CreateOperator: tensor descs =========================================================

@hr(E_INVALIDARG, ADD, "ATensor.Type", "DML_TENSOR_TYPE_BUFFER")
def tensor_type_not_buffer(c):
    """ns-directml-dml_tensor_desc.md: Type is DML_TENSOR_TYPE_BUFFER (the only tensor type)."""
    t = tensor(np.float32, [4])
    t.Type = dml.DML_TENSOR_TYPE_INVALID
    c.dml.CreateOperator(c.add_desc(a=t))


@hr(E_INVALIDARG, ADD, "BTensor.Sizes[1] is 0", "size of zero")
def size_zero(c):
    """ns-directml-dml_buffer_tensor_desc.md: 'Specifying a size of zero in any dimension is
    invalid, and will result in an error.'"""
    t = tensor(np.float32, [2, 1])
    t.Desc.Sizes = [2, 0]
    c.dml.CreateOperator(c.add_desc(b=t, sizes=(2, 1)))


@hr(E_INVALIDARG, ADD, "OutputTensor.TotalTensorSizeInBytes is 12", "at least 16")
def total_size_too_small(c):
    """ns-directml-dml_buffer_tensor_desc.md: 'TotalTensorSizeInBytes must be at least as large
    as the minimum implied size given the sizes, strides, and data type'."""
    c.dml.CreateOperator(c.add_desc(out=tensor(np.float32, [4], total=12)))


@hr(E_INVALIDARG, ADD, "GuaranteedBaseOffsetAlignment is 24", "power of two")
def base_alignment_not_power_of_two(c):
    """ns-directml-dml_buffer_tensor_desc.md: GuaranteedBaseOffsetAlignment 'must be a power of
    two that is at least as large as the element size'."""
    t = tensor(np.float32, [4])
    t.Desc.GuaranteedBaseOffsetAlignment = 24
    c.dml.CreateOperator(c.add_desc(a=t))


@hr(E_INVALIDARG, ADD, "GuaranteedBaseOffsetAlignment is 2", "element size")
def base_alignment_below_element_size(c):
    """ns-directml-dml_buffer_tensor_desc.md: the alignment is 'at least as large as the
    element size' (4 for FLOAT32)."""
    t = tensor(np.float32, [4])
    t.Desc.GuaranteedBaseOffsetAlignment = 2
    c.dml.CreateOperator(c.add_desc(a=t))


@hr(E_INVALIDARG, ADD, "ATensor.DimensionCount is 3 but Sizes has 2")
def dimension_count_mismatch(c):
    """ns-directml-dml_buffer_tensor_desc.md: DimensionCount 'determines the size of the Sizes
    and Strides arrays'."""
    t = tensor(np.float32, [2, 2])
    t.Desc.DimensionCount = 3
    c.dml.CreateOperator(c.add_desc(a=t, sizes=(2, 2)))


@hr(E_INVALIDARG, ADD, "ATensor.Strides has 1 entries but DimensionCount is 2")
def strides_length_mismatch(c):
    """ns-directml-dml_buffer_tensor_desc.md: Strides has DimensionCount entries."""
    t = tensor(np.float32, [2, 2])
    t.Desc.Strides = [1]
    c.dml.CreateOperator(c.add_desc(a=t, sizes=(2, 2)))


@hr(E_INVALIDARG, ADD, "4294967296 elements", "2^32-1")
def too_many_elements(c):
    """ns-directml-dml_buffer_tensor_desc.md: 'The total size of a buffer tensor may not exceed
    (2^32 - 1) elements'."""
    big = tensor(np.uint8, [65536, 65536])
    c.dml.CreateOperator(c.add_desc(a=big, b=big, out=big, dtype=np.uint8, sizes=(65536, 65536)))


@hr(E_INVALIDARG, ADD, "OutputTensor.Flags", "only valid on input tensors")
def owned_by_dml_on_output(c):
    """ne-directml-dml_tensor_flags.md: OWNED_BY_DML 'can only be used on input tensors'."""
    c.dml.CreateOperator(c.add_desc(out=tensor(np.float32, [4], flags=OWNED)))


@hr(E_INVALIDARG, ADD, "ATensor.Flags is 0x2")
def undefined_tensor_flag(c):
    """ne-directml-dml_tensor_flags.md: NONE (0) and OWNED_BY_DML (0x1) are the only flags."""
    c.dml.CreateOperator(c.add_desc(a=tensor(np.float32, [4], flags=2)))


@hr(E_INVALIDARG, ADD, "ATensor.DataType is 0")
def unknown_data_type(c):
    """ne-directml-dml_tensor_data_type.md: DML_TENSOR_DATA_TYPE_UNKNOWN is not a tensor type."""
    t = tensor(np.float32, [4])
    t.Desc.DataType = dml.DML_TENSOR_DATA_TYPE_UNKNOWN
    c.dml.CreateOperator(c.add_desc(a=t))


# ==== CreateOperator: the operator desc ======================================================

@hr(E_INVALIDARG, "CreateOperator", "9999", "not a DML_OPERATOR_TYPE")
def operator_type_invalid(c):
    """ns-directml-dml_operator_desc.md: Type is a DML_OPERATOR_TYPE."""
    desc = c.add_desc()
    desc.Type = 9999
    c.dml.CreateOperator(desc)


@hr(E_INVALIDARG, ADD, "DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC", "needs a "
    "DML_ELEMENT_WISE_ADD_OPERATOR_DESC")
def desc_struct_of_another_operator(c):
    """ns-directml-dml_operator_desc.md: Desc points to the struct that Type names."""
    t = tensor(np.float32, [4])
    c.dml.CreateOperator(dml.DML_OPERATOR_DESC(
        dml.DML_OPERATOR_ELEMENT_WISE_ADD, dml.DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC(t, t)))


@hr(E_INVALIDARG, ADD, "OutputTensor is null", "required")
def required_tensor_null(c):
    """ns-directml-dml_element_wise_add_operator_desc.md: OutputTensor is required (not
    _Maybenull_)."""
    desc = c.add_desc()
    desc.Desc.OutputTensor = None
    c.dml.CreateOperator(desc)


@hr(E_INVALIDARG, ADD, "BTensor.Sizes [2, 2] must equal ATensor.Sizes [4]")
def sizes_differ(c):
    """ns-directml-dml_element_wise_add_operator_desc.md: 'ATensor, BTensor, and OutputTensor
    must have the same DataType, DimensionCount, and Sizes.'"""
    c.dml.CreateOperator(c.add_desc(b=tensor(np.float32, [2, 2])))


@hr(E_INVALIDARG, ADD, "DML_TENSOR_DATA_TYPE_FLOAT16", "must match")
def data_types_differ(c):
    """ns-directml-dml_element_wise_add_operator_desc.md: the same DataType for all three."""
    c.dml.CreateOperator(c.add_desc(b=tensor(np.float16, [4])))


@hr(E_INVALIDARG, "DML_OPERATOR_ELEMENT_WISE_IS_INFINITY", "InfinityMode is 3")
def infinity_mode_invalid(c):
    """ne-directml-dml_is_infinity_mode.md: EITHER (0), POSITIVE (1), NEGATIVE (2)."""
    c.dml.CreateOperator(dml.DML_OPERATOR_DESC(
        dml.DML_OPERATOR_ELEMENT_WISE_IS_INFINITY, dml.DML_ELEMENT_WISE_IS_INFINITY_OPERATOR_DESC(
            tensor(np.float32, [4]), tensor(np.uint8, [4]), 3)))


@hr(E_INVALIDARG, ADD, "ATensor.DataType is DML_TENSOR_DATA_TYPE_FLOAT64")
def data_type_not_in_support_table(c):
    """ns-directml-dml_element_wise_add_operator_desc.md, 'Tensor support': FLOAT64 is not in
    the DML_FEATURE_LEVEL_5_1 table (test_support_tables.py checks every cell)."""
    c.dml.CreateOperator(c.add_desc(dtype=np.float64))


# ==== CompileOperator, initializers, binding tables ===========================================

@hr(E_INVALIDARG, "IDMLDevice::CompileOperator", "0x8", "DML_EXECUTION_FLAGS")
def compile_flags_undefined(c):
    """ne-directml-dml_execution_flags.md: NONE, ALLOW_HALF_PRECISION_COMPUTATION (0x1),
    DISABLE_META_COMMANDS (0x2), DESCRIPTORS_VOLATILE (0x4)."""
    c.dml.CompileOperator(c.dml.CreateOperator(c.add_desc()), 0x8)


@hr(E_INVALIDARG, "IDMLDevice::CompileOperator", "created by this device")
def compile_operator_of_another_device(c):
    """nf-directml-idmldevice-compileoperator.md: op was created with this device's
    IDMLDevice::CreateOperator."""
    other = dml.DMLCreateDevice(c.d3d)
    c.dml.CompileOperator(other.CreateOperator(c.add_desc()), 0)


@hr(E_INVALIDARG, "IDMLDevice::CreateOperatorInitializer", "another DirectML device")
def initializer_with_operator_of_another_device(c):
    """nf-directml-idmldevice-createoperatorinitializer.md: the operators to initialize are
    compiled operators of this device."""
    other = dml.DMLCreateDevice(c.d3d)
    compiled = other.CompileOperator(other.CreateOperator(c.add_desc()), 0)
    c.dml.CreateOperatorInitializer(1, [compiled])


@hr(E_INVALIDARG, "IDMLOperatorInitializer::Reset", "not an IDMLCompiledOperator")
def initializer_reset_with_an_operator(c):
    """nf-directml-idmloperatorinitializer-reset.md: operators are IDMLCompiledOperator."""
    init = c.dml.CreateOperatorInitializer(0, None)
    init.Reset(1, [c.dml.CreateOperator(c.add_desc())])


@hr(E_INVALIDARG, "IDMLDevice::CreateBindingTable", "SizeInDescriptors is 4", "needs 5")
def binding_table_too_few_descriptors(c):
    """dml-binding.md: the binding table spans the dispatchable's RequiredDescriptorCount
    (ns-directml-dml_binding_table_desc.md: SizeInDescriptors)."""
    compiled = c.add()
    heap = c.heap(8)
    c.dml.CreateBindingTable(dml.DML_BINDING_TABLE_DESC(
        compiled, heap.GetCPUDescriptorHandleForHeapStart(),
        heap.GetGPUDescriptorHandleForHeapStart(), 4))


@hr(E_INVALIDARG, "IDMLDevice::CreateBindingTable", "run past the end")
def binding_table_past_heap_end(c):
    """ns-directml-dml_binding_table_desc.md: SizeInDescriptors descriptors from the handles
    lie in the heap."""
    compiled = c.add()
    heap = c.heap(6)
    inc = c.d3d.GetDescriptorHandleIncrementSize(0)
    c.dml.CreateBindingTable(dml.DML_BINDING_TABLE_DESC(
        compiled, heap.GetCPUDescriptorHandleForHeapStart() + 2 * inc,
        heap.GetGPUDescriptorHandleForHeapStart() + 2 * inc, 5))


@hr(E_INVALIDARG, "IDMLDevice::CreateBindingTable", "CBV_SRV_UAV")
def binding_table_in_sampler_heap(c):
    """nf-directml-idmldevice-createbindingtable.md: 'The descriptor heap from which the handles
    are supplied must have type D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV.'"""
    compiled = c.add()
    heap = c.d3d.CreateDescriptorHeap(dml.D3D12_DESCRIPTOR_HEAP_DESC(
        dml.D3D12_DESCRIPTOR_HEAP_TYPE_SAMPLER, 8, dml.D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE))
    c.dml.CreateBindingTable(dml.DML_BINDING_TABLE_DESC(
        compiled, heap.GetCPUDescriptorHandleForHeapStart(),
        heap.GetGPUDescriptorHandleForHeapStart(), 5))


@hr(E_INVALIDARG, "IDMLDevice::CreateBindingTable", "Dispatchable")
def binding_table_for_another_device(c):
    """ns-directml-dml_binding_table_desc.md: Dispatchable is a compiled operator or an
    initializer of this device."""
    other = dml.DMLCreateDevice(c.d3d)
    compiled = other.CompileOperator(other.CreateOperator(c.add_desc()), 0)
    c.table(compiled)


# ==== devices and feature queries =============================================================

@hr(E_INVALIDARG, "DMLCreateDevice", "0x10", "DML_CREATE_DEVICE_FLAGS")
def create_device_undefined_flags(c):
    """ne-directml-dml_create_device_flags.md: NONE (0) and DEBUG (0x1)."""
    dml.DMLCreateDevice(c.d3d, 0x10)


@hr(E_INVALIDARG, "DMLCreateDevice", "null")
def create_device_on_null(c):
    """nf-directml-dmlcreatedevice.md: d3d12Device is a pointer to an ID3D12Device."""
    dml.DMLCreateDevice(None, 0)


@hr(dml.DXGI_ERROR_UNSUPPORTED, "DMLCreateDevice1", "DML_FEATURE_LEVEL_5_1")
def create_device1_above_level(c):
    """nf-directml-dmlcreatedevice1.md: 'If this version of DirectML doesn't support the
    minimumFeatureLevel requested, then this function will return DXGI_ERROR_UNSUPPORTED.'"""
    from helpers import feature_level
    with feature_level(0x5000):
        dml.DMLCreateDevice1(c.d3d, 0, dml.DML_FEATURE_LEVEL_5_1)


@hr(dml.DXGI_ERROR_UNSUPPORTED, "IDMLDevice::CheckFeatureSupport", "feature 7")
def check_feature_support_unknown_feature(c):
    """nf-directml-idmldevice-checkfeaturesupport.md: 'DXGI_ERROR_UNSUPPORTED if the DML_FEATURE
    is unrecognized or unsupported'."""
    c.dml.CheckFeatureSupport(7, None)


@hr(dml.E_NOINTERFACE, "IDMLDevice1::QueryInterface", "IDMLDebugDevice")
def query_debug_interface_without_debug_flag(c):
    """nn-directml-idmldebugdevice.md: the debug device interface exists when the device was
    created with DML_CREATE_DEVICE_FLAG_DEBUG; QueryInterface answers E_NOINTERFACE otherwise."""
    c.dml.QueryInterface(dml.IDMLDebugDevice)


@hr(dml.DXGI_ERROR_NOT_FOUND, "IDXGIFactory1::EnumAdapters", "does not exist")
def enum_adapters_past_last(c):
    """DXGI (IDXGIFactory1::EnumAdapters): DXGI_ERROR_NOT_FOUND when the index is past the
    last adapter (the adapter loop of HelloDirectML ends on it)."""
    dml.CreateDXGIFactory1().EnumAdapters(4096)


@hr(dml.DXGI_ERROR_DEVICE_REMOVED, "IDMLDevice::CreateOperator", "removed")
def hresult_method_after_removal(c):
    """dml-errors.md: 'For methods that return an HRESULT, a DXGI_ERROR_DEVICE_REMOVED error code
    is returned' once the device is removed."""
    table, heap, _ = c.table(c.add())
    table.BindInputs(1, [binding(c.buffer(16))])  # too few: removes the device
    c.dml.CreateOperator(c.add_desc())


# ==== D3D12 objects ========================================================================

@hr(E_INVALIDARG, "ID3D12Device::CreateCommittedResource", "ALLOW_UNORDERED_ACCESS")
def upload_heap_with_uav_flag(c):
    """D3D12 (D3D12_HEAP_TYPE): UPLOAD and READBACK heaps cannot hold resources with
    D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS."""
    c.buffer(16, UPLOAD, flags=dml.D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS)


@hr(E_INVALIDARG, "ID3D12Device::CreateCommittedResource", "COPY_DEST")
def readback_heap_initial_state(c):
    """D3D12 (D3D12_HEAP_TYPE_READBACK): resources must be created in
    D3D12_RESOURCE_STATE_COPY_DEST."""
    c.buffer(16, READBACK, state=dml.D3D12_RESOURCE_STATE_COMMON)


@hr(E_INVALIDARG, "ID3D12Device::CreateCommittedResource", "GENERIC_READ")
def upload_heap_initial_state(c):
    """D3D12 (D3D12_HEAP_TYPE_UPLOAD): resources must be created in
    D3D12_RESOURCE_STATE_GENERIC_READ."""
    c.buffer(16, UPLOAD, state=dml.D3D12_RESOURCE_STATE_COPY_DEST)


@hr(E_INVALIDARG, "ID3D12Device::CreateCommittedResource", "Width is 0")
def zero_width_buffer(c):
    """D3D12 (D3D12_RESOURCE_DESC): a buffer's Width is at least 1."""
    c.buffer(0)


@hr(E_INVALIDARG, "ID3D12Resource::Map", "DEFAULT heap")
def map_default_heap(c):
    """D3D12 (ID3D12Resource::Map): DEFAULT-heap resources are not CPU-accessible
    (DESIGN.md section 1: 'DEFAULT-heap buffers cannot be mapped, as in D3D12')."""
    c.buffer(16).Map(0, None)


@hr(E_INVALIDARG, "ID3D12Device::CreateDescriptorHeap", "NumDescriptors")
def descriptor_heap_of_zero(c):
    """D3D12 (D3D12_DESCRIPTOR_HEAP_DESC): NumDescriptors is at least 1."""
    c.d3d.CreateDescriptorHeap(dml.D3D12_DESCRIPTOR_HEAP_DESC(0, 0, 1))


@hr(E_INVALIDARG, "ID3D12DescriptorHeap::GetGPUDescriptorHandleForHeapStart", "shader visible")
def gpu_handle_of_non_visible_heap(c):
    """D3D12: only shader-visible heaps have GPU descriptor handles; the binding table's GPU
    handle must be in a shader-visible heap (nf-directml-idmldevice-createbindingtable.md)."""
    c.d3d.CreateDescriptorHeap(dml.D3D12_DESCRIPTOR_HEAP_DESC(0, 4, 0)) \
        .GetGPUDescriptorHandleForHeapStart()


@hr(E_FAIL, "ID3D12GraphicsCommandList::Close", "already closed")
def close_twice(c):
    """D3D12 (ID3D12GraphicsCommandList::Close): E_FAIL if the command list has already been
    closed."""
    c.cl.Close()
    c.cl.Close()


@hr(E_FAIL, "ID3D12GraphicsCommandList::Reset", "still open")
def reset_open_list(c):
    """D3D12 (ID3D12GraphicsCommandList::Reset): E_FAIL if the command list was not in the
    'closed' state."""
    c.cl.Reset(c.alloc, None)


@hr(E_INVALIDARG, "ID3D12GraphicsCommandList::Reset", "already in use")
def reset_list_with_busy_allocator(c):
    """D3D12 (ID3D12GraphicsCommandList::Reset): E_INVALIDARG if the allocator is being used
    with another command list in the recording state."""
    alloc2 = c.d3d.CreateCommandAllocator(0)
    cl2 = c.d3d.CreateCommandList(0, 0, alloc2)
    cl2.Close()
    cl2.Reset(c.alloc, None)  # c.cl is still recording into c.alloc


@hr(E_INVALIDARG, "ID3D12Device::CreateCommandList", "type")
def command_list_allocator_type_mismatch(c):
    """D3D12 (ID3D12Device::CreateCommandList): the allocator's type matches the list's."""
    alloc = c.d3d.CreateCommandAllocator(dml.D3D12_COMMAND_LIST_TYPE_COMPUTE)
    c.d3d.CreateCommandList(0, dml.D3D12_COMMAND_LIST_TYPE_DIRECT, alloc)


@hr(E_FAIL, "ID3D12CommandAllocator::Reset", "still open")
def allocator_reset_while_recording(c):
    """D3D12 (ID3D12CommandAllocator::Reset): E_FAIL if there is an actively recording command
    list referencing the command allocator."""
    c.alloc.Reset()


@hr(E_FAIL, "ID3D12CommandAllocator::Reset", "still executing")
def allocator_reset_while_in_flight(c):
    """D3D12 (ID3D12CommandAllocator::Reset): the allocator must not be reset while the GPU
    may still execute lists recorded with it (a list held behind a queue Wait)."""
    gate = c.d3d.CreateFence(0, 0)
    c.cl.Close()
    c.queue.Wait(gate, 1)
    c.queue.ExecuteCommandLists(1, [c.cl])
    c.alloc.Reset()


# ==== void DirectML methods: BindInputs / BindOutputs / Bind*Resource =========================

@void("IDMLBindingTable::BindInputs", "1 input bindings were provided", "has 2 inputs")
def bind_inputs_too_few(c):
    """nf-directml-idmlbindingtable-bindinputs.md: 'If too many or too few bindings are
    provided, device removal will occur.'"""
    table, _, _ = c.table(c.add())
    return lambda: table.BindInputs(1, [binding(c.buffer(16))])


@void("IDMLBindingTable::BindInputs", "3 input bindings were provided")
def bind_inputs_too_many(c):
    """nf-directml-idmlbindingtable-bindinputs.md: the number of bindings must exactly match
    the number of inputs, including optional tensors."""
    table, _, _ = c.table(c.add())
    b = binding(c.buffer(16))
    return lambda: table.BindInputs(3, [b, b, b])


@void("IDMLBindingTable::BindInputs", "SizeInBytes is too small. 8 was provided, but 16")
def bind_input_smaller_than_tensor(c):
    """ns-directml-dml_buffer_tensor_desc.md: 'When binding this tensor, the size of the buffer
    range must be at least as large as the TotalTensorSizeInBytes.'"""
    table, _, _ = c.table(c.add())
    buf = c.buffer(16)
    return lambda: table.BindInputs(2, [binding(buf, 0, 8), binding(buf)])


@void("IDMLBindingTable::BindInputs", "Offset is misaligned. 8 was provided",
      "multiple of 16")
def bind_input_offset_misaligned(c):
    """directml-constants.md / ns-directml-dml_buffer_tensor_desc.md: 'Buffer tensors always
    have a minimum alignment of 16 bytes' (DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT)."""
    table, _, _ = c.table(c.add())
    buf = c.buffer(64)
    return lambda: table.BindInputs(2, [binding(buf, 8, 16), binding(buf, 32, 16)])


@void("IDMLBindingTable::BindInputs", "16 was provided", "multiple of 64")
def bind_input_offset_below_guaranteed_alignment(c):
    """ns-directml-dml_buffer_tensor_desc.md: 'the offset in bytes of the buffer range from the
    start of the buffer must be a multiple of the GuaranteedBaseOffsetAlignment'."""
    t = tensor(np.float32, [4])
    t.Desc.GuaranteedBaseOffsetAlignment = 64
    table, _, _ = c.table(c.add(a=t))
    buf = c.buffer(128)
    return lambda: table.BindInputs(2, [binding(buf, 16, 16), binding(buf, 64, 16)])


@void("IDMLBindingTable::BindInputs", "UPLOAD heap")
def bind_input_on_upload_heap(c):
    """nf-directml-idmlbindingtable-bindinputs.md: 'All buffers being bound as input must have
    heap type D3D12_HEAP_TYPE_DEFAULT, except when the DML_TENSOR_FLAG_OWNED_BY_DML flag is
    set.'"""
    table, _, _ = c.table(c.add())
    up = c.buffer(16, UPLOAD)
    return lambda: table.BindInputs(2, [binding(up), binding(up)])


@void("IDMLBindingTable::BindInputs", "past the end")
def bind_input_past_buffer_end(c):
    """ns-directml-dml_buffer_binding.md: Offset and SizeInBytes describe a range of Buffer."""
    table, _, _ = c.table(c.add())
    buf = c.buffer(16)
    return lambda: table.BindInputs(2, [binding(buf, 16, 16), binding(buf, 0, 16)])


@void("IDMLBindingTable::BindInputs", "OWNED_BY_DML", "bind NONE")
def bind_owned_input_at_execution(c):
    """ne-directml-dml_tensor_flags.md: 'Attempting to bind the tensor during execution while
    this flag is set results in an error.'"""
    table, _, _ = c.table(c.owned_add())
    buf = c.buffer(16)
    return lambda: table.BindInputs(2, [binding(buf), binding(buf)])


@void("IDMLBindingTable::BindInputs", "BUFFER_ARRAY is only for operator initializers")
def bind_buffer_array_to_compiled_operator(c):
    """nf-directml-idmlbindingtable-bindinputs.md: for a compiled operator 'the binding type
    must match the tensor type' (BUFFER for a buffer tensor)."""
    table, _, _ = c.table(c.add())
    buf = c.buffer(16)
    return lambda: table.BindInputs(2, [array_binding(buf), binding(buf)])


@void("IDMLBindingTable::BindInputs", "only OWNED_BY_DML tensors are bound")
def bind_unowned_input_to_initializer(c):
    """nf-directml-idmlbindingtable-bindinputs.md: without OWNED_BY_DML 'the input tensor must
    not be bound when executing the initializer'."""
    init, table = c.init_table(c.owned_add())
    buf = c.buffer(16)
    return lambda: table.BindInputs(1, [array_binding(buf, buf)])


@void("IDMLBindingTable::BindInputs", "DML_BINDING_TYPE_BUFFER_ARRAY per operator")
def bind_buffer_to_initializer(c):
    """nf-directml-idmlbindingtable-bindinputs.md: 'For operator initializers, input bindings
    are expected to be of type DML_BINDING_TYPE_BUFFER_ARRAY with one input binding per
    operator'."""
    init, table = c.init_table(c.owned_add())
    return lambda: table.BindInputs(1, [binding(c.buffer(16))])


@void("IDMLBindingTable::BindInputs", "BindingCount is wrong. 1 was provided, but 2")
def bind_initializer_array_of_wrong_size(c):
    """nf-directml-idmlbindingtable-bindinputs.md: 'Each buffer array should have a size equal to
    the number of inputs of its corresponding operator to initialize.'"""
    init, table = c.init_table(c.owned_add())
    return lambda: table.BindInputs(1, [array_binding(c.buffer(16))])


@void("IDMLBindingTable::BindInputs", "needs a DML_BUFFER_ARRAY_BINDING")
def initializer_owned_tensor_left_unbound(c):
    """nf-directml-idmlbindingtable-bindinputs.md: 'Input tensors that had the
    DML_TENSOR_FLAG_OWNED_BY_DML flag set should be bound during initialize'."""
    init, table = c.init_table(c.owned_add())
    return lambda: table.BindInputs(1, [NONE])


@void("IDMLBindingTable::BindOutputs", "UPLOAD heap")
def bind_output_on_upload_heap(c):
    """nf-directml-idmlbindingtable-bindoutputs.md: 'All buffers being bound as output must have
    heap type D3D12_HEAP_TYPE_DEFAULT.'"""
    table, _, _ = c.table(c.add())
    return lambda: table.BindOutputs(1, [binding(c.buffer(16, UPLOAD))])


@void("IDMLBindingTable::BindOutputs", "2 output bindings were provided")
def bind_outputs_wrong_count(c):
    """nf-directml-idmlbindingtable-bindoutputs.md: the number of bindings must exactly match;
    'If too many or too few bindings are provided, device removal will occur.'"""
    table, _, _ = c.table(c.add())
    buf = c.buffer(32)
    return lambda: table.BindOutputs(2, [binding(buf, 0, 16), binding(buf, 16, 16)])


@void("IDMLBindingTable::BindOutputs", "ALLOW_UNORDERED_ACCESS")
def bind_output_without_uav_flag(c):
    """dml-binding.md: the binding table creates unordered access view (UAV) descriptors, so
    bound DEFAULT buffers need D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS."""
    table, _, _ = c.table(c.add())
    return lambda: table.BindOutputs(1, [binding(c.buffer(16, flags=0))])


@void("IDMLBindingTable::BindPersistentResource", "misaligned. 16 was provided",
      "multiple of 256")
def persistent_resource_misaligned(c):
    """nf-directml-idmlbindingtable-bindpersistentresource.md: the range 'must have its start
    offset aligned to DML_PERSISTENT_BUFFER_ALIGNMENT' (256)."""
    table, _, _ = c.table(c.owned_add())
    buf = c.buffer(512)
    return lambda: table.BindPersistentResource(binding(buf, 16, 256))


@void("IDMLBindingTable::BindPersistentResource", "too small. 128 was provided, but 256")
def persistent_resource_too_small(c):
    """nf-directml-idmlbindingtable-bindpersistentresource.md: 'a binding of type
    DML_BINDING_TYPE_BUFFER must be supplied that is at least as large as the required
    PersistentResourceSize'."""
    table, _, _ = c.table(c.owned_add())
    return lambda: table.BindPersistentResource(binding(c.buffer(512), 0, 128))


@void("IDMLBindingTable::BindTemporaryResource", "misaligned. 16 was provided",
      "multiple of 256")
def temporary_resource_misaligned(c):
    """nf-directml-idmlbindingtable-bindtemporaryresource.md: the range 'must have its start
    offset aligned to DML_TEMPORARY_BUFFER_ALIGNMENT' (256)."""
    table, _, _ = c.table(c.add())
    return lambda: table.BindTemporaryResource(binding(c.buffer(512), 16, 256))


@void("IDMLBindingTable::BindPersistentResource", "UPLOAD heap")
def persistent_resource_on_upload_heap(c):
    """nf-directml-idmlbindingtable-bindpersistentresource.md: 'The type of the heap underlying
    the buffer must be D3D12_HEAP_TYPE_DEFAULT.'"""
    table, _, _ = c.table(c.owned_add())
    return lambda: table.BindPersistentResource(binding(c.buffer(256, UPLOAD)))


@void("IDMLBindingTable::BindInputs", "binding table is empty")
def bind_on_empty_binding_table(c):
    """nf-directml-idmldevice-createbindingtable.md: desc 'may be nullptr, indicating an empty
    binding table'; an empty table has nothing to bind into until Reset gives it a desc."""
    table = c.dml.CreateBindingTable(None)
    return lambda: table.BindInputs(2, [binding(c.buffer(16)), binding(c.buffer(16))])


# ==== void DirectML methods: RecordDispatch ==================================================

@void("IDMLCommandRecorder::RecordDispatch", "overlap but are not identical")
def hazard_partial_overlap(c):
    """nf-directml-idmlbindingtable-bindinputs.md, Example 5: 'never valid, regardless of the
    operator's in-place execution support'."""
    compiled = c.add()
    buf = c.buffer(64)
    table = c.bound(compiled, [binding(buf, 0, 32), binding(buf, 32, 16)], [binding(buf, 16, 16)])
    return lambda: c.recorder.RecordDispatch(c.cl, compiled, table)


@void("IDMLCommandRecorder::RecordDispatch", "does not support in-place execution")
def hazard_in_place_without_support(c):
    """nf-directml-idmlbindingtable-bindinputs.md, Example 4: identical ranges are valid 'if and
    only if the operator being bound supports in-place execution' (IS_INFINITY's page does
    not say it does)."""
    compiled = c.isinf()
    buf = c.buffer(16)
    table = c.bound(compiled, [binding(buf, 0, 16)], [binding(buf, 0, 16)])
    return lambda: c.recorder.RecordDispatch(c.cl, compiled, table)


@void("IDMLCommandRecorder::RecordDispatch", "reference the same resource")
def hazard_initializer_input_is_output(c):
    """nf-directml-idmlbindingtable-bindinputs.md: 'When binding for initialization, an input
    binding can never reference the same resource as the output binding'."""
    init, table = c.init_table(c.owned_add())
    buf = c.buffer(512)
    table.BindInputs(1, [array_binding(None, (buf, 0, 16))])
    table.BindOutputs(1, [binding(buf, 256, 256)])
    return lambda: c.recorder.RecordDispatch(c.cl, init, table)


@void("IDMLCommandRecorder::RecordDispatch", "persistent resource", "overlaps output 0")
def hazard_persistent_overlaps_output(c):
    """nf-directml-idmlbindingtable-bindinputs.md: 'If present, a persistent binding must not
    intersect with any output binding or temporary binding.'"""
    compiled = c.owned_add()
    buf = c.buffer(512)
    a = c.buffer(16)
    table = c.bound(compiled, [binding(a), NONE], [binding(buf, 0, 16)])
    table.BindPersistentResource(binding(buf, 0, 256))
    return lambda: c.recorder.RecordDispatch(c.cl, compiled, table)


@void("IDMLCommandRecorder::RecordDispatch", "temporary resource", "overlaps input 0")
def hazard_temporary_overlaps_input(c):
    """nf-directml-idmlbindingtable-bindinputs.md: 'If present, a temporary binding must not
    intersect any input binding, output binding, or persistent binding.'"""
    compiled = c.add()
    buf = c.buffer(512)
    table = c.bound(compiled, [binding(buf, 0, 16), binding(c.buffer(16))],
                    [binding(c.buffer(16))])
    table.BindTemporaryResource(binding(buf, 0, 256))
    return lambda: c.recorder.RecordDispatch(c.cl, compiled, table)


@void("IDMLCommandRecorder::RecordDispatch", "SetDescriptorHeaps")
def record_without_descriptor_heap_set(c):
    """nf-directml-idmlcommandrecorder-recorddispatch.md: 'your application is responsible for
    calling ID3D12GraphicsCommandList::SetDescriptorHeaps to bind the correct descriptor
    heaps'."""
    compiled = c.add()
    table, _, _ = c.table(compiled)
    buf = c.buffer(16)
    table.BindInputs(2, [binding(buf), binding(buf)])
    table.BindOutputs(1, [binding(c.buffer(16))])
    return lambda: c.recorder.RecordDispatch(c.cl, compiled, table)


@void("IDMLCommandRecorder::RecordDispatch", "closed")
def record_into_closed_list(c):
    """nf-directml-idmlcommandrecorder-recorddispatch.md: 'The command list must be open'."""
    compiled = c.add()
    buf = c.buffer(16)
    table = c.bound(compiled, [binding(buf), binding(buf)], [binding(c.buffer(16))])
    c.cl.Close()
    return lambda: c.recorder.RecordDispatch(c.cl, compiled, table)


@void("IDMLCommandRecorder::RecordDispatch", "D3D12_COMMAND_LIST_TYPE_DIRECT or "
      "D3D12_COMMAND_LIST_TYPE_COMPUTE")
def record_into_copy_list(c):
    """nf-directml-idmlcommandrecorder-recorddispatch.md: the list 'must have type
    D3D12_COMMAND_LIST_TYPE_DIRECT or D3D12_COMMAND_LIST_TYPE_COMPUTE'."""
    compiled = c.add()
    buf = c.buffer(16)
    table = c.bound(compiled, [binding(buf), binding(buf)], [binding(c.buffer(16))])
    alloc = c.d3d.CreateCommandAllocator(dml.D3D12_COMMAND_LIST_TYPE_COPY)
    copy_list = c.d3d.CreateCommandList(0, dml.D3D12_COMMAND_LIST_TYPE_COPY, alloc)
    return lambda: c.recorder.RecordDispatch(copy_list, compiled, table)


@void("IDMLCommandRecorder::RecordDispatch", "required bindings are not set", "output 0")
def record_with_missing_binding(c):
    """nf-directml-idmlcommandrecorder-recorddispatch.md: 'If the
    DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE flag was not set, then you must fill out all
    required bindings, otherwise an error will result.'"""
    compiled = c.add()
    buf = c.buffer(16)
    table, heap, _ = c.table(compiled)
    table.BindInputs(2, [binding(buf), binding(buf)])
    c.cl.SetDescriptorHeaps(1, [heap])
    return lambda: c.recorder.RecordDispatch(c.cl, compiled, table)


@void("IDMLCommandRecorder::RecordDispatch", "the persistent resource")
def record_without_persistent_resource(c):
    """nf-directml-idmlbindingtable-bindpersistentresource.md: 'if an operator requires a
    persistent resource, then your application must ... supply it to all future executes'."""
    compiled = c.owned_add()
    table = c.bound(compiled, [binding(c.buffer(16)), NONE], [binding(c.buffer(16))])
    return lambda: c.recorder.RecordDispatch(c.cl, compiled, table)


@void("IDMLCommandRecorder::RecordDispatch", "different dispatchable")
def record_with_table_of_another_dispatchable(c):
    """nf-directml-idmlcommandrecorder-recorddispatch.md: bindings are 'the bindings to use for
    executing the dispatchable object' (ns-directml-dml_binding_table_desc.md: Dispatchable)."""
    compiled, other = c.add(), c.add()
    buf = c.buffer(16)
    table = c.bound(compiled, [binding(buf), binding(buf)], [binding(c.buffer(16))])
    return lambda: c.recorder.RecordDispatch(c.cl, other, table)


# ==== void D3D12 methods ====================================================================

@void("ID3D12CommandQueue::ExecuteCommandLists", "still open", code=dml.DXGI_ERROR_INVALID_CALL,
      device="d3d")
def execute_open_list(c):
    """D3D12 (ID3D12CommandQueue::ExecuteCommandLists): only closed command lists may be
    executed."""
    return lambda: c.queue.ExecuteCommandLists(1, [c.cl])


@void("ID3D12CommandQueue::ExecuteCommandLists", "failed to close",
      code=dml.DXGI_ERROR_INVALID_CALL, device="d3d")
def execute_list_that_failed_to_close(c):
    """D3D12 (ID3D12GraphicsCommandList::Close): a list whose recording failed cannot be
    executed."""
    c.cl.CopyBufferRegion(c.buffer(16), 8, c.buffer(16), 0, 16)
    with pytest.raises(dml.HResultError):
        c.cl.Close()
    return lambda: c.queue.ExecuteCommandLists(1, [c.cl])


@void("ID3D12CommandQueue::ExecuteCommandLists", "has type", code=dml.DXGI_ERROR_INVALID_CALL,
      device="d3d")
def execute_compute_list_on_copy_queue(c):
    """D3D12 (ID3D12CommandQueue::ExecuteCommandLists): the lists' type matches the queue's
    (a COPY queue runs COPY lists)."""
    queue = c.d3d.CreateCommandQueue(dml.D3D12_COMMAND_QUEUE_DESC(dml.D3D12_COMMAND_LIST_TYPE_COPY))
    c.cl.Close()
    return lambda: queue.ExecuteCommandLists(1, [c.cl])


# ==== command-list recording errors (sticky; Close fails) ====================================

@record("ID3D12GraphicsCommandList::CopyBufferRegion", "destination range [8, 24)")
def copy_past_destination_end(c):
    """D3D12 (ID3D12GraphicsCommandList::CopyBufferRegion): DstOffset + NumBytes lies within
    the destination buffer."""
    dst, src = c.buffer(16), c.buffer(16)
    return lambda: c.cl.CopyBufferRegion(dst, 8, src, 0, 16)


@record("ID3D12GraphicsCommandList::CopyBufferRegion", "source range [12, 20)")
def copy_past_source_end(c):
    """D3D12 (ID3D12GraphicsCommandList::CopyBufferRegion): SrcOffset + NumBytes lies within
    the source buffer."""
    dst, src = c.buffer(16), c.buffer(16)
    return lambda: c.cl.CopyBufferRegion(dst, 0, src, 12, 8)


@record("ID3D12GraphicsCommandList::CopyBufferRegion", "UPLOAD heap")
def copy_into_upload_heap(c):
    """D3D12 (D3D12_HEAP_TYPE_UPLOAD): the GPU only reads UPLOAD heaps."""
    dst, src = c.buffer(16, UPLOAD), c.buffer(16)
    return lambda: c.cl.CopyBufferRegion(dst, 0, src, 0, 16)


@record("ID3D12GraphicsCommandList::CopyBufferRegion", "READBACK heap")
def copy_from_readback_heap(c):
    """D3D12 (D3D12_HEAP_TYPE_READBACK): the GPU only writes READBACK heaps."""
    dst, src = c.buffer(16), c.buffer(16, READBACK)
    return lambda: c.cl.CopyBufferRegion(dst, 0, src, 0, 16)


@record("ID3D12GraphicsCommandList::CopyResource", "differ in size")
def copy_resource_size_mismatch(c):
    """D3D12 (ID3D12GraphicsCommandList::CopyResource): source and destination 'Must be
    different resources' of identical dimensions."""
    dst, src = c.buffer(32), c.buffer(16)
    return lambda: c.cl.CopyResource(dst, src)


@record("ID3D12GraphicsCommandList::ResourceBarrier", "must change the state")
def barrier_same_states(c):
    """D3D12 (D3D12_RESOURCE_TRANSITION_BARRIER): StateBefore and StateAfter differ."""
    buf = c.buffer(16)
    b = dml.CD3DX12_RESOURCE_BARRIER.Transition(buf, dml.D3D12_RESOURCE_STATE_UNORDERED_ACCESS,
                                                dml.D3D12_RESOURCE_STATE_UNORDERED_ACCESS)
    return lambda: c.cl.ResourceBarrier(1, [b])


@record("ID3D12GraphicsCommandList::ResourceBarrier", "state cannot change")
def barrier_on_upload_heap(c):
    """D3D12 (D3D12_HEAP_TYPE_UPLOAD): upload-heap resources stay in GENERIC_READ; they cannot
    be transitioned."""
    b = dml.CD3DX12_RESOURCE_BARRIER.Transition(c.buffer(16, UPLOAD),
                                                dml.D3D12_RESOURCE_STATE_GENERIC_READ,
                                                dml.D3D12_RESOURCE_STATE_COPY_DEST)
    return lambda: c.cl.ResourceBarrier(1, [b])


@record("ID3D12GraphicsCommandList::SetDescriptorHeaps", "shader-visible")
def set_non_visible_descriptor_heap(c):
    """D3D12 (ID3D12GraphicsCommandList::SetDescriptorHeaps): only shader-visible heaps, at most
    one per type, may be set."""
    heap = c.d3d.CreateDescriptorHeap(dml.D3D12_DESCRIPTOR_HEAP_DESC(0, 4, 0))
    return lambda: c.cl.SetDescriptorHeaps(1, [heap])


# ==== faults found at execution =============================================================

@execution("executed before an operator initializer initialized it")
def execute_uninitialized_operator(c):
    """nf-directml-idmldevice-createoperatorinitializer.md: 'Once compiled, an operator must be
    initialized exactly once on the GPU before it can be executed.'"""
    compiled = c.add()
    buf = c.buffer(16)
    table = c.bound(compiled, [binding(buf), binding(buf)], [binding(c.buffer(16))])
    c.recorder.RecordDispatch(c.cl, compiled, table)
    c.cl.Close()
    c.queue.ExecuteCommandLists(1, [c.cl])


@execution("initialized twice")
def initialize_twice(c):
    """nf-directml-idmldevice-createoperatorinitializer.md: an operator is 'initialized exactly
    once'."""
    compiled = c.add()
    init, table = c.init_table(compiled)
    c.recorder.RecordDispatch(c.cl, init, table)
    c.recorder.RecordDispatch(c.cl, init, table)
    c.cl.Close()
    c.queue.ExecuteCommandLists(1, [c.cl])


# ==== the tests ==============================================================================

def test_at_least_forty_distinct_misuses():
    assert len(HR) + len(VOID) + len(RECORD) + len(EXEC) >= 40
    for p in HR + VOID + RECORD + EXEC:
        fn = p.values[0]
        doc = fn.__doc__ or ""
        assert ".md" in doc or "D3D12" in doc or "DXGI" in doc, \
            f"{fn.__name__}: the docstring cites no rule"


@pytest.mark.parametrize("fn,code,prefix,snippets", HR)
def test_hresult_misuse(fn, code, prefix, snippets):
    c = Ctx()
    with pytest.raises(dml.HResultError) as info:
        fn(c)
    err = info.value
    assert err.hresult == code, f"{dml.hresult_name(err.hresult)}: {err}"
    msg = str(err)
    assert msg.startswith(prefix), msg
    for s in snippets:
        assert s in msg, f"{s!r} not in {msg!r}"
    if code != dml.DXGI_ERROR_DEVICE_REMOVED:  # an HRESULT failure removes nothing
        assert c.dml.GetDeviceRemovedReason() == dml.S_OK
        assert c.d3d.GetDeviceRemovedReason() == dml.S_OK


@pytest.mark.parametrize("strict", [False, True], ids=["removes", "strict"])
@pytest.mark.parametrize("fn,method,snippets,code,device", VOID)
def test_void_misuse(fn, method, snippets, code, device, strict):
    c = Ctx()
    act = fn(c)
    removed_dev = c.dml if device == "dml" else c.d3d
    if strict:
        with strict_mode(True), pytest.raises(dml.HResultError) as info:
            act()
        assert info.value.hresult == code
        msg = str(info.value)
        assert removed_dev.GetDeviceRemovedReason() == dml.S_OK
    else:
        assert act() is None  # a void method returns nothing and raises nothing
        assert removed_dev.GetDeviceRemovedReason() == code
        assert c.dml.GetDeviceRemovedReason() == code  # D3D12 removal removes DirectML too
        msg = removed_dev._core.removed_message
        with pytest.raises(dml.HResultError) as info:
            c.dml.CreateOperator(c.add_desc())
        assert info.value.hresult == dml.DXGI_ERROR_DEVICE_REMOVED
        assert method in str(info.value)  # the later error repeats the cause
    assert msg.startswith(method), msg
    for s in snippets:
        assert s in msg, f"{s!r} not in {msg!r}"


@pytest.mark.parametrize("strict", [False, True], ids=["sticky", "strict"])
@pytest.mark.parametrize("fn,method,snippets", RECORD)
def test_recording_error(fn, method, snippets, strict):
    c = Ctx()
    act = fn(c)
    if strict:
        with strict_mode(True), pytest.raises(dml.HResultError) as info:
            act()
        assert info.value.hresult == E_INVALIDARG
        msg = str(info.value)
        assert c.cl.Close() == dml.S_OK  # nothing was recorded: the list closes cleanly
    else:
        assert act() is None
        with pytest.raises(dml.HResultError) as info:
            c.cl.Close()
        assert info.value.hresult == E_INVALIDARG
        msg = str(info.value)
        assert msg.startswith("ID3D12GraphicsCommandList::Close")
    assert method in msg
    for s in snippets:
        assert s in msg, f"{s!r} not in {msg!r}"
    assert c.d3d.GetDeviceRemovedReason() == dml.S_OK


@pytest.mark.parametrize("fn,snippets", EXEC)
def test_execution_fault_removes_device(fn, snippets):
    c = Ctx()
    fn(c)
    assert c.d3d.GetDeviceRemovedReason() == dml.DXGI_ERROR_DEVICE_REMOVED
    assert c.dml.GetDeviceRemovedReason() == dml.DXGI_ERROR_DEVICE_REMOVED
    msg = c.d3d._core.removed_message
    assert msg.startswith("ID3D12CommandQueue::ExecuteCommandLists"), msg
    for s in snippets:
        assert s in msg, msg
    assert c.fence.GetCompletedValue() == 0xFFFFFFFFFFFFFFFF  # as D3D12 reports after removal
    with pytest.raises(dml.HResultError) as info:  # Signal returns an HRESULT
        c.queue.Signal(c.fence, 1)
    assert info.value.hresult == dml.DXGI_ERROR_DEVICE_REMOVED
    assert str(info.value).startswith("ID3D12CommandQueue::Signal"), str(info.value)


# ==== a failed call changes no state ===========================================================

def _slots(heap):
    return list(heap._core.slots)


@pytest.mark.parametrize("strict", [False, True], ids=["removes", "strict"])
def test_failed_bind_inputs_keeps_previous_descriptors(strict):
    """A rejected BindInputs writes nothing into the heap: the descriptors of the previous
    successful BindInputs stay (in strict mode the table still works)."""
    c = Ctx()
    compiled = c.add()
    init, itable = c.init_table(compiled)
    c.recorder.RecordDispatch(c.cl, init, itable)
    a = c.device_buffer(np.float32([1, 2, 3, 4]))
    out = c.buffer(16)
    c.flush()
    table, heap, _ = c.table(compiled)
    table.BindInputs(2, [binding(a), binding(a)])
    table.BindOutputs(1, [binding(out)])
    before = _slots(heap)
    with strict_mode(strict):
        if strict:
            with pytest.raises(dml.HResultError):
                table.BindInputs(2, [binding(a, 8, 16), binding(a)])
        else:
            table.BindInputs(2, [binding(a, 8, 16), binding(a)])
    assert _slots(heap) == before
    if strict:
        c.cl.SetDescriptorHeaps(1, [heap])
        c.recorder.RecordDispatch(c.cl, compiled, table)
        c.flush()
        np.testing.assert_array_equal(c.read(out).view(np.float32), [2, 4, 6, 8])
    else:
        # removed: later void calls are no-ops (dml-errors.md) and change nothing either
        table.BindInputs(2, [binding(out), binding(out)])
        assert _slots(heap) == before


def test_failed_create_operator_creates_nothing():
    """CreateOperator fails atomically: it returns no object, removes nothing, and the device
    goes on creating operators."""
    c = Ctx()
    cache = dict(c.dml._core.compile_cache)
    with pytest.raises(dml.HResultError):
        c.dml.CreateOperator(c.add_desc(b=tensor(np.float16, [4])))
    assert c.dml.GetDeviceRemovedReason() == dml.S_OK
    assert c.dml._core.compile_cache == cache
    assert isinstance(c.dml.CreateOperator(c.add_desc()), dml.IDMLOperator)


def test_failed_create_binding_table_writes_no_descriptor():
    """A rejected CreateBindingTable leaves the heap's descriptors as they were."""
    c = Ctx()
    compiled = c.add()
    table, heap, desc = c.table(compiled)
    table.BindInputs(2, [binding(c.buffer(16)), binding(c.buffer(16))])
    before = _slots(heap)
    desc.SizeInDescriptors = 2
    with pytest.raises(dml.HResultError):
        c.dml.CreateBindingTable(desc)
    assert _slots(heap) == before


@pytest.mark.parametrize("strict", [False, True], ids=["removes", "strict"])
def test_failed_record_dispatch_appends_nothing(strict):
    c = Ctx()
    compiled = c.add()
    table, heap, _ = c.table(compiled)  # no heap set, nothing bound
    before = len(c.cl._core.records)
    with strict_mode(strict):
        try:
            c.recorder.RecordDispatch(c.cl, compiled, table)
        except dml.HResultError:
            assert strict
    assert len(c.cl._core.records) == before


def test_failed_execute_command_lists_runs_nothing():
    """ExecuteCommandLists with a closed list and an open one: the device is removed and the
    closed list's copy never ran (the call is checked before anything is submitted)."""
    c = Ctx()
    dst = c.buffer(16)
    up = c.upload_buffer(np.arange(16, dtype=np.uint8))
    c.cl.CopyBufferRegion(dst, 0, up, 0, 16)
    c.cl.Close()
    alloc2 = c.d3d.CreateCommandAllocator(0)
    open_list = c.d3d.CreateCommandList(0, 0, alloc2)
    c.queue.ExecuteCommandLists(2, [c.cl, open_list])
    assert c.d3d.GetDeviceRemovedReason() == dml.DXGI_ERROR_INVALID_CALL
    assert "command list 1 is still open" in c.d3d._core.removed_message
    assert dst._core.memory.to_numpy().tolist() == [0] * 16


def test_empty_binding_table_becomes_usable_after_reset():
    """nf-directml-idmlbindingtable-reset.md / createbindingtable.md: a null desc makes an empty
    binding table; Reset with a desc gives it a dispatchable and a descriptor range."""
    c = Ctx()
    compiled = c.add()
    init, itable = c.init_table(compiled)
    c.recorder.RecordDispatch(c.cl, init, itable)
    a = c.device_buffer(np.float32([1, 2, 3, 4]))
    out = c.buffer(16)
    c.flush()
    table = c.dml.CreateBindingTable(None)
    _, heap, desc = c.table(compiled)
    assert table.Reset(desc) == dml.S_OK
    table.BindInputs(2, [binding(a), binding(a)])
    table.BindOutputs(1, [binding(out)])
    c.cl.SetDescriptorHeaps(1, [heap])
    c.recorder.RecordDispatch(c.cl, compiled, table)
    c.flush()
    np.testing.assert_array_equal(c.read(out).view(np.float32), [2, 4, 6, 8])
    assert table.Reset(None) == dml.S_OK

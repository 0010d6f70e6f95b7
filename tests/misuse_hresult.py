"""Misuses of HRESULT methods (CreateOperator, CompileOperator, CreateBindingTable, device and D3D12 object creation), registered with @hr."""
from __future__ import annotations

import numpy as np

import dmlsim as dml

from helpers import UPLOAD, READBACK, binding, tensor
from misuse import ADD, E_FAIL, E_INVALIDARG, OWNED, hr

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
    (docs/calling_convention.md: 'DEFAULT buffers cannot be mapped (E_INVALIDARG), as in D3D12')."""
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

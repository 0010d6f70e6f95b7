"""Misuses of void methods (Bind*, RecordDispatch, ExecuteCommandLists), command-list recording errors and execution faults, registered with @void, @record and @execution."""
from __future__ import annotations

import numpy as np
import pytest

import dmlsim as dml

from helpers import NONE, UPLOAD, READBACK, array_binding, binding, tensor
from misuse import execution, record, void

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

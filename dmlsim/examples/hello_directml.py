"""HelloDirectML, ported line by line from microsoft/DirectML's Samples/HelloDirectML to dmlsim.

Creates a D3D12 device, queue, allocator and command list; a DirectML device; an identity
operator over a FLOAT32 {1, 2, 3, 4} tensor; initializes it, uploads 1.618 into every element,
dispatches it, reads the output back and prints both tensors.

    python examples/hello_directml.py [--debug]      (in a checkout)
    dmlsim hello [--debug]                           (any install)
"""
import sys

import numpy as np

import dmlsim as dml


def initialize_direct3d12(debug):
    if debug:
        d3d12_debug = dml.D3D12GetDebugInterface()
        d3d12_debug.EnableDebugLayer()

    dxgi_factory = dml.CreateDXGIFactory1()
    adapter_index = 0
    while True:
        dxgi_adapter = dxgi_factory.EnumAdapters(adapter_index)  # DXGI_ERROR_NOT_FOUND past the last
        adapter_index += 1
        try:
            d3d12_device = dml.D3D12CreateDevice(dxgi_adapter, dml.D3D_FEATURE_LEVEL_11_0)
            break
        except dml.HResultError as e:
            if e.hresult == dml.DXGI_ERROR_UNSUPPORTED:
                continue
            raise

    command_queue_desc = dml.D3D12_COMMAND_QUEUE_DESC()
    command_queue_desc.Type = dml.D3D12_COMMAND_LIST_TYPE_DIRECT
    command_queue_desc.Flags = dml.D3D12_COMMAND_QUEUE_FLAG_NONE
    command_queue = d3d12_device.CreateCommandQueue(command_queue_desc)
    command_allocator = d3d12_device.CreateCommandAllocator(dml.D3D12_COMMAND_LIST_TYPE_DIRECT)
    command_list = d3d12_device.CreateCommandList(
        0, dml.D3D12_COMMAND_LIST_TYPE_DIRECT, command_allocator, None)
    return d3d12_device, command_queue, command_allocator, command_list


def close_execute_reset_wait(d3d12_device, command_queue, command_allocator, command_list):
    command_list.Close()
    command_lists = [command_list]
    command_queue.ExecuteCommandLists(len(command_lists), command_lists)

    d3d12_fence = d3d12_device.CreateFence(0, dml.D3D12_FENCE_FLAG_NONE)
    fence_event_handle = dml.CreateEvent(None, True, False, None)
    command_queue.Signal(d3d12_fence, 1)
    d3d12_fence.SetEventOnCompletion(1, fence_event_handle)
    dml.WaitForSingleObjectEx(fence_event_handle, dml.INFINITE, False)

    command_allocator.Reset()
    command_list.Reset(command_allocator, None)


def main(debug=False):
    d3d12_device, command_queue, command_allocator, command_list = initialize_direct3d12(debug)

    dml_create_device_flags = dml.DML_CREATE_DEVICE_FLAG_NONE
    if debug:
        dml_create_device_flags |= dml.DML_CREATE_DEVICE_FLAG_DEBUG
    dml_device = dml.DMLCreateDevice(d3d12_device, dml_create_device_flags)

    tensor_sizes = [1, 2, 3, 4]
    tensor_element_count = int(np.prod(tensor_sizes))

    dml_buffer_tensor_desc = dml.DML_BUFFER_TENSOR_DESC()
    dml_buffer_tensor_desc.DataType = dml.DML_TENSOR_DATA_TYPE_FLOAT32
    dml_buffer_tensor_desc.Flags = dml.DML_TENSOR_FLAG_NONE
    dml_buffer_tensor_desc.DimensionCount = len(tensor_sizes)
    dml_buffer_tensor_desc.Sizes = tensor_sizes
    dml_buffer_tensor_desc.Strides = None
    dml_buffer_tensor_desc.TotalTensorSizeInBytes = dml.DMLCalcBufferTensorSize(
        dml_buffer_tensor_desc.DataType, dml_buffer_tensor_desc.DimensionCount,
        dml_buffer_tensor_desc.Sizes, dml_buffer_tensor_desc.Strides)

    # Create the identity operator: f(x) = x for every element.
    dml_tensor_desc = dml.DML_TENSOR_DESC()
    dml_tensor_desc.Type = dml.DML_TENSOR_TYPE_BUFFER
    dml_tensor_desc.Desc = dml_buffer_tensor_desc

    dml_identity_operator_desc = dml.DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC()
    dml_identity_operator_desc.InputTensor = dml_tensor_desc
    dml_identity_operator_desc.OutputTensor = dml_tensor_desc  # same size and type

    dml_operator_desc = dml.DML_OPERATOR_DESC()
    dml_operator_desc.Type = dml.DML_OPERATOR_ELEMENT_WISE_IDENTITY
    dml_operator_desc.Desc = dml_identity_operator_desc
    dml_operator = dml_device.CreateOperator(dml_operator_desc)

    dml_compiled_operator = dml_device.CompileOperator(dml_operator, dml.DML_EXECUTION_FLAG_NONE)

    # 24 elements * 4 == 96 bytes.
    tensor_buffer_size = dml_buffer_tensor_desc.TotalTensorSizeInBytes

    dml_compiled_operators = [dml_compiled_operator]
    dml_operator_initializer = dml_device.CreateOperatorInitializer(
        len(dml_compiled_operators), dml_compiled_operators)

    # Initialize exactly once before executing; one heap large enough for both stages.
    initialize_binding_properties = dml_operator_initializer.GetBindingProperties()
    execute_binding_properties = dml_compiled_operator.GetBindingProperties()
    descriptor_count = max(initialize_binding_properties.RequiredDescriptorCount,
                           execute_binding_properties.RequiredDescriptorCount)

    descriptor_heap_desc = dml.D3D12_DESCRIPTOR_HEAP_DESC()
    descriptor_heap_desc.Type = dml.D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV
    descriptor_heap_desc.NumDescriptors = descriptor_count
    descriptor_heap_desc.Flags = dml.D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE
    descriptor_heap = d3d12_device.CreateDescriptorHeap(descriptor_heap_desc)

    d3d12_descriptor_heaps = [descriptor_heap]
    command_list.SetDescriptorHeaps(len(d3d12_descriptor_heaps), d3d12_descriptor_heaps)

    dml_binding_table_desc = dml.DML_BINDING_TABLE_DESC()
    dml_binding_table_desc.Dispatchable = dml_operator_initializer
    dml_binding_table_desc.CPUDescriptorHandle = descriptor_heap.GetCPUDescriptorHandleForHeapStart()
    dml_binding_table_desc.GPUDescriptorHandle = descriptor_heap.GetGPUDescriptorHandleForHeapStart()
    dml_binding_table_desc.SizeInDescriptors = descriptor_count
    dml_binding_table = dml_device.CreateBindingTable(dml_binding_table_desc)

    temporary_resource_size = max(initialize_binding_properties.TemporaryResourceSize,
                                  execute_binding_properties.TemporaryResourceSize)
    persistent_resource_size = execute_binding_properties.PersistentResourceSize

    temporary_buffer = None
    if temporary_resource_size != 0:
        temporary_buffer = d3d12_device.CreateCommittedResource(
            dml.CD3DX12_HEAP_PROPERTIES(dml.D3D12_HEAP_TYPE_DEFAULT), dml.D3D12_HEAP_FLAG_NONE,
            dml.CD3DX12_RESOURCE_DESC.Buffer(temporary_resource_size,
                                             dml.D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS),
            dml.D3D12_RESOURCE_STATE_COMMON, None)
        if initialize_binding_properties.TemporaryResourceSize != 0:
            buffer_binding = dml.DML_BUFFER_BINDING(temporary_buffer, 0, temporary_resource_size)
            dml_binding_table.BindTemporaryResource(
                dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER, buffer_binding))

    persistent_buffer = None
    if persistent_resource_size != 0:
        persistent_buffer = d3d12_device.CreateCommittedResource(
            dml.CD3DX12_HEAP_PROPERTIES(dml.D3D12_HEAP_TYPE_DEFAULT), dml.D3D12_HEAP_FLAG_NONE,
            dml.CD3DX12_RESOURCE_DESC.Buffer(persistent_resource_size),
            dml.D3D12_RESOURCE_STATE_COMMON, None)
        buffer_binding = dml.DML_BUFFER_BINDING(persistent_buffer, 0, persistent_resource_size)
        dml_binding_table.BindOutputs(
            1, [dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER, buffer_binding)])

    dml_command_recorder = dml_device.CreateCommandRecorder()
    dml_command_recorder.RecordDispatch(command_list, dml_operator_initializer, dml_binding_table)
    close_execute_reset_wait(d3d12_device, command_queue, command_allocator, command_list)

    # Bind and execute the operator.
    command_list.SetDescriptorHeaps(len(d3d12_descriptor_heaps), d3d12_descriptor_heaps)
    dml_binding_table_desc.Dispatchable = dml_compiled_operator
    dml_binding_table.Reset(dml_binding_table_desc)

    if temporary_resource_size != 0:
        buffer_binding = dml.DML_BUFFER_BINDING(temporary_buffer, 0, temporary_resource_size)
        dml_binding_table.BindTemporaryResource(
            dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER, buffer_binding))
    if persistent_resource_size != 0:
        buffer_binding = dml.DML_BUFFER_BINDING(persistent_buffer, 0, persistent_resource_size)
        dml_binding_table.BindPersistentResource(
            dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER, buffer_binding))

    upload_buffer = d3d12_device.CreateCommittedResource(
        dml.CD3DX12_HEAP_PROPERTIES(dml.D3D12_HEAP_TYPE_UPLOAD), dml.D3D12_HEAP_FLAG_NONE,
        dml.CD3DX12_RESOURCE_DESC.Buffer(tensor_buffer_size),
        dml.D3D12_RESOURCE_STATE_GENERIC_READ, None)
    input_buffer = d3d12_device.CreateCommittedResource(
        dml.CD3DX12_HEAP_PROPERTIES(dml.D3D12_HEAP_TYPE_DEFAULT), dml.D3D12_HEAP_FLAG_NONE,
        dml.CD3DX12_RESOURCE_DESC.Buffer(tensor_buffer_size,
                                         dml.D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS),
        dml.D3D12_RESOURCE_STATE_COPY_DEST, None)

    input_tensor_element_array = np.full(tensor_element_count, 1.618, dtype=np.float32)
    print("input tensor: " + " ".join(f"{v:.2f}" for v in input_tensor_element_array))

    tensor_subresource_data = dml.D3D12_SUBRESOURCE_DATA()
    tensor_subresource_data.pData = input_tensor_element_array
    tensor_subresource_data.RowPitch = tensor_buffer_size
    tensor_subresource_data.SlicePitch = tensor_subresource_data.RowPitch
    dml.UpdateSubresources(command_list, input_buffer, upload_buffer, 0, 0, 1,
                           [tensor_subresource_data])
    command_list.ResourceBarrier(1, [dml.CD3DX12_RESOURCE_BARRIER.Transition(
        input_buffer, dml.D3D12_RESOURCE_STATE_COPY_DEST, dml.D3D12_RESOURCE_STATE_UNORDERED_ACCESS)])

    input_buffer_binding = dml.DML_BUFFER_BINDING(input_buffer, 0, tensor_buffer_size)
    input_binding_desc = dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER, input_buffer_binding)
    dml_binding_table.BindInputs(1, [input_binding_desc])

    output_buffer = d3d12_device.CreateCommittedResource(
        dml.CD3DX12_HEAP_PROPERTIES(dml.D3D12_HEAP_TYPE_DEFAULT), dml.D3D12_HEAP_FLAG_NONE,
        dml.CD3DX12_RESOURCE_DESC.Buffer(tensor_buffer_size,
                                         dml.D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS),
        dml.D3D12_RESOURCE_STATE_UNORDERED_ACCESS, None)
    output_buffer_binding = dml.DML_BUFFER_BINDING(output_buffer, 0, tensor_buffer_size)
    output_binding_desc = dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER, output_buffer_binding)
    dml_binding_table.BindOutputs(1, [output_binding_desc])

    dml_command_recorder.RecordDispatch(command_list, dml_compiled_operator, dml_binding_table)
    close_execute_reset_wait(d3d12_device, command_queue, command_allocator, command_list)

    # Read the output back.
    readback_buffer = d3d12_device.CreateCommittedResource(
        dml.CD3DX12_HEAP_PROPERTIES(dml.D3D12_HEAP_TYPE_READBACK), dml.D3D12_HEAP_FLAG_NONE,
        dml.CD3DX12_RESOURCE_DESC.Buffer(tensor_buffer_size),
        dml.D3D12_RESOURCE_STATE_COPY_DEST, None)
    command_list.ResourceBarrier(1, [dml.CD3DX12_RESOURCE_BARRIER.Transition(
        output_buffer, dml.D3D12_RESOURCE_STATE_UNORDERED_ACCESS, dml.D3D12_RESOURCE_STATE_COPY_SOURCE)])
    command_list.CopyResource(readback_buffer, output_buffer)
    close_execute_reset_wait(d3d12_device, command_queue, command_allocator, command_list)

    tensor_buffer_range = dml.D3D12_RANGE(0, tensor_buffer_size)
    output_buffer_data = readback_buffer.Map(0, tensor_buffer_range).view(np.float32)
    output = output_buffer_data[:tensor_element_count].copy()
    print("output tensor: " + " ".join(f"{v:.6f}" for v in output))
    readback_buffer.Unmap(0, dml.D3D12_RANGE(0, 0))

    removed = dml_device.GetDeviceRemovedReason()
    if removed != dml.S_OK:
        raise SystemExit(f"device removed: {dml.hresult_name(removed)}")
    return input_tensor_element_array, output


if __name__ == "__main__":
    main(debug="--debug" in sys.argv)

"""The debug layer on a broken program, then on the fixed one.

The program computes z = (x + x) * (x + x) with two DirectML dispatches (ADD, then MULTIPLY)
and reads z back. The broken version makes three classic mistakes:

1. it dispatches on ``x`` while ``x`` is still in COPY_DEST after the upload (no transition);
2. MULTIPLY reads ``y`` that ADD writes, with no UAV barrier in between;
3. it maps the readback buffer before waiting for the fence.

dmlsim runs commands in order, so the broken program even prints the right numbers; on a GPU
each mistake is a race or undefined behaviour. The debug layers (D3D12GetDebugInterface().
EnableDebugLayer() and DML_CREATE_DEVICE_FLAG_DEBUG) name each one; the fixed program is
silent.

    python examples/debug_layer_demo.py
"""
import numpy as np

import dmlsim as dml

T = dml.CD3DX12_RESOURCE_BARRIER
UAV, COPY_DEST, COPY_SOURCE = (dml.D3D12_RESOURCE_STATE_UNORDERED_ACCESS,
                               dml.D3D12_RESOURCE_STATE_COPY_DEST,
                               dml.D3D12_RESOURCE_STATE_COPY_SOURCE)


def named(obj, name):
    obj.SetName(name)
    return obj


def run(fixed):
    """Run the program; returns (z, the info queue's messages as D3D12 lines)."""
    dml.D3D12GetDebugInterface().EnableDebugLayer()
    d3d = named(dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0), "device")
    info_queue = d3d.QueryInterface(dml.ID3D12InfoQueue)
    info_queue.SetMuteDebugOutput(True)  # we print the messages ourselves below
    dml_device = dml.DMLCreateDevice(d3d, dml.DML_CREATE_DEVICE_FLAG_DEBUG)
    queue = named(d3d.CreateCommandQueue(dml.D3D12_COMMAND_QUEUE_DESC()), "queue")
    allocator = d3d.CreateCommandAllocator(dml.D3D12_COMMAND_LIST_TYPE_DIRECT)
    cl = named(d3d.CreateCommandList(0, dml.D3D12_COMMAND_LIST_TYPE_DIRECT, allocator), "frame")
    fence, fence_value = d3d.CreateFence(0), 0
    heap = named(d3d.CreateDescriptorHeap(dml.D3D12_DESCRIPTOR_HEAP_DESC(
        dml.D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV, 16,
        dml.D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE)), "heap")
    recorder = dml_device.CreateCommandRecorder()

    x = np.array([1, 2, 3, 4], np.float32)
    ops = []
    for name, kind in (("add", "ELEMENT_WISE_ADD"), ("mul", "ELEMENT_WISE_MULTIPLY")):
        desc = dml.operator_desc(kind, ATensor=x, BTensor=x, OutputTensor=x)
        op = dml_device.CreateOperator(desc)
        ops.append(named(dml_device.CompileOperator(op, dml.DML_EXECUTION_FLAG_NONE), name))
    add, mul = ops

    def table(dispatchable, start, name):
        count = dispatchable.GetBindingProperties().RequiredDescriptorCount
        inc = d3d.GetDescriptorHandleIncrementSize(dml.D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV)
        return named(dml_device.CreateBindingTable(dml.DML_BINDING_TABLE_DESC(
            dispatchable, heap.GetCPUDescriptorHandleForHeapStart() + start * inc,
            heap.GetGPUDescriptorHandleForHeapStart() + start * inc, count)), name)

    def buffer(name, heap_type, state):
        flags = dml.D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS \
            if heap_type == dml.D3D12_HEAP_TYPE_DEFAULT else dml.D3D12_RESOURCE_FLAG_NONE
        return named(d3d.CreateCommittedResource(
            dml.CD3DX12_HEAP_PROPERTIES(heap_type), dml.D3D12_HEAP_FLAG_NONE,
            dml.CD3DX12_RESOURCE_DESC.Buffer(x.nbytes, flags), state, None), name)

    def binding(resource):
        return dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER,
                                    dml.DML_BUFFER_BINDING(resource, 0, x.nbytes))

    def execute():
        nonlocal fence_value
        cl.Close()
        queue.ExecuteCommandLists([cl])
        fence_value += 1
        queue.Signal(fence, fence_value)

    def wait():
        event = dml.CreateEvent()
        fence.SetEventOnCompletion(fence_value, event)
        dml.WaitForSingleObject(event, dml.INFINITE)
        allocator.Reset()
        cl.Reset(allocator, None)

    # Initialize both operators (no persistent resources needed here).
    init = named(dml_device.CreateOperatorInitializer([add, mul]), "init")
    cl.SetDescriptorHeaps([heap])
    recorder.RecordDispatch(cl, init, table(init, 0, "init table"))
    execute()
    wait()

    xb = buffer("x", dml.D3D12_HEAP_TYPE_DEFAULT, COPY_DEST)
    yb = buffer("y", dml.D3D12_HEAP_TYPE_DEFAULT, dml.D3D12_RESOURCE_STATE_COMMON)
    zb = buffer("z", dml.D3D12_HEAP_TYPE_DEFAULT, dml.D3D12_RESOURCE_STATE_COMMON)
    upload = buffer("upload", dml.D3D12_HEAP_TYPE_UPLOAD, dml.D3D12_RESOURCE_STATE_GENERIC_READ)
    readback = buffer("readback", dml.D3D12_HEAP_TYPE_READBACK, COPY_DEST)
    dml.UpdateSubresources(cl, xb, upload, 0, 0, 1, [dml.D3D12_SUBRESOURCE_DATA(x, x.nbytes)])
    if fixed:  # mistake 1: x must be UNORDERED_ACCESS for DirectML
        cl.ResourceBarrier([T.Transition(xb, COPY_DEST, UAV)])

    add_table = table(add, 4, "add table")
    add_table.BindInputs([binding(xb), binding(xb)])
    add_table.BindOutputs([binding(yb)])
    mul_table = table(mul, 8, "mul table")
    mul_table.BindInputs([binding(yb), binding(yb)])
    mul_table.BindOutputs([binding(zb)])
    cl.SetDescriptorHeaps([heap])
    recorder.RecordDispatch(cl, add, add_table)
    if fixed:  # mistake 2: MULTIPLY reads what ADD writes
        cl.ResourceBarrier([T.UAV(yb)])
    recorder.RecordDispatch(cl, mul, mul_table)
    cl.ResourceBarrier([T.Transition(zb, UAV, COPY_SOURCE)])  # z was promoted to UAV
    cl.CopyResource(readback, zb)
    execute()
    if fixed:  # mistake 3: wait for the GPU before reading its results
        wait()
    z = readback.Map(0, dml.D3D12_RANGE(0, x.nbytes)).view(np.float32).copy()
    readback.Unmap(0, dml.D3D12_RANGE(0, 0))
    if not fixed:
        wait()

    lines = []
    for i in range(info_queue.GetNumStoredMessages()):
        m = info_queue.GetMessage(i)
        lines.append(f"D3D12 {m.Severity.name.split('_')[-1]}: {m.pDescription} "
                     f"[ {m.Category.name[23:]} {m.Severity.name.split('_')[-1]} "
                     f"#{int(m.ID)}: {m.ID.name[17:]} ]")
    return z, lines


def main():
    for fixed in (False, True):
        z, lines = run(fixed)
        print(("fixed" if fixed else "broken") + f" program: z = {z}")
        for line in lines or ["(no debug-layer messages)"]:
            print("  " + line)
        print()


if __name__ == "__main__":
    main()

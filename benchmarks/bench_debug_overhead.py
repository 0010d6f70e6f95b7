"""Debug-layer cost: a loop of 8 ADD dispatches + UAV barriers, ExecuteCommandLists, Signal and
a fence wait, timed with both debug switches off and on, plus the cost of the guarded
``if device.observers:`` check that is all the hooks cost when the layer is off.

    python benchmarks/bench_debug_overhead.py

Not part of the test suite. Issue 4 asks that the checks cost nothing measurable when off.
"""
import time

import numpy as np
import dmlsim as dml

def run(debug, n=300, record_only=False):
    dml.ID3D12Debug.enabled = False
    if debug:
        dml.D3D12GetDebugInterface().EnableDebugLayer()
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    dev = dml.DMLCreateDevice(d3d, dml.DML_CREATE_DEVICE_FLAG_DEBUG if debug else 0)
    q = d3d.CreateCommandQueue(dml.D3D12_COMMAND_QUEUE_DESC(0))
    al = d3d.CreateCommandAllocator(0); cl = d3d.CreateCommandList(0, 0, al)
    heap = d3d.CreateDescriptorHeap(dml.D3D12_DESCRIPTOR_HEAP_DESC(0, 16, 1))
    f = d3d.CreateFence(0); v = 0
    a = np.zeros(64, np.float32)
    op = dev.CompileOperator(dev.CreateOperator(dml.operator_desc("ELEMENT_WISE_ADD", ATensor=a, BTensor=a, OutputTensor=a)), 0)
    init = dev.CreateOperatorInitializer([op])
    def table(d):
        n_ = d.GetBindingProperties().RequiredDescriptorCount
        return dev.CreateBindingTable(dml.DML_BINDING_TABLE_DESC(d, heap.GetCPUDescriptorHandleForHeapStart(), heap.GetGPUDescriptorHandleForHeapStart(), n_))
    rec = dev.CreateCommandRecorder()
    cl.SetDescriptorHeaps([heap]); rec.RecordDispatch(cl, init, table(init))
    cl.Close(); q.ExecuteCommandLists([cl]); v += 1; q.Signal(f, v); f.SetEventOnCompletion(v, None); al.Reset(); cl.Reset(al)
    mk = lambda: d3d.CreateCommittedResource(dml.CD3DX12_HEAP_PROPERTIES(1), 0, dml.CD3DX12_RESOURCE_DESC.Buffer(256, 4), dml.D3D12_RESOURCE_STATE_UNORDERED_ACCESS)
    A, B, C = mk(), mk(), mk()
    t = table(op)
    bb = lambda r: dml.DML_BINDING_DESC(1, dml.DML_BUFFER_BINDING(r, 0, 256))
    t.BindInputs([bb(A), bb(B)]); t.BindOutputs([bb(C)])
    uav = dml.CD3DX12_RESOURCE_BARRIER.UAV(None)
    def once():
        nonlocal v
        cl.SetDescriptorHeaps([heap])
        for _ in range(8):
            rec.RecordDispatch(cl, op, t)
            cl.ResourceBarrier([uav])
        cl.Close(); q.ExecuteCommandLists([cl]); v += 1; q.Signal(f, v)
        f.SetEventOnCompletion(v, None); al.Reset(); cl.Reset(al)
    for _ in range(20):
        once()
    best = []
    for rep in range(5):
        t0 = time.perf_counter()
        for _ in range(n // 5):
            once()
        best.append((time.perf_counter() - t0) / (n // 5))
    return min(best) * 1e6

def notify_cost():
    from dmlsim._core.resources import Device
    d = Device(None)
    N = 1_000_000
    t0 = time.perf_counter()
    for _ in range(N):
        if d.observers:
            d.observers.map(buffer=None, read_range=None)
    t1 = time.perf_counter()
    for _ in range(N):
        pass
    t2 = time.perf_counter()
    return ((t1 - t0) - (t2 - t1)) / N * 1e9

if __name__ == "__main__":
    import logging  # the loop reads never-written buffers on purpose: keep the log quiet
    logging.getLogger("dmlsim.debug").setLevel(logging.ERROR)
    off = [run(False) for _ in range(3)]
    on = [run(True) for _ in range(3)]
    print(f"off: {min(off):.0f} us per iteration (8 dispatches + barriers, execute, fence wait); runs {[round(x) for x in off]}")
    print(f"on : {min(on):.0f} us per iteration; runs {[round(x) for x in on]}")
    print(f"guarded notify check with no observer: {notify_cost():.1f} ns")

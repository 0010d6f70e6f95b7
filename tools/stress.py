"""Thread stress: N threads submit to 2 shared queues of one device, with fences, cross-queue
Waits and CPU-signalled gates; every result is checked exactly.

Each thread, per iteration i: fills an UPLOAD buffer with v + j (v unique to thread and
iteration), then on queue A copies it to a DEFAULT buffer and runs ELEMENT_WISE_ADD (x + x) into
another (every 4th iteration queue A first waits on a gate fence that a timer thread signals
from the CPU 1 ms later), signals its fence; queue B waits for that value, copies the sum to a
READBACK buffer and signals again; the thread waits for that (WaitForSingleObject, 30 s: longer
is a deadlock) and checks the bytes are 2 (v + j), exactly.

    python tools/stress.py [--threads 8] [--iterations 1000]
"""
from __future__ import annotations

import argparse
import threading
import time

import numpy as np

import dmlsim as dml

N = 16  # float32 elements per tensor


def _buffer(d3d, heap, size=N * 4):
    flags = dml.D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS if heap == 1 else 0
    state = {1: dml.D3D12_RESOURCE_STATE_UNORDERED_ACCESS, 2: dml.D3D12_RESOURCE_STATE_GENERIC_READ,
             3: dml.D3D12_RESOURCE_STATE_COPY_DEST}[heap]
    return d3d.CreateCommittedResource(dml.CD3DX12_HEAP_PROPERTIES(heap), 0,
                                       dml.CD3DX12_RESOURCE_DESC.Buffer(size, flags), state, None)


def _worker(t, iterations, d3d, dev, qa, qb, tally, tick):
    try:
        desc = dml.operator_desc("ELEMENT_WISE_ADD", ATensor=np.zeros(N, np.float32),
                                 BTensor=np.zeros(N, np.float32),
                                 OutputTensor=np.zeros(N, np.float32))
        op = dev.CompileOperator(dev.CreateOperator(desc), 0)
        up, x, y, rb = _buffer(d3d, 2), _buffer(d3d, 1), _buffer(d3d, 1), _buffer(d3d, 3)
        heap = d3d.CreateDescriptorHeap(dml.D3D12_DESCRIPTOR_HEAP_DESC(0, 8, 1))
        fence, gate = d3d.CreateFence(0, 0), d3d.CreateFence(0, 0)
        event = dml.CreateEvent(None, False, False, None)  # auto-reset, as samples use
        allocs = [d3d.CreateCommandAllocator(0) for _ in range(2)]
        lists = [d3d.CreateCommandList(0, 0, a, None) for a in allocs]
        for cl in lists:
            cl.Close()
        init = dev.CreateOperatorInitializer([op])
        table = dev.CreateBindingTable(dml.DML_BINDING_TABLE_DESC(
            init, heap.GetCPUDescriptorHandleForHeapStart(),
            heap.GetGPUDescriptorHandleForHeapStart(), 8))
        recorder = dev.CreateCommandRecorder()
        allocs[0].Reset()
        lists[0].Reset(allocs[0], None)
        lists[0].SetDescriptorHeaps([heap])
        recorder.RecordDispatch(lists[0], init, table)
        lists[0].Close()
        qa.ExecuteCommandLists([lists[0]])
        qa.Signal(fence, 1)
        fence.SetEventOnCompletion(1, None)
        table.Reset(dml.DML_BINDING_TABLE_DESC(op, heap.GetCPUDescriptorHandleForHeapStart(),
                                               heap.GetGPUDescriptorHandleForHeapStart(), 8))
        b = [dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER, dml.DML_BUFFER_BINDING(r, 0, N * 4))
             for r in (x, x, y)]
        table.BindInputs(b[:2])
        table.BindOutputs(b[2:])
        value = 1
        for i in range(iterations):
            v = float(t * 100_000 + i)
            up.Map(0, None)[:] = (v + np.arange(N, dtype=np.float32)).view(np.uint8)
            up.Unmap(0, None)
            allocs[0].Reset()
            cl = lists[0]
            cl.Reset(allocs[0], None)
            cl.SetDescriptorHeaps([heap])
            cl.CopyBufferRegion(x, 0, up, 0, N * 4)
            cl.ResourceBarrier([dml.CD3DX12_RESOURCE_BARRIER.UAV(None)])
            recorder.RecordDispatch(cl, op, table)
            cl.ResourceBarrier([dml.CD3DX12_RESOURCE_BARRIER.UAV(None)])
            cl.Close()
            if i % 4 == 3:
                g = i + 1
                qa.Wait(gate, g)
                threading.Timer(0.001, gate.Signal, (g,)).start()
            qa.ExecuteCommandLists([cl])
            qa.Signal(fence, value + 1)
            qb.Wait(fence, value + 1)
            allocs[1].Reset()
            cl2 = lists[1]
            cl2.Reset(allocs[1], None)
            cl2.CopyResource(rb, y)
            cl2.Close()
            qb.ExecuteCommandLists([cl2])
            qb.Signal(fence, value + 2)
            value += 2
            fence.SetEventOnCompletion(value, event)
            if dml.WaitForSingleObject(event, 30_000) != dml.WAIT_OBJECT_0:
                with tally["lock"]:
                    tally["deadlocks"] += 1
                return
            got = rb.Map(0, None)[:N * 4].view(np.float32).copy()
            rb.Unmap(0, None)
            want = 2 * (v + np.arange(N, dtype=np.float32))
            with tally["lock"]:
                tally["checked"] += 1
                tally["wrong"] += int(not np.array_equal(got, want))
            tick()
    except Exception as e:  # noqa: BLE001 -- counted: the stress run reports every failure
        with tally["lock"]:
            tally["errors"].append(f"thread {t}: {type(e).__name__}: {e}")


def stress(threads=8, iterations=1000, progress=False) -> dict:
    """Run the stress; returns {checked, wrong, deadlocks, errors, seconds}."""
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    dev = dml.DMLCreateDevice(d3d, 0)
    qa, qb = (d3d.CreateCommandQueue(dml.D3D12_COMMAND_QUEUE_DESC(0)) for _ in range(2))
    tally = {"lock": threading.Lock(), "checked": 0, "wrong": 0, "deadlocks": 0, "errors": []}
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=threads * iterations, unit="submission")
    start = time.perf_counter()
    workers = [threading.Thread(target=_worker, args=(t, iterations, d3d, dev, qa, qb, tally,
                                                      bar.update if bar else (lambda: None)))
               for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=600)
        if w.is_alive():
            tally["deadlocks"] += 1
    if bar:
        bar.close()
    out = {k: v for k, v in tally.items() if k != "lock"}
    out["seconds"] = round(time.perf_counter() - start, 2)
    out["removed"] = d3d.GetDeviceRemovedReason()
    return out


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--iterations", type=int, default=1000)
    a = p.parse_args()
    r = stress(a.threads, a.iterations, progress=True)
    print(f"{a.threads} threads x {a.iterations} submissions on 2 queues: {r['checked']} checked, "
          f"{r['wrong']} wrong, {r['deadlocks']} deadlocks, {len(r['errors'])} errors, "
          f"device removed reason {r['removed']:#x}, {r['seconds']} s")
    for e in r["errors"][:10]:
        print("  ", e)
    raise SystemExit(0 if not (r["wrong"] or r["deadlocks"] or r["errors"]) else 1)

"""Reliability (issue: thread-safe queues, lists snapshotted at submission, every bad argument an
HRESULT, bounded memory). One test per defect of the issue's list; each failed before the fix."""
import importlib.util
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import dmlsim as dml

from helpers import DEFAULT, READBACK, UPLOAD, Env, binding, strict_mode

ROOT = Path(__file__).resolve().parent.parent


def _tool(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# 1. queues, fences and markers are free-threaded ------------------------------------------------

def test_threads_on_two_queues_get_exact_results():
    """tools/stress.py at a small scale (the full 8 x 1,000 run is in the closing note)."""
    r = _tool("stress").stress(threads=8, iterations=40)
    assert r["errors"] == [] and r["deadlocks"] == 0 and r["removed"] == 0
    assert r["checked"] == 320 and r["wrong"] == 0


def test_a_cpu_signal_from_another_thread_releases_a_blocked_wait():
    env = Env()
    gate = env.d3d.CreateFence(0, 0)
    up = env.upload_buffer(np.arange(4, dtype=np.uint32))
    buf = env.buffer(16)
    env.queue.Wait(gate, 1)
    env.cl.CopyBufferRegion(buf, 0, up, 0, 16)
    value = env.submit()
    threading.Timer(0.05, gate.Signal, (1,)).start()
    env.fence.SetEventOnCompletion(value, None)  # blocks until the timer thread signals
    env.alloc.Reset()
    env.cl.Reset(env.alloc, None)
    assert env.read_as(buf, np.uint32).tolist() == [0, 1, 2, 3]


# 2. the operator registry loads once, whichever thread asks first --------------------------------

def test_first_create_operator_calls_from_many_threads_all_succeed():
    code = """
import threading, numpy as np, dmlsim as dml
d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
dev = dml.DMLCreateDevice(d3d, 0)
desc = dml.operator_desc("ELEMENT_WISE_ADD", ATensor=np.zeros(4, np.float32),
                         BTensor=np.zeros(4, np.float32), OutputTensor=np.zeros(4, np.float32))
errors, go = [], threading.Barrier(8)
def work():
    go.wait()
    try:
        dev.CreateOperator(desc)
    except Exception as e:
        errors.append(repr(e))
threads = [threading.Thread(target=work) for _ in range(8)]
[t.start() for t in threads]; [t.join() for t in threads]
print(len(errors), errors[:1])
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert out.stdout.strip().startswith("0 []"), out.stdout + out.stderr


# 3. what was submitted is what runs ------------------------------------------------------------

def test_a_list_reset_and_rerecorded_after_submission_runs_what_was_submitted():
    env = Env()
    gate = env.d3d.CreateFence(0, 0)
    first = env.upload_buffer(np.full(4, 7, np.uint32))
    second = env.upload_buffer(np.full(4, 9, np.uint32))
    buf = env.buffer(16)
    env.queue.Wait(gate, 1)                        # hold the queue
    env.cl.CopyBufferRegion(buf, 0, first, 0, 16)
    env.cl.Close()
    env.queue.ExecuteCommandLists([env.cl])
    other = env.d3d.CreateCommandAllocator(dml.D3D12_COMMAND_LIST_TYPE_DIRECT)
    env.cl.Reset(other, None)                      # legal: the submitted work is in env.alloc
    env.cl.CopyBufferRegion(buf, 0, second, 0, 16)  # still open when the gate opens
    env.fence_value += 1
    env.queue.Signal(env.fence, env.fence_value)
    gate.Signal(1)
    env.fence.SetEventOnCompletion(env.fence_value, None)
    env.cl.Close()
    env.cl.Reset(env.alloc, None)
    assert env.read_as(buf, np.uint32).tolist() == [7, 7, 7, 7]


# 4. sizes and offsets that cannot be valid -----------------------------------------------------

@pytest.mark.parametrize("heap", [DEFAULT, UPLOAD, READBACK])
def test_a_buffer_beyond_the_memory_budget_is_e_outofmemory_at_creation(heap):
    env = Env()
    with pytest.raises(dml.HResultError) as e:
        env.buffer(1 << 40, heap)
    assert e.value.hresult == dml.E_OUTOFMEMORY
    assert "exceeds the device's memory budget" in e.value.message
    with pytest.raises(dml.HResultError) as e:
        env.buffer(1 << 64, heap)
    assert e.value.hresult == dml.E_INVALIDARG and "is not a UINT64" in e.value.message
    adapter = dml.CreateDXGIFactory1().EnumAdapters(0)
    assert adapter.GetDesc1().DedicatedVideoMemory < (1 << 40)


def test_descriptor_heaps_past_the_limits():
    env = Env()
    with pytest.raises(dml.HResultError) as e:
        env.d3d.CreateDescriptorHeap(dml.D3D12_DESCRIPTOR_HEAP_DESC(0, 2**32 - 1, 0))
    assert e.value.hresult == dml.E_OUTOFMEMORY
    with pytest.raises(dml.HResultError) as e:
        env.d3d.CreateDescriptorHeap(dml.D3D12_DESCRIPTOR_HEAP_DESC(0, 1_000_001, 1))
    assert e.value.hresult == dml.E_INVALIDARG
    assert e.value.message == ("ID3D12Device::CreateDescriptorHeap: NumDescriptors is 1000001; "
                               "a shader-visible CBV_SRV_UAV heap holds at most 1,000,000")


def test_negative_offsets_are_recording_errors_and_binding_misuse():
    env = Env()
    a, b = env.buffer(16), env.buffer(16)
    env.cl.CopyBufferRegion(a, -16, b, 0, 16)
    with pytest.raises(dml.HResultError) as e:
        env.cl.Close()
    assert "DstOffset -16, SrcOffset 0 and NumBytes 16 must all be non-negative" in \
        e.value.message
    env2 = Env()
    desc = dml.operator_desc("ELEMENT_WISE_IDENTITY", InputTensor=np.zeros(4, np.float32),
                             OutputTensor=np.zeros(4, np.float32))
    op = env2.compile(desc)
    table, _, _ = env2.table(op)
    buf = env2.buffer(16)
    with strict_mode():
        with pytest.raises(dml.HResultError) as e:
            table.BindInputs([binding(buf, -16, 16)])
    assert "Offset -16 and SizeInBytes 16 must be non-negative" in e.value.message


# 5. wrong-typed or missing arguments are HRESULTs ----------------------------------------------

def _bad_calls(env):
    fence = env.d3d.CreateFence(0, 0)
    desc = dml.operator_desc("ELEMENT_WISE_IDENTITY", InputTensor=np.zeros(4, np.float32),
                             OutputTensor=np.zeros(4, np.float32))
    op = env.dml.CreateOperator(desc)
    return {
        "Signal(None, 1)": (lambda: env.queue.Signal(None, 1), dml.E_POINTER),
        "CreateCommandQueue(None)": (lambda: env.d3d.CreateCommandQueue(None), dml.E_POINTER),
        "CompileOperator(op, None)": (lambda: env.dml.CompileOperator(op, None), None),
        "DML_OPERATOR_DESC([4], ...)": (
            lambda: env.dml.CreateOperator(dml.DML_OPERATOR_DESC([4], desc.Desc)), None),
        "CreateFence('x', 0)": (lambda: env.d3d.CreateFence("x", 0), None),
        "fence.Signal('ten')": (lambda: fence.Signal("ten"), None),
    }


@pytest.mark.parametrize("name", list(_bad_calls(Env()).keys()))
def test_bad_arguments_raise_only_hresult_errors(name):
    env = Env()
    call, hr = _bad_calls(env)[name]
    with pytest.raises(dml.HResultError) as e:
        call()
    assert e.value.hresult in ((hr,) if hr else (dml.E_INVALIDARG, dml.E_POINTER))
    assert "::" in e.value.message  # names the method


def test_void_methods_never_raise_outside_strict_mode():
    """ResourceBarrier([5]) is a recording error reported at Close; ExecuteCommandLists of a
    fence removes the device (void methods cannot return an HRESULT)."""
    env = Env()
    env.cl.ResourceBarrier([5])
    with pytest.raises(dml.HResultError) as e:
        env.cl.Close()
    assert "ID3D12GraphicsCommandList::ResourceBarrier" in e.value.message
    fence = env.d3d.CreateFence(0, 0)
    assert env.queue.ExecuteCommandLists([fence]) is None
    assert env.d3d.GetDeviceRemovedReason() != dml.S_OK


# 6. void methods remove the device ------------------------------------------------------------

def test_count_mismatches_in_void_methods_remove_the_device():
    env = Env()
    env.cl.Close()
    assert env.queue.ExecuteCommandLists(2, [env.cl]) is None
    assert env.d3d.GetDeviceRemovedReason() == dml.E_INVALIDARG
    assert "the count is 2 but the command list array has 1" in env.d3d._core.removed_message
    env2 = Env()
    desc = dml.operator_desc("ELEMENT_WISE_IDENTITY", InputTensor=np.zeros(4, np.float32),
                             OutputTensor=np.zeros(4, np.float32))
    table, _, _ = env2.table(env2.compile(desc))
    buf = env2.buffer(16)
    assert table.BindInputs(3, [binding(buf), binding(buf)]) is None
    assert env2.dml.GetDeviceRemovedReason() == dml.E_INVALIDARG
    with strict_mode():
        env3 = Env()
        env3.cl.Close()
        with pytest.raises(dml.HResultError):
            env3.queue.ExecuteCommandLists(2, [env3.cl])


# 7. device removal completes fence waits ------------------------------------------------------

def test_after_removal_every_fence_wait_completes():
    env = Env()
    other = env.d3d.CreateCommandList(0, 0, env.d3d.CreateCommandAllocator(0), None)
    other.Close()
    env.queue.ExecuteCommandLists(2, [other])  # removes the device
    assert env.fence.GetCompletedValue() == 2**64 - 1
    assert env.fence.SetEventOnCompletion(5, None) == dml.S_OK  # returns, does not raise
    event = dml.CreateEvent(None, False, False, None)
    env.fence.SetEventOnCompletion(7, event)
    assert dml.WaitForSingleObject(event, dml.INFINITE) == dml.WAIT_OBJECT_0
    with pytest.raises(dml.HResultError) as e:
        env.cl.Close()
    assert e.value.hresult == dml.DXGI_ERROR_DEVICE_REMOVED
    with pytest.raises(dml.HResultError) as e:
        env.fence.Signal(9)
    assert e.value.hresult == dml.DXGI_ERROR_DEVICE_REMOVED
    assert env.alloc.Reset() == dml.S_OK


# 10. a Wait cycle between two queues is reported ----------------------------------------------

def test_a_two_queue_wait_cycle_is_e_fail_not_a_hang():
    env = Env()
    qa, qb = env.queue, env.d3d.CreateCommandQueue(
        dml.D3D12_COMMAND_QUEUE_DESC(dml.D3D12_COMMAND_LIST_TYPE_DIRECT))
    fa, fb = env.d3d.CreateFence(0, 0), env.d3d.CreateFence(0, 0)
    qa.Wait(fb, 1)
    qa.Signal(fa, 1)
    qb.Wait(fa, 1)
    qb.Signal(fb, 1)
    with pytest.raises(dml.HResultError) as e:
        fa.SetEventOnCompletion(1, None)
    assert e.value.hresult == dml.E_FAIL
    assert "wait on each other's fences (a Wait cycle)" in e.value.message
    fb.Signal(1)  # the CPU breaks the cycle: both queues run
    fa.SetEventOnCompletion(1, None)
    assert fa.GetCompletedValue() == 1


# 9. DESCRIPTORS_VOLATILE bindings are checked at execution ------------------------------------

@pytest.mark.parametrize("volatile", [False, True])
def test_partially_overlapping_bindings_fail_at_record_or_at_execution(volatile):
    env = Env()
    desc = dml.operator_desc("ELEMENT_WISE_IDENTITY", InputTensor=np.zeros(8, np.float32),
                             OutputTensor=np.zeros(8, np.float32))
    flags = dml.DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE if volatile else 0
    op = env.compile(desc, flags)
    buf = env.buffer(64)
    table = env.dispatch(op, [binding(buf, 0, 32)], [binding(buf, 16, 32)], flush=False)
    assert table is not None
    env.cl.Close()
    env.queue.ExecuteCommandLists([env.cl])
    reason = env.dml.GetDeviceRemovedReason() or env.d3d.GetDeviceRemovedReason()
    assert reason != dml.S_OK
    message = env.dml._core.removed_message or env.d3d._core.removed_message
    where = "ExecuteCommandLists" if volatile else "RecordDispatch"
    assert where in message, message
    assert ("input 0 (InputTensor) buffer@" in message and "overlap but are not identical; such "
            "bindings are never valid" in message), message

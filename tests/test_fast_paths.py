"""The short path of an execution that repeats keeps every semantic of the long one.

A closed list executed again as it ran last time reuses its last plan (``execute._whole``: the
heaps' versions unchanged, no queue items or Submitted snapshots); a changed descriptor, a Wait
queued ahead, a re-recorded list or a removed device take the general path, with its results.
Counted by the device's plan-cache ``counts["again"]``, checked byte by byte.
Fence values are UINT64 arguments on every entry point that takes one.
"""
from __future__ import annotations

import numpy as np
import pytest

import dmlsim as dml

from helpers import READBACK, Env, binding, tensor

F32 = np.float32
N = 16
PATTERN = np.arange(200, 200 + 4 * N + 32, dtype=np.uint8)  # bytes no kernel writes


@pytest.fixture(scope="module")
def env():
    return Env()


def compiled_op(env, name, flags=0):
    t = tensor(F32, (N,))
    desc = getattr(dml, f"DML_ELEMENT_WISE_{name}_OPERATOR_DESC")(t, t, t)
    value = getattr(dml, f"DML_OPERATOR_ELEMENT_WISE_{name}")
    return env.compile(dml.DML_OPERATOR_DESC(value, desc), flags)


def filled(env, width, values=None):
    """A DEFAULT buffer of ``width`` bytes holding PATTERN, then ``values`` from byte 0."""
    data = PATTERN[:width].copy()
    if values is not None:
        raw = np.asarray(values, F32).view(np.uint8)
        data[:raw.shape[0]] = raw
    return env.device_buffer(data, size=width)


class OneList:
    """A list of recorded dispatches over one heap, executed with a Signal each time."""

    def __init__(self, env, heap_size=16):
        self.env, self.next = env, 0
        self.alloc = env.d3d.CreateCommandAllocator(dml.D3D12_COMMAND_LIST_TYPE_DIRECT)
        self.cl = env.d3d.CreateCommandList(0, dml.D3D12_COMMAND_LIST_TYPE_DIRECT, self.alloc)
        self.heap = env.heap(heap_size)
        self.cl.SetDescriptorHeaps([self.heap])

    def dispatch(self, compiled, inputs, outputs):
        table, _, _ = self.env.table(compiled, heap=self.heap, start=self.next)
        self.next += compiled.GetBindingProperties().RequiredDescriptorCount
        table.BindInputs([binding(b) if not isinstance(b, dml.DML_BINDING_DESC) else b
                          for b in inputs])
        table.BindOutputs([binding(b) if not isinstance(b, dml.DML_BINDING_DESC) else b
                           for b in outputs])
        self.env.recorder.RecordDispatch(self.cl, compiled, table)
        self.cl.ResourceBarrier([dml.CD3DX12_RESOURCE_BARRIER.UAV(None)])
        return table

    def run(self, times=1):
        """Execute ``times`` times; returns how many went through the fast path."""
        if self.cl._core.open:
            self.cl.Close()
        counts = self.env.d3d._core.plans.counts
        before = counts["again"]
        for _ in range(times):
            self.env.submit(self.cl)
        self.env.fence.SetEventOnCompletion(self.env.fence_value, None)
        self.env.check()
        return counts["again"] - before

    @property
    def plan(self):
        return self.cl._core.compiled.last_plan


def test_a_list_run_again_takes_the_fast_path_with_every_result(env):
    add = compiled_op(env, "ADD")
    k = np.linspace(0.5, 2, N, dtype=F32)
    acc, step = filled(env, 4 * N, np.zeros(N)), filled(env, 4 * N, k)
    env.flush()
    one = OneList(env)
    one.dispatch(add, [acc, step], [acc])  # acc += step, in place
    # A list of one dispatch runs that operator's program: run 1 selects (and traces) the
    # plan, runs 2-6 go fast.
    assert one.run(times=6) == 5
    expect = np.zeros(N, F32)
    for _ in range(6):
        expect = expect + k
    np.testing.assert_array_equal(env.read_as(acc, F32, N), expect)
    assert one.run(times=3) == 3
    for _ in range(3):
        expect = expect + k
    np.testing.assert_array_equal(env.read_as(acc, F32, N), expect)


def test_a_list_of_several_dispatches_and_readbacks_runs_again_exactly(env):
    add, mul = compiled_op(env, "ADD"), compiled_op(env, "MULTIPLY")
    x = np.linspace(-1, 1, N, dtype=F32)
    a, t, u = filled(env, 4 * N, x), filled(env, 4 * N), filled(env, 4 * N)
    rb = env.buffer(4 * N, READBACK)
    env.flush()
    one = OneList(env)
    one.dispatch(add, [a, a], [t])
    one.dispatch(mul, [t, a], [u])
    one.dispatch(add, [u, t], [a])  # feeds the next execution
    one.cl.CopyBufferRegion(rb, 0, a, 0, 4 * N)
    assert one.run(times=4) == 2  # run 1 record by record, run 2 compiles, 3-4 go fast
    v = x
    for _ in range(4):
        t_ = v + v
        v = (t_ * v) + t_
    got = rb.Map(0, None).view(F32)[:N].copy()
    np.testing.assert_array_equal(got.view(np.uint32), v.view(np.uint32))


def test_changed_descriptors_a_queued_wait_and_a_new_recording_take_the_general_path(env):
    add = compiled_op(env, "ADD", dml.DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE)
    one_v, two_v = np.ones(N, F32), np.full(N, 2, F32)
    acc, one_b, two_b = filled(env, 4 * N, np.zeros(N)), filled(env, 4 * N, one_v), \
        filled(env, 4 * N, two_v)
    env.flush()
    lst = OneList(env)
    table = lst.dispatch(add, [acc, one_b], [acc])
    assert lst.run(times=3) == 2                   # acc = 3
    table.BindInputs([binding(acc), binding(two_b)])  # the heap's version changes
    assert lst.run(times=1) == 0                   # acc = 5, a new plan
    assert lst.run(times=1) == 1                   # acc = 7, fast again
    np.testing.assert_array_equal(env.read_as(acc, F32, N), np.full(N, 7, F32))
    gate = env.d3d.CreateFence(0, dml.D3D12_FENCE_FLAG_NONE)
    env.queue.Wait(gate, 1)
    before = env.d3d._core.plans.counts["again"]
    env.queue.ExecuteCommandLists([lst.cl])        # queued behind the Wait: not run yet
    assert env.d3d._core.plans.counts["again"] == before and env.queue._core.items
    gate.Signal(1)                                 # from the CPU: the queue runs it
    assert not env.queue._core.items
    np.testing.assert_array_equal(env.read_as(acc, F32, N), np.full(N, 9, F32))
    lst.alloc.Reset()
    lst.cl.Reset(lst.alloc, None)                  # re-recorded: the old plan is not used
    lst.cl.SetDescriptorHeaps([lst.heap])
    lst.next = 0
    lst.dispatch(add, [acc, acc], [acc])
    assert lst.run(times=1) == 0                   # acc = 18
    np.testing.assert_array_equal(env.read_as(acc, F32, N), np.full(N, 18, F32))


def test_a_removed_device_runs_nothing_on_the_fast_path():
    env = Env()
    add = compiled_op(env, "ADD")
    acc, k = filled(env, 4 * N, np.zeros(N)), filled(env, 4 * N, np.ones(N))
    env.flush()
    lst = OneList(env)
    lst.dispatch(add, [acc, k], [acc])
    assert lst.run(times=3) == 2
    env.d3d._core.remove(dml.DXGI_ERROR_DEVICE_HUNG, "removed by the test")
    before = env.d3d._core.plans.counts["compiled"]
    env.queue.ExecuteCommandLists([lst.cl])
    assert env.d3d._core.plans.counts["compiled"] == before
    with pytest.raises(dml.HResultError) as err:
        env.queue.Signal(env.fence, 99)
    assert err.value.hresult == dml.DXGI_ERROR_DEVICE_REMOVED


def test_signal_takes_any_integer_type_and_refuses_what_is_not_a_uint64(env):
    fence = env.d3d.CreateFence(0, dml.D3D12_FENCE_FLAG_NONE)
    env.queue.Signal(fence, np.uint64(5))
    assert fence.GetCompletedValue() == 5
    env.queue.Signal(fence, 2**64 - 1)
    assert fence.GetCompletedValue() == 2**64 - 1
    fence.Signal(7)  # from the CPU: the last value written
    calls = [lambda v: env.queue.Signal(fence, v), lambda v: env.queue.Wait(fence, v),
             fence.Signal, lambda v: fence.SetEventOnCompletion(v, None),
             lambda v: env.d3d.CreateFence(v, dml.D3D12_FENCE_FLAG_NONE)]
    for call in calls:
        for bad in (-1, 2**64, 1.5, "3", None, True):
            with pytest.raises(dml.HResultError) as err:
                call(bad)
            assert err.value.hresult == dml.E_INVALIDARG, (call, bad)
            assert repr(bad) in str(err.value) or str(bad) in str(err.value)
    assert fence.GetCompletedValue() == 7 and not env.queue._core.items  # nothing changed
    for bad, code in ((None, dml.E_POINTER), (env.queue, dml.E_INVALIDARG)):
        with pytest.raises(dml.HResultError) as err:
            env.queue.Signal(bad, 8)
        assert err.value.hresult == code and "pFence" in str(err.value)
    env.check()

"""The fast paths keep DirectML's semantics: whole-command-list compilation
(``dmlsim/_core/execute.py``) computes what executing the records one by one computes.

Each scenario runs a closed list through the compiled path and, where it compares, through
the per-record path (``config.settings.list_compile = "0"``), and checks the bytes against NumPy:
mixed copies/dispatches/strided views with NaN payloads and -0.0; in-place dispatches with
UAV barriers; overlapping views of one buffer; descriptors changed after recording under
DESCRIPTORS_VOLATILE (another program is built, the old one is selected again); uploads
read at each execution; execution faults (the same removal message as the per-record
path, earlier records done); fences across many executions; program sharing between lists
of the same structure; the debug layer's per-record path. No timing is asserted here; the
numbers live in ``benchmarks/``.
"""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import dmlsim as dml
from dmlsim._core import config, queue as runtime
from dmlsim._core.observer import Observer

from helpers import READBACK, UPLOAD, Env, as_bytes, binding, tensor

F32 = np.float32
N = 16
UAV_BARRIER = dml.CD3DX12_RESOURCE_BARRIER.UAV(None)


@contextlib.contextmanager
def mode(enabled=True, eager=True):
    """Whole-list compilation on/off; ``eager``: compile at the first execution."""
    old = config.settings.list_compile
    config.settings.list_compile = "0" if not enabled else "first" if eager else "1"
    try:
        yield
    finally:
        config.settings.list_compile = old


def counts(env):
    """The device's plan-cache counts (steps/plancache.py)."""
    return env.d3d._core.plans.counts


@pytest.fixture(scope="module")
def env():
    old = dml.ID3D12Debug.enabled
    dml.ID3D12Debug.enabled = False
    try:
        e = Env()
    finally:
        dml.ID3D12Debug.enabled = old
    e.ops = {}
    yield e
    e.check()


def op(env, name, sizes=(N,), flags=0, in_strides=None):
    """A compiled, initialized FLOAT32 operator (cached per env)."""
    key = (name, tuple(sizes), flags, in_strides)
    if key not in env.ops:
        t = tensor(F32, sizes)
        ti = tensor(F32, sizes, strides=in_strides) if in_strides else t
        ins = {"IDENTITY": ("InputTensor",)}.get(name, ("ATensor", "BTensor"))
        desc = getattr(dml, f"DML_ELEMENT_WISE_{name}_OPERATOR_DESC")(
            **{f: ti for f in ins}, OutputTensor=t)
        value = getattr(dml, f"DML_OPERATOR_ELEMENT_WISE_{name}")
        env.ops[key] = env.compile(dml.DML_OPERATOR_DESC(value, desc), flags)
    return env.ops[key]


class ListBuilder:
    """A command list with its own allocator and one heap shared by its binding tables."""

    def __init__(self, env, heap_size=64):
        self.env = env
        self.alloc = env.d3d.CreateCommandAllocator(dml.D3D12_COMMAND_LIST_TYPE_DIRECT)
        self.cl = env.d3d.CreateCommandList(0, dml.D3D12_COMMAND_LIST_TYPE_DIRECT, self.alloc)
        self.heap = env.heap(heap_size)
        self.next = 0
        self.tables = []
        self.cl.SetDescriptorHeaps([self.heap])

    def dispatch(self, compiled, inputs, outputs, barrier=True):
        table, _, _ = self.env.table(compiled, heap=self.heap, start=self.next)
        self.next += compiled.GetBindingProperties().RequiredDescriptorCount
        table.BindInputs([b if isinstance(b, dml.DML_BINDING_DESC) else binding(b)
                          for b in inputs])
        table.BindOutputs([b if isinstance(b, dml.DML_BINDING_DESC) else binding(b)
                           for b in outputs])
        self.env.recorder.RecordDispatch(self.cl, compiled, table)
        if barrier:
            self.cl.ResourceBarrier([UAV_BARRIER])
        self.tables.append(table)
        return table

    def run(self, times=1):
        """Execute ``times`` (Signal after each), wait for the last; the list is closed."""
        if self.cl._core.open:
            self.cl.Close()
        before = counts(self.env)["compiled"]
        for _ in range(times):
            self.env.submit(self.cl)
        self.env.fence.SetEventOnCompletion(self.env.fence_value, None)
        self.env.check()
        self.runs, self.compiled_runs = times, counts(self.env)["compiled"] - before

    @property
    def state(self):
        return self.cl._core.compiled


def upload_buffer(env, data, size=None):
    raw = as_bytes(data)
    up = env.buffer(size or max(4, raw.shape[0]), UPLOAD)
    up.Map(0, None)[:raw.shape[0]] = raw
    return up


def readback(rb, dtype=F32, count=N):
    return rb.Map(0, None).view(np.uint8)[:count * np.dtype(dtype).itemsize].view(dtype).copy()


def assert_arith_equal(got, expect):
    """Bit-exact, except that a NaN computed by arithmetic may carry any payload: CPUs
    propagate the input's payload, NVIDIA GPUs return the canonical NaN (copies keep
    payloads everywhere; see the copy test)."""
    nan = np.isnan(expect)
    assert np.array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint32), expect[~nan].view(np.uint32))


def compiled_ran(lb, executions=None):
    """Every execution of the last ``lb.run`` (or ``executions`` of them) went through one
    compiled program: counted by the list compiler, not inferred from its caches."""
    want = lb.runs if executions is None else executions
    return lb.compiled_runs == want and want > 0


SPECIAL = np.array([np.nan, -0.0, np.inf, -np.inf, 1e-40, -1e-40, 1.5, -2.25,
                    3.0, 0.1, -7.0, 65504.0, 1e30, -1e-3, 0.0, 2.0], F32)
SPECIAL_BITS = SPECIAL.view(np.uint32).copy()
SPECIAL_BITS[0] = 0x7FC0BEEF  # a NaN with a payload
SPECIAL = SPECIAL_BITS.view(F32)
NORMAL = np.where(np.abs(SPECIAL) < 1e-38, F32(0.25), SPECIAL)  # no denormal arithmetic:
# XLA's CPU backend flushes denormal results to zero (copies keep them; see the copy test)
OTHER = np.linspace(-3, 3, N, dtype=F32)


def mixed_scenario(env):
    """Upload, ADD, in-place MULTIPLY, a device copy at an offset, a strided IDENTITY that
    reads every other element, a transition, readbacks; executed twice."""
    add, mul = op(env, "ADD"), op(env, "MULTIPLY")
    ident = op(env, "IDENTITY", sizes=(N // 2,), in_strides=(2,))
    a, b, o, d = (env.buffer(4 * N) for _ in range(4))
    c = env.buffer(4 * N + 64)
    ua, ub = upload_buffer(env, SPECIAL), upload_buffer(env, OTHER)
    r1, r2, r3 = (env.buffer(4 * N + 64, READBACK) for _ in range(3))
    lb = ListBuilder(env)
    lb.cl.CopyBufferRegion(a, 0, ua, 0, 4 * N)
    lb.cl.CopyBufferRegion(b, 0, ub, 0, 4 * N)
    lb.cl.ResourceBarrier([UAV_BARRIER])
    lb.dispatch(add, [a, b], [o])
    lb.dispatch(mul, [o, b], [o])  # in place: input and output are the same binding
    lb.cl.CopyBufferRegion(c, 16, o, 0, 4 * N)
    lb.cl.ResourceBarrier([UAV_BARRIER])
    lb.dispatch(ident, [binding(c, 16, 4 * N)], [binding(d, 0, 4 * N // 2)])
    lb.cl.ResourceBarrier([dml.CD3DX12_RESOURCE_BARRIER.Transition(
        o, dml.D3D12_RESOURCE_STATE_UNORDERED_ACCESS, dml.D3D12_RESOURCE_STATE_COPY_SOURCE)])
    lb.cl.CopyBufferRegion(r1, 0, o, 0, 4 * N)
    lb.cl.CopyResource(r2, c)
    lb.cl.CopyBufferRegion(r3, 8, d, 0, 4 * N)
    lb.run(times=2)
    return lb, [r.Map(0, None).copy() for r in (r1, r2, r3)], o


def test_compiled_list_matches_per_record_path_bit_for_bit(env):
    with mode(enabled=False):
        _, expect, o_rec = mixed_scenario(env)
    with mode(enabled=True):
        lb, got, o_cmp = mixed_scenario(env)
    assert compiled_ran(lb)
    for g, e in zip(got, expect):
        assert np.array_equal(g, e)
    # And both agree with NumPy: (a + b) * b, then every other element of it.
    prod = (SPECIAL + OTHER) * OTHER
    assert_arith_equal(got[0][:4 * N].view(F32), prod)
    assert_arith_equal(got[1][16:16 + 4 * N].view(F32), prod)
    assert_arith_equal(got[2][8:8 + 2 * N].view(F32), prod[::2])
    assert o_cmp._core.state == o_rec._core.state == dml.D3D12_RESOURCE_STATE_COPY_SOURCE


def test_each_dispatch_rounds_to_its_output_type_inside_one_program(env):
    """MULTIPLY then ADD in one list: the product is stored as FLOAT32 before the add reads
    it, as on a GPU. Fused into one XLA program, the pair would become a fused multiply-add
    (one rounding) without views.sealed."""
    n = 256
    rng = np.random.default_rng(7)
    a0, b0, c0 = (rng.standard_normal(n).astype(F32) for _ in range(3))
    two_roundings = (a0 * b0) + c0
    one_rounding = (a0.astype(np.float64) * b0 + c0).astype(F32)
    assert (two_roundings != one_rounding).any()  # the data tells the two apart
    mul, add = op(env, "MULTIPLY", sizes=(n,)), op(env, "ADD", sizes=(n,))
    a, b, c, t, o = (env.buffer(4 * n) for _ in range(5))
    rb = env.buffer(4 * n, READBACK)
    lb = ListBuilder(env)
    for buf, v in ((a, a0), (b, b0), (c, c0)):
        lb.cl.CopyBufferRegion(buf, 0, upload_buffer(env, v), 0, 4 * n)
    lb.dispatch(mul, [a, b], [t])
    lb.dispatch(add, [t, c], [o])
    lb.cl.CopyResource(rb, o)
    with mode():
        lb.run(times=2)
    assert compiled_ran(lb)
    np.testing.assert_array_equal(readback(rb, count=n).view(np.uint32),
                                  two_roundings.view(np.uint32))


def test_nan_payload_and_negative_zero_survive_a_compiled_copy(env):
    src, dst = env.buffer(4 * N), env.buffer(4 * N)
    up, rb = upload_buffer(env, SPECIAL), env.buffer(4 * N, READBACK)
    lb = ListBuilder(env)
    lb.cl.CopyBufferRegion(src, 0, up, 0, 4 * N)
    lb.cl.CopyBufferRegion(dst, 4, src, 0, 4 * N - 4)  # unaligned to 8: 4-byte units
    lb.cl.CopyResource(rb, dst)
    with mode():
        lb.run(times=2)
    assert compiled_ran(lb)
    got = readback(rb, np.uint32)
    assert got[0] == 0 and np.array_equal(got[1:], SPECIAL_BITS[:-1])


def test_in_place_chain_with_uav_barriers_and_re_execution(env):
    add = op(env, "ADD")
    x, k = env.buffer(4 * N), env.buffer(4 * N)
    x0, k0 = np.arange(N, dtype=F32), np.full(N, 0.5, F32)
    ux, uk = upload_buffer(env, x0), upload_buffer(env, k0)
    init = ListBuilder(env)
    init.cl.CopyBufferRegion(x, 0, ux, 0, 4 * N)
    init.cl.CopyBufferRegion(k, 0, uk, 0, 4 * N)
    init.run()
    lb = ListBuilder(env)
    for _ in range(3):
        lb.dispatch(add, [x, k], [x])
    with mode():
        lb.run(times=4)  # 4 executions x 3 dispatches
        plan = lb.state.last_plan
        lb.run(times=1)
        assert lb.state.last_plan is plan and plan.fn is not None  # the same program, launched again
    np.testing.assert_array_equal(env.read_as(x, F32, N), x0 + 15 * k0)


def test_overlapping_views_of_one_buffer(env):
    """Two dispatches write the halves of one buffer through offset bindings; a third reads
    the whole buffer twice (A and B alias) — all inside one program."""
    ident, add = op(env, "IDENTITY"), op(env, "ADD", sizes=(2 * N,))
    a, b = env.buffer(4 * N), env.buffer(4 * N)
    whole, out = env.buffer(8 * N), env.buffer(8 * N)
    ua, ub = upload_buffer(env, NORMAL), upload_buffer(env, OTHER)
    rb = env.buffer(8 * N, READBACK)
    lb = ListBuilder(env)
    lb.cl.CopyBufferRegion(a, 0, ua, 0, 4 * N)
    lb.cl.CopyBufferRegion(b, 0, ub, 0, 4 * N)
    lb.dispatch(ident, [a], [binding(whole, 0, 4 * N)])
    lb.dispatch(ident, [b], [binding(whole, 4 * N, 4 * N)])
    lb.dispatch(add, [whole, whole], [out])
    lb.cl.CopyResource(rb, out)
    with mode():
        lb.run(times=2)
    assert compiled_ran(lb)
    both = np.concatenate([NORMAL, OTHER])
    assert_arith_equal(readback(rb, count=2 * N), both + both)


def test_volatile_descriptors_changed_after_recording_select_another_program(env):
    volatile = dml.DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE
    add = op(env, "ADD", flags=volatile)
    a, b, c, o = (env.buffer(4 * N) for _ in range(4))
    va, vb, vc = OTHER, np.full(N, 2, F32), np.arange(N, dtype=F32)
    init = ListBuilder(env)
    for buf, v in ((a, va), (b, vb), (c, vc)):
        init.cl.CopyBufferRegion(buf, 0, upload_buffer(env, v), 0, 4 * N)
    init.run()
    rb = env.buffer(4 * N, READBACK)
    lb = ListBuilder(env)
    table = lb.dispatch(add, [a, b], [o])
    lb.cl.CopyResource(rb, o)
    with mode():
        lb.run()
        np.testing.assert_array_equal(readback(rb), va + vb)
        first = lb.state.last_plan
        table.BindInputs([binding(c), binding(b)])  # after recording: read at execution
        lb.run()
        np.testing.assert_array_equal(readback(rb), vc + vb)
        second = lb.state.last_plan
        assert second is not first and len(lb.state.plans) == 2
        table.BindInputs([binding(a), binding(b)])
        lb.run()
        np.testing.assert_array_equal(readback(rb), va + vb)
        assert lb.state.last_plan is first and len(lb.state.plans) == 2
        # Two layouts over the same buffer roles: one program serves both.
        assert first.fn is second.fn


def upload_identity_readback(env, data):
    """A list: UPLOAD -> a, IDENTITY a -> o, o -> READBACK; returns (list, upload, readback,
    a)."""
    n = data.shape[0]
    ident = op(env, "IDENTITY", sizes=(n,))
    a, o = env.buffer(4 * n), env.buffer(4 * n)
    up, rb = upload_buffer(env, data), env.buffer(4 * n, READBACK)
    lb = ListBuilder(env)
    lb.cl.CopyBufferRegion(a, 0, up, 0, 4 * n)
    lb.dispatch(ident, [a], [o])
    lb.cl.CopyResource(rb, o)
    return lb, up, rb, a


def test_upload_bytes_are_read_at_each_execution(env):
    lb, up, rb, _ = upload_identity_readback(env, OTHER)
    with mode():
        lb.run()
        np.testing.assert_array_equal(readback(rb), OTHER)
        up.Map(0, None)[:4 * N] = as_bytes(SPECIAL)
        lb.run()
    assert compiled_ran(lb)
    np.testing.assert_array_equal(readback(rb, np.uint32), SPECIAL_BITS)


def test_default_policy_compiles_on_the_second_execution(env):
    mul = op(env, "MULTIPLY")
    a, o = env.buffer(4 * N), env.buffer(4 * N)
    rb = env.buffer(4 * N, READBACK)
    lb = ListBuilder(env)
    lb.dispatch(mul, [a, a], [o])
    lb.dispatch(mul, [o, o], [a])
    lb.cl.CopyResource(rb, a)
    with mode(eager=False):
        lb.run()
        assert lb.state.last_plan.fn is None  # first execution: record by record
        lb.run()
        assert compiled_ran(lb)


def test_lists_of_the_same_structure_share_one_program(env):
    add = op(env, "ADD")
    plans = []
    for _ in range(2):  # different buffers, same roles, offsets and descs
        a, b, o = (env.buffer(4 * N) for _ in range(3))
        rb = env.buffer(4 * N, READBACK)
        lb = ListBuilder(env)
        lb.dispatch(add, [a, b], [o])
        lb.cl.CopyResource(rb, o)
        with mode():
            lb.run()
        assert compiled_ran(lb)
        plans.append(lb.state.last_plan)
    assert plans[0].fn is plans[1].fn and plans[0].mems != plans[1].mems


def test_reset_and_rerecord_builds_a_new_state(env):
    add, mul = op(env, "ADD"), op(env, "MULTIPLY")
    a, o = env.buffer(4 * N), env.buffer(4 * N)
    init = ListBuilder(env)
    init.cl.CopyBufferRegion(a, 0, upload_buffer(env, OTHER), 0, 4 * N)
    init.run()
    lb = ListBuilder(env)
    lb.dispatch(add, [a, a], [o])
    with mode():
        lb.run()
        lb.alloc.Reset()
        lb.cl.Reset(lb.alloc, None)
        lb.cl.SetDescriptorHeaps([lb.heap])
        lb.dispatch(mul, [a, a], [o])
        lb.run()
    assert lb.state.version == lb.cl._core.version == 1
    np.testing.assert_array_equal(env.read_as(o, F32, N), OTHER * OTHER)


def test_execution_fault_falls_back_with_the_same_message():
    """An operator executed before initialization: the compiled path declines, the per-record
    path copies first, then removes the device with the per-record message."""
    results = []
    for enabled in (False, True):
        e = Env()
        desc = dml.DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC(tensor(F32, (N,)), tensor(F32, (N,)))
        compiled = e.compile(dml.DML_OPERATOR_DESC(dml.DML_OPERATOR_ELEMENT_WISE_IDENTITY, desc),
                             initialize=False)
        a, o = e.buffer(4 * N), e.buffer(4 * N)
        lb = ListBuilder(e)
        lb.cl.CopyBufferRegion(a, 0, upload_buffer(e, OTHER), 0, 4 * N)
        lb.dispatch(compiled, [a], [o])
        lb.cl.Close()
        with mode(enabled=enabled):
            e.queue.ExecuteCommandLists([lb.cl])
        results.append((e.d3d.GetDeviceRemovedReason(), e.d3d._core.removed_message,
                        a._core.memory.to_numpy().view(F32).copy()))
    (r0, m0, a0), (r1, m1, a1) = results
    assert r0 == r1 == dml.DXGI_ERROR_DEVICE_REMOVED
    assert m0 == m1 and "executed before an operator initializer initialized it" in m1
    np.testing.assert_array_equal(a0, OTHER)
    np.testing.assert_array_equal(a1, OTHER)


def test_fences_across_many_compiled_executions(env):
    add = op(env, "ADD")
    x, k = env.buffer(4 * N), env.buffer(4 * N)
    init = ListBuilder(env)
    init.cl.CopyBufferRegion(k, 0, upload_buffer(env, np.ones(N, F32)), 0, 4 * N)
    init.run()
    lb = ListBuilder(env)
    lb.dispatch(add, [x, k], [x])
    lb.cl.Close()
    fence = env.d3d.CreateFence(0, dml.D3D12_FENCE_FLAG_NONE)
    before = counts(env)["compiled"]
    with mode():
        for i in range(1, 201):
            env.queue.ExecuteCommandLists([lb.cl])
            env.queue.Signal(fence, i)
        event = dml.CreateEvent(None, True, False, None)
        fence.SetEventOnCompletion(100, event)
        assert dml.WaitForSingleObject(event, dml.INFINITE) == dml.WAIT_OBJECT_0
        assert fence.GetCompletedValue() >= 100
        fence.SetEventOnCompletion(200, None)
    lb.runs, lb.compiled_runs = 200, counts(env)["compiled"] - before
    assert fence.GetCompletedValue() == 200 and compiled_ran(lb)
    lb.alloc.Reset()  # everything recorded with the allocator is complete
    np.testing.assert_array_equal(env.read_as(x, F32, N), np.full(N, 200, F32))


def test_long_marker_chains_complete_without_recursion():
    """Thousands of executions may be queued before a wait: completion walks the chain."""
    first = marker = runtime.Marker([])
    for _ in range(5000):
        marker = runtime.Marker([], marker)
    assert marker.complete() and first.done
    blocked = runtime.Marker([])
    for _ in range(5000):
        blocked = runtime.Marker([], blocked)
    blocked.block()
    assert blocked.done


def test_debug_layer_observers_take_the_per_record_path(env):
    mul = op(env, "MULTIPLY")
    a, o = env.buffer(4 * N), env.buffer(4 * N)
    lb = ListBuilder(env)
    lb.dispatch(mul, [a, a], [o])
    lb.dispatch(mul, [o, o], [a])
    events = []

    class Recorder(Observer):
        def execute_list(self, **info):
            events.append("execute_list")
    observers = env.d3d._core.observers
    observers.append(Recorder())
    try:
        with mode():
            lb.run(times=2)
    finally:
        observers.pop()
    assert lb.compiled_runs == 0 and lb.state.last_plan is None and events  # record by record


def test_buffers_a_list_writes_share_one_group_and_leave_it_when_written_elsewhere(env):
    """The small buffers a compiled list writes are segments of one device array (one
    program output, one completion witness); work outside the list that writes one of them
    takes it out of the group, and the list gathers it back, keeping every byte."""
    add, mul = op(env, "ADD"), op(env, "MULTIPLY")
    x0, k0 = np.arange(N, dtype=F32), np.full(N, 0.5, F32)
    x, k, a, b, c = (env.buffer(4 * N) for _ in range(5))
    init = ListBuilder(env)
    for buf, data in ((x, x0), (k, k0)):
        init.cl.CopyBufferRegion(buf, 0, upload_buffer(env, data), 0, 4 * N)
    init.run()
    chain = ListBuilder(env)  # a = x + k, b = a * k, c = b + a
    chain.dispatch(add, [x, k], [a])
    chain.dispatch(mul, [a, k], [b])
    chain.dispatch(add, [b, a], [c])
    with mode():
        chain.run(times=2)
        assert compiled_ran(chain)
        group = chain.state.last_plan.group
        assert group is not None and group.intact
        assert {m._core.memory.segment()[0] for m in (a, b, c)} == {group}
        seg = x._core.memory.segment()  # read, not written: not in the chain's group
        assert seg is None or seg[0] is not group
        marker = runtime.Marker({m._core.memory for m in (a, b, c)})
        assert len(marker.items) == 1  # the group's one array witnesses all three
        want_a = x0 + k0
        want_b = want_a * k0
        for buf, want in ((a, want_a), (b, want_b), (c, want_b + want_a)):
            np.testing.assert_array_equal(env.read_as(buf, F32, N), want)
        # Another list, run record by record, overwrites b: b leaves the group.
        other = ListBuilder(env)
        other.dispatch(mul, [x, x], [b])
        with mode(enabled=False):
            other.run()
        assert not group.intact and b._core.memory.segment() is None
        np.testing.assert_array_equal(env.read_as(b, F32, N), x0 * x0)
        np.testing.assert_array_equal(env.read_as(a, F32, N), want_a)  # untouched members
        # A compiled list that writes a and c (not b) in a group of its own, then the chain.
        swap = ListBuilder(env)
        swap.dispatch(add, [c, k], [a])
        swap.dispatch(add, [x, x], [c])
        swap.run(times=2)
        assert swap.state.last_plan.group is not group
        np.testing.assert_array_equal(env.read_as(a, F32, N), x0 + x0 + k0)
        chain.run(times=1)  # gathers a, b, c from wherever they are, then runs
        assert group.intact and b._core.memory.segment() == (group, N)  # after a's N words
        for buf, want in ((a, want_a), (b, want_b), (c, want_b + want_a)):
            np.testing.assert_array_equal(env.read_as(buf, F32, N), want)


@pytest.mark.parametrize("n", [N, 1 << 16])
def test_a_default_buffer_copied_from_upload_bytes_keeps_them_after_the_fence(env, n):
    """UPLOAD bytes are program arguments that jit's transfer reads (on the CPU it may read
    them in place until the program has run); the DEFAULT buffer they are copied into is the
    program's own storage, so bytes written into the UPLOAD buffer after the fence reach
    neither it nor the READBACK buffer until the list runs again."""
    first, second = np.arange(n, dtype=F32), -np.arange(n, dtype=F32) - 1
    lb, up, rb, a = upload_identity_readback(env, first)
    with mode():
        lb.run(times=2)
        assert compiled_ran(lb)
        up.Map(0, None)[:4 * n] = as_bytes(second)  # after the fence: legal
        np.testing.assert_array_equal(readback(rb, F32, n), first)
        np.testing.assert_array_equal(env.read_as(a, F32, n), first)
        lb.run()
        np.testing.assert_array_equal(readback(rb, F32, n), second)
        np.testing.assert_array_equal(env.read_as(a, F32, n), second)


def test_gpu_program_options():
    """XLA's multi-output fusion pass spent 13 of 14 s compiling a 1,000-dispatch list on the
    H200: a GPU program of more than 64 dispatches is compiled without it (same arithmetic).
    Every GPU program launches its kernels one by one, not as a command buffer (a CUDA graph
    starts only after its whole launch: MiniLM's bound run took 1.80 ms, not 2.26), and its
    convolutions take cuDNN's NHWC layout (resnet18 FLOAT16 1.64 ms, not 1.77). Other
    backends and CPU programs whose operators ask nothing keep XLA's defaults."""
    from types import SimpleNamespace

    from dmlsim._core import steps

    def plan(platform, dispatches):
        mems = [SimpleNamespace(device=SimpleNamespace(platform=platform))]
        return SimpleNamespace(mems=mems, dispatches=dispatches, steps=())

    gpu = {"xla_gpu_enable_command_buffer": "", "xla_gpu_force_conv_nhwc": True}
    assert steps.compiler_options(plan("gpu", 65)) == {
        **gpu, "xla_disable_hlo_passes": "multi_output_fusion"}
    assert steps.compiler_options(plan("gpu", 64)) == gpu
    assert steps.compiler_options(plan("tpu", 1000)) is None
    assert steps.compiler_options(plan("cpu", 1000)) is None


"""The debug layer (docs/debug_messages.md): one test per mistake, asserting the message ID and
its text, and the same program without the mistake producing no message.

Most tests share one debug-enabled device pair (``rig``) and clear its info queue first; tests
that remove a device make their own. Buffers are 16 bytes (four FLOAT32) unless a test needs
ranges, so that every dispatch reuses the same compiled programs.
"""
from __future__ import annotations

import logging
import pathlib
import sys

import numpy as np
import pytest

import dmlsim as dml
from dmlsim._core import binding as core_binding
from dmlsim._debug import catalog
from dmlsim._debug.tracker import _Table

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT, UPLOAD, READBACK = 1, 2, 3
COMMON = dml.D3D12_RESOURCE_STATE_COMMON
UAV = dml.D3D12_RESOURCE_STATE_UNORDERED_ACCESS
COPY_DEST = dml.D3D12_RESOURCE_STATE_COPY_DEST
COPY_SOURCE = dml.D3D12_RESOURCE_STATE_COPY_SOURCE
ID = {e.name: e.id for e in catalog.ENTRIES}
ECL = "ID3D12CommandQueue::ExecuteCommandLists: command queue 'queue', command list 'list'"
F4 = np.zeros(4, np.float32)
T = dml.CD3DX12_RESOURCE_BARRIER


def bind(res, offset=0, size=16):
    return dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER,
                                dml.DML_BUFFER_BINDING(res, offset, size))


class Rig:
    """A D3D12 device (debug layer on when created inside ``debug_layer``) with a DirectML
    device, a named queue 'queue', list 'list', descriptor heap 'heap' and a fence."""

    def __init__(self, d3d=None, dml_flags=dml.DML_CREATE_DEVICE_FLAG_DEBUG):
        self.d3d = d3d or dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
        self.dml = dml.DMLCreateDevice(self.d3d, dml_flags)
        self.iq = self.d3d.QueryInterface(dml.ID3D12InfoQueue) if self.d3d._core.debug else None
        self.queue = self.named(self.d3d.CreateCommandQueue(
            dml.D3D12_COMMAND_QUEUE_DESC(dml.D3D12_COMMAND_LIST_TYPE_DIRECT)), "queue")
        self.alloc = self.d3d.CreateCommandAllocator(dml.D3D12_COMMAND_LIST_TYPE_DIRECT)
        self.cl = self.named(self.d3d.CreateCommandList(0, 0, self.alloc), "list")
        self.heap = self.named(self.d3d.CreateDescriptorHeap(dml.D3D12_DESCRIPTOR_HEAP_DESC(
            dml.D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV, 256,
            dml.D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE)), "heap")
        self.fence = self.d3d.CreateFence(0, 0)
        self.value = 0
        self.next = 0
        self.rec = self.dml.CreateCommandRecorder()

    @staticmethod
    def named(obj, name):
        obj.SetName(name)
        return obj

    def buf(self, name, size=16, state=COMMON, heap=DEFAULT):
        flags = dml.D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS if heap == DEFAULT else 0
        state = {UPLOAD: dml.D3D12_RESOURCE_STATE_GENERIC_READ,
                 READBACK: COPY_DEST}.get(heap, state)
        return self.named(self.d3d.CreateCommittedResource(
            dml.CD3DX12_HEAP_PROPERTIES(heap), 0, dml.CD3DX12_RESOURCE_DESC.Buffer(size, flags),
            state), name)

    def compile(self, name, op="ELEMENT_WISE_IDENTITY", flags=0, init=True, **tensors):
        fields = tensors or {"InputTensor": F4, "OutputTensor": F4}
        c = self.named(self.dml.CompileOperator(
            self.dml.CreateOperator(dml.operator_desc(op, **fields)), flags), name)
        if init:
            self.initialize(c)
        return c

    def initialize(self, *ops, inputs=None, outputs=None, flush=True):
        init = self.named(self.dml.CreateOperatorInitializer(len(ops), list(ops)), "init")
        t = self.table(init, "init table")
        if inputs:
            t.BindInputs(inputs)
        if outputs:
            t.BindOutputs(outputs)
        self.cl.SetDescriptorHeaps(1, [self.heap])
        self.rec.RecordDispatch(self.cl, init, t)
        if flush:
            self.flush()

    def table(self, d, name):
        n = d.GetBindingProperties().RequiredDescriptorCount
        if self.next + n > 256:
            self.next = 0
        start, self.next = self.next, self.next + n
        cpu = self.heap.GetCPUDescriptorHandleForHeapStart() + start * 32
        gpu = self.heap.GetGPUDescriptorHandleForHeapStart() + start * 32
        return self.named(self.dml.CreateBindingTable(dml.DML_BINDING_TABLE_DESC(d, cpu, gpu, n)),
                          name)

    def dispatch(self, c, inputs, outputs, name="table", heaps=True, persistent=None):
        t = self.table(c, name)
        t.BindInputs(inputs)
        t.BindOutputs(outputs)
        if persistent is not None:
            t.BindPersistentResource(persistent)
        if heaps:
            self.cl.SetDescriptorHeaps(1, [self.heap])
        self.rec.RecordDispatch(self.cl, c, t)
        return t

    def barrier(self, *barriers):
        self.cl.ResourceBarrier(len(barriers), list(barriers))

    def upload(self, dst, data=None, offset=0):
        """Record a copy of ``data`` (16 bytes of 1.0f) into ``dst`` through an UPLOAD buffer."""
        raw = np.ascontiguousarray(np.ones(4, np.float32) if data is None else data).view(np.uint8)
        up = self.buf("upload", max(4, raw.size), heap=UPLOAD)
        up.Map(0, None)[:raw.size] = raw
        up.Unmap(0, None)
        self.cl.CopyBufferRegion(dst, offset, up, 0, raw.size)
        return up

    def submit(self, *lists):
        if not lists:
            self.cl.Close()
            lists = (self.cl,)
        self.queue.ExecuteCommandLists(len(lists), list(lists))
        self.value += 1
        self.queue.Signal(self.fence, self.value)

    def execute(self):
        """Close and execute the list, without a Signal (for tests that remove the device)."""
        self.cl.Close()
        self.queue.ExecuteCommandLists([self.cl])

    def wait(self):
        self.fence.SetEventOnCompletion(self.value, None)

    def reset(self):
        self.alloc.Reset()
        self.cl.Reset(self.alloc, None)

    def flush(self):
        self.submit()
        self.wait()
        self.reset()

    def messages(self, name=None):
        out = [self.iq.GetMessage(i) for i in range(self.iq.GetNumStoredMessages())]
        return [m for m in out if name is None or m.ID == ID[name]]

    def ids(self):
        return [catalog.BY_ID[int(m.ID)].name for m in self.messages()]

    def text(self, name):
        found = self.messages(name)
        assert len(found) == 1, (name, self.ids(), [m.pDescription for m in self.messages()])
        return found[0].pDescription


@pytest.fixture
def debug_layer(monkeypatch):
    """EnableDebugLayer for devices created in the test; process-wide state restored after."""
    monkeypatch.setattr(dml.ID3D12Debug, "enabled", False)
    dml.D3D12GetDebugInterface().EnableDebugLayer()


@pytest.fixture(scope="module")
def shared():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dml.ID3D12Debug, "enabled", False)
        dml.D3D12GetDebugInterface().EnableDebugLayer()
        r = Rig()
    r.id1 = r.compile("id1", init=False)
    r.id2 = r.compile("id2", init=False)
    r.initialize(r.id1, r.id2)
    yield r
    assert r.d3d.GetDeviceRemovedReason() == dml.S_OK


@pytest.fixture
def rig(shared):
    """The shared rig with an empty info queue, default filters and an open, empty list."""
    shared.iq.ClearStoredMessages()
    yield shared
    store = shared.iq._store
    store.break_on = ({}, {}, {})
    while shared.iq.GetStorageFilterStackSize() > 1:
        shared.iq.PopStorageFilter()
    shared.iq.ClearStorageFilter()
    shared.iq.ClearRetrievalFilter()
    shared.iq.SetMuteDebugOutput(False)
    if shared.cl._core.open:
        shared.cl.Close()
    shared.queue.Signal(shared.fence, shared.value)
    shared.wait()
    shared.reset()
    assert shared.d3d.GetDeviceRemovedReason() == dml.S_OK
    assert shared.dml.GetDeviceRemovedReason() == dml.S_OK


@pytest.fixture
def fresh(debug_layer):
    return Rig()


# ---- switches ------------------------------------------------------------------------------

def test_off_installs_nothing_and_has_no_info_queue():
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    dev = dml.DMLCreateDevice(d3d, dml.DML_CREATE_DEVICE_FLAG_NONE)
    assert d3d._core.observers == []
    with pytest.raises(dml.HResultError) as e:
        d3d.QueryInterface(dml.ID3D12InfoQueue)
    assert e.value.hresult == dml.E_NOINTERFACE and "EnableDebugLayer" in str(e.value)
    with pytest.raises(dml.HResultError):
        dev.QueryInterface(dml.IDMLDebugDevice)


def test_directml_flag_alone_logs_directml_format(caplog):
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    with caplog.at_level(logging.WARNING, logger="dmlsim.debug"):
        r = Rig(d3d)
        op = r.compile("op", init=False)
        t = r.table(op, "t")
        t.BindInputs([bind(r.buf("small", 16), 0, 4)])
    lines = [rec.getMessage() for rec in caplog.records if rec.name == "dmlsim.debug"]
    assert lines[0].startswith("[DIRECTML WARNING]: DMLCreateDevice: enable the D3D debug layer")
    assert lines[1] == ("[DIRECTML ERROR]: IDMLBindingTable::BindInputs: binding table 't' of "
                        "DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled operator 'op'): input 0 "
                        "(InputTensor): the value of SizeInBytes is too small. 4 was provided, "
                        "but 16 was expected.")
    with pytest.raises(dml.HResultError):
        d3d.QueryInterface(dml.ID3D12InfoQueue)


def test_hello_directml_with_debug_layers_is_clean(debug_layer, caplog):
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import hello_directml
    finally:
        sys.path.pop(0)
    with caplog.at_level(logging.INFO, logger="dmlsim.debug"):
        _, out = hello_directml.main(debug=True)
    assert np.all(out == np.float32(1.618))
    assert [r.getMessage() for r in caplog.records if r.name == "dmlsim.debug"] == []


# ---- 1. UAV barriers -----------------------------------------------------------------------

def _chain(rig, between=None, out_range=(0, 16), in_range=(0, 16)):
    a, b, c = rig.buf("A", 32), rig.buf("B", 32), rig.buf("C", 32)
    rig.upload(a)
    rig.barrier(T.Transition(a, COPY_DEST, UAV))
    rig.dispatch(rig.id1, [bind(a)], [bind(b, *out_range)], "t1")
    if between is not None:
        rig.barrier(between(b))
    rig.dispatch(rig.id2, [bind(b, *in_range)], [bind(c)], "t2")
    return a, b, c


def test_missing_uav_barrier(rig):
    _chain(rig)
    rig.flush()
    assert rig.text("DML_MISSING_UAV_BARRIER") == (
        f"{ECL}, command 5 (RecordDispatch of DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled "
        "operator 'id2') with binding table 't2') reads input 0 (InputTensor) = 'B' bytes [0, 16), "
        f"and command queue 'queue', command list 'list', command 3 (RecordDispatch of "
        "DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled operator 'id1') with binding table 't1') "
        "writes output 0 (OutputTensor) = 'B' bytes [0, 16), with no UAV, aliasing or transition "
        "barrier on 'B' in between: the dispatches may run concurrently and race on 'B' bytes "
        "[0, 16). Record ResourceBarrier(CD3DX12_RESOURCE_BARRIER.UAV(...)) between them.")


@pytest.mark.parametrize("between", [T.UAV, lambda b: T.UAV(None), lambda b: T.Aliasing(None, None),
                                     lambda b: T.Aliasing(b, None)],
                         ids=["uav", "uav-all", "aliasing-all", "aliasing"])
def test_no_uav_message_with_a_barrier(rig, between):
    _chain(rig, between)
    rig.flush()
    assert rig.ids() == []


def test_no_uav_message_when_ranges_do_not_overlap(rig):
    _chain(rig, out_range=(0, 16), in_range=(16, 16))
    rig.flush()
    assert "DML_MISSING_UAV_BARRIER" not in rig.ids()


def test_uav_hazard_across_lists_of_one_execute_but_not_across_executes(rig):
    a, b = rig.buf("A"), rig.buf("B")
    rig.upload(a)
    rig.barrier(T.Transition(a, COPY_DEST, UAV))
    rig.flush()
    alloc2 = rig.d3d.CreateCommandAllocator(0)
    second = rig.named(rig.d3d.CreateCommandList(0, 0, alloc2), "second")
    rig.dispatch(rig.id1, [bind(a)], [bind(b)], "t1")
    rig.cl.Close()
    t2 = rig.table(rig.id2, "t2")
    t2.BindInputs([bind(b)])
    t2.BindOutputs([bind(a)])
    second.SetDescriptorHeaps(1, [rig.heap])
    rig.rec.RecordDispatch(second, rig.id2, t2)
    second.Close()
    rig.submit(rig.cl, second)
    rig.wait()
    msgs = rig.messages("DML_MISSING_UAV_BARRIER")
    # id2 reads B that id1 writes, and writes A that id1 reads.
    assert len(msgs) == 2
    assert msgs[0].pDescription.startswith(
        "ID3D12CommandQueue::ExecuteCommandLists: command queue 'queue', command list 'second', "
        "command 1 (RecordDispatch of DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled operator "
        "'id2') with binding table 't2') reads input 0 (InputTensor) = 'B' bytes [0, 16), and "
        "command queue 'queue', command list 'list', command 1")
    assert "writes output 0 (OutputTensor) = 'A' bytes [0, 16), and" in msgs[1].pDescription
    rig.iq.ClearStoredMessages()
    rig.submit(second)  # a separate ExecuteCommandLists is ordered after the first
    rig.wait()
    rig.reset()
    assert rig.ids() == []


def test_uav_hazard_across_queues_needs_a_fence_wait(rig):
    a, b = rig.buf("A"), rig.buf("B")
    rig.upload(a)
    rig.barrier(T.Transition(a, COPY_DEST, UAV))
    rig.flush()
    q2 = rig.named(rig.d3d.CreateCommandQueue(dml.D3D12_COMMAND_QUEUE_DESC(0)), "queue2")
    alloc2 = rig.d3d.CreateCommandAllocator(0)
    second = rig.named(rig.d3d.CreateCommandList(0, 0, alloc2), "second")
    t2 = rig.table(rig.id2, "t2")
    t2.BindInputs([bind(b)])
    t2.BindOutputs([bind(rig.buf("C"))])
    second.SetDescriptorHeaps(1, [rig.heap])
    rig.rec.RecordDispatch(second, rig.id2, t2)
    second.Close()
    for waits in (False, True):
        rig.iq.ClearStoredMessages()
        rig.dispatch(rig.id1, [bind(a)], [bind(b)], "t1")
        rig.cl.Close()
        rig.queue.ExecuteCommandLists([rig.cl])
        rig.value += 1
        rig.queue.Signal(rig.fence, rig.value)
        if waits:
            q2.Wait(rig.fence, rig.value)
        q2.ExecuteCommandLists([second])
        assert rig.ids() == ([] if waits else ["DML_MISSING_UAV_BARRIER"])
        if not waits:
            assert "command queue 'queue2', command list 'second', command 1 (RecordDispatch of " \
                   "DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled operator 'id2') with binding " \
                   "table 't2') reads input 0 (InputTensor) = 'B' bytes [0, 16), and command " \
                   "queue " \
                   "'queue', command list 'list'" in rig.messages()[0].pDescription
        rig.wait()
        rig.reset()
        q2.Signal(rig.fence, rig.value + 1)  # the CPU waits for queue2 too before reusing B
        rig.value += 1
        rig.wait()


# ---- 2. resource states --------------------------------------------------------------------

def test_dispatch_needs_unordered_access(rig):
    a = rig.buf("A")
    rig.upload(a)  # COMMON -> promoted to COPY_DEST by the copy
    rig.dispatch(rig.id1, [bind(a)], [bind(rig.buf("B"))], "t1")
    rig.flush()
    assert rig.text("INVALID_SUBRESOURCE_STATE") == (
        f"{ECL}, command 2 (RecordDispatch of DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled "
        "operator 'id1') with binding table 't1'): 'A' (bound as input 0 (InputTensor)) is in "
        "state D3D12_RESOURCE_STATE_COPY_DEST (0x400) (promoted from COMMON by an earlier command "
        "of this "
        "ExecuteCommandLists call), but this command needs D3D12_RESOURCE_STATE_UNORDERED_ACCESS "
        "(0x8) or a state promotable to it (D3D12_RESOURCE_STATE_COMMON). Transition it with "
        "ResourceBarrier first.")


def test_copy_needs_copy_source(rig):
    src = rig.buf("src", state=UAV)
    rig.upload(src)  # copy into a UAV-state buffer: needs COPY_DEST
    rb = rig.buf("readback", heap=READBACK)
    rig.barrier(T.UAV(src))
    rig.cl.CopyResource(rb, src)  # src is UAV, not COPY_SOURCE
    rig.flush()
    msgs = [m.pDescription for m in rig.messages("INVALID_SUBRESOURCE_STATE")]
    assert len(msgs) == 2
    assert msgs[0] == (f"{ECL}, command 0 (copy of 16 bytes from 'upload' to 'src'): 'src' (the "
                       "copy destination) is in state D3D12_RESOURCE_STATE_UNORDERED_ACCESS (0x8), "
                       "but this command needs D3D12_RESOURCE_STATE_COPY_DEST (0x400). Transition "
                       "it with ResourceBarrier first.")
    assert "command 2 (copy of 16 bytes from 'src' to 'readback'): 'src' (the copy source) is in " \
           "state D3D12_RESOURCE_STATE_UNORDERED_ACCESS (0x8), but this command needs " \
           "D3D12_RESOURCE_STATE_COPY_SOURCE (0x800)" in msgs[1]


def test_transition_with_wrong_before_state(rig):
    a = rig.buf("A", state=COPY_DEST)
    rig.barrier(T.Transition(a, COPY_SOURCE, UAV))
    rig.flush()
    assert rig.text("RESOURCE_BARRIER_BEFORE_AFTER_MISMATCH") == (
        f"{ECL}, command 0 (ResourceBarrier): the transition barrier's StateBefore is "
        "D3D12_RESOURCE_STATE_COPY_SOURCE (0x800), but 'A' is in D3D12_RESOURCE_STATE_COPY_DEST "
        "(0x400) at that point (its state at creation or after the last barrier). Set StateBefore "
        "to D3D12_RESOURCE_STATE_COPY_DEST (0x400).")


def test_correct_states_and_promotion_are_silent(rig):
    a, b = rig.buf("A", state=COPY_DEST), rig.buf("B")  # B: COMMON, promoted by the dispatch
    rig.upload(a)
    rig.barrier(T.Transition(a, COPY_DEST, UAV))
    rig.dispatch(rig.id1, [bind(a)], [bind(b)], "t1")
    rig.barrier(T.Transition(b, UAV, COPY_SOURCE))  # from the promoted state
    rb = rig.buf("readback", heap=READBACK)
    rig.cl.CopyResource(rb, b)
    rig.flush()
    assert rig.ids() == []
    assert np.all(rb.Map(0, None).view(np.float32) == 1)
    rb.Unmap(0, dml.D3D12_RANGE(0, 0))


# ---- 3. descriptor heaps -------------------------------------------------------------------

@pytest.mark.parametrize("other_heap", [False, True])
def test_descriptor_heap_not_set(fresh, other_heap):
    op = fresh.compile("op", init=False)
    t = fresh.table(op, "t")
    t.BindInputs([bind(fresh.buf("A"))])
    t.BindOutputs([bind(fresh.buf("B"))])
    if other_heap:
        other = fresh.named(fresh.d3d.CreateDescriptorHeap(dml.D3D12_DESCRIPTOR_HEAP_DESC(0, 4, 1)),
                            "other")
        fresh.cl.SetDescriptorHeaps(1, [other])
    fresh.rec.RecordDispatch(fresh.cl, op, t)
    have = "the command list has descriptor heap 'other' set" if other_heap else \
        "no descriptor heap is set on the command list"
    assert fresh.text("DML_DESCRIPTOR_HEAP_NOT_SET") == (
        "IDMLCommandRecorder::RecordDispatch: command list 'list', "
        "DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled operator 'op'), binding table 't': the "
        f"binding table points into descriptor heap 'heap', but {have}; call "
        "ID3D12GraphicsCommandList::SetDescriptorHeaps with the binding table's heap before "
        "RecordDispatch")
    assert fresh.dml.GetDeviceRemovedReason() == dml.E_INVALIDARG
    assert fresh.d3d.GetDeviceRemovedReason() == dml.S_OK


# ---- 4. descriptors changed after recording ------------------------------------------------

@pytest.mark.parametrize("volatile", [False, True])
def test_descriptors_changed_after_recording(rig, volatile):
    op = rig.id1 if not volatile else getattr(rig, "vol", None)
    if op is None:
        op = rig.vol = rig.compile("vol", flags=dml.DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE)
    a, b, c = rig.buf("A"), rig.buf("B"), rig.buf("C")
    rig.upload(a)
    rig.barrier(T.Transition(a, COPY_DEST, UAV))
    t = rig.dispatch(op, [bind(a)], [bind(b)], "t")
    t.BindOutputs([bind(c)])  # after RecordDispatch
    rig.barrier(T.Transition(c, UAV, COPY_SOURCE))  # C was promoted by the dispatch
    rb = rig.buf("readback", heap=READBACK)
    rig.cl.CopyResource(rb, c)
    rig.flush()
    if volatile:
        assert rig.ids() == []
        assert np.all(rb.Map(0, None).view(np.float32) == 1)  # the late binding took effect
        rb.Unmap(0, dml.D3D12_RANGE(0, 0))
    else:
        assert rig.text("DML_DESCRIPTORS_CHANGED_AFTER_RECORD") == (
            f"{ECL}, command 3 (RecordDispatch of DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled "
            "operator 'id1') with binding table 't'): the binding table's descriptors changed "
            "after RecordDispatch: output 0 (OutputTensor) was 'B' bytes [0, 16) when recorded and "
            "is 'C' bytes [0, 16) now. The dispatchable is compiled without "
            "DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE, so every binding must be final before "
            "RecordDispatch (use another binding table or descriptor range per dispatch, or "
            "compile with DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE).")


# ---- 5. aliasing ---------------------------------------------------------------------------

@pytest.mark.parametrize("case", ["partial", "no-in-place", "temporary"])
def test_illegal_aliasing_at_record(fresh, case):
    a = fresh.buf("A", 32)
    if case == "no-in-place":  # GELU has no in-place support
        op = fresh.compile("op", "ACTIVATION_GELU", init=False)
        ins, outs = [bind(a)], [bind(a)]
    else:
        op = fresh.compile("op", init=False)
        ins, outs = [bind(a, 0)], [bind(a, 16) if case == "partial" else bind(fresh.buf("B"))]
    t = fresh.table(op, "t")
    t.BindInputs(ins)
    t.BindOutputs(outs)
    if case == "partial":
        t.BindOutputs([bind(a, 0, 32)])
    if case == "temporary":
        t.BindTemporaryResource(bind(a, 0, 32))
    fresh.cl.SetDescriptorHeaps(1, [fresh.heap])
    fresh.rec.RecordDispatch(fresh.cl, op, t)
    name = {"partial": "ELEMENT_WISE_IDENTITY", "no-in-place": "ACTIVATION_GELU",
            "temporary": "ELEMENT_WISE_IDENTITY"}[case]
    head = (f"IDMLCommandRecorder::RecordDispatch: command list 'list', DML_OPERATOR_{name} "
            "(compiled operator 'op'), binding table 't': binding hazard: ")
    text = fresh.text("DML_ILLEGAL_ALIASING")
    assert text.startswith(head), text
    assert text[len(head):] == {
        "partial": "input 0 (InputTensor) 'A' bytes [0, 16) and output 0 (OutputTensor) 'A' bytes "
                   "[0, 32) overlap but are not identical; such bindings are never valid",
        "no-in-place": "input 0 (InputTensor) 'A' bytes [0, 16) and output 0 (OutputTensor) 'A' "
                       "bytes [0, 16) alias, but DML_OPERATOR_ACTIVATION_GELU does not support "
                       "in-place execution",
        "temporary": "the temporary resource 'A' bytes [0, 32) overlaps input 0 (InputTensor) 'A' "
                     "bytes [0, 16)"}[case]
    assert fresh.dml.GetDeviceRemovedReason() == dml.E_INVALIDARG


def test_in_place_identical_bindings_are_allowed(rig):
    a = rig.buf("A")
    rig.upload(a)
    rig.barrier(T.Transition(a, COPY_DEST, UAV))
    rig.dispatch(rig.id1, [bind(a)], [bind(a)], "t")
    rig.flush()
    assert rig.ids() == []


def test_illegal_aliasing_of_a_volatile_operator_is_reported_at_execution(rig):
    op = getattr(rig, "vol", None) or rig.compile(
        "vol", flags=dml.DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE)
    rig.vol = op
    a = rig.buf("A", 32)
    rig.upload(a, np.ones(8, np.float32))
    rig.barrier(T.Transition(a, COPY_DEST, UAV))
    t = rig.dispatch(op, [bind(a, 0)], [bind(a, 16, 16)], "t")
    t.BindOutputs([bind(a, 0, 32)])  # late: volatile operators are checked at execution
    rig.flush()
    assert rig.text("DML_ILLEGAL_ALIASING") == (
        f"{ECL}, command 3 (RecordDispatch of DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled "
        "operator 'vol') with binding table 't'): binding hazard at execution (the operator is "
        "DESCRIPTORS_VOLATILE, so it is checked here): input 0 (InputTensor) 'A' bytes [0, 16) and "
        "output 0 (OutputTensor) 'A' bytes [0, 32) overlap but are not identical; such bindings "
        "are never valid")


def test_two_outputs_and_persistent_overlap_rules():
    """No registered operator has two outputs yet: the rule binding.hazards applies (at
    RecordDispatch, and at execution for volatile operators) is checked on a table directly."""
    from dmlsim._core.dml import BufferBinding, CompiledOperator
    from dmlsim._core.runtime import Buffer, Device
    d = object.__new__(CompiledOperator)
    d.in_slots = [("InputTensor", None, None)]
    d.out_slots = [("OutputValueTensor", None, None), ("OutputIndexTensor", None, None)]
    x = Buffer(Device(None), 64, DEFAULT, 4, 0)
    x.name = "X"
    outs = [BufferBinding(x, 0, 32), BufferBinding(x, 16, 32)]
    assert core_binding.hazards(_Table(d, [None], outs, None, None)) == (
        "outputs 0 and 1 overlap (output 0 (OutputValueTensor) 'X' bytes [0, 32), output 1 "
        "(OutputIndexTensor) 'X' bytes [16, 48))")
    assert core_binding.hazards(_Table(d, [None], outs[:1], None, BufferBinding(x, 16, 16))) == (
        "the persistent resource 'X' bytes [16, 32) overlaps output 0 (OutputValueTensor) 'X' "
        "bytes [0, 32)")
    assert core_binding.hazards(_Table(d, [None], outs[:1], BufferBinding(x, 32, 32), None)) \
        is None


# ---- 6. CPU access without a fence wait ----------------------------------------------------

def test_map_before_the_fence_wait(rig):
    a = rig.buf("A", state=COPY_DEST)
    rig.upload(a)
    rig.barrier(T.Transition(a, COPY_DEST, COPY_SOURCE))
    rb = rig.buf("readback", heap=READBACK)
    rig.cl.CopyResource(rb, a)
    rig.submit()
    rb.Map(0, None)  # no wait yet
    rb.Unmap(0, dml.D3D12_RANGE(0, 0))
    assert rig.text("CPU_ACCESS_BEFORE_GPU_COMPLETION") == (
        "ID3D12Resource::Map: the CPU may read 'readback' bytes [0, 16) (the read range), but "
        "command queue 'queue', command list 'list', command 2 (copy of 16 bytes from 'A' to "
        "'readback') writes 'readback' bytes [0, 16) on the GPU and the CPU has not waited for "
        "that "
        "work: wait for a fence signaled after it (SetEventOnCompletion + WaitForSingleObject, or "
        "GetCompletedValue) before touching the buffer.")
    rig.iq.ClearStoredMessages()
    event = dml.CreateEvent()
    rig.fence.SetEventOnCompletion(rig.value, event)
    dml.WaitForSingleObject(event, dml.INFINITE)
    rb.Map(0, dml.D3D12_RANGE(0, 16))
    rb.Unmap(0, dml.D3D12_RANGE(0, 0))
    assert rig.ids() == []
    rig.reset()


def test_upload_buffer_rewritten_while_the_gpu_reads_it(rig):
    a = rig.buf("A", state=COPY_DEST)
    up = rig.upload(a)
    rig.submit()
    up.Map(0, dml.D3D12_RANGE(0, 0))  # no read: fine
    up.Unmap(0, dml.D3D12_RANGE(4, 8))  # wrote bytes the copy reads
    assert rig.ids() == ["CPU_ACCESS_BEFORE_GPU_COMPLETION"]
    assert rig.messages()[0].pDescription.startswith(
        "ID3D12Resource::Unmap: the CPU wrote 'upload' bytes [4, 8) (the written range), but "
        "command queue 'queue', command list 'list', command 0 (copy of 16 bytes from 'upload' "
        "to 'A') reads 'upload' bytes [0, 16) on the GPU")
    rig.wait()
    rig.reset()
    rig.iq.ClearStoredMessages()
    up.Map(0, None)
    up.Unmap(0, None)
    assert rig.ids() == []


def test_get_completed_value_counts_as_a_wait(rig):
    rb = rig.buf("readback", heap=READBACK)
    a = rig.buf("A", state=COPY_DEST)
    rig.upload(a)
    rig.barrier(T.Transition(a, COPY_DEST, COPY_SOURCE))
    rig.cl.CopyResource(rb, a)
    rig.submit()
    while rig.fence.GetCompletedValue() < rig.value:
        pass
    rb.Map(0, None)
    rb.Unmap(0, None)
    assert rig.ids() == []
    rig.reset()


# ---- 7. never-written memory ---------------------------------------------------------------

def test_read_of_unwritten_memory_reported_once_per_range(rig):
    a = rig.buf("A", 32)
    rig.upload(a, np.ones(2, np.float32), offset=0)  # bytes [0, 8) only
    rig.barrier(T.Transition(a, COPY_DEST, UAV))  # promoted to COPY_DEST by the copy
    rig.dispatch(rig.id1, [bind(a, 0)], [bind(rig.buf("B"))], "t1")
    rig.dispatch(rig.id2, [bind(a, 0)], [bind(rig.buf("C"))], "t2")  # the same range again
    rig.flush()
    assert rig.ids() == ["READ_OF_UNWRITTEN_MEMORY"]
    m = rig.messages()[0]
    assert m.Severity == dml.D3D12_MESSAGE_SEVERITY_WARNING
    assert m.pDescription == (
        f"{ECL}, command 3 (RecordDispatch of DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled "
        "operator 'id1') with binding table 't1') reads input 0 (InputTensor) = 'A' bytes [0, 16), "
        "but bytes [8, 16) of 'A' were never written (no copy, dispatch or initializer wrote them "
        "since the resource was created); they read as zeros.")
    rig.iq.ClearStoredMessages()
    rig.dispatch(rig.id1, [bind(a, 16)], [bind(rig.buf("D"))], "t3")  # a new range
    rig.flush()
    assert rig.ids() == ["READ_OF_UNWRITTEN_MEMORY"]
    assert "but bytes [16, 32) of 'A' were never written" in rig.messages()[0].pDescription


# ---- 8. initialization ---------------------------------------------------------------------

def test_executed_before_initialization(fresh):
    op = fresh.compile("op", init=False)
    fresh.dispatch(op, [bind(fresh.buf("A"))], [bind(fresh.buf("B"))], "t")
    fresh.execute()
    assert fresh.ids() == ["DML_OPERATOR_NOT_INITIALIZED", "READ_OF_UNWRITTEN_MEMORY",
                           "DEVICE_REMOVAL_PROCESS_AT_FAULT"]
    assert fresh.text("DML_OPERATOR_NOT_INITIALIZED") == (
        f"{ECL}, command 1 (RecordDispatch of DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled "
        "operator 'op') with binding table 't'): the compiled operator executes before an operator "
        "initializer initialized it; record and execute an IDMLOperatorInitializer dispatch for it "
        "first.")
    assert fresh.d3d.GetDeviceRemovedReason() == dml.DXGI_ERROR_DEVICE_REMOVED
    assert fresh.text("DEVICE_REMOVAL_PROCESS_AT_FAULT").startswith(
        "ID3D12CommandQueue::ExecuteCommandLists: DML_OPERATOR_ELEMENT_WISE_IDENTITY: the compiled "
        "operator was executed before an operator initializer initialized it -> device removal "
        "has been triggered (DXGI_ERROR_DEVICE_REMOVED): GetDeviceRemovedReason returns "
        "DXGI_ERROR_DEVICE_REMOVED from now on")


def test_initialized_twice(fresh):
    op = fresh.compile("op")
    fresh.initialize(op, flush=False)
    fresh.execute()
    assert fresh.text("DML_OPERATOR_INITIALIZED_TWICE") == (
        "ID3D12CommandQueue::ExecuteCommandLists: command queue 'queue', command list 'list', "
        "command 1 (RecordDispatch of operator initializer 'init' (of "
        "DML_OPERATOR_ELEMENT_WISE_IDENTITY) with binding table 'init table'): "
        "DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled operator 'op') was already initialized; a "
        "compiled operator is initialized exactly once.")
    assert fresh.d3d.GetDeviceRemovedReason() == dml.DXGI_ERROR_DEVICE_REMOVED


def _owned_add(r):
    owned = dml.tensor_desc(F4, flags=dml.DML_TENSOR_FLAG_OWNED_BY_DML)
    op = r.compile("add", "ELEMENT_WISE_ADD", init=False, ATensor=F4, BTensor=owned,
                   OutputTensor=F4)
    size = op.GetBindingProperties().PersistentResourceSize
    weights, p1, p2 = r.buf("weights", state=COPY_DEST), r.buf("p1", size), r.buf("p2", size)
    r.upload(weights)
    r.barrier(T.Transition(weights, COPY_DEST, UAV))
    arr = dml.DML_BUFFER_ARRAY_BINDING(2, [None, dml.DML_BUFFER_BINDING(weights, 0, 16)])
    r.initialize(op, inputs=[dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER_ARRAY, arr)],
                 outputs=[bind(p1, 0, size)])
    return op, size, p1, p2


def test_persistent_resource_changed(fresh):
    op, size, p1, p2 = _owned_add(fresh)
    a = fresh.buf("A")
    fresh.upload(a)
    fresh.barrier(T.Transition(a, COPY_DEST, UAV))
    fresh.dispatch(op, [bind(a), dml.DML_BINDING_DESC(0, None)], [bind(fresh.buf("B"))], "t",
                   persistent=bind(p2, 0, size))
    fresh.flush()
    assert fresh.text("DML_PERSISTENT_RESOURCE_CHANGED") == (
        f"{ECL}, command 3 (RecordDispatch of DML_OPERATOR_ELEMENT_WISE_ADD (compiled operator "
        f"'add') with binding table 't'): the persistent resource bound at execution is 'p2' "
        f"bytes [0, {size}), but the operator's initializer wrote its OWNED_BY_DML data to 'p1' "
        f"bytes [0, {size}); bind the same buffer, offset and size as at initialization.")
    fresh.iq.ClearStoredMessages()
    fresh.upload(p1)  # overwrite the initializer's data
    fresh.flush()
    assert fresh.ids() == ["DML_PERSISTENT_RESOURCE_CHANGED"]
    assert "which overlaps the persistent resource of DML_OPERATOR_ELEMENT_WISE_ADD (compiled " \
           "operator 'add')" in fresh.messages()[0].pDescription


# ---- 9. binding mistakes -------------------------------------------------------------------

@pytest.mark.parametrize("mistake,expected", [
    ("size", "input 0 (InputTensor): the value of SizeInBytes is too small. 4 was provided, but "
             "16 was expected."),
    ("offset", "input 0 (InputTensor): the value of Offset is misaligned. 4 was provided, but it "
               "must be a multiple of 16."),
    ("count", "2 input bindings were provided, but DML_OPERATOR_ELEMENT_WISE_IDENTITY has 1 "
              "inputs (optional tensors keep their slot: bind DML_BINDING_TYPE_NONE)."),
    ("type", "input 0 (InputTensor): DML_BINDING_TYPE_BUFFER_ARRAY is only for operator "
             "initializers; a compiled operator takes DML_BINDING_TYPE_BUFFER"),
    ("range", "input 0 (InputTensor): the range [0, 32) is past the end of 'A', whose width is 16 "
              "bytes."),
    ("owned", "input 1 (BTensor): the tensor has DML_TENSOR_FLAG_OWNED_BY_DML, so it is bound only "
              "to the operator initializer; bind NONE for execution"),
])
def test_binding_mistakes(fresh, mistake, expected):
    a = fresh.buf("A")
    if mistake == "owned":
        owned = dml.tensor_desc(F4, flags=dml.DML_TENSOR_FLAG_OWNED_BY_DML)
        op = fresh.compile("op", "ELEMENT_WISE_ADD", init=False, ATensor=F4, BTensor=owned,
                           OutputTensor=F4)
        ins = [bind(a), bind(fresh.buf("W"))]
        name = "ELEMENT_WISE_ADD"
    else:
        op = fresh.compile("op", init=False)
        name = "ELEMENT_WISE_IDENTITY"
        ins = {"size": [bind(a, 0, 4)], "offset": [bind(fresh.buf("A32", 32), 4, 16)],
               "count": [bind(a), bind(a)], "range": [bind(a, 0, 32)],
               "type": [dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER_ARRAY,
                                             dml.DML_BUFFER_ARRAY_BINDING(1, [None]))]}[mistake]
    t = fresh.table(op, "t")
    t.BindInputs(ins)
    assert fresh.text("DML_INVALID_BINDING") == (
        f"IDMLBindingTable::BindInputs: binding table 't' of DML_OPERATOR_{name} (compiled "
        f"operator 'op'): {expected}")
    assert fresh.dml.GetDeviceRemovedReason() == dml.E_INVALIDARG


def test_missing_binding_at_record(fresh):
    op = fresh.compile("op", init=False)
    t = fresh.table(op, "t")
    t.BindInputs([bind(fresh.buf("A"))])
    fresh.cl.SetDescriptorHeaps(1, [fresh.heap])
    fresh.rec.RecordDispatch(fresh.cl, op, t)
    assert fresh.text("DML_MISSING_BINDING").endswith(
        "binding table 't': required bindings are not set: output 0 (OutputTensor) (bind them "
        "before recording, or compile with DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE)")


# ---- 10. device removal --------------------------------------------------------------------

def test_every_removal_names_its_cause(debug_layer):
    # DirectML misuse: the DirectML device is removed, the D3D12 device is not.
    r = Rig()
    r.table(r.compile("op", init=False), "t").BindOutputs([bind(r.buf("B"), 0, 4)])
    assert r.dml.GetDeviceRemovedReason() == dml.E_INVALIDARG
    assert r.d3d.GetDeviceRemovedReason() == dml.S_OK
    assert r.ids() == ["DML_INVALID_BINDING", "DEVICE_REMOVAL_PROCESS_AT_FAULT"]
    assert r.text("DEVICE_REMOVAL_PROCESS_AT_FAULT").startswith(
        "IDMLBindingTable::BindOutputs: output 0 (OutputTensor): the value of SizeInBytes is too "
        "small. 4 was provided, but 16 was expected. -> DirectML device removal has been triggered "
        "(E_INVALIDARG): IDMLDevice::GetDeviceRemovedReason returns E_INVALIDARG from now on")
    # Executing an open command list removes the D3D12 device.
    r = Rig()
    r.queue.ExecuteCommandLists([r.cl])
    assert r.d3d.GetDeviceRemovedReason() == dml.DXGI_ERROR_INVALID_CALL
    assert r.dml.GetDeviceRemovedReason() == dml.DXGI_ERROR_INVALID_CALL
    assert r.ids() == ["EXECUTECOMMANDLISTS_OPENCOMMANDLIST", "DEVICE_REMOVAL_PROCESS_AT_FAULT"]
    assert r.text("DEVICE_REMOVAL_PROCESS_AT_FAULT") == (
        "ID3D12CommandQueue::ExecuteCommandLists: command list 0 is still open; Close it before "
        "executing it -> device removal has been triggered (DXGI_ERROR_INVALID_CALL): "
        "GetDeviceRemovedReason returns DXGI_ERROR_INVALID_CALL from now on for ID3D12Device "
        f"@0x{id(r.d3d._core):X} and every DirectML device created on it.".replace(
            "ID3D12Device @", "unnamed ID3D12Device @"))
    # A recording error, then executing the failed list.
    r = Rig()
    r.cl.ResourceBarrier(1, [T.Transition(r.buf("A"), COMMON, COMMON)])
    with pytest.raises(dml.HResultError):
        r.cl.Close()
    r.queue.ExecuteCommandLists([r.cl])
    assert r.ids() == ["RESOURCE_BARRIER_MATCHING_STATES", "EXECUTECOMMANDLISTS_FAILEDCOMMANDLIST",
                       "DEVICE_REMOVAL_PROCESS_AT_FAULT"]
    assert r.text("RESOURCE_BARRIER_MATCHING_STATES") == (
        "ID3D12GraphicsCommandList::ResourceBarrier: command list 'list': barrier 0: StateBefore "
        "and StateAfter are both 0x0; a transition must change the state")
    assert len(r.messages("DEVICE_REMOVAL_PROCESS_AT_FAULT")) == 1


# ---- 11. leaks -----------------------------------------------------------------------------

def test_report_live_device_objects(debug_layer):
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    d3d.SetName("dev")
    iq = d3d.QueryInterface(dml.ID3D12InfoQueue)
    kept = Rig.named(d3d.CreateCommittedResource(
        dml.CD3DX12_HEAP_PROPERTIES(1), 0, dml.CD3DX12_RESOURCE_DESC.Buffer(16), COMMON), "kept")
    released = d3d.CreateCommittedResource(dml.CD3DX12_HEAP_PROPERTIES(1), 0,
                                           dml.CD3DX12_RESOURCE_DESC.Buffer(16), COMMON)
    assert released.Release() == 0
    d3d.CreateFence(0, 0)  # dropped at once: collected, not live
    dev = Rig.named(dml.DMLCreateDevice(d3d, 0), "dml")
    d3d.QueryInterface(dml.ID3D12DebugDevice).ReportLiveDeviceObjects(
        dml.D3D12_RLDO_SUMMARY | dml.D3D12_RLDO_DETAIL)
    got = [(catalog.BY_ID[int(iq.GetMessage(i).ID)].name, iq.GetMessage(i).pDescription)
           for i in range(iq.GetNumStoredMessages())]
    assert [n for n, _ in got] == ["LIVE_OBJECT_SUMMARY", "LIVE_DEVICE", "LIVE_RESOURCE",
                                   "DML_LIVE_OBJECT"]
    assert got[0][1] == ("ID3D12DebugDevice::ReportLiveDeviceObjects: 3 live objects of "
                         "ID3D12Device 'dev': 1 ID3D12Device, 1 ID3D12Resource, 1 IDMLDevice1")
    assert got[2][1] == (f"ID3D12DebugDevice::ReportLiveDeviceObjects: Live ID3D12Resource at "
                         f"0x{id(kept):X}, Name: 'kept', Refcount: 1")
    iq.ClearStoredMessages()
    dev.Release()
    assert d3d.Release() == 0  # the final release reports what is still alive
    assert [iq.GetMessage(i).pDescription for i in range(iq.GetNumStoredMessages())] == [
        "ID3D12Device::Release: 1 live objects of ID3D12Device 'dev': 1 ID3D12Resource",
        f"ID3D12Device::Release: Live ID3D12Resource at 0x{id(kept):X}, Name: 'kept', Refcount: 1"]


# ---- the info queue ------------------------------------------------------------------------

def _misuse(rig):
    """A D3D12-layer error that removes nothing: a transition with the wrong StateBefore."""
    a = rig.buf("A", state=COPY_DEST)
    rig.barrier(T.Transition(a, COPY_SOURCE, UAV))
    rig.flush()


def test_message_struct_and_log_format(rig, caplog):
    with caplog.at_level(logging.WARNING, logger="dmlsim.debug"):
        _misuse(rig)
    m = rig.iq.GetMessage(0)
    assert (m.Category, m.Severity, m.ID) == (
        dml.D3D12_MESSAGE_CATEGORY_RESOURCE_MANIPULATION, dml.D3D12_MESSAGE_SEVERITY_ERROR,
        dml.D3D12_MESSAGE_ID_RESOURCE_BARRIER_BEFORE_AFTER_MISMATCH)
    assert m.DescriptionByteLength == len(m.pDescription) + 1
    (record,) = [r for r in caplog.records if r.name == "dmlsim.debug"]
    assert record.levelno == logging.ERROR
    assert record.getMessage() == (f"D3D12 ERROR: {m.pDescription} [ RESOURCE_MANIPULATION "
                                   "ERROR #527: RESOURCE_BARRIER_BEFORE_AFTER_MISMATCH ]")
    with pytest.raises(dml.HResultError):
        rig.iq.GetMessage(1)


def test_storage_filter_mutes_by_id_and_stack(rig, caplog):
    deny = dml.D3D12_INFO_QUEUE_FILTER(DenyList=dml.D3D12_INFO_QUEUE_FILTER_DESC(
        NumIDs=1, pIDList=[dml.D3D12_MESSAGE_ID_RESOURCE_BARRIER_BEFORE_AFTER_MISMATCH]))
    rig.iq.PushStorageFilter(deny)
    assert rig.iq.GetStorageFilterStackSize() == 2
    assert rig.iq.GetStorageFilter().DenyList.pIDList == [
        dml.D3D12_MESSAGE_ID_RESOURCE_BARRIER_BEFORE_AFTER_MISMATCH]
    with caplog.at_level(logging.WARNING, logger="dmlsim.debug"):
        _misuse(rig)
    assert rig.iq.GetNumStoredMessages() == 0 and rig.iq.GetNumMessagesDeniedByStorageFilter() >= 1
    assert not [r for r in caplog.records if r.name == "dmlsim.debug"]
    rig.iq.PopStorageFilter()
    rig.iq.AddStorageFilterEntries(dml.D3D12_INFO_QUEUE_FILTER(
        AllowList=dml.D3D12_INFO_QUEUE_FILTER_DESC(
            pSeverityList=[dml.D3D12_MESSAGE_SEVERITY_WARNING])))
    _misuse(rig)  # an ERROR: not in the allow list
    assert rig.iq.GetNumStoredMessages() == 0
    rig.iq.ClearStorageFilter()
    _misuse(rig)
    assert rig.ids() == ["RESOURCE_BARRIER_BEFORE_AFTER_MISMATCH"]
    with pytest.raises(dml.HResultError):  # counts are checked against the lists
        rig.iq.AddStorageFilterEntries(dml.D3D12_INFO_QUEUE_FILTER(
            DenyList=dml.D3D12_INFO_QUEUE_FILTER_DESC(NumIDs=2, pIDList=[1])))


def test_retrieval_filter_limit_and_application_messages(rig):
    rig.iq.AddApplicationMessage(dml.D3D12_MESSAGE_SEVERITY_INFO, "hello")
    _misuse(rig)
    rig.iq.AddRetrievalFilterEntries(dml.D3D12_INFO_QUEUE_FILTER(
        AllowList=dml.D3D12_INFO_QUEUE_FILTER_DESC(pCategoryList=[
            dml.D3D12_MESSAGE_CATEGORY_APPLICATION_DEFINED])))
    assert rig.iq.GetNumStoredMessages() == 2
    assert rig.iq.GetNumStoredMessagesAllowedByRetrievalFilter() == 1
    m = rig.iq.GetMessage(0)
    assert (m.ID, m.pDescription) == (dml.D3D12_MESSAGE_ID_STRING_FROM_APPLICATION, "hello")
    rig.iq.ClearRetrievalFilter()
    rig.iq.SetMessageCountLimit(1)
    try:
        rig.iq.AddApplicationMessage(dml.D3D12_MESSAGE_SEVERITY_INFO, "last")
        assert rig.iq.GetNumStoredMessages() == 1 and rig.iq.GetMessage(0).pDescription == "last"
        assert rig.iq.GetNumMessagesDiscardedByMessageCountLimit() >= 2
    finally:
        rig.iq.SetMessageCountLimit(-1)


def test_break_on_severity_raises_at_the_call(rig):
    rig.iq.SetBreakOnSeverity(dml.D3D12_MESSAGE_SEVERITY_ERROR, True)
    assert rig.iq.GetBreakOnSeverity(dml.D3D12_MESSAGE_SEVERITY_ERROR)
    a = rig.buf("A", state=COPY_DEST)
    rig.barrier(T.Transition(a, COPY_SOURCE, UAV))
    rig.cl.Close()
    with pytest.raises(dml.D3D12DebugBreak) as e:
        rig.queue.ExecuteCommandLists([rig.cl])
    assert e.value.message.id == dml.D3D12_MESSAGE_ID_RESOURCE_BARRIER_BEFORE_AFTER_MISMATCH
    assert str(e.value).startswith("D3D12 ERROR: ID3D12CommandQueue::ExecuteCommandLists:")
    rig.iq.SetBreakOnSeverity(dml.D3D12_MESSAGE_SEVERITY_ERROR, False)
    rig.iq.AddApplicationMessage(dml.D3D12_MESSAGE_SEVERITY_ERROR, "no break now")


def test_callbacks_and_muting(rig, caplog):
    seen = []
    cookie = rig.iq.RegisterMessageCallback(
        lambda cat, sev, mid, text, ctx: seen.append((mid, ctx)), 0, "ctx")
    rig.iq.SetMuteDebugOutput(True)
    with caplog.at_level(logging.WARNING, logger="dmlsim.debug"):
        _misuse(rig)
    assert seen == [(dml.D3D12_MESSAGE_ID_RESOURCE_BARRIER_BEFORE_AFTER_MISMATCH, "ctx")]
    assert rig.iq.GetNumStoredMessages() == 1  # muted output is still stored
    assert not [r for r in caplog.records if r.name == "dmlsim.debug"]
    rig.iq.UnregisterMessageCallback(cookie)
    with pytest.raises(dml.HResultError):
        rig.iq.UnregisterMessageCallback(cookie)


def test_dml_debug_device_mute(debug_layer):
    r = Rig()
    r.dml.QueryInterface(dml.IDMLDebugDevice).SetMuteDebugOutput(True)
    r.table(r.compile("op", init=False), "t").BindInputs([bind(r.buf("A"), 0, 4)])
    assert r.ids() == []  # DirectML sends nothing to the info queue
    assert r.dml.GetDeviceRemovedReason() == dml.E_INVALIDARG


def test_info_queue_is_a_per_device_singleton(rig):
    assert rig.d3d.QueryInterface(dml.ID3D12InfoQueue) is rig.iq
    assert rig.d3d.QueryInterface(dml.ID3D12InfoQueue1) is rig.iq


# ---- the demo ------------------------------------------------------------------------------

def test_demo_reports_the_three_mistakes_and_the_fix_is_silent(debug_layer):
    import re
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import debug_layer_demo
    finally:
        sys.path.pop(0)
    z, lines = debug_layer_demo.run(fixed=False)
    assert [re.search(r"#\d+: (\w+) \]$", line).group(1) for line in lines] == [
        "INVALID_SUBRESOURCE_STATE", "DML_MISSING_UAV_BARRIER", "CPU_ACCESS_BEFORE_GPU_COMPLETION"]
    z_fixed, lines_fixed = debug_layer_demo.run(fixed=True)
    assert lines_fixed == []
    assert np.all(z == z_fixed) and np.all(z_fixed == np.float32([4, 16, 36, 64]))


# ---- the catalogue docs --------------------------------------------------------------------

def test_message_docs_are_generated_from_the_catalogue():
    import importlib.util
    spec = importlib.util.spec_from_file_location("gen_debug_docs", ROOT / "tools" /
                                                  "gen_debug_docs.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert gen.OUT.read_text() == gen.build(), "run python tools/gen_debug_docs.py"
    for e in catalog.ENTRIES:  # every ID is documented and exported under its C name
        assert f"### {e.id} {e.name}" in gen.OUT.read_text()
        assert getattr(dml, "D3D12_MESSAGE_ID_" + e.name) == e.id


def test_failed_hresult_methods_are_reported_too(rig):
    """DirectML's debug layer prints why CreateOperator failed; so does dmlsim, next to the
    raise (DML_INVALID_ARGUMENT), and only on a debug DirectML device."""
    bad = dml.operator_desc("ELEMENT_WISE_IS_INFINITY", InputTensor=np.zeros(4, np.int8),
                            OutputTensor=np.zeros(4, np.uint8))
    with pytest.raises(dml.HResultError) as raised:
        rig.dml.CreateOperator(bad)
    assert rig.text("DML_INVALID_ARGUMENT") == f"{raised.value.message} (E_INVALIDARG)"
    assert raised.value.message.startswith("DML_OPERATOR_ELEMENT_WISE_IS_INFINITY: "
                                           "InputTensor.DataType is DML_TENSOR_DATA_TYPE_INT8")
    rig.iq.ClearStoredMessages()
    plain = dml.DMLCreateDevice(rig.d3d, dml.DML_CREATE_DEVICE_FLAG_NONE)
    with pytest.raises(dml.HResultError):
        plain.CreateOperator(bad)
    assert rig.iq.GetNumStoredMessages() == 0

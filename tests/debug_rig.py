"""Shared rig of the debug-layer tests (tests/test_debug_layer*.py): named objects on a
debug-enabled device pair, helpers that record and submit, and the fixtures
``debug_layer``, ``shared``, ``rig`` and ``fresh`` (import them into a test module)."""
from __future__ import annotations

import logging  # noqa: F401 (used by the test modules)
import pathlib
import sys  # noqa: F401 (used by the test modules)

import numpy as np
import pytest

import dmlsim as dml
from dmlsim._core import binding as core_binding  # noqa: F401 (used by the test modules)
from dmlsim._debug import catalog

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

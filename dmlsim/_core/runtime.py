"""The Direct3D 12 side of the runtime: devices, buffers, descriptor heaps, command lists,
queues, fences and events.

Command lists record frozen command records; queues replay them with one handler per record
type (``HANDLERS``). JAX dispatch is asynchronous, so replaying a list returns before the
kernels finish; fences complete when the arrays the work produced are ready.
"""
from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass

from .hresult import (DXGI_ERROR_DEVICE_REMOVED, E_FAIL, E_INVALIDARG, HResultError, fail,
                      hresult_name)
from . import config, listcompile
from .memory import DeviceMemory, HostMemory

# D3D12 enum values used by the core.
HEAP_DEFAULT, HEAP_UPLOAD, HEAP_READBACK, HEAP_CUSTOM = 1, 2, 3, 4
LIST_DIRECT, LIST_BUNDLE, LIST_COMPUTE, LIST_COPY = 0, 1, 2, 3
STATE_COMMON = 0
STATE_UNORDERED_ACCESS = 0x8
STATE_COPY_DEST = 0x400
STATE_COPY_SOURCE = 0x800
STATE_GENERIC_READ = 0xAC3
FLAG_ALLOW_UNORDERED_ACCESS = 0x4
DESCRIPTOR_INCREMENT = 32
INFINITE = 0xFFFFFFFF

_va = itertools.count(1)
# dmlsim.trace() sets this to TRACE(queue, item, run) while it records; Queue._run checks it
# once per item, so tracing off costs one `is not None` test per item.
TRACE = None
_HEAPS: dict[int, "DescriptorHeap"] = {}  # base pointer (cpu and gpu) -> heap


class ExecutionFault(Exception):
    """Raised by a command handler: the device is removed with ``reason``."""

    def __init__(self, message, reason=DXGI_ERROR_DEVICE_REMOVED):
        super().__init__(message)
        self.reason = reason


class Device:
    """What every object of one D3D12 device shares: its JAX device and its removal state."""

    def __init__(self, jax_device, name=""):
        self.jax_device = jax_device
        self.removed_reason = 0  # S_OK while alive
        self.removed_message = ""
        self.name = name
        self.debug = False
        self.observers = []  # debug-layer hooks: observer(event, **info)

    @property
    def removed(self) -> bool:
        return self.removed_reason != 0

    def remove(self, reason: int, message: str) -> None:
        if not self.removed:
            self.removed_reason = reason
            self.removed_message = message
            self.notify("device_removed", reason=reason, message=message)

    def check_alive(self, method: str) -> None:
        if self.removed:
            fail(DXGI_ERROR_DEVICE_REMOVED,
                 f"{method}: the device was removed ({hresult_name(self.removed_reason)}): "
                 f"{self.removed_message}")

    def notify(self, event: str, **info) -> None:
        for obs in self.observers:
            obs(event, **info)


class Buffer:
    """A committed buffer resource: ``width`` bytes in one heap type."""

    def __init__(self, device: Device, width: int, heap_type: int, flags: int, state: int):
        self.device = device
        self.width = int(width)
        self.heap_type = heap_type
        self.flags = flags
        self.state = state
        self.name = ""
        self.mapped = 0
        self.gpu_va = next(_va) << 16
        self.memory = HostMemory(width) if heap_type in (HEAP_UPLOAD, HEAP_READBACK) \
            else DeviceMemory(width, device.jax_device)

    def label(self) -> str:
        return f"'{self.name}'" if self.name else f"buffer@0x{self.gpu_va:X}"


@dataclass(frozen=True)
class Descriptor:
    """A raw-buffer UAV descriptor: the bytes [offset, offset+size) of ``buffer``."""

    buffer: Buffer
    offset: int
    size: int


class DescriptorHeap:
    def __init__(self, device: Device, heap_type: int, count: int, flags: int):
        self.device = device
        self.type = heap_type
        self.count = int(count)
        self.flags = flags
        self.slots: list = [None] * self.count
        self.name = ""
        base = next(_va) << 24
        self.cpu_base = base
        self.gpu_base = base | (1 << 60)
        _HEAPS[self.cpu_base] = self
        _HEAPS[self.gpu_base] = self

    @property
    def shader_visible(self) -> bool:
        return bool(self.flags & 1)

    def contains(self, ptr: int, count: int = 1, gpu: bool = False) -> bool:
        base = self.gpu_base if gpu else self.cpu_base
        index, rem = divmod(ptr - base, DESCRIPTOR_INCREMENT)
        return rem == 0 and 0 <= index and index + count <= self.count

    def index_of(self, ptr: int, gpu: bool = False) -> int:
        return (ptr - (self.gpu_base if gpu else self.cpu_base)) // DESCRIPTOR_INCREMENT


def heap_of(ptr: int, gpu: bool = False):
    """The descriptor heap holding handle ``ptr``, or None."""
    for heap in _HEAPS.values():
        if heap.contains(ptr, 1, gpu):
            return heap
    return None


# ---- command records ---------------------------------------------------------------------

@dataclass(frozen=True)
class CopyRegion:
    dst: Buffer
    dst_offset: int
    src: Buffer
    src_offset: int
    size: int


@dataclass(frozen=True)
class Barrier:
    kind: int          # 0 transition, 1 aliasing, 2 UAV
    resource: Buffer | None
    before: int = 0
    after: int = 0
    resource_after: Buffer | None = None


@dataclass(frozen=True)
class SetHeaps:
    heaps: tuple


HANDLERS: dict = {}


def handler(record_type):
    def deco(fn):
        HANDLERS[record_type] = fn
        return fn
    return deco


@handler(CopyRegion)
def _copy(cmd: CopyRegion, ctx):
    src, dst = cmd.src.memory, cmd.dst.memory
    if dst.host:
        data = src.flush()[cmd.src_offset:cmd.src_offset + cmd.size].copy() if src.host else \
            src.read_bytes(cmd.src_offset, cmd.size)
        if src.host:
            dst.flush()[cmd.dst_offset:cmd.dst_offset + cmd.size] = data
        else:
            dst.queue_write(cmd.dst_offset, data)
    elif src.host:
        dst.write_host_bytes(cmd.dst_offset, src.flush()[cmd.src_offset:cmd.src_offset + cmd.size])
    else:
        dst.copy_from(cmd.dst_offset, src, cmd.src_offset, cmd.size)
    ctx.touched.update((cmd.dst.memory,))


@handler(Barrier)
def _barrier(cmd: Barrier, ctx):
    if cmd.kind == 0 and cmd.resource is not None:
        cmd.resource.state = cmd.after


@handler(SetHeaps)
def _set_heaps(cmd: SetHeaps, ctx):
    ctx.heaps = cmd.heaps


class Allocator:
    def __init__(self, device: Device, list_type: int):
        self.device = device
        self.type = list_type
        self.name = ""
        self.in_flight: list = []  # fence markers of executions recorded with this allocator
        self.recording = None

    def reset(self) -> None:
        if self.recording is not None:
            fail(E_FAIL, "ID3D12CommandAllocator::Reset: a command list recording into this "
                         "allocator is still open; Close it first")
        if any(not m.complete() for m in self.in_flight):
            fail(E_FAIL, "ID3D12CommandAllocator::Reset: command lists recorded with this "
                         "allocator are still executing on the GPU; wait on a fence first")
        self.in_flight.clear()


class CommandList:
    def __init__(self, device: Device, list_type: int, allocator: Allocator):
        self.device = device
        self.type = list_type
        self.allocator = allocator
        self.name = ""
        self.records: list = []
        self.open = True
        self.error = None
        self.heaps: tuple = ()
        self.version = 0  # bumps on every Reset: whole-list programs key on it
        self.compiled = None  # listcompile.ListState of this version
        allocator.recording = self

    def record_error(self, message: str) -> None:
        self.device.notify("list_error", cmd_list=self, message=message)
        if config.settings.strict:  # DMLSIM_STRICT: raise at the call site, record nothing
            fail(E_INVALIDARG, message)
        if self.error is None:
            self.error = message

    def append(self, record) -> None:
        self.records.append(record)

    def close(self) -> None:
        if not self.open:
            fail(E_FAIL, "ID3D12GraphicsCommandList::Close: the command list is already closed")
        self.open = False
        if self.allocator.recording is self:
            self.allocator.recording = None
        if self.error is not None:
            fail(E_INVALIDARG, f"ID3D12GraphicsCommandList::Close: recording failed earlier: "
                               f"{self.error}")
        self.records = tuple(self.records)

    def reset(self, allocator: Allocator) -> None:
        if self.open:
            fail(E_FAIL, "ID3D12GraphicsCommandList::Reset: the command list is still open; "
                         "Close it before Reset")
        if allocator.recording is not None:
            fail(E_INVALIDARG, "ID3D12GraphicsCommandList::Reset: the allocator is already in use "
                               "by another open command list")
        self.allocator = allocator
        allocator.recording = self
        self.records, self.open, self.error, self.heaps = [], True, None, ()
        self.version += 1


class ExecContext:
    """Per-execution state a handler sees: the descriptor heaps set, memories touched."""

    def __init__(self, queue):
        self.queue = queue
        self.heaps: tuple = ()
        self.touched: set = set()


class Marker:
    """Completion of work submitted before a point: the arrays that work produced.

    Markers chain (``previous``) so that they complete in submission order; the chain is
    walked iteratively, since thousands of executions may be queued before a wait."""

    def __init__(self, memories, previous=None, queue=None):
        self.items = items = []
        for mem in memories:
            if mem.host:
                items.extend((mem, a) for a in mem.pending_arrays())
            else:
                items.append((mem, mem.array))
        self.previous = previous
        self.queue = queue
        self.done = False

    def _chain(self):
        """The markers not yet known complete, oldest first."""
        chain, m = [], self
        while m is not None and not m.done:
            chain.append(m)
            m = m.previous
        chain.reverse()
        return chain

    def _finish(self):
        self.done, self.items, self.previous = True, [], None

    def complete(self) -> bool:
        if self.done:
            return True
        for m in self._chain():
            for mem, a in m.items:
                if a.is_deleted():  # donated to later work: that work's result is the witness
                    if not mem.host and not mem.array.is_ready():
                        return False
                elif not a.is_ready():
                    return False
            m._finish()
        return True

    def block(self) -> None:
        for m in self._chain():
            for mem, a in m.items:
                (mem.array if a.is_deleted() and not mem.host else a).block_until_ready()
            m._finish()


class Fence:
    def __init__(self, device: Device, initial: int):
        self.device = device
        self.completed = int(initial)
        self.pending: list = []  # [(value, Marker)] in submission order
        self.events: list = []   # [(value, Event)]
        self.name = ""

    def completed_value(self) -> int:
        while self.pending and self.pending[0][1].complete():
            value, _ = self.pending.pop(0)
            self.completed = max(self.completed, value)
        self._fire()
        return self.completed

    def signal_from_gpu(self, value: int, marker: Marker) -> None:
        self.pending.append((int(value), marker))
        # Completion is looked at where it is observed (GetCompletedValue, waits); here only
        # for waiting events or a long backlog, so that a Signal costs no device queries.
        if self.events or len(self.pending) > 32:
            self.completed_value()

    def signal_from_cpu(self, value: int) -> None:
        # Outstanding GPU signals are overtaken: D3D12 fences take the last value written.
        for _, m in self.pending:
            m.block()
        self.pending.clear()
        self.completed = int(value)
        self._fire()
        for q in list(Queue.blocked):
            q.pump()

    def _fire(self):
        keep = []
        for value, event in self.events:
            if self.completed >= value:
                event.set()
            else:
                keep.append((value, event))
        self.events = keep

    def will_reach(self, value: int) -> bool:
        return self.completed >= value or any(v >= value for v, _ in self.pending) or \
            any(q.signals_pending(self, value) for q in Queue.blocked)

    def wait(self, value: int, timeout_ms: int) -> bool:
        deadline = None if timeout_ms == INFINITE else time.monotonic() + timeout_ms / 1000
        while self.completed_value() < value:
            entry = next((m for v, m in self.pending if v >= value), None)
            if entry is not None and deadline is None:
                entry.block()
                continue
            if deadline is None and not self.will_reach(value):
                fail(E_FAIL, f"WaitForSingleObject: waiting forever: fence {self.name or ''} is at "
                             f"{self.completed} and nothing submitted will signal {value}")
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.0005)
        return True


class Event:
    """A Win32 event object (CreateEvent)."""

    def __init__(self, manual_reset=True, initial=False):
        self.manual_reset = manual_reset
        self.flag = bool(initial)
        self.waits: list = []  # (fence, value)
        self.lock = threading.Lock()

    def set(self):
        self.flag = True

    def reset(self):
        self.flag = False


class _Queued:
    """An allocator's in-flight entry for lists submitted but still held behind a Wait."""

    def __init__(self, queue, item):
        self.queue, self.item = queue, item

    def complete(self) -> bool:
        return not any(i is self.item for i in self.queue.items)


class Queue:
    """A command queue: Execute/Signal/Wait items replayed in order; a Wait on a fence value
    not yet reached holds the queue (later items stay queued) until the fence gets there."""

    blocked: set = set()

    def __init__(self, device: Device, list_type: int, priority=0, flags=0):
        self.device = device
        self.type = list_type
        self.priority = priority
        self.flags = flags
        self.name = ""
        self.items: list = []
        self.touched: set = set()
        self.last_marker = None
        self.open_marker = None  # marker of all work so far, if nothing was submitted since

    def submit(self, item) -> None:
        if not self.items and item[0] != "wait":  # nothing queued ahead: run it now
            self._run(item)
            return
        self.items.append(item)
        if item[0] == "execute":  # queued behind a Wait: the allocators are in use already
            for cl in item[1]:
                cl.allocator.in_flight.append(_Queued(self, item))
        self.pump()

    def signals_pending(self, fence, value) -> bool:
        return any(i[0] == "signal" and i[1] is fence and i[2] >= value for i in self.items)

    def pump(self) -> None:
        while self.items:
            item = self.items[0]
            if item[0] == "wait":
                fence, value = item[1], item[2]
                if fence.completed_value() < value and not any(
                        v >= value for v, _ in fence.pending):
                    Queue.blocked.add(self)
                    return
            self.items.pop(0)
            Queue.blocked.discard(self)
            self._run(item)

    def _run(self, item, traced=False) -> None:
        if TRACE is not None and not traced:  # dmlsim.trace() is recording: it calls back
            return TRACE(self, item, lambda it: self._run(it, True))
        kind = item[0]
        if kind != "execute" and self.device.observers:  # debug layer: queue_signal/queue_wait
            self.device.notify("queue_" + kind, queue=self, fence=item[1], value=item[2])
        if kind == "execute":
            self._execute(item[1])
        elif kind == "signal":
            fence, value = item[1], item[2]
            marker = self.open_marker or Marker(self.touched, self.last_marker, self)
            self.touched, self.last_marker, self.open_marker = set(), marker, None
            fence.signal_from_gpu(value, marker)
            if Queue.blocked:
                for q in list(Queue.blocked):
                    if q is not self:
                        q.pump()

    def _execute(self, lists) -> None:
        dev = self.device
        self.open_marker = None
        executed = []
        for cl in lists:
            if dev.removed:
                break
            ctx = ExecContext(self)
            if dev.observers:  # the debug layer walks the list before it runs
                dev.notify("execute_list", queue=self, cmd_list=cl, first=not executed)
            try:
                # A closed list runs as one compiled program when it can; the debug layer
                # (observers) and anything the compiler declines take the per-record path.
                if dev.observers or not listcompile.execute(cl, ctx):
                    for record in cl.records:
                        HANDLERS[type(record)](record, ctx)
            except ExecutionFault as fault:
                dev.remove(fault.reason, f"ID3D12CommandQueue::ExecuteCommandLists: {fault}")
            except HResultError as err:
                dev.remove(DXGI_ERROR_DEVICE_REMOVED,
                           f"ID3D12CommandQueue::ExecuteCommandLists: {err}")
            self.touched |= ctx.touched
            executed.append(cl)
        if executed:
            # One marker covers all work of this queue so far (queues complete in order), so
            # it replaces this queue's older marker in an allocator and serves the next Signal.
            marker = self.open_marker = Marker(self.touched, self.last_marker, self)
            for cl in executed:
                fl = cl.allocator.in_flight
                if fl and fl[-1].queue is self:
                    fl[-1] = marker
                else:
                    fl.append(marker)

"""Command records, their replay handlers, command allocators and command lists.

Command-list methods validate and append frozen records (Mesa's vk_cmd_queue, vkd3d); a queue
replays them with one handler per record type (``HANDLERS``). Every record type is declared
with :func:`record`, which lists it in ``RECORD_TYPES``: each per-type table (``HANDLERS``
here, the list compiler's steps, the debug layer's checks, the notebook reprs) has one row per
record type, and a test fails when a row is missing. Recording errors are sticky: ``Close``
fails with E_INVALIDARG.
"""
from __future__ import annotations

from dataclasses import dataclass

from .._schema.d3d12_enums import D3D12_RESOURCE_BARRIER_TYPE as BARRIER
from . import config
from .hresult import DXGI_ERROR_DEVICE_REMOVED, E_FAIL, E_INVALIDARG, fail
from .resources import Buffer

TRANSITION = BARRIER.D3D12_RESOURCE_BARRIER_TYPE_TRANSITION
ALIASING = BARRIER.D3D12_RESOURCE_BARRIER_TYPE_ALIASING
UAV = BARRIER.D3D12_RESOURCE_BARRIER_TYPE_UAV

RECORD_TYPES: list = []
HANDLERS: dict = {}


def record(cls):
    """Declare a command record type (a frozen dataclass): list it in ``RECORD_TYPES``."""
    RECORD_TYPES.append(cls)
    return cls


def handler(record_type):
    """Register the replay handler ``fn(record, ctx)`` of ``record_type``."""
    def deco(fn):
        HANDLERS[record_type] = fn
        return fn
    return deco


class ExecutionFault(Exception):
    """Raised by a command handler: the device is removed with ``reason``."""

    def __init__(self, message, reason=DXGI_ERROR_DEVICE_REMOVED):
        super().__init__(message)
        self.reason = reason


class ExecContext:
    """Per-execution state a handler sees: the descriptor heaps set, memories touched."""

    def __init__(self, queue):
        self.queue = queue
        self.heaps: tuple = ()
        self.touched: set = set()


# ---- records -------------------------------------------------------------------------------

@record
@dataclass(frozen=True)
class CopyRegion:
    dst: Buffer
    dst_offset: int
    src: Buffer
    src_offset: int
    size: int


@record
@dataclass(frozen=True)
class Barrier:
    kind: int          # D3D12_RESOURCE_BARRIER_TYPE: TRANSITION, ALIASING or UAV
    resource: Buffer | None
    before: int = 0
    after: int = 0
    resource_after: Buffer | None = None


@record
@dataclass(frozen=True)
class SetHeaps:
    heaps: tuple


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
    ctx.touched.add(cmd.dst.memory)


@handler(Barrier)
def _barrier(cmd: Barrier, ctx):
    if cmd.kind == TRANSITION and cmd.resource is not None:
        cmd.resource.state = cmd.after


@handler(SetHeaps)
def _set_heaps(cmd: SetHeaps, ctx):
    ctx.heaps = cmd.heaps


# ---- allocators and lists --------------------------------------------------------------------

class Allocator:
    def __init__(self, device, list_type: int):
        self.device = device
        self.type = list_type
        self.name = ""
        self.in_flight: list = []  # completion markers of executions recorded with this allocator
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
    def __init__(self, device, list_type: int, allocator: Allocator):
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

    def record_error(self, message: str, message_id: str = "COMMAND_LIST_RECORDING_ERROR") -> None:
        """A recording error: sticky (Close fails), or a raise in strict mode. ``message_id``
        names the debug layer's catalogue entry for it."""
        if self.device.observers:
            self.device.observers.list_error(cmd_list=self, message=message,
                                             message_id=message_id)
        if config.settings.strict:  # DMLSIM_STRICT: raise at the call site, record nothing
            fail(E_INVALIDARG, message)
        if self.error is None:
            self.error = message

    def append(self, rec) -> None:
        self.records.append(rec)

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

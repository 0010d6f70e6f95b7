"""Command records, command allocators and command lists.

Command-list methods validate and append frozen records (Mesa's vk_cmd_queue, vkd3d). A record
kind is a frozen dataclass deriving from :class:`Record`, and says in that one class what it
does: ``note`` (what preparing a closed list for execution remembers: heaps set, operators
dispatched, descriptor ranges read) and ``build`` (its typed steps, steps.py). Executing a
record runs its steps as one program; executing a whole list traces every record's steps into
one program (execute.py). Adding a record kind is adding one such class (docs/architecture.md
shows CopyRegion as the example). Recording errors are sticky: ``Close`` fails with
E_INVALIDARG.
"""
from __future__ import annotations

from dataclasses import dataclass

from .._schema.d3d12_enums import D3D12_RESOURCE_BARRIER_TYPE as BARRIER
from . import config
from .hresult import E_FAIL, E_INVALIDARG, fail
from .resources import Buffer

TRANSITION = BARRIER.D3D12_RESOURCE_BARRIER_TYPE_TRANSITION
ALIASING = BARRIER.D3D12_RESOURCE_BARRIER_TYPE_ALIASING
UAV = BARRIER.D3D12_RESOURCE_BARRIER_TYPE_UAV


class Record:
    """A command record kind. ``descriptors()`` (dispatches only) are read at execution."""

    reads_descriptors = False

    def note(self, st, i) -> None:
        """Remember what a prepared list needs of record ``i`` (execute.ListState)."""

    def build(self, b, descs) -> bool:
        """Append this record's steps to builder ``b`` (``descs``: the descriptors it reads,
        for a dispatch). False: it cannot join a whole-list program (``b.whole``); nothing
        was appended. Raises Misuse for what faults when the work executes."""
        return True


def record_types() -> tuple:
    """Every record kind (the subclasses of Record, wherever they are defined)."""
    out, todo = [], list(Record.__subclasses__())
    while todo:
        cls = todo.pop(0)
        out.append(cls)
        todo.extend(cls.__subclasses__())
    return tuple(out)


# ---- records -------------------------------------------------------------------------------

@dataclass(frozen=True)
class CopyRegion(Record):
    """CopyBufferRegion: ``size`` bytes from ``src`` at ``src_offset`` to ``dst``."""
    dst: Buffer
    dst_offset: int
    src: Buffer
    src_offset: int
    size: int

    def build(self, b, descs) -> bool:
        src, dst = self.src.memory, self.dst.memory
        if b.whole and src.host and dst.host:
            return False  # a host-to-host copy runs between programs
        b.copy(dst, self.dst_offset, src, self.src_offset, self.size)
        return True


@dataclass(frozen=True)
class Barrier(Record):
    """ResourceBarrier: orders work (programs keep record order anyway); a transition sets the
    resource's state when it executes."""
    kind: int          # D3D12_RESOURCE_BARRIER_TYPE: TRANSITION, ALIASING or UAV
    resource: Buffer | None
    before: int = 0
    after: int = 0
    resource_after: Buffer | None = None

    def build(self, b, descs) -> bool:
        if self.kind == TRANSITION and self.resource is not None:
            b.after.append(self._transition)
        return True

    def _transition(self) -> None:
        self.resource.state = self.after


@dataclass(frozen=True)
class SetHeaps(Record):
    """SetDescriptorHeaps: which heaps later dispatches' descriptors live in."""
    heaps: tuple


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
        self.compiled = None  # execute.ListState of this version
        self.compile_first = False  # SetCompileOnFirstExecution: one program from the start
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

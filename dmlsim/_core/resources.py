"""Direct3D 12 resources: the device's shared state, committed buffers, byte ranges
(descriptors and bindings) and descriptor heaps.

The lowest layer of the runtime: it knows memory, not commands.
"""
from __future__ import annotations

import itertools
import weakref
from dataclasses import dataclass

from .._schema.d3d12_enums import D3D12_DESCRIPTOR_HEAP_FLAGS, D3D12_HEAP_TYPE
from .hresult import DXGI_ERROR_DEVICE_REMOVED, fail, hresult_name
from .memory import DeviceMemory, HostMemory
from .observer import Observers
from .plancache import PlanCache

DESCRIPTOR_INCREMENT = 32
_HOST_HEAPS = (D3D12_HEAP_TYPE.D3D12_HEAP_TYPE_UPLOAD, D3D12_HEAP_TYPE.D3D12_HEAP_TYPE_READBACK)
# Address allocators: GPU virtual addresses and descriptor heap handles are unique in the
# process, as D3D12's are (a handle of one device's heap used on another is found foreign).
# They hold nothing.
_va = itertools.count(1)
_heap_ids = itertools.count(1)
_GPU_BIT = 1 << 60
_SHADER_VISIBLE = D3D12_DESCRIPTOR_HEAP_FLAGS.D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE


class Device:
    """What every object of one D3D12 device shares: its JAX device, its removal state, its
    observers (the debug layer), its plan cache (every compiled program of its work), its
    descriptor heaps by handle, its queues blocked on a fence Wait, and a weak set of the
    interface objects made from it."""

    def __init__(self, jax_device, name=""):
        self.jax_device = jax_device
        self.removed_reason = 0  # S_OK while alive
        self.removed_message = ""
        self.name = name
        self.debug = False
        self.observers = Observers()
        self.api = None  # the interface object (ID3D12Device) of this device
        self.children: weakref.WeakSet = weakref.WeakSet()
        self.released: weakref.WeakSet = weakref.WeakSet()  # buffers released to 0 refs
        self.plans = PlanCache()
        # Descriptor heaps by base handle (heap id << 32; GPU handles also set bit 60). Weak: a
        # heap nobody references any more is gone, with the descriptors (and buffers) it held.
        self.heaps: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self.blocked: set = set()  # queues held by a Wait on a fence value not reached

    @property
    def removed(self) -> bool:
        return self.removed_reason != 0

    def remove(self, reason: int, message: str) -> None:
        if not self.removed:
            self.removed_reason = reason
            self.removed_message = message
            if self.observers:
                self.observers.device_removed(reason=reason, message=message)

    def check_alive(self, method: str) -> None:
        if self.removed:
            fail(DXGI_ERROR_DEVICE_REMOVED,
                 f"{method}: the device was removed ({hresult_name(self.removed_reason)}): "
                 f"{self.removed_message}")


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
        self.released = False  # its last reference was released (Release returned 0)
        self.gpu_va = next(_va) << 16
        self.memory = HostMemory(width) if heap_type in _HOST_HEAPS \
            else DeviceMemory(width, device.jax_device)

    def label(self) -> str:
        return f"'{self.name}'" if self.name else f"buffer@0x{self.gpu_va:X}"


@dataclass(frozen=True)
class Range:
    """The bytes [offset, offset + size) of ``buffer``: a raw-buffer UAV descriptor in a heap,
    and what a DML_BUFFER_BINDING names."""

    buffer: Buffer
    offset: int
    size: int

    def overlaps(self, other: "Range") -> bool:
        return self.buffer is other.buffer and self.offset < other.offset + other.size and \
            other.offset < self.offset + self.size

    def describe(self) -> str:
        return f"{self.buffer.label()} bytes [{self.offset}, {self.offset + self.size})"


class DescriptorHeap:
    def __init__(self, device: Device, heap_type: int, count: int, flags: int):
        self.device = device
        self.type = heap_type
        self.count = int(count)
        self.flags = flags
        self.slots: list = [None] * self.count
        self.version = 0  # bumped by every descriptor write (listcompile's O(1) check)
        self.name = ""
        self.cpu_base = next(_heap_ids) << 32
        self.gpu_base = self.cpu_base | _GPU_BIT
        device.heaps[self.cpu_base] = self
        device.heaps[self.gpu_base] = self

    @property
    def shader_visible(self) -> bool:
        return bool(self.flags & _SHADER_VISIBLE)

    def contains(self, ptr: int, count: int = 1, gpu: bool = False) -> bool:
        base = self.gpu_base if gpu else self.cpu_base
        index, rem = divmod(ptr - base, DESCRIPTOR_INCREMENT)
        return rem == 0 and 0 <= index and index + count <= self.count

    def index_of(self, ptr: int, gpu: bool = False) -> int:
        return (ptr - (self.gpu_base if gpu else self.cpu_base)) // DESCRIPTOR_INCREMENT


def heap_of(device: Device, ptr: int, gpu: bool = False):
    """The descriptor heap of ``device`` holding handle ``ptr``, or None."""
    base = ((ptr >> 32) << 32) if ptr >= 0 else -1
    heap = device.heaps.get(base)
    if heap is not None and heap.contains(ptr, 1, gpu):
        return heap
    return None

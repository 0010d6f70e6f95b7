"""Direct3D 12 interfaces (ID3D12Device, ID3D12Resource, ...), D3D12CreateDevice, DXGI."""
from __future__ import annotations


from typing import Any

import numpy as np

from .._core import commands as C, config, queue as Q, resources as R
from .._core.hresult import (DXGI_ERROR_INVALID_CALL, DXGI_ERROR_NOT_FOUND, E_INVALIDARG,
                             E_NOTIMPL, E_OUTOFMEMORY, E_POINTER, S_OK, fail)
from .._debug import install
from .._schema import d3d12_enums as E
from . import d3d12_types as T
from .com import IUnknown, NamedObject, adopt, seq_arg, entry
from .limits import (DESCRIPTOR_BYTES, MAX_SHADER_VISIBLE_DESCRIPTORS, UINT64_LIMIT, copy_error,
                     memory_budget, uint32_arg, uint64_arg, within_budget)
from .info_queue import ID3D12DebugDevice, ID3D12InfoQueue, ID3D12InfoQueue1, report_live_objects

HEAP_DEFAULT, HEAP_UPLOAD, HEAP_READBACK, HEAP_CUSTOM = (
    T.D3D12_HEAP_TYPE_DEFAULT, T.D3D12_HEAP_TYPE_UPLOAD, T.D3D12_HEAP_TYPE_READBACK,
    T.D3D12_HEAP_TYPE_CUSTOM)
UAV_FLAG = T.D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS
DEFAULT, UPLOAD, READBACK = (E.D3D12_HEAP_TYPE.D3D12_HEAP_TYPE_DEFAULT,
                             E.D3D12_HEAP_TYPE.D3D12_HEAP_TYPE_UPLOAD,
                             E.D3D12_HEAP_TYPE.D3D12_HEAP_TYPE_READBACK)
_DIM = E.D3D12_RESOURCE_DIMENSION
_TEXTURES = (_DIM.D3D12_RESOURCE_DIMENSION_TEXTURE1D, _DIM.D3D12_RESOURCE_DIMENSION_TEXTURE2D,
             _DIM.D3D12_RESOURCE_DIMENSION_TEXTURE3D)
_HEAP_KINDS = tuple(E.D3D12_DESCRIPTOR_HEAP_TYPE)
_RTV_DSV = (E.D3D12_DESCRIPTOR_HEAP_TYPE.D3D12_DESCRIPTOR_HEAP_TYPE_RTV,
            E.D3D12_DESCRIPTOR_HEAP_TYPE.D3D12_DESCRIPTOR_HEAP_TYPE_DSV)
_SHADER_VISIBLE = E.D3D12_DESCRIPTOR_HEAP_FLAGS.D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE
_LIST_KINDS = tuple(E.D3D12_COMMAND_LIST_TYPE)
_QUEUE_KINDS = tuple(k for k in _LIST_KINDS
                     if k != E.D3D12_COMMAND_LIST_TYPE.D3D12_COMMAND_LIST_TYPE_BUNDLE)


def _jax_devices():
    import jax
    return jax.devices()


class ID3D12Object(NamedObject):
    pass


class ID3D12DeviceChild(ID3D12Object):
    _device: Any
    def GetDevice(self) -> ID3D12Device:
        return self._device


class ID3D12Pageable(ID3D12DeviceChild):
    pass


class ID3D12Debug(IUnknown):
    """D3D12GetDebugInterface(): EnableDebugLayer turns on D3D12 validation for devices
    created afterwards."""

    enabled = False

    def EnableDebugLayer(self) -> None:
        ID3D12Debug.enabled = True


@entry("D3D12GetDebugInterface")
def D3D12GetDebugInterface(*_: Any) -> ID3D12Debug:
    return ID3D12Debug()


class IDXGIAdapter1(IUnknown):
    def __init__(self, index, jax_device):
        self._index, self._jax_device = index, jax_device

    def GetDesc1(self) -> T.DXGI_ADAPTER_DESC1:
        d = self._jax_device
        return T.DXGI_ADAPTER_DESC1(
            Description=f"dmlsim adapter {self._index}: JAX {d.platform} device {d.id} "
                        f"({getattr(d, 'device_kind', d.platform)})",
            VendorId=0x10DE if d.platform == "gpu" else 0, DeviceId=d.id,
            DedicatedVideoMemory=memory_budget())

    GetDesc = GetDesc1


class IDXGIFactory1(IUnknown):
    def EnumAdapters(self, Adapter: int) -> IDXGIAdapter1:
        devices = _jax_devices()
        if not 0 <= int(Adapter) < len(devices):
            fail(DXGI_ERROR_NOT_FOUND, f"IDXGIFactory1::EnumAdapters: adapter {Adapter} does not "
                                       f"exist; there are {len(devices)} (one per JAX device)")
        return IDXGIAdapter1(int(Adapter), devices[int(Adapter)])

    EnumAdapters1 = EnumAdapters


@entry("CreateDXGIFactory1")
def CreateDXGIFactory1(*_: Any) -> IDXGIFactory1:
    return IDXGIFactory1()


CreateDXGIFactory = CreateDXGIFactory2 = CreateDXGIFactory1


@entry("D3D12CreateDevice")
def D3D12CreateDevice(pAdapter: IDXGIAdapter1 | None = None,
                      MinimumFeatureLevel: int = T.D3D_FEATURE_LEVEL_11_0,
                      *_: Any) -> ID3D12Device:
    """Create the D3D12 device of ``pAdapter`` (None: the default JAX device)."""
    config.enable_x64()
    if MinimumFeatureLevel not in set(T.D3D_FEATURE_LEVEL):
        fail(E_INVALIDARG, f"D3D12CreateDevice: MinimumFeatureLevel 0x{int(MinimumFeatureLevel):X} "
                           "is not a D3D_FEATURE_LEVEL")
    jd = pAdapter._jax_device if pAdapter is not None else _jax_devices()[0]
    return ID3D12Device(R.Device(jd), debug=ID3D12Debug.enabled)


class ID3D12Device(ID3D12Object):
    _void_methods = frozenset({"CreateUnorderedAccessView", "CreateShaderResourceView",
                               "CreateConstantBufferView", "CopyDescriptors",
                               "CopyDescriptorsSimple"})
    """ID3D12Device: buffers, descriptor heaps, command queues, allocators, lists, fences."""

    _live_message = "LIVE_DEVICE"

    def __init__(self, core: R.Device, debug=False):
        self._core = core
        core.debug = debug
        core.api = self
        if debug:
            install(core)

    def _extra_interfaces(self):
        return ((ID3D12InfoQueue, lambda: ID3D12InfoQueue.of(self)),
                (ID3D12InfoQueue1, lambda: ID3D12InfoQueue.of(self)),
                (ID3D12DebugDevice, lambda: ID3D12DebugDevice.of(self)))

    def Release(self) -> int:
        """With the debug layer, the release that brings the count to 0 reports the device's
        live objects (leaks), as ReportLiveDeviceObjects does."""
        refs = super().Release()
        if refs == 0 and self._core.debug:
            report_live_objects(self, "ID3D12Device::Release", 3, include_device=False)
        return refs

    def _alive(self, method):
        self._core.check_alive(f"ID3D12Device::{method}")

    def CreateCommittedResource(self, pHeapProperties: T.D3D12_HEAP_PROPERTIES, HeapFlags: int,
                                pDesc: T.D3D12_RESOURCE_DESC, InitialResourceState: int,
                                pOptimizedClearValue: Any = None,
                                *_: Any) -> ID3D12Resource:
        self._alive("CreateCommittedResource")
        m = "ID3D12Device::CreateCommittedResource"
        if pHeapProperties is None or pDesc is None:
            fail(E_INVALIDARG, f"{m}: pHeapProperties and pDesc are required")
        heap = uint32_arg(m, "pHeapProperties.Type", pHeapProperties.Type)
        if heap not in (DEFAULT, UPLOAD, READBACK):
            fail(E_INVALIDARG if heap != T.D3D12_HEAP_TYPE_CUSTOM else E_NOTIMPL,
                 f"{m}: heap type {heap} is not DEFAULT, UPLOAD or READBACK")
        d = pDesc
        if d.Dimension != T.D3D12_RESOURCE_DIMENSION_BUFFER:
            fail(E_NOTIMPL if d.Dimension in _TEXTURES else E_INVALIDARG,
                 f"{m}: Dimension {int(d.Dimension)}: dmlsim emulates buffers only "
                 "(D3D12_RESOURCE_DIMENSION_BUFFER)")
        if int(d.Width) <= 0:
            fail(E_INVALIDARG, f"{m}: Width is {d.Width}; a buffer needs at least one byte")
        if int(d.Width) >= UINT64_LIMIT:
            fail(E_INVALIDARG, f"{m}: Width is {d.Width}, which is not a UINT64")
        within_budget(self._core, m, int(d.Width))
        if (d.Height, d.DepthOrArraySize, d.MipLevels) != (1, 1, 1):
            fail(E_INVALIDARG, f"{m}: a buffer needs Height, DepthOrArraySize and MipLevels of 1, "
                               f"got {d.Height}, {d.DepthOrArraySize}, {d.MipLevels}")
        if d.Layout != T.D3D12_TEXTURE_LAYOUT_ROW_MAJOR:
            fail(E_INVALIDARG, f"{m}: a buffer needs Layout D3D12_TEXTURE_LAYOUT_ROW_MAJOR")
        if d.Format != T.DXGI_FORMAT_UNKNOWN:
            fail(E_INVALIDARG, f"{m}: a buffer needs Format DXGI_FORMAT_UNKNOWN")
        if d.Alignment not in (0, 65536):
            fail(E_INVALIDARG, f"{m}: a buffer's Alignment must be 0 or 65536, got {d.Alignment}")
        flags = int(d.Flags)
        state = int(InitialResourceState)
        if heap == UPLOAD and state != T.D3D12_RESOURCE_STATE_GENERIC_READ:
            fail(E_INVALIDARG, f"{m}: UPLOAD heap resources must start in "
                               "D3D12_RESOURCE_STATE_GENERIC_READ")
        if heap == READBACK and state != T.D3D12_RESOURCE_STATE_COPY_DEST:
            fail(E_INVALIDARG, f"{m}: READBACK heap resources must start in "
                               "D3D12_RESOURCE_STATE_COPY_DEST")
        if heap in (UPLOAD, READBACK) and flags & UAV_FLAG:
            fail(E_INVALIDARG, f"{m}: D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS is not allowed on "
                               "UPLOAD or READBACK heaps")
        buf = R.Buffer(self._core, int(d.Width), heap, flags, state)
        if self._core.observers:
            self._core.observers.resource_created(buffer=buf)
        return adopt(self._core, ID3D12Resource(self, buf, d))

    def CreateDescriptorHeap(self, pDescriptorHeapDesc: T.D3D12_DESCRIPTOR_HEAP_DESC
                             ) -> ID3D12DescriptorHeap:
        self._alive("CreateDescriptorHeap")
        d = pDescriptorHeapDesc
        if int(d.NumDescriptors) <= 0:
            fail(E_INVALIDARG, "ID3D12Device::CreateDescriptorHeap: NumDescriptors must be > 0")
        if d.Type not in _HEAP_KINDS:
            fail(E_INVALIDARG, f"ID3D12Device::CreateDescriptorHeap: bad Type {d.Type}")
        if d.Flags & _SHADER_VISIBLE and d.Type in _RTV_DSV:
            fail(E_INVALIDARG, "ID3D12Device::CreateDescriptorHeap: RTV and DSV heaps cannot be "
                               "shader visible")
        n = int(d.NumDescriptors)
        if d.Flags & _SHADER_VISIBLE and n > MAX_SHADER_VISIBLE_DESCRIPTORS:
            fail(E_INVALIDARG, f"ID3D12Device::CreateDescriptorHeap: NumDescriptors is {n}; a "
                               "shader-visible CBV_SRV_UAV heap holds at most "
                               f"{MAX_SHADER_VISIBLE_DESCRIPTORS:,}")
        if n * DESCRIPTOR_BYTES > memory_budget():
            fail(E_OUTOFMEMORY, f"ID3D12Device::CreateDescriptorHeap: {n} descriptors of "
                                f"{DESCRIPTOR_BYTES} bytes exceed the memory budget of "
                                f"{memory_budget()} bytes")
        heap = R.DescriptorHeap(self._core, int(d.Type), int(d.NumDescriptors), int(d.Flags))
        return adopt(self._core, ID3D12DescriptorHeap(self, heap, d))

    def GetDescriptorHandleIncrementSize(self, DescriptorHeapType: int) -> int:
        return R.DESCRIPTOR_INCREMENT

    def CreateCommandQueue(self, pDesc: T.D3D12_COMMAND_QUEUE_DESC) -> ID3D12CommandQueue:
        self._alive("CreateCommandQueue")
        if pDesc.Type not in _QUEUE_KINDS:
            fail(E_INVALIDARG, f"ID3D12Device::CreateCommandQueue: Type {pDesc.Type} is not "
                               "DIRECT, COMPUTE or COPY")
        q = Q.Queue(self._core, int(pDesc.Type), pDesc.Priority, pDesc.Flags)
        return adopt(self._core, ID3D12CommandQueue(self, q, pDesc))

    def CreateCommandAllocator(self, type: int) -> ID3D12CommandAllocator:
        self._alive("CreateCommandAllocator")
        if type not in _LIST_KINDS:
            fail(E_INVALIDARG, f"ID3D12Device::CreateCommandAllocator: bad type {type}")
        return adopt(self._core, ID3D12CommandAllocator(self, C.Allocator(self._core, int(type))))

    def CreateCommandList(self, nodeMask: int, type: int,
                          pCommandAllocator: ID3D12CommandAllocator,
                          pInitialState: Any = None) -> ID3D12GraphicsCommandList:
        self._alive("CreateCommandList")
        m = "ID3D12Device::CreateCommandList"
        if pCommandAllocator is None:
            fail(E_INVALIDARG, f"{m}: pCommandAllocator is null")
        alloc = pCommandAllocator._core
        if alloc.type != type:
            fail(E_INVALIDARG, f"{m}: the allocator's type {alloc.type} differs from the list's "
                               f"type {type}")
        if alloc.recording is not None:
            fail(E_INVALIDARG, f"{m}: the allocator is already used by an open command list")
        return adopt(self._core, ID3D12GraphicsCommandList(self, C.CommandList(self._core,
                                                                                int(type), alloc)))

    def CreateFence(self, InitialValue: int = 0, Flags: int = 0) -> ID3D12Fence:
        self._alive("CreateFence")
        value = uint64_arg("ID3D12Device::CreateFence", "InitialValue", InitialValue)
        return adopt(self._core, ID3D12Fence(self, Q.Fence(self._core, value)))

    def GetDeviceRemovedReason(self) -> int:
        return self._core.removed_reason

    def GetDeviceRemovedMessage(self) -> str:
        """dmlsim addition: why the device was removed ("" while it is not)."""
        return self._core.removed_message

    def GetNodeCount(self) -> int:
        return 1


class ID3D12Resource(ID3D12Pageable):
    _void_methods = frozenset({"Unmap"})
    _live_message = "LIVE_RESOURCE"

    def __init__(self, device, core: R.Buffer, desc):
        self._device, self._core = device, core
        self._desc = T.D3D12_RESOURCE_DESC(
            T.D3D12_RESOURCE_DIMENSION_BUFFER, 65536, int(desc.Width), 1, 1, 1, 0,
            T.DXGI_SAMPLE_DESC(1, 0), T.D3D12_TEXTURE_LAYOUT_ROW_MAJOR, int(desc.Flags))

    def Release(self) -> int:
        """Release one reference; at zero the buffer's memory is gone: work recorded with it
        that is executed afterwards removes the device (the debug layer says
        OBJECT_DELETED_WHILE_STILL_IN_USE) instead of reading freed storage."""
        refs = super().Release()
        if refs == 0 and not self._core.released:
            self._core.released = True
            self._core.device.released.add(self._core)
        return refs

    def Map(self, Subresource: int = 0, pReadRange: T.D3D12_RANGE | None = None) -> np.ndarray:
        """Returns a writable NumPy uint8 array over the buffer's bytes (UPLOAD/READBACK)."""
        b = self._core
        if b.heap_type == HEAP_DEFAULT:
            fail(E_INVALIDARG, f"ID3D12Resource::Map: {b.label()} is on a DEFAULT heap, which "
                               "the CPU cannot map; copy it to a READBACK buffer")
        if Subresource != 0:
            fail(E_INVALIDARG, f"ID3D12Resource::Map: Subresource is {Subresource}; a buffer has "
                               "only subresource 0")
        if b.device.observers:
            b.device.observers.map(buffer=b, read_range=pReadRange)
        b.mapped += 1
        return b.memory.flush()

    def Unmap(self, Subresource: int = 0, pWrittenRange: T.D3D12_RANGE | None = None) -> None:
        b = self._core
        if b.device.observers:
            b.device.observers.unmap(buffer=b, written_range=pWrittenRange)
        if b.mapped > 0:
            b.mapped -= 1

    def GetDesc(self):
        d = self._desc
        return T.D3D12_RESOURCE_DESC(d.Dimension, d.Alignment, d.Width, d.Height,
                                     d.DepthOrArraySize, d.MipLevels, d.Format,
                                     T.DXGI_SAMPLE_DESC(1, 0), d.Layout, d.Flags)

    def GetGPUVirtualAddress(self) -> int:
        return self._core.gpu_va

    def GetHeapProperties(self) -> tuple[T.D3D12_HEAP_PROPERTIES, int]:
        return T.D3D12_HEAP_PROPERTIES(self._core.heap_type), 0


class ID3D12DescriptorHeap(ID3D12Pageable):
    _live_message = "LIVE_DESCRIPTORHEAP"

    def __init__(self, device, core: R.DescriptorHeap, desc):
        self._device, self._core = device, core
        self._desc = T.D3D12_DESCRIPTOR_HEAP_DESC(desc.Type, desc.NumDescriptors, desc.Flags,
                                                  desc.NodeMask)

    def GetDesc(self):
        d = self._desc
        return T.D3D12_DESCRIPTOR_HEAP_DESC(d.Type, d.NumDescriptors, d.Flags, d.NodeMask)

    def GetCPUDescriptorHandleForHeapStart(self) -> T.D3D12_CPU_DESCRIPTOR_HANDLE:
        return T.D3D12_CPU_DESCRIPTOR_HANDLE(self._core.cpu_base)

    def GetGPUDescriptorHandleForHeapStart(self) -> T.D3D12_GPU_DESCRIPTOR_HANDLE:
        if not self._core.shader_visible:
            fail(E_INVALIDARG, "ID3D12DescriptorHeap::GetGPUDescriptorHandleForHeapStart: the heap "
                               "is not shader visible")
        return T.D3D12_GPU_DESCRIPTOR_HANDLE(self._core.gpu_base)


class ID3D12CommandAllocator(ID3D12Pageable):
    _live_message = "LIVE_COMMANDALLOCATOR"

    def __init__(self, device, core):
        self._device, self._core = device, core

    def Reset(self):
        self._core.reset()
        return S_OK


class ID3D12CommandList(ID3D12DeviceChild):
    _live_message = "LIVE_COMMANDLIST12"

    def GetType(self) -> int:
        return T.D3D12_COMMAND_LIST_TYPE(self._core.type)


class ID3D12GraphicsCommandList(ID3D12CommandList):
    """Records frozen command records; misuse is sticky and makes Close fail (E_INVALIDARG)."""

    _void_methods = "*"

    def _void_failure(self, method, err, args=(), kwargs=None):
        """Misuse while recording is sticky: Close reports it (D3D12's debug layer says so)."""
        if config.settings.strict:
            raise err
        if self._core.open:
            self._core.record_error(err.message or str(err))
        else:
            self._core.device.remove(err.hresult, err.message or str(err))

    def __init__(self, device, core: C.CommandList):
        self._device, self._core = device, core

    def _recording(self, method) -> bool:
        cl = self._core
        if not cl.open:
            cl.record_error(f"ID3D12GraphicsCommandList::{method}: the command list is closed; "
                            "Reset it before recording", "COMMAND_LIST_CLOSED")
            return False
        return True

    def SetCompileOnFirstExecution(self, Enable: bool = True) -> None:
        """dmlsim addition (no D3D12 counterpart): compile this list as one program the first
        time it executes, instead of running it record by record first and compiling it the
        second time. For a list recorded once and executed many times (an inference session's
        list), so that its program is compiled once. Takes effect from the next execution."""
        if not isinstance(Enable, bool):
            fail(E_INVALIDARG, "ID3D12GraphicsCommandList::SetCompileOnFirstExecution: Enable "
                               f"is {Enable!r}, not a bool")
        self._core.compile_first = Enable

    def Close(self) -> int:
        """S_OK; E_INVALIDARG for a recording error; DXGI_ERROR_DEVICE_REMOVED once the device
        is removed (the list is closed all the same, as D3D12's Close returns the removal)."""
        dev = self._core.device
        if dev.removed and self._core.open:
            self._core.error = None  # removal is the answer; the list closes
            self._core.close()
            dev.check_alive("ID3D12GraphicsCommandList::Close")
        self._core.close()
        return S_OK

    def Reset(self, pAllocator: ID3D12CommandAllocator, pInitialState: Any = None) -> int:
        self._core.reset(pAllocator._core)
        return S_OK

    def SetDescriptorHeaps(self, *args: Any) -> None:
        m = "SetDescriptorHeaps"
        if not self._recording(m):
            return
        heaps = seq_arg(f"ID3D12GraphicsCommandList::{m}", args, "heap array")
        cores = tuple(h._core for h in heaps)
        types = [h.type for h in cores]
        if len(set(types)) != len(types) or any(not h.shader_visible for h in cores):
            self._core.record_error(f"ID3D12GraphicsCommandList::{m}: at most one shader-visible "
                                    "heap per type (CBV_SRV_UAV, SAMPLER) may be set",
                                    "SET_DESCRIPTOR_HEAP_INVALID")
            return
        self._core.heaps = cores
        self._core.append(C.SetHeaps(cores))

    def ResourceBarrier(self, *args: Any) -> None:
        m = "ID3D12GraphicsCommandList::ResourceBarrier"
        if not self._recording("ResourceBarrier"):
            return
        records = []
        for i, b in enumerate(seq_arg(m, args, "barrier array")):
            if b.Type == T.D3D12_RESOURCE_BARRIER_TYPE_TRANSITION:
                t = b.Transition
                if t.pResource is None:
                    return self._core.record_error(
                        f"{m}: barrier {i}: Transition.pResource is null",
                        "RESOURCE_BARRIER_NULL_POINTER")
                if t.StateBefore == t.StateAfter:
                    return self._core.record_error(
                        f"{m}: barrier {i}: StateBefore and StateAfter are both "
                        f"0x{int(t.StateAfter):X}; a transition must change the state",
                        "RESOURCE_BARRIER_MATCHING_STATES")
                if t.pResource._core.heap_type != HEAP_DEFAULT:
                    return self._core.record_error(
                        f"{m}: barrier {i}: {t.pResource._core.label()} is on an UPLOAD or "
                        "READBACK heap, whose state cannot change", "RESOURCE_BARRIER_INVALID_HEAP")
                records.append(C.Barrier(C.TRANSITION, t.pResource._core, int(t.StateBefore),
                                         int(t.StateAfter)))
            elif b.Type == T.D3D12_RESOURCE_BARRIER_TYPE_ALIASING:
                a = b.Aliasing
                after = a.pResourceAfter and a.pResourceAfter._core
                records.append(C.Barrier(C.ALIASING, a.pResourceBefore and a.pResourceBefore._core,
                                         resource_after=after))
            elif b.Type == T.D3D12_RESOURCE_BARRIER_TYPE_UAV:
                records.append(C.Barrier(C.UAV, b.UAV.pResource and b.UAV.pResource._core))
            else:
                return self._core.record_error(f"{m}: barrier {i}: Type {b.Type} is not a "
                                               "D3D12_RESOURCE_BARRIER_TYPE",
                                               "RESOURCE_BARRIER_INVALID_TYPE")
        for r in records:
            self._core.append(r)

    def CopyBufferRegion(self, pDstBuffer: ID3D12Resource, DstOffset: int,
                         pSrcBuffer: ID3D12Resource, SrcOffset: int, NumBytes: int) -> None:
        m = "ID3D12GraphicsCommandList::CopyBufferRegion"
        if not self._recording("CopyBufferRegion"):
            return
        err = copy_error(pDstBuffer, int(DstOffset), pSrcBuffer, int(SrcOffset), int(NumBytes))
        if err:
            return self._core.record_error(f"{m}: {err[0]}", err[1])
        self._core.append(C.CopyRegion(pDstBuffer._core, int(DstOffset), pSrcBuffer._core,
                                        int(SrcOffset), int(NumBytes)))

    def CopyResource(self, pDstResource: ID3D12Resource, pSrcResource: ID3D12Resource) -> None:
        m = "ID3D12GraphicsCommandList::CopyResource"
        if not self._recording("CopyResource"):
            return
        if pDstResource is None or pSrcResource is None:
            return self._core.record_error(f"{m}: a resource is null", "COPYBUFFERREGION_NULLDST")
        if pDstResource._core.width != pSrcResource._core.width:
            return self._core.record_error(
                f"{m}: the resources differ in size ({pDstResource._core.width} and "
                f"{pSrcResource._core.width} bytes); CopyResource needs identical resources",
                "INVALID_COPY")
        err = copy_error(pDstResource, 0, pSrcResource, 0, pSrcResource._core.width)
        if err:
            return self._core.record_error(f"{m}: {err[0]}", err[1])
        self._core.append(C.CopyRegion(pDstResource._core, 0, pSrcResource._core, 0,
                                        pSrcResource._core.width))


def _fence_arg(method: str, fence) -> Q.Fence:
    """The core of ``pFence``: an ID3D12Fence (E_POINTER for None, E_INVALIDARG otherwise)."""
    if type(fence) is ID3D12Fence or isinstance(fence, ID3D12Fence):
        return fence._core
    if fence is None:
        fail(E_POINTER, f"{method}: pFence is NULL")
    fail(E_INVALIDARG, f"{method}: pFence is {type(fence).__name__}, not an ID3D12Fence")


class ID3D12CommandQueue(ID3D12Pageable):
    _void_methods = frozenset({"ExecuteCommandLists"})
    _live_message = "LIVE_COMMANDQUEUE"

    def __init__(self, device, core: Q.Queue, desc):
        self._device, self._core = device, core
        self._desc = T.D3D12_COMMAND_QUEUE_DESC(desc.Type, desc.Priority, desc.Flags, desc.NodeMask)

    def GetDesc(self):
        d = self._desc
        return T.D3D12_COMMAND_QUEUE_DESC(d.Type, d.Priority, d.Flags, d.NodeMask)

    def _void_failure(self, method, err, args=(), kwargs=None):
        """ExecuteCommandLists misuse: the debug layer's message, then device removal."""
        dev = self._core.device
        message_id = getattr(err, "message_id", None)
        if dev.observers and message_id:
            dev.observers.queue_misuse(message=err.message, message_id=message_id)
        super()._void_failure(method, err, args, kwargs)

    def ExecuteCommandLists(self, *args: Any) -> None:
        """Submits closed lists and returns without waiting for their kernels."""
        lists = seq_arg("ID3D12CommandQueue::ExecuteCommandLists", args, "command list array")
        self._core.execute_lists([cl._core for cl in lists])

    def Signal(self, pFence: ID3D12Fence, Value: int) -> int:
        core = self._core
        core.device.check_alive("ID3D12CommandQueue::Signal")
        value = uint64_arg("ID3D12CommandQueue::Signal", "Value", Value)
        core.signal(_fence_arg("ID3D12CommandQueue::Signal", pFence), value)
        return S_OK

    def Wait(self, pFence: ID3D12Fence, Value: int) -> int:
        self._core.device.check_alive("ID3D12CommandQueue::Wait")
        self._core.submit(Q.Wait(_fence_arg("ID3D12CommandQueue::Wait", pFence),
                                 uint64_arg("ID3D12CommandQueue::Wait", "Value", Value)))
        return S_OK


class ID3D12Fence(ID3D12Pageable):
    _live_message = "LIVE_MONITOREDFENCE"

    def __init__(self, device, core: Q.Fence):
        self._device, self._core = device, core

    def GetCompletedValue(self) -> int:
        if self._core.device.removed:
            return 0xFFFFFFFFFFFFFFFF  # as D3D12 reports for a removed device
        value = self._core.completed_value()
        if self._core.device.observers:  # the CPU now knows this much work is done
            self._core.device.observers.fence_wait(fence=self._core, value=value)
        return value

    def Signal(self, Value: int) -> int:
        """Set the fence from the CPU (DXGI_ERROR_DEVICE_REMOVED once the device is removed:
        its completed value stays UINT64_MAX)."""
        self._core.device.check_alive("ID3D12Fence::Signal")
        self._core.signal_from_cpu(uint64_arg("ID3D12Fence::Signal", "Value", Value))
        return S_OK

    def SetEventOnCompletion(self, Value: int, hEvent: Any) -> int:
        """Set ``hEvent`` when the fence reaches ``Value``; with ``hEvent`` None, block."""
        Value = uint64_arg("ID3D12Fence::SetEventOnCompletion", "Value", Value)
        f = self._core
        if f.device.removed:  # D3D12 completes every wait once the device is removed
            if hEvent is not None:
                hEvent._core.set()
            return S_OK
        if hEvent is None:
            f.wait(int(Value), Q.INFINITE)
            if f.device.observers:
                f.device.observers.fence_wait(fence=f, value=int(Value))
            return S_OK
        if f.completed_value() >= Value:
            hEvent._core.set()
        else:
            f.events.append((int(Value), hEvent._core))
        hEvent._core.waits.append((f, int(Value)))  # WaitForSingleObject filters these
        return S_OK


__all__ = ["ID3D12Object", "ID3D12DeviceChild", "ID3D12Pageable", "ID3D12Debug",
           "D3D12GetDebugInterface", "IDXGIAdapter1", "IDXGIFactory1", "CreateDXGIFactory1",
           "CreateDXGIFactory", "CreateDXGIFactory2", "D3D12CreateDevice", "ID3D12Device",
           "ID3D12Resource", "ID3D12DescriptorHeap", "ID3D12CommandAllocator",
           "ID3D12CommandList", "ID3D12GraphicsCommandList", "ID3D12CommandQueue", "ID3D12Fence"]

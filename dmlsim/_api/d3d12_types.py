"""The d3d12.h / dxgi / Win32 enums and structs dmlsim needs (values as in the headers)."""
from __future__ import annotations

from .._schema.d3d12_enums import *  # noqa: F401,F403  (the enums, re-exported)
from .._schema import d3d12_enums as _enums
from typing import Any

from .._schema.struct import Struct


class D3D12_HEAP_PROPERTIES(Struct):
    Type: int
    CPUPageProperty: int
    MemoryPoolPreference: int
    CreationNodeMask: int
    VisibleNodeMask: int
    _fields_ = (("Type", "D3D12_HEAP_TYPE"), ("CPUPageProperty", "D3D12_CPU_PAGE_PROPERTY"),
                ("MemoryPoolPreference", "D3D12_MEMORY_POOL"), ("CreationNodeMask", "UINT"),
                ("VisibleNodeMask", "UINT"))


class DXGI_SAMPLE_DESC(Struct):
    Count: int
    Quality: int
    _fields_ = (("Count", "UINT"), ("Quality", "UINT"))


class D3D12_RESOURCE_DESC(Struct):
    Dimension: int
    Alignment: int
    Width: int
    Height: int
    DepthOrArraySize: int
    MipLevels: int
    Format: int
    SampleDesc: DXGI_SAMPLE_DESC
    Layout: int
    Flags: int
    _fields_ = (("Dimension", "D3D12_RESOURCE_DIMENSION"), ("Alignment", "UINT64"),
                ("Width", "UINT64"), ("Height", "UINT"), ("DepthOrArraySize", "UINT16"),
                ("MipLevels", "UINT16"), ("Format", "DXGI_FORMAT"),
                ("SampleDesc", "DXGI_SAMPLE_DESC"), ("Layout", "D3D12_TEXTURE_LAYOUT"),
                ("Flags", "D3D12_RESOURCE_FLAGS"))


class D3D12_COMMAND_QUEUE_DESC(Struct):
    Type: int
    Priority: int
    Flags: int
    NodeMask: int
    _fields_ = (("Type", "D3D12_COMMAND_LIST_TYPE"), ("Priority", "INT"),
                ("Flags", "D3D12_COMMAND_QUEUE_FLAGS"), ("NodeMask", "UINT"))


class D3D12_DESCRIPTOR_HEAP_DESC(Struct):
    Type: int
    NumDescriptors: int
    Flags: int
    NodeMask: int
    _fields_ = (("Type", "D3D12_DESCRIPTOR_HEAP_TYPE"), ("NumDescriptors", "UINT"),
                ("Flags", "D3D12_DESCRIPTOR_HEAP_FLAGS"), ("NodeMask", "UINT"))


class D3D12_CPU_DESCRIPTOR_HANDLE(Struct):
    """A CPU descriptor handle: an integer ``ptr``; ``handle + n`` offsets by n bytes."""
    ptr: int
    _fields_ = (("ptr", "SIZE_T"),)

    def __add__(self, n):
        return type(self)(self.ptr + int(n))

    def __int__(self):
        return int(self.ptr)


class D3D12_GPU_DESCRIPTOR_HANDLE(D3D12_CPU_DESCRIPTOR_HANDLE):
    """A GPU descriptor handle: an integer ``ptr``."""
    ptr: int
    _fields_ = (("ptr", "UINT64"),)


class D3D12_RESOURCE_TRANSITION_BARRIER(Struct):
    pResource: Any
    Subresource: int
    StateBefore: int
    StateAfter: int
    _fields_ = (("pResource", "ID3D12Resource*"), ("Subresource", "UINT"),
                ("StateBefore", "D3D12_RESOURCE_STATES"), ("StateAfter", "D3D12_RESOURCE_STATES"))


class D3D12_RESOURCE_ALIASING_BARRIER(Struct):
    pResourceBefore: Any
    pResourceAfter: Any
    _fields_ = (("pResourceBefore", "ID3D12Resource*"), ("pResourceAfter", "ID3D12Resource*"))


class D3D12_RESOURCE_UAV_BARRIER(Struct):
    pResource: Any
    _fields_ = (("pResource", "ID3D12Resource*"),)


class D3D12_RESOURCE_BARRIER(Struct):
    """The C union members Transition / Aliasing / UAV are plain fields here."""
    Type: int
    Flags: int
    Transition: D3D12_RESOURCE_TRANSITION_BARRIER
    Aliasing: D3D12_RESOURCE_ALIASING_BARRIER
    UAV: D3D12_RESOURCE_UAV_BARRIER
    _fields_ = (("Type", "D3D12_RESOURCE_BARRIER_TYPE"), ("Flags", "D3D12_RESOURCE_BARRIER_FLAGS"),
                ("Transition", "D3D12_RESOURCE_TRANSITION_BARRIER"),
                ("Aliasing", "D3D12_RESOURCE_ALIASING_BARRIER"),
                ("UAV", "D3D12_RESOURCE_UAV_BARRIER"))


class D3D12_RANGE(Struct):
    Begin: int
    End: int
    _fields_ = (("Begin", "SIZE_T"), ("End", "SIZE_T"))


class D3D12_SUBRESOURCE_DATA(Struct):
    """``pData`` is any buffer (bytes, bytearray, NumPy array)."""
    pData: Any
    RowPitch: int
    SlicePitch: int
    _fields_ = (("pData", "const void*"), ("RowPitch", "LONG_PTR"), ("SlicePitch", "LONG_PTR"))


class DXGI_ADAPTER_DESC1(Struct):
    Description: str
    VendorId: int
    DeviceId: int
    SubSysId: int
    Revision: int
    DedicatedVideoMemory: int
    DedicatedSystemMemory: int
    SharedSystemMemory: int
    AdapterLuid: Any
    Flags: int
    _fields_ = (("Description", "WCHAR[128]"), ("VendorId", "UINT"), ("DeviceId", "UINT"),
                ("SubSysId", "UINT"), ("Revision", "UINT"), ("DedicatedVideoMemory", "SIZE_T"),
                ("DedicatedSystemMemory", "SIZE_T"), ("SharedSystemMemory", "SIZE_T"),
                ("AdapterLuid", "LUID"), ("Flags", "UINT"))


__all__ = [
    "D3D12_HEAP_PROPERTIES",
    "DXGI_SAMPLE_DESC",
    "D3D12_RESOURCE_DESC",
    "D3D12_COMMAND_QUEUE_DESC",
    "D3D12_DESCRIPTOR_HEAP_DESC",
    "D3D12_CPU_DESCRIPTOR_HANDLE",
    "D3D12_GPU_DESCRIPTOR_HANDLE",

    "D3D12_RESOURCE_TRANSITION_BARRIER",
    "D3D12_RESOURCE_ALIASING_BARRIER",
    "D3D12_RESOURCE_UAV_BARRIER",
    "D3D12_RESOURCE_BARRIER",
    "D3D12_RANGE",
    "D3D12_SUBRESOURCE_DATA",
    "DXGI_ADAPTER_DESC1",
]
__all__ += _enums.__all__

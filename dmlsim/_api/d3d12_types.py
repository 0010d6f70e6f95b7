"""The d3d12.h / dxgi / Win32 enums and structs dmlsim needs (values as in the headers)."""
from __future__ import annotations

from .._schema.d3d12_enums import (  # the enums live in the schema layer; re-exported here
    D3D_FEATURE_LEVEL, D3D12_COMMAND_LIST_TYPE, D3D12_COMMAND_QUEUE_FLAGS,
    D3D12_COMMAND_QUEUE_PRIORITY, D3D12_CPU_PAGE_PROPERTY, D3D12_DESCRIPTOR_HEAP_FLAGS,
    D3D12_DESCRIPTOR_HEAP_TYPE, D3D12_FENCE_FLAGS, D3D12_HEAP_FLAGS, D3D12_HEAP_TYPE,
    D3D12_MEMORY_POOL, D3D12_RESOURCE_BARRIER_FLAGS, D3D12_RESOURCE_BARRIER_TYPE,
    D3D12_RESOURCE_DIMENSION, D3D12_RESOURCE_FLAGS, D3D12_RESOURCE_STATES, D3D12_TEXTURE_LAYOUT,
    DXGI_FORMAT, D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES,
    D3D12_DEFAULT_RESOURCE_PLACEMENT_ALIGNMENT, D3D12_RESOURCE_STATE_PRESENT,
    D3D12_RESOURCE_STATE_PREDICATION)
from .._schema.struct import Struct


class D3D12_HEAP_PROPERTIES(Struct):
    _fields_ = (("Type", "D3D12_HEAP_TYPE"), ("CPUPageProperty", "D3D12_CPU_PAGE_PROPERTY"),
                ("MemoryPoolPreference", "D3D12_MEMORY_POOL"), ("CreationNodeMask", "UINT"),
                ("VisibleNodeMask", "UINT"))


class DXGI_SAMPLE_DESC(Struct):
    _fields_ = (("Count", "UINT"), ("Quality", "UINT"))


class D3D12_RESOURCE_DESC(Struct):
    _fields_ = (("Dimension", "D3D12_RESOURCE_DIMENSION"), ("Alignment", "UINT64"),
                ("Width", "UINT64"), ("Height", "UINT"), ("DepthOrArraySize", "UINT16"),
                ("MipLevels", "UINT16"), ("Format", "DXGI_FORMAT"),
                ("SampleDesc", "DXGI_SAMPLE_DESC"), ("Layout", "D3D12_TEXTURE_LAYOUT"),
                ("Flags", "D3D12_RESOURCE_FLAGS"))


class D3D12_COMMAND_QUEUE_DESC(Struct):
    _fields_ = (("Type", "D3D12_COMMAND_LIST_TYPE"), ("Priority", "INT"),
                ("Flags", "D3D12_COMMAND_QUEUE_FLAGS"), ("NodeMask", "UINT"))


class D3D12_DESCRIPTOR_HEAP_DESC(Struct):
    _fields_ = (("Type", "D3D12_DESCRIPTOR_HEAP_TYPE"), ("NumDescriptors", "UINT"),
                ("Flags", "D3D12_DESCRIPTOR_HEAP_FLAGS"), ("NodeMask", "UINT"))


class D3D12_CPU_DESCRIPTOR_HANDLE(Struct):
    """A CPU descriptor handle: an integer ``ptr``; ``handle + n`` offsets by n bytes."""
    _fields_ = (("ptr", "SIZE_T"),)

    def __add__(self, n):
        return type(self)(self.ptr + int(n))

    def __int__(self):
        return int(self.ptr)


class D3D12_GPU_DESCRIPTOR_HANDLE(D3D12_CPU_DESCRIPTOR_HANDLE):
    """A GPU descriptor handle: an integer ``ptr``."""
    _fields_ = (("ptr", "UINT64"),)


class D3D12_RESOURCE_TRANSITION_BARRIER(Struct):
    _fields_ = (("pResource", "ID3D12Resource*"), ("Subresource", "UINT"),
                ("StateBefore", "D3D12_RESOURCE_STATES"), ("StateAfter", "D3D12_RESOURCE_STATES"))


class D3D12_RESOURCE_ALIASING_BARRIER(Struct):
    _fields_ = (("pResourceBefore", "ID3D12Resource*"), ("pResourceAfter", "ID3D12Resource*"))


class D3D12_RESOURCE_UAV_BARRIER(Struct):
    _fields_ = (("pResource", "ID3D12Resource*"),)


class D3D12_RESOURCE_BARRIER(Struct):
    """The C union members Transition / Aliasing / UAV are plain fields here."""
    _fields_ = (("Type", "D3D12_RESOURCE_BARRIER_TYPE"), ("Flags", "D3D12_RESOURCE_BARRIER_FLAGS"),
                ("Transition", "D3D12_RESOURCE_TRANSITION_BARRIER"),
                ("Aliasing", "D3D12_RESOURCE_ALIASING_BARRIER"),
                ("UAV", "D3D12_RESOURCE_UAV_BARRIER"))


class D3D12_RANGE(Struct):
    _fields_ = (("Begin", "SIZE_T"), ("End", "SIZE_T"))


class D3D12_SUBRESOURCE_DATA(Struct):
    """``pData`` is any buffer (bytes, bytearray, NumPy array)."""
    _fields_ = (("pData", "const void*"), ("RowPitch", "LONG_PTR"), ("SlicePitch", "LONG_PTR"))


class DXGI_ADAPTER_DESC1(Struct):
    _fields_ = (("Description", "WCHAR[128]"), ("VendorId", "UINT"), ("DeviceId", "UINT"),
                ("SubSysId", "UINT"), ("Revision", "UINT"), ("DedicatedVideoMemory", "SIZE_T"),
                ("DedicatedSystemMemory", "SIZE_T"), ("SharedSystemMemory", "SIZE_T"),
                ("AdapterLuid", "LUID"), ("Flags", "UINT"))


def export_enums(namespace: dict, *enums) -> list:
    names = []
    for e in enums:
        for mname, member in e.__members__.items():
            namespace[mname] = member
            names.append(mname)
    return names


_ENUMS = (D3D_FEATURE_LEVEL, D3D12_HEAP_TYPE, D3D12_HEAP_FLAGS, D3D12_CPU_PAGE_PROPERTY,
          D3D12_MEMORY_POOL, D3D12_RESOURCE_DIMENSION, D3D12_TEXTURE_LAYOUT, D3D12_RESOURCE_FLAGS,
          D3D12_RESOURCE_STATES, D3D12_COMMAND_LIST_TYPE, D3D12_COMMAND_QUEUE_FLAGS,
          D3D12_COMMAND_QUEUE_PRIORITY, D3D12_DESCRIPTOR_HEAP_TYPE, D3D12_DESCRIPTOR_HEAP_FLAGS,
          D3D12_RESOURCE_BARRIER_TYPE, D3D12_RESOURCE_BARRIER_FLAGS, D3D12_FENCE_FLAGS, DXGI_FORMAT)
__all__ = export_enums(globals(), *_ENUMS) + [e.__name__ for e in _ENUMS] + [
    n for n, v in dict(globals()).items()
    if isinstance(v, type) and issubclass(v, Struct) and v is not Struct] + [
    "D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES", "D3D12_RESOURCE_STATE_PRESENT",
    "D3D12_RESOURCE_STATE_PREDICATION", "D3D12_DEFAULT_RESOURCE_PLACEMENT_ALIGNMENT"]

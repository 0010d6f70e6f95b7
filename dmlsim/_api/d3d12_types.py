"""The d3d12.h / dxgi / Win32 enums and structs dmlsim needs (values as in the headers)."""
from __future__ import annotations

import enum

from .._schema.struct import Struct


class D3D_FEATURE_LEVEL(enum.IntEnum):
    D3D_FEATURE_LEVEL_1_0_CORE = 0x1000
    D3D_FEATURE_LEVEL_11_0 = 0xB000
    D3D_FEATURE_LEVEL_11_1 = 0xB100
    D3D_FEATURE_LEVEL_12_0 = 0xC000
    D3D_FEATURE_LEVEL_12_1 = 0xC100
    D3D_FEATURE_LEVEL_12_2 = 0xC200


class D3D12_HEAP_TYPE(enum.IntEnum):
    D3D12_HEAP_TYPE_DEFAULT = 1
    D3D12_HEAP_TYPE_UPLOAD = 2
    D3D12_HEAP_TYPE_READBACK = 3
    D3D12_HEAP_TYPE_CUSTOM = 4


class D3D12_HEAP_FLAGS(enum.IntFlag):
    D3D12_HEAP_FLAG_NONE = 0
    D3D12_HEAP_FLAG_SHARED = 0x1
    D3D12_HEAP_FLAG_DENY_BUFFERS = 0x4
    D3D12_HEAP_FLAG_ALLOW_DISPLAY = 0x8
    D3D12_HEAP_FLAG_CREATE_NOT_ZEROED = 0x1000


class D3D12_CPU_PAGE_PROPERTY(enum.IntEnum):
    D3D12_CPU_PAGE_PROPERTY_UNKNOWN = 0
    D3D12_CPU_PAGE_PROPERTY_NOT_AVAILABLE = 1
    D3D12_CPU_PAGE_PROPERTY_WRITE_COMBINE = 2
    D3D12_CPU_PAGE_PROPERTY_WRITE_BACK = 3


class D3D12_MEMORY_POOL(enum.IntEnum):
    D3D12_MEMORY_POOL_UNKNOWN = 0
    D3D12_MEMORY_POOL_L0 = 1
    D3D12_MEMORY_POOL_L1 = 2


class D3D12_RESOURCE_DIMENSION(enum.IntEnum):
    D3D12_RESOURCE_DIMENSION_UNKNOWN = 0
    D3D12_RESOURCE_DIMENSION_BUFFER = 1
    D3D12_RESOURCE_DIMENSION_TEXTURE1D = 2
    D3D12_RESOURCE_DIMENSION_TEXTURE2D = 3
    D3D12_RESOURCE_DIMENSION_TEXTURE3D = 4


class D3D12_TEXTURE_LAYOUT(enum.IntEnum):
    D3D12_TEXTURE_LAYOUT_UNKNOWN = 0
    D3D12_TEXTURE_LAYOUT_ROW_MAJOR = 1


class D3D12_RESOURCE_FLAGS(enum.IntFlag):
    D3D12_RESOURCE_FLAG_NONE = 0
    D3D12_RESOURCE_FLAG_ALLOW_RENDER_TARGET = 0x1
    D3D12_RESOURCE_FLAG_ALLOW_DEPTH_STENCIL = 0x2
    D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS = 0x4
    D3D12_RESOURCE_FLAG_DENY_SHADER_RESOURCE = 0x8
    D3D12_RESOURCE_FLAG_ALLOW_CROSS_ADAPTER = 0x10
    D3D12_RESOURCE_FLAG_ALLOW_SIMULTANEOUS_ACCESS = 0x20


class D3D12_RESOURCE_STATES(enum.IntFlag):
    D3D12_RESOURCE_STATE_COMMON = 0
    D3D12_RESOURCE_STATE_VERTEX_AND_CONSTANT_BUFFER = 0x1
    D3D12_RESOURCE_STATE_INDEX_BUFFER = 0x2
    D3D12_RESOURCE_STATE_RENDER_TARGET = 0x4
    D3D12_RESOURCE_STATE_UNORDERED_ACCESS = 0x8
    D3D12_RESOURCE_STATE_DEPTH_WRITE = 0x10
    D3D12_RESOURCE_STATE_DEPTH_READ = 0x20
    D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE = 0x40
    D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE = 0x80
    D3D12_RESOURCE_STATE_STREAM_OUT = 0x100
    D3D12_RESOURCE_STATE_INDIRECT_ARGUMENT = 0x200
    D3D12_RESOURCE_STATE_COPY_DEST = 0x400
    D3D12_RESOURCE_STATE_COPY_SOURCE = 0x800
    D3D12_RESOURCE_STATE_RESOLVE_DEST = 0x1000
    D3D12_RESOURCE_STATE_RESOLVE_SOURCE = 0x2000
    D3D12_RESOURCE_STATE_GENERIC_READ = 0xAC3


D3D12_RESOURCE_STATE_PRESENT = 0
D3D12_RESOURCE_STATE_PREDICATION = 0x200


class D3D12_COMMAND_LIST_TYPE(enum.IntEnum):
    D3D12_COMMAND_LIST_TYPE_DIRECT = 0
    D3D12_COMMAND_LIST_TYPE_BUNDLE = 1
    D3D12_COMMAND_LIST_TYPE_COMPUTE = 2
    D3D12_COMMAND_LIST_TYPE_COPY = 3


class D3D12_COMMAND_QUEUE_FLAGS(enum.IntFlag):
    D3D12_COMMAND_QUEUE_FLAG_NONE = 0
    D3D12_COMMAND_QUEUE_FLAG_DISABLE_GPU_TIMEOUT = 0x1


class D3D12_COMMAND_QUEUE_PRIORITY(enum.IntEnum):
    D3D12_COMMAND_QUEUE_PRIORITY_NORMAL = 0
    D3D12_COMMAND_QUEUE_PRIORITY_HIGH = 100
    D3D12_COMMAND_QUEUE_PRIORITY_GLOBAL_REALTIME = 10000


class D3D12_DESCRIPTOR_HEAP_TYPE(enum.IntEnum):
    D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV = 0
    D3D12_DESCRIPTOR_HEAP_TYPE_SAMPLER = 1
    D3D12_DESCRIPTOR_HEAP_TYPE_RTV = 2
    D3D12_DESCRIPTOR_HEAP_TYPE_DSV = 3


class D3D12_DESCRIPTOR_HEAP_FLAGS(enum.IntFlag):
    D3D12_DESCRIPTOR_HEAP_FLAG_NONE = 0
    D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE = 0x1


class D3D12_RESOURCE_BARRIER_TYPE(enum.IntEnum):
    D3D12_RESOURCE_BARRIER_TYPE_TRANSITION = 0
    D3D12_RESOURCE_BARRIER_TYPE_ALIASING = 1
    D3D12_RESOURCE_BARRIER_TYPE_UAV = 2


class D3D12_RESOURCE_BARRIER_FLAGS(enum.IntFlag):
    D3D12_RESOURCE_BARRIER_FLAG_NONE = 0
    D3D12_RESOURCE_BARRIER_FLAG_BEGIN_ONLY = 0x1
    D3D12_RESOURCE_BARRIER_FLAG_END_ONLY = 0x2


class D3D12_FENCE_FLAGS(enum.IntFlag):
    D3D12_FENCE_FLAG_NONE = 0
    D3D12_FENCE_FLAG_SHARED = 0x1


class DXGI_FORMAT(enum.IntEnum):
    DXGI_FORMAT_UNKNOWN = 0


D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES = 0xFFFFFFFF
D3D12_DEFAULT_RESOURCE_PLACEMENT_ALIGNMENT = 65536


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

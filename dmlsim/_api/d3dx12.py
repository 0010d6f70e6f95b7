"""d3dx12.h helpers: CD3DX12_* constructors and UpdateSubresources."""
from __future__ import annotations

import numpy as np

from .._core.hresult import E_INVALIDARG, fail
from . import d3d12_types as T
from .com import entry, guard


def CD3DX12_HEAP_PROPERTIES(type=T.D3D12_HEAP_TYPE_DEFAULT, creationNodeMask=1, nodeMask=1):
    return T.D3D12_HEAP_PROPERTIES(type, 0, 0, creationNodeMask, nodeMask)


class CD3DX12_RESOURCE_DESC:
    @staticmethod
    def Buffer(width, flags=T.D3D12_RESOURCE_FLAG_NONE, alignment=0):
        return T.D3D12_RESOURCE_DESC(T.D3D12_RESOURCE_DIMENSION_BUFFER, alignment, int(width), 1, 1,
                                     1, T.DXGI_FORMAT_UNKNOWN, T.DXGI_SAMPLE_DESC(1, 0),
                                     T.D3D12_TEXTURE_LAYOUT_ROW_MAJOR, flags)


class CD3DX12_RESOURCE_BARRIER:
    @staticmethod
    def Transition(pResource, stateBefore, stateAfter,
                   subresource=T.D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES,
                   flags=T.D3D12_RESOURCE_BARRIER_FLAG_NONE):
        b = T.D3D12_RESOURCE_BARRIER(T.D3D12_RESOURCE_BARRIER_TYPE_TRANSITION, flags)
        b.Transition = T.D3D12_RESOURCE_TRANSITION_BARRIER(pResource, subresource, stateBefore,
                                                           stateAfter)
        return b

    @staticmethod
    def Aliasing(pResourceBefore, pResourceAfter):
        b = T.D3D12_RESOURCE_BARRIER(T.D3D12_RESOURCE_BARRIER_TYPE_ALIASING)
        b.Aliasing = T.D3D12_RESOURCE_ALIASING_BARRIER(pResourceBefore, pResourceAfter)
        return b

    @staticmethod
    def UAV(pResource):
        b = T.D3D12_RESOURCE_BARRIER(T.D3D12_RESOURCE_BARRIER_TYPE_UAV)
        b.UAV = T.D3D12_RESOURCE_UAV_BARRIER(pResource)
        return b


def CD3DX12_CPU_DESCRIPTOR_HANDLE(other, offsetInDescriptors=0, descriptorIncrementSize=0):
    """CD3DX12_CPU_DESCRIPTOR_HANDLE(base, index, increment)."""
    return T.D3D12_CPU_DESCRIPTOR_HANDLE(int(other.ptr) + int(offsetInDescriptors) *
                                         int(descriptorIncrementSize))


def CD3DX12_GPU_DESCRIPTOR_HANDLE(other, offsetInDescriptors=0, descriptorIncrementSize=0):
    return T.D3D12_GPU_DESCRIPTOR_HANDLE(int(other.ptr) + int(offsetInDescriptors) *
                                         int(descriptorIncrementSize))


def _as_bytes(data) -> np.ndarray:
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    return np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)


@entry("UpdateSubresources")
def UpdateSubresources(pCmdList, pDestinationResource, pIntermediate, IntermediateOffset,
                       FirstSubresource, NumSubresources, pSrcData):
    """Copy ``pSrcData`` (a D3D12_SUBRESOURCE_DATA or a list of one) into the UPLOAD buffer
    ``pIntermediate`` now, and record a copy from it into ``pDestinationResource``.
    Returns the number of bytes copied (0 on failure), as d3dx12.h does."""
    src = pSrcData[0] if isinstance(pSrcData, (list, tuple)) else pSrcData
    if FirstSubresource != 0 or NumSubresources != 1:
        fail(E_INVALIDARG, "UpdateSubresources: a buffer has exactly one subresource (0)")
    data = _as_bytes(src.pData)
    n = int(src.RowPitch) if src.RowPitch else data.shape[0]
    dst_w = pDestinationResource._core.width
    inter = pIntermediate._core
    if n > data.shape[0] or IntermediateOffset + n > inter.width or n > dst_w:
        return 0
    mapped = pIntermediate.Map(0, None)
    mapped[IntermediateOffset:IntermediateOffset + n] = data[:n]
    pIntermediate.Unmap(0, None)
    pCmdList.CopyBufferRegion(pDestinationResource, 0, pIntermediate, IntermediateOffset, n)
    return n


# Every helper is a public entry point: bad arguments are HRESULTs, not Python exceptions.
CD3DX12_HEAP_PROPERTIES = entry("CD3DX12_HEAP_PROPERTIES")(CD3DX12_HEAP_PROPERTIES)
CD3DX12_CPU_DESCRIPTOR_HANDLE = entry("CD3DX12_CPU_DESCRIPTOR_HANDLE")(
    CD3DX12_CPU_DESCRIPTOR_HANDLE)
CD3DX12_GPU_DESCRIPTOR_HANDLE = entry("CD3DX12_GPU_DESCRIPTOR_HANDLE")(
    CD3DX12_GPU_DESCRIPTOR_HANDLE)
for _cls in (CD3DX12_RESOURCE_DESC, CD3DX12_RESOURCE_BARRIER):
    for _name, _fn in list(vars(_cls).items()):
        if isinstance(_fn, staticmethod):
            setattr(_cls, _name, staticmethod(guard(f"{_cls.__name__}::{_name}", _fn.__func__,
                                                    bound=False)))

__all__ = ["CD3DX12_HEAP_PROPERTIES", "CD3DX12_RESOURCE_DESC", "CD3DX12_RESOURCE_BARRIER",
           "CD3DX12_CPU_DESCRIPTOR_HANDLE", "CD3DX12_GPU_DESCRIPTOR_HANDLE", "UpdateSubresources"]

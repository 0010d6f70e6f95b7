"""D3D12's size limits and copy rules as dmlsim applies them, and the memory budget of its
devices."""
from __future__ import annotations

import gc
import os

from .._core.hresult import E_INVALIDARG, E_OUTOFMEMORY, fail
from . import d3d12_types as T


def _jax_devices():
    import jax
    return jax.devices()


_BUDGET: list = []
UINT64_LIMIT = 1 << 64
MAX_SHADER_VISIBLE_DESCRIPTORS = 1_000_000  # D3D12's limit for CBV/SRV/UAV heaps (tiers 1-2)
DESCRIPTOR_BYTES = 64


def uint64_arg(method: str, name: str, value) -> int:
    """``value`` as a UINT64 argument (an int or NumPy integer in [0, 2^64), not a bool);
    otherwise E_INVALIDARG naming the method, the parameter and the value."""
    if type(value) is int and 0 <= value < UINT64_LIMIT:  # the common case, first
        return value
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        fail(E_INVALIDARG, f"{method}: {name} is {value!r}; a UINT64 is required")
    v = value.__index__()
    if not 0 <= v < UINT64_LIMIT:
        fail(E_INVALIDARG, f"{method}: {name} is {v}; a UINT64 is in [0, 2^64)")
    return v


def uint32_arg(method: str, name: str, value) -> int:
    """``value`` as a UINT argument (an int or NumPy integer in [0, 2^32), not a bool, not a
    float, not None); otherwise E_INVALIDARG naming the method, the parameter and the value."""
    if type(value) is int and 0 <= value < 1 << 32:
        return value
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        fail(E_INVALIDARG, f"{method}: {name} is {value!r}; a UINT is required")
    v = value.__index__()
    if not 0 <= v < 1 << 32:
        fail(E_INVALIDARG, f"{method}: {name} is {v}; a UINT is in [0, 2^32)")
    return v


def memory_budget() -> int:
    """Bytes dmlsim lets one device allocate: ``DMLSIM_MEMORY_BUDGET`` if set, else what the
    JAX device reports (``bytes_limit``), else the machine's physical memory. Reported as the
    adapter's DedicatedVideoMemory; one allocation beyond it is E_OUTOFMEMORY at creation."""
    if not _BUDGET:
        env = os.environ.get("DMLSIM_MEMORY_BUDGET")
        value = int(env) if env else 0
        if not value:
            try:
                value = int((_jax_devices()[0].memory_stats() or {}).get("bytes_limit", 0))
            except Exception:  # noqa: BLE001 -- backends without memory_stats
                value = 0
        if not value:
            value = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        _BUDGET.append(value)
    return _BUDGET[0]


def committed_bytes(device_core) -> int:
    """Bytes of the device's committed resources the application still holds (a resource
    released to a zero reference count, or dropped, no longer counts)."""
    return sum(c._core.width for c in list(device_core.children)
               if hasattr(getattr(c, "_core", None), "heap_type") and getattr(c, "_refs", 1) > 0)


def within_budget(device_core, method, width):
    """E_OUTOFMEMORY when ``width`` more bytes would take the device's committed resources
    past its budget (the adapter's DedicatedVideoMemory, as DXGI's QueryVideoMemoryInfo would
    report it): the budget is cumulative, checked at creation, never a removal at first use."""
    budget = memory_budget()
    used = committed_bytes(device_core)
    if used + width > budget:
        gc.collect()  # resources kept only by reference cycles are gone once collected
        used = committed_bytes(device_core)
    if used + width > budget:
        fail(E_OUTOFMEMORY, f"{method}: a buffer of {width} bytes on top of the {used} bytes "
                            f"committed exceeds the device's memory budget of {budget} bytes "
                            "(the adapter's DedicatedVideoMemory; DMLSIM_MEMORY_BUDGET sets it)")


def copy_error(dst, dst_off, src, src_off, n):
    """(message, debug catalogue name) of what is wrong with a CopyBufferRegion of ``n``
    bytes between the resource shells ``src`` and ``dst``, or None."""
    if dst is None or src is None:
        return "a buffer is null", "COPYBUFFERREGION_NULLDST"
    d, s = dst._core, src._core
    if d is s:
        return "source and destination are the same resource", "INVALID_COPY"
    if n < 0 or dst_off < 0 or src_off < 0:
        return (f"DstOffset {dst_off}, SrcOffset {src_off} and NumBytes {n} must all be "
                "non-negative (they are UINT64)"), "INVALID_COPY"
    if d.heap_type == T.D3D12_HEAP_TYPE_UPLOAD:
        return (f"the destination {d.label()} is on an UPLOAD heap, which the GPU cannot write",
                "INVALID_COPY")
    if s.heap_type == T.D3D12_HEAP_TYPE_READBACK:
        return (f"the source {s.label()} is on a READBACK heap, which the GPU cannot read",
                "INVALID_COPY")
    if dst_off + n > d.width:
        return (f"the destination range [{dst_off}, {dst_off + n}) is past the end of "
                f"{d.label()} ({d.width} bytes)", "COPYBUFFERREGION_DSTRANGEOUTOFBOUNDS")
    if src_off + n > s.width:
        return (f"the source range [{src_off}, {src_off + n}) is past the end of {s.label()} "
                f"({s.width} bytes)", "COPYBUFFERREGION_SRCRANGEOUTOFBOUNDS")
    return None

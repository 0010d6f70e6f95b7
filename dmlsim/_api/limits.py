"""D3D12's size limits as dmlsim applies them, and the memory budget of its devices."""
from __future__ import annotations

import os


def _jax_devices():
    import jax
    return jax.devices()


_BUDGET: list = []
UINT64_LIMIT = 1 << 64
MAX_SHADER_VISIBLE_DESCRIPTORS = 1_000_000  # D3D12's limit for CBV/SRV/UAV heaps (tiers 1-2)
DESCRIPTOR_BYTES = 64


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

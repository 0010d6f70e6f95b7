"""dmlsim's own interop between DEFAULT buffers and JAX arrays: what ONNX Runtime's DML API does
with ``CreateGPUAllocationFromD3DResource`` / ``GetD3D12ResourceFromAllocation`` (a tensor and
a D3D12 resource that are the same memory), for dmlsim, whose DEFAULT buffers are JAX arrays.

A DEFAULT buffer of ``width`` bytes is a 1-D uint32 JAX array of ``buffer_words(width)``
words (the bytes padded to 8). ``resource_array`` gives that array, ``set_resource_array``
makes an array the buffer's contents, ``lend_resource`` marks a buffer whose arrays are handed
out: work writing it makes a new array rather than updating the old one in place. None of them
copies.
"""
from __future__ import annotations

import jax
import numpy as np

from .._core.hresult import E_INVALIDARG, fail
from .._core.memory import words_for
from .d3d12 import HEAP_DEFAULT, ID3D12Resource

__all__ = ["buffer_words", "resource_array", "set_resource_array", "lend_resource"]


def buffer_words(width) -> int:
    """The uint32 words holding a DEFAULT buffer of ``width`` bytes."""
    if isinstance(width, bool) or not isinstance(width, (int, np.integer)) or width < 0:
        fail(E_INVALIDARG, f"buffer_words: width is {width!r}; a byte count (0 or more)")
    return words_for(int(width))


def _default(method, resource):
    if not isinstance(resource, ID3D12Resource):
        fail(E_INVALIDARG, f"{method}: resource is a {type(resource).__name__}; an "
                           "ID3D12Resource")
    b = resource._core
    if b.heap_type != HEAP_DEFAULT:
        fail(E_INVALIDARG, f"{method}: {b.label()} is not on a DEFAULT heap (UPLOAD and "
                           "READBACK buffers are host memory: Map them)")
    if b.released:
        fail(E_INVALIDARG, f"{method}: {b.label()} was released")
    return b


def resource_array(resource) -> jax.Array:
    """The uint32 JAX array holding DEFAULT buffer ``resource``'s bytes now (work queued
    before is part of it: reading it waits for that work)."""
    return _default("resource_array", resource).memory.array


def set_resource_array(resource, array) -> None:
    """Make ``array`` (1-D uint32, ``buffer_words(width)`` long, on the buffer's device) the
    contents of DEFAULT buffer ``resource``, without a copy."""
    b = _default("set_resource_array", resource)
    mem = b.memory
    if not isinstance(array, jax.Array) or array.dtype != np.uint32 or array.ndim != 1 or \
            array.shape[0] != mem.words:
        what = f"{array.dtype} {list(array.shape)}" if isinstance(array, jax.Array) else \
            type(array).__name__
        fail(E_INVALIDARG, f"set_resource_array: array is {what}; {b.label()} needs a uint32 "
                           f"JAX array of {mem.words} words")
    if mem.device not in array.devices():
        fail(E_INVALIDARG, f"set_resource_array: array is on {sorted(map(str, array.devices()))}"
                           f"; {b.label()} is on {mem.device}")
    mem.array = array


def lend_resource(resource) -> None:
    """Mark DEFAULT buffer ``resource``, before anything uses it, as one whose arrays are
    handed out (``resource_array``): no program updates it in place."""
    b = _default("lend_resource", resource)
    if not b.memory.lend():
        fail(E_INVALIDARG, f"lend_resource: {b.label()} was used already; lend a buffer "
                           "before any work reads or writes it")

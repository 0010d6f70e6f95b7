"""Tensor views over buffer storage, and the jitted program of one dispatch.

A view is (buffer, byte offset, TensorSpec). Reads and writes happen on the buffer's 1-D
unsigned storage: packed views are slices, zero strides broadcast, strides that store the
elements densely in another dimension order (NHWC strides over NCHW sizes) are a slice and a
transpose, other strides gather or scatter with index tables computed once at trace time.
Only after a read is the data bit-cast to the tensor's type, so copies are exact to the bit.
The packed 4-bit types address nibbles of the byte storage (``packed4``).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from . import dtypes, packed4
from .dtypes import UNSIGNED_OF_SIZE
from .memory import convert
from .tensor import TensorSpec

FOUR_BIT = (dtypes.NUMPY[dtypes.INT4], dtypes.NUMPY[dtypes.UINT4])


def _layout(t: TensorSpec):
    """(core sizes with broadcast dims set to 1, strides, packed?)."""
    strides = t.element_strides
    core = tuple(1 if st == 0 else s for s, st in zip(t.sizes, strides))
    expect, packed = 1, True
    for s, st in zip(reversed(core), reversed(strides)):
        if s != 1 and st != expect:
            packed = False
            break
        expect *= s
    return core, strides, packed


def _permutation(core: tuple, strides: tuple):
    """The dimensions of size > 1, outermost first, when the view stores its elements densely
    in some dimension order (transposed strides, such as NHWC over NCHW sizes or a stored
    filter); None otherwise."""
    dims = [d for d, s in enumerate(core) if s != 1]
    order = sorted(dims, key=lambda d: -strides[d])
    expect = 1
    for d in reversed(order):
        if strides[d] != expect:
            return None
        expect *= core[d]
    return order


def _indices(base: int, core: tuple, strides: tuple) -> np.ndarray:
    idx = np.full(core, base, dtype=np.int64)
    for d, (s, st) in enumerate(zip(core, strides)):
        shape = [1] * len(core)
        shape[d] = s
        idx = idx + (np.arange(s, dtype=np.int64) * st).reshape(shape)
    return idx if idx.max(initial=0) >= 2**31 else idx.astype(np.int32)


def read_view(storage, t: TensorSpec, byte_offset: int):
    """Typed array of shape ``t.sizes`` read from ``storage`` (traceable)."""
    if dtypes.is_packed4(t.data_type):
        idx = dtypes.nibble_indices(byte_offset, t.sizes, t.element_strides)
        return packed4.read(convert(storage, np.uint8), idx, t.data_type)
    k = t.itemsize
    u = convert(storage, UNSIGNED_OF_SIZE[k])
    base = byte_offset // k
    core, strides, packed = _layout(t)
    n = int(np.prod(core))
    order = None if packed else _permutation(core, strides)
    if packed:
        y = lax.slice(u, (base,), (base + n,)).reshape(core)
    elif order is not None:  # dense in another order: a transpose, which XLA may lay out away
        dims = [d for d in range(len(core)) if core[d] != 1]
        y = lax.slice(u, (base,), (base + n,)).reshape([core[d] for d in order])
        y = y.transpose([order.index(d) for d in dims]).reshape(core)
    else:
        y = jnp.take(u, _indices(base, core, strides), mode="clip")
    if core != t.sizes:
        y = jnp.broadcast_to(y, t.sizes)
    return lax.bitcast_convert_type(y, t.np_dtype)


def read_constant(data: bytes, t: TensorSpec):
    """The values ``read_view`` reads for ``t`` from bytes known when tracing (a graph's
    constant), as a NumPy array of the core sizes (broadcast dimensions 1), or None for a
    packed 4-bit type: one constant in the program instead of a byte buffer, its reshapes and
    slices."""
    if dtypes.is_packed4(t.data_type):
        return None
    k = t.itemsize
    buf = np.zeros((max(t.total_bytes, len(data)) + 8) // k * k + k, np.uint8)
    buf[:len(data)] = np.frombuffer(data, np.uint8)
    core, strides, _ = _layout(t)
    return buf.view(UNSIGNED_OF_SIZE[k])[_indices(0, core, strides)].view(t.np_dtype)


def write_view(storage, t: TensorSpec, byte_offset: int, value):
    """``storage`` with ``value`` (already of the tensor's type and sizes) written in."""
    if dtypes.is_packed4(t.data_type):
        core, strides, _ = _layout(t)
        if core != t.sizes:  # a broadcast output writes each element once
            value = value[tuple(slice(0, c) for c in core)]
        idx = dtypes.nibble_indices(byte_offset, core, strides)
        return packed4.write(convert(storage, np.uint8), idx, value)
    k = t.itemsize
    u = convert(storage, UNSIGNED_OF_SIZE[k])
    bits = lax.bitcast_convert_type(value, UNSIGNED_OF_SIZE[k])
    base = byte_offset // k
    core, strides, packed = _layout(t)
    if packed and core == t.sizes:
        return lax.dynamic_update_slice(u, bits.reshape(-1), (base,))
    order = _permutation(core, strides) if core == t.sizes else None
    if order is not None:  # dense in another order: transposed, then one slice
        dims = [d for d in range(len(core)) if core[d] != 1]
        bits = bits.reshape([core[d] for d in dims]).transpose([dims.index(d) for d in order])
        return lax.dynamic_update_slice(u, bits.reshape(-1), (base,))
    if core != t.sizes:  # a broadcast output writes each element once: keep index 0
        bits = bits[tuple(slice(0, 1) if c != s else slice(None) for c, s in zip(core, t.sizes))]
    idx = _indices(base, core, strides)
    return u.at[idx.reshape(-1)].set(bits.reshape(-1), mode="drop")


def apply_dispatch(cur, kernel_call, in_views, out_views, seal=None, typed=None) -> None:
    """One dispatch inside a traced program: read ``in_views`` from the storages ``cur`` (a
    list, updated in place), run the kernel, write ``out_views``. Views are None or
    (storage index, byte offset, spec). ``seal`` (a traced zero) is XORed into the stored
    bits; see :func:`sealed`. ``typed``: views already read, by (index, offset, spec)."""
    inputs = [None if v is None else
              typed[v] if typed and v in typed else read_view(cur[v[0]], v[2], v[1])
              for v in in_views]
    outputs = kernel_call(inputs)
    for v, value in zip(out_views, outputs):
        if v is None or value is None:
            continue
        j, off, t = v
        value = jnp.asarray(value)
        if value.dtype != t.np_dtype:
            value = value.astype(t.np_dtype)
        if value.shape != t.sizes:
            value = jnp.broadcast_to(value, t.sizes)
        if seal is not None:
            value = sealed(value, seal)
        cur[j] = write_view(cur[j], t, off, value)


def sealed(value, zero):
    """``value``'s bits ``b`` as ``b ^ (b & zero)``, ``zero`` a runtime zero the compiler
    cannot see: the same bits.

    A dispatch stores its outputs in memory, rounded to the tensor's type, and the next
    dispatch reads them from there. When several dispatches are traced into one program,
    XLA would otherwise fuse across that boundary and rewrite the arithmetic (a multiply
    followed by an add becomes one fused multiply-add, rounded once): an opaque integer
    step in between keeps every dispatch's result exactly what it stores, and still fuses.
    Its form matters on XLA's CPU backend, which has no multi-output fusion and copies a
    producer it deems cheap into every consumer: through ``b ^ zero`` a list of N dependent
    dispatches, each into its own buffer, compiled to N(N + 1)/2 additions (every output
    recomputed its whole prefix: 5,050 for N = 100, and a 1,000-dispatch list did not
    finish compiling); ``b ^ (b & zero)`` uses ``b`` twice, which stops the copying: N.
    """
    if value.dtype in FOUR_BIT:  # seal the values widened to a byte
        return sealed(value.astype(np.int8), zero).astype(value.dtype)
    u = UNSIGNED_OF_SIZE[value.dtype.itemsize]
    bits = lax.bitcast_convert_type(value, u)
    return lax.bitcast_convert_type(bits ^ (bits & zero.astype(u)), value.dtype)


def sealed_shared(value, zero):
    """``value``'s bits, sealed and then passed through a conditional on the runtime ``zero``
    (whose other branch, never taken, passes them through an optimization barrier: a branch
    XLA cannot merge with the identity, and no kernel to compile; one that sealed them again
    cost a kernel per stored result, PaddleOCR cls 176 kernels instead of 148, the same
    bits), for a node result that XLA must store
    once: several later nodes read it, or an operator asks to read it stored
    (``OperatorDef.cpu_stored_inputs``). XLA's CPU backend copies a cheap element-wise producer
    into each of its consumers even through :func:`sealed`'s form (along a transformer's
    residual stream each LayerNormalization's loop recomputed every earlier layer's: MiniLM's
    k-th took 6k - 1 operands), and fuses a producer's whole chain into a single consumer such
    as a padding loop that runs element by element. A conditional is an operation XLA fuses
    with nothing, so the result is computed once, vectorized, and stored, as DirectML stores
    it. Before, the seal divided the bits by a runtime one (an operation XLA does not copy
    into several readers, but fuses into one): PaddleOCR cls now runs in 0.66-0.75x the time,
    det 0.87x, rec 0.78-0.90x, MiniLM 0.97x, with the same bits."""
    if value.dtype in FOUR_BIT:
        return sealed(value, zero)
    return lax.cond(zero == 1, lax.optimization_barrier, lambda v: v, sealed(value, zero))


def program_key(memories, in_views, out_views) -> tuple:
    """What selects one dispatch's program among a dispatchable's: storage types and lengths,
    the views' buffers and offsets."""
    return (tuple((m.array.dtype, m.array.shape[0]) for m in memories),
            tuple(None if v is None else v[:2] for v in in_views),
            tuple(None if v is None else v[:2] for v in out_views))


def build_program(kernel_call, in_views, out_views, sealed=False):
    """The function of one dispatch over buffer storages.

    ``in_views``/``out_views``: per flattened slot, None or (buffer index, byte offset, spec).
    ``kernel_call(inputs_list) -> outputs_list`` runs the operator on typed arrays (with
    ``sealed``, ``kernel_call(zero)`` gives that function, and the function's last argument
    is the opaque zero of :func:`sealed`). Returns (function, written buffer indices); the
    function maps the storages of all buffers to the new storages of the written ones.
    """
    written = tuple(sorted({v[0] for v in out_views if v is not None}))

    def run(*storages):
        call = kernel_call
        if sealed:
            storages, call = storages[:-1], kernel_call(storages[-1])
        reps = [s.dtype for s in storages]
        cur = list(storages)
        apply_dispatch(cur, call, in_views, out_views)
        # Back to each buffer's own representation: same shape and type, so donation reuses it.
        return tuple(convert(cur[j], reps[j]) for j in written)

    return run, written


def jit_program(run, written):
    return jax.jit(run, donate_argnums=written)

"""Byte-exact buffer memory.

A buffer is ``width`` bytes. DEFAULT-heap buffers live on a JAX device as a 1-D array of an
unsigned integer type (the *representation*), padded to a multiple of 8 bytes so that it can be
reinterpreted as any element width. The representation (uint32) never changes, so every
program can donate the buffers it writes and update them in place; a typed view bit-casts
inside the program's fused loop, which costs nothing when the widths match (FLOAT32, INT32 and
UINT32 tensors) and stays in the same pass otherwise. UPLOAD and READBACK buffers
live in host memory as a NumPy ``uint8`` array that ``Map`` exposes directly.

All data movement is done on unsigned integers: NaN payloads, -0.0 and denormals survive.
"""
from __future__ import annotations

import jax
import numpy as np
from jax import lax



def convert(x, dtype):
    """Reinterpret the 1-D unsigned array ``x`` as 1-D ``dtype`` (traceable, bit-exact)."""
    dtype = np.dtype(dtype)
    src = x.dtype.itemsize
    dst = dtype.itemsize
    if x.dtype == dtype:
        return x
    if src == dst:
        return lax.bitcast_convert_type(x, dtype)
    if src > dst:
        return lax.bitcast_convert_type(x, dtype).reshape(-1)
    return lax.bitcast_convert_type(x.reshape(-1, dst // src), dtype)


def unit(*values) -> int:
    """Largest element width (8, 4, 2, 1) dividing every value."""
    for k in (8, 4, 2):
        if all(v % k == 0 for v in values):
            return k
    return 1


def words_for(width: int) -> int:
    """The uint32 words of a DEFAULT buffer of ``width`` bytes: padded to 8 bytes, at least 2
    words (so any element width can view it)."""
    return max((int(width) + 7) // 8 * 8 // 4, 2)


class Group:
    """The storages of several small DEFAULT buffers held as segments of one uint32 device
    array, as the compiled list that writes them all produces it (one program output, one
    donated argument, one completion witness, instead of one per buffer). ``version`` counts
    the arrays held; ``intact`` is False once a member's storage left (it was written by other
    work): the list then gathers its members again before it runs."""

    __slots__ = ("array", "version", "intact", "__weakref__")
    host = False  # a fence marker takes a group for its members (``witness``)

    def __init__(self):
        self.array, self.version, self.intact = None, 0, False

    def hold(self, array) -> None:
        self.array, self.version, self.intact = array, self.version + 1, True

    def witness(self):
        return self.array


class DeviceMemory:
    """The bytes of a DEFAULT-heap buffer, on a JAX device: its own uint32 array, or a
    segment of a Group's (``join``); reading ``array`` then slices the segment out (cached
    until the group holds another array), assigning it leaves the group."""

    def __init__(self, width: int, device=None):
        self.width = int(width)
        self.padded = (self.width + 7) // 8 * 8
        self.words = words_for(self.width)
        self.device = device
        self._array = None  # zero-filled on first use
        self._segment = None  # (Group, first word) while a group holds this storage
        self._version = -1    # the group version _array was sliced from
        # lent: its arrays are handed out as they are (IOBinding's outputs), so no program
        # donates them; a program writing it makes a new array instead of updating in place
        self.lent = False
        self._writes = 0      # storages assigned: with the group's version, ``stamp``
        self.typed = None     # (stamp, {(byte offset, spec, order): typed array}): typed_views
        self.host = False

    @property
    def array(self):
        seg = self._segment
        if seg is not None:
            group, start = seg
            if self._version != group.version:
                self._array = lax.dynamic_slice(group.array, (start,), (self.words,))
                self._version = group.version
            return self._array
        if self._array is None:
            zeros = np.zeros(self.words, np.uint32)
            self._array = jax.device_put(zeros, self.device)
        return self._array

    @array.setter
    def array(self, value):
        if self._segment is not None:
            self._segment[0].intact = False
            self._segment = None
        self._array = value
        self._writes += 1

    def stamp(self) -> tuple:
        """Equal stamps mean the same bytes: it changes whenever a storage is assigned or a
        group takes this storage, and with the group's array while one holds it."""
        seg = self._segment
        return (self._writes, -1 if seg is None else seg[0].version)

    def join(self, group, start) -> None:
        """Let ``group``'s array hold this storage at word ``start`` (its bytes must be
        there already)."""
        seg = self._segment
        if seg is not None and seg[0] is not group:
            seg[0].intact = False
        self._segment, self._array, self._version = (group, start), None, -1
        self._writes += 1

    def lend(self) -> bool:
        """Mark this storage ``lent`` (its arrays are handed out; no program donates them), if
        nothing used it yet; False (and nothing changed) once something has."""
        if self._array is not None or self._segment is not None:
            return False
        self.lent = True
        return True

    def segment(self):
        """(Group, first word) if a group holds this storage, else None."""
        return self._segment

    def witness(self):
        """The device array whose readiness is this storage's (a member's: the group's)."""
        seg = self._segment
        return seg[0].array if seg is not None else self.array

    def to_numpy(self) -> np.ndarray:
        """All ``width`` bytes as host uint8 (blocks until pending work is done)."""
        return np.asarray(self.array).view(np.uint8)[:self.width].copy()


class HostMemory:
    """The bytes of an UPLOAD or READBACK buffer: a host uint8 array, exposed by Map.

    GPU writes into it (a copy to a READBACK buffer) are queued as device arrays and land
    when the bytes are next looked at, so ExecuteCommandLists never waits for kernels.
    """

    def __init__(self, width: int):
        self.width = int(width)
        # 64-byte aligned, so that XLA's CPU backend can read the bytes in place
        raw = np.zeros(self.width + 64, np.uint8)
        at = -raw.ctypes.data % 64
        self.bytes = raw[at:at + self.width]
        self._pending = []  # (offset, 1-D unsigned device array)
        self.host = True

    def queue_write(self, offset: int, device_words) -> None:
        """Land the 1-D unsigned device array ``device_words`` at byte ``offset`` when the
        bytes are next looked at."""
        try:
            device_words.copy_to_host_async()
        except Exception:  # pragma: no cover - backends without async copies
            pass
        self._pending.append((int(offset), device_words))

    def flush(self) -> np.ndarray:
        if self._pending:
            pending, self._pending = self._pending, []
            for off, arr in pending:
                data = np.asarray(arr).view(np.uint8)
                self.bytes[off:off + data.shape[0]] = data
        return self.bytes

    def pending_arrays(self):
        return [a for _, a in self._pending]

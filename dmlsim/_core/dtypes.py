"""DML_TENSOR_DATA_TYPE <-> NumPy dtypes, element sizes, storage types, DMLCalcBufferTensorSize."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from .._schema.enums_generated import DML_TENSOR_DATA_TYPE as _T
from .hresult import E_NOTIMPL, fail

# DML_TENSOR_DATA_TYPE values (the schema's enum, as plain ints).
UNKNOWN = int(_T.DML_TENSOR_DATA_TYPE_UNKNOWN)
FLOAT32 = int(_T.DML_TENSOR_DATA_TYPE_FLOAT32)
FLOAT16 = int(_T.DML_TENSOR_DATA_TYPE_FLOAT16)
UINT32 = int(_T.DML_TENSOR_DATA_TYPE_UINT32)
UINT16 = int(_T.DML_TENSOR_DATA_TYPE_UINT16)
UINT8 = int(_T.DML_TENSOR_DATA_TYPE_UINT8)
INT32 = int(_T.DML_TENSOR_DATA_TYPE_INT32)
INT16 = int(_T.DML_TENSOR_DATA_TYPE_INT16)
INT8 = int(_T.DML_TENSOR_DATA_TYPE_INT8)
FLOAT64 = int(_T.DML_TENSOR_DATA_TYPE_FLOAT64)
UINT64 = int(_T.DML_TENSOR_DATA_TYPE_UINT64)
INT64 = int(_T.DML_TENSOR_DATA_TYPE_INT64)
UINT4 = int(_T.DML_TENSOR_DATA_TYPE_UINT4)
INT4 = int(_T.DML_TENSOR_DATA_TYPE_INT4)

SHORT_NAMES = {FLOAT32: "FLOAT32", FLOAT16: "FLOAT16", UINT32: "UINT32", UINT16: "UINT16",
               UINT8: "UINT8", INT32: "INT32", INT16: "INT16", INT8: "INT8", FLOAT64: "FLOAT64",
               UINT64: "UINT64", INT64: "INT64", UINT4: "UINT4", INT4: "INT4"}
BY_SHORT_NAME = {v: k for k, v in SHORT_NAMES.items()}

ELEMENT_SIZE_BITS = {FLOAT32: 32, FLOAT16: 16, UINT32: 32, UINT16: 16, UINT8: 8, INT32: 32,
                     INT16: 16, INT8: 8, FLOAT64: 64, UINT64: 64, INT64: 64, UINT4: 4, INT4: 4}

NUMPY = {FLOAT32: np.dtype(np.float32), FLOAT16: np.dtype(np.float16),
         UINT32: np.dtype(np.uint32), UINT16: np.dtype(np.uint16), UINT8: np.dtype(np.uint8),
         INT32: np.dtype(np.int32), INT16: np.dtype(np.int16), INT8: np.dtype(np.int8),
         FLOAT64: np.dtype(np.float64), UINT64: np.dtype(np.uint64), INT64: np.dtype(np.int64),
         UINT4: np.dtype(ml_dtypes.uint4), INT4: np.dtype(ml_dtypes.int4)}  # packed: see packed4
FROM_NUMPY = {v: k for k, v in NUMPY.items()}

# Unsigned storage type of each element width: data movement happens in these types so that
# NaN payloads, -0.0 and denormals are copied bit for bit.
UNSIGNED_OF_SIZE = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
                    8: np.dtype(np.uint64)}

FLOAT_TYPES = frozenset({FLOAT16, FLOAT32, FLOAT64})
SIGNED_TYPES = frozenset({INT8, INT16, INT32, INT64, INT4})
SIXTY_FOUR_BIT = frozenset({FLOAT64, UINT64, INT64})


def name(dt: int) -> str:
    return "DML_TENSOR_DATA_TYPE_" + SHORT_NAMES.get(int(dt), f"<invalid {int(dt)}>")


def itemsize(dt: int) -> int:
    return ELEMENT_SIZE_BITS[int(dt)] // 8


def numpy_dtype(dt: int) -> np.dtype:
    try:
        return NUMPY[int(dt)]
    except KeyError:
        fail(E_NOTIMPL, f"{name(dt)} has no NumPy element type")


def dml_type_of(array_or_dtype) -> int:
    x = array_or_dtype
    dt = x.dtype if isinstance(x, (np.ndarray, np.generic)) or hasattr(x, "__array__") \
        and not isinstance(x, type) else np.dtype(x)
    try:
        return FROM_NUMPY[dt]
    except KeyError:
        fail(E_NOTIMPL, f"no DML_TENSOR_DATA_TYPE for NumPy dtype {dt}")


def calc_buffer_tensor_size(data_type: int, sizes, strides=None) -> int:
    """DMLCalcBufferTensorSize: bytes to the end of the last element, rounded up to 4.

    Packed strides when ``strides`` is None; 4-bit types count in bits (DirectMLX.h).
    Returns 0 for an unknown data type, as DirectMLX does.
    """
    bits = ELEMENT_SIZE_BITS.get(int(data_type))
    if bits is None:
        return 0
    sizes = [int(s) for s in sizes]
    if strides is None:
        count = 1
        for s in sizes:
            count *= s
        size_bits = count * bits
    else:
        last = sum((s - 1) * int(st) for s, st in zip(sizes, strides))
        size_bits = (last + 1) * bits
    size_bytes = (size_bits + 7) // 8
    return (size_bytes + 3) & ~3


def packed_strides(sizes) -> tuple:
    strides, acc = [], 1
    for s in reversed(sizes):
        strides.append(acc)
        acc *= int(s)
    return tuple(reversed(strides))


# ---- the packed 4-bit types (UINT4 / INT4): two elements per byte, see packed4 ----------

def is_packed4(data_type: int) -> bool:
    """UINT4 / INT4: "the first element in the low nibble of the byte; and the second element
    in the high nibble" (DML_TENSOR_DATA_TYPE). Element i sits at nibble 2 x byte offset +
    sum(i x stride): byte n // 2, the low nibble when n is even."""
    return int(data_type) in (UINT4, INT4)


def nibble_indices(byte_offset: int, sizes, strides) -> np.ndarray:
    """Nibble index of every element (shape ``sizes``, int64)."""
    n = np.full(tuple(sizes), 2 * int(byte_offset), np.int64)
    for d, (s, st) in enumerate(zip(sizes, strides)):
        shape = [1] * len(sizes)
        shape[d] = s
        n = n + (np.arange(s, dtype=np.int64) * int(st)).reshape(shape)
    return n


def nibble_values(nibbles, data_type):
    """Nibble values (uint8, 0..15) as elements of ``data_type`` (works on NumPy and JAX)."""
    if int(data_type) == INT4:
        nibbles = (nibbles.astype(np.int8) ^ 8) - 8  # sign-extend bit 3
    return nibbles.astype(NUMPY[int(data_type)])


def nibbles(values):
    """Elements (int4 / uint4) as their 4 stored bits (uint8)."""
    return values.astype(np.int8).astype(np.uint8) & 15


def host_read(raw_u8: np.ndarray, idx: np.ndarray, data_type: int) -> np.ndarray:
    """The elements at nibble indices ``idx`` of the host bytes ``raw_u8`` (NumPy; the
    traced twin is ``packed4.read``)."""
    nib = (raw_u8[idx >> 1] >> ((idx & 1) * 4).astype(np.uint8)) & 15
    return nibble_values(nib.astype(np.uint8), data_type)


def host_write(raw_u8: np.ndarray, idx: np.ndarray, values) -> None:
    """Store ``values`` (shape of ``idx``) at nibble indices ``idx`` of the host bytes
    ``raw_u8``, in place, the other nibbles kept (NumPy; traced twin: ``packed4.write``)."""
    bits = nibbles(np.asarray(values))
    for parity, keep in ((0, 0xF0), (1, 0x0F)):
        sel = (idx & 1) == parity
        byte = idx[sel] >> 1
        raw_u8[byte] = (raw_u8[byte] & keep) | (bits[sel] << (4 * parity)).astype(np.uint8)

"""Byte-exact memory: round trips, strided / broadcast / offset / aliased views, and
DMLCalcBufferTensorSize.

docs/binding.md: "NaN payloads, -0.0 and denormals survive every copy bit for bit"; a buffer
is a flat little-endian byte array whose bytes may be read as another type; zero strides
broadcast; in-place operators may write their input. Every check compares exact bytes.
"""
from __future__ import annotations

import numpy as np
import pytest

import dmlsim as dml

from helpers import as_bytes, assert_bits_equal, binding, shared_env, tensor  # noqa: F401

F32 = [0x7FC01234, 0xFF800001, 0x7F800001, 0x80000000, 0x00000001, 0x807FFFFF, 0x7F7FFFFF,
       0x7F800000, 0xFF800000, 0x3F800000, 0x00800000, 0xFFFFFFFF]
F16 = [0x7E01, 0x7C01, 0xFE00, 0x8000, 0x0001, 0x83FF, 0x7BFF, 0x7C00, 0xFC00, 0x3C00, 0xFFFF,
       0x0400]
F64 = [0x7FF8000000001234, 0xFFF0000000000001, 0x7FF0000000000001, 0x8000000000000000, 1,
       0x800FFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFF, 0x7FF0000000000000, 0xFFF0000000000000,
       0xFFFFFFFFFFFFFFFF]
FLOAT_PATTERNS = {np.float32: (F32, np.uint32), np.float16: (F16, np.uint16),
                  np.float64: (F64, np.uint64)}
INT_TYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
ALL_TYPES = tuple(FLOAT_PATTERNS) + INT_TYPES


def pattern(dtype):
    """Values whose bits must survive: NaN payloads (quiet and signalling, both signs), -0.0,
    smallest and largest denormals, infinities, the largest finite value; for integers the
    extremes, 0, -1 / all ones, and alternating bits."""
    if dtype in FLOAT_PATTERNS:
        raw, u = FLOAT_PATTERNS[dtype]
        return np.array(raw, u).view(dtype)
    info = np.iinfo(dtype)
    u = np.dtype(dtype).newbyteorder("=").str.replace("i", "u")
    alt = np.frombuffer(b"\x55" * np.dtype(dtype).itemsize + b"\xAA" * np.dtype(dtype).itemsize,
                        dtype)
    vals = np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1], dtype)
    return np.concatenate([vals, alt, np.array([-1 if info.min else info.max], dtype)])


def identity(env, dtype, sizes, in_strides=None, out_strides=None, scale_bias=None):
    t_in = tensor(dtype, sizes, in_strides)
    t_out = tensor(dtype, sizes, out_strides)
    desc = dml.DML_OPERATOR_DESC(
        dml.DML_OPERATOR_ELEMENT_WISE_IDENTITY,
        dml.DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC(t_in, t_out, scale_bias))
    return env.compile(desc), t_in.Desc.TotalTensorSizeInBytes, t_out.Desc.TotalTensorSizeInBytes


def binary(env, op, dtype, sizes, a_strides=None, b_strides=None, out_strides=None):
    ta, tb, to = (tensor(dtype, sizes, s) for s in (a_strides, b_strides, out_strides))
    struct = getattr(dml, f"DML_ELEMENT_WISE_{op}_OPERATOR_DESC")
    desc = dml.DML_OPERATOR_DESC(getattr(dml, f"DML_OPERATOR_ELEMENT_WISE_{op}"),
                                 struct(ta, tb, to))
    return env.compile(desc), [t.Desc.TotalTensorSizeInBytes for t in (ta, tb, to)]


@pytest.mark.parametrize("dtype", ALL_TYPES, ids=[np.dtype(t).name for t in ALL_TYPES])
def test_identity_round_trip_is_bit_exact(shared_env, dtype):
    env = shared_env
    data = pattern(dtype)
    compiled, size_in, size_out = identity(env, dtype, [data.size])
    src = env.device_buffer(data, size_in)
    dst = env.buffer(size_out)
    env.dispatch(compiled, [binding(src, 0, size_in)], [binding(dst, 0, size_out)])
    out = env.read(dst)[:data.nbytes].view(dtype)
    assert_bits_equal(out, data, f"identity {np.dtype(dtype).name}")
    assert_bits_equal(env.read(src)[:data.nbytes], as_bytes(data), "input untouched")


@pytest.mark.parametrize("dtype", ALL_TYPES, ids=[np.dtype(t).name for t in ALL_TYPES])
def test_copy_buffer_region_round_trip_is_bit_exact(shared_env, dtype):
    """UPLOAD -> DEFAULT -> DEFAULT at an odd byte offset -> READBACK keeps every byte."""
    env = shared_env
    data = as_bytes(pattern(dtype))
    a = env.device_buffer(data)
    b = env.buffer(data.size + 8)
    env.upload(b, np.full(data.size + 8, 0xCD, np.uint8))
    env.cl.CopyBufferRegion(b, 3, a, 0, data.size)
    got = env.read(b)
    assert got[:3].tolist() == [0xCD] * 3
    assert got[3:3 + data.size].tobytes() == data.tobytes()
    assert got[3 + data.size:].tolist() == [0xCD] * 5


def test_upload_to_readback_copy_and_map(shared_env):
    """A copy between two CPU-visible heaps, and Map over the READBACK bytes."""
    env = shared_env
    data = as_bytes(pattern(np.float32))
    up = env.upload_buffer(data)
    rb = env.buffer(data.size, dml.D3D12_HEAP_TYPE_READBACK)
    env.cl.CopyResource(rb, up)
    env.flush()
    assert rb.Map(0, None).tobytes() == data.tobytes()
    rb.Unmap(0, None)


def test_strided_input_padded_rows(shared_env):
    """Sizes {2, 3} with Strides {4, 1}: rows are 4 elements apart (dml-strides.md padding)."""
    env = shared_env
    buf_vals = np.arange(8, dtype=np.float32) + 0.5
    compiled, size_in, size_out = identity(env, np.float32, [2, 3], in_strides=[4, 1])
    assert size_in == 28  # (1*4 + 2*1 + 1) * 4
    src = env.device_buffer(buf_vals, 32)
    dst = env.buffer(size_out)
    env.dispatch(compiled, [binding(src, 0, 32)], [binding(dst, 0, size_out)])
    got = env.read(dst).view(np.float32).reshape(2, 3)
    np.testing.assert_array_equal(got, [[0.5, 1.5, 2.5], [4.5, 5.5, 6.5]])


def test_strided_output_column_major(shared_env):
    """An output with Strides {1, 2}: element (i, j) lands at index i + 2j."""
    env = shared_env
    x = np.arange(6, dtype=np.int32).reshape(2, 3) * 7 - 11
    compiled, size_in, size_out = identity(env, np.int32, [2, 3], out_strides=[1, 2])
    src = env.device_buffer(x)
    dst = env.buffer(size_out)
    env.dispatch(compiled, [binding(src)], [binding(dst)])
    got = env.read(dst).view(np.int32)
    np.testing.assert_array_equal(got, x.T.reshape(-1))


def test_broadcast_zero_strides(shared_env):
    """Strides {0, 1} repeat one row; Strides {0, 0} broadcast a single element."""
    env = shared_env
    row = np.array([1.0, -0.0, np.inf], np.float32)
    compiled, size_in, size_out = identity(env, np.float32, [2, 3], in_strides=[0, 1])
    assert size_in == 12
    src = env.device_buffer(row)
    dst = env.buffer(size_out)
    env.dispatch(compiled, [binding(src)], [binding(dst)])
    assert_bits_equal(env.read(dst).view(np.float32).reshape(2, 3), np.stack([row, row]))

    compiled, sizes = binary(env, "ADD", np.uint16, [2, 2], b_strides=[0, 0])
    assert sizes == [8, 4, 8]
    a = env.device_buffer(np.array([1, 2, 3, 65535], np.uint16))
    b = env.device_buffer(np.array([10, 0], np.uint16))
    out = env.buffer(8)
    env.dispatch(compiled, [binding(a), binding(b)], [binding(out)])
    assert env.read(out).view(np.uint16).tolist() == [11, 12, 13, 9]  # 65535 + 10 wraps to 9


def test_run_writes_and_reads_strided_tensors_at_their_element_positions():
    """dmlsim.run places a strided input's values where its strides say and reads a strided
    output back by them: transposed (a strided view of the buffer), padded rows, and zero
    strides (a broadcast: several logical elements on one buffer element)."""
    x = (np.arange(12, dtype=np.float32) * 1.5 - 4).reshape(3, 4)
    cases = [([3, 4], [1, 3], [4, 1]),   # column-major input, row-major output
             ([3, 4], [4, 1], [1, 3]),   # row-major input, column-major output
             ([3, 4], [6, 1], [5, 1])]   # padded rows both ways
    for sizes, in_strides, out_strides in cases:
        desc = dml.operator_desc(
            "ELEMENT_WISE_IDENTITY",
            InputTensor=dml.tensor_desc(np.float32, sizes=sizes, strides=in_strides),
            OutputTensor=dml.tensor_desc(np.float32, sizes=sizes, strides=out_strides))
        np.testing.assert_array_equal(dml.run(desc, x), x)
    row = np.float32([2.5, -0.0, np.inf, 7])
    desc = dml.operator_desc(
        "ELEMENT_WISE_IDENTITY",
        InputTensor=dml.tensor_desc(np.float32, sizes=[3, 4], strides=[0, 1]),
        OutputTensor=dml.tensor_desc(np.float32, sizes=[3, 4], strides=[1, 3]))
    assert_bits_equal(dml.run(desc, np.broadcast_to(row, (3, 4))), np.stack([row] * 3))


def test_binding_offsets_and_strided_window(shared_env):
    """The input is bound at Offset 16 and read through Strides {4, 1} (a 2x2 window of a
    4-wide matrix); the output is bound at Offset 48 of a pre-filled buffer: the bytes
    outside the output binding's range keep their values."""
    env = shared_env
    mat = np.arange(16, dtype=np.float32)
    compiled, size_in, size_out = identity(env, np.float32, [2, 2], in_strides=[4, 1])
    assert (size_in, size_out) == (24, 16)
    src = env.device_buffer(mat)  # 64 bytes; the binding starts at element 4
    dst = env.buffer(96)
    env.upload(dst, np.full(96, 0xEE, np.uint8))
    env.dispatch(compiled, [binding(src, 16, size_in)], [binding(dst, 48, size_out)])
    got = env.read(dst)
    assert got[:48].tolist() == [0xEE] * 48
    assert got[64:].tolist() == [0xEE] * 32
    np.testing.assert_array_equal(got[48:64].view(np.float32), [4, 5, 8, 9])


def test_in_place_add_output_aliases_input(shared_env):
    """ELEMENT_WISE_ADD supports in-place execution: the output binding may be identical to
    an input binding (nf-directml-idmlbindingtable-bindinputs.md, Example 4)."""
    env = shared_env
    compiled, sizes = binary(env, "ADD", np.float32, [4])
    a = env.device_buffer(np.array([1, 2, 3, -0.0], np.float32))
    b = env.device_buffer(np.array([10, 20, 30, -0.0], np.float32))
    env.dispatch(compiled, [binding(a), binding(b)], [binding(a)])
    assert_bits_equal(env.read(a).view(np.float32), np.float32([11, 22, 33, -0.0]))
    # every binding on one range: a + a, written over a
    env.dispatch(compiled, [binding(a), binding(a)], [binding(a)])
    np.testing.assert_array_equal(env.read(a).view(np.float32), [22, 44, 66, 0])


def test_two_types_over_one_buffer(shared_env):
    """The same bytes read as FLOAT32, UINT32, UINT16 and INT8 give the same bytes back."""
    env = shared_env
    data = pattern(np.float32)[:8]
    src = env.device_buffer(data)
    for dtype, count in ((np.uint32, 8), (np.uint16, 16), (np.int8, 32), (np.float32, 8)):
        compiled, size_in, size_out = identity(env, dtype, [count])
        dst = env.buffer(size_out)
        env.dispatch(compiled, [binding(src)], [binding(dst)])
        assert env.read(dst).tobytes() == data.tobytes(), np.dtype(dtype).name


def test_one_dispatch_reads_float32_and_writes_uint8_in_the_same_buffer(shared_env):
    """IS_INFINITY reads bytes [0, 16) as FLOAT32 and writes UINT8 at bytes [32, 36) of the
    same resource: disjoint ranges of one resource are no hazard (BindInputs, Example 2)."""
    env = shared_env
    x = np.array([np.inf, -np.inf, np.nan, 1e38], np.float32)
    buf = env.device_buffer(x, 48)
    t_in, t_out = tensor(np.float32, [4]), tensor(np.uint8, [4])
    compiled = env.compile(dml.DML_OPERATOR_DESC(
        dml.DML_OPERATOR_ELEMENT_WISE_IS_INFINITY,
        dml.DML_ELEMENT_WISE_IS_INFINITY_OPERATOR_DESC(t_in, t_out, 0)))
    env.dispatch(compiled, [binding(buf, 0, 16)], [binding(buf, 32, 4)])
    got = env.read(buf)
    assert got[:16].tobytes() == x.tobytes()
    assert got[32:36].tolist() == [1, 1, 0, 0]


def test_float16_result_then_read_as_bytes(shared_env):
    """A FLOAT16 result stored by ADD, then read through a UINT8 view of the same bytes."""
    env = shared_env
    compiled, sizes = binary(env, "ADD", np.float16, [3])
    a = env.device_buffer(np.float16([1.5, -2.0, 65504]))
    b = env.device_buffer(np.float16([0.25, 2.0, 65504]))
    out = env.buffer(8)
    env.dispatch(compiled, [binding(a), binding(b)], [binding(out)])
    expect = np.float16([1.75, 0.0, np.inf])  # 65504 + 65504 overflows to inf
    ident, _, size_out = identity(env, np.uint8, [6])
    dst = env.buffer(size_out)
    env.dispatch(ident, [binding(out)], [binding(dst)])
    assert env.read(dst)[:6].tobytes() == expect.tobytes()


def test_odd_sized_buffers_round_trip(shared_env):
    """Buffers whose width is not a multiple of 4 or 8 keep their bytes."""
    env = shared_env
    for width in (1, 5, 6, 12, 13):
        data = (np.arange(width, dtype=np.uint8) * 37 + 1).astype(np.uint8)
        buf = env.buffer(width)
        env.upload(buf, data)
        assert env.read(buf).tobytes() == data.tobytes(), width


CALC_CASES = [
    # (data type, sizes, strides, expected bytes) -- dml-helper-functions.md formula
    (dml.DML_TENSOR_DATA_TYPE_FLOAT32, [1, 2, 3, 4], None, 96),
    (dml.DML_TENSOR_DATA_TYPE_FLOAT16, [3], None, 8),            # 6 rounded up to 8
    (dml.DML_TENSOR_DATA_TYPE_UINT8, [5], None, 8),
    (dml.DML_TENSOR_DATA_TYPE_INT8, [1], None, 4),
    (dml.DML_TENSOR_DATA_TYPE_FLOAT32, [2, 3], [4, 1], 28),      # (4 + 2 + 1) * 4
    (dml.DML_TENSOR_DATA_TYPE_FLOAT32, [2, 3], [0, 0], 4),       # broadcast: one element
    (dml.DML_TENSOR_DATA_TYPE_FLOAT32, [2, 3], [0, 1], 12),
    (dml.DML_TENSOR_DATA_TYPE_FLOAT64, [3], [2], 40),            # (4 + 1) * 8
    (dml.DML_TENSOR_DATA_TYPE_UINT16, [3, 3], [3, 1], 20),       # 18 rounded up to 20
    (dml.DML_TENSOR_DATA_TYPE_INT64, [2, 2], [1, 2], 32),
    (dml.DML_TENSOR_DATA_TYPE_UINT8, [2, 3], [1, 2], 8),         # index 5 -> 6 bytes -> 8
    (dml.DML_TENSOR_DATA_TYPE_UNKNOWN, [4], None, 0),            # invalid data type
]


@pytest.mark.parametrize("dt,sizes,strides,expected", CALC_CASES)
def test_calc_buffer_tensor_size(dt, sizes, strides, expected):
    assert dml.DMLCalcBufferTensorSize(dt, len(sizes), sizes, strides) == expected

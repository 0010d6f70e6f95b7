"""The packed 4-bit types (DML_TENSOR_DATA_TYPE_UINT4 / INT4) byte for byte.

The data-type page: "the first element in the low nibble of the byte; and the second element
in the high nibble ... [1,2,3,4,5] ... yields 3 bytes [0x21, 0x43, 0x05] with an ignorable
tail nibble". Strides count elements, binding offsets count bytes. The expected bytes here
are computed by the tests' own nibble loop (``_pack``), not by dmlsim's packing code.
"""
import ml_dtypes
import numpy as np
import pytest

import dmlsim as dml
from helpers import Env, binding, tensor

INT4, UINT4 = np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.uint4)
SCALE, SCALE_ZERO_POINT = 1, 2


def _pack(raw, values, sizes, strides, byte_offset=0):
    """Store ``values`` into the bytes ``raw`` as the page says, one nibble at a time."""
    for index in np.ndindex(*sizes):
        n = 2 * byte_offset + sum(i * s for i, s in zip(index, strides))
        v = int(values[index]) & 15
        byte, high = divmod(n, 2)
        raw[byte] = (raw[byte] & 0x0F) | (v << 4) if high else (raw[byte] & 0xF0) | v


def _packed(sizes):
    strides, acc = [], 1
    for s in reversed(sizes):
        strides.insert(0, acc)
        acc *= s
    return strides


def _dequantize(env, raw, dtype, sizes, strides=None, offset=0, scale=1.0):
    """DEQUANTIZE (SCALE) of the 4-bit tensor stored in ``raw`` at byte ``offset``."""
    x = tensor(dtype, sizes, strides)
    out = np.zeros(sizes, np.float32)
    desc = dml.operator_desc("DEQUANTIZE", InputTensor=x, QuantizationType=SCALE,
                             QuantizationTensors=[np.full([1] * len(sizes), scale, np.float32)],
                             OutputTensor=out)
    compiled = env.compile(desc)
    src = env.device_buffer(raw)
    s = env.device_buffer(np.float32([scale]))
    dst = env.buffer(out.nbytes)
    env.dispatch(compiled, [binding(src, offset, x.Desc.TotalTensorSizeInBytes), binding(s)],
                 [binding(dst)])
    return env.read_as(dst, np.float32).reshape(sizes)


def _quantize(env, values, dtype, fill, size, strides=None, offset=0, zero_point=0):
    """QUANTIZE (scale 1, ``zero_point``) of float ``values`` into a ``size``-byte buffer of
    ``fill`` bytes; returns that buffer's bytes."""
    sizes = list(values.shape)
    out = tensor(dtype, sizes, strides)
    desc = dml.operator_desc("QUANTIZE", InputTensor=values, QuantizationType=SCALE_ZERO_POINT,
                             QuantizationTensors=[np.ones([1] * len(sizes), np.float32),
                                                  np.full([1] * len(sizes), zero_point, dtype)],
                             OutputTensor=out)
    compiled = env.compile(desc)
    src = env.device_buffer(values.astype(np.float32))
    s, zp = env.device_buffer(np.float32([1])), env.device_buffer(np.uint8([zero_point & 15]))
    dst = env.device_buffer(np.full(size, fill, np.uint8))
    env.dispatch(compiled, [binding(src), binding(s), binding(zp)],
                 [binding(dst, offset, out.Desc.TotalTensorSizeInBytes)])
    return env.read(dst)


def test_the_pages_bytes_read_as_its_elements():
    env = Env()
    got = _dequantize(env, np.uint8([0x21, 0x43, 0x05, 0xF0]), UINT4, [1, 5])
    assert got.tolist() == [[1, 2, 3, 4, 5]]  # the 0xF0 tail nibble and byte 3 are not read


def test_int4_is_twos_complement_in_its_nibble():
    env = Env()
    got = _dequantize(env, np.uint8([0xF8, 0x07, 0x01, 0]), INT4, [1, 6])
    assert got.tolist() == [[-8, -1, 7, 0, 1, 0]]


def test_writes_keep_the_nibbles_no_element_covers():
    env = Env()
    got = _quantize(env, np.float32([[1, 2, 3, 4, 5]]), UINT4, 0xAA, 8)
    assert got.tolist() == [0x21, 0x43, 0xA5, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA]
    got = _quantize(env, np.float32([[-8, -1, 7, 0, 1]]), INT4, 0xAA, 4)
    assert got.tolist() == [0xF8, 0x07, 0xA1, 0xAA]


@pytest.mark.parametrize("dtype", [INT4, UINT4])
def test_strided_views_at_odd_nibbles_and_byte_offsets(dtype):
    """Rows 5 nibbles apart (every other row starts in a high nibble), a column stride of
    3, bound 16 bytes into the buffer: reads and writes address exactly those nibbles."""
    rng = np.random.default_rng(4)
    info = ml_dtypes.iinfo(dtype)
    sizes, strides, offset = [3, 2], [5, 3], 16
    values = rng.integers(int(info.min), int(info.max), sizes, endpoint=True)
    env = Env()
    raw = rng.integers(0, 256, 32, dtype=np.uint8)
    stored = raw.copy()
    _pack(stored, values, sizes, strides, offset)
    assert _dequantize(env, stored, dtype, sizes, strides, offset).tolist() == values.tolist()
    got = _quantize(env, values.astype(np.float32), dtype, 0x5A, 32, strides, offset)
    want = np.full(32, 0x5A, np.uint8)
    _pack(want, values, sizes, strides, offset)
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("dtype", [INT4, UINT4])
def test_random_quantization_saturates_to_four_bits(dtype):
    """QUANTIZE with a zero point, against Python's round-half-even and the 4-bit range."""
    rng = np.random.default_rng(5)
    info = ml_dtypes.iinfo(dtype)
    x = np.round(rng.standard_normal((2, 7)) * 8, 1).astype(np.float32)
    zp = 3 if dtype == UINT4 else -2
    env = Env()
    got = _quantize(env, x, dtype, 0, 8, zero_point=zp)
    q = [min(max(round(float(v)) + zp, int(info.min)), int(info.max)) for v in x.reshape(-1)]
    want = np.zeros(8, np.uint8)
    _pack(want, np.array(q).reshape(x.shape), list(x.shape), _packed(list(x.shape)))
    assert got.tolist() == want.tolist()


def test_buffer_sizes_count_nibbles():
    """DMLCalcBufferTensorSize counts 4 bits per element (9: 5 bytes, rounded to 8; the last of
    [2, 3] at strides [5, 1] is nibble 7: 4 bytes); CreateOperator checks against it."""
    assert dml.DMLCalcBufferTensorSize(dml.DML_TENSOR_DATA_TYPE_INT4, 2, [1, 9], None) == 8
    assert dml.DMLCalcBufferTensorSize(dml.DML_TENSOR_DATA_TYPE_UINT4, 2, [2, 3], [5, 1]) == 4
    x = tensor(INT4, [1, 9])
    x.Desc.TotalTensorSizeInBytes = 4
    desc = dml.operator_desc("DEQUANTIZE", InputTensor=x, QuantizationType=SCALE,
                             QuantizationTensors=[np.ones((1, 1), np.float32)],
                             OutputTensor=np.zeros((1, 9), np.float32))
    with pytest.raises(dml.HResultError) as e:
        Env().dml.CreateOperator(desc)
    assert e.value.hresult == dml.E_INVALIDARG
    assert "InputTensor.TotalTensorSizeInBytes" in e.value.message, e.value.message

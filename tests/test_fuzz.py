"""Property tests (hypothesis): data movement is exact for any bits, any view.

Oracles are NumPy on the same bytes: an IDENTITY dispatch through a strided, offset or
broadcast view must read exactly the elements NumPy's index arithmetic names and write them
packed, bit for bit, whatever the bit pattern (NaN payloads, -0.0, denormals included).
Shapes come from a small set so that few programs are compiled.
"""
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import dmlsim as dml
from dmlsim._core import dtypes

from helpers import assert_bits_equal

TYPES = [np.float32, np.float16, np.float64, np.int8, np.uint16, np.int32, np.uint64]
SHAPES = [(6,), (2, 3), (2, 1, 4)]
FAST = settings(max_examples=25, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def strided_view(draw):
    """(dtype, sizes, strides, raw bytes of the buffer) with each stride 0..3x packed."""
    dtype = np.dtype(draw(st.sampled_from(TYPES)))
    sizes = draw(st.sampled_from(SHAPES))
    packed = dtypes.packed_strides(sizes)
    strides = tuple(draw(st.sampled_from([0, p, p * 2, p * 3])) for p in packed)
    count = sum((s - 1) * t for s, t in zip(sizes, strides)) + 1
    raw = draw(st.binary(min_size=count * dtype.itemsize, max_size=count * dtype.itemsize))
    return dtype, sizes, strides, np.frombuffer(raw, dtype=dtype)


@FAST
@given(strided_view())
def test_identity_reads_any_strided_view_bit_for_bit(view):
    dtype, sizes, strides, data = view
    src = dml.tensor_desc(dtype, sizes=sizes, strides=strides)
    out = np.zeros(sizes, dtype)
    desc = dml.operator_desc("ELEMENT_WISE_IDENTITY", InputTensor=src, OutputTensor=out)
    # dmlsim.run uploads the logical values through the same strides, so hand it the view
    # NumPy sees; the oracle is that view itself.
    logical = np.lib.stride_tricks.as_strided(
        data, shape=sizes, strides=[s * dtype.itemsize for s in strides])
    got = dml.run(desc, logical.copy())
    assert_bits_equal(got, logical, f"{dtype} {sizes} strides {strides}")


@FAST
@given(st.sampled_from(list(dtypes.ELEMENT_SIZE_BITS)),
       st.lists(st.integers(1, 9), min_size=1, max_size=8),
       st.data())
def test_calc_buffer_tensor_size_is_the_documented_formula(dt, sizes, data):
    """dml-helper-functions.md: (sum((Sizes[i]-1)*Strides[i]) + 1) * element size, in bits for
    4-bit types, rounded up to 4 bytes; packed strides when Strides is None."""
    strides = data.draw(st.none() | st.lists(st.integers(0, 50), min_size=len(sizes),
                                              max_size=len(sizes)))
    bits = dtypes.ELEMENT_SIZE_BITS[dt]
    if strides is None:
        last = int(np.prod(sizes)) - 1
    else:
        last = sum((s - 1) * t for s, t in zip(sizes, strides))
    expected = (((last + 1) * bits + 7) // 8 + 3) // 4 * 4
    assert dml.DMLCalcBufferTensorSize(dt, len(sizes), sizes, strides) == expected


@FAST
@given(st.binary(min_size=8, max_size=8))
def test_scalar_union_members_alias_the_same_bytes(raw):
    """DML_SCALAR_UNION: every member reads the same little-endian bytes, NaN payloads and
    signaling NaNs included (a float member reads as a NumPy scalar with those bits)."""
    u = dml.DML_SCALAR_UNION()
    u.Bytes = raw
    assert u.UInt64 == int.from_bytes(raw, "little")
    assert u.Int32 == int.from_bytes(raw[:4], "little", signed=True)
    assert u.Float32.tobytes() == raw[:4]
    assert u.Float64.tobytes() == raw
    u.Float64 = u.Float64
    assert u.Bytes == raw
    u.Float32 = u.Float32
    assert u.Bytes == raw

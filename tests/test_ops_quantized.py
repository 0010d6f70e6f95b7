"""Quantized operators, exact: MATRIX_MULTIPLY_INTEGER against Python-integer sums (zero points
per tensor, per row and per column; every INT8/UINT8 pairing; 32-bit wrap-around), and its
misuses with their exact messages."""
import numpy as np
import pytest

import dmlsim as dml

TYPES = [np.int8, np.uint8]


def _exact(a, azp, b, bzp):
    a = a.astype(object) - (0 if azp is None else azp.astype(object))
    b = b.astype(object) - (0 if bzp is None else bzp.astype(object))
    out = np.einsum("...mk,...kn->...mn", a, b)
    return np.vectorize(lambda v: (int(v) + 2**31) % 2**32 - 2**31)(out).astype(np.int64)


def _run(a, azp, b, bzp):
    desc = dml.operator_desc("MATRIX_MULTIPLY_INTEGER", ATensor=a, AZeroPointTensor=azp,
                             BTensor=b, BZeroPointTensor=bzp)
    return dml.run(desc, a, azp, b, bzp)


@pytest.mark.parametrize("ta", TYPES, ids=["A_INT8", "A_UINT8"])
@pytest.mark.parametrize("tb", TYPES, ids=["B_INT8", "B_UINT8"])
@pytest.mark.parametrize("zp", ["none", "tensor", "row_column"])
def test_random_products_are_exact(ta, tb, zp):
    rng = np.random.default_rng(hash((ta, tb, zp)) % 2**32)
    info_a, info_b = np.iinfo(ta), np.iinfo(tb)
    a = rng.integers(info_a.min, info_a.max + 1, (2, 3, 5, 7)).astype(ta)
    b = rng.integers(info_b.min, info_b.max + 1, (2, 3, 7, 4)).astype(tb)
    azp = bzp = None
    if zp == "tensor":
        azp, bzp = np.full((1, 1, 1, 1), info_a.max // 2, ta), np.full((1, 1, 1, 1), 3, tb)
    elif zp == "row_column":
        azp = rng.integers(info_a.min, info_a.max + 1, (1, 1, 5, 1)).astype(ta)
        bzp = rng.integers(info_b.min, info_b.max + 1, (1, 1, 1, 4)).astype(tb)
    got = _run(a, azp, b, bzp)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, _exact(a, azp, b, bzp))


def test_sums_beyond_int32_wrap_as_32_bit_accumulators_do():
    k = 40_000  # 255 * 255 * 40000 = 2,601,000,000 > 2^31 - 1
    a = np.full((1, 1, 1, k), 255, np.uint8)
    b = np.full((1, 1, k, 1), 255, np.uint8)
    got = _run(a, None, b, None)
    assert int(got.ravel()[0]) == 2_601_000_000 - 2**32  # -1,693,967,296


def test_one_dimensional_zero_points_from_feature_level_5_2():
    a = np.array([[1, 2], [3, 4]], np.uint8)
    b = np.array([[1, 0], [0, 1]], np.uint8)
    got = _run(a, np.array([1, 3], np.uint8), b, np.array([1, 0], np.uint8))
    np.testing.assert_array_equal(got, [[-1, 1], [-1, 1]])  # rows [0 1] x [0 0; -1 1]


@pytest.mark.parametrize("field,value,message", [
    ("AZeroPointTensor", np.zeros((1, 1, 3, 1), np.uint8),
     "AZeroPointTensor.Sizes is [1, 1, 3, 1]; it must be {1, 1, 1, 1} (per tensor) or hold 2 "
     "values along M (per row), every other dimension 1"),
    ("BTensor", np.zeros((1, 1, 3, 2), np.uint8),
     "ATensor.Sizes [1, 1, 2, 2] gives K = 2 but BTensor.Sizes [1, 1, 3, 2] gives K = 3"),
    ("AZeroPointTensor", np.zeros((1, 1, 1, 1), np.int8),
     "AZeroPointTensor.DataType is DML_TENSOR_DATA_TYPE_INT8 but ATensor.DataType is "
     "DML_TENSOR_DATA_TYPE_UINT8"),
])
def test_misuses_name_the_field(field, value, message):
    fields = {"ATensor": np.zeros((1, 1, 2, 2), np.uint8), "BTensor": np.zeros((1, 1, 2, 2),
                                                                             np.uint8)}
    fields[field] = value
    desc = dml.operator_desc("MATRIX_MULTIPLY_INTEGER", **fields,
                             OutputTensor=np.zeros((1, 1, 2, 2), np.int32))
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    with pytest.raises(dml.HResultError) as e:
        dml.DMLCreateDevice(d3d, 0).CreateOperator(desc)
    assert e.value.hresult == dml.E_INVALIDARG
    assert message in e.value.message, e.value.message

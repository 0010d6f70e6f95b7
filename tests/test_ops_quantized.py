"""Quantized operators, exact: MATRIX_MULTIPLY_INTEGER against Python-integer sums (zero points
per tensor, per row and per column; every INT8/UINT8 pairing; 32-bit wrap-around), and its
misuses with their exact messages; the requantizing operators (QUANTIZED_LINEAR_*,
DYNAMIC_QUANTIZE_LINEAR, QUANTIZE/DEQUANTIZE), CONVOLUTION_INTEGER and
MATRIX_MULTIPLY_INTEGER_TO_FLOAT against Python integers and Fractions, loop by loop."""
from fractions import Fraction

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


# ---- the requantizing and integer operators: Python integers and Fractions, loop by loop -----

def _requant(value, zp, dtype):
    """round half to even (Python's round on a Fraction), + zero point, saturate."""
    info = np.iinfo(dtype)
    return min(max(round(Fraction(value)) + int(zp), int(info.min)), int(info.max))


def _rand(rng, dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


@pytest.mark.parametrize("out_t", TYPES, ids=["OUT_INT8", "OUT_UINT8"])
@pytest.mark.parametrize("per", ["tensor", "row_column"])
def test_quantized_linear_matrix_multiply_is_the_exact_requantization(out_t, per):
    rng = np.random.default_rng(7 + (per == "tensor") + 2 * (out_t == np.int8))
    m, k, n = 3, 5, 4
    a, b = _rand(rng, np.uint8, (1, 2, m, k)), _rand(rng, np.int8, (1, 2, k, n))
    rows, cols = ((1, 1, m, 1), (1, 1, 1, n)) if per == "row_column" else ((1, 1, 1, 1),) * 2
    a_s = (rng.integers(1, 64, rows) / 64).astype(np.float32)   # exact in binary
    b_s = (rng.integers(1, 64, cols) / 32).astype(np.float32)
    o_s = np.float32(rng.uniform(5, 50, rows))                   # arbitrary float32 values
    a_z, b_z, o_z = _rand(rng, np.uint8, rows), _rand(rng, np.int8, cols), _rand(rng, out_t, rows)
    desc = dml.operator_desc("QUANTIZED_LINEAR_MATRIX_MULTIPLY", ATensor=a, AScaleTensor=a_s,
                             AZeroPointTensor=a_z, BTensor=b, BScaleTensor=b_s,
                             BZeroPointTensor=b_z, OutputScaleTensor=o_s,
                             OutputZeroPointTensor=o_z)
    got = dml.run(desc, a, a_s, a_z, b, b_s, b_z, o_s, o_z)
    for c, i, j in np.ndindex(2, m, n):
        row = (lambda t: t.reshape(-1)[0]) if per == "tensor" else (lambda t: t.reshape(-1)[i])
        col = (lambda t: t.reshape(-1)[0]) if per == "tensor" else (lambda t: t.reshape(-1)[j])
        acc = sum((int(a[0, c, i, t]) - int(row(a_z))) * (int(b[0, c, t, j]) - int(col(b_z)))
                  for t in range(k))
        v = acc * Fraction(float(row(a_s))) * Fraction(float(col(b_s))) / Fraction(
            float(row(o_s)))
        assert int(got[0, c, i, j]) == _requant(v, row(o_z), out_t), (c, i, j)


def test_convolution_integer_against_python_loops():
    """Groups, strides, dilations, asymmetric padding and per-channel filter zero points."""
    rng = np.random.default_rng(11)
    x, w = _rand(rng, np.uint8, (2, 4, 6, 7)), _rand(rng, np.int8, (6, 2, 2, 3))
    xz, wz = np.uint8([[[[120]]]]), _rand(rng, np.int8, (1, 6, 1, 1))
    attrs = dict(DimensionCount=2, Strides=(2, 1), Dilations=(1, 2), StartPadding=(1, 0),
                 EndPadding=(0, 2), GroupCount=2)
    desc = dml.operator_desc("CONVOLUTION_INTEGER", InputTensor=x, InputZeroPointTensor=xz,
                             FilterTensor=w, FilterZeroPointTensor=wz, **attrs)
    got = dml.run(desc, x, xz, w, wz)
    oh, ow = (6 + 1 - 2) // 2 + 1, (7 + 2 - 5) // 1 + 1
    assert got.shape == (2, 6, oh, ow) and got.dtype == np.int32
    for nb, m, i, j in np.ndindex(2, 6, oh, ow):
        g = m // 3
        acc = 0
        for c, ty, tx in np.ndindex(2, 2, 3):
            yy, xx = i * 2 + ty - 1, j + tx * 2
            if 0 <= yy < 6 and 0 <= xx < 7:
                acc += (int(x[nb, g * 2 + c, yy, xx]) - 120) * (int(w[m, c, ty, tx]) -
                                                                int(wz[0, m, 0, 0]))
        assert int(got[nb, m, i, j]) == acc, (nb, m, i, j)


def test_convolution_integer_sums_wrap_at_32_bits():
    k = 40_000  # 255 * 255 * 40000 > 2^31 - 1
    x, w = np.full((1, 1, 1, k), 255, np.uint8), np.full((1, 1, 1, k), 255, np.uint8)
    desc = dml.operator_desc("CONVOLUTION_INTEGER", InputTensor=x, FilterTensor=w,
                             DimensionCount=2, Strides=(1, 1), Dilations=(1, 1),
                             StartPadding=(0, 0), EndPadding=(0, 0), GroupCount=1)
    assert int(dml.run(desc, x, None, w, None).ravel()[0]) == 2_601_000_000 - 2**32


def test_quantized_linear_convolution_with_bias_and_channel_scales():
    rng = np.random.default_rng(5)
    x, w = _rand(rng, np.int8, (1, 3, 5, 5)), _rand(rng, np.int8, (4, 3, 3, 3))
    xs, xz = np.float32([[[[0.05]]]]), np.int8([[[[-3]]]])
    ws = np.float32(rng.uniform(0.001, 0.01, (1, 4, 1, 1)))
    bias = rng.integers(-5000, 5000, (1, 4, 1, 1)).astype(np.int32)
    os_, oz = np.float32([[[[0.7]]]]), np.uint8([[[[128]]]])
    desc = dml.operator_desc("QUANTIZED_LINEAR_CONVOLUTION", InputTensor=x, InputScaleTensor=xs,
                             InputZeroPointTensor=xz, FilterTensor=w, FilterScaleTensor=ws,
                             BiasTensor=bias, OutputScaleTensor=os_, OutputZeroPointTensor=oz,
                             OutputTensor=np.zeros((1, 4, 3, 3), np.uint8), DimensionCount=2,
                             Strides=(1, 1), Dilations=(1, 1), StartPadding=(0, 0),
                             EndPadding=(0, 0), GroupCount=1)
    got = dml.run(desc, x, xs, xz, w, ws, None, bias, os_, oz)
    for m, i, j in np.ndindex(4, 3, 3):
        acc = int(bias[0, m, 0, 0]) + sum(
            (int(x[0, c, i + a, j + b]) + 3) * int(w[m, c, a, b]) for c, a, b in
            np.ndindex(3, 3, 3))
        v = acc * Fraction(float(xs.item())) * Fraction(float(ws[0, m, 0, 0])) / Fraction(
            float(os_.item()))
        assert int(got[0, m, i, j]) == _requant(v, 128, np.uint8), (m, i, j)


@pytest.mark.parametrize("t", [np.uint8, np.int16, np.uint32, np.int32])
def test_matrix_multiply_integer_to_float_within_one_ulp_of_exact(t):
    rng = np.random.default_rng(3)
    info = np.iinfo(t)
    a = rng.integers(max(info.min, -2**20), min(info.max, 2**20) + 1, (1, 1, 4, 6)).astype(t)
    b = rng.integers(max(info.min, -2**20), min(info.max, 2**20) + 1, (1, 1, 6, 3)).astype(t)
    az, bz = a[:, :, :, :1].copy(), b[:, :, :1, :].copy()
    a_s = np.float32(rng.uniform(0.01, 1, (1, 1, 4, 1)))
    b_s = np.float32(rng.uniform(0.01, 1, (1, 1, 1, 3)))
    desc = dml.operator_desc("MATRIX_MULTIPLY_INTEGER_TO_FLOAT", ATensor=a, AScaleTensor=a_s,
                             AZeroPointTensor=az, BTensor=b, BScaleTensor=b_s,
                             BZeroPointTensor=bz)
    got = dml.run(desc, a, a_s, az, b, b_s, bz, None)
    for i, j in np.ndindex(4, 3):
        acc = sum((int(a[0, 0, i, k]) - int(az[0, 0, i, 0])) * (int(b[0, 0, k, j]) -
                                                                int(bz[0, 0, 0, j]))
                  for k in range(6))
        exact = acc * Fraction(float(a_s[0, 0, i, 0])) * Fraction(float(b_s[0, 0, 0, j]))
        want = np.float32(float(exact))
        assert abs(int(got[0, 0, i, j].view(np.int32)) - int(want.view(np.int32))) <= 1, (i, j)


def test_dynamic_quantize_linear_follows_the_page_formula():
    rng = np.random.default_rng(2)
    x = np.float32(rng.normal(3, 2, (4, 8)))
    desc = dml.operator_desc("DYNAMIC_QUANTIZE_LINEAR", InputTensor=x,
                             OutputTensor=np.zeros((4, 8), np.int8),
                             OutputScaleTensor=np.zeros((1, 1), np.float32),
                             OutputZeroPointTensor=np.zeros((1, 1), np.int8))
    y, scale, zp = dml.run(desc, x)
    f32 = np.float32  # every step a float32 operation, as DirectML computes FLOAT32
    want_scale = (x.max() - x.min()) / f32(255)
    assert scale.item() == want_scale
    want_zp = _requant(Fraction(float(f32(-128) - x.min() / want_scale)), 0, np.int8)
    assert int(zp.item()) == want_zp
    for v, q in zip(x.reshape(-1), y.reshape(-1)):
        assert int(q) == _requant(Fraction(float(v / want_scale)), want_zp, np.int8)


def test_blocked_quantize_then_dequantize_round_trips_within_half_a_scale():
    rng = np.random.default_rng(4)
    x = np.float32(rng.normal(0, 3, (4, 6)))
    scale = np.float32(rng.uniform(0.05, 0.1, (2, 3)))  # blocks of 2 x 2
    zp = _rand(rng, np.int8, (2, 3)) // 4
    q_desc = dml.operator_desc("QUANTIZE", InputTensor=x, QuantizationType=2,
                               QuantizationTensors=[scale, zp],
                               OutputTensor=np.zeros((4, 6), np.int8))
    q = dml.run(q_desc, x, scale, zp)
    for (i, j), v in np.ndenumerate(x):
        s, z = scale[i // 2, j // 2], zp[i // 2, j // 2]
        assert int(q[i, j]) == _requant(Fraction(float(v)) / Fraction(float(s)), z, np.int8)
    d_desc = dml.operator_desc("DEQUANTIZE", InputTensor=q, QuantizationType=2,
                               QuantizationTensors=[scale, zp],
                               OutputTensor=np.zeros((4, 6), np.float32))
    back = dml.run(d_desc, q, scale, zp)
    inside = (q > -128) & (q < 127)
    bound = np.kron(scale, np.ones((2, 2))) / 2 * (1 + 2**-20)
    assert np.all(np.abs(back - x)[inside] <= bound[inside])


def _create_fails(desc, hresult=dml.E_INVALIDARG):
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    with pytest.raises(dml.HResultError) as e:
        dml.DMLCreateDevice(d3d, 0).CreateOperator(desc)
    assert e.value.hresult == hresult, e.value
    return e.value.message


def test_quantize_misuses_name_the_field():
    x = np.zeros((4, 6), np.float32)
    msg = _create_fails(dml.operator_desc(
        "QUANTIZE", InputTensor=x, QuantizationType=2,
        QuantizationTensors=[np.ones((1, 6), np.float32)], OutputTensor=np.zeros((4, 6),
                                                                                 np.int8)))
    assert "QuantizationTensorCount is 1 but QuantizationType 2 takes 2 tensor(s)" in msg
    msg = _create_fails(dml.operator_desc(
        "QUANTIZE", InputTensor=x, QuantizationType=1,
        QuantizationTensors=[np.ones((1, 4), np.float32)], OutputTensor=np.zeros((4, 6),
                                                                                 np.int8)))
    assert "QuantizationTensors[0] (Scale).Sizes[1] is 4; it must be 1, InputTensor.Sizes[1] " \
        "= 6 or a divisor of it (blocks)" in msg


def test_quantized_linear_convolution_bias_must_be_per_channel():
    one = np.ones((1, 1, 1, 1))
    msg = _create_fails(dml.operator_desc(
        "QUANTIZED_LINEAR_CONVOLUTION", InputTensor=np.zeros((1, 1, 3, 3), np.int8),
        InputScaleTensor=np.float32(one), FilterTensor=np.zeros((2, 1, 1, 1), np.int8),
        FilterScaleTensor=np.float32(one), BiasTensor=np.zeros((1, 1, 1, 1), np.int32),
        OutputScaleTensor=np.float32(one), OutputZeroPointTensor=np.int8(one),
        OutputTensor=np.zeros((1, 2, 3, 3), np.int8), DimensionCount=2, Strides=(1, 1),
        Dilations=(1, 1), StartPadding=(0, 0), EndPadding=(0, 0), GroupCount=1))
    assert "BiasTensor.Sizes is [1, 1, 1, 1]; it must be [1, 2, 1, 1]" in msg

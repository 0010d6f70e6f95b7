"""Targeted semantics of the logical, bitwise, IF, quantization and CLIP1/CLIP_GRAD operators.

Each test runs one operator through ``dmlsim.run`` (the whole faithful path) and checks the
exact bits a reader can derive from the operator's page, or the exact HRESULT of a desc
the page forbids. Where a page is silent the expected value is dmlsim's documented choice
(see the operator module's docstring).
"""
from __future__ import annotations

import numpy as np
import pytest

import dmlsim as dml
from helpers import assert_bits_equal, feature_level

F16, F32, I8, I32, I64 = np.float16, np.float32, np.int8, np.int32, np.int64
U8, U16, U32, U64 = np.uint8, np.uint16, np.uint32, np.uint64
NAN, INF = np.nan, np.inf


def full(op):
    return "DML_OPERATOR_" + (op if op.startswith("ELEMENT_WISE_") else "ELEMENT_WISE_" + op)


def run(op, *arrays, **fields):
    return dml.run(dml.operator_desc(full(op), **fields), *arrays)


def invalid(op, **fields):
    with pytest.raises(dml.HResultError) as e:
        dml.run(dml.operator_desc(full(op), **fields))  # CreateOperator raises first
    assert e.value.hresult == dml.E_INVALIDARG, e.value
    assert str(e.value).startswith(full(op)), str(e.value)
    return str(e.value)


def binary(op, a, b, out_dtype):
    out = np.zeros(a.shape, out_dtype)
    return run(op, a, b, ATensor=a, BTensor=b, OutputTensor=out)


def union(value):
    u = dml.DML_SCALAR_UNION()
    u.Bytes = np.asarray(value).tobytes()
    return u


# ---- logical ----------------------------------------------------------------------------

@pytest.mark.parametrize("op, want", [("LOGICAL_EQUALS", [0, 0, 0, 1, 0]),
                                      ("LOGICAL_GREATER_THAN", [0, 0, 0, 0, 1]),
                                      ("LOGICAL_LESS_THAN", [0, 0, 0, 0, 0]),
                                      ("LOGICAL_GREATER_THAN_OR_EQUAL", [0, 0, 0, 1, 1])])
@pytest.mark.parametrize("dtype", [F32, F16])
def test_comparisons_with_nan_are_false_and_signed_zeros_equal(op, want, dtype):
    a = np.array([NAN, NAN, 1, -0.0, INF], dtype)
    b = np.array([NAN, 1, NAN, 0.0, 65504], dtype)
    assert_bits_equal(binary(op, a, b, U8), np.array(want, U8))


def test_64_bit_comparisons_are_exact_past_2_pow_53():
    a = np.array([2**53 + 1, -2**63, 2**62 + 1], I64)
    b = np.array([2**53, -2**63 + 1, 2**62], I64)
    assert_bits_equal(binary("LOGICAL_GREATER_THAN", a, b, U32), np.array([1, 0, 1], U32))
    assert_bits_equal(binary("LOGICAL_EQUALS", a, b, U8), np.array([0, 0, 0], U8))


@pytest.mark.parametrize("op, want", [("LOGICAL_AND", [1, 0, 1, 0]), ("LOGICAL_OR", [1, 1, 1, 0]),
                                      ("LOGICAL_XOR", [0, 1, 0, 0])])
def test_boolean_ops_treat_any_nonzero_as_true_and_write_0_or_1(op, want):
    a = np.array([2, 0x80, 0xFF, 0], U8)
    b = np.array([4, 0, 0x01, 0], U8)
    assert_bits_equal(binary(op, a, b, U8), np.array(want, U8))


def test_logical_not_of_any_nonzero_is_zero():
    x = np.array([0, 1, 0x80000000, 0xFFFFFFFF], U32)
    got = run("LOGICAL_NOT", x, InputTensor=x, OutputTensor=x)
    assert_bits_equal(got, np.array([1, 0, 0, 0], U32))


def test_logical_type_rules():
    a = np.zeros(4, F32)
    invalid("LOGICAL_EQUALS", ATensor=a, BTensor=a, OutputTensor=np.zeros(4, I8))  # table
    msg = invalid("LOGICAL_LESS_THAN", ATensor=a, BTensor=a.astype(F16),
                  OutputTensor=np.zeros(4, U8))
    assert "BTensor.DataType" in msg
    u = np.zeros(4, U8)
    msg = invalid("LOGICAL_AND", ATensor=u, BTensor=u, OutputTensor=np.zeros(4, U32))
    assert "OutputTensor.DataType" in msg
    invalid("LOGICAL_OR", ATensor=a, BTensor=a, OutputTensor=a)  # table: UINT8/UINT32 only


# ---- IF ---------------------------------------------------------------------------------

def test_if_selects_a_for_any_nonzero_condition_bit_for_bit():
    cond = np.array([0, 1, 2, 128, 255, 0], U8)
    a = np.array([0x7FC00123, 0x80000000, 0x00000001, 0xFF800000, 0x7F800001, 0], U32).view(F32)
    b = np.array([0xFFC00042, 0, 0, 0, 0, 0x80000000], U32).view(F32)
    got = run("IF", cond, a, b, ConditionTensor=cond, ATensor=a, BTensor=b, OutputTensor=a)
    want = np.array([0xFFC00042, 0x80000000, 1, 0xFF800000, 0x7F800001, 0x80000000], U32)
    assert_bits_equal(got.view(U32), want)  # NaN payloads, -0.0, denormals survive


def test_if_rules():
    a = np.zeros(3, F32)
    invalid("IF", ConditionTensor=np.zeros(3, I8), ATensor=a, BTensor=a, OutputTensor=a)
    msg = invalid("IF", ConditionTensor=np.zeros(3, U8), ATensor=a, BTensor=a.astype(F16),
                  OutputTensor=a)
    assert "BTensor.DataType" in msg
    invalid("IF", ConditionTensor=np.zeros(4, U8), ATensor=a, BTensor=a, OutputTensor=a)


# ---- bitwise ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [U8, U16, U32, U64])
def test_shift_by_width_or_more_is_zero(dtype):
    w = np.dtype(dtype).itemsize * 8
    top = np.array(1, dtype) << np.array(w - 1, dtype)
    a = np.array([1, 1, 1, top, top, np.iinfo(dtype).max], dtype)
    b = np.array([w - 1, w, w + 1, w - 1, w, np.iinfo(dtype).max], dtype)
    assert_bits_equal(binary("BIT_SHIFT_LEFT", a, b, dtype), np.array([top, 0, 0, 0, 0, 0], dtype))
    assert_bits_equal(binary("BIT_SHIFT_RIGHT", a, b, dtype), np.array([0, 0, 0, 1, 0, 0], dtype))


def test_shift_rules():
    invalid("BIT_SHIFT_LEFT", ATensor=np.zeros(2, I32), BTensor=np.zeros(2, I32),
            OutputTensor=np.zeros(2, I32))  # unsigned only
    with feature_level("4_0"):
        invalid("BIT_SHIFT_RIGHT", ATensor=np.zeros(2, U64), BTensor=np.zeros(2, U64),
                OutputTensor=np.zeros(2, U64))  # UINT64 from FL 4_1
    invalid("BIT_SHIFT_LEFT", ATensor=np.zeros(2, U8), BTensor=np.zeros(2, U16),
            OutputTensor=np.zeros(2, U8))


def test_bitwise_ops_work_on_float_encodings():
    a = np.array([0x7FC00123, 0x80000000, 0x3F800000], U32).view(F32)
    b = np.array([0x7FFFFF00, 0x7FFFFFFF, 0x80000000], U32).view(F32)
    assert_bits_equal(binary("BIT_AND", a, b, F32).view(U32),
                      np.array([0x7FC00100, 0, 0], U32))
    assert_bits_equal(binary("BIT_XOR", a, b, F32).view(U32),
                      np.array([0x003FFE23, 0xFFFFFFFF, 0xBF800000], U32))
    x = np.array([0x0000, 0x7C00, 0x8001], U16).view(F16)
    got = run("BIT_NOT", x, InputTensor=x, OutputTensor=x)
    assert_bits_equal(got.view(U16), np.array([0xFFFF, 0x83FF, 0x7FFE], U16))


def test_bit_count_types():
    x = np.array([0xFFFFFFFFFFFFFFFF, 0x8000000000000001, 0], U64).view(np.float64)
    got = run("BIT_COUNT", x, InputTensor=x, OutputTensor=np.zeros(3, U8))
    assert_bits_equal(got, np.array([64, 2, 0], U8))
    invalid("BIT_COUNT", InputTensor=np.zeros(2, U8), OutputTensor=np.zeros(2, U16))
    with feature_level("4_0"):
        invalid("BIT_COUNT", InputTensor=np.zeros(2, F32), OutputTensor=np.zeros(2, U32))


# ---- quantization -----------------------------------------------------------------------

def quantize(x, scale, zp=None, out=U8, scale_strides=None, zp_strides=None):
    s = dml.tensor_desc(np.dtype(scale.dtype), sizes=x.shape, strides=scale_strides)
    fields = dict(InputTensor=x, ScaleTensor=s, OutputTensor=np.zeros(x.shape, out))
    if zp is not None:
        fields["ZeroPointTensor"] = dml.tensor_desc(np.dtype(zp.dtype), sizes=x.shape,
                                                    strides=zp_strides)
    return run("ELEMENT_WISE_QUANTIZE_LINEAR", x, scale, zp, **fields)


def test_quantize_rounds_half_to_even_then_saturates():
    x = np.arange(-4.5, 5.0, 1.0, dtype=F32)  # -4.5 .. 4.5, every element a tie
    got = quantize(x, np.float32(1.0), out=I8, scale_strides=[0])
    assert_bits_equal(got, np.array([-4, -4, -2, -2, 0, 0, 2, 2, 4, 4], I8))
    x = np.array([254.5, 255.5, -0.5, -0.6, 1e30, -INF, NAN], F32)
    got = quantize(x, np.float32(1.0), np.uint8(0), scale_strides=[0], zp_strides=[0])
    assert_bits_equal(got, np.array([254, 255, 0, 0, 255, 0, 0], U8))


def test_quantize_per_tensor_and_per_channel_scale_via_strides():
    x = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], F32)
    got = quantize(x, np.float32(0.5), np.uint8(100), scale_strides=[0, 0], zp_strides=[0, 0])
    assert_bits_equal(got, np.array([[102, 104, 106], [102, 104, 106]], U8))
    # per row: scale [[0.5], [2.0]] broadcast along the columns (strides [1, 0])
    got = quantize(x, np.array([[0.5], [2.0]], F32), np.array([[0], [10]], U8),
                   scale_strides=[1, 0], zp_strides=[1, 0])
    assert_bits_equal(got, np.array([[2, 4, 6], [10, 11, 12]], U8))  # 0.5 -> 0, 1.5 -> 2


def test_quantize_float16_scale_and_optional_zero_point_by_feature_level():
    x = np.array([0.75, -0.75, 1000.0], F16)
    with feature_level("6_0"):
        assert_bits_equal(quantize(x, np.float16(0.5), np.int8(0), out=I8, scale_strides=[0],
                                   zp_strides=[0]), np.array([2, -2, 127], I8))
        invalid("ELEMENT_WISE_QUANTIZE_LINEAR", InputTensor=x, ScaleTensor=x,
                OutputTensor=np.zeros(3, I8))  # ZeroPointTensor required before 6_2
    with feature_level("6_2"):
        assert_bits_equal(quantize(x, np.float16(0.5), out=I8, scale_strides=[0]),
                          np.array([2, -2, 127], I8))
    with feature_level("5_0"):
        invalid("ELEMENT_WISE_QUANTIZE_LINEAR", InputTensor=x, ScaleTensor=x,
                ZeroPointTensor=np.zeros(3, I8), OutputTensor=np.zeros(3, I8))


def test_quantize_type_rules():
    x32, z = np.zeros(3, F32), np.zeros(3, U8)
    msg = invalid("ELEMENT_WISE_QUANTIZE_LINEAR", InputTensor=x32, ScaleTensor=x32.astype(F16),
                  ZeroPointTensor=z, OutputTensor=z)
    assert "ScaleTensor.DataType" in msg
    invalid("ELEMENT_WISE_QUANTIZE_LINEAR", InputTensor=np.zeros(3, I32),
            ScaleTensor=np.zeros(3, F16), ZeroPointTensor=z, OutputTensor=z)
    msg = invalid("ELEMENT_WISE_QUANTIZE_LINEAR", InputTensor=x32, ScaleTensor=x32,
                  ZeroPointTensor=np.zeros(3, I8), OutputTensor=z)
    assert "ZeroPointTensor.DataType" in msg or "OutputTensor.DataType" in msg
    invalid("ELEMENT_WISE_QUANTIZE_LINEAR", InputTensor=x32, ScaleTensor=np.zeros(2, F32),
            ZeroPointTensor=z, OutputTensor=z)


def test_dequantize_does_not_wrap_and_broadcasts_by_strides():
    x = np.array([2**31 - 1, -2**31, 5], I32)
    s = dml.tensor_desc(np.dtype(F32), sizes=[3], strides=[0])
    zp = np.array([-2**31, 2**31 - 1, 5], I32)
    got = run("ELEMENT_WISE_DEQUANTIZE_LINEAR", x, np.float32(0.5), zp, InputTensor=x,
              ScaleTensor=s, ZeroPointTensor=zp, OutputTensor=np.zeros(3, F32))
    assert_bits_equal(got, np.array([2147483648.0, -2147483648.0, 0.0], F32))
    with feature_level("6_0"):
        invalid("ELEMENT_WISE_DEQUANTIZE_LINEAR", InputTensor=x, ScaleTensor=np.zeros(3, F32),
                OutputTensor=np.zeros(3, F32))
    invalid("ELEMENT_WISE_DEQUANTIZE_LINEAR", InputTensor=x, ScaleTensor=np.zeros(3, F16),
            OutputTensor=np.zeros(3, F32))


def test_quantized_linear_add_with_broadcast_scalars():
    a = np.array([[0, 100, 255], [1, 3, 5]], U8)
    b = np.array([[0, 0, 255], [0, 0, 0]], U8)
    one = lambda dt: dml.tensor_desc(np.dtype(dt), sizes=[1, 1])  # noqa: E731
    bcast = lambda dt: dml.tensor_desc(np.dtype(dt), sizes=[2, 3], strides=[0, 0])  # noqa: E731
    got = run("ELEMENT_WISE_QUANTIZED_LINEAR_ADD", a, np.float32(0.5), np.uint8(1), b,
              np.float32(1.0), None, np.float32(1.0), np.int8(-10),
              ATensor=a, AScaleTensor=one(F32), AZeroPointTensor=bcast(U8), BTensor=b,
              BScaleTensor=bcast(F32), OutputScaleTensor=one(F32),
              OutputZeroPointTensor=one(I8), OutputTensor=np.zeros((2, 3), I8))
    # A: -0.5, 49.5, 127; B: 0, 0, 255 -> -0.5 -> -0, 49.5 -> 50 (even), 382 -> 127 after -10
    assert_bits_equal(got, np.array([[-10, 40, 127], [-10, -9, -8]], I8))


def test_quantized_linear_add_rules():
    a, s = np.zeros((2, 3), U8), np.zeros((1, 1), F32)
    base = dict(ATensor=a, AScaleTensor=s, BTensor=a, BScaleTensor=s, OutputScaleTensor=s,
                OutputTensor=a)
    qla = "ELEMENT_WISE_QUANTIZED_LINEAR_ADD"
    msg = invalid(qla, **{**base, "BScaleTensor": np.zeros((1, 3), F32)})  # 3 values
    assert "BScaleTensor must hold one element" in msg
    invalid(qla, **{**base, "AScaleTensor": np.zeros(1, F32)})  # DimensionCount 1, not 2
    invalid(qla, **{**base, "AZeroPointTensor": np.zeros((1, 1), I8)})  # ATensor is UINT8
    invalid(qla, **{**base, "BTensor": np.zeros((2, 2), U8)})  # Sizes differ from ATensor


# ---- CLIP1 / CLIP_GRAD / CLIP_GRAD1 --------------------------------------------------------

def clip1(x, lo, hi, dtype=None, scale_bias=None, out=None):
    dt = dml.DML_TENSOR_DATA_TYPE(dml.tensor_desc(x).Desc.DataType) if dtype is None else dtype
    fields = dict(InputTensor=x, OutputTensor=x if out is None else out, MinMaxDataType=dt,
                  Min=lo, Max=hi)
    if scale_bias is not None:
        fields["ScaleBias"] = scale_bias
    return run("ELEMENT_WISE_CLIP1", x, **fields)


def test_clip1_reads_the_union_by_minmax_data_type():
    x = np.array([2**64 - 1, 2**63, 5], U64)
    assert_bits_equal(clip1(x, union(np.uint64(6)), union(np.uint64(2**64 - 2))),
                      np.array([2**64 - 2, 2**63, 6], U64))
    h = np.array([-1.0, 0.5, 2.0], F16)
    lo, hi = dml.DML_SCALAR_UNION(), dml.DML_SCALAR_UNION()
    lo.UInt16, hi.UInt16 = 0x0000, 0x3C00  # half bits: 0.0 and 1.0
    hi.Float32 = 1.0  # bytes 0x3F800000: the low two bytes are 0x0000, the half +0.0
    assert_bits_equal(clip1(h, lo, hi), np.array([0.0, 0.0, 0.0], F16))
    hi.UInt16 = 0x3C00
    assert_bits_equal(clip1(h, lo, hi), np.array([0.0, 0.5, 1.0], F16))


def test_clip1_nan_signed_zero_and_scale_bias():
    # HLSL max/min, as ELEMENT_WISE_CLIP: min(NaN, Max) = Max; max(+0.0, -0.0) = +0.0
    x = np.array([NAN, -0.0, -5.0, 5.0, 0.25], F32)
    got = clip1(x, union(np.float32(0.0)), union(np.float32(0.5)))
    assert_bits_equal(got.view(U32), np.array([0x3F000000, 0, 0, 0x3F000000, 0x3E800000], U32))
    got = clip1(x, union(np.float32(-0.0)), union(np.float32(0.5)))
    assert_bits_equal(got.view(U32)[:2], np.array([0x3F000000, 0x80000000], U32))
    i = np.array([-100, 0, 100], I8)
    got = clip1(i, union(np.int8(-50)), union(np.int8(50)), scale_bias=(0.5, 0.75))
    assert_bits_equal(got, np.array([-49, 0, 50], I8))  # -49.25 -> -49, 0.75 -> 0, 50.75 -> 50


def test_clip1_minmax_type_must_match_output():
    x = np.zeros(2, F32)
    msg = invalid("ELEMENT_WISE_CLIP1", InputTensor=x, OutputTensor=x,
                  MinMaxDataType=dml.DML_TENSOR_DATA_TYPE_FLOAT16, Min=union(np.float16(0)),
                  Max=union(np.float16(1)))
    assert "MinMaxDataType" in msg


def test_clip_grad_boundaries_are_inclusive():
    x = np.array([0.0, np.float32(0.1), 0.1000001, 0.99, 1.0, NAN], F32)
    g = np.array([1, 2, 3, 4, 5, 6], F32)
    got = run("ELEMENT_WISE_CLIP_GRAD", x, g, InputTensor=x, InputGradientTensor=g,
              OutputGradientTensor=g, Min=0.1, Max=1.0)  # Min is the float32 nearest 0.1
    assert_bits_equal(got, np.array([0, 0, 3, 4, 0, 6], F32))
    i = np.array([-2**63, -1, 0, 1, 2, 2**63 - 1], I64)
    gi = np.arange(1, 7, dtype=I64)
    got = run("ELEMENT_WISE_CLIP_GRAD", i, gi, InputTensor=i, InputGradientTensor=gi,
              OutputGradientTensor=gi, Min=-0.5, Max=1.5)  # x <= -1 or x >= 2
    assert_bits_equal(got, np.array([0, 0, 3, 4, 0, 0], I64))


def test_clip_grad1_typed_bounds():
    x = np.array([-2**63, -2**63 + 1, -2**63 + 2, 0, 2**63 - 3, 2**63 - 2, 2**63 - 1], I64)
    g = np.full(7, 7, I64)
    got = run("ELEMENT_WISE_CLIP_GRAD1", x, g, InputTensor=x, InputGradientTensor=g,
              OutputGradientTensor=g, MinMaxDataType=dml.DML_TENSOR_DATA_TYPE_INT64,
              Min=union(np.int64(-2**63 + 1)), Max=union(np.int64(2**63 - 2)))
    assert_bits_equal(got, np.array([0, 0, 7, 7, 7, 0, 0], I64))  # through a double, +-2 is lost
    msg = invalid("ELEMENT_WISE_CLIP_GRAD1", InputTensor=x, InputGradientTensor=g,
                  OutputGradientTensor=g, MinMaxDataType=dml.DML_TENSOR_DATA_TYPE_INT32,
                  Min=union(np.int32(0)), Max=union(np.int32(1)))
    assert "OutputGradientTensor.DataType" in msg


def _nonzero(level, in_sizes, cnt_sizes, coord_sizes, x):
    """NONZERO_COORDINATES compiled on a device of ``level`` with the given output sizes."""
    td = dml.tensor_desc
    with feature_level(level):
        dev = dml.DMLCreateDevice(dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0), 0)
    d = dml.DML_NONZERO_COORDINATES_OPERATOR_DESC(td(np.float32, in_sizes), td(U32, cnt_sizes),
                                                 td(U32, coord_sizes))
    c = dev.CompileOperator(dev.CreateOperator(
        dml.DML_OPERATOR_DESC(dml.DML_OPERATOR_NONZERO_COORDINATES, d)), 0)
    return dml.run_compiled(c, [td(np.float32, in_sizes)],
                            [td(U32, cnt_sizes), td(U32, coord_sizes)], [x], device=dev)


def test_nonzero_coordinates_takes_any_ranks_from_4_0_as_onnx_runtime_binds_them():
    """The 4_0 tables: OutputCountTensor 1-8 dims (sizes all 1), OutputCoordinatesTensor 2-8
    dims ({..., 1, M, N}); ONNX Runtime's DML provider binds {1} and {M, rank}."""
    x = np.array([[1, 0, 2], [0, 3, 0]], np.float32)
    cnt, coords = _nonzero(0x4000, [2, 3], [1], [6, 2], x)
    assert_bits_equal(cnt, np.array([3], U32))
    assert_bits_equal(coords, np.array([[0, 0], [0, 2], [1, 1], [0, 0], [0, 0], [0, 0]], U32))
    cnt, coords = _nonzero(0x6400, [2, 3], [1, 1, 1], [1, 1, 6, 2], x)  # other ranks, same rule
    assert_bits_equal(cnt.reshape(-1), np.array([3], U32))
    with pytest.raises(dml.HResultError) as err:  # a leading size that is not 1
        _nonzero(0x6400, [2, 3], [1], [2, 6, 2], x)
    assert err.value.hresult == dml.E_INVALIDARG and "OutputCoordinatesTensor" in str(err.value)


def test_nonzero_coordinates_keeps_the_3_0_ranks_below_4_0():
    x = np.zeros((1, 1, 2, 3), np.float32)
    with pytest.raises(dml.HResultError) as err:  # 3_0: 4-5 dims, tied to the input's
        _nonzero(0x3000, [1, 1, 2, 3], [1], [1, 1, 6, 2], x)
    assert err.value.hresult == dml.E_INVALIDARG
    cnt, _ = _nonzero(0x3000, [1, 1, 2, 3], [1, 1, 1, 1], [1, 1, 6, 2], x)
    assert_bits_equal(cnt.reshape(-1), np.array([0], U32))

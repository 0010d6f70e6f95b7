"""Targeted tests of the element-wise math operators' tricky semantics.

The generic suites run every Example and compare every kernel with its float64 reference on
random inputs; these pin down, with values a reader can check by hand or against Python's own
integer arithmetic: integer DIVIDE and both MODULUS flavours with negative operands for every
integer type, the three DML_ROUNDING_MODE values on ties, the NaN choices of MAX/MIN/CLIP/
THRESHOLD/POW, FLOAT16's single rounding versus DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_
COMPUTATION, exact integer POW, CLIP's bound casts, ADD1's fused activation, and
support-table / constraint rejections at lower feature levels.
"""
from __future__ import annotations

import numpy as np
import pytest

import dmlsim as dml

from helpers import assert_bits_equal, assert_float_close, feature_level

HALF = dml.DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION
NAN, INF = np.nan, np.inf


def run(op, flags=0, **fields):
    """Run ``op`` with ``fields`` (input tensors as arrays, OutputTensor as an array giving its
    type and shape, attributes) and return the output."""
    inputs = [v for k, v in fields.items() if isinstance(v, np.ndarray) and k != "OutputTensor"]
    return dml.run(dml.operator_desc(op, **fields), *inputs, flags=flags)


def binary(op, a, b, dtype, out=None, flags=0):
    a, b = np.array(a, dtype), np.array(b, dtype)
    return run(op, flags, ATensor=a, BTensor=b, OutputTensor=np.zeros(a.shape, out or dtype))


# ---- integer division and modulus, per integer type -------------------------------------------

SIGNED = [np.int8, np.int16, np.int32, np.int64]
UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]


def _trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _wrap(v, dtype):
    bits = np.iinfo(dtype).bits
    v %= 2**bits
    return v - 2**bits if np.iinfo(dtype).min < 0 and v >= 2**(bits - 1) else v


@pytest.mark.parametrize("dtype", SIGNED + UNSIGNED, ids=lambda t: np.dtype(t).name)
def test_integer_divide_and_modulus_with_negative_operands(dtype):
    info = np.iinfo(dtype)
    if info.min < 0:
        a = [7, -7, 7, -7, 1, -1, info.min, info.min, info.max, 9, -9]
        b = [2, 2, -2, -2, -3, 3, -1, 3, -7, 0, 0]
    else:
        a = [7, info.max, info.max, 1, 9, 0]
        b = [2, 2, info.max - 1, 3, 0, 0]
    # Python's own integers are the oracle: // floors and % takes the divisor's sign.
    div = [_wrap(_trunc_div(x, y), dtype) if y else (-1 if info.min < 0 else info.max)
           for x, y in zip(a, b)]
    trunc = [x - y * _trunc_div(x, y) if y else x for x, y in zip(a, b)]
    floor = [x % y if y else x for x, y in zip(a, b)]
    got = binary("ELEMENT_WISE_DIVIDE", a, b, dtype)
    assert_bits_equal(got, np.array(div, dtype), "DIVIDE")
    assert_bits_equal(binary("ELEMENT_WISE_MODULUS_TRUNCATE", a, b, dtype),
                      np.array(trunc, dtype), "MODULUS_TRUNCATE")
    assert_bits_equal(binary("ELEMENT_WISE_MODULUS_FLOOR", a, b, dtype),
                      np.array(floor, dtype), "MODULUS_FLOOR")
    if info.min < 0:  # the hand-checkable cases, spelled out
        assert list(got[:4]) == [3, -3, -3, 3] and got[6] == info.min and got[9] == -1
        assert list(binary("ELEMENT_WISE_MODULUS_TRUNCATE", a[:4], b[:4], dtype)) == [1, -1, 1, -1]
        assert list(binary("ELEMENT_WISE_MODULUS_FLOOR", a[:4], b[:4], dtype)) == [1, 1, -1, -1]


def test_float_modulus_flavours_and_exactness():
    a = [5.5, -5.5, 5.5, -5.5, -4.0, 4.0, 1e30, -1e-30, 5.0, -5.0, INF, 3.0]
    b = [2.0, 2.0, -2.0, -2.0, 2.0, -2.0, 3.0, 1.0, INF, INF, 2.0, 0.0]
    got_t = binary("ELEMENT_WISE_MODULUS_TRUNCATE", a, b, np.float32)
    got_f = binary("ELEMENT_WISE_MODULUS_FLOOR", a, b, np.float32)
    f = np.float32(1e30)
    r = float(int(f) % 3)  # 1e30 as a float32 is an exact integer: its remainder is exact
    want_t = [1.5, -1.5, 1.5, -1.5, -0.0, 0.0, r, -1e-30, 5.0, -5.0, NAN, NAN]
    want_f = [1.5, 0.5, -0.5, -1.5, 0.0, -0.0, r, 1.0, 5.0, INF, NAN, NAN]
    assert_float_close(got_t, np.array(want_t, np.float32), 0, "fmod")
    assert_float_close(got_f, np.array(want_f, np.float32), 0, "Python %")
    py = [x % y if y and np.isfinite(x) else NAN for x, y in zip(
        np.float32(a).tolist(), np.float32(b).tolist())]
    assert_float_close(got_f, np.array(py, np.float32), 0, "same as Python's float %")


# ---- ROUND -------------------------------------------------------------------------------------

TIES = [-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -0.25, 0.75]
ROUND_CASES = {
    0: [-4, -2, -2, -0.0, 0, 2, 2, 4, -0.0, 1],  # halves to nearest even
    1: [-3, -2, -1, -0.0, 0, 1, 2, 3, -0.0, 0],  # toward zero
    2: [-4, -3, -2, -1, 1, 2, 3, 4, -0.0, 1],    # halves away from zero ("toward infinity")
}


@pytest.mark.parametrize("mode", [0, 1, 2], ids=["NEAREST_EVEN", "TOWARD_ZERO", "TOWARD_INFINITY"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_round_modes_on_ties(mode, dtype):
    x = np.array(TIES, dtype)
    got = run("ELEMENT_WISE_ROUND", InputTensor=x, OutputTensor=x, RoundingMode=mode)
    assert_float_close(got, np.array(ROUND_CASES[mode], dtype), 0, f"mode {mode}")


def test_round_rejects_an_unknown_mode():
    x = np.zeros(4, np.float32)
    with pytest.raises(dml.HResultError) as e:
        run("ELEMENT_WISE_ROUND", InputTensor=x, OutputTensor=x, RoundingMode=3)
    assert e.value.hresult == dml.E_INVALIDARG
    assert "DML_OPERATOR_ELEMENT_WISE_ROUND: RoundingMode is 3" in str(e.value)


# ---- NaN choices ---------------------------------------------------------------------------------

def test_max_min_ignore_a_single_nan_in_either_position():
    a, b = [NAN, 1.0, NAN, -0.0, 0.0], [1.0, NAN, NAN, 0.0, -0.0]
    for dtype in (np.float32, np.float16):
        assert_float_close(binary("ELEMENT_WISE_MAX", a, b, dtype),
                           np.array([1, 1, NAN, 0.0, 0.0], dtype), 0, "MAX")
        assert_float_close(binary("ELEMENT_WISE_MIN", a, b, dtype),
                           np.array([1, 1, NAN, -0.0, -0.0], dtype), 0, "MIN")


def test_clip_and_threshold_follow_the_page_nesting_with_nan():
    x = np.array([NAN, -INF, INF, 2.0], np.float32)
    got = run("ELEMENT_WISE_CLIP", InputTensor=x, OutputTensor=x, Min=-1.0, Max=1.0)
    assert_float_close(got, np.float32([1.0, -1.0, 1.0, 1.0]), 0, "max(Min, min(NaN, Max))")
    got = run("ELEMENT_WISE_THRESHOLD", InputTensor=x, OutputTensor=x, Min=-1.0)
    assert_float_close(got, np.float32([-1.0, -1.0, INF, 2.0]), 0, "max(NaN, Min)")


def test_pow_nan_cases_follow_c_pow():
    x = np.float32([NAN, NAN, 1.0, -2.0, -2.0, 2.0])
    e = np.float32([0.0, 1.0, NAN, 2.0, 2.5, NAN])
    got = run("ELEMENT_WISE_POW", InputTensor=x, ExponentTensor=e, OutputTensor=x)
    assert_float_close(got, np.float32([1.0, NAN, 1.0, 4.0, NAN, NAN]), 0, "POW")


# ---- FLOAT16: one rounding, unless half precision is allowed ----------------------------------

def test_float16_rounds_once_unless_half_precision_is_allowed():
    big = np.float16([65504.0])
    assert binary("ELEMENT_WISE_MEAN", big, big, np.float16)[0] == 65504  # sum in float32
    assert np.isinf(binary("ELEMENT_WISE_MEAN", big, big, np.float16, flags=HALF)[0])
    a, b = np.float16([1.0009765625]), np.float16([-0.00048828125])
    # exact (a - b)^2 = 1.00293183... rounds once to 1 + 3 * 2^-10; in half precision a - b
    # first rounds (tie) to 1 + 2^-9, and its square to 1 + 2^-8.
    assert binary("ELEMENT_WISE_DIFFERENCE_SQUARE", a, b, np.float16)[0] == 1.0029296875
    assert binary("ELEMENT_WISE_DIFFERENCE_SQUARE", a, b, np.float16, flags=HALF)[0] == 1.00390625


# ---- POW, CLIP bounds, ADD1 ----------------------------------------------------------------------

def test_integer_pow_is_exact_and_wraps():
    x, e = np.uint32([3, 2, 0, 1, 7]), np.uint32([40, 32, 0, 4000000000, 1])
    got = run("ELEMENT_WISE_POW", InputTensor=x, ExponentTensor=e, OutputTensor=x)
    assert_bits_equal(got, np.uint32([pow(3, 40, 2**32), 0, 1, 1, 7]), "UINT32 pow")
    x, e = np.int16([-3, -3, -1, 2]), np.int16([9, 10, -32768, -1])
    got = run("ELEMENT_WISE_POW", InputTensor=x, ExponentTensor=e, OutputTensor=x)
    assert_bits_equal(got, np.int16([_wrap((-3)**9, np.int16), _wrap(3**10, np.int16), 1, 0]),
                      "INT16 pow")


def test_pow_with_mixed_types_needs_feature_level_3_0():
    x, e = np.int32([4, 2, -8, 0]), np.float32([0.5, -1.0, 1 / 3, -1.0])
    got = run("ELEMENT_WISE_POW", InputTensor=x, ExponentTensor=e, OutputTensor=x)
    # float step on an integer tensor: 2.0, 0.5 -> 0, NaN -> 0, inf saturates
    assert_bits_equal(got, np.int32([2, 0, 0, 2**31 - 1]), "int ^ float")
    with feature_level("2_1"):
        a, b = np.zeros((1, 1, 1, 2), np.float32), np.zeros((1, 1, 1, 2), np.float16)
        desc = dml.operator_desc("ELEMENT_WISE_POW", InputTensor=a, ExponentTensor=b,
                                 OutputTensor=a)
        _rejects(desc, "ExponentTensor.DataType is DML_TENSOR_DATA_TYPE_FLOAT16", "3_0")
        desc = dml.operator_desc("ELEMENT_WISE_POW", InputTensor=a, ExponentTensor=a,
                                 OutputTensor=a)
        _device().CreateOperator(desc)


def test_clip_bounds_are_cast_to_the_tensor_type():
    x = np.int16([-32768, -5, 0, 5, 32767])
    got = run("ELEMENT_WISE_CLIP", InputTensor=x, OutputTensor=x, Min=-4.99, Max=1e9)
    assert_bits_equal(got, np.int16([-4, -4, 0, 5, 32767]), "INT16: -4.99 -> -4, 1e9 saturates")
    x = np.float16([0.0, 0.3, 1.0])
    got = run("ELEMENT_WISE_CLIP", InputTensor=x, OutputTensor=x, Min=0.1, Max=0.2)
    assert_bits_equal(got, np.float16([0.1, 0.2, 0.2]), "FLOAT16: bounds round to halves")


def test_add1_applies_its_fused_activation_before_the_single_rounding():
    a, b = np.float32([-2.0, 1.5, -0.0]), np.float32([1.0, 1.0, 0.0])
    relu = dml.operator_desc("ACTIVATION_RELU")
    got = run("ELEMENT_WISE_ADD1", ATensor=a, BTensor=b, OutputTensor=a, FusedActivation=relu)
    assert_float_close(got, np.float32([0.0, 2.5, 0.0]), 0, "relu(a + b)")
    h = np.float16([65504.0])
    linear = dml.operator_desc("ACTIVATION_LINEAR", Alpha=0.5, Beta=0.0)
    got = run("ELEMENT_WISE_ADD1", ATensor=h, BTensor=h, OutputTensor=h, FusedActivation=linear)
    assert got[0] == 65504  # 131008 stays in float32 until the activation halves it


# ---- support tables and constraints ------------------------------------------------------------

def _device():
    return dml.DMLCreateDevice(dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0), 0)


def _rejects(desc, *fragments):
    with pytest.raises(dml.HResultError) as e:
        _device().CreateOperator(desc)
    assert e.value.hresult == dml.E_INVALIDARG
    for f in fragments:
        assert f in str(e.value), str(e.value)


def _desc(op, shape, dtype, out=None, **attrs):
    t = np.zeros(shape, dtype)
    o = np.zeros(shape, out or dtype)
    fields = {"InputTensor": t} if op not in BINARY else {"ATensor": t, "BTensor": t}
    return dml.operator_desc(op, OutputTensor=o, **fields, **attrs)


BINARY = {"ELEMENT_WISE_DIVIDE", "ELEMENT_WISE_ATAN_YX", "ELEMENT_WISE_SUBTRACT"}


def test_support_tables_reject_by_feature_level():
    with feature_level("3_0"):
        _rejects(_desc("ELEMENT_WISE_ATAN_YX", (2,), np.float32),
                 "introduced in DML_FEATURE_LEVEL_3_1")
    with feature_level("5_0"):
        _rejects(_desc("ELEMENT_WISE_DIVIDE", (2,), np.int8),
                 "DataType is DML_TENSOR_DATA_TYPE_INT8")
        _rejects(_desc("ELEMENT_WISE_NEGATE", (2,), np.uint8), "DML_TENSOR_DATA_TYPE_UINT8")
    with feature_level("5_1"):
        _device().CreateOperator(_desc("ELEMENT_WISE_DIVIDE", (2,), np.int8))
    with feature_level("4_0"):
        _rejects(_desc("ELEMENT_WISE_ABS", (2,), np.int64), "DML_TENSOR_DATA_TYPE_INT64")
    with feature_level("2_1"):
        _rejects(_desc("ELEMENT_WISE_SIN", (2, 3, 4), np.float32), "DimensionCount is 3")
        _device().CreateOperator(_desc("ELEMENT_WISE_SIN", (1, 2, 3, 4), np.float32))
    with feature_level("2_0"):
        _rejects(_desc("ELEMENT_WISE_ROUND", (1, 1, 1, 2), np.float32, RoundingMode=0),
                 "introduced in DML_FEATURE_LEVEL_2_1")


def test_constraints_beyond_the_tables():
    _rejects(_desc("ELEMENT_WISE_IS_NAN", (4,), np.float32, np.float32), "OutputTensor.DataType")
    _device().CreateOperator(_desc("ELEMENT_WISE_IS_NAN", (4,), np.float16, np.uint32))
    _rejects(_desc("ELEMENT_WISE_SUBTRACT", (4,), np.int32, np.uint32),
             "DML_OPERATOR_ELEMENT_WISE_SUBTRACT: OutputTensor.DataType")
    t, o = np.zeros(4, np.float32), np.zeros(5, np.float32)
    _rejects(dml.operator_desc("ELEMENT_WISE_EXP", InputTensor=t, OutputTensor=o),
             "DML_OPERATOR_ELEMENT_WISE_EXP: OutputTensor.Sizes is [5] but InputTensor gives [4]")
    _rejects(dml.operator_desc("ELEMENT_WISE_SQRT", InputTensor=t,
                               OutputTensor=np.zeros(4, np.float16)), "must match")


def _lanes_then_tree(terms):
    """NumPy's model of a FLOAT16 sum under ALLOW_HALF_PRECISION_COMPUTATION, written apart
    from the kernel: lanes of 32 consecutive terms added in order, then the lane sums added
    pairwise (halves: first + second), every sum rounded to FLOAT16 (float64 then float16:
    one rounding, exact for a sum of two FLOAT16 values)."""
    f16 = np.float16
    lanes = [terms[i:i + 32] for i in range(0, len(terms), 32)]
    sums = []
    for lane in lanes:
        acc = f16(lane[0])
        for t in lane[1:]:
            acc = f16(np.float64(acc) + np.float64(t))
        sums.append(acc)
    while len(sums) > 1:
        if len(sums) % 2:
            sums.append(f16(0))
        h = len(sums) // 2
        sums = [f16(np.float64(a) + np.float64(b)) for a, b in zip(sums[:h], sums[h:])]
    return sums[0]


@pytest.mark.parametrize("n", [5, 32, 100, 1000])
def test_half_precision_sums_are_lanes_then_a_tree_on_every_backend(n):
    """REDUCE SUM over FLOAT16 with ALLOW_HALF_PRECISION_COMPUTATION: the bits of the lane and
    tree order (the same on CPU and GPU: XLA's own FLOAT16 sum accumulates in float32 on
    GPUs); without the flag, float32 accumulation rounded once."""
    x = np.random.default_rng(n).uniform(0, 4, (3, n)).astype(np.float16)
    fields = dict(InputTensor=x, OutputTensor=np.zeros((3, 1), np.float16), Axes=[1],
                  Function=dml.DML_REDUCE_FUNCTION_SUM)
    half = run("REDUCE", HALF, **fields)
    want = np.array([[_lanes_then_tree(row)] for row in x], np.float16)
    assert half.tobytes() == want.tobytes()
    exact = run("REDUCE", 0, **fields)
    np.testing.assert_array_equal(exact, x.astype(np.float64).sum(1, keepdims=True)
                                  .astype(np.float32).astype(np.float16))

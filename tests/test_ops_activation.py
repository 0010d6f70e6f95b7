"""Targeted tests of the DML_OPERATOR_ACTIVATION_* family and of fused activations.

The generic suites run every Example and compare every kernel with its float64 reference;
these pin down what the pages single out: the softmax family's axes and the old operators'
effective-rank limit, hardmax ties, the exact (erf) GELU, RELU_GRAD at 0, SlopeTensor
broadcasting, feature levels of integer types, FusedActivation validation, and what
DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION changes.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import dmlsim as dml
from dmlsim._core import registry, validation
from dmlsim._core.dml import check_fused
from dmlsim._core.registry import KernelContext, apply_fused, apply_fused_reference
from dmlsim._schema.operators_generated import OPERATORS

from helpers import assert_bits_equal, assert_float_close, bits, feature_level, ulp_distance

BY_VALUE = {s["value"]: s for s in OPERATORS.values()}
f32 = np.float32


def run(name, x, flags=0, **attrs):
    desc = dml.operator_desc(name, InputTensor=x, OutputTensor=x, **attrs)
    return dml.run(desc, x, flags=flags)


def raises_invalid(fn, *needles):
    with pytest.raises(dml.HResultError) as e:
        fn()
    assert e.value.hresult == dml.E_INVALIDARG
    for n in needles:
        assert n in str(e.value), str(e.value)
    return str(e.value)


# ---- softmax family ----------------------------------------------------------------------

def np_softmax(x, axes):
    e = np.exp(x - x.max(axis=axes, keepdims=True))
    return e / e.sum(axis=axes, keepdims=True)


@pytest.mark.parametrize("axes", [(1,), (0, 2), (2, 0, 1)])
def test_softmax1_reduces_over_all_listed_axes(axes):
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(f32) * 3
    y = run("ACTIVATION_SOFTMAX1", x, Axes=axes)
    want = np_softmax(x.astype(np.float64), tuple(sorted(axes)))
    assert_float_close(y, want.astype(f32), 16)
    np.testing.assert_allclose(y.astype(np.float64).sum(axis=axes), 1.0, rtol=1e-6)
    log = run("ACTIVATION_LOG_SOFTMAX1", x, Axes=axes)
    assert_float_close(log, np.log(want).astype(f32), 16)


def test_the_1_operators_on_the_last_axis_equal_the_old_ones():
    x = np.random.default_rng(2).standard_normal((1, 1, 3, 5)).astype(f32)
    x[0, 0, 1, 1:3] = 9.0  # a tie for the hardmax
    for old in ("SOFTMAX", "LOG_SOFTMAX", "HARDMAX"):
        a = run(f"ACTIVATION_{old}", x)
        b = run(f"ACTIVATION_{old}1", x, Axes=(3,))
        assert_bits_equal(a, b, old)


def test_old_softmax_family_limits_the_effective_rank_to_2():
    ok = np.zeros((1, 1, 2, 4), f32)
    assert_float_close(run("ACTIVATION_SOFTMAX", ok), np.full((1, 1, 2, 4), 0.25, f32))
    for name in ("ACTIVATION_SOFTMAX", "ACTIVATION_LOG_SOFTMAX", "ACTIVATION_HARDMAX"):
        for sizes in ((2, 3, 4), (2, 1, 4), (1, 2, 3, 4)):
            raises_invalid(lambda: run(name, np.zeros(sizes, f32)), name, "effective rank")
    # The *1 operators have no such limit.
    assert_float_close(run("ACTIVATION_SOFTMAX1", np.zeros((2, 3, 4), f32), Axes=(2,)),
                       np.full((2, 3, 4), 0.25, f32))


@pytest.mark.parametrize("axes, needle", [((3,), "Axes[0] is 3"), ((0, 0), "twice"),
                                          ((), "AxisCount is 0")])
def test_softmax1_axes_are_validated(axes, needle):
    x = np.zeros((2, 2, 2), f32)
    for name in ("ACTIVATION_SOFTMAX1", "ACTIVATION_LOG_SOFTMAX1", "ACTIVATION_HARDMAX1"):
        raises_invalid(lambda: run(name, x, Axes=axes), name, needle)


def test_log_softmax_does_not_cancel_and_softmax_does_not_overflow():
    x = f32([[0, -30, -60], [1000, 999, -1000]])
    log = run("ACTIVATION_LOG_SOFTMAX1", x, Axes=(1,))
    # ln(exp(x_i) / sum) = (x_i - max) - log1p(sum of exp(x_j - max) over j != argmax): a
    # float64 ln(1 + 1e-13) would itself lose three digits.
    lse0 = math.log1p(math.exp(-30) + math.exp(-60))
    lse1 = math.log1p(math.exp(-1) + math.exp(-2000))
    want = f32([[-lse0, -30 - lse0, -60 - lse0], [-lse1, -1 - lse1, -2000 - lse1]])
    assert_float_close(log, want, 4)
    assert np.isfinite(run("ACTIVATION_SOFTMAX1", x, Axes=(1,))).all()


# ---- hardmax ties ------------------------------------------------------------------------

def test_hardmax_ties_give_1_to_the_first_maximum_only():
    x = f32([[[[3, 1, 3, 3], [7, 7, 7, 7]]]])
    assert_bits_equal(run("ACTIVATION_HARDMAX", x), f32([[[[1, 0, 0, 0], [1, 0, 0, 0]]]]))
    # Over two axes, "first" is row-major over the reduced axes in dimension order,
    # however Axes lists them.
    y = np.ones((2, 2, 2), f32)
    want = np.zeros((2, 2, 2), f32)
    want[:, 0, 0] = 1
    for axes in ((1, 2), (2, 1)):
        assert_bits_equal(run("ACTIVATION_HARDMAX1", y, Axes=axes), want, str(axes))


# ---- GELU --------------------------------------------------------------------------------

def gelu_erf(v):
    return 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0)))


def test_gelu_is_the_erf_form_not_the_tanh_approximation():
    x = np.linspace(-3, 3, 49).astype(f32)
    want = np.array([gelu_erf(float(v)) for v in x])
    assert_float_close(run("ACTIVATION_GELU", x), want.astype(f32), 1)
    x16 = x.astype(np.float16)
    want16 = np.array([gelu_erf(float(v)) for v in x16]).astype(np.float16)
    assert_float_close(run("ACTIVATION_GELU", x16), want16, 1)
    # The tanh approximation is far outside that tolerance, so the check above can fail.
    tanh_approx = 0.5 * 2.0 * (1 + math.tanh(math.sqrt(2 / math.pi) * (2.0 + 0.044715 * 8.0)))
    assert ulp_distance(f32([tanh_approx]), f32([gelu_erf(2.0)]))[0] > 100


def test_gelu_tail_is_accurate():
    x = f32([-5, -8, -10, -12])
    want = np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in x.astype(np.float64)])
    assert_float_close(run("ACTIVATION_GELU", x), want.astype(f32), 1)


# ---- RELU_GRAD, PARAMETERIZED_RELU, integer types ---------------------------------------

def relu_grad(x, dy):
    desc = dml.operator_desc("ACTIVATION_RELU_GRAD", InputTensor=x, InputGradientTensor=dy,
                             OutputGradientTensor=dy)
    return dml.run(desc, x, dy)


def test_relu_grad_is_zero_at_zero_and_passes_dy_bits_above():
    x = f32([-0.0, 0.0, 1e-30, -1e-30, np.inf, -np.inf, np.nan, 3])
    dy_bits = np.array([1, 2, 0x7FC00123, 4, 0x80000000, 6, 7, 0xFF800000], np.uint32)
    dy = dy_bits.view(f32)
    got = relu_grad(x, dy)
    want = np.where(np.array([0, 0, 1, 0, 1, 0, 0, 1], bool), dy, f32(0))
    assert_bits_equal(got, want)  # the NaN payload and -0.0 of dY survive where x > 0
    xi = np.int32([-2**31, -1, 0, 1, 2**31 - 1])
    assert_bits_equal(relu_grad(xi, np.int32([5, 6, 7, 8, -9])), np.int32([0, 0, 0, 8, -9]))


def test_parameterized_relu_broadcasts_a_per_channel_slope_with_zero_strides():
    x = f32([-1, 2, -3, 4, -5, 6, -7, 8]).reshape(1, 2, 2, 2)
    slope = f32([0.5, 2]).reshape(1, 2, 1, 1)
    slope_desc = dml.tensor_desc(f32, sizes=[1, 2, 2, 2], strides=[0, 1, 0, 0])
    desc = dml.operator_desc("ACTIVATION_PARAMETERIZED_RELU", InputTensor=x,
                             SlopeTensor=slope_desc, OutputTensor=x)
    got = dml.run(desc, x, slope)
    assert_bits_equal(got, np.where(x >= 0, x, np.broadcast_to(slope, x.shape) * x).astype(f32))
    bad = dml.operator_desc("ACTIVATION_PARAMETERIZED_RELU", InputTensor=x, SlopeTensor=slope,
                            OutputTensor=x)
    raises_invalid(lambda: dml.run(bad, x, slope), "PARAMETERIZED_RELU", "SlopeTensor.Sizes")


def test_integer_relu_needs_feature_level_5_1():
    x = np.int16([-3, 0, 9])
    with feature_level("5_0"):
        raises_invalid(lambda: run("ACTIVATION_RELU", x), "ACTIVATION_RELU", "INT16")
        assert_bits_equal(run("ACTIVATION_RELU", x.astype(f32)), f32([0, 0, 9]))
    with feature_level("5_1"):
        assert_bits_equal(run("ACTIVATION_RELU", x), np.int16([0, 0, 9]))
    with feature_level("6_1"):
        raises_invalid(lambda: run("ACTIVATION_SWISH", f32([1]), SigmoidInputScale=1.0),
                       "SWISH", "6_2")


def test_softplus_steepness_below_1_from_feature_level_6_4():
    """The page: Steepness cannot be less than 1; the feature-level history (6_4): allowed. At
    6_3 and below 0.5 is E_INVALIDARG; from 6_4 it computes ln(1 + exp(0.5 x)) / 0.5, and a
    Steepness that is not positive and finite is still refused."""
    with feature_level("6_3"):
        raises_invalid(lambda: run("ACTIVATION_SOFTPLUS", f32([1]), Steepness=0.5),
                       "ACTIVATION_SOFTPLUS", "Steepness", "6_4")
    x = f32([-3, 0, 2, 40])
    want = np.logaddexp(0, 0.5 * x.astype(np.float64)) / 0.5
    np.testing.assert_allclose(run("ACTIVATION_SOFTPLUS", x, Steepness=0.5), want, rtol=1e-6)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        raises_invalid(lambda: run("ACTIVATION_SOFTPLUS", f32([1]), Steepness=bad),
                       "ACTIVATION_SOFTPLUS", "Steepness", "positive, finite")


# ---- half precision ----------------------------------------------------------------------

def test_float16_rounds_once_unless_half_precision_is_allowed():
    # a = 1 + 3 * 2^-10 is a FLOAT16; a * a - 1 = 6 * 2^-10 + 9 * 2^-20. In float32 that is
    # exact and rounds once to FLOAT16 as 6 * 2^-10 + 2^-17; in float16 a * a first rounds to
    # 1 + 6 * 2^-10, and the sum is 6 * 2^-10.
    a = 1 + 3 * 2.0**-10
    x = np.float16([a])
    kwargs = dict(Alpha=a, Beta=-1.0)
    single = run("ACTIVATION_LINEAR", x, **kwargs)
    half = run("ACTIVATION_LINEAR", x, dml.DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION,
               **kwargs)
    assert_bits_equal(single, np.float16([6 * 2.0**-10 + 2.0**-17]))
    # With the flag, FLOAT16 arithmetic is allowed, not required: XLA's CPU backend computes
    # float16 in float32 and may drop the rounding between the two operations (it does since
    # JAX 0.10), so either rounding is correct; anything else is not.
    assert bits(half)[0] in (bits(np.float16([6 * 2.0**-10]))[0],
                             bits(np.float16([6 * 2.0**-10 + 2.0**-17]))[0]), half


def test_half_precision_flag_changes_nothing_for_float32():
    x = np.linspace(-4, 4, 17).astype(f32)
    for name, attrs in (("ACTIVATION_TANH", {}), ("ACTIVATION_ELU", {"Alpha": 1.0})):
        a = run(name, x, **attrs)
        b = run(name, x, dml.DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION, **attrs)
        assert_bits_equal(a, b, name)


# ---- fused activations -------------------------------------------------------------------

A = f32([[-2, 1], [3, -4]])


def add1(fused, a=A):
    return dml.operator_desc("ELEMENT_WISE_ADD1", ATensor=a, BTensor=a, OutputTensor=a,
                             FusedActivation=fused)


def fused_check(desc, level=0x6400):
    """(spec, the nested activation specs CreateOperator's check found)."""
    spec = validation.operator_desc(desc, BY_VALUE)
    return spec, [sub for _, sub in validation.fused_activations(spec, BY_VALUE, level)]


def test_fusable_activation_with_null_tensors_is_accepted():
    spec, found = fused_check(add1(dml.operator_desc("ACTIVATION_LEAKY_RELU", Alpha=0.5)))
    assert [f.name for f in found] == ["DML_OPERATOR_ACTIVATION_LEAKY_RELU"]
    assert spec.attr["FusedActivation"].attr["Alpha"] == 0.5
    assert fused_check(add1(None))[1] == []
    for name, schema in OPERATORS.items():  # every activation the guide lists
        if schema.get("usable_as_fused_activation") and name != "DML_OPERATOR_ELEMENT_WISE_CLIP":
            assert len(fused_check(add1(dml.operator_desc(name)))[1]) == 1, name


def test_fused_activation_with_tensors_is_rejected():
    relu = dml.operator_desc("ACTIVATION_RELU", InputTensor=A, OutputTensor=A)
    raises_invalid(lambda: fused_check(add1(relu)), "DML_OPERATOR_ELEMENT_WISE_ADD1: "
                   "FusedActivation", "ACTIVATION_RELU", "InputTensor must be NULL")
    relu = dml.operator_desc("ACTIVATION_RELU", OutputTensor=A)
    raises_invalid(lambda: fused_check(add1(relu)), "OutputTensor must be NULL")


@pytest.mark.parametrize("name", ["ACTIVATION_SOFTMAX", "ACTIVATION_HARDMAX1",
                                  "ACTIVATION_SWISH", "ACTIVATION_PARAMETERIZED_RELU",
                                  "ELEMENT_WISE_CLIP", "ELEMENT_WISE_ADD"])
def test_activations_the_guide_does_not_list_are_rejected(name):
    raises_invalid(lambda: fused_check(add1(dml.operator_desc(name))),
                   "DML_OPERATOR_ELEMENT_WISE_ADD1: FusedActivation", name, "cannot be fused")


def test_clip_fuses_into_gemm_only_and_levels_apply():
    gemm = dml.operator_desc("GEMM", ATensor=A, BTensor=A, OutputTensor=A,
                             FusedActivation=dml.operator_desc("ELEMENT_WISE_CLIP"))
    assert [f.name for f in fused_check(gemm)[1]] == ["DML_OPERATOR_ELEMENT_WISE_CLIP"]
    gelu = add1(dml.operator_desc("ACTIVATION_GELU"))
    assert fused_check(gelu, 0x5100)[1]
    raises_invalid(lambda: fused_check(gelu, 0x5000), "ELEMENT_WISE_ADD1", "GELU", "5_1")


def test_fused_activation_rules_are_reported_under_the_fusing_operator():
    spec, (sub,) = fused_check(add1(dml.operator_desc("ACTIVATION_SOFTPLUS", Steepness=0.0)))
    raises_invalid(lambda: check_fused(spec, sub, 0x6400),
                   "DML_OPERATOR_ELEMENT_WISE_ADD1: FusedActivation: "
                   "DML_OPERATOR_ACTIVATION_SOFTPLUS: Steepness")


def test_apply_fused_activation_runs_the_activation_kernel_in_the_compute_type():
    y = jnp.asarray(f32([-2, 0.5, 3]))
    (_, (leaky,)) = fused_check(add1(dml.operator_desc("ACTIVATION_LEAKY_RELU", Alpha=0.25)))
    ctx = KernelContext(0)
    got = jax.jit(lambda v: apply_fused(v, leaky, ctx))(y)
    assert_bits_equal(np.asarray(got), f32([-0.5, 0.5, 3]))
    np.testing.assert_array_equal(apply_fused_reference(np.asarray(y), leaky, ctx), [-0.5, 0.5, 3])
    assert apply_fused(y, None, ctx) is y
    (_, (gelu,)) = fused_check(add1(dml.operator_desc("ACTIVATION_GELU")))
    got = np.asarray(apply_fused(y, gelu, ctx))
    assert got.dtype == f32
    assert_float_close(got, f32([gelu_erf(v) for v in (-2, 0.5, 3)]), 1)


@pytest.mark.skipif(registry.get("DML_OPERATOR_ELEMENT_WISE_ADD1") is None,
                    reason="ELEMENT_WISE_ADD1 is not implemented yet")
def test_fused_activation_through_create_operator():
    got = dml.run(add1(dml.operator_desc("ACTIVATION_RELU")), A, A)
    assert_bits_equal(got, f32([[0, 2], [6, 0]]))
    bad = add1(dml.operator_desc("ACTIVATION_RELU", InputTensor=A))
    raises_invalid(lambda: dml.run(bad, A, A), "ELEMENT_WISE_ADD1", "InputTensor must be NULL")
    raises_invalid(lambda: dml.run(add1(dml.operator_desc("ACTIVATION_SOFTMAX")), A, A),
                   "ELEMENT_WISE_ADD1", "cannot be fused")

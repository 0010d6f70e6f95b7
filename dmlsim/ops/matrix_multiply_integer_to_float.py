"""DML_OPERATOR_MATRIX_MULTIPLY_INTEGER_TO_FLOAT (FL 6_2): integer matrices dequantized and
multiplied, a floating-point result:

    Output = ((A - AZeroPoint) AScale) x ((B - BZeroPoint) BScale) + Bias

A { [BatchCount], [ChannelCount], M, K }, B { .., K, N }, Output and the optional Bias
{ .., M, N } (2 to 4 dimensions, one DimensionCount). A, B and their zero points share one
integer type (8, 16 or 32 bits, signed or not); the scales, the bias and the output one
float type. A's scale and zero point are per tensor or per row ({ 1, 1, M, 1 }), B's per
tensor or per column ({ 1, 1, 1, N }).

How dmlsim computes it (the page gives no precision): the differences are exact, and the
sum of their products is accumulated in float64, which is exact for 8- and 16-bit data
(below 2^53: K < 2^21 for 16-bit); each row's and column's scale multiplies the sum, the
bias is added, and the result is rounded once to the output type (within 1 ULP of the
exact value). 32-bit data is summed in float64 too: exact while the partial sums stay
below 2^53, rounded beyond, never wrapped.
"""
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core.registry import Example, OperatorDef, register, same_sizes, same_type
from ._quantize import along, along_reference, per_axis, same_dimension_count
from ._reference import fractions
from .matrix_multiply_integer import exact_sums, output_sizes as product_sizes

A, AS, AZP, B, BS, BZP, BIAS, OUT = ("ATensor", "AScaleTensor", "AZeroPointTensor", "BTensor",
                                     "BScaleTensor", "BZeroPointTensor", "BiasTensor",
                                     "OutputTensor")
F64 = np.float64


def matrix_multiply_integer_to_float(ATensor, AScaleTensor, AZeroPointTensor, BTensor,
                                     BScaleTensor, BZeroPointTensor, BiasTensor, *, ctx):
    a, b = jnp.asarray(ATensor).astype(F64), jnp.asarray(BTensor).astype(F64)
    if AZeroPointTensor is not None:
        a = a - along(AZeroPointTensor, a.ndim, -2, F64)
    if BZeroPointTensor is not None:
        b = b - along(BZeroPointTensor, b.ndim, -1, F64)
    acc = jnp.matmul(a, b, precision=lax.Precision.HIGHEST)
    y = acc * along(AScaleTensor, a.ndim, -2, F64) * along(BScaleTensor, b.ndim, -1, F64)
    return y if BiasTensor is None else y + jnp.asarray(BiasTensor).astype(F64)


def matrix_multiply_integer_to_float_reference(ATensor, AScaleTensor, AZeroPointTensor,
                                               BTensor, BScaleTensor, BZeroPointTensor,
                                               BiasTensor, *, ctx):
    """Exact: Python-integer sums times the scales and plus the bias as Fractions."""
    acc = exact_sums(ATensor, AZeroPointTensor, BTensor, BZeroPointTensor)
    n = acc.ndim
    y = acc * along_reference(fractions(AScaleTensor), n, -2, object) \
        * along_reference(fractions(BScaleTensor), n, -1, object)
    if BiasTensor is not None:
        y = y + fractions(BiasTensor)
    return np.vectorize(float, otypes=[np.float64])(y)


def output_sizes(spec, check):
    return product_sizes(spec, check)


i8, u16, i32, f32, f16 = np.int8, np.uint16, np.int32, np.float32, np.float16
register(OperatorDef(
    "DML_OPERATOR_MATRIX_MULTIPLY_INTEGER_TO_FLOAT", matrix_multiply_integer_to_float,
    matrix_multiply_integer_to_float_reference, output_sizes=output_sizes,
    rules=(same_dimension_count(A, B, BIAS, OUT), same_dimension_count(AS, AZP, BS, BZP),
           same_sizes(BIAS, OUT), same_type(A, AZP, B, BZP), same_type(AS, BS, BIAS, OUT),
           per_axis(AS, A, -2, "M (per row)"), per_axis(AZP, A, -2, "M (per row)"),
           per_axis(BS, B, -1, "N (per column)"), per_axis(BZP, B, -1, "N (per column)")),
    output_types=lambda spec: {OUT: spec.tensor[AS].data_type},
    examples=(
        Example({A: i8([[[[1, 2], [3, 4]]]]), AS: f32([[[[0.5]]]]),
                 B: i8([[[[1, -1], [2, 0]]]]), BS: f32([[[[2]]]])},
                {OUT: f32([[[[5, -1], [11, -3]]]])}, {},
                "per-tensor scales 0.5 and 2: [1 2; 3 4] x [1 -1; 2 0]"),
        Example({A: u16([[1000, 1001], [2, 3]]), AS: f32([[0.5], [0.25]]),
                 AZP: u16([[1000], [0]]), B: u16([[1, 1], [1, 3]]), BS: f32([[1, 0.5]]),
                 BZP: u16([[1, 1]]), BIAS: f32([[0.25, 0], [0, 0]])},
                {OUT: f32([[0.25, 0.5], [0, 0.75]])}, {},
                "2-D UINT16, per-row A and per-column B scales and zero points, and a bias"),
        Example({A: i32([[[[2**31 - 1, -2**31]]]]), AS: f32([[[[1]]]]),
                 B: i32([[[[1], [1]]]]), BS: f32([[[[1]]]])}, {OUT: f32([[[[-1]]]])}, {},
                "INT32: 2147483647 + (-2147483648) = -1 exactly (no wrap, no rounding)"),
        Example({A: i8([[[[3]]]]), AS: f16([[[[0.5]]]]), B: i8([[[[3]]]]),
                 BS: f16([[[[1]]]]), BIAS: f16([[[[0.25]]]])}, {OUT: f16([[[[4.75]]]])}, {},
                "FLOAT16 scales, bias and output: 9 x 0.5 + 0.25"),
    ),
    module=__name__))

"""DML_OPERATOR_QUANTIZED_LINEAR_MATRIX_MULTIPLY: dequantize A and B, multiply, quantize:

    Output = clamp(round((A - AZeroPoint) AScale x (B - BZeroPoint) BScale / OutputScale)
                   + OutputZeroPoint, Min, Max)

with [Min, Max] the output type's range (INT8 or UINT8). Shapes as MATRIX_MULTIPLY_INTEGER:
A { [BatchCount], [ChannelCount], M, K }, B { .., K, N }, the output { .., M, N } (2 to 4
dimensions from FL 4_0, exactly 4 before). A's scale and zero point and the output's are
per tensor or per row ({ 1, 1, M, 1 }), B's per tensor or per column ({ 1, 1, 1, N }).

How dmlsim computes it (the page says only "mathematically equivalent"): the products of
the integer differences are summed exactly in INT32 (MATRIX_MULTIPLY_INTEGER, which wraps as
32-bit accumulators do beyond 2^31), the sum is scaled by AScale x BScale / OutputScale in
float64 and rounded half to even (ONNX QLinearMatMul's rule); see ``_quantize`` for NaN and
infinities. A zero scale is undefined behaviour on the page.
"""
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_type
from ._quantize import (along, along_reference, per_axis, requantize, same_dimension_count,
                        zero_point_type)
from ._reference import fractions, quantize_fractions
from .matrix_multiply_integer import (exact_sums, matrix_multiply_integer, output_sizes as
                                      product_sizes, wrap32)

A, AS, AZP, B, BS, BZP, OS, OZP, OUT = (
    "ATensor", "AScaleTensor", "AZeroPointTensor", "BTensor", "BScaleTensor", "BZeroPointTensor",
    "OutputScaleTensor", "OutputZeroPointTensor", "OutputTensor")


def quantized_linear_matrix_multiply(ATensor, AScaleTensor, AZeroPointTensor, BTensor,
                                     BScaleTensor, BZeroPointTensor, OutputScaleTensor,
                                     OutputZeroPointTensor, *, ctx):
    acc = matrix_multiply_integer(ATensor, AZeroPointTensor, BTensor, BZeroPointTensor, ctx=ctx)
    n, f = acc.ndim, np.float64
    v = acc.astype(f) * along(AScaleTensor, n, -2, f) * along(BScaleTensor, n, -1, f) \
        / along(OutputScaleTensor, n, -2, f)
    zp = None if OutputZeroPointTensor is None else along(OutputZeroPointTensor, n, -2)
    return requantize(v, zp, ctx.out_dtype())


def quantized_linear_matrix_multiply_reference(ATensor, AScaleTensor, AZeroPointTensor, BTensor,
                                               BScaleTensor, BZeroPointTensor, OutputScaleTensor,
                                               OutputZeroPointTensor, *, ctx):
    """Exact: Python-integer sums (wrapped to INT32) times the scales as Fractions."""
    acc = wrap32(exact_sums(ATensor, AZeroPointTensor, BTensor, BZeroPointTensor)).astype(object)
    n = acc.ndim
    v = acc * along_reference(fractions(AScaleTensor), n, -2, object) \
        * along_reference(fractions(BScaleTensor), n, -1, object) \
        / along_reference(fractions(OutputScaleTensor), n, -2, object)
    zp = None if OutputZeroPointTensor is None else \
        along_reference(OutputZeroPointTensor, n, -2, object)
    return quantize_fractions(v, zp, ctx.out_dtype())


def output_sizes(spec, check):
    return product_sizes(spec, check)


u8, i8, f32 = np.uint8, np.int8, np.float32
ONE = np.ones((1, 1, 1, 1))
register(OperatorDef(
    "DML_OPERATOR_QUANTIZED_LINEAR_MATRIX_MULTIPLY", quantized_linear_matrix_multiply,
    quantized_linear_matrix_multiply_reference, output_sizes=output_sizes,
    rules=(same_dimension_count(A, B, OUT), same_dimension_count(AS, AZP, BS, BZP, OS, OZP),
           same_type(A, AZP), same_type(B, BZP), same_type(OUT, OZP),
           per_axis(AS, A, -2, "M (per row)"), per_axis(AZP, A, -2, "M (per row)"),
           per_axis(BS, B, -1, "N (per column)"), per_axis(BZP, B, -1, "N (per column)"),
           per_axis(OS, A, -2, "M (per row)"), per_axis(OZP, A, -2, "M (per row)")),
    output_types=zero_point_type(OUT, OZP, A),
    examples=(
        Example({A: u8([[[[130, 132], [128, 120]]]]), AS: f32(ONE * 0.5), AZP: u8(ONE * 128),
                 B: i8([[[[2, 0], [1, -1]]]]), BS: f32(ONE), BZP: i8(ONE * 0),
                 OS: f32(ONE * 0.25), OZP: u8(ONE * 100)},
                {OUT: u8([[[[116, 92], [84, 116]]]])}, {},
                "(A - 128) x 0.5 = [1 2; 0 -4]; x B = [4 -2; -4 4]; / 0.25 + 100"),
        Example({A: i8([[[[1, 1]]]]), AS: f32(ONE), B: i8([[[[1], [2]]]]), BS: f32(ONE * 0.5),
                 OS: f32(ONE), OZP: i8(ONE * 0)},
                {OUT: i8([[[[2]]]])}, {},
                "(1 + 2) x 0.5 = 1.5 rounds half to even: 2; no input zero points"),
        Example({A: i8([[[[100, 100]], [[-100, 1]]]]), AS: f32(ONE),
                 B: i8([[[[100], [27]], [[1], [1]]]]), BS: f32(ONE), OS: f32(ONE * 2),
                 OZP: i8(ONE * 0)},
                {OUT: i8([[[[127]], [[-50]]]])}, {},
                "two channels: 12700 / 2 saturates at 127; (-100 + 1) / 2 = -49.5 -> -50"),
    ),
    module=__name__))

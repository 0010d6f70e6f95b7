"""DML_OPERATOR_QUANTIZED_LINEAR_CONVOLUTION: dequantize the input and filter, convolve, add
the bias, quantize:

    acc    = CONVOLUTION_INTEGER(Input, InputZeroPoint, Filter, FilterZeroPoint) + Bias
    Output = clamp(round(acc InputScale FilterScale[m] / OutputScale) + OutputZeroPoint,
                   Min, Max)

with [Min, Max] the output type's range (INT8 or UINT8). Geometry as CONVOLUTION_INTEGER
(FORWARD cross-correlation, 3 or 4 dimensions from FL 4_0). The input's and the output's
scale and zero point are per tensor; the filter's are per tensor or per output channel
({ 1, M, 1, 1 }); the optional INT32 bias is { 1, M, 1, 1 }.

Where the page is silent: the INT32 bias is in the accumulator's units (scale InputScale x
FilterScale, zero point 0; ONNX QLinearConv's bias), the sums wrap modulo 2^32, and the
scaled value is computed in float64 and rounded half to even (see ``_quantize``).
"""
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_type
from ._conv_math import int_conv
from ._quantize import (along, along_reference, per_axis, requantize, same_dimension_count,
                        single_element, zero_point_type)
from ._reference import fractions, quantize_fractions
from .convolution_integer import (attrs, conv_attrs, convolution_integer_reference,
                                  differences, output_sizes as integer_sizes)

IN, IS, IZP, W, WS, WZP, B, OS, OZP, OUT = (
    "InputTensor", "InputScaleTensor", "InputZeroPointTensor", "FilterTensor",
    "FilterScaleTensor", "FilterZeroPointTensor", "BiasTensor", "OutputScaleTensor",
    "OutputZeroPointTensor", "OutputTensor")


def quantized_linear_convolution(InputTensor, InputScaleTensor, InputZeroPointTensor,
                                 FilterTensor, FilterScaleTensor, FilterZeroPointTensor,
                                 BiasTensor, OutputScaleTensor, OutputZeroPointTensor, *,
                                 DimensionCount, Strides, Dilations, StartPadding, EndPadding,
                                 GroupCount, ctx):
    x, w = differences(InputTensor, InputZeroPointTensor, FilterTensor, FilterZeroPointTensor)
    acc = int_conv(x, w, conv_attrs(locals()))
    if BiasTensor is not None:
        acc = acc + along(BiasTensor, acc.ndim, 1)
    f = np.float64
    v = acc.astype(f) * along(InputScaleTensor, acc.ndim, 1, f) \
        * along(FilterScaleTensor, acc.ndim, 1, f) / along(OutputScaleTensor, acc.ndim, 1, f)
    zp = None if OutputZeroPointTensor is None else along(OutputZeroPointTensor, acc.ndim, 1)
    return requantize(v, zp, ctx.out_dtype())  # one-element tensors: along gives [1, 1, ..]


def quantized_linear_convolution_reference(InputTensor, InputScaleTensor, InputZeroPointTensor,
                                           FilterTensor, FilterScaleTensor,
                                           FilterZeroPointTensor, BiasTensor, OutputScaleTensor,
                                           OutputZeroPointTensor, *, DimensionCount, Strides,
                                           Dilations, StartPadding, EndPadding, GroupCount, ctx):
    """Exact: integer sums (float64 below 2^53, wrapped to INT32) times Fraction scales."""
    a = {k: v for k, v in locals().items() if k in attrs()}
    acc = convolution_integer_reference(InputTensor, InputZeroPointTensor, FilterTensor,
                                        FilterZeroPointTensor, ctx=ctx, **a).astype(object)
    n = acc.ndim
    if BiasTensor is not None:
        acc = acc + along_reference(BiasTensor, n, 1, object)
    v = acc * fractions(InputScaleTensor).reshape(-1)[0] \
        * along_reference(fractions(FilterScaleTensor), n, 1, object) \
        / fractions(OutputScaleTensor).reshape(-1)[0]
    zp = None if OutputZeroPointTensor is None else \
        np.asarray(OutputZeroPointTensor).astype(object).reshape(-1)[0]
    return quantize_fractions(v, zp, ctx.out_dtype())


def output_sizes(spec, check):
    b = spec.tensor.get(B)
    sizes = integer_sizes(spec, check)
    m, rank = sizes[OUT][1], len(sizes[OUT])
    want = [1, m] + [1] * (rank - 2)
    if b is not None and list(b.sizes) != want:
        check.fail(f"BiasTensor.Sizes is {list(b.sizes)}; it must be {want}")
    return sizes


u8, i8, f32 = np.uint8, np.int8, np.float32
ONE = np.ones((1, 1, 1, 1))
register(OperatorDef(
    "DML_OPERATOR_QUANTIZED_LINEAR_CONVOLUTION", quantized_linear_convolution,
    quantized_linear_convolution_reference, output_sizes=output_sizes,
    rules=(same_dimension_count(IN, W, B, OUT), same_type(IN, IZP), same_type(W, WZP),
           same_type(OUT, OZP), single_element(IN, IS, IZP), single_element(OUT, OS, OZP),
           per_axis(WS, OUT, 1, "M (per channel)"), per_axis(WZP, OUT, 1, "M (per channel)")),
    output_types=zero_point_type(OUT, OZP, IN),
    examples=(
        Example({IN: u8(np.arange(1, 10).reshape(1, 1, 3, 3)), IS: f32(ONE),
                 W: i8([[[[1, 0], [0, -1]]]]), WS: f32(ONE * 0.5), OS: f32(ONE),
                 OZP: u8(ONE * 10)},
                {OUT: u8([[[[8, 8], [8, 8]]]])}, attrs(),
                "(x[i, j] - x[i + 1, j + 1]) x 0.5 = -2, + 10"),
        Example({IN: u8([[[[130, 126]]]]), IS: f32(ONE * 0.5), IZP: u8(ONE * 128),
                 W: i8([[[[1, 1]]], [[[3, 0]]]]), WS: f32([[[[1]], [[0.25]]]]),
                 B: np.int32([[[[1]], [[-2]]]]), OS: f32(ONE), OZP: i8(ONE * 0)},
                {OUT: i8([[[[0]], [[0]]]])}, attrs(),
                "per-channel filter scales [1, 0.25], bias [1, -2] in accumulator units: "
                "(0 + 1) x 0.5 = 0.5 -> 0; (6 - 2) x 0.125 = 0.5 -> 0 (half to even)"),
        Example({IN: i8([[[1, 2, 3]]]), IS: f32(ONE[0]), W: i8([[[100]]]),
                 WS: f32(ONE[0] * 1), OS: f32(ONE[0] * 2), OZP: i8(ONE[0] * 0)},
                {OUT: i8([[[50, 100, 127]]])}, attrs(1),
                "1-D (FL 4_0): 100 x / 2 saturates at 127"),
    ),
    module=__name__))

"""DML_OPERATOR_CONVOLUTION: FORWARD and BACKWARD (transposed) convolution of InputTensor with
FilterTensor, CROSS_CORRELATION or CONVOLUTION Mode, grouped (depthwise when GroupCount is
the channel count), strided, dilated and padded, with an optional per-channel BiasTensor
{ 1, M, 1.. } and FusedActivation; 1 to 3 spatial dimensions (tensors of 3 to 5 dimensions
from FL 4_0, 4 or 5 before). Geometry, layouts and orientations: ``_conv``.

The page gives no output-size formula; dmlsim uses the standard ones (``_conv``), and
OutputPadding appends zeros to the convolution's result as the page says (the bias and the
activation still apply there). Where the page is silent: GroupCount must divide the input
channels (and M, FORWARD), Strides and Dilations are at least 1, and an operator whose
padding leaves no output element is E_INVALIDARG. The four tensors share one DataType and
DimensionCount.

Precision: FLOAT32 computes in float32 (``Precision.HIGHEST``: no TF32 or bf16 passes on
GPUs), FLOAT16 accumulates in float32 and rounds once unless
ALLOW_HALF_PRECISION_COMPUTATION (FLOAT16 operands, whose products are exact in float32,
feed a float32-accumulating convolution as they are: tensor cores on GPUs). Tolerance
(``error_bound``): a sum of n = (C / GroupCount) x prod(k) products in float32 is within
(n + 2) u sum |x w| of the exact value (u = 2^-24), plus 2 u |bias| and the final rounding
to the output type.
"""
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_type
from ._conv import BACKWARD, CONVOLUTION, CROSS_CORRELATION, output_sizes
from ._conv_cpu import cpu_options, cpu_stored
from ._conv_math import conv, conv_reference

IN, W, B, OUT = "InputTensor", "FilterTensor", "BiasTensor", "OutputTensor"
KEYS = ("Mode", "Direction", "DimensionCount", "Strides", "Dilations", "StartPadding",
        "EndPadding", "OutputPadding", "GroupCount")


def convolution(InputTensor, FilterTensor, BiasTensor, *, Mode, Direction, DimensionCount,
                Strides, Dilations, StartPadding, EndPadding, OutputPadding, GroupCount, ctx):
    a = dict(zip(KEYS, (Mode, Direction, DimensionCount, Strides, Dilations, StartPadding,
                        EndPadding, OutputPadding, GroupCount)))
    x, w = ctx.product_operand(InputTensor), ctx.product_operand(FilterTensor)
    y = conv(x, w, a, accumulate=ctx.compute_type(x.dtype))
    return y if BiasTensor is None else y + ctx.upcast(BiasTensor)


def convolution_reference(InputTensor, FilterTensor, BiasTensor, *, Mode, Direction,
                          DimensionCount, Strides, Dilations, StartPadding, EndPadding,
                          OutputPadding, GroupCount, ctx):
    a = dict(zip(KEYS, (Mode, Direction, DimensionCount, Strides, Dilations, StartPadding,
                        EndPadding, OutputPadding, GroupCount)))
    y = conv_reference(InputTensor, FilterTensor, a)
    return y if BiasTensor is None else y + np.asarray(BiasTensor, np.float64)


def error_bound(inputs, spec, dtype):
    a, w = spec.attr, np.asarray(inputs[W])
    n = int(np.prod(w.shape[2:])) * (w.shape[1] if a["Direction"] != BACKWARD else
                                     w.shape[0] // a["GroupCount"])
    u = 2.0 ** -24
    bound = (n + 2) * u * conv_reference(np.abs(np.asarray(inputs[IN], np.float64)),
                                         np.abs(w.astype(np.float64)), a)
    if inputs.get(B) is not None:
        bound = bound + 2 * u * np.abs(np.asarray(inputs[B], np.float64))
    return bound


def same_dimension_count(spec, check):
    x = spec.tensor[IN]
    for f in (W, B, OUT):
        t = spec.tensor.get(f)
        if t is not None and len(t.sizes) != len(x.sizes):
            check.fail(f"{f}.DimensionCount is {len(t.sizes)} but InputTensor.DimensionCount is "
                       f"{len(x.sizes)}; they must match")


def _attrs(nd=2, **kw):
    a = {"Mode": CROSS_CORRELATION, "Direction": 0, "DimensionCount": nd,
         "Strides": (1,) * nd, "Dilations": (1,) * nd, "StartPadding": (0,) * nd,
         "EndPadding": (0,) * nd,
         "OutputPadding": (0,) * nd, "GroupCount": 1}
    a.update(kw)
    return a


f32 = np.float32
X9 = f32(np.arange(1, 10).reshape(1, 1, 3, 3))
DIAG = f32([[[[1, 0], [0, -1]]]])
register(OperatorDef(
    "DML_OPERATOR_CONVOLUTION", convolution, convolution_reference, output_sizes=output_sizes,
    rules=(same_dimension_count, same_type(IN, W, B, OUT)), error_bound=error_bound,
    cpu_compiler_options=cpu_options, cpu_stored_inputs=cpu_stored,
    ulp={"FLOAT32": 0, "FLOAT16": 0}, examples=(
        Example({IN: X9, W: DIAG}, {OUT: f32([[[[-4, -4], [-4, -4]]]])}, _attrs(),
                "x[i, j] - x[i + 1, j + 1] over a 3x3 input"),
        Example({IN: np.ones((1, 1, 3, 3), f32), W: np.ones((1, 1, 3, 3), f32)},
                {OUT: f32([[[[4, 4], [4, 4]]]])},
                _attrs(Strides=(2, 2), StartPadding=(1, 1), EndPadding=(1, 1)),
                "padding 1, stride 2: each window sees 4 of the 9 ones"),
        Example({IN: f32([[[1, 2, 3]]]), W: f32([[[1, 10]]])}, {OUT: f32([[[21, 32]]])},
                _attrs(1), "1-D (FL 4_0) CROSS_CORRELATION: 1 + 20, 2 + 30"),
        Example({IN: f32([[[1, 2, 3]]]), W: f32([[[1, 10]]])}, {OUT: f32([[[12, 23]]])},
                _attrs(1, Mode=CONVOLUTION), "CONVOLUTION flips the filter: 10 + 2, 20 + 3"),
        Example({IN: f32([[[1, 2]]]), W: f32([[[1, 10, 100]]])},
                {OUT: f32([[[1, 10, 102, 20, 200]]])}, _attrs(1, Direction=BACKWARD,
                                                              Strides=(2,)),
                "BACKWARD (transposed), stride 2: each input scatters x * w"),
        Example({IN: f32([[[[1, 2, 3]], [[4, 5, 6]]]]), W: f32([[[[1, 1]]], [[[1, -1]]]])},
                {OUT: f32([[[[3, 5]], [[-1, -1]]]])}, _attrs(GroupCount=2),
                "depthwise (GroupCount 2): channel 0 sums pairs, channel 1 differences"),
        Example({IN: f32([[[1, 2, 3, 4, 5]]]), W: f32([[[1, 1]]])},
                {OUT: f32([[[4, 6, 8, 0, 0]]])}, _attrs(1, Dilations=(2,), OutputPadding=(2,)),
                "Dilations 2: x[o] + x[o + 2]; OutputPadding 2 appends zeros"),
        Example({IN: X9, W: DIAG, B: f32([[[[3.5]]]])}, {OUT: f32([[[[0, 0], [0, 0]]]])},
                {**_attrs(), "FusedActivation": "RELU"}, "bias 3.5, then RELU(-0.5) = 0"),
        Example({IN: np.float16([[[2048, 1, 1]]]), W: np.float16([[[1, 1, 1]]])},
                {OUT: np.float16([[[2050]]])}, _attrs(1),
                "FLOAT16 accumulates in float32: 2048 + 1 + 1 = 2050"),
        Example({IN: np.ones((1, 1, 2, 2, 2), f32), W: np.ones((1, 1, 2, 2, 2), f32)},
                {OUT: f32([[[[[8]]]]])}, _attrs(3), "3-D spatial (5-D tensors)"),
        Example({IN: X9, W: DIAG, B: f32([[[[1]]]])}, {OUT: f32([[[[-3, -3], [-3, -3]]]])},
                _attrs(), "the filter and bias OWNED_BY_DML", owned=(W, B)),
    ), module=__name__))

"""DML_OPERATOR_QUANTIZED_LINEAR_AVERAGE_POOLING (FL 6_2): dequantize, average each sliding
window (average pooling's geometry, with Dilations and IncludePadding: ``_pooling``),
quantize:

    Output = clamp(round(mean((Input - InputZeroPoint) InputScale) / OutputScale)
                   + OutputZeroPoint, Min, Max)

[Min, Max] is the output type's range (INT8 or UINT8). Input and output are 4-D or 5-D; the
scales and zero points are per tensor or per channel ({ 1, C, 1, 1 }). IncludePadding
counts the padding taps (which add 0) in the divisor.

How dmlsim computes it: the dequantized values and their window sums in float64 (exact for
8-bit data and float32 scales, up to the sum's rounding), the mean divided by the output
scale in float64, then rounded half to even (see ``_quantize``).
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_type
from ._pooling import output_shape, reference_windows, taps, window_attrs, window_sizes
from ._quantize import along, along_reference, per_axis, requantize, zero_point_type
from ._reference import fractions, quantize_fractions

IN, IS, IZP, OS, OZP, OUT = ("InputTensor", "InputScaleTensor", "InputZeroPointTensor",
                             "OutputScaleTensor", "OutputZeroPointTensor", "OutputTensor")
F64 = np.float64


def quantized_linear_average_pooling(InputTensor, InputScaleTensor, InputZeroPointTensor,
                                     OutputScaleTensor, OutputZeroPointTensor, *,
                                     DimensionCount, Strides, WindowSize, StartPadding,
                                     EndPadding, Dilations, IncludePadding, ctx):
    a = window_attrs(locals(), Dilations=Dilations)
    x = jnp.asarray(InputTensor).astype(F64)
    n = x.ndim
    if InputZeroPointTensor is not None:
        x = x - along(InputZeroPointTensor, n, 1, F64)
    x = x * along(InputScaleTensor, n, 1, F64)
    total, count = jnp.zeros((), F64), jnp.zeros((), F64)
    for _, v, valid in taps(x, a, 0):
        total, count = total + v, count + valid.astype(F64)
    if IncludePadding:
        count = jnp.full_like(count, float(np.prod(WindowSize)))
    v = total / count / along(OutputScaleTensor, n, 1, F64)
    zp = None if OutputZeroPointTensor is None else along(OutputZeroPointTensor, n, 1)
    return requantize(v, zp, ctx.out_dtype())


def quantized_linear_average_pooling_reference(InputTensor, InputScaleTensor,
                                               InputZeroPointTensor, OutputScaleTensor,
                                               OutputZeroPointTensor, *, DimensionCount,
                                               Strides, WindowSize, StartPadding, EndPadding,
                                               Dilations, IncludePadding, ctx):
    """Exact: each window's mean of Fractions, one output position at a time."""
    a = window_attrs(locals(), Dilations=Dilations)
    x = np.asarray(InputTensor)
    n = x.ndim
    q = x.astype(object)
    if InputZeroPointTensor is not None:
        q = q - along_reference(InputZeroPointTensor, n, 1, object)
    q = np.broadcast_to(q * along_reference(fractions(InputScaleTensor), n, 1, object), x.shape)
    os_ = np.broadcast_to(along_reference(fractions(OutputScaleTensor), n, 1, object),
                          (1, x.shape[1]) + (1,) * (n - 2))
    y = np.zeros(output_shape(x, a), object)
    flat = q.reshape(-1)
    for o, items, taps_ in reference_windows(x, a):
        vals = [flat[i] for i, _ in items]
        y[o] = sum(vals) / (taps_ if IncludePadding else len(vals)) / os_[0, o[1]].item()
    zp = None if OutputZeroPointTensor is None else \
        along_reference(OutputZeroPointTensor, n, 1, object)
    return quantize_fractions(y, zp, ctx.out_dtype())


def window(nd=2, **kw):
    a = {"DimensionCount": nd, "Strides": (1,) * nd, "WindowSize": (2,) * nd,
         "StartPadding": (0,) * nd, "EndPadding": (0,) * nd, "Dilations": (1,) * nd,
         "IncludePadding": False}
    a.update(kw)
    return a


u8, i8, f32 = np.uint8, np.int8, np.float32
ONE = np.ones((1, 1, 1, 1))
register(OperatorDef(
    "DML_OPERATOR_QUANTIZED_LINEAR_AVERAGE_POOLING", quantized_linear_average_pooling,
    quantized_linear_average_pooling_reference, output_sizes=window_sizes,
    rules=(same_type(IN, IZP), same_type(OUT, OZP),
           *(per_axis(f, IN, 1, "C (per channel)") for f in (IS, IZP, OS, OZP))),
    output_types=zero_point_type(OUT, OZP, IN),
    examples=(
        Example({IN: u8([[[[130, 132], [134, 136]]]]), IS: f32(ONE * 0.5),
                 IZP: u8(ONE * 128), OS: f32(ONE * 0.25), OZP: u8(ONE * 10)},
                {OUT: u8([[[[20]]]])}, window(),
                "mean of [1 2 3 4] = 2.5 (dequantized), / 0.25 + 10"),
        Example({IN: i8([[[[4, 4], [4, 5]]]]), IS: f32(ONE), OS: f32(ONE * 2), OZP: i8(ONE * 0)},
                {OUT: i8([[[[0, 1], [1, 2]]]])},
                window(StartPadding=(1, 1), IncludePadding=True),
                "IncludePadding, padding 1 at the start: window sums 4, 8, 8, 17 over 4 taps, "
                "/ 2: 0.5, 1, 1, 2.125 -> 0 (half to even), 1, 1, 2"),
        Example({IN: u8([[[[2]], [[20]]]]), IS: f32([[[[1]], [[0.5]]]]),
                 OS: f32(ONE), OZP: u8([[[[0]], [[3]]]])},
                {OUT: u8([[[[2]], [[13]]]])}, window(WindowSize=(1, 1)),
                "per-channel input scales [1, 0.5] and output zero points [0, 3]"),
    ),
    module=__name__))

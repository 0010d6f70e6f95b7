"""DML_OPERATOR_CONVOLUTION_INTEGER: a FORWARD cross-correlation of integer data with the
zero points subtracted, INT32 output:

    Output[n, m, o..] = sum (Input[n, c, o * Stride + t * Dilation - StartPadding]
                             - InputZeroPoint) (Filter[m, c, t..] - FilterZeroPoint[m])

over the taps t and the channels c of m's group. Geometry as CONVOLUTION (``_conv``):
input { N, C, [H], W }, filter { M, C / GroupCount, [kH], kW }, 3 or 4 dimensions from FL
4_0 (exactly 4 before; DimensionCount is the rank - 2). The input zero point is per tensor,
the filter's per tensor or per output channel ({ 1, M, 1, 1 }).

Where the page is silent: padding is zero after the zero point is subtracted (the value
of a dequantized convolution, ONNX ConvInteger's), the differences are exact and the sums
wrap modulo 2^32 as 32-bit accumulators do.
"""
from types import SimpleNamespace

import jax.numpy as jnp
import numpy as np

from .._core import dtypes
from .._core.registry import Example, OperatorDef, register, same_type
from ._conv import CROSS_CORRELATION, FORWARD, output_sizes as conv_sizes
from ._conv_math import conv_reference, int_conv
from ._quantize import along, along_reference, per_axis, same_dimension_count, single_element
from .matrix_multiply_integer import wrap32

IN, IZP, W, WZP, OUT = ("InputTensor", "InputZeroPointTensor", "FilterTensor",
                        "FilterZeroPointTensor", "OutputTensor")
WINDOW = ("DimensionCount", "Strides", "Dilations", "StartPadding", "EndPadding", "GroupCount")


def conv_attrs(a):
    """The CONVOLUTION attributes these operators imply: FORWARD cross-correlation."""
    nd = a["DimensionCount"]
    return {**{k: a[k] for k in WINDOW}, "Mode": CROSS_CORRELATION, "Direction": FORWARD,
            "OutputPadding": (0,) * nd}


def as_convolution(spec):
    return SimpleNamespace(attr=conv_attrs(spec.attr), tensor=spec.tensor)


def differences(x, xzp, w, wzp):
    """Input and filter minus their zero points, in INT32 (JAX)."""
    x, w = jnp.asarray(x).astype(jnp.int32), jnp.asarray(w).astype(jnp.int32)
    if xzp is not None:
        x = x - jnp.asarray(xzp).astype(jnp.int32).reshape(-1)[0]
    if wzp is not None:
        w = w - along(wzp, w.ndim, 0)
    return x, w


def differences_reference(x, xzp, w, wzp):
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    if xzp is not None:
        x = x - float(np.asarray(xzp).reshape(-1)[0])
    if wzp is not None:
        w = w - along_reference(wzp, w.ndim, 0)
    return x, w


def convolution_integer(InputTensor, InputZeroPointTensor, FilterTensor, FilterZeroPointTensor,
                        *, DimensionCount, Strides, Dilations, StartPadding, EndPadding,
                        GroupCount, ctx):
    x, w = differences(InputTensor, InputZeroPointTensor, FilterTensor, FilterZeroPointTensor)
    a = conv_attrs(locals())
    return int_conv(x, w, a)


def convolution_integer_reference(InputTensor, InputZeroPointTensor, FilterTensor,
                                  FilterZeroPointTensor, *, DimensionCount, Strides, Dilations,
                                  StartPadding, EndPadding, GroupCount, ctx):
    """float64 tap sums (exact below 2^53), reduced modulo 2^32."""
    x, w = differences_reference(InputTensor, InputZeroPointTensor, FilterTensor,
                                 FilterZeroPointTensor)
    y = conv_reference(x, w, conv_attrs(locals()))
    return wrap32(np.rint(y).astype(np.int64).astype(object))


def output_sizes(spec, check):
    return conv_sizes(as_convolution(spec), check)


def attrs(nd=2, **kw):
    a = {"DimensionCount": nd, "Strides": (1,) * nd, "Dilations": (1,) * nd,
         "StartPadding": (0,) * nd, "EndPadding": (0,) * nd, "GroupCount": 1}
    a.update(kw)
    return a


RULES = (same_dimension_count(IN, W, OUT), same_dimension_count(IZP, WZP), same_type(IN, IZP),
         same_type(W, WZP), single_element(IN, IZP), per_axis(WZP, OUT, 1, "M (per channel)"))
u8, i8 = np.uint8, np.int8
register(OperatorDef(
    "DML_OPERATOR_CONVOLUTION_INTEGER", convolution_integer, convolution_integer_reference,
    output_sizes=output_sizes, rules=RULES,
    output_types=lambda spec: {OUT: dtypes.INT32},
    examples=(
        Example({IN: u8(np.arange(1, 10).reshape(1, 1, 3, 3)),
                 W: i8([[[[1, 0], [0, -1]]]])},
                {OUT: np.int32([[[[-4, -4], [-4, -4]]]])}, attrs(),
                "x[i, j] - x[i + 1, j + 1] over a 3x3 input"),
        Example({IN: u8([[[[130, 129], [128, 127]]]]), IZP: u8([[[[128]]]]),
                 W: u8([[[[3]]], [[[5]]]]), WZP: u8([[[[1]], [[4]]]])},
                {OUT: np.int32([[[[4, 2], [0, -2]], [[2, 1], [0, -1]]]])}, attrs(),
                "zero points: input 128, filter per channel [1, 4] (weights 2 and 1)"),
        Example({IN: u8([[[10, 20, 30]]]), IZP: u8([[[10]]]), W: i8([[[1, 1, 1]]])},
                {OUT: np.int32([[[10, 30, 30]]])}, attrs(1, StartPadding=(1,),
                                                         EndPadding=(1,)),
                "1-D (FL 4_0): x - 10 = [0 10 20], the padding adds 0: "
                "0+0+10, 0+10+20, 10+20+0"),
        Example({IN: i8([[[[1, 2]], [[3, 4]]]]), W: i8([[[[1, 1]]], [[[2, -1]]]])},
                {OUT: np.int32([[[[3]], [[2]]]])}, attrs(GroupCount=2),
                "depthwise: channel 0 sums, channel 1 2 x 3 - 4"),
    ),
    module=__name__))

"""DML_OPERATOR_DYNAMIC_QUANTIZE_LINEAR (FL 4_0): the scale and zero point that map the
input's range onto the output type's, and the input quantized with them (the page):

    OutputScale     = (InputMax - InputMin) / (Max - Min)
    OutputZeroPoint = Min - InputMin / OutputScale
    OutputTensor    = clamp(round(Input / OutputScale) + OutputZeroPoint, Min, Max)

with [Min, Max] = [0, 255] (UINT8) or [-128, 127] (INT8) and InputMax / InputMin the
largest and smallest input elements. Outputs in schema order: OutputTensor (the input's
Sizes), OutputScaleTensor (FLOAT32) and OutputZeroPointTensor (the output's type), each of
those two holding one element; all four tensors have one DimensionCount.

Where the page is silent, dmlsim computes in float32, as DirectML computes FLOAT32 (and as
ONNX DynamicQuantizeLinear does): the scale (InputMax - InputMin) / (Max - Min) and the
zero point's Min - InputMin / OutputScale are float32 operations; it rounds the zero point
half to even and saturates it to [Min, Max] (an integer tensor holds it), and quantizes
with the float32 scale and that integer zero point (as DEQUANTIZE_LINEAR of the outputs
would read them back; the quotient as ``_quantize.quotient``); ignores NaN inputs in InputMax and
InputMin (HLSL max/min) and quantizes them to the zero point. The range is the input's own,
as the page says: unlike ONNX DynamicQuantizeLinear it is not widened to include 0. A
constant input gives scale 0, and then ``_quantize``'s rules for x / 0 (saturation; NaN to
the zero point).
"""
import jax.numpy as jnp
import numpy as np

from .._core import dtypes
from .._core.registry import Example, OperatorDef, Sizes, register, same_type
from ._ieee import correctly_rounded
from ._quantize import quotient, quotient_reference, requantize, same_dimension_count
from ._reference import quantize_values

IN, OUT, OS, OZP = "InputTensor", "OutputTensor", "OutputScaleTensor", "OutputZeroPointTensor"
F32 = np.float32


def dynamic_quantize_linear(InputTensor, *, ctx):
    q = ctx.out_dtype()
    info = np.iinfo(q)
    x = jnp.asarray(InputTensor).astype(F32)
    hi, lo = jnp.nanmax(x), jnp.nanmin(x)
    div = correctly_rounded(lambda a, b: a / b)  # XLA divides float32 approximately on GPUs
    scale = div(hi - lo, jnp.asarray(int(info.max) - int(info.min), F32))
    zp = requantize((F32(info.min) - div(lo, scale)).astype(np.float64), None, q)
    y = requantize(quotient(x, scale), zp, q)
    return y, scale.reshape((1,) * x.ndim), zp.reshape((1,) * x.ndim)


def dynamic_quantize_linear_reference(InputTensor, *, ctx):
    q = ctx.out_dtype()
    info = np.iinfo(q)
    x = np.asarray(InputTensor).astype(F32)
    finite = x[~np.isnan(x)]
    hi, lo = finite.max(), finite.min()
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = F32(hi - lo) / F32(int(info.max) - int(info.min))
        zp = quantize_values(np.float64(F32(info.min) - lo / scale), None, q)
        y = quantize_values(quotient_reference(x, scale), zp, q)
    one = (1,) * x.ndim
    return y, np.full(one, scale, np.float32), np.full(one, zp, q)


def output_sizes(spec, check):
    x = spec.tensor[IN]
    one = Sizes((1,) * len(x.sizes), "the page: one element")
    return {OUT: Sizes(x.sizes, "InputTensor"), OS: one, OZP: one}


def _types(spec):
    q = spec.tensor[OUT].data_type if spec.tensor.get(OUT) else dtypes.UINT8
    return {OUT: q, OS: dtypes.FLOAT32, OZP: q}


f32, u8, i8 = np.float32, np.uint8, np.int8
register(OperatorDef(
    "DML_OPERATOR_DYNAMIC_QUANTIZE_LINEAR", dynamic_quantize_linear,
    dynamic_quantize_linear_reference, output_sizes=output_sizes,
    rules=(same_dimension_count(IN, OUT, OS, OZP), same_type(OUT, OZP)), output_types=_types,
    examples=(
        Example({IN: f32([-3, 0, 252, 1.5, 2.5])},
                {OUT: u8([0, 3, 255, 5, 5]), OS: f32([1]), OZP: u8([3])}, {},
                "UINT8: range [-3, 252] -> scale 255 / 255 = 1, zero point 3; 1.5 and 2.5 "
                "round half to even (2, 2)"),
        Example({IN: f32([0, 2, -3, -2.5, 1.34, 0.5])},
                {OUT: u8([153, 255, 0, 26, 221, 179]), OS: f32([5 / 255]), OZP: u8([153])}, {},
                "ONNX's DynamicQuantizeLinear test data: 0.5 / scale is 25.5 in float32 "
                "(25.4999... exactly) and rounds to 26"),
        Example({IN: f32([[1, 2.2], [3, 5]])},
                {OUT: i8([[-64, 12], [63, 127]]), OS: f32([[4 / 255]]), OZP: i8([[-128]])},
                {}, "INT8: the range [1, 5] is the input's own (not widened to 0): the zero "
                "point -128 - 63.75 saturates at -128; x / scale = 63.75, 140.25, 191.25, 318.75"),
        Example({IN: np.float16([-1, 0, 1.55, np.nan])},
                {OUT: u8([0, 100, 255, 100]), OS: f32([(np.float64(np.float16(1.55)) + 1) / 255]),
                 OZP: u8([100])}, {},
                "FLOAT16 input; NaN is ignored by the range and quantizes to the zero point"),
    ),
    module=__name__))

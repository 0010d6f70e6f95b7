"""DML_OPERATOR_ELEMENT_WISE_QUANTIZE_LINEAR:
f(input, scale, zero_point) = clamp(round(input / scale) + zero_point, Min, Max),
with [Min, Max] = [0, 255] for UINT8 output and [-128, 127] for INT8.

Scale and zero point are per element: all four tensors have the same Sizes, and a
per-tensor (or per-channel) scale is a tensor with zero strides. The scale's type is
FLOAT32 for an INT32 input and the input's type otherwise (FLOAT16 from FL 6_0). The
zero point has the output's type and is optional from FL 6_2 (absent means 0).
Rounding is half to even; see ``_quantize`` for NaN, infinities and a zero scale.
"""
import numpy as np

from .._core import dtypes
from .._core.registry import Example, OperatorDef, register, same_sizes, same_type, sizes_of
from ._quantize import quotient, quotient_reference, requantize
from ._reference import quantize_values

IN, S, ZP, OUT = "InputTensor", "ScaleTensor", "ZeroPointTensor", "OutputTensor"


def _scale_type(spec, check):
    t = spec.tensor
    want = dtypes.FLOAT32 if t[IN].data_type == dtypes.INT32 else t[IN].data_type
    if t[S].data_type != want:
        why = "an INT32 input needs a FLOAT32 scale" if t[IN].data_type == dtypes.INT32 else \
            "the scale must have the input's DataType"
        check.fail(f"ScaleTensor.DataType is {dtypes.name(t[S].data_type)} but "
                   f"InputTensor.DataType is {dtypes.name(t[IN].data_type)}; {why}")


def quantize_linear(InputTensor, ScaleTensor, ZeroPointTensor, *, ctx):
    return requantize(quotient(InputTensor, ScaleTensor), ZeroPointTensor, ctx.out_dtype())


def quantize_linear_reference(InputTensor, ScaleTensor, ZeroPointTensor, *, ctx):
    v = quotient_reference(InputTensor, ScaleTensor)
    return quantize_values(v, ZeroPointTensor, ctx.out_dtype())


def _ex(x, scale, zp, out, dtype=np.float32, scale_dtype=None, note=""):
    x = np.array(x, dtype)
    ins = {IN: x, S: np.full(x.shape, scale, scale_dtype or dtype)}
    if zp is not None:
        ins[ZP] = np.full(x.shape, zp, np.asarray(out).dtype)
    return Example(ins, {OUT: np.asarray(out)}, note=note)


register(OperatorDef(
    "DML_OPERATOR_ELEMENT_WISE_QUANTIZE_LINEAR", quantize_linear, quantize_linear_reference,
    output_sizes=sizes_of(IN, OUT),
    rules=(same_sizes(IN, S, ZP), same_type(OUT, ZP), _scale_type),
    output_types=lambda spec: {OUT: spec.tensor[ZP].data_type if spec.tensor.get(ZP)
                               else dtypes.UINT8},
    examples=(
        _ex([1.0, 3.0, 5.0, -1000.0, np.inf, -np.inf], 2.0, None,
            np.array([0, 2, 2, -128, 127, -128], np.int8),
            note="no zero point (FL 6_2): 0.5 -> 0, 1.5 -> 2, 2.5 -> 2; +-inf saturate"),
        _ex([-1.5, -0.5, 0.5, 1.5, 2.5, 300, -300, np.nan], 1.0, 128,
            np.array([126, 128, 128, 130, 130, 255, 0, 128], np.uint8),
            note="half to even (-2, -0, 0, 2, 2), + 128, saturated to [0, 255]; NaN -> zero point"),
        _ex([7, -7, 2**31 - 1, -2**31], 2.0, 0, np.array([4, -4, 127, -128], np.int8),
            dtype=np.int32, scale_dtype=np.float32, note="INT32 input takes a FLOAT32 scale"),
        _ex([0.25, 0.75, -0.0], 0.5, 10, np.array([10, 12, 10], np.uint8), dtype=np.float16,
            note="FLOAT16 input and scale (FL 6_0): 0.5 -> 0, 1.5 -> 2, then + 10"),
    ),
    module=__name__))

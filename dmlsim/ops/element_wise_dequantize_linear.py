"""DML_OPERATOR_ELEMENT_WISE_DEQUANTIZE_LINEAR: f(input, scale, zero_point) =
(input - zero_point) * scale.

All four tensors have the same Sizes (a per-tensor scale or zero point is a tensor with
zero strides). The zero point has the input's type and is optional from FL 6_2 (absent
means 0); the scale has the output's type (FLOAT32, or FLOAT16 from FL 6_0).
dmlsim computes in float64 and rounds once when it stores the result: input - zero_point
never wraps (INT32 2147483647 - (-2147483648) is 4294967295), and for 8- and 16-bit data
the result is the correctly rounded product. A scale of 0 is undefined behaviour per the
page; dmlsim gives (input - zero_point) * 0.
"""
from fractions import Fraction

import numpy as np

from .._core.registry import Example, OperatorDef, register, same_sizes, same_type, sizes_of
from ._quantize import f64

IN, S, ZP, OUT = "InputTensor", "ScaleTensor", "ZeroPointTensor", "OutputTensor"


def dequantize_linear(InputTensor, ScaleTensor, ZeroPointTensor, *, ctx):
    x = f64(InputTensor)
    if ZeroPointTensor is not None:
        x = x - f64(ZeroPointTensor)
    return x * f64(ScaleTensor)


def dequantize_linear_reference(InputTensor, ScaleTensor, ZeroPointTensor, *, ctx):
    """Exact: Python integers minus the zero point, times the scale as a fraction."""
    x = np.asarray(InputTensor)
    zp = np.zeros(x.shape, np.int64) if ZeroPointTensor is None else \
        np.broadcast_to(ZeroPointTensor, x.shape)
    scale = np.broadcast_to(np.asarray(ScaleTensor, np.float64), x.shape)
    flat = [float((int(v) - int(z)) * Fraction(float(s))) if np.isfinite(s) else
            (int(v) - int(z)) * float(s)
            for v, z, s in zip(x.reshape(-1), zp.reshape(-1), scale.reshape(-1))]
    return np.array(flat, np.float64).reshape(x.shape)


def _ex(x, scale, zp, out, dtype, out_dtype=np.float32, note=""):
    x = np.array(x, dtype)
    ins = {IN: x, S: np.full(x.shape, scale, out_dtype)}
    if zp is not None:
        ins[ZP] = np.array(zp, dtype)
    return Example(ins, {OUT: np.array(out, out_dtype)}, note=note)


register(OperatorDef(
    "DML_OPERATOR_ELEMENT_WISE_DEQUANTIZE_LINEAR", dequantize_linear,
    dequantize_linear_reference, output_sizes=sizes_of(IN, OUT),
    rules=(same_sizes(IN, S, ZP), same_type(IN, ZP), same_type(OUT, S)),
    output_types=lambda spec: {OUT: spec.tensor[S].data_type},
    examples=(
        _ex([0, 128, 255], 0.5, [128, 128, 128], [-64.0, 0.0, 63.5], np.uint8),
        _ex([2**31 - 1, -2**31], 1.0, [-2**31, 2**31 - 1], [4294967296.0, -4294967296.0],
            np.int32, note="input - zero_point does not wrap: +-4294967295, rounded to float32"),
        _ex([-128, 127, 0], 0.25, None, [-32.0, 31.75, 0.0], np.int8, np.float16,
            note="no zero point (FL 6_2); FLOAT16 scale and output"),
    ),
    module=__name__))

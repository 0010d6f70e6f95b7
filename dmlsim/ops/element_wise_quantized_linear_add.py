"""DML_OPERATOR_ELEMENT_WISE_QUANTIZED_LINEAR_ADD:

    AValue = (A - AZeroPoint) * AScale
    BValue = (B - BZeroPoint) * BScale
    OutputTensor = clamp(round((AValue + BValue) / OutputScale) + OutputZeroPoint, Min, Max)

with [Min, Max] the output type's range (UINT8 [0, 255], INT8 [-128, 127]). Zero points are
optional (absent means 0) and share their data tensor's type; scales are FLOAT32.

Where the page is loose, dmlsim chooses:
- "The expected number of elements ... is 1" for every scale and zero point: each must hold
  one value, i.e. every dimension has size 1 or stride 0, and broadcast to OutputTensor.
- The constraints name only a common DimensionCount; ATensor, BTensor and OutputTensor must
  also have the same Sizes (the operator adds "corresponding" elements).
- The arithmetic is float64 with round half to even, as QUANTIZE_LINEAR (see ``_quantize``).
"""
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_sizes, same_type, sizes_of
from ._quantize import f64, requantize, same_dimension_count, single_element
from ._reference import quantize_values

A, AS, AZ, B, BS, BZ, OS, OZ, OUT = (
    "ATensor", "AScaleTensor", "AZeroPointTensor", "BTensor", "BScaleTensor",
    "BZeroPointTensor", "OutputScaleTensor", "OutputZeroPointTensor", "OutputTensor")


def _dequantized(x, scale, zp):
    x = f64(x)
    return (x if zp is None else x - f64(zp)) * f64(scale)


def quantized_linear_add(ATensor, AScaleTensor, AZeroPointTensor, BTensor, BScaleTensor,
                         BZeroPointTensor, OutputScaleTensor, OutputZeroPointTensor, *, ctx):
    v = _dequantized(ATensor, AScaleTensor, AZeroPointTensor) + \
        _dequantized(BTensor, BScaleTensor, BZeroPointTensor)
    return requantize(v / f64(OutputScaleTensor), OutputZeroPointTensor, ctx.out_dtype())


def _value(x, scale, zp):
    """(x - zero point) * scale, element by element in float64."""
    x = np.asarray(x, np.float64)
    z = 0.0 if zp is None else np.broadcast_to(np.asarray(zp, np.float64), x.shape)
    return (x - z) * np.broadcast_to(np.asarray(scale, np.float64), x.shape)


def quantized_linear_add_reference(ATensor, AScaleTensor, AZeroPointTensor, BTensor,
                                   BScaleTensor, BZeroPointTensor, OutputScaleTensor,
                                   OutputZeroPointTensor, *, ctx):
    total = _value(ATensor, AScaleTensor, AZeroPointTensor) + \
        _value(BTensor, BScaleTensor, BZeroPointTensor)
    v = total / np.broadcast_to(np.asarray(OutputScaleTensor, np.float64), total.shape)
    return quantize_values(v, OutputZeroPointTensor, ctx.out_dtype())


def _one(value, dtype):
    return np.array([value], dtype)


register(OperatorDef(
    "DML_OPERATOR_ELEMENT_WISE_QUANTIZED_LINEAR_ADD", quantized_linear_add,
    quantized_linear_add_reference, output_sizes=sizes_of(A, OUT),
    rules=(same_dimension_count(A, AS, AZ, B, BS, BZ, OS, OZ, OUT), same_sizes(A, B),
           same_type(A, AZ), same_type(B, BZ), same_type(OUT, OZ),
           single_element(OUT, AS, AZ, BS, BZ, OS, OZ)),
    examples=(
        Example({A: np.array([10, 20, 255], np.uint8), AS: _one(0.5, np.float32),
                 AZ: _one(10, np.uint8), B: np.array([0, 4, 0], np.uint8),
                 BS: _one(0.25, np.float32), OS: _one(1.0, np.float32),
                 OZ: _one(100, np.uint8)},
                {OUT: np.array([100, 106, 222], np.uint8)},
                note="A: 0, 5, 122.5; B: 0, 1, 0; sums 0, 6, 122.5 round (half to even) to "
                     "0, 6, 122; + 100; no BZeroPointTensor"),
        Example({A: np.array([127, -128, 0, 0], np.int8), AS: _one(1.0, np.float32),
                 B: np.array([127, -128, 1, 3], np.int8), BS: _one(0.5, np.float32),
                 OS: _one(1.0, np.float32)},
                {OUT: np.array([127, -128, 0, 2], np.int8)},
                note="190.5 and -192 saturate; 0.5 -> 0 and 1.5 -> 2; no zero points"),
    ),
    module=__name__))

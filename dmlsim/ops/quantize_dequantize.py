"""DML_OPERATOR_QUANTIZE and DML_OPERATOR_DEQUANTIZE (FL 6_3), per tensor, per axis or per
block:

    QUANTIZE    Output = clamp(round(Input / Scale) + ZeroPoint, Min, Max)
    DEQUANTIZE  Output = (Input - ZeroPoint) x Scale

The pages are "TBD" beyond the struct and tables; dmlsim reads them as ONNX's Quantize-
/DequantizeLinear and the element-wise pages (formulas and rounding: ``_quantize``):
- QuantizationType SCALE takes QuantizationTensors [Scale] (QuantizationTensorCount 1),
  SCALE_ZERO_POINT [Scale, ZeroPoint] (count 2); NONE leaves nothing to quantize with and is
  E_INVALIDARG.
- Every tensor has the input's DimensionCount (the page's constraint). Along each dimension
  a quantization tensor's size equals the input's (per element, or broadcast with a zero
  stride), or is 1 (per tensor along it), or divides it: then each of its values covers a
  block of input size / its size consecutive elements (blocked quantization).
- The scale is FLOAT32 or FLOAT16 whatever the other tensors' float type (ONNX lets the
  scale's precision differ from the data's); the zero point has the integer tensor's type.
The packed 4-bit types INT4 / UINT4 (two per byte, low nibble first: ``_core.packed4``) take
the same formulas: QUANTIZE saturates to [-8, 7] / [0, 15].
"""
import numpy as np

from .._core import dtypes
from .._core.registry import Example, OperatorDef, Sizes, register
from ._quantize import f64, quotient, quotient_reference, requantize
from ._quantize_blocks import blocks, blocks_reference
from ._reference import quantize_values
from .._schema.members import members

IN, QT, OUT = "InputTensor", "QuantizationTensors", "OutputTensor"
SCALE, SCALE_ZERO_POINT = members("DML_QUANTIZATION_TYPE", "SCALE SCALE_ZERO_POINT")
QT_NAMES = (f"{QT}[0]", f"{QT}[1]")


def quantize(InputTensor, QuantizationTensors, *, QuantizationType, ctx):
    s, zp, *_ = blocks(QuantizationTensors, InputTensor.shape)
    return requantize(quotient(InputTensor, s), zp, ctx.out_dtype())


def quantize_reference(InputTensor, QuantizationTensors, *, QuantizationType, ctx):
    x = np.asarray(InputTensor)
    s, zp, *_ = blocks_reference(QuantizationTensors, x.shape)
    return quantize_values(quotient_reference(x, s), zp, ctx.out_dtype())


def dequantize(InputTensor, QuantizationTensors, *, QuantizationType, ctx):
    s, zp, *_ = blocks(QuantizationTensors, InputTensor.shape)
    x = f64(InputTensor)
    return (x if zp is None else x - f64(zp)) * f64(s)


def dequantize_reference(InputTensor, QuantizationTensors, *, QuantizationType, ctx):
    x = np.asarray(InputTensor).astype(np.int64)
    s, zp, *_ = blocks_reference(QuantizationTensors, x.shape)
    d = x if zp is None else x - np.asarray(zp).astype(np.int64)  # exact in int64
    return d.astype(np.float64) * np.asarray(s, np.float64)  # one rounding: 9 x 24 bits < 53


def rules(int_field):
    def rule(spec, check):
        t, a = spec.tensor, spec.attr
        want = {SCALE: 1, SCALE_ZERO_POINT: 2}.get(a["QuantizationType"])
        if want is None:
            check.fail(f"QuantizationType is {a['QuantizationType']}; it must be "
                       "DML_QUANTIZATION_TYPE_SCALE (1) or _SCALE_ZERO_POINT (2)")
        if len(t[QT]) != want:
            check.fail(f"QuantizationTensorCount is {len(t[QT])} but QuantizationType "
                       f"{a['QuantizationType']} takes {want} tensor(s): [Scale"
                       f"{', ZeroPoint' if want == 2 else ''}]")
        x = t[IN]
        for i, (q, role) in enumerate(zip(t[QT], ("Scale", "ZeroPoint"))):
            if len(q.sizes) != len(x.sizes):
                check.fail(f"{QT}[{i}] ({role}).DimensionCount is {len(q.sizes)} but "
                           f"InputTensor.DimensionCount is {len(x.sizes)}; they must match")
            for d, (s, n) in enumerate(zip(q.sizes, x.sizes)):
                if s == 0 or n % s:
                    check.fail(f"{QT}[{i}] ({role}).Sizes[{d}] is {s}; it must be 1, "
                               f"InputTensor.Sizes[{d}] = {n} or a divisor of it (blocks)")
        scale, zp = (list(t[QT]) + [None])[:2]
        if scale is not None and scale.data_type not in dtypes.FLOAT_TYPES:
            check.fail(f"{QT}[0] (Scale).DataType is {dtypes.name(scale.data_type)}; the "
                       "scale must be FLOAT32 or FLOAT16")
        if zp is not None and t.get(int_field) is not None and \
                zp.data_type != t[int_field].data_type:
            check.fail(f"{QT}[1] (ZeroPoint).DataType is {dtypes.name(zp.data_type)} but "
                       f"{int_field}.DataType is {dtypes.name(t[int_field].data_type)}; they "
                       "must match")
    return rule


def same_sizes(spec, check):
    return {OUT: Sizes(spec.tensor[IN].sizes, "InputTensor")}


f32, f16, u8, i8, Q = np.float32, np.float16, np.uint8, np.int8, {"QuantizationType": 2}


def i4(v):
    return np.array(v, dtypes.NUMPY[dtypes.INT4])


def u4(v):
    return np.array(v, dtypes.NUMPY[dtypes.UINT4])



register(OperatorDef(
    "DML_OPERATOR_QUANTIZE", quantize, quantize_reference, output_sizes=same_sizes,
    rules=(rules(OUT),),
    output_types=lambda spec: {OUT: spec.tensor[QT][1].data_type if len(spec.tensor[QT]) > 1
                               else dtypes.INT8},
    examples=(
        Example({IN: f32([[1, 3, 5, -1000]]), QT: [f32([[2]])]},
                {OUT: i8([[0, 2, 2, -128]])}, {"QuantizationType": SCALE},
                "SCALE (no zero point), per tensor: 0.5, 1.5, 2.5 half to even; saturates"),
        Example({IN: f32([[1, 2], [3, 4], [5, 6], [7, 8]]), QT: [f32([[1], [0.5]]),
                                                                 u8([[10], [20]])]},
                {OUT: u8([[11, 12], [13, 14], [30, 32], [34, 36]])}, Q,
                "blocked along dimension 0 (blocks of 2 rows): scales [1, 0.5], zero points "
                "[10, 20]"),
        Example({IN: f16([[0.25, 0.75]]), QT: [f16([[0.5, 0.25]]), u8([[0, 1]])]},
                {OUT: u8([[0, 4]])}, Q, "FLOAT16, per axis 1: 0.5 -> 0; 3 + 1"),
        Example({IN: f32([[1, 3, 5, -1000, 100]]), QT: [f32([[2]]), i4([[0]])]},
                {OUT: i4([[0, 2, 2, -8, 7]])}, Q, "INT4 (5 values: 3 bytes) saturates to "
                "[-8, 7]"),
        Example({IN: f32([[-3, 0, 2.5, 30]]), QT: [f32([[0.5]]), u4([[6]])]},
                {OUT: u4([[0, 6, 11, 15]])}, Q, "UINT4 with zero point 6: -6 + 6, 5 + 6; "
                "saturates to [0, 15]"),
    ), module=__name__))
register(OperatorDef(
    "DML_OPERATOR_DEQUANTIZE", dequantize, dequantize_reference, output_sizes=same_sizes,
    rules=(rules(IN),),
    output_types=lambda spec: {OUT: spec.tensor[QT][0].data_type},
    examples=(
        Example({IN: i8([[1, 2, 3, 4]]), QT: [f32([[1, 10]])]}, {OUT: f32([[1, 2, 30, 40]])},
                {"QuantizationType": SCALE}, "SCALE only, blocks of 2 along dimension 1"),
        Example({IN: u8([[0, 128, 255]]), QT: [f32([[0.5]]), u8([[128]])]},
                {OUT: f32([[-64, 0, 63.5]])}, Q, "per tensor: (x - 128) x 0.5"),
        Example({IN: i8([[-128], [127]]), QT: [f16([[2], [1]]), i8([[127], [-128]])]},
                {OUT: f16([[-510], [255]])}, Q, "FLOAT16 output, per axis 0: the difference "
                "-255 / 255 never wraps"),
        Example({IN: u4([[1, 2, 3, 4, 5]]), QT: [f32([[1]])]}, {OUT: f32([[1, 2, 3, 4, 5]])},
                {"QuantizationType": SCALE}, "UINT4 [1, 2, 3, 4, 5]: the page's bytes "
                "[0x21, 0x43, 0x05]"),
        Example({IN: i4([[-8, -1, 7]]), QT: [f32([[0.25]]), i4([[-1]])]},
                {OUT: f32([[-1.75, 0, 2]])}, Q, "INT4 with zero point -1: (x + 1) x 0.25"),
    ), module=__name__))

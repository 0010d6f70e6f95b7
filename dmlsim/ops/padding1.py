"""DML_OPERATOR_PADDING1 (FL 5_0): padding with an exactly typed padding value.

As DML_OPERATOR_PADDING (same modes, sizes and folding; see ``padding``), but the value is a
DML_SCALAR_UNION read as PaddingValueDataType, which must equal OutputTensor.DataType
(exact for 64-bit integers; for FLOAT16 the union's low two bytes are the half's bits). The
type must match even when the mode ignores the value.
"""
import numpy as np

from .._core import dtypes
from .._core.registry import Example, OperatorDef, register
from ._movement import bits_scalar
from ._padding import CONSTANT, IN, OUT, RULES, examples, pad, padding_sizes, reference
from ._scalar import scalar_type_rule, scalar_value


def padding1(InputTensor, *, PaddingMode, PaddingValueDataType, PaddingValue, StartPadding,
             EndPadding, ctx):
    out = ctx.outputs[OUT]
    value = scalar_value(PaddingValue, PaddingValueDataType)
    return pad(InputTensor, StartPadding, EndPadding, PaddingMode,
               bits_scalar(value, out.np_dtype))


def padding1_reference(InputTensor, *, PaddingMode, PaddingValueDataType, PaddingValue,
                       StartPadding, EndPadding, ctx):
    value = scalar_value(PaddingValue, PaddingValueDataType)
    return reference(InputTensor, StartPadding, EndPadding, PaddingMode, value)


F32 = {"PaddingValueDataType": dtypes.FLOAT32}
register(OperatorDef(
    "DML_OPERATOR_PADDING1", padding1, padding1_reference, output_sizes=padding_sizes,
    rules=RULES + (scalar_type_rule("PaddingValueDataType", OUT),),
    examples=examples({**F32, "PaddingValue": np.float32(9)}, F32) + (
        Example({IN: np.array([1], np.int64)}, {OUT: np.array([2**62 + 1, 1], np.int64)},
                {"PaddingMode": CONSTANT, "PaddingValueDataType": dtypes.INT64,
                 "PaddingValue": np.int64(2**62 + 1), "StartPadding": (1,), "EndPadding": (0,)},
                "an INT64 padding value is exact"),),
    module=__name__))

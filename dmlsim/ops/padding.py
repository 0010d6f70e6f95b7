"""DML_OPERATOR_PADDING: inflate a tensor with a constant or mirrored values on its edges.

OutputTensor.Sizes[i] = InputTensor.Sizes[i] + StartPadding[i] + EndPadding[i]. Modes
(DML_PADDING_MODE): CONSTANT (PaddingValue), EDGE (the edge values), REFLECTION (mirrored
at the edge, the edge itself not repeated), SYMMETRIC (mirrored, the edge repeated; from FL
3_0), WRAP (periodic, the tensor repeated; from FL 6_4: the feature-level history's later word,
which the mode's enum page does not list yet). Paddings wider than the input fold over again, periodically (the page's examples 3
and 4): REFLECTION has period 2(n - 1), SYMMETRIC 2n. PaddingValue is a FLOAT, converted
to the tensor type "as a C cast" (10.6 becomes 10 for integers; see
``_movement.tensor_type_value``). PADDING1 (its own module) types the value exactly.

Where the page is silent: REFLECTION of a dimension of size 1 repeats that element; a mode
newer than the device's feature level (SYMMETRIC before 3_0) or not a DML_PADDING_MODE is
E_INVALIDARG. Every copied value keeps its bits.
"""
import numpy as np

from .._core.registry import Example, OperatorDef, register
from ._movement import bits_scalar, tensor_type_value
from ._padding import CONSTANT, IN, OUT, RULES, examples, pad, padding_sizes, reference


def padding(InputTensor, *, PaddingMode, PaddingValue, StartPadding, EndPadding, ctx):
    out = ctx.outputs[OUT]
    value = tensor_type_value(PaddingValue, out.data_type)
    return pad(InputTensor, StartPadding, EndPadding, PaddingMode,
               bits_scalar(value, out.np_dtype))


def padding_reference(InputTensor, *, PaddingMode, PaddingValue, StartPadding, EndPadding, ctx):
    value = tensor_type_value(PaddingValue, ctx.outputs[OUT].data_type)
    return reference(InputTensor, StartPadding, EndPadding, PaddingMode, value)


register(OperatorDef(
    "DML_OPERATOR_PADDING", padding, padding_reference, output_sizes=padding_sizes, rules=RULES,
    examples=examples({"PaddingValue": 9.0}) + (
        Example({IN: np.array([1, 2], np.int32)}, {OUT: np.array([10, 1, 2, 10, 10], np.int32)},
                {"PaddingMode": CONSTANT, "PaddingValue": 10.6, "StartPadding": (1,),
                 "EndPadding": (2,)}, "10.6 becomes 10 for an integer tensor"),),
    module=__name__))

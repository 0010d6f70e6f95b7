"""DML_OPERATOR_ELEMENT_WISE_ADD1 (FL 2_0): f(a, b) = FusedActivation(a + b).

ATensor, BTensor and OutputTensor have the same DataType, DimensionCount and Sizes (FLOAT32,
FLOAT16). The optional FusedActivation (a DML_OPERATOR_DESC with NULL tensors, checked at
CreateOperator by ``validation.fused_activations``) is applied by the registry to the sum
while it is still in the compute type: FLOAT16 adds and activates in float32 and rounds once.
"""
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_sizes, same_type, sizes_of
from ._elementwise import OUT, upcast

A, B = "ATensor", "BTensor"


def add1(ATensor, BTensor, *, ctx):
    return upcast(ATensor, ctx) + upcast(BTensor, ctx)


def add1_reference(ATensor, BTensor, *, ctx):
    return np.asarray(ATensor, np.float64) + np.asarray(BTensor, np.float64)


register(OperatorDef(
    "DML_OPERATOR_ELEMENT_WISE_ADD1", add1, add1_reference, output_sizes=sizes_of(A, OUT),
    rules=(same_sizes(A, B), same_type(A, B, OUT)),
    examples=(
        Example({A: np.array([[1.0, -2.0], [np.inf, -0.0]], np.float32),
                 B: np.array([[10.0, 0.5], [-np.inf, -0.0]], np.float32)},
                {OUT: np.array([[11.0, -1.5], [np.nan, -0.0]], np.float32)},
                note="no FusedActivation: a + b; inf + -inf = NaN; -0 + -0 = -0"),
        Example({A: np.array([65504.0, 0.1], np.float16), B: np.array([-1.0, 0.2], np.float16)},
                {OUT: np.array([65504.0, 0.2998], np.float16)},
                note="FLOAT16 adds in float32 and rounds once: 65503 rounds to 65504"),
    ),
    module=__name__))

"""ACTIVATION_IDENTITY and ACTIVATION_LINEAR.

- IDENTITY: f(x) = x, a pure copy: every bit survives (NaN payloads, -0.0, denormals), also
  for FLOAT16 (there is nothing to compute, so nothing is widened).
- LINEAR: f(x) = Alpha * x + Beta, two roundings in the compute type (no fused multiply-add
  is promised), hence 1 ULP for FLOAT32 and FLOAT16 against the float64 reference. Alpha and
  Beta are C FLOATs (rounded to float32).
"""
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_type, sizes_of
from ._activation import const, f32, float_unary
from ._elementwise import IN, OUT

f32a = np.float32
# A quiet FLOAT16 NaN with a payload, then -65504 and the smallest denormal, by their bits.
HALF_BITS = np.array([0x7E55, 0xFBFF, 0x0001], np.uint16).view(np.float16)



def identity(InputTensor, *, ctx):
    return InputTensor


def identity_reference(InputTensor, *, ctx):
    return np.array(InputTensor, copy=True)


register(OperatorDef(
    "DML_OPERATOR_ACTIVATION_IDENTITY", identity, identity_reference,
    output_sizes=sizes_of(IN, OUT), rules=(same_type(IN, OUT),), module=__name__,
    examples=(
        Example({IN: f32a([[1.5, -0.0], [np.inf, 1e-45]])},
                {OUT: f32a([[1.5, -0.0], [np.inf, 1e-45]])},
                note="-0.0 and the smallest denormal are copied"),
        Example({IN: HALF_BITS}, {OUT: HALF_BITS.copy()}, note="NaN payload kept"),
    ),
))

float_unary(
    "DML_OPERATOR_ACTIVATION_LINEAR",
    lambda x, a: const(a, "Alpha", x) * x + const(a, "Beta", x),
    lambda x, a: f32(a, "Alpha") * x + f32(a, "Beta"),
    ulp={"FLOAT32": 1, "FLOAT16": 1},
    examples=(
        Example({IN: f32a([0, 1, 2.5, -3, np.inf])}, {OUT: f32a([-1, 1, 4, -7, np.inf])},
                {"Alpha": 2.0, "Beta": -1.0}),
        Example({IN: np.float16([[1, 2], [-4, 0]])},
                {OUT: np.float16([[0.75, 1.25], [-1.75, 0.25]])},
                {"Alpha": 0.5, "Beta": 0.25}),
    ),
)

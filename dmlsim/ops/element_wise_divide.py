"""DML_OPERATOR_ELEMENT_WISE_DIVIDE: f(a, b) = a / b; "for integer divisions, the result is
truncated" (toward zero, as C).

ATensor, BTensor and OutputTensor have the same DataType, DimensionCount and Sizes. Floats
follow IEEE (x / +-0 = +-inf, 0 / 0 = NaN) and are correctly rounded; FLOAT16 computes in
float32 and rounds once. Where the page is silent (see ``_numeric``): an integer divided by
zero gives a quotient with every bit set (-1 signed, the type's maximum unsigned), as D3D's
``udiv`` does, and INT_MIN / -1 wraps to INT_MIN. Nothing faults.
"""
import numpy as np

from .._core.registry import Example
from ._elementwise import OUT, binary
from ._ieee import correctly_rounded
from ._numeric import int_div, is_int, np_int_div

A, B = "ATensor", "BTensor"


def _reference(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if is_int(a.dtype):
        return np_int_div(a, b, a.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        return a.astype(np.float64) / b.astype(np.float64)


binary(
    "DML_OPERATOR_ELEMENT_WISE_DIVIDE",
    lambda a, b: int_div(a, b) if is_int(a.dtype) else correctly_rounded(lambda p, q: p / q)(a, b),
    _reference,
    ulp={"FLOAT32": 0, "FLOAT16": 0},
    examples=(
        Example({A: np.array([1.0, -1.0, 0.0, 7.0, -0.0, np.inf], np.float32),
                 B: np.array([0.0, 0.0, 0.0, 2.0, 5.0, np.inf], np.float32)},
                {OUT: np.array([np.inf, -np.inf, np.nan, 3.5, -0.0, np.nan], np.float32)},
                note="IEEE: x / 0 = inf, 0 / 0 = NaN, inf / inf = NaN"),
        Example({A: np.array([7, -7, 7, -7, -2**31, 5, -5], np.int32),
                 B: np.array([2, 2, -2, -2, -1, 0, 0], np.int32)},
                {OUT: np.array([3, -3, -3, 3, -2**31, -1, -1], np.int32)},
                note="truncation toward zero; INT_MIN / -1 wraps; x / 0 = -1 (all bits set)"),
        Example({A: np.array([7, 255, 9], np.uint8), B: np.array([0, 2, 10], np.uint8)},
                {OUT: np.array([255, 127, 0], np.uint8)}, note="UINT8: x / 0 = 255"),
        Example({A: np.array([1.0, 65504.0], np.float16), B: np.array([3.0, 0.5], np.float16)},
                {OUT: np.array([0.3333, np.inf], np.float16)}, note="65504 / 0.5 overflows half"),
    ),
)

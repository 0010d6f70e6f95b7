"""DML_OPERATOR_ELEMENT_WISE_MODULUS_TRUNCATE and _MODULUS_FLOOR (FL 2_1), one row each.

TRUNCATE is C's ``%`` / ``fmod``: f(a, b) = a - b * trunc(a / b), the sign of the dividend.
FLOOR is Python's ``%``: f(a, b) = a - b * floor(a / b), the sign of the divisor.
ATensor, BTensor and OutputTensor have the same DataType, DimensionCount and Sizes.

Floats are exact: the remainder is computed as C ``fmod`` (FLOOR then adds b when the signs
differ, and a zero result takes the divisor's sign, as CPython's float ``%``), not by
evaluating ``a / b`` in floating point, which loses the remainder for large quotients. So
x % 0, inf % y are NaN; TRUNCATE x % inf = x; FLOOR -5 % inf = inf (Python's answer).
Integers (unsigned: both flavours agree) follow ``_numeric``: x % 0 = x (the formula with the
quotient -1 that DIVIDE gives for x / 0), INT_MIN % -1 = 0.
"""
import numpy as np

from .._core.registry import Example
from ._elementwise import OUT, binary
from ._numeric import float_rem, int_rem, is_int, np_int_rem

A, B = "ATensor", "BTensor"
NAN, INF = np.nan, np.inf


def _reference(floor):
    def ref(a, b):
        a, b = np.asarray(a), np.asarray(b)
        if is_int(a.dtype):
            return np_int_rem(a, b, a.dtype, floor)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (np.mod if floor else np.fmod)(a.astype(np.float64), b.astype(np.float64))
    return ref


def _ex(a, b, out, dtype, note=""):
    return Example({A: np.array(a, dtype), B: np.array(b, dtype)}, {OUT: np.array(out, dtype)},
                   note=note)


ROWS = (
    ("TRUNCATE", False, (
        _ex([7, -7, 7, -7, -128, 5, -5], [3, 3, -3, -3, -1, 0, 0], [1, -1, 1, -1, 0, 5, -5],
            np.int8,
            note="sign of the dividend; x % 0 = x; -128 % -1 = 0"),
        _ex([5.5, -5.5, 5.5, -5.5, -4.0, 5.0, INF, 5.0], [2, 2, -2, -2, 2, 0, 2, INF],
            [1.5, -1.5, 1.5, -1.5, -0.0, NAN, NAN, 5.0], np.float32, "C fmod"),
        _ex([7, 200], [3, 7], [1, 4], np.uint8),
        _ex([65504.0, -7.5], [3.0, 2.0], [2.0, -1.5], np.float16, "65504 = 21834 * 3 + 2"),
    )),
    ("FLOOR", True, (
        _ex([7, -7, 7, -7, -128, 5, -5], [3, 3, -3, -3, -1, 0, 0], [1, 2, -2, -1, 0, 5, -5],
            np.int8,
            note="sign of the divisor (Python); x % 0 = x; -128 % -1 = 0"),
        _ex([5.5, -5.5, 5.5, -5.5, -4.0, 4.0, 5.0, -5.0, 5.0], [2, 2, -2, -2, 2, -2, INF, INF, 0],
            [1.5, 0.5, -0.5, -1.5, 0.0, -0.0, 5.0, INF, NAN], np.float32,
            "Python float %: zero takes the divisor's sign; -5 % inf = inf"),
        _ex([2**32 - 1, 5], [2**31, 7], [2**31 - 1, 5], np.uint32, "unsigned: as TRUNCATE"),
        _ex([-7.5, 65504.0], [2.0, -3.0], [0.5, -1.0], np.float16),
    )),
)

for _name, _floor, _examples in ROWS:
    binary(f"DML_OPERATOR_ELEMENT_WISE_MODULUS_{_name}",
           lambda a, b, fl=_floor: int_rem(a, b, fl) if is_int(a.dtype) else float_rem(a, b, fl),
           _reference(_floor), examples=_examples, ulp={"FLOAT32": 0, "FLOAT16": 0})

"""The comparisons LOGICAL_EQUALS, LOGICAL_GREATER_THAN, LOGICAL_LESS_THAN and
LOGICAL_GREATER_THAN_OR_EQUAL, one table row each: 1 where the comparison holds, else 0.

    LOGICAL_EQUALS                 f(a, b) = (a == b)
    LOGICAL_GREATER_THAN           f(a, b) = (a > b)
    LOGICAL_LESS_THAN              f(a, b) = (a < b)
    LOGICAL_GREATER_THAN_OR_EQUAL  f(a, b) = (a >= b)

(LOGICAL_LESS_THAN_OR_EQUAL has its own module.) ATensor and BTensor share a DataType; the
output is UINT8 or UINT32, per the support tables. Comparisons are IEEE: any comparison
with NaN is false (NaN == NaN is 0), and -0.0 == +0.0. Integers, 64-bit included, compare
exactly in their own type; FLOAT16 compares in float32, which is exact.
"""
import operator

import numpy as np

from .._core.registry import Example, same_type
from ._elementwise import OUT, binary
from ._scalar import logical_output

A, B = "ATensor", "BTensor"
NAN, INF = np.nan, np.inf


def _ab(a, b, out, dtype, out_dtype=np.uint8, note=""):
    return Example({A: np.array(a, dtype), B: np.array(b, dtype)},
                   {OUT: np.array(out, out_dtype)}, note=note)


# name, operator, examples
_ROWS = (
    ("EQUALS", operator.eq, (
        _ab([1, NAN, -0.0, INF], [1, NAN, 0.0, INF], [1, 0, 1, 1], np.float32,
            note="NaN == NaN is false; -0.0 == +0.0 is true"),
        _ab([2**63 - 1, -2**63], [2**63 - 2, -2**63], [0, 1], np.int64, np.uint32,
            note="64-bit integers compare exactly (these differ in the last bit)"),
    )),
    ("GREATER_THAN", operator.gt, (
        _ab([2, NAN, 1, INF], [1, 0, NAN, 65504], [1, 0, 0, 1], np.float16,
            note="NaN > x and x > NaN are false"),
        _ab([-128, 127, 0], [127, -128, 0], [0, 1, 0], np.int8, np.uint32),
    )),
    ("LESS_THAN", operator.lt, (
        _ab([-INF, NAN, -0.0, 1], [INF, NAN, 0.0, 2], [1, 0, 0, 1], np.float32,
            note="-0.0 < +0.0 is false"),
        _ab([0, 0xFFFFFFFF], [0xFFFFFFFF, 0], [1, 0], np.uint32,
            note="unsigned: 0xFFFFFFFF is the largest, not -1"),
    )),
    ("GREATER_THAN_OR_EQUAL", operator.ge, (
        _ab([1, 1, NAN, 0.0], [1, 2, NAN, -0.0], [1, 0, 0, 1], np.float32,
            note="NaN >= NaN is false"),
        _ab([2**64 - 1, 2**63], [2**64 - 2, 2**63 + 1], [1, 0], np.uint64, np.uint32,
            note="64-bit unsigned compare exactly"),
    )),
)


def _register(suffix, op, examples):
    binary(f"DML_OPERATOR_ELEMENT_WISE_LOGICAL_{suffix}",
           lambda a, b: op(a, b),
           lambda a, b: op(np.asarray(a), np.asarray(b)).astype(np.float64),
           rules=(same_type(A, B),), examples=examples, output_types=logical_output)


for _row in _ROWS:
    _register(*_row)

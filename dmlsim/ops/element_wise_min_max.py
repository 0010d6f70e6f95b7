"""ELEMENT_WISE_MAX and ELEMENT_WISE_MIN, one row each: f(a, b) = max(a, b) / min(a, b).

ATensor, BTensor and OutputTensor have the same DataType, DimensionCount and Sizes; integers
(FL 2_1; 64-bit from 5_0) compare exactly in their own type. The pages do not say what a NaN
does; dmlsim follows HLSL's max/min on Direct3D hardware (IEEE 754-2008 maxNum/minNum): a NaN
operand is ignored and the result is NaN only when both are NaN. Between -0.0 and +0.0, MAX
gives +0.0 and MIN -0.0 (IEEE 754-2019 maximumNumber ordering), whatever the operand order.
"""
import numpy as np

from .._core.registry import Example
from ._elementwise import OUT, binary
from ._ieee import fmax, fmin
from ._reference import ref_max, ref_min

A, B = "ATensor", "BTensor"
NAN = np.nan


def _ex(a, b, out, dtype, note=""):
    return Example({A: np.array(a, dtype), B: np.array(b, dtype)}, {OUT: np.array(out, dtype)},
                   note=note)


ROWS = (
    ("MAX", fmax, ref_max, (
        _ex([NAN, 1.0, NAN, -0.0, 0.0, -np.inf], [2.0, NAN, NAN, 0.0, -0.0, -5.0],
            [2.0, 1.0, NAN, 0.0, 0.0, -5.0], np.float32,
            "a NaN operand is ignored (maxNum); max(-0, +0) = +0"),
        _ex([-2**63, 2**63 - 1], [-2**63 + 1, 0], [-2**63 + 1, 2**63 - 1], np.int64),
        _ex([0, 255], [200, 1], [200, 255], np.uint8),
        _ex([NAN, 65504.0], [-1.0, -65504.0], [-1.0, 65504.0], np.float16),
    )),
    ("MIN", fmin, ref_min, (
        _ex([NAN, 1.0, NAN, -0.0, 0.0, np.inf], [2.0, NAN, NAN, 0.0, -0.0, 5.0],
            [2.0, 1.0, NAN, -0.0, -0.0, 5.0], np.float32,
            "a NaN operand is ignored (minNum); min(-0, +0) = -0"),
        _ex([2**64 - 1, 0], [2**64 - 2, 1], [2**64 - 2, 0], np.uint64),
        _ex([-128, 5], [127, -5], [-128, -5], np.int8),
        _ex([NAN, 65504.0], [-1.0, -65504.0], [-1.0, -65504.0], np.float16),
    )),
)

for _name, _fn, _ref, _examples in ROWS:
    binary(f"DML_OPERATOR_ELEMENT_WISE_{_name}", _fn, _ref, examples=_examples,
           ulp={"FLOAT32": 0, "FLOAT16": 0}, module=__name__)

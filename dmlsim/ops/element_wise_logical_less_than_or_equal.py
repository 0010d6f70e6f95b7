"""DML_OPERATOR_ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL: f(a, b) = (a <= b), 1 or 0.

A and B share a data type; the output is UINT8 or UINT32 (the support table); NaN compares
false.
"""
import numpy as np

from .._core.registry import Example, same_type
from ._elementwise import OUT, binary
from ._scalar import logical_output

binary(
    "DML_OPERATOR_ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL",
    lambda a, b: a <= b,
    lambda a, b: (np.asarray(a) <= np.asarray(b)).astype(np.float64),
    rules=(same_type("ATensor", "BTensor"),), output_types=logical_output,
    examples=(
        Example({"ATensor": np.array([1, 2, 3, np.nan], np.float32),
                 "BTensor": np.array([2, 2, 2, 0], np.float32)},
                {OUT: np.array([1, 1, 0, 0], np.uint8)}, note="NaN <= x is false"),
        Example({"ATensor": np.array([-1, 5], np.int8), "BTensor": np.array([-1, -5], np.int8)},
                {OUT: np.array([1, 0], np.uint32)}),
    ),
)

"""DML_OPERATOR_ELEMENT_WISE_ADD: f(a, b) = a + b (integers wrap)."""
import numpy as np

from .._core.registry import Example
from ._elementwise import OUT, binary

binary(
    "DML_OPERATOR_ELEMENT_WISE_ADD",
    lambda a, b: a + b,
    lambda a, b: np.asarray(a, np.float64) + np.asarray(b, np.float64),
    examples=(
        Example({"ATensor": np.array([1, 2, 3, 4], np.float32),
                 "BTensor": np.array([10, 20, 30, 40], np.float32)},
                {OUT: np.array([11, 22, 33, 44], np.float32)}),
        Example({"ATensor": np.array([250, 5], np.uint8), "BTensor": np.array([10, 5], np.uint8)},
                {OUT: np.array([4, 10], np.uint8)}, note="UINT8 wraps: 250 + 10 = 4"),
        Example({"ATensor": np.array([np.inf, 1.0], np.float32),
                 "BTensor": np.array([-np.inf, -1.0], np.float32)},
                {OUT: np.array([np.nan, 0.0], np.float32)}, note="inf + -inf is NaN"),
    ),
)

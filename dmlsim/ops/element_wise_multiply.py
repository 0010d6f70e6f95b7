"""DML_OPERATOR_ELEMENT_WISE_MULTIPLY: f(a, b) = a * b (integers wrap)."""
import numpy as np

from .._core.registry import Example
from ._elementwise import OUT, binary

binary(
    "DML_OPERATOR_ELEMENT_WISE_MULTIPLY",
    lambda a, b: a * b,
    lambda a, b: np.asarray(a, np.float64) * np.asarray(b, np.float64),
    examples=(
        Example({"ATensor": np.array([[1, 2], [3, 4]], np.float32),
                 "BTensor": np.array([[2, 2], [-1, 0.5]], np.float32)},
                {OUT: np.array([[2, 4], [-3, 2]], np.float32)}),
        Example({"ATensor": np.array([2**30, -3], np.int32), "BTensor": np.array([4, 5], np.int32)},
                {OUT: np.array([0, -15], np.int32)}, note="INT32 wraps: 2^30 * 4 = 2^32 = 0"),
        Example({"ATensor": np.array([np.inf, -0.0], np.float32),
                 "BTensor": np.array([0.0, 5.0], np.float32)},
                {OUT: np.array([np.nan, -0.0], np.float32)}, note="inf * 0 is NaN; signs kept"),
    ),
)

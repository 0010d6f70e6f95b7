"""DML_OPERATOR_ELEMENT_WISE_IS_NAN (FL 2_0): 1 where x is NaN (IEEE-754), else 0.

InputTensor (FLOAT32, FLOAT16) and OutputTensor (UINT8 or UINT32, from the support table)
have the same DimensionCount and Sizes; their data types differ. Every NaN bit pattern counts,
quiet or signaling, whatever its sign. There is no ScaleBias.
"""
import jax.numpy as jnp
import numpy as np

from .._core import dtypes
from .._core.registry import Example
from ._elementwise import IN, OUT, unary

_SNAN = np.array([0x7F800001, 0xFFC00000], np.uint32).view(np.float32)  # signaling, negative

unary(
    "DML_OPERATOR_ELEMENT_WISE_IS_NAN",
    lambda x, attrs: jnp.isnan(x),
    lambda x, attrs: np.isnan(x).astype(np.float64),
    output_types=lambda spec: {OUT: dtypes.UINT8},
    examples=(
        Example({IN: np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0], np.float32)},
                {OUT: np.array([1, 0, 0, 0, 0, 0], np.uint8)}),
        Example({IN: np.concatenate([_SNAN, np.float32([3.4e38])])},
                {OUT: np.array([1, 1, 0], np.uint32)},
                note="a signaling NaN and a negative NaN are NaN"),
        Example({IN: np.array([[np.nan, 65504.0]], np.float16)},
                {OUT: np.array([[1, 0]], np.uint8)}),
    ),
)

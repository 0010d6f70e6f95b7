"""DML_OPERATOR_ELEMENT_WISE_NEGATE (FL 5_0): f(x) = -x.

InputTensor and OutputTensor have the same DataType, DimensionCount and Sizes (FLOAT32,
FLOAT16 and the signed integers). Integers compute in their own type: -INT_MIN wraps to
INT_MIN (the page is silent; two's-complement hardware does this). Floats flip the sign bit,
so -(+0.0) is -0.0 and a NaN stays NaN. There is no ScaleBias.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, same_type
from ._elementwise import IN, OUT, unary
from ._numeric import py, wrap

unary(
    "DML_OPERATOR_ELEMENT_WISE_NEGATE",
    lambda x, attrs: jnp.negative(x),
    lambda x, attrs: -x,
    int_reference=lambda x, attrs: wrap(-py(x), x.dtype),
    rules=(same_type(IN, OUT),), ulp={"FLOAT32": 0, "FLOAT16": 0},
    examples=(
        Example({IN: np.array([1.5, 0.0, -0.0, np.inf, np.nan], np.float32)},
                {OUT: np.array([-1.5, -0.0, 0.0, -np.inf, np.nan], np.float32)},
                note="the sign of zero flips"),
        Example({IN: np.array([-128, 127, 0, -1], np.int8)},
                {OUT: np.array([-128, -127, 0, 1], np.int8)}, note="INT8: -(-128) wraps"),
        Example({IN: np.array([-2**63, 2**63 - 1], np.int64)},
                {OUT: np.array([-2**63, -(2**63 - 1)], np.int64)}),
        Example({IN: np.array([65504.0, -2.0], np.float16)},
                {OUT: np.array([-65504.0, 2.0], np.float16)}),
    ),
)

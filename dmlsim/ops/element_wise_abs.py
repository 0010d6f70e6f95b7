"""DML_OPERATOR_ELEMENT_WISE_ABS: f(x) = abs(x), after the optional ScaleBias
g(x) = x * scale + bias.

InputTensor and OutputTensor have the same DataType, DimensionCount and Sizes. Signed
integers (FL 2_1; INT64 from 4_1) compute in their own type, so abs(INT_MIN) wraps to INT_MIN
as two's-complement hardware does (the page is silent). Floats clear the sign bit: abs(-0.0)
is +0.0 and abs(-inf) is +inf. With ScaleBias an integer input goes through float64 and back
by truncation with saturation (see ``_elementwise``).
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, same_type
from ._elementwise import IN, OUT, unary
from ._numeric import py, wrap

unary(
    "DML_OPERATOR_ELEMENT_WISE_ABS",
    lambda x, attrs: jnp.abs(x),
    lambda x, attrs: np.abs(x),
    int_reference=lambda x, attrs: wrap(np.abs(py(x)), x.dtype),
    rules=(same_type(IN, OUT),), ulp={"FLOAT32": 0, "FLOAT16": 0},
    examples=(
        Example({IN: np.array([-1.5, -0.0, np.inf, -np.inf, np.nan, 2.0], np.float32)},
                {OUT: np.array([1.5, 0.0, np.inf, np.inf, np.nan, 2.0], np.float32)},
                note="abs(-0.0) = +0.0"),
        Example({IN: np.array([-128, -127, 0, 127], np.int8)},
                {OUT: np.array([-128, 127, 0, 127], np.int8)},
                note="INT8: abs(-128) = 128 wraps to -128"),
        Example({IN: np.array([-2**63, -(2**63 - 1)], np.int64)},
                {OUT: np.array([-2**63, 2**63 - 1], np.int64)}, note="INT64 is exact"),
        Example({IN: np.array([1.0, 3.0], np.float16)}, {OUT: np.array([1.0, 1.0], np.float16)},
                {"ScaleBias": (-1.0, 2.0)}, "ScaleBias first: |-x + 2|"),
    ),
)

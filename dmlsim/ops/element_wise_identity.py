"""DML_OPERATOR_ELEMENT_WISE_IDENTITY: f(x) = x, after the optional ScaleBias.

Without ScaleBias it is a pure copy: every bit survives (NaN payloads, -0.0, denormals).
"""
import numpy as np

from .._core.registry import Example, same_type
from ._elementwise import IN, OUT, unary

unary(
    "DML_OPERATOR_ELEMENT_WISE_IDENTITY",
    lambda x, attrs: x,
    lambda x, attrs: x,
    rules=(same_type(IN, OUT),),
    examples=(
        Example({IN: np.array([[1.5, -2.0], [np.inf, -0.0]], np.float32)},
                {OUT: np.array([[1.5, -2.0], [np.inf, -0.0]], np.float32)}),
        Example({IN: np.array([1, 2, 3], np.float32)}, {OUT: np.array([3, 5, 7], np.float32)},
                {"ScaleBias": (2.0, 1.0)}, "ScaleBias: g(x) = 2x + 1 before the identity"),
        Example({IN: np.array([-128, 127, 0], np.int8)}, {OUT: np.array([-128, 127, 0], np.int8)}),
        Example({IN: np.array([2**63 - 1, -2**63], np.int64)},
                {OUT: np.array([2**63 - 1, -2**63], np.int64)}, note="64-bit values are exact"),
    ),
)

"""DML_OPERATOR_ELEMENT_WISE_IS_INFINITY: 1 where x is an infinity of the chosen sign.

f(x) = isinf(x) && ((x > 0 && POSITIVE) || (x < 0 && NEGATIVE) || EITHER); UINT8 output.
"""
import jax.numpy as jnp
import numpy as np

from .._core import dtypes
from .._core.registry import Example
from ._elementwise import IN, OUT, unary
from .._schema.members import members

EITHER, POSITIVE, NEGATIVE = members("DML_IS_INFINITY_MODE", "EITHER POSITIVE NEGATIVE")


def _mode(spec, check):
    mode = spec.attr["InfinityMode"]
    if mode not in (EITHER, POSITIVE, NEGATIVE):
        check.fail(f"InfinityMode is {mode}, which is not a DML_IS_INFINITY_MODE (0 EITHER, "
                   "1 POSITIVE, 2 NEGATIVE)")


def _kernel(x, attrs):
    mode = attrs["InfinityMode"]
    inf = jnp.isinf(x)
    return inf & (x > 0) if mode == POSITIVE else inf & (x < 0) if mode == NEGATIVE else inf


def _reference(x, attrs):
    want = {EITHER: (np.inf, -np.inf), POSITIVE: (np.inf,), NEGATIVE: (-np.inf,)}
    return np.isin(x, want[attrs["InfinityMode"]]).astype(np.float64)


unary(
    "DML_OPERATOR_ELEMENT_WISE_IS_INFINITY", _kernel, _reference, rules=(_mode,),
    output_types=lambda spec: {OUT: dtypes.UINT8},
    examples=(
        Example({IN: np.array([np.inf, -np.inf, np.nan, 1.0], np.float32)},
                {OUT: np.array([1, 1, 0, 0], np.uint8)}, {"InfinityMode": EITHER}),
        Example({IN: np.array([np.inf, -np.inf, 65504.0, 0.0], np.float16)},
                {OUT: np.array([1, 0, 0, 0], np.uint8)}, {"InfinityMode": POSITIVE}),
        Example({IN: np.array([[np.inf, -np.inf]], np.float32)},
                {OUT: np.array([[0, 1]], np.uint8)}, {"InfinityMode": NEGATIVE}),
    ),
)

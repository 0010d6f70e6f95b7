"""DML_OPERATOR_ELEMENT_WISE_SIGN (FL 2_0): f(x) = -1 if x < 0, 1 if x > 0, 0 otherwise.

"Otherwise" includes -0.0 (the page) and, evaluated literally, NaN: both give +0.0 (NaN is
neither < 0 nor > 0; HLSL's sign does the same). Unsigned types give 0 or 1. InputTensor and
OutputTensor have the same DataType, DimensionCount and Sizes. There is no ScaleBias.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, same_type
from ._elementwise import IN, OUT, unary


def _sign(x, attrs):
    one, zero = jnp.ones_like(x), jnp.zeros_like(x)
    neg = -one if np.issubdtype(x.dtype, np.signedinteger) or \
        np.issubdtype(x.dtype, np.floating) else zero
    return jnp.where(x > 0, one, jnp.where(x < 0, neg, zero))


def _sign_reference(x, attrs):
    """Element by element, as the page reads: -1, 1, or 0 (for -0.0 and NaN too)."""
    flat = [1 if v > 0 else (-1 if v < 0 else 0) for v in x.reshape(-1)]
    return np.array(flat, x.dtype if x.dtype.kind != "f" else np.float64).reshape(x.shape)


unary(
    "DML_OPERATOR_ELEMENT_WISE_SIGN",
    _sign, _sign_reference, int_reference=_sign_reference,
    rules=(same_type(IN, OUT),), ulp={"FLOAT32": 0, "FLOAT16": 0},
    examples=(
        Example({IN: np.array([-2.5, -0.0, 0.0, 3.0, np.nan, -np.inf], np.float32)},
                {OUT: np.array([-1.0, 0.0, 0.0, 1.0, 0.0, -1.0], np.float32)},
                note="-0.0 and NaN are neither < 0 nor > 0: +0.0"),
        Example({IN: np.array([-128, 0, 127], np.int8)}, {OUT: np.array([-1, 0, 1], np.int8)}),
        Example({IN: np.array([0, 2**64 - 1], np.uint64)}, {OUT: np.array([0, 1], np.uint64)}),
        Example({IN: np.array([-6e-08, 65504.0], np.float16)},
                {OUT: np.array([-1.0, 1.0], np.float16)}, note="a half denormal is < 0"),
    ),
)

"""DML_OPERATOR_ELEMENT_WISE_ROUND (FL 2_1): rounds each element to an integer value.

RoundingMode is a DML_ROUNDING_MODE (DML_ROUNDING_MODE's page has the table used below):
- HALVES_TO_NEAREST_EVEN (0): nearest integer, ties to even (-2.5 -> -2, 2.5 -> 2);
- TOWARD_ZERO (1): truncation (-1.75 -> -1);
- TOWARD_INFINITY (2): nearest integer, ties away from zero, "toward the nearest infinity"
  (-2.5 -> -3, 2.5 -> 3); it is not a ceiling.
Any other value is E_INVALIDARG. InputTensor and OutputTensor have the same DataType,
DimensionCount and Sizes (FLOAT32, FLOAT16). Results are exact and keep the sign of zero
(-0.4 -> -0.0); inf and NaN pass through. There is no ScaleBias.
"""
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core.registry import Example, same_type
from ._elementwise import IN, OUT, unary
from .._schema.members import members

NEAREST_EVEN, TOWARD_ZERO, TOWARD_INFINITY = members(
    "DML_ROUNDING_MODE", "HALVES_TO_NEAREST_EVEN TOWARD_ZERO TOWARD_INFINITY")
_MODES = ("HALVES_TO_NEAREST_EVEN", "TOWARD_ZERO", "TOWARD_INFINITY")


def _mode(spec, check):
    mode = spec.attr["RoundingMode"]
    if mode not in (NEAREST_EVEN, TOWARD_ZERO, TOWARD_INFINITY):
        check.fail(f"RoundingMode is {mode}, which is not a DML_ROUNDING_MODE "
                   "(0 HALVES_TO_NEAREST_EVEN, 1 TOWARD_ZERO, 2 TOWARD_INFINITY)")


def _kernel(x, attrs):
    mode = attrs["RoundingMode"]
    if mode == NEAREST_EVEN:
        return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
    if mode == TOWARD_ZERO:
        return jnp.trunc(x)
    return lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO)


def _reference(x, attrs):
    mode = attrs["RoundingMode"]
    if mode == NEAREST_EVEN:
        return np.round(x)
    if mode == TOWARD_ZERO:
        return np.trunc(x)
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


_TABLE = [-2.5, -1.75, -1.5, -1.25, 0.0, 1.25, 1.5, 1.75, 2.5]  # the DML_ROUNDING_MODE page


def _ex(x, y, mode, dtype=np.float32, note=""):
    return Example({IN: np.array(x, dtype)}, {OUT: np.array(y, dtype)}, {"RoundingMode": mode},
                   note or f"DML_ROUNDING_MODE_{_MODES[mode]}")


unary(
    "DML_OPERATOR_ELEMENT_WISE_ROUND", _kernel, _reference, rules=(same_type(IN, OUT), _mode),
    ulp={"FLOAT32": 0, "FLOAT16": 0},
    examples=(
        _ex(_TABLE, [-2, -2, -2, -1, 0, 1, 2, 2, 2], NEAREST_EVEN),
        _ex(_TABLE, [-2, -1, -1, -1, 0, 1, 1, 1, 2], TOWARD_ZERO),
        _ex(_TABLE, [-3, -2, -2, -1, 0, 1, 2, 2, 3], TOWARD_INFINITY),
        _ex([-0.4, 0.5, np.inf, np.nan, 8388609.0], [-0.0, 0.0, np.inf, np.nan, 8388609.0],
            NEAREST_EVEN, note="sign of zero kept; 0.5 ties to 0; 2^23 + 1 is already integral"),
        _ex([-0.5, 0.49975586, 1023.5], [-1.0, 0.0, 1024.0], TOWARD_INFINITY, np.float16,
            "FLOAT16: the largest half below 0.5 rounds to 0"),
    ),
)

"""The sigmoid family: SIGMOID, HARD_SIGMOID, SWISH (FL 6_2), HARD_SWISH (FL 6_2).

- SIGMOID: f(x) = 1 / (1 + exp(-x)) (the logistic function: sigmoid(-inf) = 0, no overflow).
- HARD_SIGMOID: f(x) = max(0, min(Alpha * x + Beta, 1)).
- SWISH: f(x) = x * Sigmoid(SigmoidInputScale * x).
- HARD_SWISH: f(x) = x * HardSigmoid(x, Alpha, Beta) = x * max(0, min(Alpha * x + Beta, 1)).

Where the pages are silent: max/min propagate NaN, so NaN in gives NaN out. Alpha, Beta and
SigmoidInputScale are C FLOATs (rounded to float32).

Tolerance: XLA's logistic is within ~3 ULP in float32 on CPU and SWISH adds two roundings: 8
ULP for FLOAT32. HARD_SIGMOID/HARD_SWISH round 2 to 3 times (no FMA): 4 ULP. FLOAT16
(computed in float32, rounded once): 1 ULP.
"""
import math

import jax
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example
from ._activation import const, f32, float_unary
from ._elementwise import IN, OUT

f32a = np.float32


def _np_sigmoid(z):
    e = np.exp(-np.abs(z))  # never overflows
    return np.where(z >= 0, 1 / (1 + e), e / (1 + e))


def _hard(x, a):
    return jnp.maximum(0, jnp.minimum(const(a, "Alpha", x) * x + const(a, "Beta", x), 1))


def _np_hard(x, a):
    return np.maximum(0, np.minimum(f32(a, "Alpha") * x + f32(a, "Beta"), 1))


def _sig(v):
    return 1 / (1 + math.exp(-v))


float_unary(
    "DML_OPERATOR_ACTIVATION_SIGMOID",
    lambda x, a: jax.nn.sigmoid(x), lambda x, a: _np_sigmoid(x),
    ulp={"FLOAT32": 4, "FLOAT16": 1},
    examples=(
        Example({IN: f32a([0, np.inf, -np.inf])}, {OUT: f32a([0.5, 1, 0])}),
        Example({IN: f32a([[1, -2], [20, -20]])},
                {OUT: f32a([[_sig(1), _sig(-2)], [_sig(20), _sig(-20)]])}),
        Example({IN: np.float16([2, -0.5])}, {OUT: np.float16([_sig(2), _sig(-0.5)])}),
    ),
)

float_unary(
    "DML_OPERATOR_ACTIVATION_HARD_SIGMOID", _hard, _np_hard,
    ulp={"FLOAT32": 4, "FLOAT16": 1},
    examples=(
        Example({IN: f32a([-4, -2, 0, 1, 4, np.nan])}, {OUT: f32a([0, 0, 0.5, 0.75, 1, np.nan])},
                {"Alpha": 0.25, "Beta": 0.5}),
        Example({IN: f32a([1, -1])},
                {OUT: f32a([f32a(0.2) + f32a(0.5), f32a(0.5) - f32a(0.2)])},
                {"Alpha": 0.2, "Beta": 0.5}, "the typical defaults"),
    ),
)

float_unary(
    "DML_OPERATOR_ACTIVATION_SWISH",
    lambda x, a: x * jax.nn.sigmoid(const(a, "SigmoidInputScale", x) * x),
    lambda x, a: x * _np_sigmoid(f32(a, "SigmoidInputScale") * x),
    ulp={"FLOAT32": 8, "FLOAT16": 1},
    examples=(
        Example({IN: f32a([0, 100, -3])}, {OUT: f32a([0, 100, -3 * _sig(-3)])},
                {"SigmoidInputScale": 1.0}, "sigmoid(100) is 1 in float32"),
        Example({IN: f32a([1, -1])}, {OUT: f32a([_sig(2), -_sig(-2)])}, {"SigmoidInputScale": 2.0}),
    ),
)

float_unary(
    "DML_OPERATOR_ACTIVATION_HARD_SWISH",
    lambda x, a: x * _hard(x, a), lambda x, a: x * _np_hard(x, a),
    ulp={"FLOAT32": 4, "FLOAT16": 1},
    examples=(
        Example({IN: f32a([-4, -2, 0, 1, 4])}, {OUT: f32a([0, 0, 0, 0.75, 4])},
                {"Alpha": 0.25, "Beta": 0.5}),
        Example({IN: np.float16([3, -1, 6])}, {OUT: np.float16([3, -1 / 3, 6])},
                {"Alpha": 1 / 6, "Beta": 0.5}, "the typical defaults: 1/6, 0.5"),
    ),
)

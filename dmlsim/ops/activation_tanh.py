"""TANH, SCALED_TANH and SOFTSIGN.

- TANH: f(x) = (1 - exp(-2 * x)) / (1 + exp(-2 * x)), which is tanh(x); dmlsim evaluates tanh
  directly (the page's quotient overflows to inf / inf = NaN for x < -44 in float32).
- SCALED_TANH: f(x) = Alpha * tanh(Beta * x).
- SOFTSIGN: f(x) = x / (1 + abs(x)). Taken literally at the infinities: inf / inf = NaN (the page
  gives no special case).

Alpha and Beta are C FLOATs (rounded to float32). Tolerance: XLA's float32 tanh is within
~4.5 ULP on CPU, SCALED_TANH rounds twice more: 8 ULP for FLOAT32; SOFTSIGN rounds twice
(add, divide): 2 ULP; FLOAT16 (computed in float32, rounded once): 1 ULP.
"""
import math

import jax.numpy as jnp
import numpy as np

from .._core.registry import Example
from ._activation import const, f32, float_unary
from ._elementwise import IN, OUT

f32a = np.float32

float_unary(
    "DML_OPERATOR_ACTIVATION_TANH", lambda x, a: jnp.tanh(x), lambda x, a: np.tanh(x),
    ulp={"FLOAT32": 8, "FLOAT16": 1},
    examples=(
        Example({IN: f32a([0, np.inf, -np.inf, -100])}, {OUT: f32a([0, 1, -1, -1])},
                note="no overflow for large negative x"),
        Example({IN: f32a([[0.5, -1], [2, 1e-3]])},
                {OUT: f32a([[math.tanh(0.5), math.tanh(-1)], [math.tanh(2), math.tanh(1e-3)]])}),
        Example({IN: np.float16([0.25, -3])}, {OUT: np.float16([math.tanh(0.25), math.tanh(-3)])}),
    ),
)

float_unary(
    "DML_OPERATOR_ACTIVATION_SCALED_TANH",
    lambda x, a: const(a, "Alpha", x) * jnp.tanh(const(a, "Beta", x) * x),
    lambda x, a: f32(a, "Alpha") * np.tanh(f32(a, "Beta") * x),
    ulp={"FLOAT32": 8, "FLOAT16": 1},
    examples=(
        Example({IN: f32a([0, np.inf, -np.inf])}, {OUT: f32a([0, 2, -2])},
                {"Alpha": 2.0, "Beta": 0.5}),
        Example({IN: f32a([1, -4])}, {OUT: f32a([2 * math.tanh(0.5), 2 * math.tanh(-2)])},
                {"Alpha": 2.0, "Beta": 0.5}),
    ),
)

float_unary(
    "DML_OPERATOR_ACTIVATION_SOFTSIGN",
    lambda x, a: x / (1 + jnp.abs(x)), lambda x, a: x / (1 + np.abs(x)),
    ulp={"FLOAT32": 2, "FLOAT16": 1},
    examples=(
        Example({IN: f32a([0, 1, -3, 7, np.inf])}, {OUT: f32a([0, 0.5, -0.75, 0.875, np.nan])},
                note="inf / (1 + inf) is NaN, as the formula says"),
        Example({IN: np.float16([[1, -1], [3, -255]])},
                {OUT: np.float16([[0.5, -0.5], [0.75, -255 / 256]])}),
    ),
)

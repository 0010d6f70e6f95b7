"""DML_OPERATOR_ACTIVATION_GELU (FL 5_1): f(x) = 0.5 * x * (1.0 + erf(x / sqrt(2))).

The exact (erf) GELU, not the tanh approximation. dmlsim evaluates the identical function
0.5 * x * erfc(-x / sqrt(2)), which does not cancel for negative x (1 + erf(x / sqrt(2)) loses
every digit below x = -4 in float32).

FLOAT32 is evaluated in float64 and rounded once when JAX's 64-bit mode is on (the default):
XLA's float32 erfc is up to ~65 ULP off in the tails and flushes to 0 below ~1e-38, which
would make GELU(-10) wrong by hundreds of ULP. Results are then within 1 ULP of the float64
reference. FLOAT16 computes in float32 (or in float16 with
DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION) and rounds once: 1 ULP.

At the infinities the formula is taken literally: f(inf) = inf, f(-inf) = -inf * 0 = NaN.
"""
import math

import jax
import jax.numpy as jnp
import numpy as np
from scipy import special

from .._core.registry import Example
from ._activation import float_unary
from ._elementwise import IN, OUT

f32a = np.float32


def _gelu(x, attrs):
    t = x.dtype
    if t == jnp.float32 and jax.config.jax_enable_x64:
        x = x.astype(jnp.float64)
    y = 0.5 * x * jax.scipy.special.erfc(-x * (1 / math.sqrt(2)))
    return y.astype(t)


def _reference(x, attrs):
    return 0.5 * x * special.erfc(-x / math.sqrt(2))


def _g(v):
    return 0.5 * v * (1 + math.erf(v / math.sqrt(2)))


float_unary(
    "DML_OPERATOR_ACTIVATION_GELU", _gelu, _reference,
    ulp={"FLOAT32": 1, "FLOAT16": 1},
    examples=(
        Example({IN: f32a([0, np.inf, -np.inf, 100])}, {OUT: f32a([0, np.inf, np.nan, 100])},
                note="f(-inf) = -inf * 0 = NaN, as the formula says"),
        Example({IN: f32a([[1, -1], [2, -3]])}, {OUT: f32a([[_g(1), _g(-1)], [_g(2), _g(-3)]])}),
        Example({IN: np.float16([0.5, -0.5, 4])}, {OUT: np.float16([_g(0.5), _g(-0.5), _g(4)])}),
    ),
)

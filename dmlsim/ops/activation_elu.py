"""The ELU family: ELU, CELU, SCALED_ELU.

- ELU: f(x) = x if x >= 0, else Alpha * (exp(x) - 1).
- CELU (FL 3_0): f(x) = max(0, x) + min(0, Alpha * (exp(x / Alpha) - 1)).
- SCALED_ELU: f(x) = Gamma * x if x > 0, else Gamma * (Alpha * exp(x) - Alpha).

``exp(x) - 1`` is evaluated as ``expm1(x)`` and ``Alpha * exp(x) - Alpha`` as
``Alpha * expm1(x)`` (the same function without cancellation near 0); NaN stays NaN; the
pages put no constraint on Alpha (CELU with Alpha == 0 follows IEEE arithmetic: x / 0).
Alpha and Gamma are C FLOATs (rounded to float32).

Tolerance: exp/expm1 are not correctly rounded in XLA (up to ~5 ULP in float32 on CPU), and
each formula rounds 2 to 3 times, so FLOAT32 results are checked within 8 ULP of the float64
reference; FLOAT16 (computed in float32, rounded once) within 1 ULP.
"""
import math

import jax.numpy as jnp
import numpy as np

from .._core.registry import Example
from ._activation import const, f32, float_unary
from ._elementwise import IN, OUT

ULP = {"FLOAT32": 8, "FLOAT16": 1}
f32a = np.float32


def _celu(x, a):
    alpha = const(a, "Alpha", x)
    return jnp.maximum(0, x) + jnp.minimum(0, alpha * jnp.expm1(x / alpha))


def _celu_ref(x, a):
    alpha = f32(a, "Alpha")
    return np.maximum(0, x) + np.minimum(0, alpha * np.expm1(x / alpha))


float_unary(
    "DML_OPERATOR_ACTIVATION_ELU",
    lambda x, a: jnp.where(x >= 0, x, const(a, "Alpha", x) * jnp.expm1(x)),
    lambda x, a: np.where(x >= 0, x, f32(a, "Alpha") * np.expm1(x)),
    ulp=ULP,
    examples=(
        Example({IN: f32a([0, 1, 2.5, -np.inf])}, {OUT: f32a([0, 1, 2.5, -1])}, {"Alpha": 1.0},
                "exp(-inf) - 1 = -1"),
        Example({IN: f32a([[-1, -2]])}, {OUT: f32a([[2 * math.expm1(-1), 2 * math.expm1(-2)]])},
                {"Alpha": 2.0}),
        Example({IN: np.float16([-1, 3])}, {OUT: np.float16([math.expm1(-1), 3])}, {"Alpha": 1.0}),
    ),
)

float_unary(
    "DML_OPERATOR_ACTIVATION_CELU", _celu, _celu_ref, ulp=ULP,
    examples=(
        Example({IN: f32a([3, 0, -np.inf])}, {OUT: f32a([3, 0, -2])}, {"Alpha": 2.0},
                "min(0, 2 * (exp(-inf / 2) - 1)) = -2"),
        Example({IN: f32a([-1, -3])}, {OUT: f32a([0.5 * math.expm1(-2), 0.5 * math.expm1(-6)])},
                {"Alpha": 0.5}),
    ),
)

float_unary(
    "DML_OPERATOR_ACTIVATION_SCALED_ELU",
    lambda x, a: jnp.where(x > 0, const(a, "Gamma", x) * x,
                           const(a, "Gamma", x) * (const(a, "Alpha", x) * jnp.expm1(x))),
    lambda x, a: np.where(x > 0, f32(a, "Gamma") * x,
                          f32(a, "Gamma") * (f32(a, "Alpha") * np.expm1(x))),
    ulp=ULP,
    examples=(
        Example({IN: f32a([4, -np.inf, 0])}, {OUT: f32a([2, -1, 0])},
                {"Alpha": 2.0, "Gamma": 0.5}, "0.5 * (2 * exp(-inf) - 2) = -1"),
        Example({IN: f32a([-1, 1])},
                {OUT: f32a([float(f32a(1.0507)) * float(f32a(1.6732)) * math.expm1(-1),
                            float(f32a(1.0507))])},
                {"Alpha": 1.6732, "Gamma": 1.0507}, "the typical defaults"),
    ),
)

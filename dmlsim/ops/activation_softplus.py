"""SOFTPLUS and PARAMETRIC_SOFTPLUS.

- SOFTPLUS: f(x) = ln(1 + exp(Steepness * x)) / Steepness. The page: Steepness "cannot be less
  than 1" (the sentence sits under OutputTensor, a copy slip on the page; it describes
  Steepness); the feature-level history's 6_4 entry, its later word, "updated
  DML_OPERATOR_ACTIVATION_SOFTPLUS to allow Steepness < 1". Decided: below 6_4 CreateOperator
  rejects Steepness < 1 (and NaN) with E_INVALIDARG, as the page says; from 6_4 any positive,
  finite Steepness is taken (0 would divide by zero and a negative one turns the function
  over, which neither text allows) and anything else is E_INVALIDARG.
- PARAMETRIC_SOFTPLUS: f(x) = Alpha * ln(1 + exp(Beta * x)); no constraint on Alpha or Beta.

``ln(1 + exp(z))`` is evaluated as ``logaddexp(0, z)`` = max(z, 0) + ln(1 + exp(-|z|)): the
same function without overflow, so f(1000) = 1000 rather than inf. Steepness, Alpha and Beta
are C FLOATs (rounded to float32).

Tolerance: about 3 ULP for logaddexp in float32 on XLA CPU plus one or two roundings: 8 ULP
for FLOAT32; FLOAT16 (computed in float32, rounded once): 1 ULP.
"""
import math

import jax.numpy as jnp
import numpy as np

from .._core.registry import Example
from ._activation import const, f32, float_unary
from ._elementwise import IN, OUT

ULP = {"FLOAT32": 8, "FLOAT16": 1}
f32a = np.float32
LN2 = math.log(2)


def _steepness(spec, check):
    s = np.float32(spec.attr["Steepness"])
    if check.level >= 0x6400:  # the history's 6_4 entry: Steepness < 1 allowed
        if not (np.isfinite(s) and s > 0):
            check.fail(f"Steepness is {spec.attr['Steepness']}; from DML_FEATURE_LEVEL_6_4 it "
                       "may be less than 1 but must be a positive, finite number")
    elif not s >= 1:
        check.fail(f"Steepness is {spec.attr['Steepness']}; it cannot be less than 1 (before "
                   "DML_FEATURE_LEVEL_6_4)")


def _sp(v):
    return max(v, 0) + math.log1p(math.exp(-abs(v)))


float_unary(
    "DML_OPERATOR_ACTIVATION_SOFTPLUS",
    lambda x, a: jnp.logaddexp(0, const(a, "Steepness", x) * x) / const(a, "Steepness", x),
    lambda x, a: np.logaddexp(0, f32(a, "Steepness") * x) / f32(a, "Steepness"),
    ulp=ULP, rules=(_steepness,),
    examples=(
        Example({IN: f32a([0, -np.inf, np.inf, 1000])}, {OUT: f32a([LN2, 0, np.inf, 1000])},
                {"Steepness": 1.0}, "ln(2) at 0; no overflow at 1000"),
        Example({IN: f32a([[1, -1], [0.5, 20]])},
                {OUT: f32a([[_sp(2) / 2, _sp(-2) / 2], [_sp(1) / 2, _sp(40) / 2]])},
                {"Steepness": 2.0}),
        Example({IN: np.float16([0, 3])}, {OUT: np.float16([LN2 / 4, _sp(12) / 4])},
                {"Steepness": 4.0}),
    ),
)

float_unary(
    "DML_OPERATOR_ACTIVATION_PARAMETRIC_SOFTPLUS",
    lambda x, a: const(a, "Alpha", x) * jnp.logaddexp(0, const(a, "Beta", x) * x),
    lambda x, a: f32(a, "Alpha") * np.logaddexp(0, f32(a, "Beta") * x),
    ulp=ULP,
    examples=(
        Example({IN: f32a([0, -np.inf, 1000])}, {OUT: f32a([2 * LN2, 0, 2000])},
                {"Alpha": 2.0, "Beta": 1.0}),
        Example({IN: f32a([2, -2])}, {OUT: f32a([0.5 * _sp(-1), 0.5 * _sp(1)])},
                {"Alpha": 0.5, "Beta": -0.5}, "a negative Beta mirrors the curve"),
    ),
)

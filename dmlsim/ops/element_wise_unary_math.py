"""Float unary math, one table row per operator: EXP, LOG, SQRT, RECIP, ERF, CEIL, FLOOR.

Each is ``f(g(x))`` with the optional ScaleBias ``g(x) = x * scale + bias`` applied first;
InputTensor and OutputTensor have the same DataType, DimensionCount and Sizes (FLOAT32 and
FLOAT16 only; FLOAT16 computes in float32 and rounds once).

- EXP ``exp(x)``; LOG ``ln(x)``: NaN ("indefinite") for x < 0, -inf for +-0 (the page).
- SQRT ``sqrt(x)`` (sqrt(-0.0) = -0.0, IEEE); RECIP ``1 / x`` (1 / +-0 = +-inf).
- ERF ``2 / sqrt(pi) * integral_0^x exp(-t^2) dt``; CEIL / FLOOR: exact, -0.0 kept.

Tolerances (``ulp``, against the float64 reference rounded to the output type): SQRT, RECIP,
CEIL and FLOOR are correctly rounded (0 ULP). EXP, LOG and ERF use XLA's float32 polynomial
approximations; measured over 4e5 random inputs per function: LOG 1 ULP, EXP 1 ULP (5 ULP
just below the overflow threshold 88.72), ERF 5 ULP (around |x| = 3.8, where erf -> 1); the
tolerance is 2 / 8 / 8. FLOAT16 results are float32 results rounded once, so they are within
1 half-precision ULP. Results in the float32 subnormal range may flush to zero (XLA CPU,
like D3D's float32 arithmetic).
"""
import math

import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core.registry import Example, same_type
from ._elementwise import IN, OUT, unary
from ._ieee import correctly_rounded

INF, NAN = np.inf, np.nan
_np_erf = np.frompyfunc(math.erf, 1, 1)


def _ex(x, y, dtype=np.float32, attrs=None, note=""):
    return Example({IN: np.array(x, dtype)}, {OUT: np.array(y, dtype)}, attrs or {}, note)


def _log(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x)


def _recip(x):
    with np.errstate(divide="ignore"):
        return 1.0 / x


def _sqrt(x):
    with np.errstate(invalid="ignore"):
        return np.sqrt(x)


ROWS = (
    ("EXP", lambda x: jnp.exp(x), np.exp, 8, (
        _ex([0.0, -INF, INF, NAN, 1.0], [1.0, 0.0, INF, NAN, 2.7182817], note="exp(1) = e"),
        _ex([1.0, 0.0], [1.0, 0.13533528], attrs={"ScaleBias": (2.0, -2.0)},
            note="ScaleBias first: exp(2x - 2) = exp(0), exp(-2)"),
        _ex([0.0, -2.0, 11.5], [1.0, 0.1354, INF], np.float16,
            note="FLOAT16: exp(11.5) = 98715 overflows the half range"),
    )),
    ("LOG", lambda x: jnp.log(x), _log, 2, (
        _ex([1.0, 0.0, -0.0, -1.0, INF, NAN, 2.7182817],
            [0.0, -INF, -INF, NAN, INF, NAN, 0.99999994],
            note="ln(negative) is NaN (indefinite), ln(+-0) is -inf"),
        _ex([4.0, 2.0], [1.387, 0.6934], np.float16),
    )),
    ("SQRT", correctly_rounded(jnp.sqrt), _sqrt, 0, (
        _ex([4.0, 0.0, -0.0, -1.0, INF, 2.0], [2.0, 0.0, -0.0, NAN, INF, 1.4142135],
            note="IEEE: sqrt(-0) = -0, sqrt(-1) = NaN"),
        _ex([0.25, 1.0], [2.0, 4.0], np.float16, {"ScaleBias": (16.0, 0.0)}),
    )),
    ("RECIP", correctly_rounded(lambda x: 1 / x), _recip, 0, (
        _ex([2.0, -0.0, 0.0, INF, -4.0], [0.5, -INF, INF, 0.0, -0.25], note="1 / -0 = -inf"),
        _ex([1.0, 3.0], [0.25, 0.125], np.float16, {"ScaleBias": (2.0, 2.0)}),
    )),
    ("ERF", lambda x: lax.erf(x), lambda x: _np_erf(x).astype(np.float64), 8, (
        _ex([0.0, -0.0, INF, -INF, NAN, 0.5], [0.0, -0.0, 1.0, -1.0, NAN, 0.5204999]),
        _ex([-1.0, 5.0], [-0.843, 1.0], np.float16),
    )),
    ("CEIL", lambda x: jnp.ceil(x), np.ceil, 0, (
        _ex([-1.5, -0.5, 0.5, 2.0, INF, NAN], [-1.0, -0.0, 1.0, 2.0, INF, NAN],
            note="ceil(-0.5) is -0.0"),
        _ex([1.0, 2.0], [1.0, 2.0], np.float16, {"ScaleBias": (0.5, 0.25)},
            "ceil(0.75), ceil(1.25)"),
    )),
    ("FLOOR", lambda x: jnp.floor(x), np.floor, 0, (
        _ex([-1.5, -0.0, 0.5, 2.0, -INF, NAN], [-2.0, -0.0, 0.0, 2.0, -INF, NAN]),
        _ex([1.0, -1.0], [0.0, -1.0], np.float16, {"ScaleBias": (0.5, 0.25)},
            "floor(0.75), floor(-0.25)"),
    )),
)

for _name, _fn, _ref, _ulp, _examples in ROWS:
    unary(f"DML_OPERATOR_ELEMENT_WISE_{_name}", lambda x, attrs, f=_fn: f(x),
          lambda x, attrs, f=_ref: f(x), rules=(same_type(IN, OUT),), examples=_examples,
          ulp={"FLOAT32": _ulp, "FLOAT16": min(_ulp, 1)})

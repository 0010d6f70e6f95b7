"""Float trigonometry, one table row per operator: SIN, COS, TAN, ASIN, ACOS, ATAN.

Each is ``f(g(x))`` with the optional ScaleBias ``g(x) = x * scale + bias`` applied first;
InputTensor and OutputTensor have the same DataType, DimensionCount and Sizes (FLOAT32 and
FLOAT16; FLOAT16 computes in float32 and rounds once). Angles are in radians. IEEE special
values: sin/cos/tan of +-inf are NaN; asin/acos outside [-1, 1] are NaN; atan(+-inf) = +-pi/2;
odd functions keep the sign of zero.

Tolerances (``ulp``): XLA's float32 implementations are not correctly rounded. Measured
against the float64 reference over 4e5 random inputs per function (including |x| up to 1e30
and x near odd multiples of pi/2 for TAN): SIN, COS, TAN, ATAN 1 ULP; ASIN, ACOS 2 ULP. The
tolerance is 2 / 4 ULP. FLOAT16 results are float32 results rounded once: 1 ULP.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, same_type
from ._elementwise import IN, OUT, unary

INF, NAN = np.inf, np.nan
PI, PI_2, PI_4 = 3.1415927, 1.5707964, 0.7853982  # float32(pi), float32(pi/2), float32(pi/4)


def _ex(x, y, dtype=np.float32, attrs=None, note=""):
    return Example({IN: np.array(x, dtype)}, {OUT: np.array(y, dtype)}, attrs or {}, note)


def _quiet(f):
    def g(x):
        with np.errstate(invalid="ignore"):
            return f(x)
    return g


ROWS = (
    ("SIN", lambda x: jnp.sin(x), np.sin, 2, (
        _ex([0.0, -0.0, INF, NAN, PI_2, -PI_2], [0.0, -0.0, NAN, NAN, 1.0, -1.0]),
        _ex([0.0, 1.0], [0.0, 0.5], np.float16, {"ScaleBias": (PI / 6, 0.0)}, "sin(pi/6) = 0.5"),
    )),
    ("COS", lambda x: jnp.cos(x), np.cos, 2, (
        _ex([0.0, -0.0, PI, -INF, NAN], [1.0, 1.0, -1.0, NAN, NAN]),
        _ex([0.0, 1.0], [1.0, 0.5], np.float16, {"ScaleBias": (PI / 3, 0.0)}, "cos(pi/3) = 0.5"),
    )),
    ("TAN", lambda x: jnp.tan(x), np.tan, 2, (
        _ex([0.0, -0.0, PI_4, -PI_4, INF], [0.0, -0.0, 1.0, -1.0, NAN]),
        _ex([0.0, 1.0], [0.0, 1.0], np.float16, {"ScaleBias": (PI_4, 0.0)}),
    )),
    ("ASIN", lambda x: jnp.arcsin(x), np.arcsin, 4, (
        _ex([0.0, -0.0, 1.0, -1.0, 2.0, NAN], [0.0, -0.0, PI_2, -PI_2, NAN, NAN],
            note="outside [-1, 1] is NaN"),
        _ex([0.5, -1.0], [0.5234, -1.57], np.float16),
    )),
    ("ACOS", lambda x: jnp.arccos(x), np.arccos, 4, (
        _ex([1.0, -1.0, 0.0, 1.5, NAN], [0.0, PI, PI_2, NAN, NAN]),
        _ex([0.5, 1.0], [1.047, 0.0], np.float16),
    )),
    ("ATAN", lambda x: jnp.arctan(x), np.arctan, 2, (
        _ex([0.0, -0.0, INF, -INF, 1.0, NAN], [0.0, -0.0, PI_2, -PI_2, PI_4, NAN]),
        _ex([1.0, 0.0], [0.785, 0.0], np.float16, {"ScaleBias": (1.0, 0.0)}),
    )),
)

for _name, _fn, _ref, _ulp, _examples in ROWS:
    unary(f"DML_OPERATOR_ELEMENT_WISE_{_name}", lambda x, attrs, f=_fn: f(x),
          lambda x, attrs, f=_quiet(_ref): f(x), rules=(same_type(IN, OUT),),
          examples=_examples, ulp={"FLOAT32": _ulp, "FLOAT16": 1})

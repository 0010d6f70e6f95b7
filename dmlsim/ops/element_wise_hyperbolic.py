"""Float hyperbolic functions, one table row per operator: SINH, COSH, TANH, ASINH, ACOSH,
ATANH (FL 2_0).

Each is ``f(g(x))`` with the optional ScaleBias ``g(x) = x * scale + bias`` applied first
(the TANH page lists ScaleBias under Remarks; the struct has it for all six); InputTensor and
OutputTensor have the same DataType, DimensionCount and Sizes (FLOAT32 and FLOAT16; FLOAT16
computes in float32 and rounds once). The pages' identities (asinh(x) = ln(x + sqrt(x*x + 1)),
acosh(x) = ln(x + sqrt(x*x - 1)), atanh(x) = ln((1 + x) / (1 - x)) / 2) define the values;
they are not evaluated literally, which would cancel and overflow. acosh(x < 1) and
atanh(|x| > 1) are NaN; atanh(+-1) = +-inf.

Tolerances (``ulp``), measured against the float64 reference over 4e5 random inputs per
function: SINH and COSH 24 ULP for |x| > 80 (XLA evaluates exp(|x| - ln 2), whose argument is
rounded to float32; 5 ULP elsewhere), TANH 4, ASINH 3, ACOSH 4, ATANH 3. The tolerance is 32 /
32 / 8 / 4 / 8 / 4 ULP. FLOAT16 results are float32 results rounded once: 1 ULP.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, same_type
from ._elementwise import IN, OUT, unary

INF, NAN = np.inf, np.nan


def _ex(x, y, dtype=np.float32, attrs=None, note=""):
    return Example({IN: np.array(x, dtype)}, {OUT: np.array(y, dtype)}, attrs or {}, note)


def _quiet(f):
    def g(x):
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            return f(x)
    return g


ROWS = (
    ("SINH", lambda x: jnp.sinh(x), np.sinh, 32, (
        _ex([0.0, -0.0, INF, -INF, NAN, 1.0], [0.0, -0.0, INF, -INF, NAN, 1.1752012]),
        _ex([0.5, 12.0], [1.175, INF], np.float16, {"ScaleBias": (2.0, 0.0)},
            note="sinh(24) = 1.3e10 overflows the half range"),
    )),
    ("COSH", lambda x: jnp.cosh(x), np.cosh, 32, (
        _ex([0.0, -0.0, INF, -INF, NAN, 1.0], [1.0, 1.0, INF, INF, NAN, 1.5430807]),
        _ex([-1.0, 0.0], [1.543, 1.0], np.float16),
    )),
    ("TANH", lambda x: jnp.tanh(x), np.tanh, 8, (
        _ex([0.0, -0.0, INF, -INF, NAN, 0.5, 10.0], [0.0, -0.0, 1.0, -1.0, NAN, 0.46211717, 1.0]),
        _ex([1.0, -10.0], [0.4622, -1.0], np.float16, {"ScaleBias": (0.5, 0.0)}),
    )),
    ("ASINH", lambda x: jnp.arcsinh(x), np.arcsinh, 4, (
        _ex([0.0, -0.0, INF, -INF, NAN, 1.0], [0.0, -0.0, INF, -INF, NAN, 0.8813736]),
        _ex([-1.0, 0.0], [-0.8813, 0.0], np.float16),
    )),
    ("ACOSH", lambda x: jnp.arccosh(x), np.arccosh, 8, (
        _ex([1.0, 0.5, INF, -INF, NAN, 2.0], [0.0, NAN, INF, NAN, NAN, 1.316958],
            note="acosh(x < 1) is NaN"),
        _ex([2.0, 1.0], [1.317, 0.0], np.float16),
    )),
    ("ATANH", lambda x: jnp.arctanh(x), np.arctanh, 4, (
        _ex([0.0, -0.0, 1.0, -1.0, 2.0, 0.5], [0.0, -0.0, INF, -INF, NAN, 0.54930615],
            note="atanh(+-1) = +-inf, |x| > 1 is NaN"),
        _ex([0.5, 0.0], [0.5493, 0.0], np.float16),
    )),
)

for _name, _fn, _ref, _ulp, _examples in ROWS:
    unary(f"DML_OPERATOR_ELEMENT_WISE_{_name}", lambda x, attrs, f=_fn: f(x),
          lambda x, attrs, f=_quiet(_ref): f(x), rules=(same_type(IN, OUT),),
          examples=_examples, ulp={"FLOAT32": _ulp, "FLOAT16": 1})

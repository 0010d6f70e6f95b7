"""DML_OPERATOR_ELEMENT_WISE_CONSTANT_POW: f(x) = pow(x, Exponent), after the optional
ScaleBias g(x) = x * scale + bias.

Exponent is a FLOAT (rounded to float32, as the struct holds it). InputTensor and
OutputTensor have the same DataType, DimensionCount and Sizes (FLOAT32, FLOAT16; FLOAT16
computes in float32 and rounds once). "Negative bases are supported for integral exponents,
otherwise this operator returns NaN"; the page is silent on the other special values, and
dmlsim gives C's ``pow`` (IEEE 754 pow): pow(x, +-0) = 1 even for NaN x, pow(+1, y) = 1,
pow(+-0, y < 0) = inf (-inf for -0 and an odd integer y), pow(-inf, 3) = -inf.

Tolerance: XLA's float32 pow measured within 1 ULP of the float64 reference over 1.2e6
random inputs (bases up to e^20, exponents up to 127); the tolerance is 2 ULP, and 1 ULP
for FLOAT16 (float32 results rounded once).
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, same_type
from ._elementwise import IN, OUT, unary

NAN, INF = np.nan, np.inf


def _reference(x, attrs):
    with np.errstate(all="ignore"):
        return np.power(x, np.float64(np.float32(attrs["Exponent"])))


def _ex(x, y, e, dtype=np.float32, sb=None, note=""):
    attrs = {"Exponent": e, **({"ScaleBias": sb} if sb else {})}
    return Example({IN: np.array(x, dtype)}, {OUT: np.array(y, dtype)}, attrs, note)


unary(
    "DML_OPERATOR_ELEMENT_WISE_CONSTANT_POW",
    lambda x, attrs: jnp.power(x, jnp.asarray(np.float32(attrs["Exponent"]), x.dtype)),
    _reference, rules=(same_type(IN, OUT),), ulp={"FLOAT32": 2, "FLOAT16": 1},
    examples=(
        _ex([-2.0, 3.0, -0.0, 0.0, -INF, NAN], [-8.0, 27.0, -0.0, 0.0, -INF, NAN], 3.0,
            note="a negative base with an integral exponent; odd powers keep the sign"),
        _ex([-8.0, 8.0, 0.0, 4.0], [NAN, 2.0, 0.0, 1.587401], 1 / 3,
            note="a negative base with a non-integral exponent is NaN"),
        _ex([NAN, -3.0, 0.0, -0.0], [1.0, 1.0, 1.0, 1.0], 0.0,
            note="pow(x, 0) = 1 even for NaN and zero"),
        _ex([0.0, -0.0, 2.0], [INF, -INF, 0.5], -1.0, note="pow(+-0, -1) = +-inf"),
        _ex([1.0, 2.0], [4.0, 16.0], 2.0, np.float16, sb=(2.0, 0.0), note="ScaleBias first"),
    ),
)

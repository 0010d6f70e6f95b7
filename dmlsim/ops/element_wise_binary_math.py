"""Binary arithmetic, one table row per operator: SUBTRACT, MEAN, DIFFERENCE_SQUARE (FL 3_1),
ATAN_YX (FL 3_1).

ATensor, BTensor and OutputTensor have the same DataType, DimensionCount and Sizes. Integers
compute in their own type and wrap; FLOAT16 computes in float32 and rounds once.

- SUBTRACT ``a - b``.
- MEAN ``(a + b) / 2``: floats as written (the sum may overflow to inf). Integers (INT32 and
  UINT32, FL 2_1) are silent on the page; dmlsim evaluates the formula in the type: the sum
  wraps, then divides by 2 truncating toward zero, as DIVIDE does ((-3 + 0) / 2 = -1).
- DIFFERENCE_SQUARE ``(a - b) * (a - b)``: the difference is rounded (floats) or wraps
  (integers) before it is squared, so a float32 result may be 2 ULP from the exact square (the
  tolerance); unsigned (3 - 5)^2 = (2^32 - 2)^2 = 4 modulo 2^32.
- ATAN_YX ``atan2(y, x)`` with y = ATensor and x = BTensor, in (-pi, pi]; the page calls the
  origin undefined: dmlsim gives C's atan2 values (atan2(+-0, +0) = +-0, atan2(+-0, -0) = +-pi).
  XLA's float32 atan2 is within 1 ULP over 3e5 random inputs; the tolerance is 2 ULP.
"""
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core.registry import Example
from ._elementwise import OUT, binary
from ._numeric import is_int, py, trunc_div, wrap

A, B = "ATensor", "BTensor"
NAN, INF, PI, PI_2, PI_4 = np.nan, np.inf, 3.1415927, 1.5707964, 0.7853982


def _ex(a, b, out, dtype, note=""):
    return Example({A: np.array(a, dtype), B: np.array(b, dtype)}, {OUT: np.array(out, dtype)},
                   note=note)


def _ref(float_fn, int_fn):
    def ref(a, b):
        a, b = np.asarray(a), np.asarray(b)
        if is_int(a.dtype):
            return wrap(int_fn(py(a), py(b), a.dtype), a.dtype)
        with np.errstate(all="ignore"):
            return float_fn(a.astype(np.float64), b.astype(np.float64))
    return ref


def _int_mean(a, b, dtype):
    s = wrap(a + b, dtype).astype(object)
    return np.frompyfunc(lambda v: trunc_div(v, 2), 1, 1)(s)


def _mean(a, b):
    if is_int(a.dtype):
        return lax.div(a + b, jnp.asarray(2, a.dtype))
    return (a + b) / 2


ROWS = (
    ("SUBTRACT", lambda a, b: a - b, _ref(lambda a, b: a - b, lambda a, b, t: a - b), 0, (
        _ex([5, 0, 100], [10, 1, 100], [251, 255, 0], np.uint8, "UINT8 wraps: 5 - 10 = 251"),
        _ex([INF, 0.0, -0.0, 1.5], [INF, 0.0, 0.0, 2.0], [NAN, 0.0, -0.0, -0.5], np.float32,
            "inf - inf = NaN; 0 - 0 = +0; -0 - 0 = -0"),
        _ex([-2**63, 0], [1, -2**63], [2**63 - 1, -2**63], np.int64, "INT64 wraps"),
    )),
    ("MEAN", _mean, _ref(lambda a, b: (a + b) / 2, _int_mean), 0, (
        _ex([1.0, 2.0, -3.0, 3e38], [2.0, 2.0, 4.0, 3e38], [1.5, 2.0, 0.5, INF], np.float32,
            "as written: 3e38 + 3e38 overflows before the division"),
        _ex([3, -3, 2**31 - 1, -7], [0, 0, 1, 0], [1, -1, -2**30, -3], np.int32,
            "integers: the sum wraps, then / 2 truncates toward zero"),
        _ex([2**32 - 1, 6], [3, 1], [1, 3], np.uint32, "UINT32: (2^32 - 1) + 3 wraps to 2"),
        _ex([65504.0, 1.0], [65504.0, 2.0], [65504.0, 1.5], np.float16,
            "FLOAT16 sums in float32: no overflow"),
    )),
    ("DIFFERENCE_SQUARE", lambda a, b: (a - b) * (a - b),
     _ref(lambda a, b: (a - b) * (a - b), lambda a, b, t: (a - b) * (a - b)), 2, (
        _ex([3.0, 1e20, -0.0, INF], [5.0, -1e20, 0.0, INF], [4.0, INF, 0.0, NAN], np.float32,
            "(2e20)^2 overflows; inf - inf is NaN"),
        _ex([3, 65536, 0], [5, 0, 2**32 - 1], [4, 0, 1], np.uint32,
            "UINT32: 3 - 5 wraps to 2^32 - 2, squared = 4; 2^32 wraps to 0"),
        _ex([-2**31, 7], [2**31 - 1, -3], [1, 100], np.int32, "(-2^31 - (2^31 - 1)) wraps to 1"),
    )),
    ("ATAN_YX", lambda a, b: jnp.arctan2(a, b), _ref(np.arctan2, None), 2, (
        _ex([1.0, 0.0, -0.0, 1.0, 0.0, -1.0, INF], [0.0, -1.0, -1.0, 1.0, 0.0, -INF, INF],
            [PI_2, PI, -PI, PI_4, 0.0, -PI, PI_4], np.float32,
            "A is y, B is x: atan2(1, 0) = pi/2; atan2(+-0, -1) = +-pi"),
        _ex([1.0, -1.0], [-1.0, 0.0], [2.355, -1.57], np.float16, "atan2(1, -1) = 3pi/4"),
    )),
)

for _name, _fn, _reference, _ulp, _examples in ROWS:
    binary(f"DML_OPERATOR_ELEMENT_WISE_{_name}", _fn, _reference, examples=_examples,
           ulp={"FLOAT32": _ulp, "FLOAT16": min(_ulp, 1)})

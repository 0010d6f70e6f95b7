"""DML_OPERATOR_ELEMENT_WISE_POW: f(input, exponent) = pow(input, exponent), with the optional
ScaleBias g(x) = x * scale + bias applied to InputTensor (not to ExponentTensor) first.

Constraints: InputTensor, ExponentTensor and OutputTensor have the same DimensionCount and
Sizes; InputTensor and OutputTensor the same DataType; "until DML_FEATURE_LEVEL_3_0,
ExponentTensor must match the type of InputTensor" (checked against the device's level).

Floats: "negative bases are supported for exponents with integral values ..., otherwise this
operator returns NaN"; other special values follow C's ``pow`` (pow(x, 0) = 1 even for NaN,
pow(1, y) = 1, pow(+-0, y < 0) = +-inf). FLOAT16 computes in float32 and rounds once; float
inputs with integer exponents compute in float64 (the exponent is exact, so the sign of a
negative base is right for any 32-bit exponent) and round once.
Integers (FL 3_0): "when the input tensor and exponent tensor both have integral data type,
this operator guarantees exact results": dmlsim multiplies in the input's type by repeated
squaring, so overflow wraps (3^21 on INT32 is 10460353203 mod 2^32). A negative exponent
gives 1 / x^|e| truncated as DIVIDE truncates: 1 for x = 1, +-1 for x = -1, 0 for |x| > 1, and
DIVIDE's 1 / 0 (every bit set) for x = 0. An integer input with a float exponent, or with
ScaleBias, goes through float64 and back by truncation with saturation (``_elementwise``).
Tolerance: XLA's float32 pow is within 1 ULP of float64 over 1.2e6 random inputs; 2 ULP.
"""
import jax.numpy as jnp
import numpy as np

from .._core import dtypes
from .._core.config import fl_name
from .._core.registry import Example, OperatorDef, register, same_sizes, same_type, sizes_of
from ._elementwise import IN, OUT, scale_bias, to_int, upcast
from ._numeric import is_int, is_signed, py, wrap

EXP = "ExponentTensor"
F64 = jnp.float64


def exponent_type_until_3_0(spec, check):
    x, e = spec.tensor[IN], spec.tensor[EXP]
    if check.level < 0x3000 and x is not None and e is not None and \
            x.data_type != e.data_type:
        check.fail(f"ExponentTensor.DataType is {dtypes.name(e.data_type)} but "
                   f"InputTensor.DataType is {dtypes.name(x.data_type)}; until "
                   f"DML_FEATURE_LEVEL_3_0 they must match (device: {fl_name(check.level)})")


def int_pow(x, e):
    n = jnp.abs(e.astype(jnp.int64)).astype(jnp.uint64)
    result, base = jnp.ones_like(x), x
    for bit in range(8 * e.dtype.itemsize):
        result = jnp.where((n >> bit) & 1 == 1, result * base, result)
        base = base * base
    if not is_signed(e.dtype):
        return result
    inv = jnp.where(x == 1, result, jnp.zeros_like(x))
    if is_signed(x.dtype):
        inv = jnp.where(x == -1, result, inv)
    inv = jnp.where(x == 0, jnp.full_like(x, -1 if is_signed(x.dtype) else
                                          np.iinfo(x.dtype).max), inv)
    return jnp.where(e < 0, inv, result)


def element_wise_pow(InputTensor, ExponentTensor, *, ScaleBias, ctx):
    x, e, sb = InputTensor, ExponentTensor, ScaleBias
    if is_int(x.dtype):
        if sb is None and is_int(e.dtype):
            return int_pow(x, e)
        y = jnp.power(scale_bias(x.astype(F64), sb), e.astype(F64))
        return to_int(y, ctx.out_dtype())
    xc = scale_bias(upcast(x, ctx), sb)
    if is_int(e.dtype):
        return jnp.power(xc.astype(F64), e.astype(F64))
    ec = upcast(e, ctx)
    ct = jnp.promote_types(xc.dtype, ec.dtype)
    return jnp.power(xc.astype(ct), ec.astype(ct))


def _py_pow(x, n, bits):
    """Exact x ** n modulo 2^bits; a negative n as the module docstring says."""
    if n >= 0:
        return pow(x, n, 1 << bits)
    if x in (1, -1):
        return x ** (n % 2)
    return -1 if x == 0 else 0  # -1 wraps to every bit set


def element_wise_pow_reference(InputTensor, ExponentTensor, *, ScaleBias, ctx):
    x, e, sb = np.asarray(InputTensor), np.asarray(ExponentTensor), ScaleBias
    out_t = ctx.out_dtype()
    if is_int(x.dtype) and is_int(e.dtype) and sb is None:
        bits = 8 * out_t.itemsize
        return wrap(np.frompyfunc(lambda a, n: _py_pow(a, n, bits), 2, 1)(py(x), py(e)), out_t)
    xf = x.astype(np.float64) * (sb[0] if sb else 1.0) + (sb[1] if sb else 0.0)
    return np.power(xf, e.astype(np.float64))


def _ex(x, e, y, dtype, edtype=None, sb=None, note=""):
    return Example({IN: np.array(x, dtype), EXP: np.array(e, edtype or dtype)},
                   {OUT: np.array(y, dtype)}, {"ScaleBias": sb} if sb else {}, note)


NAN, INF = np.nan, np.inf
register(OperatorDef(
    "DML_OPERATOR_ELEMENT_WISE_POW", element_wise_pow, element_wise_pow_reference,
    output_sizes=sizes_of(IN, OUT),
    rules=(same_sizes(IN, EXP), same_type(IN, OUT), exponent_type_until_3_0),
    ulp={"FLOAT32": 2, "FLOAT16": 1},
    examples=(
        _ex([-2.0, -8.0, 0.0, -0.0, NAN, 1.0, 4.0], [3.0, 1 / 3, -1.0, -1.0, 0.0, NAN, 0.5],
            [-8.0, NAN, INF, -INF, 1.0, 1.0, 2.0], np.float32,
            note="negative base: integral exponent only; pow(x, 0) = pow(1, y) = 1"),
        _ex([3, 2, -2, 7], [21, 31, 31, 0], [1870418611, -2**31, -2**31, 1], np.int32,
            note="exact, wrapping: 3^21 = 10460353203 mod 2^32; 2^31 wraps to -2^31"),
        _ex([2, 1, -1, -1, 0, 5], [-1, -7, -3, -2, -1, -2], [0, 1, -1, 1, -1, 0], np.int8,
            note="negative exponents: 1 / x^|e| truncated; 1 / 0 is -1 (every bit set)"),
        _ex([-2.0, -1.0], [3, 2147483647], [-8.0, -1.0], np.float32, np.int32,
            note="integer exponents are exact: (-1)^(2^31 - 1) = -1"),
        _ex([1.0, 3.0], [2.0, 0.5], [4.0, 2.0], np.float16, sb=(1.0, 1.0),
            note="ScaleBias applies to InputTensor only: (1 + 1)^2, (3 + 1)^0.5"),
    ),
    module=__name__))

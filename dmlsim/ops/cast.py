"""DML_OPERATOR_CAST: each element converted to OutputTensor's DataType.

InputTensor and OutputTensor have the same DimensionCount and Sizes; any pair of the
11 types of the table (FLOAT64 from FL 4_1). The page does not say how values convert;
dmlsim does what Direct3D hardware and C do:

- float -> float: rounded to nearest even (FLOAT64 -> FLOAT16 is rounded once, through
  float32 with round-to-odd, never twice); too large -> +-inf; -0.0 stays -0.0. A NaN stays
  a NaN with its sign, the top bits of its payload (or the payload shifted up when
  widening) and the quiet bit set, as x86's conversions do (GPU converts differ: dmlsim
  fixes these bits so results match across backends).
- integer -> float: rounded to nearest even (2^24 + 1 -> 16777216.0f).
- float32 denormals convert exactly to and from FLOAT64 (a cast is data movement: nothing
  is flushed to zero).
- float -> integer: truncated toward zero; NaN -> 0; out of range (infinities included)
  saturates to the type's limits, as D3D's ftoi/ftou do (C leaves it undefined).
- integer -> integer: two's-complement wrap (the low bits), as C and NumPy convert: INT32
  -1 -> UINT8 255, UINT32 300 -> INT8 44.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, register, sizes_of
from ._ieee import float_to_float

IN, OUT = "InputTensor", "OutputTensor"


def _float_to_int(x, dt):
    info = np.iinfo(dt)
    t = jnp.trunc(x.astype(jnp.float64))
    top = float(info.max) + 1.0  # a power of two: exact in float64
    safe = jnp.where((t >= float(info.min)) & (t < top), t, 0.0)
    y = safe.astype(dt)
    y = jnp.where(t >= top, jnp.asarray(info.max, dt), y)
    y = jnp.where(t < float(info.min), jnp.asarray(info.min, dt), y)
    return jnp.where(jnp.isnan(t), jnp.zeros_like(y), y)


def cast(InputTensor, *, ctx):
    x, dt = InputTensor, ctx.out_dtype()
    src = np.dtype(x.dtype)
    if src == dt:
        return x
    if dt.kind in "iu" and src.kind == "f":
        return _float_to_int(x, dt)
    if src.kind == "f" and dt.kind == "f":
        return float_to_float(x, dt)
    return x.astype(dt)


def cast_reference(InputTensor, *, ctx):
    x, dt = np.asarray(InputTensor), ctx.out_dtype()
    if dt.kind in "iu" and x.dtype.kind == "f":
        info = np.iinfo(dt)

        def one(v):
            v = float(v)
            if v != v:
                return 0
            if v in (np.inf, -np.inf):
                return int(info.max) if v > 0 else int(info.min)
            return min(max(int(v), int(info.min)), int(info.max))  # int() truncates
        return np.array([one(v) for v in x.reshape(-1)], dt).reshape(x.shape)
    with np.errstate(all="ignore"):
        return x.astype(dt)  # NumPy: nearest even; integers wrap


def _ex(x, xt, y, yt, note=""):
    return Example({IN: np.array(x, xt)}, {OUT: np.array(y, yt)}, note=note)


register(OperatorDef(
    "DML_OPERATOR_CAST", cast, cast_reference, output_sizes=sizes_of(IN, OUT),
    ulp={"FLOAT32": 0, "FLOAT16": 0, "FLOAT64": 0},
    examples=(
        _ex([1.9, -1.9, np.nan, np.inf, -np.inf, 3e9, -0.0], np.float32,
            [1, -1, 0, 2**31 - 1, -2**31, 2**31 - 1, 0], np.int32,
            "truncation toward zero; NaN -> 0; out of range and +-inf saturate"),
        _ex([-1, 300, 128, 2**31 - 1], np.int32, [255, 44, 128, 255], np.uint8,
            "integers wrap: -1 -> 255, 300 -> 44"),
        _ex([2**24 + 1, -7, 0], np.int32, [16777216.0, -7.0, 0.0], np.float32,
            "2^24 + 1 rounds to the even 2^24"),
        _ex([65520.0, 1e-8, -0.0, 1.0 + 2.0**-11 + 2.0**-40], np.float64,
            [np.inf, 0.0, -0.0, 1.0009765625], np.float16,
            "FLOAT64 -> FLOAT16 rounds once: 1 + 2^-11 + 2^-40 rounds up (twice would tie to 1)"),
        _ex([1e-40, -1e-45, 2.0 ** -126 * (1 - 2.0 ** -25)], np.float64,
            [1e-40, -1e-45, 2.0 ** -126], np.float32,
            "FLOAT64 -> FLOAT32 keeps denormals; just below 2^-126 rounds up to the normal"),
        _ex([-1.5, 255.9, 256.0], np.float16, [0, 255, 255], np.uint8,
            "FLOAT16 -> UINT8: -1.5 truncates to -1, saturated to 0; 256 saturates to 255"),
        _ex([2**63 - 1, -2**63], np.int64, [2**63 - 1, 2**63], np.uint64, "INT64 -> UINT64 wraps"),
    ),
    module=__name__))

"""DML_OPERATOR_ELEMENT_WISE_CLIP: f(x) = max(Min, min(x, Max)), after the optional ScaleBias
g(x) = x * scale + bias.

InputTensor and OutputTensor have the same DataType, DimensionCount and Sizes. Min and Max
are FLOATs; for other tensor types they are "cast to the tensor data type before applying the
clipping operation (which for integers means truncating toward zero; and for floating point
values rounding to the nearest even)" (the page). Where the page is silent: a bound outside
an integer type's range saturates (Min = -1.5 on UINT8 is 0); max and min are HLSL's (a NaN
operand is ignored, see ``_numeric``), so with the page's nesting a NaN input gives Max
(min(NaN, Max) = Max, then max(Min, Max)), and Min > Max gives Min. With ScaleBias an integer
input goes through float64 and back by truncation with saturation (see ``_elementwise``);
since truncation is monotonic this equals clipping the truncated value with truncated bounds.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, same_type
from ._elementwise import IN, OUT, unary
from ._ieee import fmax, fmin
from ._numeric import cast_attr, is_int
from ._reference import int_bound, ref_max, ref_min


def clip(x, attrs):
    lo = jnp.asarray(cast_attr(attrs["Min"], x.dtype) if is_int(x.dtype) else
                     np.float32(attrs["Min"]), x.dtype)
    hi = jnp.asarray(cast_attr(attrs["Max"], x.dtype) if is_int(x.dtype) else
                     np.float32(attrs["Max"]), x.dtype)
    return fmax(jnp.broadcast_to(lo, x.shape), fmin(x, jnp.broadcast_to(hi, x.shape)))


def clip_reference(x, attrs):
    """max(Min, min(x, Max)) in float64, or exactly in an integer input's own type."""
    if is_int(x.dtype):
        lo, hi = int_bound(attrs["Min"], x.dtype), int_bound(attrs["Max"], x.dtype)
        return np.array([max(lo, min(int(v), hi)) for v in x.reshape(-1)],
                        x.dtype).reshape(x.shape)
    lo, hi = np.float64(np.float32(attrs["Min"])), np.float64(np.float32(attrs["Max"]))
    return ref_max(lo, ref_min(x, hi))


def _ex(x, out, lo, hi, dtype, sb=None, note=""):
    attrs = {"Min": lo, "Max": hi, **({"ScaleBias": sb} if sb else {})}
    return Example({IN: np.array(x, dtype)}, {OUT: np.array(out, dtype)}, attrs, note)


unary(
    "DML_OPERATOR_ELEMENT_WISE_CLIP",
    clip, clip_reference, int_reference=clip_reference,
    rules=(same_type(IN, OUT),), ulp={"FLOAT32": 0, "FLOAT16": 0},
    examples=(
        _ex([-1.0, 0.5, 7.0, -np.inf, np.nan, -0.0], [0.0, 0.5, 6.0, 0.0, 6.0, 0.0], 0.0, 6.0,
            np.float32, note="NaN: min(NaN, 6) = 6 (NaN ignored), then max(0, 6) = 6"),
        _ex([-128, -3, 2, 5, 127], [-2, -2, 2, 3, 3], -2.7, 3.9, np.int8,
            note="bounds truncate toward zero: [-2, 3]"),
        _ex([0, 100, 255], [0, 100, 200], -1.5, 200.9, np.uint8,
            note="Min -1.5 saturates to 0 on UINT8; Max truncates to 200"),
        _ex([0.0, 1.0, 0.25], [0.0999755859375, 1.0, 0.25], 0.1, 1.0, np.float16,
            note="Min rounds to the half 0.0999755859375"),
        _ex([1, 2, 3], [5, 5, 5], 5.0, 0.0, np.int32, note="Min > Max gives Min"),
        _ex([10, 100], [20, 50], 0.0, 50.0, np.uint16, sb=(2.0, 0.0), note="ScaleBias first"),
    ),
)

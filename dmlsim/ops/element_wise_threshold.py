"""DML_OPERATOR_ELEMENT_WISE_THRESHOLD: f(x) = max(x, Min), after the optional ScaleBias
g(x) = x * scale + bias.

InputTensor and OutputTensor have the same DataType, DimensionCount and Sizes. Min is a
FLOAT; the page is silent on integer tensors (FL 2_1), so dmlsim casts it as CLIP's page
says: truncation toward zero for integers (saturating outside the type's range), rounding to
nearest even for FLOAT16. max is HLSL's (a NaN operand is ignored, see ``_numeric``), so a
NaN input gives Min. With ScaleBias an integer input goes through float64 and back by
truncation with saturation (see ``_elementwise``).
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, same_type
from ._elementwise import IN, OUT, unary
from ._ieee import fmax
from ._numeric import cast_attr, is_int
from ._reference import int_bound, ref_max


def threshold(x, attrs):
    lo = cast_attr(attrs["Min"], x.dtype) if is_int(x.dtype) else np.float32(attrs["Min"])
    return fmax(x, jnp.broadcast_to(jnp.asarray(lo, x.dtype), x.shape))


def threshold_reference(x, attrs):
    """float64 (or an integer input's own type): max with Min as the tensor type holds it."""
    if is_int(x.dtype):
        return np.maximum(x, x.dtype.type(int_bound(attrs["Min"], x.dtype)))
    return ref_max(x, np.float64(np.float32(attrs["Min"])))


def _ex(x, out, lo, dtype, sb=None, note=""):
    attrs = {"Min": lo, **({"ScaleBias": sb} if sb else {})}
    return Example({IN: np.array(x, dtype)}, {OUT: np.array(out, dtype)}, attrs, note)


unary(
    "DML_OPERATOR_ELEMENT_WISE_THRESHOLD",
    threshold, threshold_reference, int_reference=threshold_reference,
    rules=(same_type(IN, OUT),), ulp={"FLOAT32": 0, "FLOAT16": 0},
    examples=(
        _ex([-1.0, 0.5, np.nan, -np.inf, -0.0], [0.0, 0.5, 0.0, 0.0, 0.0], 0.0, np.float32,
            note="NaN is ignored by max: gives Min; max(-0, +0) = +0"),
        _ex([-128, -3, -2, 100], [-2, -2, -2, 100], -2.5, np.int8, note="Min truncates to -2"),
        _ex([0, 7], [6, 7], 6.5, np.uint32, sb=(1.0, 0.5),
            note="ScaleBias: 0.5 and 7.5, max with 6.5 gives 6.5 and 7.5, truncated"),
        _ex([0.0, 2.0], [0.0999755859375, 2.0], 0.1, np.float16),
    ),
)

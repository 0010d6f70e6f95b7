"""DML_OPERATOR_ELEMENT_WISE_CLIP1: f(x) = max(Min, min(x, Max)), after the optional
ScaleBias g(x) = x * scale + bias.

Min and Max are DML_SCALAR_UNIONs read as MinMaxDataType, which must equal
OutputTensor.DataType (FLOAT16: the union's low two bytes are the half's bits). Integers,
64-bit included, clamp exactly in their own type; FLOAT16 computes in float32.

Where the page is silent, max and min are HLSL's, as for ELEMENT_WISE_CLIP (see
``_numeric``): a NaN operand is ignored, so with the page's nesting a NaN input gives Max
(min(NaN, Max) = Max, then max(Min, Max)); max(+0.0, -0.0) is +0.0. Min > Max gives Min
everywhere, as the formula does. With ScaleBias an integer input goes through float64 and
back by truncation with saturation (see ``_elementwise``).
"""
import jax.numpy as jnp
import numpy as np

from .._core import dtypes
from .._core.registry import Example, OperatorDef, register, same_type, sizes_of
from ._elementwise import IN, OUT, np_to_int, to_int, upcast
from ._scalar import scalar_type_rule, scalar_value
from ._ieee import fmax, fmin
from ._reference import ref_max, ref_min


def _clamp(x, lo, hi):
    """max(Min, min(x, Max)) with HLSL max/min."""
    lo = jnp.broadcast_to(jnp.asarray(lo, x.dtype), x.shape)
    hi = jnp.broadcast_to(jnp.asarray(hi, x.dtype), x.shape)
    return fmax(lo, fmin(x, hi))


def clip1(InputTensor, *, ScaleBias, MinMaxDataType, Min, Max, ctx):
    lo, hi = scalar_value(Min, MinMaxDataType), scalar_value(Max, MinMaxDataType)
    x, out_t = InputTensor, ctx.out_dtype()
    if ScaleBias is None:
        return _clamp(upcast(x, ctx), lo, hi)
    y = upcast(x, ctx) if np.issubdtype(x.dtype, np.floating) else x.astype(jnp.float64)
    y = _clamp(y * jnp.asarray(ScaleBias[0], y.dtype) + jnp.asarray(ScaleBias[1], y.dtype),
               lo, hi)
    return y if np.issubdtype(out_t, np.floating) else to_int(y, out_t)


def clip1_reference(InputTensor, *, ScaleBias, MinMaxDataType, Min, Max, ctx):
    x = np.asarray(InputTensor)
    lo, hi = scalar_value(Min, MinMaxDataType), scalar_value(Max, MinMaxDataType)
    if ScaleBias is None and not np.issubdtype(x.dtype, np.floating):  # exact integers
        return np.array([max(int(lo), min(int(v), int(hi))) for v in x.reshape(-1)],
                        x.dtype).reshape(x.shape)
    y = x.astype(np.float64)
    if ScaleBias is not None:
        y = y * ScaleBias[0] + ScaleBias[1]
    y = ref_max(np.float64(lo), ref_min(y, np.float64(hi)))
    return y if np.issubdtype(x.dtype, np.floating) else np_to_int(y, x.dtype)


def _ex(x, lo, hi, out, dtype, scale_bias=None, note=""):
    attrs = {"MinMaxDataType": dtypes.dml_type_of(np.dtype(dtype)),
             "Min": np.array(lo, dtype)[()], "Max": np.array(hi, dtype)[()]}
    if scale_bias is not None:
        attrs["ScaleBias"] = scale_bias
    return Example({IN: np.array(x, dtype)}, {OUT: np.array(out, dtype)}, attrs, note)


register(OperatorDef(
    "DML_OPERATOR_ELEMENT_WISE_CLIP1", clip1, clip1_reference, output_sizes=sizes_of(IN, OUT),
    rules=(same_type(IN, OUT), scalar_type_rule("MinMaxDataType", OUT)),
    examples=(
        _ex([-2.0, -0.0, 0.5, 3.0, np.nan, -np.inf], 0.0, 1.0, [0.0, 0.0, 0.5, 1.0, 1.0, 0.0],
            np.float32, note="HLSL max/min: min(NaN, 1) = 1; max(+0.0, -0.0) = +0.0"),
        _ex([-2**63, 0, 2**63 - 1], -2**63 + 1, 2**63 - 2, [-2**63 + 1, 0, 2**63 - 2], np.int64,
            note="INT64 bounds are exact (not rounded through a double)"),
        _ex([65504.0, -1.0, 0.25], -0.5, 1000.0, [1000.0, -0.5, 0.25], np.float16,
            note="FLOAT16 bounds: the union's low 2 bytes are half bits"),
        _ex([0, 100, 250], 10, 200, [10, 200, 200], np.uint8, scale_bias=(2.0, 1.0),
            note="ScaleBias first: 1, 201, 501, then clamped to [10, 200]"),
        _ex([1, 2, 3], 5, 0, [5, 5, 5], np.int32, note="Min > Max gives Min, as the formula"),
    ),
    module=__name__))

"""CLIP_GRAD and CLIP_GRAD1, one row each: the gradients of the two clip operators,

    f(x, gradient) = 0 if x <= Min, 0 if x >= Max, else gradient

Both boundaries are inclusive: at x == Min or x == Max the gradient is 0. InputTensor,
InputGradientTensor and OutputGradientTensor share one DataType and Sizes. The passed
gradient is copied bit for bit; the zero is +0.

CLIP_GRAD's Min/Max are FLOAT: dmlsim rounds them to float32 (the C type) and compares
exactly: a float element in float32, an integer element against floor(Min) / ceil(Max)
(INT32 x <= 1.5 is x <= 1; no rounding of 64-bit x through a double). CLIP_GRAD1's Min/Max
are DML_SCALAR_UNIONs read as MinMaxDataType, which the page says "must match
OutputTensor.DataType"; the operator has no OutputTensor, so dmlsim checks it against
OutputGradientTensor.DataType. A NaN x compares false both ways: its gradient passes.
"""
import math
from fractions import Fraction

import jax.numpy as jnp
import numpy as np

from .._core import dtypes
from .._core.registry import (Example, OperatorDef, register, same_sizes, same_type, signature,
                              sizes_of)
from .._schema.operators_generated import OPERATORS
from ._scalar import scalar_type_rule, scalar_value

X, G, OUT = "InputTensor", "InputGradientTensor", "OutputGradientTensor"


def _int_cmp(x, v, le):
    """x <= v (``le``) or x >= v, exactly, for integer x and a float v."""
    info, shape = np.iinfo(x.dtype), x.shape
    if math.isnan(v):
        return jnp.zeros(shape, bool)
    if math.isinf(v):
        return jnp.full(shape, (v > 0) == le)
    b = math.floor(v) if le else math.ceil(v)
    if b < info.min or b > info.max:
        return jnp.full(shape, (b > info.max) == le)
    return x <= jnp.asarray(b, x.dtype) if le else x >= jnp.asarray(b, x.dtype)


def _outside_float_bounds(x, lo, hi):
    if np.issubdtype(x.dtype, np.integer):
        return _int_cmp(x, lo, True) | _int_cmp(x, hi, False)
    xf = x.astype(np.float32)
    return (xf <= jnp.asarray(lo, np.float32)) | (xf >= jnp.asarray(hi, np.float32))


def _outside_typed_bounds(x, lo, hi):
    return (x <= jnp.asarray(lo, x.dtype)) | (x >= jnp.asarray(hi, x.dtype))


def _exact(v):
    """A value as an exact rational (Python int or Fraction); NaN/inf as floats."""
    if isinstance(v, (int, np.integer)):
        return int(v)
    f = float(v)
    return Fraction(f) if math.isfinite(f) else f


def _reference(bounds):
    """The gradient passes where Min < x < Max, compared exactly (no rounding of x)."""
    def reference(InputTensor, InputGradientTensor, *, ctx, **attrs):
        lo, hi = (_exact(b) for b in bounds(attrs))
        x, g = np.asarray(InputTensor), np.asarray(InputGradientTensor)
        keep = [not (_exact(v) <= lo or _exact(v) >= hi) for v in x.reshape(-1)]
        flat = [gv if k else np.zeros((), g.dtype)[()] for gv, k in zip(g.reshape(-1), keep)]
        return np.array(flat, g.dtype).reshape(g.shape)
    return reference


def _register(name, bounds, outside, rules, examples):
    full = f"DML_OPERATOR_ELEMENT_WISE_{name}"

    def kernel(InputTensor, InputGradientTensor, *, ctx, **attrs):
        lo, hi = bounds(attrs)
        g = InputGradientTensor
        return jnp.where(outside(InputTensor, lo, hi), jnp.zeros_like(g), g)

    attrs = tuple(f for f in ("Min", "Max", "MinMaxDataType") if f in
                  {f["name"] for f in OPERATORS[full]["fields"]})
    kernel.__signature__ = signature((X, G), attrs)
    ref = _reference(bounds)
    ref.__signature__ = signature((X, G), attrs)
    register(OperatorDef(full, kernel, ref, output_sizes=sizes_of(X, OUT),
                         rules=(same_sizes(X, G), same_type(X, G, OUT), *rules),
                         examples=examples, module=__name__))


def _ex(x, g, out, dtype, attrs, note=""):
    return Example({X: np.array(x, dtype), G: np.array(g, dtype)}, {OUT: np.array(out, dtype)},
                   attrs, note)


def _typed(dtype, lo, hi):
    return {"MinMaxDataType": dtypes.dml_type_of(np.dtype(dtype)),
            "Min": np.array(lo, dtype)[()], "Max": np.array(hi, dtype)[()]}


_register("CLIP_GRAD", lambda a: (float(np.float32(a["Min"])), float(np.float32(a["Max"]))),
          _outside_float_bounds, (), (
    _ex([-1.0, 0.0, 0.5, 1.0, 2.0, np.nan], [7.0, 7.0, 7.0, 7.0, 7.0, -0.0],
        [0.0, 0.0, 7.0, 0.0, 0.0, -0.0], np.float32, {"Min": 0.0, "Max": 1.0},
        note="x == Min and x == Max give 0; a NaN x passes its gradient (-0.0 kept)"),
    _ex([0, 1, 2, 3], [5, 6, 7, 8], [0, 6, 0, 0], np.int32, {"Min": 0.5, "Max": 2.0},
        note="integers: x <= 0.5 is x <= 0; x >= 2.0"),
    _ex([-3, 3], [1, 1], [1, 1], np.int8, {"Min": -np.inf, "Max": np.inf},
        note="infinite bounds never clip"),
))
_register("CLIP_GRAD1", lambda a: tuple(scalar_value(a[k], a["MinMaxDataType"]) for k in
                                        ("Min", "Max")),
          _outside_typed_bounds, (scalar_type_rule("MinMaxDataType", OUT),), (
    _ex([-2**63, -2**63 + 1, 2**63 - 2, 2**63 - 1], [9, 9, 9, 9], [0, 9, 9, 0], np.int64,
        _typed(np.int64, -2**63, 2**63 - 1), note="64-bit bounds compare exactly"),
    _ex([0.0, 0.5, 1.0], [2.0, 2.0, 2.0], [0.0, 2.0, 0.0], np.float16,
        _typed(np.float16, 0.0, 1.0), note="FLOAT16 bounds from the union's low 2 bytes"),
))

"""Building blocks of the element-wise and activation families.

FLOAT16 computes in float32 and is rounded once when the result is stored, unless the
operator was compiled with DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION. Integer
arithmetic stays in the tensor's own type, so it wraps as the hardware does.

A float-only step applied to an integer tensor (ScaleBias, a FLOAT attribute such as SHRINK's
Bias) computes in float64 and converts back by truncation toward zero, saturating at the
type's limits; the pages do not say how, and this is what a C cast with clamping gives.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._core import dtypes
from .._core.hresult import E_INVALIDARG, fail
from .._core.registry import OperatorDef, compute_type, register, same_sizes, same_type

IN, OUT = "InputTensor", "OutputTensor"


def upcast(x, ctx):
    return x.astype(compute_type(x.dtype, ctx))


def to_int(y, dtype):
    """float -> integer ``dtype``: truncate toward zero, saturate (see module docstring)."""
    info = jnp.iinfo(dtype)
    y = jnp.trunc(y)
    y = jnp.where(jnp.isnan(y), 0, y)
    return jnp.clip(y, float(info.min), float(info.max)).astype(dtype)


def np_to_int(y, dtype):
    info = np.iinfo(dtype)
    y = np.trunc(np.nan_to_num(y, nan=0.0, posinf=float(info.max), neginf=float(info.min)))
    return np.clip(y, float(info.min), float(info.max)).astype(dtype)


def scale_bias(x, sb):
    """ScaleBias: g(x) = x * scale + bias before the function (identity when absent)."""
    if sb is None:
        return x
    scale, bias = sb
    return x * jnp.asarray(scale, x.dtype) + jnp.asarray(bias, x.dtype)


def float_view(x, ctx):
    """The values of ``x`` in a float type the kernel may compute in."""
    if jnp.issubdtype(x.dtype, jnp.floating):
        return upcast(x, ctx)
    return x.astype(jnp.float64)


def unary(name, fn, reference, *, examples=(), rules=(), ulp=None, int_via_float=False,
          scale_bias_field="ScaleBias", int_reference=None):
    """Register an operator ``OutputTensor = fn(ScaleBias(InputTensor), attrs)``.

    ``fn(x, attrs)`` gets the compute-typed input; ``reference(x64, attrs)`` is the NumPy
    float64 oracle. ``int_via_float`` runs integer tensors through float64 (see docstring).
    ``int_reference(x, attrs)``, if given, is the exact oracle for an integer input without
    ScaleBias: it gets the array in its own type and returns the output type's values
    (wrapping where the kernel wraps), which float64 cannot represent for 64-bit types.
    """
    def kernel(inputs, spec, ctx):
        x = inputs[IN]
        attrs = spec.attr
        sb = attrs.get(scale_bias_field)
        is_int = not jnp.issubdtype(x.dtype, jnp.floating)
        if is_int and (sb is not None or int_via_float):
            y = fn(scale_bias(x.astype(jnp.float64), sb), attrs)
            out_t = spec.tensor[OUT].np_dtype
            return {OUT: to_int(y, out_t) if np.issubdtype(out_t, np.integer) else y}
        xc = upcast(x, ctx)
        return {OUT: fn(scale_bias(xc, sb), attrs)}

    def ref(inputs, spec):
        attrs = spec.attr
        sb = attrs.get(scale_bias_field)
        raw = np.asarray(inputs[IN])
        if int_reference is not None and sb is None and not np.issubdtype(raw.dtype, np.floating):
            return {OUT: int_reference(raw, attrs)}
        x = raw.astype(np.float64)
        if sb is not None:
            x = x * sb[0] + sb[1]
        return {OUT: reference(x, attrs)}

    return register(OperatorDef(name=name, kernel=kernel, reference=ref,
                                rules=(same_sizes(IN, OUT), *rules), examples=tuple(examples),
                                ulp=dict(ulp or {}), module=fn.__module__))


def binary(name, fn, reference, *, examples=(), rules=None, ulp=None):
    """Register ``OutputTensor = fn(ATensor, BTensor)``; same sizes, and same types unless
    ``rules`` overrides them (the logical operators output UINT8/UINT32)."""
    def kernel(inputs, spec, ctx):
        a, b = inputs["ATensor"], inputs["BTensor"]
        return {OUT: fn(upcast(a, ctx), upcast(b, ctx))}

    def ref(inputs, spec):
        return {OUT: reference(inputs["ATensor"], inputs["BTensor"])}

    if rules is None:
        rules = (same_type("ATensor", "BTensor", OUT),)
    return register(OperatorDef(name=name, kernel=kernel, reference=ref,
                                rules=(same_sizes("ATensor", "BTensor", OUT), *rules),
                                examples=tuple(examples), ulp=dict(ulp or {}),
                                module=fn.__module__))


def scalar_value(raw: bytes, data_type: int):
    """A DML_SCALAR_UNION's 8 raw bytes read as ``data_type`` (a NumPy scalar). FLOAT16 is
    the low two bytes as IEEE half bits (the union has no Float16 member; DirectML callers
    store the half's bits there)."""
    dt = dtypes.numpy_dtype(data_type)
    return np.frombuffer(bytes(raw)[:dt.itemsize], dtype=dt)[0]


def scalar_type_rule(type_field, tensor_field):
    """``type_field`` (a DML_TENSOR_DATA_TYPE that types the scalar unions) must be a valid
    data type equal to ``tensor_field``'s DataType."""
    def rule(spec):
        dt, t = spec.attr[type_field], spec.tensor[tensor_field]
        if dt not in dtypes.NUMPY:
            fail(E_INVALIDARG, f"{spec.name}: {type_field} is {dt}, which is not a "
                               "DML_TENSOR_DATA_TYPE with a scalar value")
        if dt != t.data_type:
            fail(E_INVALIDARG, f"{spec.name}: {type_field} is {dtypes.name(dt)} but "
                               f"{tensor_field}.DataType is {dtypes.name(t.data_type)}; "
                               "they must match")
    rule.__doc__ = f"{type_field} must equal {tensor_field}.DataType."
    return rule

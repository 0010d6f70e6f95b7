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
          scale_bias_field="ScaleBias"):
    """Register an operator ``OutputTensor = fn(ScaleBias(InputTensor), attrs)``.

    ``fn(x, attrs)`` gets the compute-typed input; ``reference(x64, attrs)`` is the NumPy
    float64 oracle. ``int_via_float`` runs integer tensors through float64 (see docstring).
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
        x = np.asarray(inputs[IN], np.float64)
        attrs = spec.attr
        sb = attrs.get(scale_bias_field)
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

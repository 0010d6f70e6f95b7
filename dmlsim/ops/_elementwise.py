"""Builders of the element-wise and activation families, thin layers over the operator unit.

``unary`` and ``binary`` make one :class:`OperatorDef` from a formula: a kernel with the
desc's field names (InputTensor, or ATensor and BTensor; every attribute keyword-only; ctx),
the shape rule "OutputTensor has the input's Sizes", and a reference built from a separately
written NumPy formula.

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

from .._core.registry import (OperatorDef, attributes, register, same_sizes, same_type,
                              signature, sizes_of)

IN, OUT = "InputTensor", "OutputTensor"


def upcast(x, ctx):
    return x.astype(ctx.compute_type(x.dtype))


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


def _generic(fn, name, inputs, attrs):
    """``fn(*inputs, ctx=..., **attrs)`` given the kernel signature the registry checks."""
    fn.__signature__ = signature(inputs, attrs)
    fn.__name__ = name
    return fn


def unary(name, fn, reference, *, examples=(), rules=(), ulp=None, int_via_float=False,
          int_reference=None, output_types=None):
    """Register an operator ``OutputTensor = fn(ScaleBias(InputTensor), attrs)``.

    ``fn(x, attrs)`` gets the compute-typed input and the attributes by name; ``reference(x64,
    attrs)`` is the NumPy float64 oracle, written apart from ``fn``. ``int_via_float`` runs
    integer tensors through float64 (see docstring). ``int_reference(x, attrs)``, if given, is
    the exact oracle for an integer input without ScaleBias: it gets the array in its own type
    and returns the output type's values (wrapping where the kernel wraps), which float64
    cannot represent for 64-bit types.
    """
    names = attributes(name)

    def kernel(InputTensor, *, ctx, **attrs):
        x = InputTensor
        sb = attrs.get("ScaleBias")
        is_int = not jnp.issubdtype(x.dtype, jnp.floating)
        if is_int and (sb is not None or int_via_float):
            y = fn(scale_bias(x.astype(jnp.float64), sb), attrs)
            out_t = ctx.out_dtype()
            return to_int(y, out_t) if np.issubdtype(out_t, np.integer) else y
        return fn(scale_bias(upcast(x, ctx), sb), attrs)

    def ref(InputTensor, *, ctx, **attrs):
        sb = attrs.get("ScaleBias")
        raw = np.asarray(InputTensor)
        if int_reference is not None and sb is None and not np.issubdtype(raw.dtype, np.floating):
            return int_reference(raw, attrs)
        x = raw.astype(np.float64)
        if sb is not None:
            x = x * sb[0] + sb[1]
        return reference(x, attrs)

    return register(OperatorDef(
        name, _generic(kernel, fn.__name__, (IN,), names),
        _generic(ref, getattr(reference, "__name__", "reference"), (IN,), names),
        output_sizes=sizes_of(IN, OUT), rules=tuple(rules), examples=tuple(examples),
        output_types=output_types, ulp=dict(ulp or {}), module=fn.__module__))


def binary(name, fn, reference, *, examples=(), rules=None, ulp=None, output_types=None,
           module=None):
    """Register ``OutputTensor = fn(ATensor, BTensor)``; same sizes, and same types unless
    ``rules`` overrides them (the logical operators output UINT8/UINT32). ``reference(a, b)``
    gets the NumPy arrays in their own types."""
    def kernel(ATensor, BTensor, *, ctx):
        return fn(upcast(ATensor, ctx), upcast(BTensor, ctx))

    def ref(ATensor, BTensor, *, ctx):
        return reference(np.asarray(ATensor), np.asarray(BTensor))

    if rules is None:
        rules = (same_type("ATensor", "BTensor", OUT),)
    kernel.__name__ = getattr(fn, "__name__", "kernel")
    return register(OperatorDef(
        name, kernel, ref, output_sizes=sizes_of("ATensor", OUT),
        rules=(same_sizes("ATensor", "BTensor"), *rules), examples=tuple(examples),
        output_types=output_types, ulp=dict(ulp or {}), module=module or fn.__module__))

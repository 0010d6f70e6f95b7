"""Shared pieces of the DML_OPERATOR_ACTIVATION_* family.

Choices made where the pages are silent (each operator module repeats the ones it uses):

- FLOAT attributes (Alpha, Beta, ...) are C ``FLOAT``s: they are rounded to float32 before use,
  by the kernel and by the float64 reference alike, whatever Python float the caller stored.
- ``max``/``min`` in a formula propagate NaN; a conditional (``x > a ? ... : ...``) evaluates
  literally with IEEE comparisons, so NaN takes the "otherwise" branch.
- Formulas are evaluated in forms that are mathematically identical to the page's but do not
  overflow or cancel (``expm1`` for ``exp(x) - 1``, ``logaddexp(0, z)`` for ``ln(1 + exp(z))``,
  a max-shifted softmax); the float64 references use the same forms.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._core.registry import OperatorDef, attributes, register, same_type, sizes_of
from ._elementwise import IN, OUT, _generic, unary, upcast


def f32(attrs, name) -> float:
    """The FLOAT attribute ``name`` as the C struct holds it (float32), as a Python float."""
    return float(np.float32(attrs[name]))


def const(attrs, name, x):
    """The FLOAT attribute ``name`` in the compute type of ``x``."""
    return jnp.asarray(np.float32(attrs[name]), x.dtype)


def quiet(reference):
    """``reference`` with NumPy's floating-point warnings off: NaN and inf inputs are part of
    the contract (inf * 0 is NaN on purpose), not accidents to warn about."""
    def wrapped(*args):
        with np.errstate(all="ignore"):
            return reference(*args)
    return wrapped


def float_unary(name, fn, reference, examples, ulp=None, rules=()):
    """An InputTensor -> OutputTensor activation with the same DataType and Sizes."""
    return unary(name, fn, quiet(reference), rules=(same_type(IN, OUT), *rules),
                 examples=examples, ulp=ulp)


# ---- softmax / log-softmax / hardmax over a set of axes ------------------------------------

def check_axes(spec, check):
    """AxisCount/Axes of the *1 operators: 1 to DimensionCount distinct axes in range."""
    axes = spec.attr.get("Axes")
    t = spec.tensor.get(IN)
    if t is None:
        return
    n = len(t.sizes)
    if axes is None and spec.attr.get("AxisCount"):
        check.fail(f"AxisCount is {spec.attr['AxisCount']} but Axes is null")
    if not axes:
        check.fail(f"AxisCount is 0; at least one axis in [0, {n - 1}] is required")
    for i, a in enumerate(axes):
        if not 0 <= a < n:
            check.fail(f"Axes[{i}] is {a}; values must be in "
                       f"[0, InputTensor.DimensionCount - 1] = [0, {n - 1}]")
    if len(set(axes)) != len(axes):
        check.fail(f"Axes {list(axes)} lists an axis twice")


def effective_rank_at_most_2(spec, check):
    """SOFTMAX, LOG_SOFTMAX, HARDMAX: DimensionCount without leading 1s must be <= 2."""
    t = spec.tensor.get(IN)
    if t is None:
        return
    sizes = list(t.sizes)
    while sizes and sizes[0] == 1:
        sizes.pop(0)
    if len(sizes) > 2:
        check.fail(f"InputTensor.Sizes {list(t.sizes)} has effective rank {len(sizes)} "
                   "(DimensionCount without leading 1s); it must be at most 2, for example "
                   "{1, 1, BatchCount, Width}")


def axes_activation(name, fn, reference, axes_of, rules, examples, ulp=None):
    """Register ``OutputTensor = fn(InputTensor, axes)``; ``axes_of(attrs, ndim)``;
    ``reference(x64, axes)`` is the NumPy oracle."""
    names = attributes(name)

    def kernel(InputTensor, *, ctx, **attrs):
        x = upcast(InputTensor, ctx)
        return fn(x, axes_of(attrs, x.ndim))

    def ref(InputTensor, *, ctx, **attrs):
        x = np.asarray(InputTensor, np.float64)
        return reference(x, axes_of(attrs, x.ndim))

    return register(OperatorDef(
        name, _generic(kernel, fn.__name__, (IN,), names),
        _generic(ref, reference.__name__, (IN,), names), output_sizes=sizes_of(IN, OUT),
        rules=(same_type(IN, OUT), *rules), examples=tuple(examples), ulp=dict(ulp or {}),
        module=axes_of.__module__))

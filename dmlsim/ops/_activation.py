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

from .._core.hresult import E_INVALIDARG, fail
from .._core.registry import OperatorDef, register, same_sizes, same_type
from ._elementwise import IN, OUT, unary, upcast


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

def check_axes(spec):
    """AxisCount/Axes of the *1 operators: 1 to DimensionCount distinct axes in range."""
    axes = spec.attr.get("Axes")
    t = spec.tensor.get(IN)
    if t is None:
        return
    n = len(t.sizes)
    if axes is None and spec.attr.get("AxisCount"):
        fail(E_INVALIDARG, f"{spec.name}: AxisCount is {spec.attr['AxisCount']} but Axes is "
                           "null")
    if not axes:
        fail(E_INVALIDARG, f"{spec.name}: AxisCount is 0; at least one axis in "
                           f"[0, {n - 1}] is required")
    for i, a in enumerate(axes):
        if not 0 <= a < n:
            fail(E_INVALIDARG, f"{spec.name}: Axes[{i}] is {a}; values must be in "
                               f"[0, InputTensor.DimensionCount - 1] = [0, {n - 1}]")
    if len(set(axes)) != len(axes):
        fail(E_INVALIDARG, f"{spec.name}: Axes {list(axes)} lists an axis twice")


def effective_rank_at_most_2(spec):
    """SOFTMAX, LOG_SOFTMAX, HARDMAX: DimensionCount without leading 1s must be <= 2."""
    t = spec.tensor.get(IN)
    if t is None:
        return
    sizes = list(t.sizes)
    while sizes and sizes[0] == 1:
        sizes.pop(0)
    if len(sizes) > 2:
        fail(E_INVALIDARG, f"{spec.name}: InputTensor.Sizes {list(t.sizes)} has effective rank "
                           f"{len(sizes)} (DimensionCount without leading 1s); it must be at "
                           "most 2, for example {1, 1, BatchCount, Width}")


def _shifted(xp, x, axes):
    """(x - max, exp(x - max) with exactly 1 at the maxima, sum of the others' exps)."""
    m = xp.max(x, axis=axes, keepdims=True)
    at_max = x == m
    d = x - m
    e = xp.where(at_max, xp.ones_like(x), xp.exp(xp.where(at_max, xp.zeros_like(x), d)))
    others = xp.sum(xp.where(at_max, 0, e), axis=axes, keepdims=True) + \
        (xp.sum(at_max.astype(x.dtype), axis=axes, keepdims=True) - 1)
    # NaN anywhere in the group: the max is NaN, so is everything computed from it.
    others = xp.where(xp.isnan(m), m, others)
    return d, e, others


def softmax(xp, x, axes):
    _, e, others = _shifted(xp, x, axes)
    return e / (others + 1)


def log_softmax(xp, x, axes):
    """(x - max) - ln(sum exp(x - max)), with ln(1 + others) via log1p (no cancellation)."""
    d, _, others = _shifted(xp, x, axes)
    return xp.where(x == xp.max(x, axis=axes, keepdims=True), 0, d) - xp.log1p(others)


def hardmax(xp, x, axes):
    """1 at the first maximum of each group (row-major order over the reduced axes)."""
    axes = tuple(sorted(axes))
    keep = [d for d in range(x.ndim) if d not in axes]
    perm = keep + list(axes)
    xt = xp.transpose(x, perm)
    lead = xt.shape[:len(keep)]
    flat = xt.reshape(lead + (-1,))
    idx = xp.argmax(flat, axis=-1)[..., None]
    onehot = (xp.arange(flat.shape[-1]) == idx).astype(x.dtype)
    return xp.transpose(onehot.reshape(xt.shape), tuple(int(i) for i in np.argsort(perm)))


def axes_activation(name, fn, axes_of, rules, examples, ulp=None):
    """Register ``OutputTensor = fn(xp, InputTensor, axes)``; ``axes_of(spec, ndim)``."""
    def kernel(inputs, spec, ctx):
        x = upcast(inputs[IN], ctx)
        return {OUT: fn(jnp, x, axes_of(spec, x.ndim))}

    def reference(inputs, spec):
        x = np.asarray(inputs[IN], np.float64)
        return {OUT: fn(np, x, axes_of(spec, x.ndim))}

    return register(OperatorDef(name=name, kernel=kernel, reference=quiet(reference),
                                rules=(same_sizes(IN, OUT), same_type(IN, OUT), *rules),
                                examples=tuple(examples), ulp=dict(ulp or {}),
                                module=axes_of.__module__))

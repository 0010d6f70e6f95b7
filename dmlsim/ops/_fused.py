"""Fused activations, for every operator with a ``FusedActivation`` field.

DirectML applies the fused activation to the operator's result before it is written
("the same result, but faster": docs/guide/dml-fused-activations.md). CreateOperator checks
the nested desc once for every such operator (``validation.fused_activations``: a fusable
activation with NULL InputTensor/OutputTensor, at the device's feature level, plus the
activation's own rules); an operator kernel then calls :func:`apply_fused_activation` on its
result while it is still in the compute type (FLOAT16 computes in float32 unless half
precision is allowed), so the activation adds no rounding to FLOAT16 of its own, and its
float64 reference calls :func:`fused_reference`.
"""
from __future__ import annotations

import numpy as np

from .._core import registry
from .._core.hresult import E_NOTIMPL, fail
from ._elementwise import IN, OUT


def _opdef(fused_spec):
    opdef = registry.get(fused_spec.name)
    if opdef is None:
        fail(E_NOTIMPL, f"{fused_spec.name}: not implemented in dmlsim, so it cannot be fused")
    return opdef


def apply_fused_activation(y, fused_spec, ctx):
    """``fused_spec``'s activation (a nested OpSpec from ``spec.attr["FusedActivation"]``, or
    None for no activation) applied to the already computed float array ``y``, which should
    be in the compute type; the result stays in it (the caller rounds once when storing)."""
    if fused_spec is None:
        return y
    return _opdef(fused_spec).kernel({IN: y}, fused_spec, ctx)[OUT]


def fused_reference(y, fused_spec):
    """The float64 reference of the fused activation on the reference result ``y``."""
    if fused_spec is None:
        return y
    out = _opdef(fused_spec).reference({IN: np.asarray(y, np.float64)}, fused_spec)[OUT]
    return np.asarray(out, np.float64)

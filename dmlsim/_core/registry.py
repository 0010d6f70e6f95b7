"""The operator registry: one entry per implemented DML_OPERATOR_TYPE.

An operator module in ``dmlsim/ops`` calls :func:`register` with an :class:`OperatorDef`:
its validation rules (beyond the generated support tables), a pure JAX kernel over typed
arrays, a NumPy float64 reference, and small examples that are both tests and docs. Modules
are discovered, not listed: adding an operator touches one module (or one table row).
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import dtypes
from .hresult import E_INVALIDARG, fail
from .tensor import OpSpec

_REGISTRY: dict[str, "OperatorDef"] = {}
_LOADED = False


@dataclass(frozen=True)
class Example:
    """A worked case: input arrays (dtype and shape give DataType and Sizes), attribute
    values for the desc (C field names; ScaleBias as (scale, bias), scalar unions as NumPy
    scalars), and the exact expected outputs."""

    inputs: dict
    outputs: dict
    attrs: dict = field(default_factory=dict)
    note: str = ""


@dataclass(frozen=True)
class KernelContext:
    """What a kernel may know besides its inputs: the execution flags it was compiled with."""

    flags: int = 0

    @property
    def half(self) -> bool:
        return bool(self.flags & 0x1)  # DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION


@dataclass(frozen=True)
class OperatorDef:
    """One operator: ``kernel(inputs, spec, ctx) -> {output field: array}``.

    ``inputs`` maps input field names to typed JAX arrays shaped as the tensor's Sizes
    (None for an absent optional tensor, a list for tensor arrays). The runtime casts each
    result to the output tensor's data type and broadcasts it to its Sizes.
    ``reference(inputs, spec) -> {output field: NumPy array}`` is the float64 oracle.
    ``rules`` are callables ``rule(spec)`` that raise E_INVALIDARG via ``fail``.
    """

    name: str
    kernel: Callable
    reference: Callable | None = None
    rules: tuple = ()
    examples: tuple = ()
    condition: Callable | None = None  # picks support tables that carry a condition
    ulp: dict = field(default_factory=dict)  # float data type name -> tolerated ULP vs reference
    module: str = ""


def register(opdef: OperatorDef) -> OperatorDef:
    if opdef.name in _REGISTRY:
        raise RuntimeError(f"{opdef.name} registered twice ({_REGISTRY[opdef.name].module}, "
                           f"{opdef.module})")
    _REGISTRY[opdef.name] = opdef
    return opdef


def load_all() -> dict:
    """Import every module of ``dmlsim.ops`` once; returns the registry."""
    global _LOADED
    if not _LOADED:
        _LOADED = True
        from .. import ops
        for info in sorted(pkgutil.iter_modules(ops.__path__), key=lambda i: i.name):
            if not info.name.startswith("_"):
                importlib.import_module(f"{ops.__name__}.{info.name}")
    return _REGISTRY


def get(name: str) -> OperatorDef | None:
    return load_all().get(name)


def names() -> list:
    return sorted(load_all())


# ---- rules shared by many operators -------------------------------------------------------

def _flat(spec: OpSpec, names):
    t = spec.tensor
    return [(n, t[n]) for n in names if t.get(n) is not None]


def same_sizes(*names):
    def rule(spec: OpSpec):
        items = _flat(spec, names)
        if not items:
            return
        n0, t0 = items[0]
        for n, t in items[1:]:
            if t.sizes != t0.sizes:
                fail(E_INVALIDARG, f"{spec.name}: {n}.Sizes {list(t.sizes)} must equal "
                                   f"{n0}.Sizes {list(t0.sizes)} (same DimensionCount and Sizes)")
    rule.__doc__ = f"{', '.join(names)} must have the same DimensionCount and Sizes."
    return rule


def same_type(*names):
    def rule(spec: OpSpec):
        items = _flat(spec, names)
        if not items:
            return
        n0, t0 = items[0]
        for n, t in items[1:]:
            if t.data_type != t0.data_type:
                fail(E_INVALIDARG, f"{spec.name}: {n}.DataType is {dtypes.name(t.data_type)} but "
                                   f"{n0}.DataType is {dtypes.name(t0.data_type)}; they must match")
    rule.__doc__ = f"{', '.join(names)} must have the same DataType."
    return rule


def compute_type(dtype, ctx: KernelContext):
    """FLOAT16 computes in float32 and rounds once, unless half precision is allowed."""
    dtype = np.dtype(dtype)
    if dtype == np.float16 and not ctx.half:
        return np.dtype(np.float32)
    return dtype

"""Normalized, frozen descriptions of tensors and operators.

CreateOperator turns the caller's mutable desc structs into these, so the caller may reuse
or change its structs afterwards (descs need not outlive the call, as in DirectML).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._schema.enums_generated import DML_TENSOR_FLAGS
from . import dtypes

DML_TENSOR_FLAG_OWNED_BY_DML = int(DML_TENSOR_FLAGS.DML_TENSOR_FLAG_OWNED_BY_DML)


@dataclass(frozen=True)
class TensorSpec:
    """A DML_BUFFER_TENSOR_DESC, frozen. ``strides`` is None for packed tensors."""

    data_type: int
    sizes: tuple
    strides: tuple | None = None
    flags: int = 0
    total_bytes: int = 0
    base_alignment: int = 0

    @property
    def itemsize(self) -> int:
        """Bytes per element; 0 for the packed 4-bit types (two per byte, see packed4)."""
        return dtypes.itemsize(self.data_type)

    @property
    def np_dtype(self) -> np.dtype:
        return dtypes.numpy_dtype(self.data_type)

    @property
    def element_strides(self) -> tuple:
        return self.strides if self.strides is not None else dtypes.packed_strides(self.sizes)

    @property
    def count(self) -> int:
        n = 1
        for s in self.sizes:
            n *= s
        return n

    @property
    def owned_by_dml(self) -> bool:
        return bool(self.flags & DML_TENSOR_FLAG_OWNED_BY_DML)

    @property
    def offset_alignment(self) -> int:
        """Binding offsets must be multiples of this (16, or GuaranteedBaseOffsetAlignment)."""
        return max(16, self.base_alignment)

    def describe(self) -> str:
        st = "" if self.strides is None else f", strides {list(self.strides)}"
        return f"{dtypes.SHORT_NAMES.get(self.data_type, self.data_type)} {list(self.sizes)}{st}"


@dataclass(frozen=True)
class OpSpec:
    """An operator desc, frozen: tensors by field name, attributes by field name.

    ``tensors[field]`` is a TensorSpec, None (absent optional tensor) or a tuple of them
    (tensor arrays such as JOIN's InputTensors). ``attrs[field]`` holds plain Python values;
    nested operator descs (fused activations) are OpSpecs.
    """

    name: str
    tensors: tuple  # ((field, value), ...) in struct order
    attrs: tuple    # ((field, value), ...) in struct order
    inputs: tuple = field(default=(), compare=False)   # schema input field names
    outputs: tuple = field(default=(), compare=False)  # schema output field names

    @property
    def tensor(self) -> dict:
        return dict(self.tensors)

    @property
    def attr(self) -> dict:
        return dict(self.attrs)

    def slots(self, kind: str):
        """Flattened binding slots: [(field, index or None, TensorSpec or None)]."""
        out, t = [], self.tensor
        for name in (self.inputs if kind == "input" else self.outputs):
            value = t.get(name)
            if isinstance(value, tuple):
                out.extend((name, i, v) for i, v in enumerate(value))
            else:
                out.append((name, None, value))
        return out

    @property
    def short_name(self) -> str:
        return self.name.replace("DML_OPERATOR_", "")

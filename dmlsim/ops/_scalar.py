"""DML_SCALAR_UNION values, their type rule, and the inferred type of logical outputs."""
from __future__ import annotations

import numpy as np

from .._core import dtypes

OUT = "OutputTensor"


def logical_output(spec) -> dict:
    """Inferred output type of the logical and comparison operators: UINT8."""
    return {OUT: dtypes.UINT8}


def scalar_value(raw: bytes, data_type: int):
    """A DML_SCALAR_UNION's 8 raw bytes read as ``data_type`` (a NumPy scalar). FLOAT16 is
    the low two bytes as IEEE half bits (the union has no Float16 member; DirectML callers
    store the half's bits there)."""
    dt = dtypes.numpy_dtype(data_type)
    return np.frombuffer(bytes(raw)[:dt.itemsize], dtype=dt)[0]


def scalar_type_rule(type_field, tensor_field):
    """``type_field`` (a DML_TENSOR_DATA_TYPE that types the scalar unions) must be a valid
    data type equal to ``tensor_field``'s DataType."""
    def rule(spec, check):
        dt, t = spec.attr[type_field], spec.tensor[tensor_field]
        if dt not in dtypes.NUMPY:
            check.fail(f"{type_field} is {dt}, which is not a DML_TENSOR_DATA_TYPE with a "
                       "scalar value")
        if t is not None and dt != t.data_type:
            check.fail(f"{type_field} is {dtypes.name(dt)} but {tensor_field}.DataType is "
                       f"{dtypes.name(t.data_type)}; they must match")
    rule.__doc__ = f"{type_field} must equal {tensor_field}.DataType."
    return rule

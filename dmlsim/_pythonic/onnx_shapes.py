"""ONNX shape inference for lowering, without sending the weights through it.

``onnx.shape_inference.infer_shapes`` serializes the whole model into its C++ side and parses
the result back: for all-MiniLM-L6-v2 (90 MB of weights) 0.48 s of every session's first run,
the next process's included (0.20 s this way; resnet18 0.20 -> 0.06 s, 2-core CPU, median of
5). Only the weights' types and dimensions matter to it
(the values data propagation reads are integer shape tensors), so large floating-point
initializers go in as types and dimensions only (marked external, in a copy), and their bytes
are put back into the inferred model.
"""
from __future__ import annotations

import onnx
from onnx import TensorProto, shape_inference

from .._api import public as dml

_FLOATS = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.DOUBLE)
_MARK = "dmlsim: types and dimensions only"
_SMALL = 1024  # bytes: a tensor this small goes in whole


def _shapes_only(model):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for t in m.graph.initializer:
        if t.data_type in _FLOATS and t.data_location != TensorProto.EXTERNAL and \
                t.ByteSize() > _SMALL:
            for f in ("raw_data", "float_data", "int32_data", "double_data"):
                t.ClearField(f)
            t.data_location = TensorProto.EXTERNAL
            entry = t.external_data.add()
            entry.key, entry.value = "location", _MARK
    return m


def _restore(inferred, model) -> None:
    for t, src in zip(inferred.graph.initializer, model.graph.initializer):
        if t.name == src.name and t.data_location == TensorProto.EXTERNAL and \
                any(e.value == _MARK for e in t.external_data):
            t.CopyFrom(src)


def infer(model):
    """``model`` with inferred value_info (strict first, then lenient), weights intact."""
    shapes = _shapes_only(model)
    try:
        inferred = shape_inference.infer_shapes(shapes, strict_mode=True, data_prop=True)
    except Exception:  # noqa: BLE001 -- e.g. a function body onnx cannot infer strictly
        try:
            inferred = shape_inference.infer_shapes(shapes, data_prop=True)
        except Exception as e:  # noqa: BLE001 -- onnx's checker says why
            raise dml.HResultError(dml.E_INVALIDARG,
                                   f"dmlsim.onnx: shape inference failed: {e}") from None
    _restore(inferred, model)
    return inferred

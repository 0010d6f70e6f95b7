"""ONNX shape inference for lowering, without sending the weights through it.

``onnx.shape_inference.infer_shapes`` serializes the whole model into its C++ side and parses
the result back: for all-MiniLM-L6-v2 (90 MB of weights) 0.44 s of every session's first run,
the next process's included (0.05 s this way; resnet18 0.20 -> 0.01 s). Only the weights'
types and dimensions matter to it (the values data propagation reads are integer shape
tensors), so large floating-point initializers go in as types and dimensions only (marked
external, in a copy that never copies their bytes), and their bytes are put back into the
inferred model.
"""
from __future__ import annotations

import math

import onnx
from onnx import TensorProto, shape_inference

from .._api import public as dml

_FLOATS = {TensorProto.FLOAT: 4, TensorProto.FLOAT16: 2, TensorProto.BFLOAT16: 2,
           TensorProto.DOUBLE: 8}  # bytes per element
_MARK = "dmlsim: types and dimensions only"
_SMALL = 1024  # bytes: a tensor this small goes in whole


def _copy_except(dst, src, skip: str) -> None:
    """Every field of message ``src`` set in ``dst`` (copied), except the field ``skip``."""
    for fd, value in src.ListFields():
        if fd.name == skip:
            continue
        repeated = fd.is_repeated if hasattr(fd, "is_repeated") else \
            fd.label == fd.LABEL_REPEATED  # protobuf before 5.29 has only the label
        if repeated:
            getattr(dst, fd.name).extend(value)
        elif fd.message_type is not None:
            getattr(dst, fd.name).CopyFrom(value)
        else:
            setattr(dst, fd.name, value)


def _shapes_only(model):
    m = onnx.ModelProto()
    _copy_except(m, model, "graph")
    _copy_except(m.graph, model.graph, "initializer")
    for t in model.graph.initializer:
        if t.data_type in _FLOATS and t.data_location != TensorProto.EXTERNAL and \
                _FLOATS[t.data_type] * math.prod(t.dims) > _SMALL:  # (ByteSize reads the bytes)
            stub = m.graph.initializer.add(name=t.name, data_type=t.data_type, dims=t.dims,
                                           data_location=TensorProto.EXTERNAL)
            stub.external_data.add(key="location", value=_MARK)
        else:
            m.graph.initializer.add().CopyFrom(t)
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


def value_infos(model) -> dict:
    """{value name: ValueInfoProto}: ``model``'s inputs, outputs and the values onnx's shape
    inference types (lenient, with data propagation; the weights' bytes not sent through
    it). Raises what onnx raises."""
    inferred = shape_inference.infer_shapes(_shapes_only(model), data_prop=True).graph
    return {v.name: v for v in [*inferred.value_info, *inferred.input, *inferred.output]}

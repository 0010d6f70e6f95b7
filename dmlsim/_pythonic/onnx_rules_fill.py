"""Lowering rules for ONNX's generators, CastLike and If: Range -> FILL_VALUE_SEQUENCE,
ConstantOfShape -> FILL_VALUE_CONSTANT (the DML provider's mapping), CastLike -> CAST; an If
whose condition is a constant is the branch it takes, lowered in place (DirectML has no
control flow: a condition known only at run time is an error naming the node).

Range's start, limit and delta and ConstantOfShape's shape set the output's sizes, so they
must be constants (an all-constant node up to ``FOLD_LIMIT`` elements folds on the CPU
before any rule runs; these rules lower the larger ones). Range has
max(ceil((limit - start) / delta), 0) elements, start + i x delta (ONNX's definition);
ConstantOfShape's ``value`` defaults to a float32 0. Same rule signature as ``onnx_rules``."""
from __future__ import annotations

import math

import numpy as np
from onnx import numpy_helper

from .._api import public as dml
from . import dmlx_functions as F
from .onnx_lower import Value, dml_type, fail


def _scalar(L, node, k, what):
    v = np.asarray(L.constant(node.input[k], node, what))
    if v.size != 1:
        fail(dml.E_INVALIDARG, f"{L.label(node)}: {what} has {v.size} elements; a scalar")
    return v.reshape(())


def _range(L, node, ins, attrs, act):
    start, limit, delta = (_scalar(L, node, k, w) for k, w in
                           enumerate(("start", "limit", "delta")))
    if delta == 0:
        fail(dml.E_INVALIDARG, f"{L.label(node)}: delta is 0")
    n = max(int(math.ceil((float(limit) - float(start)) / float(delta))), 0)
    if n == 0:
        fail(dml.E_NOTIMPL, f"{L.label(node)}: the range is empty; DirectML has no empty "
                            "tensors")
    dt = ins[0].dtype
    return L.new(F.FillValueSequence(L.graph, [n], dml_type(dt), start.item(), delta.item()),
                 (n,), dt)


def _constant_of_shape(L, node, ins, attrs, act):
    shape = [int(s) for s in np.asarray(L.constant(node.input[0], node, "shape")).reshape(-1)]
    value = numpy_helper.to_array(attrs["value"]).reshape(-1) if "value" in attrs else \
        np.zeros(1, np.float32)
    if any(s == 0 for s in shape):
        fail(dml.E_NOTIMPL, f"{L.label(node)}: shape {shape} is empty; DirectML has no empty "
                            "tensors")
    y = F.FillValueConstant(L.graph, shape or [1], dml_type(value.dtype), value[0].item())
    return L.new(y, tuple(shape), value.dtype)


def _cast_like(L, node, ins, attrs, act):
    to = ins[1].dtype
    return L.new(F.Cast(L.tensor(ins[0]), dml_type(to)), ins[0].shape, to)


def _if(L, node, ins, attrs, act):
    cond = np.asarray(L.constant(node.input[0], node, "cond; DirectML has no control flow"))
    branch = attrs["then_branch" if bool(cond.reshape(-1)[0]) else "else_branch"]
    for init in branch.initializer:
        arr = L.array(init)
        L.values[init.name] = Value(tuple(arr.shape), arr.dtype, arr)
    for o in branch.output:
        if o.type.WhichOneof("value") not in (None, "tensor_type"):
            fail(dml.E_NOTIMPL, f"{L.label(node)}: branch output '{o.name}' is not a tensor "
                                "(sequences, maps and optional types are not supported)")
    index = L.node_index
    for inner in branch.node:
        L.lower_inner(inner)
    L.node_index = index
    return [L.values[o.name] for o in branch.output]


RULES = {"If": _if, "Range": _range, "ConstantOfShape": _constant_of_shape, "CastLike": _cast_like}

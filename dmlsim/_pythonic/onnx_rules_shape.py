"""Lowering rules for ONNX's shape, data-movement, indexing and reduction operators.

Reshape, Flatten, Squeeze and Unsqueeze are reinterpretations of the same packed bytes (no
node); Transpose and Expand are ELEMENT_WISE_IDENTITY of a permuted or zero-strided view;
Shape and Size are constants (shapes are static). Concat -> JOIN, Split -> SPLIT, Slice ->
SLICE1, Gather -> GATHER, GatherElements -> GATHER_ELEMENTS, Pad -> PADDING, Tile -> TILE,
Reduce* -> REDUCE, ArgMax/ArgMin -> ARGMAX/ARGMIN, TopK -> TOP_K1, CumSum -> CUMULATIVE_SUMMATION,
DepthToSpace/SpaceToDepth -> *1. Same rule signature as ``onnx_rules``."""
from __future__ import annotations

import numpy as np

from .._api import public as dml
from . import dmlx_functions as F
from onnx import helper

from .dmlx_graph import TensorDesc
from .dmlx_ops import make_node
from .onnx_lower import Value, dml_type as _dml_type, fail, packed_strides, sizes_of
from .onnx_rules import X


def _view(L, v, shape):
    """``v`` with another shape over the same bytes (a Value sharing the tensor)."""
    shape = tuple(int(s) for s in shape)
    if v.const is not None:
        return Value(shape, v.dtype, v.const.reshape(shape))
    return Value(shape, v.dtype, None, L.view(v, sizes_of(shape)))


def _axes(L, node, ins, attrs, rank, index=1, name="axes"):
    """Axes from the attribute (older opsets) or the constant input ``index``."""
    if len(ins) > index and ins[index] is not None:
        axes = L.constant(node.input[index], node, name).ravel().tolist()
    else:
        axes = attrs.get("axes")
    return None if axes is None else [L.axis(a, rank) for a in axes]


def _reshape(L, node, ins, attrs, act):
    x = ins[0]
    target = L.constant(node.input[1], node, "shape").astype(np.int64).tolist()
    allow_zero = int(attrs.get("allowzero", 0))
    shape = [x.shape[i] if (t == 0 and not allow_zero) else t for i, t in enumerate(target)]
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1]))
        shape[shape.index(-1)] = int(np.prod(x.shape)) // max(known, 1)
    return _view(L, x, shape)


def _flatten(L, node, ins, attrs, act):
    x = ins[0]
    axis = L.axis(attrs.get("axis", 1), len(x.shape))
    return _view(L, x, (int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis:]))))


def _squeeze(L, node, ins, attrs, act):
    x = ins[0]
    axes = _axes(L, node, ins, attrs, len(x.shape))
    if axes is None:
        axes = [i for i, s in enumerate(x.shape) if s == 1]
    return _view(L, x, [s for i, s in enumerate(x.shape) if i not in axes])


def _unsqueeze(L, node, ins, attrs, act):
    x = ins[0]
    rank = len(x.shape) + len(_axes(L, node, ins, attrs, 1 << 30) or [])
    axes = sorted(_axes(L, node, ins, attrs, rank))
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return _view(L, x, shape)


def _transpose(L, node, ins, attrs, act):
    x = ins[0]
    rank = len(x.shape)
    perm = list(attrs.get("perm", list(range(rank))[::-1]))
    strides = packed_strides(sizes_of(x.shape))
    shape = [x.shape[p] for p in perm]
    view = L.view(x, sizes_of(shape), [strides[p] for p in perm] if rank else None)
    return L.new(X["Identity"](view), shape, x.dtype)


def _expand(L, node, ins, attrs, act):
    x = ins[0]
    target = L.constant(node.input[1], node, "shape").astype(np.int64).tolist()
    shape = tuple(np.broadcast_shapes(tuple(x.shape), tuple(target)))
    return L.new(X["Identity"](L.broadcast(x, shape)), shape, x.dtype)


def _shape(L, node, ins, attrs, act):
    dims = np.array(ins[0].shape, np.int64)
    start, end = attrs.get("start", 0), attrs.get("end", len(dims))
    out = dims[start:end]
    return Value(tuple(out.shape), out.dtype, out)


def _size(L, node, ins, attrs, act):
    n = np.array(int(np.prod(ins[0].shape)), np.int64)
    return Value((), n.dtype, n)


def _concat(L, node, ins, attrs, act):
    vals = [v for v in ins if v is not None and int(np.prod(v.shape)) > 0]  # the provider
    rank = len(vals[0].shape)                                             # drops empty ones
    axis = L.axis(attrs["axis"], rank)
    shape = list(vals[0].shape)
    shape[axis] = sum(v.shape[axis] for v in vals)
    if len(vals) == 1:
        return L.new(X["Identity"](L.tensor(vals[0])), shape, vals[0].dtype)
    return L.new(F.Join([L.tensor(v) for v in vals], axis), shape, vals[0].dtype)


def _split(L, node, ins, attrs, act):
    x = ins[0]
    axis = L.axis(attrs.get("axis", 0), len(x.shape))
    if len(ins) > 1 and ins[1] is not None:
        parts = L.constant(node.input[1], node, "split").astype(np.int64).tolist()
    elif "split" in attrs:
        parts = list(attrs["split"])
    else:
        n = int(attrs.get("num_outputs", len(node.output)))
        size = -(-x.shape[axis] // n)
        parts = [size] * (n - 1) + [x.shape[axis] - size * (n - 1)]
    kept = [p for p in parts if p > 0]  # an empty piece is an empty constant (DML has no
    outs = iter(F.Split(L.tensor(x), axis, kept) if len(kept) > 1 else  # empty tensors; the
                [X["Identity"](L.tensor(x))])                      # Concat rule drops it)
    result = []
    for p in parts:
        shape = list(x.shape)
        shape[axis] = p
        result.append(L.new(next(outs), shape, x.dtype) if p > 0 else
                      Value(tuple(shape), x.dtype, np.zeros(shape, x.dtype)))
    return result


def _slice(L, node, ins, attrs, act):
    x = ins[0]
    rank = len(x.shape)
    if len(ins) > 1:
        starts = L.constant(node.input[1], node, "starts").astype(np.int64).tolist()
        ends = L.constant(node.input[2], node, "ends").astype(np.int64).tolist()
        axes = _axes(L, node, ins, attrs, rank, 3) or list(range(len(starts)))
        steps = L.constant(node.input[4], node, "steps").astype(np.int64).tolist() \
            if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
    else:
        starts, ends = list(attrs["starts"]), list(attrs["ends"])
        axes = [L.axis(a, rank) for a in attrs.get("axes", range(len(starts)))]
        steps = [1] * len(starts)
    offsets, sizes, strides = [0] * rank, list(x.shape), [1] * rank
    shape = list(x.shape)
    for a, s, e, st in zip(axes, starts, ends, steps):
        idx = range(*slice(int(s), int(e), int(st)).indices(x.shape[a]))
        shape[a] = len(idx)
        if not idx:
            fail(dml.E_NOTIMPL, f"{L.label(node)}: axis {a} slices to nothing (DML tensors "
                                "have no empty dimensions)")
        lo, hi = min(idx[0], idx[-1]), max(idx[0], idx[-1])
        offsets[a], sizes[a], strides[a] = lo, hi - lo + 1, int(st)
    y = F.Slice(L.view(x, sizes_of(x.shape)), offsets, sizes, strides)
    return L.new(y, shape, x.dtype)


def _gather(L, node, ins, attrs, act):
    """GATHER: every tensor padded with leading 1s to one DimensionCount; IndexDimensions is
    the indices' rank (0 for a scalar index: its one element, read as sizes of 1s)."""
    x, idx = ins
    r, q = len(x.shape), len(idx.shape)
    axis = L.axis(attrs.get("axis", 0), r)
    out = list(x.shape[:axis]) + list(idx.shape) + list(x.shape[axis + 1:])
    d = max(r, len(out), q, 1)
    ex = L.view(x, [1] * (d - r) + sizes_of(x.shape))
    ei = L.view(idx, [1] * (d - q) + list(idx.shape))
    y = X["Gather"](ex, ei, Axis=axis + d - r, IndexDimensions=q)
    return L.new(y, out, x.dtype)


def _gather_elements(L, node, ins, attrs, act):
    x, idx = ins
    axis = L.axis(attrs.get("axis", 0), len(x.shape))
    return L.new(X["GatherElements"](L.tensor(x), L.tensor(idx), Axis=axis), idx.shape, x.dtype)


def _pad(L, node, ins, attrs, act):
    x = ins[0]
    rank = len(x.shape)
    if len(ins) > 1:
        pads = L.constant(node.input[1], node, "pads").astype(np.int64).tolist()
        value = float(L.constant(node.input[2], node, "constant_value").reshape(())) \
            if len(ins) > 2 and ins[2] is not None else 0.0
        axes = _axes(L, node, ins, attrs, rank, 3)
    else:
        pads, value, axes = list(attrs["pads"]), float(attrs.get("value", 0.0)), None
    axes = axes or list(range(rank))
    start, end = [0] * rank, [0] * rank
    for k, a in enumerate(axes):
        start[a], end[a] = pads[k], pads[k + len(axes)]
    if min(start + end) < 0:
        fail(dml.E_NOTIMPL, f"{L.label(node)}: negative pads (cropping)")
    mode = attrs.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    modes = {"constant": 0, "edge": 1, "reflect": 2, "wrap": 4}  # WRAP from FL 6_4
    if modes.get(mode) is None:
        fail(dml.E_NOTIMPL, f"{L.label(node)}: mode '{mode}' has no DML_PADDING_MODE")
    y = F.Padding(L.tensor(x), modes[mode], value, start, end)
    return L.new(y, [s + a + b for s, a, b in zip(x.shape, start, end)], x.dtype)


def _tile(L, node, ins, attrs, act):
    x = ins[0]
    reps = L.constant(node.input[1], node, "repeats").astype(np.int64).tolist()
    return L.new(X["Tile"](L.tensor(x), Repeats=reps), [s * r for s, r in zip(x.shape, reps)],
                 x.dtype)


REDUCE = {"ReduceSum": "SUM", "ReduceMean": "AVERAGE", "ReduceMax": "MAX", "ReduceMin": "MIN",
          "ReduceProd": "MULTIPLY", "ReduceL1": "L1", "ReduceL2": "L2",
          "ReduceLogSum": "LOG_SUM", "ReduceLogSumExp": "LOG_SUM_EXP",
          "ReduceSumSquare": "SUM_SQUARE"}


def _reduce(function):
    def rule(L, node, ins, attrs, act):
        x = ins[0]
        rank = len(x.shape)
        axes = _axes(L, node, ins, attrs, rank)
        if not axes:
            if attrs.get("noop_with_empty_axes", 0):
                return L.new(X["Identity"](L.tensor(x)), x.shape, x.dtype)
            axes = list(range(rank))
        y = F.Reduce(L.tensor(x), getattr(dml, "DML_REDUCE_FUNCTION_" + function), axes)
        keep = [1 if i in axes else s for i, s in enumerate(x.shape)]
        shape = keep if attrs.get("keepdims", 1) else [s for i, s in enumerate(x.shape)
                                                        if i not in axes]
        return L.new(y, shape, x.dtype)
    return rule


def _arg(fn_name):
    def rule(L, node, ins, attrs, act):
        x = ins[0]
        axis = L.axis(attrs.get("axis", 0), len(x.shape))
        direction = 1 if attrs.get("select_last_index", 0) else 0
        y = X[fn_name](L.tensor(x), Axes=[axis], AxisDirection=direction,
                       outputDataType=dml.DML_TENSOR_DATA_TYPE_INT64)
        keep = [1 if i == axis else s for i, s in enumerate(x.shape)]
        shape = keep if attrs.get("keepdims", 1) else [s for i, s in enumerate(x.shape)
                                                        if i != axis]
        return L.new(y, shape, np.int64)
    return rule


def _topk(L, node, ins, attrs, act):
    x = ins[0]
    k = int(L.constant(node.input[1], node, "K").reshape(()))
    axis = L.axis(attrs.get("axis", -1), len(x.shape))
    largest = attrs.get("largest", 1)
    values, indices = F.TopK(L.tensor(x), axis, k, dml.DML_AXIS_DIRECTION_DECREASING if largest
                             else dml.DML_AXIS_DIRECTION_INCREASING)
    shape = list(x.shape)
    shape[axis] = k
    return [L.new(values, shape, x.dtype),
            L.new(F.Cast(indices, dml.DML_TENSOR_DATA_TYPE_INT64), shape, np.int64)]


def cumulative(fn_name):
    """CumSum / CumProd: CUMULATIVE_SUMMATION / _PRODUCT along the constant axis."""
    def rule(L, node, ins, attrs, act):
        x = ins[0]
        axis = L.axis(int(L.constant(node.input[1], node, "axis").reshape(())), len(x.shape))
        y = X[fn_name](L.tensor(x), axis, int(attrs.get("reverse", 0)),
                       int(attrs.get("exclusive", 0)))
        return L.new(y, x.shape, x.dtype)
    return rule


def _depth_space(fn_name):
    def rule(L, node, ins, attrs, act):
        x = ins[0]
        b = int(attrs["blocksize"])
        mode = attrs.get("mode", b"DCR")
        order = 1 if mode in (b"CRD", "CRD") else 0  # DML_DEPTH_SPACE_ORDER
        y = X[fn_name](L.tensor(x), b, order)
        return L.new(y, y.GetOutputDesc().sizes, x.dtype)
    return rule


def _gather_nd(L, node, ins, attrs, act):
    x, idx = ins
    b = int(attrs.get("batch_dims", 0))
    k = idx.shape[-1]
    out = list(idx.shape[:-1]) + list(x.shape[b + k:])
    d = max(len(x.shape), len(idx.shape), len(out))
    ex = L.view(x, [1] * (d - len(x.shape)) + sizes_of(x.shape))
    ei = L.view(idx, [1] * (d - len(idx.shape)) + sizes_of(idx.shape))
    y = X["GatherND1"](ex, ei, InputDimensionCount=len(x.shape),
                       IndicesDimensionCount=len(idx.shape), BatchDimensionCount=b)
    return L.new(y, out, x.dtype)


def _one_hot(L, node, ins, attrs, act):
    """ONE_HOT: the indices read with a size-1 dimension at ``axis``; depth a constant."""
    idx, depth, values = ins
    n = int(L.constant(node.input[1], node, "depth").reshape(()))
    r = len(idx.shape) + 1
    axis = L.axis(attrs.get("axis", -1), r)
    shape = list(idx.shape)
    shape.insert(axis, n)
    ind = list(idx.shape)
    ind.insert(axis, 1)
    ei = L.view(idx, ind)
    if idx.dtype.kind == "f":  # ONNX allows float indices; DML's are integers
        ei = F.Cast(ei, dml.DML_TENSOR_DATA_TYPE_INT64)
    y = X["OneHot"](ei, L.view(values, [1] * (r - 1) + [2]), Axis=axis,
                    OutputTensor=TensorDesc(_dml_type(values.dtype), shape))
    return L.new(y, shape, values.dtype)


def _eye_like(L, node, ins, attrs, act):
    """EyeLike: DIAGONAL_MATRIX1 band [k, k + 1) of ones (dtype from ``dtype`` or the input)."""
    x = ins[0]
    dt = np.dtype(helper.tensor_dtype_to_np_dtype(attrs["dtype"])) if "dtype" in attrs \
        else x.dtype
    k = int(attrs.get("k", 0))
    y = make_node("EyeLike", "DIAGONAL_MATRIX1", {"InputTensor": None},
                  {"ValueDataType": _dml_type(dt), "Value": dt.type(1),
                   "DiagonalFillBegin": k, "DiagonalFillEnd": k + 1},
                  {"OutputTensor": TensorDesc(_dml_type(dt), sizes_of(x.shape))},
                  graph=L.graph)[0]
    return L.new(y, x.shape, dt)


def _reduction(attrs):
    r = attrs.get("reduction", "none")
    return r.decode() if isinstance(r, bytes) else r


def _scatter_elements(L, node, ins, attrs, act):
    x, idx, upd = ins
    if _reduction(attrs) != "none":
        fail(dml.E_NOTIMPL, f"{L.label(node)}: reduction '{_reduction(attrs)}' (DML's "
                            "SCATTER_ELEMENTS replaces)")
    axis = L.axis(attrs.get("axis", 0), len(x.shape))
    y = X["ScatterElements"](L.tensor(x), L.tensor(idx), L.tensor(upd), Axis=axis)
    return L.new(y, x.shape, x.dtype)


def _scatter_nd(L, node, ins, attrs, act):
    x, idx, upd = ins
    if _reduction(attrs) != "none":
        fail(dml.E_NOTIMPL, f"{L.label(node)}: reduction '{_reduction(attrs)}' (DML's "
                            "SCATTER_ND replaces)")
    d = max(len(x.shape), len(idx.shape), len(upd.shape))
    views = [L.view(v, [1] * (d - len(v.shape)) + sizes_of(v.shape)) for v in (x, idx, upd)]
    y = X["ScatterND"](*views, InputDimensionCount=len(x.shape),
                       IndicesDimensionCount=len(idx.shape))
    return L.new(y, x.shape, x.dtype)


RULES = {"OneHot": _one_hot, "EyeLike": _eye_like, "GatherND": _gather_nd,
         "ScatterElements": _scatter_elements, "Scatter": _scatter_elements,
         "ScatterND": _scatter_nd}
RULES.update({"Reshape": _reshape, "Flatten": _flatten, "Squeeze": _squeeze,
         "Unsqueeze": _unsqueeze, "Transpose": _transpose, "Expand": _expand, "Shape": _shape,
         "Size": _size, "Concat": _concat, "Split": _split, "Slice": _slice, "Gather": _gather,
         "GatherElements": _gather_elements, "Pad": _pad, "Tile": _tile,
         "ArgMax": _arg("ArgMax"), "ArgMin": _arg("ArgMin"), "TopK": _topk, "CumSum": cumulative("CumulativeSummation"),
         "DepthToSpace": _depth_space("DepthToSpace"),
         "SpaceToDepth": _depth_space("SpaceToDepth"),
         **{name: _reduce(fn) for name, fn in REDUCE.items()}})


def _trilu(L, node, ins, attrs, act):
    """Trilu: ELEMENT_WISE_IF of a constant mask over the last two dimensions (kept where
    j - i >= k, upper, or j - i <= k, lower), broadcast through zero strides, and zero; k is
    read on the CPU (a constant), as the DML provider reads it."""
    x = ins[0]
    k = 0 if len(ins) < 2 or ins[1] is None else int(L.constant(node.input[1], node, "k")
                                                      .reshape(()))
    n, m = x.shape[-2], x.shape[-1]
    d = np.arange(m)[None, :] - np.arange(n)[:, None]
    keep = (d >= k) if int(attrs.get("upper", 1)) else (d <= k)
    mask = Value((n, m), np.dtype(np.uint8), keep.astype(np.uint8), None)
    zero = Value((), x.dtype, np.zeros((), x.dtype), None)
    e = X["If"](L.broadcast(mask, x.shape), L.tensor(x), L.broadcast(zero, x.shape))
    return L.new(e, x.shape, x.dtype)


RULES["Trilu"] = _trilu

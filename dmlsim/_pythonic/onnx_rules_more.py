"""Lowering rules for the ONNX operators ORT's DML provider registers that have a DML operator of
their own but no family above: CumProd -> CUMULATIVE_PRODUCT, ReverseSequence ->
REVERSE_SUBSEQUENCES, Col2Im -> FOLD, MaxUnpool -> MAX_UNPOOLING, RoiAlign -> ROI_ALIGN1,
MaxRoiPool -> ROI_POOLING, GlobalLpPool -> LP_POOLING1 over the whole image,
Upsample -> Resize's RESAMPLE2, Einsum -> REDUCE / GEMM / ELEMENT_WISE_IDENTITY (the contraction
forms the provider recognizes: one or two operands, no repeated index in one operand, no
ellipsis; others stay on the CPU, as the provider's support query sends them). Same rule
signature as ``onnx_rules``."""
from __future__ import annotations

import numpy as np
from onnx import helper

from .._api import public as dml
from . import dmlx_functions as F
from . import dmlx_graph as G
from .onnx_lower import Value, dml_type, fail, sizes_of
from .onnx_rules import X
from .onnx_rules_nn import _lppool, _resize, _text
from .onnx_rules_shape import cumulative


def _reverse_sequence(L, node, ins, attrs, act):
    """SequenceLengthsTensor has the input's sizes with 1 on the time axis: the [batch] lengths
    read through zero strides everywhere but the batch axis, as UINT64 (ONNX's INT64 lengths
    are non-negative)."""
    x, lens = ins
    t, b = int(attrs.get("time_axis", 0)), int(attrs.get("batch_axis", 1))
    sizes = list(x.shape)
    sizes[t] = 1
    strides = [0] * len(sizes)
    strides[b] = 1
    if lens.const is not None:
        arr = np.broadcast_to(np.asarray(lens.const, np.int64).astype(np.uint64).reshape(
            [-1 if d == b else 1 for d in range(len(sizes))]), sizes)
        e = L.tensor(Value(tuple(sizes), np.dtype(np.uint64), np.ascontiguousarray(arr)))
    else:
        e = G.Reinterpret(L.tensor(lens), dml.DML_TENSOR_DATA_TYPE_UINT64, sizes, strides)
    y = X["ReverseSubsequences"](L.tensor(x), e, t)
    return L.new(y, x.shape, x.dtype)


def _col2im(L, node, ins, attrs, act):
    """FOLD: the [N, C * prod(block), L] columns summed back into [N, C, *image_shape]."""
    x = ins[0]
    image = [int(v) for v in L.constant(node.input[1], node, "image_shape").ravel()]
    block = [int(v) for v in L.constant(node.input[2], node, "block_shape").ravel()]
    n = len(image)
    dil = list(attrs.get("dilations", [1] * n))
    pads = list(attrs.get("pads", [0] * 2 * n))
    strides = list(attrs.get("strides", [1] * n))
    c = x.shape[1] // int(np.prod(block))
    shape = [x.shape[0], c] + image
    out = G.TensorDesc(dml_type(x.dtype), shape)
    y = X["Fold"](L.tensor(x), block, strides, dil, pads[:n], pads[n:], OutputTensor=out)
    return L.new(y, shape, x.dtype)


def _max_unpool(L, node, ins, attrs, act):
    """MAX_UNPOOLING (4-D): indices into the whole output as one flat array, as MaxPool's
    Indices are; INT64 read as UINT64."""
    x, idx = ins[0], ins[1]
    if len(x.shape) != 4:
        fail(dml.E_NOTIMPL, f"{L.label(node)}: a {len(x.shape)}-D input (DML's MAX_UNPOOLING "
                            "takes 4-D)")
    k = list(attrs["kernel_shape"])
    s = list(attrs.get("strides", [1] * len(k)))
    p = list(attrs.get("pads", [0] * 2 * len(k)))
    shape = list(x.shape[:2]) + [(i - 1) * st + kk - p[d] - p[d + len(k)]
                                 for d, (i, st, kk) in enumerate(zip(x.shape[2:], s, k))]
    want = shape
    if len(ins) > 2 and ins[2] is not None:  # ONNX: the unpooled tensor, zeros after it
        want = [int(v) for v in L.constant(node.input[2], node, "output_shape").ravel()]
        if len(want) != 4 or any(w < g for w, g in zip(want, shape)):
            fail(dml.E_INVALIDARG, f"{L.label(node)}: output_shape {want} is smaller than the "
                                   f"unpooled {shape}")
    e_idx = idx.const.astype(np.uint64) if idx.const is not None else None
    ei = L.tensor(Value(idx.shape, np.dtype(np.uint64), e_idx)) if e_idx is not None else \
        G.Reinterpret(L.tensor(idx), dml.DML_TENSOR_DATA_TYPE_UINT64, sizes_of(idx.shape), None)
    y = X["MaxUnpooling"](L.tensor(x), ei, OutputTensor=G.TensorDesc(dml_type(x.dtype), shape))
    if want != shape:
        y = F.Padding(y, dml.DML_PADDING_MODE_CONSTANT, 0.0, [0] * 4,
                      [w - g for w, g in zip(want, shape)])
    return L.new(y, want, x.dtype)


def _roi_align(L, node, ins, attrs, act):
    """ROI_ALIGN1: ONNX's regions (x1, y1, x2, y2) as DML's; half_pixel is InputPixelOffset 0.5
    and OutputPixelOffset -0.5, output_half_pixel (opset 10's only mode) 0 and -0.5;
    sampling_ratio 0 is adaptive (1 to UINT_MAX samples)."""
    x, rois, idx = ins
    mode = _text(attrs, "mode", "avg")
    coord = _text(attrs, "coordinate_transformation_mode",
                  "half_pixel" if _opset(L) >= 16 else "output_half_pixel")
    h, w = int(attrs.get("output_height", 1)), int(attrs.get("output_width", 1))
    ratio = int(attrs.get("sampling_ratio", 0))
    scale = float(attrs.get("spatial_scale", 1.0))
    n = rois.shape[0]
    ev = G.Reinterpret(L.tensor(idx), dml.DML_TENSOR_DATA_TYPE_UINT64, [n], None) \
        if idx.const is None else L.tensor(Value((n,), np.dtype(np.uint64),
                                                 idx.const.astype(np.uint64)))
    shape = [n, x.shape[1], h, w]
    y = X["RoiAlign1"](
        L.tensor(x), L.tensor(rois), ev,
        dml.DML_REDUCE_FUNCTION_MAX if mode == "max" else dml.DML_REDUCE_FUNCTION_AVERAGE,
        dml.DML_INTERPOLATION_MODE_LINEAR, scale, scale,
        0.5 if coord == "half_pixel" else 0.0, -0.5, 0.0,
        ratio if ratio > 0 else 1, ratio if ratio > 0 else 0xFFFFFFFF, False,
        OutputTensor=G.TensorDesc(dml_type(x.dtype), shape))
    return L.new(y, shape, x.dtype)


def _global_lp_pool(L, node, ins, attrs, act):
    """GlobalLpPool: LpPool with the whole spatial extent as its window."""
    return _lppool(L, node, ins, {"kernel_shape": list(ins[0].shape[2:]),
                                  "p": attrs.get("p", 2)}, act)


def _max_roi_pool(L, node, ins, attrs, act):
    """ROI_POOLING: ONNX's [num_rois, 5] regions (batch, x1, y1, x2, y2) are DML's ROITensor
    {1, 1, num_rois, 5}."""
    x, rois = ins
    h, w = (int(v) for v in attrs["pooled_shape"])
    n = rois.shape[0]
    y = X["RoiPooling"](L.tensor(x), L.view(rois, [1, 1, n, 5]),
                        float(attrs.get("spatial_scale", 1.0)), {"Width": w, "Height": h})
    return L.new(y, [n, x.shape[1], h, w], x.dtype)


def _nonzero_coordinates(L, node, ins, attrs, act):
    """dmlsim's NonZero rewrite (``onnx_functions._nonzero``): NONZERO_COORDINATES of the input
    (lifted to 2-D), its count {1} and coordinates {elements, max(rank, 2)}, UINT32."""
    x = ins[0]
    r = max(len(x.shape), 2)
    m = int(np.prod(x.shape))
    count, coords = X["NonZeroCoordinates"](L.view(x, [1] * (r - len(x.shape)) +
                                                   [int(s) for s in x.shape]))
    return [L.new(count, (1,), np.uint32), L.new(coords, (m, r), np.uint32)]


def _opset(L):
    return next((o.version for o in L.model.opset_import if o.domain in ("", "ai.onnx")), 1)


def _upsample(L, node, ins, attrs, act):
    """Upsample (opsets 7-9) as the Resize it was replaced by: asymmetric coordinates, nearest
    rounding down (its integer scales repeat each element), or linear."""
    if len(ins) > 1 and ins[1] is not None:
        scales, name = ins[1], node.input[1]
    else:
        arr = np.asarray(attrs["scales"], np.float32)
        scales, name = Value(arr.shape, arr.dtype, arr), f"{node.name or 'upsample'}/scales"
        L.values[name] = scales
    resize = helper.make_node("Resize", [node.input[0], "", name], list(node.output),
                              name=node.name)
    return _resize(L, resize, [ins[0], None, scales],
                   {"mode": _text(attrs, "mode", "nearest"), "nearest_mode": "floor",
                    "coordinate_transformation_mode": "asymmetric"}, act)


# ---- Einsum ----------------------------------------------------------------------------------

def _permuted(L, v, perm):
    """``v`` transposed by ``perm``, packed (an ELEMENT_WISE_IDENTITY of the strided view)."""
    if list(perm) == list(range(len(perm))):
        return v
    shape = [v.shape[p] for p in perm]
    packed = [int(np.prod(v.shape[d + 1:])) for d in range(len(v.shape))]
    view = L.view(v, sizes_of(shape), [packed[p] for p in perm] or [1])
    return L.new(F.Identity(view), shape, v.dtype)


def _summed(L, v, term, keep):
    """``v`` with the letters of ``term`` not in ``keep`` summed away (REDUCE SUM)."""
    axes = [d for d, c in enumerate(term) if c not in keep]
    if not axes:
        return v, term
    left = [s for d, s in enumerate(v.shape) if d not in axes]
    y = F.Reduce(L.view(v, sizes_of(v.shape)), dml.DML_REDUCE_FUNCTION_SUM, axes)
    return L.new(y, left, v.dtype), "".join(c for c in term if c in keep)


def _einsum(L, node, ins, attrs, act):
    eq = _text(attrs, "equation", "").replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if "..." in eq:
        fail(dml.E_NOTIMPL, f"{L.label(node)}: '{eq}' has an ellipsis")
    if not arrow:
        out = "".join(sorted(c for c in set(lhs) if c.isalpha() and lhs.count(c) == 1))
    if len(terms) != len(ins) or len(terms) > 2 or any(len(set(t)) != len(t) for t in terms):
        fail(dml.E_NOTIMPL, f"{L.label(node)}: '{eq}' is not a one- or two-operand contraction "
                            "without repeated (diagonal) indices")
    if len(terms) == 1:
        v, term = _summed(L, ins[0], terms[0], set(out))
        return _permuted(L, v, [term.index(c) for c in out])
    (a, ta), (b, tb) = (_summed(L, ins[0], terms[0], set(out) | set(terms[1])),
                        _summed(L, ins[1], terms[1], set(out) | set(terms[0])))
    size = dict(zip(ta, a.shape)) | dict(zip(tb, b.shape))
    batch = [c for c in out if c in ta and c in tb]
    left = [c for c in out if c in ta and c not in tb]
    right = [c for c in out if c in tb and c not in ta]
    inner = [c for c in ta if c in tb and c not in out]
    pa = _permuted(L, a, [ta.index(c) for c in batch + left + inner])
    pb = _permuted(L, b, [tb.index(c) for c in batch + inner + right])

    def n(letters):
        return int(np.prod([size[c] for c in letters]))
    bt, m, k, nn = n(batch), n(left), n(inner), n(right)
    y = F.Gemm(L.view(pa, [1, bt, m, k]), L.view(pb, [1, bt, k, nn]), None)
    got = batch + left + right
    v = L.new(y, [size[c] for c in got], a.dtype)
    return _permuted(L, v, [got.index(c) for c in out])


RULES = {"CumProd": cumulative("CumulativeProduct"), "ReverseSequence": _reverse_sequence, "Col2Im": _col2im,
         "MaxUnpool": _max_unpool, "RoiAlign": _roi_align, "Upsample": _upsample,
         "Einsum": _einsum, "GlobalLpPool": _global_lp_pool, "MaxRoiPool": _max_roi_pool,
         "com.dmlsim.NonZeroCoordinates": _nonzero_coordinates}

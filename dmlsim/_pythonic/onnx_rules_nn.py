"""Lowering rules for ONNX's neural-network operators: MatMul and Gemm (GEMM, batched over 4-D
sizes), Conv and ConvTranspose (CONVOLUTION FORWARD/BACKWARD, CROSS_CORRELATION), pooling
(MAX_POOLING2, AVERAGE_POOLING1, their Global forms), BatchNormalization, InstanceNormalization
and LayerNormalization (MEAN_VARIANCE_NORMALIZATION1), LRN. Same rule signature as
``onnx_rules``."""
from __future__ import annotations

import numpy as np

from .._api import public as dml
from . import dmlx_functions as F
from .dmlx_graph import Reinterpret
from .onnx_lower import Value, fail
from .onnx_rules import X


def _spatial_pads(L, node, attrs, in_spatial, kernel, strides, dilations):
    """(start, end) paddings from ``pads`` or ``auto_pad`` (SAME_UPPER/SAME_LOWER/VALID)."""
    n = len(kernel)
    auto = attrs.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        start, end = [], []
        for i in range(n):
            out = -(-in_spatial[i] // strides[i])
            total = max(0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 -
                        in_spatial[i])
            small, big = total // 2, total - total // 2
            start.append(small if auto == "SAME_UPPER" else big)
            end.append(big if auto == "SAME_UPPER" else small)
        return start, end
    pads = list(attrs.get("pads", [0] * (2 * n)))
    return pads[:n], pads[n:]


def _as_4d(L, v, name):
    """A 3-D [N, C, W] value read as [N, C, 1, W] (DML's convolutions and pools want 2+ spatial
    dimensions, as the provider pads them)."""
    if len(v.shape) == 3:
        return L.view(v, [v.shape[0], v.shape[1], 1, v.shape[2]], name=name), True
    return L.tensor(v, name), False


def _conv(L, node, ins, attrs, act, backward=False):
    """CONVOLUTION, FORWARD (Conv) or BACKWARD (ConvTranspose).

    ConvTranspose's output_padding: ONNX computes those trailing elements (they receive the
    contributions EndPadding would have cropped). DML's CONVOLUTION page says OutputPadding
    "applies a zero padding to the result", and ORT's DML provider zeroes OutputPadding and
    hands DML an output tensor output_padding larger instead. dmlsim keeps to the page: the
    output padding is taken out of EndPadding first (uncropping exactly those elements), and
    only what exceeds EndPadding stays OutputPadding -- elements past the full transposed
    convolution, which ONNX's formula makes zero as well. Same values, a desc the page allows."""
    x, w = ins[0], ins[1]
    b = ins[2] if len(ins) > 2 else None
    if len(x.shape) < 3:
        fail(dml.E_INVALIDARG, f"{L.label(node)}: X has rank {len(x.shape)}; Conv needs 3+")
    ex, lifted = _as_4d(L, x, node.input[0])
    ew, _ = _as_4d(L, w, node.input[1])
    spatial = list(x.shape[2:])
    kernel = list(attrs.get("kernel_shape", w.shape[2:]))
    n = len(kernel)
    strides = list(attrs.get("strides", [1] * n))
    dilations = list(attrs.get("dilations", [1] * n))
    groups = int(attrs.get("group", 1))
    start, end = _spatial_pads(L, node, attrs, spatial, kernel, strides, dilations)
    out_pad = list(attrs.get("output_padding", [0] * n))
    m = w.shape[1] * groups if backward else w.shape[0]
    auto = attrs.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if backward and ("output_shape" in attrs or auto in ("SAME_UPPER", "SAME_LOWER")):
        # ConvTranspose: the paddings that give output_shape (SAME: input x stride)
        want = list(attrs.get("output_shape", [spatial[i] * strides[i] for i in range(n)]))
        want = want[-n:]
        total = [strides[i] * (spatial[i] - 1) + out_pad[i] + (kernel[i] - 1) * dilations[i] +
                 1 - want[i] for i in range(n)]
        upper = auto == "SAME_UPPER"  # the spec: SAME_UPPER puts the odd one at the end
        out_pad = [p + max(0, -t) for p, t in zip(out_pad, total)]  # a larger output: zeros
        total = [max(0, t) for t in total]
        start = [t // 2 if upper else t - t // 2 for t in total]
        end = [t - s for t, s in zip(total, start)]
    if backward:  # ONNX computes the output_padding elements; see _conv's docstring
        shift = [min(e, p) for e, p in zip(end, out_pad)]
        end = [e - t for e, t in zip(end, shift)]
        out_pad = [p - t for p, t in zip(out_pad, shift)]
    if lifted:
        strides, dilations = [1] + strides, [1] + dilations
        start, end, out_pad = [0] + start, [0] + end, [0] + out_pad
    eb = None
    if b is not None:
        eb = L.view(b, [1, m] + [1] * (len(strides)), name=node.input[2])
    y = F.Convolution(ex, ew, eb, dml.DML_CONVOLUTION_MODE_CROSS_CORRELATION,
                      dml.DML_CONVOLUTION_DIRECTION_BACKWARD if backward else
                      dml.DML_CONVOLUTION_DIRECTION_FORWARD, strides, dilations, start, end,
                      out_pad, groups, act)
    sizes = y.GetOutputDesc().sizes
    shape = [sizes[0], sizes[1], sizes[3]] if lifted else sizes
    return L.new(y, shape, x.dtype)


def _matmul(L, node, ins, attrs, act):
    """GEMM over 4-D sizes: batch dimensions broadcast through zero strides, 1-D operands
    promoted as numpy does (and the added dimension dropped from the result)."""
    a, b = ins
    sa, sb = list(a.shape), list(b.shape)
    va, vb = (sa if len(sa) > 1 else [1] + sa), (sb if len(sb) > 1 else sb + [1])
    batch = tuple(np.broadcast_shapes(tuple(va[:-2]), tuple(vb[:-2])))
    if len(batch) > 2:
        fail(dml.E_NOTIMPL, f"{L.label(node)}: {len(batch)} batch dimensions; DML's GEMM takes "
                            "at most 2 (4-D sizes)")
    lead = (1,) * (2 - len(batch)) + batch
    ea = L.broadcast(_reshaped(a, va), lead + tuple(va[-2:]))
    eb = L.broadcast(_reshaped(b, vb), lead + tuple(vb[-2:]))
    y = F.Gemm(ea, eb, None, fusedActivation=act)
    shape = list(batch) + [va[-2], vb[-1]]
    if len(sa) == 1:
        shape.pop(-2)
    if len(sb) == 1:
        shape.pop(-1)
    return L.new(y, shape, a.dtype)


def _matmul_integer(L, node, ins, attrs, act):
    """MATRIX_MULTIPLY_INTEGER over 4-D sizes; zero points per tensor ({1, 1, 1, 1}) or per
    row of A / column of B."""
    a, b = ins[0], ins[1]
    azp = ins[2] if len(ins) > 2 else None
    bzp = ins[3] if len(ins) > 3 else None
    if len(a.shape) != 2 or len(b.shape) != 2:
        fail(dml.E_NOTIMPL, f"{L.label(node)}: only 2-D operands are lowered")
    m, n = a.shape[0], b.shape[1]
    za = None if azp is None else L.view(azp, [1, 1, int(np.prod(azp.shape)) or 1, 1])
    zb = None if bzp is None else L.view(bzp, [1, 1, 1, int(np.prod(bzp.shape)) or 1])
    y = X["MatrixMultiplyInteger"](L.view(a, [1, 1] + list(a.shape)), za,
                                   L.view(b, [1, 1] + list(b.shape)), zb)
    return L.new(y, (m, n), np.int32)


def _reshaped(v, shape):
    """The same Value seen with another (element-count-preserving) shape: the same tensor,
    re-viewed by ``broadcast`` (same bytes), or the constant reshaped."""
    if list(v.shape) == list(shape):
        return v
    return Value(tuple(shape), v.dtype, None if v.const is None else v.const.reshape(shape),
                 v.expr)


def _gemm(L, node, ins, attrs, act):
    a, b = ins[0], ins[1]
    c = ins[2] if len(ins) > 2 else None
    ta, tb = int(attrs.get("transA", 0)), int(attrs.get("transB", 0))
    m = a.shape[1] if ta else a.shape[0]
    n = b.shape[0] if tb else b.shape[1]
    ec = None if c is None else L.broadcast(c, (1, 1, m, n))
    y = F.Gemm(L.broadcast(a, (1, 1) + tuple(a.shape)), L.broadcast(b, (1, 1) + tuple(b.shape)),
               ec, ta, tb, float(attrs.get("alpha", 1.0)), float(attrs.get("beta", 1.0)), act)
    return L.new(y, (m, n), a.dtype)


def _pool(kind, global_=False):
    def rule(L, node, ins, attrs, act):
        x = ins[0]
        ex, lifted = _as_4d(L, x, node.input[0])
        spatial = list(x.shape[2:])
        kernel = spatial if global_ else list(attrs["kernel_shape"])
        n = len(kernel)
        strides = [1] * n if global_ else list(attrs.get("strides", [1] * n))
        dilations = [1] * n if global_ else list(attrs.get("dilations", [1] * n))
        start, end = ([0] * n, [0] * n) if global_ else \
            _spatial_pads(L, node, attrs, spatial, kernel, strides, dilations)
        if attrs.get("ceil_mode", 0):  # DML rounds down: more end padding gives the ceiling
            if kind != "max" and attrs.get("count_include_pad", 0):
                fail(dml.E_NOTIMPL, f"{L.label(node)}: ceil_mode=1 with count_include_pad=1 "
                                    "(the added end padding would be counted)")
            end = list(end)
            for i in range(n):
                k = (kernel[i] - 1) * dilations[i] + 1
                size = spatial[i] + start[i] + end[i]
                out = -(-(size - k) // strides[i]) + 1
                if (out - 1) * strides[i] >= spatial[i] + start[i]:
                    out -= 1  # the last window must start inside the input (ONNX)
                end[i] += max(0, (out - 1) * strides[i] + k - size)
        if lifted:
            kernel, strides, dilations = [1] + kernel, [1] + strides, [1] + dilations
            start, end = [0] + start, [0] + end
        if kind == "max":
            want = len(node.output) > 1 and node.output[1]
            y, idx = F.MaxPooling(ex, kernel, strides, start, end, dilations, bool(want))
            if int(attrs.get("storage_order", 0)):
                fail(dml.E_NOTIMPL, f"{L.label(node)}: storage_order=1 (column-major indices)")
        else:
            y, idx = F.AveragePooling(ex, strides, kernel, start, end, dilations,
                                      bool(attrs.get("count_include_pad", 0))), None
        sizes = y.GetOutputDesc().sizes
        shape = [sizes[0], sizes[1], sizes[3]] if lifted else sizes
        out = [L.new(y, shape, x.dtype)]
        if idx is not None:
            out.append(L.new(F.Cast(idx, dml.DML_TENSOR_DATA_TYPE_INT64), shape, np.int64))
        return out
    return rule


def _channel(L, v, rank, name):
    """A per-channel [C] value read as [1, C, 1, ...] (rank dimensions)."""
    return L.view(v, [1, v.shape[0]] + [1] * (rank - 2), name=name)


def _batchnorm(L, node, ins, attrs, act):
    x, scale, bias, mean, var = ins[:5]
    if len(node.output) > 1 and any(node.output[1:]):
        fail(dml.E_NOTIMPL, f"{L.label(node)}: training mode (running statistics outputs)")
    rank = max(4, len(x.shape))
    ex = L.view(x, list(x.shape) + [1] * (rank - len(x.shape)), name=node.input[0])
    c = [_channel(L, v, rank, node.input[i]) for i, v in
         ((3, mean), (4, var), (1, scale), (2, bias))]
    y = F.BatchNormalization(ex, c[0], c[1], c[2], c[3], True,
                             float(attrs.get("epsilon", 1e-5)), act)
    return L.new(y, x.shape, x.dtype)


def _instancenorm(L, node, ins, attrs, act):
    x, scale, bias = ins
    rank = len(x.shape)
    y = F.MeanVarianceNormalization(L.tensor(x), _channel(L, scale, rank, node.input[1]),
                                    _channel(L, bias, rank, node.input[2]),
                                    list(range(2, rank)), True, True,
                                    float(attrs.get("epsilon", 1e-5)), act)
    return L.new(y, x.shape, x.dtype)


def _layernorm(L, node, ins, attrs, act):
    """MVN1 over the axes from ``axis``; Scale/B padded with leading 1s (DML broadcasts size-1
    dimensions of those tensors). Mean and InvStdDev outputs are not produced."""
    x, scale = ins[0], ins[1]
    bias = ins[2] if len(ins) > 2 else None
    rank = len(x.shape)
    axis = L.axis(attrs.get("axis", -1), rank)
    axes = list(range(axis, rank))
    eps = float(attrs.get("epsilon", 1e-5))
    es = L.broadcast(scale, x.shape)
    eb = None if bias is None else L.broadcast(bias, x.shape)
    y = F.MeanVarianceNormalization(L.tensor(x), es, eb, axes, True, True, eps)
    out = [L.new(y, x.shape, x.dtype)]
    if len(node.output) > 1 and any(node.output[1:]):
        # Mean and InvStdDev: REDUCE AVERAGE of x and of (x - mean)^2, then 1 / sqrt(. + eps)
        kept = [1 if i in axes else s for i, s in enumerate(x.shape)]
        mean = F.Reduce(L.tensor(x), dml.DML_REDUCE_FUNCTION_AVERAGE, axes)
        wide = Reinterpret(mean, list(x.shape), [0 if i in axes else st for i, st in
                                                   enumerate(_packed(kept))])
        d = X["Subtract"](L.tensor(x), wide)
        var = F.Reduce(X["Multiply"](d, d), dml.DML_REDUCE_FUNCTION_AVERAGE, axes)
        inv = X["Recip"](X["Sqrt"](var, dml.DML_SCALE_BIAS(1.0, eps)))
        out += [L.new(mean, kept, x.dtype), L.new(inv, kept, x.dtype)]
    return out


def _packed(sizes):
    strides, step = [0] * len(sizes), 1
    for i in range(len(sizes) - 1, -1, -1):
        strides[i], step = step, step * sizes[i]
    return strides


def _mvn(L, node, ins, attrs, act):
    """MeanVarianceNormalization: MVN1 over ``axes`` (default 0, 2, 3), epsilon 1e-9 (the
    ONNX function's)."""
    x = ins[0]
    axes = [L.axis(a, len(x.shape)) for a in attrs.get("axes", [0, 2, 3])]
    y = F.MeanVarianceNormalization(L.tensor(x), None, None, axes, True, True, 1e-9)
    return L.new(y, x.shape, x.dtype)


def _lppool(L, node, ins, attrs, act):
    x = ins[0]
    kernel = list(attrs["kernel_shape"])
    n = len(kernel)
    strides = list(attrs.get("strides", [1] * n))
    dilations = list(attrs.get("dilations", [1] * n))
    if attrs.get("ceil_mode", 0):
        fail(dml.E_NOTIMPL, f"{L.label(node)}: ceil_mode=1")
    start, end = _spatial_pads(L, node, attrs, list(x.shape[2:]), kernel, strides, dilations)
    ex, lifted = _as_4d(L, x, node.input[0])
    if lifted:
        kernel, strides, dilations = [1] + kernel, [1] + strides, [1] + dilations
        start, end = [0] + list(start), [0] + list(end)
    y = X["LpPooling1"](ex, Strides=strides, WindowSize=kernel, StartPadding=start,
                        EndPadding=end, Dilations=dilations, P=int(attrs.get("p", 2)))
    sizes = y.GetOutputDesc().sizes
    return L.new(y, [sizes[0], sizes[1], sizes[3]] if lifted else sizes, x.dtype)


def _text(attrs, name, default):
    v = attrs.get(name, default)
    return v.decode() if isinstance(v, bytes) else v


def _resize(L, node, ins, attrs, act):
    """Resize onto RESAMPLE2 (RESAMPLE3 with antialias): each coordinate_transformation_mode
    becomes pixel offsets (dmlsim's map: x_in = (o - OutputPixelOffset) / Scale -
    InputPixelOffset); each nearest_mode a RoundingDirection, shifting the input offset by half
    a pixel for the round-to-nearest modes, as the DirectML provider does."""
    x = ins[0]
    r = len(x.shape)
    axes = [L.axis(a, r) for a in attrs.get("axes", range(r))]
    scales, sizes = [1.0] * r, list(x.shape)
    from_scales = False
    if len(ins) > 3 and ins[3] is not None and ins[3].shape != (0,):
        given = L.constant(node.input[3], node, "sizes").astype(np.int64).tolist()
        policy = _text(attrs, "keep_aspect_ratio_policy", "stretch")
        if policy in ("not_larger", "not_smaller"):
            pick = min if policy == "not_larger" else max
            sc = pick(n / x.shape[a] for a, n in zip(axes, given))
            given = [int(x.shape[a] * sc + 0.5) for a in axes]
        for a, n in zip(axes, given):
            sizes[a] = int(n)
        scales = [o / i for o, i in zip(sizes, x.shape)]
    elif len(ins) > 2 and ins[2] is not None:
        from_scales = True
        given = L.constant(node.input[2], node, "scales").astype(np.float64).tolist()
        for a, sc in zip(axes, given):
            scales[a] = float(sc)
            sizes[a] = int(np.floor(x.shape[a] * sc))
    mode = _text(attrs, "mode", "nearest")
    coord = _text(attrs, "coordinate_transformation_mode", "half_pixel")
    if mode not in ("nearest", "linear"):
        fail(dml.E_NOTIMPL, f"{L.label(node)}: mode '{mode}' (DML resamples nearest or linear)")
    in_off, out_off = [], []
    for d in range(r):
        if coord == "half_pixel" or (coord == "pytorch_half_pixel" and sizes[d] > 1):
            i, o = 0.5, -0.5
        elif coord == "tf_half_pixel_for_nn":
            i, o = 0.0, -0.5
        elif coord in ("asymmetric", "pytorch_half_pixel"):
            i, o = 0.0, 0.0
        elif coord == "align_corners":
            i, o = 0.0, 0.0
            if sizes[d] > 1 and x.shape[d] > 1:  # ONNX: the resized length is in x scale
                length = x.shape[d] * scales[d] if from_scales else sizes[d]
                scales[d] = (length - 1) / (x.shape[d] - 1)
        else:
            fail(dml.E_NOTIMPL, f"{L.label(node)}: coordinate_transformation_mode '{coord}'")
        in_off.append(i)
        out_off.append(o)
    antialias = bool(attrs.get("antialias", 0))
    if antialias and mode == "linear" and any(1 < 1 / sc <= 2 for sc in scales):
        # ONNX filters every downscale; RESAMPLE3's page filters only where 1 / Scale > 2
        fail(dml.E_NOTIMPL, f"{L.label(node)}: linear antialias at scales {scales}: DML's "
                            "RESAMPLE3 antialiases only where 1 / Scale > 2, ONNX at every "
                            "downscale")
    rounding = dml.DML_AXIS_DIRECTION_INCREASING
    if mode == "nearest":
        nearest = _text(attrs, "nearest_mode", "round_prefer_floor")
        shift, rounding = {"round_prefer_floor": (0.5, dml.DML_AXIS_DIRECTION_INCREASING),
                           "round_prefer_ceil": (-0.5, dml.DML_AXIS_DIRECTION_DECREASING),
                           "floor": (0.0, dml.DML_AXIS_DIRECTION_DECREASING),
                           "ceil": (0.0, dml.DML_AXIS_DIRECTION_INCREASING)}[nearest]
        in_off = [v + shift for v in in_off]
    y = F.Resample(L.tensor(x), sizes, dml.DML_INTERPOLATION_MODE_NEAREST_NEIGHBOR
                   if mode == "nearest" else dml.DML_INTERPOLATION_MODE_LINEAR, rounding,
                   scales, in_off, out_off, antialias)
    return L.new(y, sizes, x.dtype)


def _lrn(L, node, ins, attrs, act):
    x = ins[0]
    y = X["LocalResponseNormalization"](
        L.tensor(x), CrossChannel=1, LocalSize=int(attrs["size"]),
        Alpha=float(attrs.get("alpha", 1e-4)), Beta=float(attrs.get("beta", 0.75)),
        Bias=float(attrs.get("bias", 1.0)))
    return L.new(y, x.shape, x.dtype)


RULES = {"Conv": _conv, "ConvTranspose": lambda *a: _conv(*a, backward=True),
         "MatMul": _matmul, "MatMulInteger": _matmul_integer, "Gemm": _gemm,
         "MaxPool": _pool("max"),
         "AveragePool": _pool("average"), "GlobalMaxPool": _pool("max", True),
         "GlobalAveragePool": _pool("average", True), "BatchNormalization": _batchnorm,
         "InstanceNormalization": _instancenorm, "MeanVarianceNormalization": _mvn,
         "LpPool": _lppool, "Resize": _resize, "LayerNormalization": _layernorm,
         "LRN": _lrn}

"""Convolution geometry and checks shared by CONVOLUTION (and the integer and quantized
convolutions): output sizes, the filter layouts and orientations. The arithmetic is in
``_conv_math``.

Layouts (NC + spatial): input { N, C, spatial.. }, output { N, M, spatial.. }. The filter
is { M, C / GroupCount, k.. } for FORWARD and { C, M / GroupCount, k.. } for BACKWARD
(transposed: the layout of the forward convolution it is the gradient of, ONNX's
ConvTranspose layout). Per spatial dimension, with the dilated filter extent
kd = (k - 1) * Dilation + 1:

    FORWARD   out = (in + StartPadding + EndPadding - kd) / Stride + 1   (rounded down)
    BACKWARD  out = (in - 1) * Stride + kd - StartPadding - EndPadding

and then OutputPadding more, "a zero padding ... applied to the end of each spatial
dimension of the output tensor" (the page): those elements are 0 (before the bias).
FORWARD computes y[o] = sum x[o * Stride + t * Dilation - StartPadding] w[t] (a gather);
BACKWARD scatters each x[i] w[t] to o = i * Stride + t * Dilation - StartPadding, the
gradient of that forward sum with respect to its input (ONNX's ConvTranspose). In these
sums CROSS_CORRELATION uses the filter as given and CONVOLUTION flips it along every
spatial dimension, in both directions. The page's "Mode interactions" table states the same
for the gather form a backward convolution is computed as: there CROSS_CORRELATION BACKWARD
has the filter "transposed along x,y axes" and CONVOLUTION BACKWARD the identity.
"""
from __future__ import annotations

from .._core.registry import Sizes
from .._schema.members import members

CONVOLUTION, CROSS_CORRELATION = members("DML_CONVOLUTION_MODE", "CONVOLUTION CROSS_CORRELATION")
FORWARD, BACKWARD = members("DML_CONVOLUTION_DIRECTION", "FORWARD BACKWARD")
ARRAYS = ("Strides", "Dilations", "StartPadding", "EndPadding", "OutputPadding")


def flipped(mode):
    """Whether the sums of the module docstring use the filter flipped."""
    return mode == CONVOLUTION


def spatial_out(n, k, a, d, direction):
    s, dil, p0, p1 = a["Strides"][d], a["Dilations"][d], a["StartPadding"][d], a["EndPadding"][d]
    kd = (k - 1) * dil + 1
    if direction == FORWARD:
        return (n + p0 + p1 - kd) // s + 1 if n + p0 + p1 >= kd else 0
    return (n - 1) * s + kd - p0 - p1


def check_geometry(spec, check, x_field="InputTensor", w_field="FilterTensor"):
    """The rules of the convolution page; returns (M, spatial output sizes before
    OutputPadding)."""
    a, x, w = spec.attr, spec.tensor[x_field], spec.tensor[w_field]
    nd = a["DimensionCount"]
    if nd != len(x.sizes) - 2:
        check.fail(f"DimensionCount is {nd} but {x_field}.DimensionCount is {len(x.sizes)}; it "
                   f"must be {x_field}.DimensionCount - 2 = {len(x.sizes) - 2}")
    for f in ARRAYS:
        if len(a.get(f) or ()) != nd:
            check.fail(f"{f} has {len(a.get(f) or ())} entries but DimensionCount is {nd}")
    for f in ("Strides", "Dilations"):
        for i, v in enumerate(a[f]):
            if v < 1:
                check.fail(f"{f}[{i}] is {v}; it must be at least 1")
    if a["Mode"] not in (CROSS_CORRELATION, CONVOLUTION):
        check.fail(f"Mode is {a['Mode']}, which is not a DML_CONVOLUTION_MODE (0 "
                   "CONVOLUTION, 1 CROSS_CORRELATION)")
    if a["Direction"] not in (FORWARD, BACKWARD):
        check.fail(f"Direction is {a['Direction']}, which is not a DML_CONVOLUTION_DIRECTION "
                   "(0 FORWARD, 1 BACKWARD)")
    g, c = a["GroupCount"], x.sizes[1]
    if g < 1 or c % g:
        check.fail(f"GroupCount is {g}; it must be at least 1 and divide the input channel count "
                   f"{c}")
    if a["Direction"] == FORWARD:
        m, want = w.sizes[0], c // g
        if w.sizes[1] != want or m % g:
            check.fail(f"{w_field}.Sizes {list(w.sizes)} must be {{M, C / GroupCount = {want}, "
                       f"k..}} with M a multiple of GroupCount {g} (FORWARD)")
    else:
        m = w.sizes[1] * g
        if w.sizes[0] != c:
            check.fail(f"{w_field}.Sizes {list(w.sizes)} must be {{C = {c}, M / GroupCount, "
                       "k..} (BACKWARD)")
    out = [spatial_out(n, k, a, d, a["Direction"])
           for d, (n, k) in enumerate(zip(x.sizes[2:], w.sizes[2:]))]
    for d, o in enumerate(out):
        if o < 1:
            check.fail(f"spatial dimension {d} has no output: input {x.sizes[2 + d]}, filter "
                       f"{w.sizes[2 + d]}, Strides {a['Strides'][d]}, Dilations "
                       f"{a['Dilations'][d]}, padding {a['StartPadding'][d]} + "
                       f"{a['EndPadding'][d]}")
    return m, out


def output_sizes(spec, check, x_field="InputTensor", w_field="FilterTensor",
                 out_field="OutputTensor", bias_field="BiasTensor"):
    m, out = check_geometry(spec, check, x_field, w_field)
    a, x = spec.attr, spec.tensor[x_field]
    bias = spec.tensor.get(bias_field)
    want = (1, m) + (1,) * a["DimensionCount"]
    if bias is not None and bias.sizes != want:
        check.fail(f"{bias_field}.Sizes is {list(bias.sizes)}; it must be {list(want)}")
    sizes = [x.sizes[0], m] + [o + p for o, p in zip(out, a["OutputPadding"])]
    return {out_field: Sizes(sizes, f"{x_field}, {w_field} and the window arrays")}

"""DML_OPERATOR_ROI_ALIGN_GRAD (FL 4_1): the backpropagation of ROI align with pixel offsets
(the forward computation and its reading of the page: ``_roi_align``).

- OutputGradientTensor (the forward input's Sizes): every sample of every output element
  carries that element's InputGradient back through its interpolation weights, divided by
  the sample count for AVERAGE; for MAX only the sample the forward picks (the first
  largest) does. Samples outside the input contribute nothing (the forward's
  OutOfBoundsInputValue is a constant). The kernel reruns the forward's sample loop and
  scatters (``_roi_align_transpose``); the reference walks every sample in float64.
- OutputROIGradientTensor (ROITensor's Sizes): the page's pseudo-code, as written, for its
  stated case MinimumSamplesPerOutput = MaximumSamplesPerOutput = 1 (other sample counts
  are E_NOTIMPL): per region and output element (x, y the output indices, W and H the
  input's width and height), the image gradients at the sample from its floor/ceil
  neighbours (clamped to the input), times InputGradient and summed over channels, add
  gx (W - x), gy (H - y), gx x and gy y to [x1, y1, x2, y2].
At least one output must be given; InputTensor must be given for MAX and for the ROI
gradient (the page). Float32 arithmetic (FLOAT16 upcast); tolerance as ROI_ALIGN's.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_type
from ._roi_align import AVERAGE, LINEAR, MAX, NEAREST
from ._roi_align_grad import DR, DX, DY, KEYS, ROI, X, grad_sizes, roi_gradient, take_jnp, \
    take_np
from ._roi_align_reference import sample_weights
from ._roi_align_transpose import roi_align_transpose

BI = "BatchIndicesTensor"


def roi_align_grad(InputTensor, InputGradientTensor, ROITensor, BatchIndicesTensor,
                   *, ReductionFunction, InterpolationMode, SpatialScaleX, SpatialScaleY,
                   InputPixelOffset, OutputPixelOffset, MinimumSamplesPerOutput,
                   MaximumSamplesPerOutput, AlignRegionsToCorners, ctx):
    attrs = {k: v for k, v in locals().items() if k in KEYS}
    dy = ctx.upcast(InputGradientTensor)
    shape = ctx.outputs[DX].sizes if ctx.outputs.get(DX) is not None else InputTensor.shape
    x = jnp.zeros(shape, dy.dtype) if InputTensor is None else ctx.upcast(InputTensor)
    a = {**attrs, "OutOfBoundsInputValue": 0.0}
    dx = dr = None
    if ctx.outputs.get(DX) is not None:
        dx = roi_align_transpose(x, dy, jnp.asarray(ROITensor),
                                 jnp.asarray(BatchIndicesTensor), a)
    if ctx.outputs.get(DR) is not None:
        dr = roi_gradient(x, dy, jnp.asarray(ROITensor), jnp.asarray(BatchIndicesTensor), a,
                           jnp, take_jnp).reshape(ctx.outputs[DR].sizes)
    return dx, dr


def roi_align_grad_reference(InputTensor, InputGradientTensor, ROITensor, BatchIndicesTensor,
                             *, ReductionFunction, InterpolationMode, SpatialScaleX,
                             SpatialScaleY, InputPixelOffset, OutputPixelOffset,
                             MinimumSamplesPerOutput, MaximumSamplesPerOutput,
                             AlignRegionsToCorners, ctx):
    attrs = {k: v for k, v in locals().items() if k in KEYS}
    dy = np.asarray(InputGradientTensor, np.float64)
    rois = np.asarray(ROITensor, np.float64).reshape(-1, 4)
    batch = np.asarray(BatchIndicesTensor).reshape(-1)
    shape = ctx.outputs[DX].sizes if ctx.outputs.get(DX) is not None else InputTensor.shape
    x = np.zeros(shape) if InputTensor is None else np.asarray(InputTensor, np.float64)
    dx = dr = None
    if ctx.outputs.get(DX) is not None:
        dx = np.zeros(shape)
        for r, oy, ox, picks in sample_weights(x, rois, batch, *dy.shape[2:], attrs):
            for c in range(x.shape[1]):
                for yi, xi, wgt in picks[c]:
                    dx[min(max(int(batch[r]), 0), shape[0] - 1), c, yi, xi] += \
                        wgt * dy[r, c, oy, ox]
    if ctx.outputs.get(DR) is not None:
        dr = roi_gradient(x, dy, rois, batch, attrs, np, take_np).reshape(
            ctx.outputs[DR].sizes)
    return dx, dr


def error_bound(inputs, spec, dtype):
    m = float(np.abs(np.asarray(inputs[DY], np.float64)).max())
    big = m * max(1.0, float(np.abs(np.asarray(inputs.get(X, 1.0), np.float64)).max()))
    n = np.prod(spec.tensor[DY].sizes)
    return {DX: 16 * 2.0 ** -24 * m * n, DR: 64 * 2.0 ** -24 * big * n * 8}


f32 = np.float32
PAGE_X = f32(np.arange(1, 17).reshape(1, 1, 4, 4))
PAGE_ROI = f32([[0, 0, 2, 2], [2, 0, 4, 2], [0, 2, 2, 4], [2, 2, 4, 4]])
A = {"ReductionFunction": AVERAGE, "InterpolationMode": NEAREST, "SpatialScaleX": 1.0,
     "SpatialScaleY": 1.0, "InputPixelOffset": 0.5, "OutputPixelOffset": -0.5,
     "MinimumSamplesPerOutput": 1, "MaximumSamplesPerOutput": 1, "AlignRegionsToCorners": 0}
register(OperatorDef(
    "DML_OPERATOR_ROI_ALIGN_GRAD", roi_align_grad, roi_align_grad_reference,
    output_sizes=grad_sizes, rules=(same_type(DY, ROI, DX, DR), same_type(X, DY)),
    error_bound=error_bound, ulp={"FLOAT32": 2, "FLOAT16": 1},
    examples=(
        Example({X: PAGE_X, DY: f32([[[[1]]]]), ROI: f32([[0, 0, 4, 4]]), BI: np.uint32([0])},
                {DX: f32(np.full((1, 1, 4, 4), 1 / 16)), DR: None},
                {**A, "InterpolationMode": LINEAR, "MaximumSamplesPerOutput": 4},
                "AVERAGE of 4 x 4 samples at the pixel centres: 1/16 each"),
        Example({X: PAGE_X, DY: f32(np.arange(1, 13).reshape(4, 1, 1, 3)), ROI: PAGE_ROI,
                 BI: np.uint32([0, 0, 0, 0])},
                {DX: f32([[[[3, 3, 9, 6], [0, 0, 0, 0], [15, 9, 21, 12], [0, 0, 0, 0]]]]),
                 DR: None}, {**A, "OutputPixelOffset": 0.0},
                "the page's example (nearest 1.5x wide, 0.5x high; offsets 0.5 and 0 reproduce "
                "its forward example)"),
        Example({X: PAGE_X, DY: f32([[[[1]]]]), ROI: f32([[0, 0, 4, 4]]), BI: np.uint32([0])},
                {DX: f32([[[[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]]]]),
                 DR: None},
                {**A, "ReductionFunction": MAX, "MaximumSamplesPerOutput": 4},
                "MAX: the gradient goes to the largest sample only"),
        Example({X: PAGE_X, DY: f32([[[[1]]]]), ROI: f32([[0, 0, 2, 2]]), BI: np.uint32([0])},
                {DX: None, DR: f32([[4, 16, 0, 0]])}, {**A, "InterpolationMode": LINEAR},
                "the ROI gradient by the page's pseudo-code: the sample at (0.5, 0.5) sees "
                "slopes 1 (x) and 4 (y); W - x = H - y = 4 at output (0, 0)"),
    ), module=__name__))

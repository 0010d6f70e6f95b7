"""ROI_ALIGN (FL 3_0) and ROI_ALIGN1 (FL 4_0, pixel offsets and AlignRegionsToCorners):
Mask R-CNN's region-of-interest align: each region of InputTensor resampled to
OutputTensor's { NumROIs, C, OutputHeight, OutputWidth } by averaging or taking the maximum
of interpolated samples (the computation and its reading of the page: ``_roi_align``).

ROITensor is { NumROIs, 4 } (or with leading 1s to 4 dimensions), BatchIndicesTensor
{ NumROIs } (likewise); an index outside [0, BatchCount) is undefined (the page) and
dmlsim clamps it. OutputTensor's height and width are the desc's. Where the pages are
silent: ReductionFunction is AVERAGE or MAX, InterpolationMode NEAREST_NEIGHBOR or LINEAR,
1 <= MinimumSamplesPerOutput <= MaximumSamplesPerOutput, else E_INVALIDARG. Tolerance
(``error_bound``): 16 u max |Input| plus 16 u |OutOfBoundsInputValue| (u = 2^-24): a few
roundings of the coordinates, weights and the mean.
"""
import numpy as np

from .._core.registry import Example, OperatorDef, Sizes, register, same_type
from ._roi_align import AVERAGE, LINEAR, MAX, NEAREST, region_rules, roi_align
from ._roi_align_reference import roi_align_reference

IN, ROI, BI, OUT = "InputTensor", "ROITensor", "BatchIndicesTensor", "OutputTensor"
V0 = {"InputPixelOffset": 0.5, "OutputPixelOffset": -0.5, "AlignRegionsToCorners": 0}


def _run(x, rois, batch, a, ctx):
    return roi_align(x, rois, batch, *ctx.outputs[OUT].sizes[2:], a, ctx)


def _ref(x, rois, batch, a, ctx):
    return roi_align_reference(x, rois, batch, *ctx.outputs[OUT].sizes[2:], a)


def roi_align0(InputTensor, ROITensor, BatchIndicesTensor, *, ReductionFunction,
               InterpolationMode, SpatialScaleX, SpatialScaleY, OutOfBoundsInputValue,
               MinimumSamplesPerOutput, MaximumSamplesPerOutput, ctx):
    return _run(InputTensor, ROITensor, BatchIndicesTensor, {**locals(), **V0}, ctx)


def roi_align0_reference(InputTensor, ROITensor, BatchIndicesTensor, *, ReductionFunction,
                         InterpolationMode, SpatialScaleX, SpatialScaleY, OutOfBoundsInputValue,
                         MinimumSamplesPerOutput, MaximumSamplesPerOutput, ctx):
    return _ref(InputTensor, ROITensor, BatchIndicesTensor, {**locals(), **V0}, ctx)


def roi_align1(InputTensor, ROITensor, BatchIndicesTensor, *, ReductionFunction,
               InterpolationMode, SpatialScaleX, SpatialScaleY, InputPixelOffset,
               OutputPixelOffset, OutOfBoundsInputValue, MinimumSamplesPerOutput,
               MaximumSamplesPerOutput, AlignRegionsToCorners, ctx):
    return _run(InputTensor, ROITensor, BatchIndicesTensor, dict(locals()), ctx)


def roi_align1_reference(InputTensor, ROITensor, BatchIndicesTensor, *, ReductionFunction,
                         InterpolationMode, SpatialScaleX, SpatialScaleY, InputPixelOffset,
                         OutputPixelOffset, OutOfBoundsInputValue, MinimumSamplesPerOutput,
                         MaximumSamplesPerOutput, AlignRegionsToCorners, ctx):
    return _ref(InputTensor, ROITensor, BatchIndicesTensor, dict(locals()), ctx)


def roi_sizes(spec, check):
    x, out = spec.tensor[IN], spec.tensor.get(OUT)
    n = region_rules(spec, check)
    if out is None:
        check.fail("OutputTensor's height and width are the desc's; give its tensor desc")
    return {OUT: Sizes([n, x.sizes[1]] + list(out.sizes[2:]), "ROITensor, InputTensor and "
                       "OutputTensor's height and width")}


def error_bound(inputs, spec, dtype):
    m = float(np.abs(np.asarray(inputs[IN], np.float64)).max())
    return 16 * 2.0 ** -24 * (m + abs(float(np.float32(spec.attr["OutOfBoundsInputValue"]))))


f32 = np.float32
X = f32(np.arange(16).reshape(1, 1, 4, 4))
ALL = {"ReductionFunction": AVERAGE, "InterpolationMode": LINEAR, "SpatialScaleX": 1.0,
       "SpatialScaleY": 1.0, "OutOfBoundsInputValue": 0.0, "MinimumSamplesPerOutput": 1,
       "MaximumSamplesPerOutput": 1}


def _register(name, kernel, reference, examples):
    register(OperatorDef(f"DML_OPERATOR_{name}", kernel, reference, output_sizes=roi_sizes,
                         rules=(same_type(IN, ROI, OUT),), error_bound=error_bound,
                         ulp={"FLOAT32": 2, "FLOAT16": 1}, examples=examples,
                         module=__name__))


_register("ROI_ALIGN", roi_align0, roi_align0_reference, (
    Example({IN: X, ROI: f32([[0, 0, 4, 4]]), BI: np.uint32([0])},
            {OUT: f32([[[[2.5, 4.5], [10.5, 12.5]]]])}, ALL,
            "the whole 4x4 input, 2x2 outputs of one sample each at x, y = 0.5, 2.5 (bilinear)"),
    Example({IN: X, ROI: f32([[0, 0, 4, 4]]), BI: np.uint32([0])},
            {OUT: f32([[[[7.5]]]])}, {**ALL, "MaximumSamplesPerOutput": 4},
            "one output, 4 x 4 samples at the pixel centers: the mean 7.5"),
    Example({IN: X, ROI: f32([[0, 0, 4, 4]]), BI: np.uint32([0])},
            {OUT: f32([[[[5, 7], [13, 15]]]])}, {**ALL, "ReductionFunction": MAX,
                                                  "InterpolationMode": NEAREST,
                                                  "MaximumSamplesPerOutput": 2},
            "MAX of 2 x 2 nearest samples per output"),
))
_register("ROI_ALIGN1", roi_align1, roi_align1_reference, (
    Example({IN: X, ROI: f32([[0, 0, 3, 3]]), BI: np.uint32([0])},
            {OUT: f32([[[[0, 3], [12, 15]]]])},
            {**ALL, "InputPixelOffset": 0.0, "OutputPixelOffset": 0.0,
             "AlignRegionsToCorners": 1}, "AlignRegionsToCorners: samples on the corners"),
))

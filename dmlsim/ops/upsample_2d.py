"""DML_OPERATOR_UPSAMPLE_2D: Height and Width (the last two dimensions of 4-D or 5-D tensors)
scaled up by the integer ScaleSize, nearest-neighbour or bilinear.

OutputTensor is { N, C, [D], H * ScaleSize.Height, W * ScaleSize.Width } (the page);
0 < ScaleSize.Height <= UINT_MAX / InputHeight and likewise Width. dmlsim resamples as
RESAMPLE does at pixel centers (``_resample``): NEAREST_NEIGHBOR repeats each element
ScaleSize times, LINEAR interpolates along Height and Width only, edges clamped.
"""
import numpy as np

from .._core.registry import Example, OperatorDef, Sizes, register, same_type
from ._resample import DECREASING, LINEAR, NEAREST, resample
from ._resample_reference import resample_reference

IN, OUT = "InputTensor", "OutputTensor"


def _params(x_ndim, size, mode):
    w, h = size
    scales = (1.0,) * (x_ndim - 2) + (float(h), float(w))
    outs = (-0.5,) * x_ndim if mode == LINEAR else (-1.0,) * x_ndim
    return scales, (0.5,) * x_ndim, outs


def upsample_2d(InputTensor, *, ScaleSize, InterpolationMode, ctx):
    s, i, o = _params(InputTensor.ndim, ScaleSize, InterpolationMode)
    return resample(InputTensor, ctx.outputs[OUT].sizes, s, i, o, InterpolationMode,
                    DECREASING, False, ctx)


def upsample_2d_reference(InputTensor, *, ScaleSize, InterpolationMode, ctx):
    s, i, o = _params(np.ndim(InputTensor), ScaleSize, InterpolationMode)
    return resample_reference(InputTensor, ctx.outputs[OUT].sizes, s, i, o, InterpolationMode,
                              DECREASING, False)


def upsample_sizes(spec, check):
    x, (w, h) = spec.tensor[IN], spec.attr["ScaleSize"]
    top = 0xFFFFFFFF
    if not (0 < h <= top // x.sizes[-2] and 0 < w <= top // x.sizes[-1]):
        check.fail(f"ScaleSize is {w} x {h} (Width x Height); 0 < Height <= UINT_MAX / "
                   "InputHeight and 0 < Width <= UINT_MAX / InputWidth")
    if spec.attr["InterpolationMode"] not in (NEAREST, LINEAR):
        check.fail(f"InterpolationMode is {spec.attr['InterpolationMode']}, which is not a "
                   "DML_INTERPOLATION_MODE (0 NEAREST_NEIGHBOR, 1 LINEAR)")
    return {OUT: Sizes(list(x.sizes[:-2]) + [x.sizes[-2] * h, x.sizes[-1] * w],
                       "InputTensor and ScaleSize")}


def error_bound(inputs, spec, dtype):
    if spec.attr["InterpolationMode"] == NEAREST:
        return np.zeros(1)
    x = np.abs(np.asarray(inputs[IN], np.float64))
    s, i, o = _params(x.ndim, spec.attr["ScaleSize"], LINEAR)
    return 8 * 2.0 ** -24 * resample_reference(x, spec.tensor[OUT].sizes, s, i, o, LINEAR,
                                               DECREASING, False)


f32 = np.float32
X = f32([[[[1, 2], [3, 4]]]])
register(OperatorDef(
    "DML_OPERATOR_UPSAMPLE_2D", upsample_2d, upsample_2d_reference, output_sizes=upsample_sizes,
    rules=(same_type(IN, OUT),), error_bound=error_bound, ulp={"FLOAT32": 1, "FLOAT16": 1},
    examples=(
        Example({IN: X}, {OUT: f32([[[[1, 1, 2, 2], [3, 3, 4, 4]]]])},
                {"ScaleSize": {"Width": 2, "Height": 1}, "InterpolationMode": NEAREST},
                "nearest, Width x 2"),
        Example({IN: X}, {OUT: f32([[[[1, 1.25, 1.75, 2], [1.5, 1.75, 2.25, 2.5],
                                     [2.5, 2.75, 3.25, 3.5], [3, 3.25, 3.75, 4]]]])},
                {"ScaleSize": {"Width": 2, "Height": 2}, "InterpolationMode": LINEAR},
                "bilinear 2 x 2 at pixel centers (x = o / 2 - 0.25), edges clamped"),
        Example({IN: np.ones((1, 1, 2, 1, 1), f32) * f32([[[[[1]], [[5]]]]])},
                {OUT: np.ones((1, 1, 2, 1, 3), f32) * f32([[[[[1]], [[5]]]]])},
                {"ScaleSize": {"Width": 3, "Height": 1}, "InterpolationMode": LINEAR},
                "5-D: depth is never interpolated"),
    ), module=__name__))

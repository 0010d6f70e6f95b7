"""RESAMPLE (FL 2_0), RESAMPLE1 (FL 2_1, pixel offsets), RESAMPLE2 (FL 5_1, RoundingDirection)
and RESAMPLE3 (FL 6_4, Antialiased): nearest-neighbour or linear resampling along every
dimension, by Scales (which need not be OutputSize / InputSize: the desc's OutputTensor
decides, the pages say). Coordinates, rounding and antialiasing: ``_resample``.

RESAMPLE is RESAMPLE1 with InputPixelOffsets 0.5 and OutputPixelOffsets -0.5 (pixel
centers), RESAMPLE1 is RESAMPLE2 with RoundingDirection DECREASING and OutputPixelOffsets
lowered by 0.5 for NEAREST_NEIGHBOR, and RESAMPLE3 without Antialiased is RESAMPLE2 (the
pages' remarks). Where the pages are silent: Scales must be finite and positive, offsets
finite. Tolerance (``error_bound``): (sum over dimensions of (taps + 2)) u times the same
resampling of |Input| (u = 2^-24); nearest is exact.
"""
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_type
from ._resample import DECREASING, LINEAR, NEAREST, output_sizes, resample
from ._resample_reference import resample_reference

IN, OUT = "InputTensor", "OutputTensor"
ARRAYS = ("Scales", "InputPixelOffsets", "OutputPixelOffsets")


def _params(a, n):
    """(scales, input offsets, output offsets, rounding, antialias) of any of the four."""
    if "InputPixelOffsets" not in a:  # RESAMPLE
        ins, outs = (0.5,) * n, (-0.5,) * n
    else:
        ins, outs = a["InputPixelOffsets"], a["OutputPixelOffsets"]
    rounding = a.get("RoundingDirection")
    if rounding is None:  # RESAMPLE, RESAMPLE1: the RESAMPLE2 equivalence
        rounding = DECREASING
        if a["InterpolationMode"] == NEAREST:
            outs = tuple(float(np.float32(v)) - 0.5 for v in outs)
    return a["Scales"], ins, outs, rounding, bool(a.get("Antialiased"))


def _run(x, a, ctx):
    s, i, o, r, aa = _params(a, x.ndim)
    return resample(x, ctx.outputs[OUT].sizes, s, i, o, a["InterpolationMode"], r, aa, ctx)


def _ref(x, a, ctx):
    s, i, o, r, aa = _params(a, np.ndim(x))
    return resample_reference(x, ctx.outputs[OUT].sizes, s, i, o, a["InterpolationMode"], r, aa)


def error_bound(inputs, spec, dtype):
    a = dict(spec.attr)
    out = spec.tensor[OUT].sizes
    s, i, o, r, aa = _params(a, len(out))
    if a["InterpolationMode"] == NEAREST:
        return np.zeros(1)
    y = resample_reference(np.abs(np.asarray(inputs[IN], np.float64)), out, s, i, o, LINEAR, r,
                           aa)
    k = sum((int(np.ceil(2 / float(np.float32(v)))) + 2 if aa and 1 / float(np.float32(v)) > 2
             else 2) + 2 for v in s)
    return k * 2.0 ** -24 * y


def resample0(InputTensor, *, InterpolationMode, Scales, ctx):
    return _run(InputTensor, {"InterpolationMode": InterpolationMode, "Scales": Scales}, ctx)


def resample0_reference(InputTensor, *, InterpolationMode, Scales, ctx):
    return _ref(InputTensor, {"InterpolationMode": InterpolationMode, "Scales": Scales}, ctx)


def resample1(InputTensor, *, InterpolationMode, Scales, InputPixelOffsets, OutputPixelOffsets,
              ctx):
    return _run(InputTensor, dict(locals()), ctx)


def resample1_reference(InputTensor, *, InterpolationMode, Scales, InputPixelOffsets,
                        OutputPixelOffsets, ctx):
    return _ref(InputTensor, dict(locals()), ctx)


def resample2(InputTensor, *, InterpolationMode, RoundingDirection, Scales, InputPixelOffsets,
              OutputPixelOffsets, ctx):
    return _run(InputTensor, dict(locals()), ctx)


def resample2_reference(InputTensor, *, InterpolationMode, RoundingDirection, Scales,
                        InputPixelOffsets, OutputPixelOffsets, ctx):
    return _ref(InputTensor, dict(locals()), ctx)


def resample3(InputTensor, *, InterpolationMode, RoundingDirection, Scales, InputPixelOffsets,
              OutputPixelOffsets, Antialiased, ctx):
    return _run(InputTensor, dict(locals()), ctx)


def resample3_reference(InputTensor, *, InterpolationMode, RoundingDirection, Scales,
                        InputPixelOffsets, OutputPixelOffsets, Antialiased, ctx):
    return _ref(InputTensor, dict(locals()), ctx)


def rounding_rule(spec, check):
    if spec.attr["RoundingDirection"] not in (0, 1):
        check.fail(f"RoundingDirection is {spec.attr['RoundingDirection']}, which is not a "
                   "DML_AXIS_DIRECTION (0 INCREASING, 1 DECREASING)")


def _register(name, kernel, reference, arrays, rules, examples):
    register(OperatorDef(
        f"DML_OPERATOR_{name}", kernel, reference,
        output_sizes=lambda spec, check: output_sizes(spec, check, arrays),
        rules=(same_type(IN, OUT),) + rules, error_bound=error_bound,
        ulp={"FLOAT32": 2, "FLOAT16": 1}, examples=examples, module=__name__))


f32 = np.float32
ROW = f32([[1, 2, 3, 4]])
UP2 = {"Scales": (1.0, 2.0)}
_register("RESAMPLE", resample0, resample0_reference, ("Scales",), (), (
    Example({IN: ROW}, {OUT: f32([[1, 1, 2, 2, 3, 3, 4, 4]])},
            {"InterpolationMode": NEAREST, **UP2}, "nearest, 2x: each element twice"),
    Example({IN: ROW}, {OUT: f32([[1, 1.25, 1.75, 2.25, 2.75, 3.25, 3.75, 4]])},
            {"InterpolationMode": LINEAR, **UP2}, "linear, 2x, pixel centers, edges clamped"),
    Example({IN: f32([[1, 2], [3, 4]])}, {OUT: f32([[2.5]])},
            {"InterpolationMode": LINEAR, "Scales": (0.5, 0.5)}, "bilinear 2x down: the mean"),
))
_register("RESAMPLE1", resample1, resample1_reference, ARRAYS, (), (
    Example({IN: ROW}, {OUT: f32([[1, 1.5, 2, 2.5, 3, 3.5, 4, 4]])},
            {"InterpolationMode": LINEAR, **UP2, "InputPixelOffsets": (0, 0),
             "OutputPixelOffsets": (0, 0)}, "offsets 0: corners aligned at 0 (asymmetric)"),
))
NEAR2 = {"InterpolationMode": NEAREST, **UP2, "InputPixelOffsets": (0.5, 0.5),
         "OutputPixelOffsets": (-0.5, -0.5)}
_register("RESAMPLE2", resample2, resample2_reference, ARRAYS, (rounding_rule,), (
    Example({IN: ROW}, {OUT: f32([[1, 1, 1, 2, 2, 3, 3, 4]])},
            {**NEAR2, "RoundingDirection": DECREASING},
            "nearest at pixel centers, x = o / 2 - 0.25 rounded down (floor)"),
    Example({IN: ROW}, {OUT: f32([[1, 2, 2, 3, 3, 4, 4, 4]])},
            {**NEAR2, "RoundingDirection": 0}, "the same rounded up (ceil), clamped at 3"),
))
AA = {"InterpolationMode": LINEAR, "RoundingDirection": 0, "Scales": (1.0, 0.25),
      "InputPixelOffsets": (0.5, 0.5), "OutputPixelOffsets": (-0.5, -0.5)}
_register("RESAMPLE3", resample3, resample3_reference, ARRAYS, (rounding_rule,), (
    Example({IN: f32([np.arange(8)])}, {OUT: f32([[6.625 / 3.5, 17.875 / 3.5]])},
            {**AA, "Antialiased": 1},
            "antialiased 4x down: a triangle of radius 4 around x = 1.5 and 5.5, normalized"),
    Example({IN: f32([np.arange(8)])}, {OUT: f32([[1.5, 5.5]])}, {**AA, "Antialiased": 0},
            "without: the two neighbours of x = 1.5 and 5.5"),
    Example({IN: np.uint8([[10, 21]])}, {OUT: np.uint8([[10, 13, 18, 21]])},
            {**AA, "Scales": (1.0, 2.0), "Antialiased": 0},
            "UINT8 (FL 6_2) rounds half to even: 12.75 -> 13, 18.25 -> 18"),
))

"""MEAN_VARIANCE_NORMALIZATION, MEAN_VARIANCE_NORMALIZATION1 (FL 2_1, Axes) and
MEAN_VARIANCE_NORMALIZATION2 (FL 6_3, UseMean, UseVariance):
FusedActivation(Scale * ((Input - Mean) / sqrt(Variance + Epsilon)) + Bias).

Mean and Variance (the population variance) are computed over the axes: { 2, 3 }, or
{ 1, 2, 3 } with CrossChannel (the first operator), the Axes array (the others). Without
NormalizeVariance (UseVariance) the divisor is 1. ScaleTensor and BiasTensor broadcast
(each size equal or 1); before FL 5_2 they come together or not at all (the pages).

MEAN_VARIANCE_NORMALIZATION2's page leaves UseMean and UseVariance "TBD"; dmlsim reads them
as their names say: without UseMean the mean is 0, so with UseVariance the divisor is the
root mean square (RMS normalization, what ONNX Runtime lowers SimplifiedLayerNormalization
to); without UseVariance the divisor is 1. Float32 arithmetic (FLOAT16 too, rounded once),
two passes; tolerance in ``_normalization.mvn_bound``.
"""
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_sizes, same_type, sizes_of
from ._normalization import axes_rule, broadcastable, mvn, mvn_bound, mvn_reference

IN, S, B, OUT = "InputTensor", "ScaleTensor", "BiasTensor", "OutputTensor"


def _cross(cross):
    return (1, 2, 3) if cross else (2, 3)


def mvn0(InputTensor, ScaleTensor, BiasTensor, *, CrossChannel, NormalizeVariance, Epsilon,
         ctx):
    return mvn(InputTensor, ScaleTensor, BiasTensor, _cross(CrossChannel), True,
               NormalizeVariance, Epsilon, ctx)


def mvn0_reference(InputTensor, ScaleTensor, BiasTensor, *, CrossChannel, NormalizeVariance,
                   Epsilon, ctx):
    return mvn_reference(InputTensor, ScaleTensor, BiasTensor, _cross(CrossChannel), True,
                         NormalizeVariance, Epsilon)


def mvn1(InputTensor, ScaleTensor, BiasTensor, *, Axes, NormalizeVariance, Epsilon, ctx):
    return mvn(InputTensor, ScaleTensor, BiasTensor, Axes, True, NormalizeVariance, Epsilon,
               ctx)


def mvn1_reference(InputTensor, ScaleTensor, BiasTensor, *, Axes, NormalizeVariance, Epsilon,
                   ctx):
    return mvn_reference(InputTensor, ScaleTensor, BiasTensor, Axes, True, NormalizeVariance,
                         Epsilon)


def mvn2(InputTensor, ScaleTensor, BiasTensor, *, Axes, UseMean, UseVariance, Epsilon, ctx):
    return mvn(InputTensor, ScaleTensor, BiasTensor, Axes, UseMean, UseVariance, Epsilon, ctx)


def mvn2_reference(InputTensor, ScaleTensor, BiasTensor, *, Axes, UseMean, UseVariance, Epsilon,
                   ctx):
    return mvn_reference(InputTensor, ScaleTensor, BiasTensor, Axes, UseMean, UseVariance,
                         Epsilon)


def error_bound(inputs, spec, dtype):
    a = spec.attr
    axes = _cross(a["CrossChannel"]) if "CrossChannel" in a else a["Axes"]
    return mvn_bound(inputs[IN], inputs.get(S), inputs.get(B), axes, a.get("UseMean", True),
                     a.get("UseVariance", a.get("NormalizeVariance")), a["Epsilon"])


def together_before_5_2(spec, check):
    if check.level < 0x5200 and (spec.tensor.get(S) is None) != (spec.tensor.get(B) is None):
        check.fail("ScaleTensor and BiasTensor must be given together before "
                   "DML_FEATURE_LEVEL_5_2")


f32 = np.float32
X = f32([[[[1, 3], [5, 7]], [[2, 2], [2, 6]]]])  # channel 0 mean 4 var 5; channel 1 mean 3 var 3
RULES = (broadcastable(S, B), same_sizes(IN, OUT), same_type(IN, S, B, OUT), together_before_5_2)


def _register(name, kernel, reference, rules, examples):
    register(OperatorDef(f"DML_OPERATOR_{name}", kernel, reference, rules=RULES + rules,
                         output_sizes=sizes_of(IN, OUT),
                         error_bound=error_bound, ulp={"FLOAT32": 0, "FLOAT16": 0},
                         examples=examples, module=__name__))


_register("MEAN_VARIANCE_NORMALIZATION", mvn0, mvn0_reference, (), (
    Example({IN: X}, {OUT: f32(np.float64([[[[-3, -1], [1, 3]], [[-1, -1], [-1, 3]]]]) /
                               [[[[5 ** .5]], [[3 ** .5]]]])},
            {"CrossChannel": 0, "NormalizeVariance": 1, "Epsilon": 0.0},
            "per channel: (x - 4) / sqrt 5, (x - 3) / sqrt 3, correctly rounded"),
    Example({IN: X, S: f32([[[[2]]]]), B: f32([[[[10]]]])},
            {OUT: f32([[[[4, 8], [12, 16]], [[8, 8], [8, 16]]]])},
            {"CrossChannel": 0, "NormalizeVariance": 0, "Epsilon": 0.0},
            "NormalizeVariance FALSE: 2 (x - mean) + 10"),
))
_register("MEAN_VARIANCE_NORMALIZATION1", mvn1, mvn1_reference, (axes_rule,), (
    Example({IN: f32([[1, 2, 3, 6]])}, {OUT: f32(np.float64([[-2, -1, 0, 3]]) / 3.5 ** .5)},
            {"Axes": (1,), "NormalizeVariance": 1, "Epsilon": 0.0},
            "2-D (FL 3_1), axis 1: mean 3, variance 3.5"),
))
_register("MEAN_VARIANCE_NORMALIZATION2", mvn2, mvn2_reference, (axes_rule,), (
    Example({IN: f32([[3, 4]]), S: f32([[2, 1]])}, {OUT: f32(np.float64([[6, 4]]) / 12.5 ** .5)},
            {"Axes": (1,), "UseMean": 0, "UseVariance": 1, "Epsilon": 0.0},
            "UseMean FALSE: RMS normalization, x / sqrt(mean x^2) * Scale"),
    Example({IN: f32([[1, 2, 3, 6]])}, {OUT: f32([[-2, -1, 0, 3]])},
            {"Axes": (1,), "UseMean": 1, "UseVariance": 0, "Epsilon": 0.0},
            "UseVariance FALSE: x - mean"),
))

"""DML_OPERATOR_RESAMPLE_GRAD (FL 3_0) and DML_OPERATOR_RESAMPLE_GRAD1 (FL 5_1): the
backpropagation of resampling.

RESAMPLE_GRAD undoes RESAMPLE1 and RESAMPLE_GRAD1 undoes
RESAMPLE2 (its RoundingDirection): each forward output element's weights over the input
(``_resample``: one input element for nearest, the separable linear taps otherwise) carry
its gradient back, and the contributions meeting at an input element are summed; input
elements no output read get 0 (the pages' example: nearest 1.5x wide and 0.5x high,
[4, 5, 6] -> [[9, 6], [0, 0]]). RESAMPLE_GRAD1 equals RESAMPLE_GRAD for LINEAR, and for
NEAREST_NEIGHBOR with RoundingDirection DECREASING and OutputPixelOffsets 0.5 lower (its
Remarks; the forward pages' equivalence).

InputGradient has the forward output's Sizes and OutputGradient the forward input's,
which only the desc states; one DataType and DimensionCount (1 to 4 from FL 5_1, 4
before). Float32 arithmetic (FLOAT16 upcast, rounded once); the weights are the forward
operator's float64 taps rounded to float32. Tolerance (``error_bound``): (k + 4) u of the
summed magnitudes, k the taps per element.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, Sizes, register, same_type
from ._resample import DECREASING, LINEAR, NEAREST, check_arrays, taps
from ._resample_reference import resample_grad_reference as transposed
from .resample import rounding_rule

DY, DX = "InputGradientTensor", "OutputGradientTensor"
ARRAYS = ("Scales", "InputPixelOffsets", "OutputPixelOffsets")


def _params(a):
    """(in offsets, out offsets, rounding) with RESAMPLE1's nearest as RESAMPLE2's."""
    outs, rounding = a["OutputPixelOffsets"], a.get("RoundingDirection")
    if rounding is None:
        rounding = DECREASING
        if a["InterpolationMode"] == NEAREST:
            outs = tuple(float(np.float32(v)) - 0.5 for v in outs)
    return a["InputPixelOffsets"], outs, rounding


def _kernel(g, a, ctx):
    g = ctx.upcast(g)
    ins, outs, rounding = _params(a)
    shape = ctx.outputs[DX].sizes
    for d, n_in in enumerate(shape):
        idx, w = taps(n_in, g.shape[d], a["Scales"][d], ins[d], outs[d], a["InterpolationMode"],
                      rounding)
        moved = jnp.moveaxis(g, d, 0)
        acc = jnp.zeros((n_in,) + moved.shape[1:], g.dtype)
        for k in range(idx.shape[1]):
            wk = jnp.asarray(w[:, k], g.dtype).reshape((-1,) + (1,) * (moved.ndim - 1))
            acc = acc.at[jnp.asarray(idx[:, k], np.int32)].add(wk * moved)
        g = jnp.moveaxis(acc, 0, d)
    return g


def _reference(g, a, ctx):
    ins, outs, rounding = _params(a)
    return transposed(g, ctx.outputs[DX].sizes, a["Scales"], ins, outs,
                                   a["InterpolationMode"], rounding)


def resample_grad(InputGradientTensor, *, InterpolationMode, DimensionCount, Scales,
                  InputPixelOffsets, OutputPixelOffsets, ctx):
    return _kernel(InputGradientTensor, locals(), ctx)


def resample_grad_reference(InputGradientTensor, *, InterpolationMode, DimensionCount, Scales,
                            InputPixelOffsets, OutputPixelOffsets, ctx):
    return _reference(InputGradientTensor, locals(), ctx)


def resample_grad1(InputGradientTensor, *, InterpolationMode, RoundingDirection,
                   DimensionCount, Scales, InputPixelOffsets, OutputPixelOffsets, ctx):
    return _kernel(InputGradientTensor, locals(), ctx)


def resample_grad1_reference(InputGradientTensor, *, InterpolationMode, RoundingDirection,
                             DimensionCount, Scales, InputPixelOffsets, OutputPixelOffsets,
                             ctx):
    return _reference(InputGradientTensor, locals(), ctx)


def given_sizes(spec, check):
    g, out = spec.tensor[DY], spec.tensor.get(DX)
    check_arrays(spec, check, len(g.sizes), ARRAYS)
    if spec.attr["DimensionCount"] != len(g.sizes):
        check.fail(f"DimensionCount is {spec.attr['DimensionCount']} but "
                   f"InputGradientTensor.DimensionCount is {len(g.sizes)}; they must match")
    if out is None:
        check.fail("OutputGradientTensor's Sizes (the forward input's) are the desc's; give its "
                   "tensor desc")
    return {DX: Sizes(out.sizes, "the forward input (OutputGradientTensor)")}


def error_bound(inputs, spec, dtype):
    a = spec.attr
    ins, outs, rounding = _params(a)
    dy = np.abs(np.asarray(inputs[DY], np.float64))
    total = transposed(dy, spec.tensor[DX].sizes, a["Scales"], ins, outs,
                                    a["InterpolationMode"], rounding)
    return (2 * len(dy.shape) + 4) * 2.0 ** -24 * total


f32 = np.float32
PAGE = {"InterpolationMode": NEAREST, "DimensionCount": 2, "Scales": (0.5, 1.5),
        "InputPixelOffsets": (0.5, 0.5), "OutputPixelOffsets": (0.0, 0.0)}
LIN = {"InterpolationMode": LINEAR, "DimensionCount": 2, "Scales": (1.0, 2.0),
       "InputPixelOffsets": (0.5, 0.5), "OutputPixelOffsets": (-0.5, -0.5)}
for name, kernel, reference, rules, examples in (
        ("RESAMPLE_GRAD", resample_grad, resample_grad_reference, (), (
            Example({DY: f32([[4, 5, 6]])}, {DX: f32([[9, 6], [0, 0]])}, PAGE,
                    "the page's example (offsets unstated there; these reproduce its forward "
                    "example through RESAMPLE1)"),
            Example({DY: f32([[1, 1, 1, 1]])}, {DX: f32([[2, 2]])}, LIN,
                    "linear 2x: weights 1, 0.75 + 0.25, ... sum to 2 per input"),)),
        ("RESAMPLE_GRAD1", resample_grad1, resample_grad1_reference, (rounding_rule,), (
            Example({DY: f32([[4, 5, 6]])}, {DX: f32([[9, 6], [0, 0]])},
                    {**PAGE, "OutputPixelOffsets": (-0.5, -0.5), "RoundingDirection": 1},
                    "the page's example: RESAMPLE_GRAD's, 0.5 lower, rounding DECREASING"),
            Example({DY: f32([[1, 2, 3, 4]])}, {DX: f32([[1 + 2 + 3 + 4, 0]])},
                    {**PAGE, "Scales": (1.0, 2.0), "InputPixelOffsets": (0.0, 5.0),
                     "RoundingDirection": 0},
                    "InputPixelOffsets 5: every output's x < 0 clamps to the first input"),))):
    register(OperatorDef(
        f"DML_OPERATOR_{name}", kernel, reference, output_sizes=given_sizes,
        rules=(same_type(DY, DX),) + rules, error_bound=error_bound,
        ulp={"FLOAT32": 1, "FLOAT16": 1}, examples=examples, module=__name__))

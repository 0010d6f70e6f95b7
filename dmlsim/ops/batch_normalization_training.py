"""DML_OPERATOR_BATCH_NORMALIZATION_TRAINING (FL 4_1): batch normalization with the batch's
own statistics (the page):

    Output = FusedActivation(Scale (Input - Mean) / sqrt(Variance + Epsilon) + Bias + FusedAdd)

Mean and Variance (the population variance, 1/N) are taken over the reduced dimensions,
those where Scale and Bias have size 1 (every other size equals the input's), and written
to OutputMeanTensor and OutputVarianceTensor. Outputs: Output, OutputMean, OutputVariance.
Float32 arithmetic (FLOAT16 upcast, rounded once). Tolerance (``error_bound``): a sum or
mean of n terms within (n + 8) u of its terms' magnitudes (u = 2^-24), through the formula.
Its gradients: ``batch_normalization_grad``.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_sizes, same_type, sizes_of
from ._normalization import U, broadcastable

IN, S, B, ADD, OUT, OM, OV = ("InputTensor", "ScaleTensor", "BiasTensor", "FusedAddTensor",
                              "OutputTensor", "OutputMeanTensor", "OutputVarianceTensor")
DY = "InputGradientTensor"


def _axes(x, per_channel):
    return tuple(d for d, (n, s) in enumerate(zip(x.shape, per_channel.shape)) if s == 1)


def batch_normalization_training(InputTensor, ScaleTensor, BiasTensor, FusedAddTensor, *,
                                 Epsilon, ctx):
    x, s, b = (ctx.upcast(t) for t in (InputTensor, ScaleTensor, BiasTensor))
    axes = _axes(x, s)
    mean = jnp.mean(x, axes, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axes, keepdims=True)
    y = s * ((x - mean) / jnp.sqrt(var + jnp.asarray(np.float32(Epsilon), x.dtype))) + b
    return (y if FusedAddTensor is None else y + ctx.upcast(FusedAddTensor)), mean, var


def batch_normalization_training_reference(InputTensor, ScaleTensor, BiasTensor, FusedAddTensor,
                                           *, Epsilon, ctx):
    x, s, b = (np.asarray(t, np.float64) for t in (InputTensor, ScaleTensor, BiasTensor))
    axes = _axes(x, s)
    n = int(np.prod([x.shape[d] for d in axes]))
    mean = x.sum(axes, keepdims=True) / n
    var = ((x - mean) ** 2).sum(axes, keepdims=True) / n
    y = s * (x - mean) / np.sqrt(var + float(np.float32(Epsilon))) + b
    return (y if FusedAddTensor is None else y + np.asarray(FusedAddTensor, np.float64)), \
        mean, var


def _bound(inputs, spec, fields):
    """(n + 8) u times the magnitudes flowing into each output (see the docstring)."""
    x = np.abs(np.asarray(inputs[IN], np.float64))
    per = np.asarray(inputs[fields[0]])
    n = int(np.prod([x.shape[d] for d in _axes(x, per)])) + 8
    big = max(float(np.max(x)), 1.0) * max(float(np.max(np.abs(np.asarray(inputs.get(DY, x),
                                                                          np.float64)))), 1.0)
    return n * U * big * 8


def training_bound(inputs, spec, dtype):
    b = _bound(inputs, spec, (S,))
    return {OUT: b, OM: b, OV: b}



f32 = np.float32
X = f32([[[[1, 3]], [[2, 6]]]])  # { 1, 2, 1, 2 }: two channels
CH = f32([[[[1]], [[1]]]])
register(OperatorDef(
    "DML_OPERATOR_BATCH_NORMALIZATION_TRAINING", batch_normalization_training,
    batch_normalization_training_reference,
    output_sizes=lambda spec, check: {**sizes_of(IN, OUT)(spec, check),
                                      **sizes_of(S, OM, OV)(spec, check)},
    rules=(broadcastable(S, B), same_sizes(S, B), same_sizes(IN, ADD),
           same_type(IN, S, B, ADD, OUT, OM, OV)), error_bound=training_bound,
    examples=(
        Example({IN: X, S: CH, B: f32([[[[0]], [[1]]]])},
                {OUT: f32([[[[-1, 1]], [[0, 2]]]]), OM: f32([[[[2]], [[4]]]]),
                 OV: f32([[[[1]], [[4]]]])}, {"Epsilon": 0.0},
                "per channel: means 2 and 4, variances 1 and 4; channel 1 adds bias 1"),
        Example({IN: X, S: CH, B: CH * 0, ADD: f32([[[[1, 1]], [[-1, -1]]]])},
                {OUT: f32([[[[0, 2]], [[0, 0]]]]), OM: None, OV: None},
                {"Epsilon": 0.0, "FusedActivation": "RELU"},
                "FusedAdd, then FusedActivation RELU"),
    ), module=__name__))

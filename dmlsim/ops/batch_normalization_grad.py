"""DML_OPERATOR_BATCH_NORMALIZATION_GRAD (FL 3_1) and
DML_OPERATOR_BATCH_NORMALIZATION_TRAINING_GRAD (FL 4_1), as the pages give them.

The sums and means run over the reduced dimensions, those where Mean, Variance and Scale
have size 1. Both give OutputScaleGradient = sum(InputGradient (Input - Mean) /
sqrt(Variance + Epsilon)) and OutputBiasGradient = sum(InputGradient); OutputGradient is
- GRAD (of inference batch normalization): InputGradient Scale / sqrt(Variance + Epsilon);
- TRAINING_GRAD: Scale Coef0 (InputGradientCentered - InputCentered mean(Coef1) /
  (Variance + Epsilon)) with Coef0 = 1 / sqrt(Variance + Epsilon), Coef1 = InputGradient
  (Input - mean(Input)), the centred tensors minus their means (the page's "InputCentered =
  InputCentered - mean(InputCentered)" read as Input - mean(Input)).
Outputs: OutputGradient, OutputScaleGradient, OutputBiasGradient. Float32 arithmetic
(FLOAT16 upcast, rounded once); tolerance as BATCH_NORMALIZATION_TRAINING's.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_sizes, same_type, sizes_of
from ._normalization import broadcastable
from .batch_normalization_training import IN, S, _axes, _bound

DY, M, V, DX, DS, DB = ("InputGradientTensor", "MeanTensor", "VarianceTensor",
                        "OutputGradientTensor", "OutputScaleGradientTensor",
                        "OutputBiasGradientTensor")


def _grads(x, dy, m, v, s, eps, np_):
    """(OutputGradient of inference BN, scale gradient, bias gradient, Coef0) in ``np_``."""
    axes = _axes(x, s)
    coef0 = 1 / np_.sqrt(v + eps)
    return dy * s * coef0, (dy * (x - m) * coef0).sum(axes, keepdims=True), \
        dy.sum(axes, keepdims=True), coef0, axes


def batch_normalization_grad(InputTensor, InputGradientTensor, MeanTensor, VarianceTensor,
                             ScaleTensor, *, Epsilon, ctx):
    x, dy, m, v, s = (ctx.upcast(t) for t in (InputTensor, InputGradientTensor, MeanTensor,
                                               VarianceTensor, ScaleTensor))
    return _grads(x, dy, m, v, s, jnp.asarray(np.float32(Epsilon), x.dtype), jnp)[:3]


def batch_normalization_grad_reference(InputTensor, InputGradientTensor, MeanTensor,
                                       VarianceTensor, ScaleTensor, *, Epsilon, ctx):
    x, dy, m, v, s = (np.asarray(t, np.float64) for t in (
        InputTensor, InputGradientTensor, MeanTensor, VarianceTensor, ScaleTensor))
    return _grads(x, dy, m, v, s, float(np.float32(Epsilon)), np)[:3]


def _training_dx(x, dy, v, s, coef0, axes, eps, mean):
    xc = x - mean(x, axes)
    dyc = dy - mean(dy, axes)
    return s * coef0 * (dyc - xc * mean(dy * xc, axes) / (v + eps))


def batch_normalization_training_grad(InputTensor, InputGradientTensor, MeanTensor,
                                      VarianceTensor, ScaleTensor, *, Epsilon, ctx):
    x, dy, m, v, s = (ctx.upcast(t) for t in (InputTensor, InputGradientTensor, MeanTensor,
                                               VarianceTensor, ScaleTensor))
    eps = jnp.asarray(np.float32(Epsilon), x.dtype)
    _, ds, db, coef0, axes = _grads(x, dy, m, v, s, eps, jnp)
    dx = _training_dx(x, dy, v, s, coef0, axes, eps,
                      lambda t, a: jnp.mean(t, a, keepdims=True))
    return dx, ds, db


def batch_normalization_training_grad_reference(InputTensor, InputGradientTensor, MeanTensor,
                                                VarianceTensor, ScaleTensor, *, Epsilon, ctx):
    x, dy, m, v, s = (np.asarray(t, np.float64) for t in (
        InputTensor, InputGradientTensor, MeanTensor, VarianceTensor, ScaleTensor))
    eps = float(np.float32(Epsilon))
    _, ds, db, coef0, axes = _grads(x, dy, m, v, s, eps, np)
    n = int(np.prod([x.shape[d] for d in axes]))
    dx = _training_dx(x, dy, v, s, coef0, axes, eps, lambda t, a: t.sum(a, keepdims=True) / n)
    return dx, ds, db


def grad_bound(inputs, spec, dtype):
    v = np.asarray(inputs[V], np.float64) + float(np.float32(spec.attr["Epsilon"]))
    s = max(float(np.max(np.abs(np.asarray(inputs[S], np.float64)))), 1.0)
    b = _bound(inputs, spec, (M,)) * s / float(np.min(np.sqrt(v))) / min(float(np.min(v)), 1.0)
    return {DX: b, DS: b, DB: b}


f32 = np.float32
X = f32([[[[1, 3]], [[2, 6]]]])  # { 1, 2, 1, 2 }: two channels
GRAD_IN = {IN: X, DY: f32([[[[1, -1]], [[2, 2]]]]), M: f32([[[[2]], [[4]]]]),
           V: f32([[[[1]], [[4]]]]), S: f32([[[[1]], [[2]]]])}
PER_CHANNEL = (broadcastable(M, V, S), same_sizes(M, V, S, DS, DB), same_sizes(IN, DY, DX),
               same_type(IN, DY, M, V, S, DX, DS, DB))
for name, fn, ref, dx in (
        ("GRAD", batch_normalization_grad, batch_normalization_grad_reference,
         f32([[[[1, -1]], [[2, 2]]]])),
        ("TRAINING_GRAD", batch_normalization_training_grad,
         batch_normalization_training_grad_reference, f32([[[[0, 0]], [[0, 0]]]]))):
    register(OperatorDef(
        f"DML_OPERATOR_BATCH_NORMALIZATION_{name}", fn, ref,
        output_sizes=lambda spec, check: {**sizes_of(IN, DX)(spec, check),
                                          **sizes_of(M, DS, DB)(spec, check)},
        rules=PER_CHANNEL, error_bound=grad_bound,
        examples=(
            Example(GRAD_IN, {DX: dx, DS: f32([[[[-2]], [[0]]]]), DB: f32([[[[0]], [[4]]]])},
                    {"Epsilon": 0.0}, "per channel; x - mean = [-1 1], [-2 2]"),
        ), module=__name__))

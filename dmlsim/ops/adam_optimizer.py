"""DML_OPERATOR_ADAM_OPTIMIZER (FL 3_0): one Adam step (the page's computation):

    M = Beta1 M + (1 - Beta1) G
    V = Beta2 V + (1 - Beta2) G G
    Alpha = sqrt(1 - Beta2^T) / (1 - Beta1^T)
    X -= LearningRate Alpha M / (sqrt(V) + Epsilon)

Outputs in schema order: OutputParametersTensor (X), OutputFirstMomentTensor (M),
OutputSecondMomentTensor (V); every output may alias its input (in-place update, the
page's Remarks). All seven parameter-shaped tensors share one DataType and Sizes
({ D0, D1, D2, D3 }); T is TrainingStepTensor's one element.

The page and its table disagree on T's type: the text says UINT32, the table FLOAT32 or
FLOAT16; dmlsim follows the table (validation) and reads the element's value. The page
says T typically starts at 0, but its formula then gives Alpha = 0 / 0: dmlsim computes
the formula as written (NaN parameters at T = 0), so a training loop starts T at 1.
Precision: Alpha, a scalar, is computed in float64 and rounded once (1 - Beta^T cancels
badly in float32 for Beta near 1); the element-wise updates compute in float32 (FLOAT16
upcast, rounded once). Tolerance (``error_bound``): 6 u of each update's terms
(u = 2^-24).
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_sizes, same_type, sizes_of
from ._quantize import single_element

X, M, V, G, T = ("InputParametersTensor", "InputFirstMomentTensor", "InputSecondMomentTensor",
                 "GradientTensor", "TrainingStepTensor")
OX, OM, OV = "OutputParametersTensor", "OutputFirstMomentTensor", "OutputSecondMomentTensor"
U = 2.0 ** -24


def adam_optimizer(InputParametersTensor, InputFirstMomentTensor, InputSecondMomentTensor,
                   GradientTensor, TrainingStepTensor, *, LearningRate, Beta1, Beta2, Epsilon,
                   ctx):
    x, m, v, g = (ctx.upcast(t) for t in (InputParametersTensor, InputFirstMomentTensor,
                                           InputSecondMomentTensor, GradientTensor))
    f = x.dtype
    b1, b2 = jnp.asarray(Beta1, f), jnp.asarray(Beta2, f)
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    t = jnp.asarray(TrainingStepTensor).astype(np.float64).reshape(-1)[0]
    alpha = (jnp.sqrt(1 - float(Beta2) ** t) / (1 - float(Beta1) ** t)).astype(f)
    x = x - jnp.asarray(LearningRate, f) * alpha * m / (jnp.sqrt(v) + jnp.asarray(Epsilon, f))
    return x, m, v


def _terms(inputs, a):
    """float64 (x, m, v, step, the terms of each update) (NumPy)."""
    x, m, v, g = (np.asarray(inputs[k], np.float64) for k in (X, M, V, G))
    t = float(np.asarray(inputs[T], np.float64).reshape(-1)[0])
    b1, b2 = float(np.float32(a["Beta1"])), float(np.float32(a["Beta2"]))
    m1 = b1 * m + (1 - b1) * g
    v1 = b2 * v + (1 - b2) * g * g
    alpha = np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    step = float(np.float32(a["LearningRate"])) * alpha * m1 / (
        np.sqrt(v1) + float(np.float32(a["Epsilon"])))
    return x, m1, v1, step, (np.abs(b1 * m) + np.abs((1 - b1) * g),
                             np.abs(b2 * v) + np.abs((1 - b2) * g * g))


def adam_optimizer_reference(InputParametersTensor, InputFirstMomentTensor,
                             InputSecondMomentTensor, GradientTensor, TrainingStepTensor, *,
                             LearningRate, Beta1, Beta2, Epsilon, ctx):
    inputs = {X: InputParametersTensor, M: InputFirstMomentTensor, V: InputSecondMomentTensor,
              G: GradientTensor, T: TrainingStepTensor}
    x, m1, v1, step, _ = _terms(inputs, locals())
    return x - step, m1, v1


def error_bound(inputs, spec, dtype):
    x, _, _, step, (tm, tv) = _terms(inputs, spec.attr)
    return {OX: 6 * U * (np.abs(x) + 2 * np.abs(step)), OM: 6 * U * tm, OV: 6 * U * tv}


f32 = np.float32
ONE = f32(np.ones((1, 1, 1, 1)))
HYPER = {"LearningRate": 0.5, "Beta1": 0.5, "Beta2": 0.75, "Epsilon": 0.0}
PARAMS = (X, M, V, G, OX, OM, OV)
register(OperatorDef(
    "DML_OPERATOR_ADAM_OPTIMIZER", adam_optimizer, adam_optimizer_reference,
    output_sizes=sizes_of(X, OX, OM, OV),
    rules=(same_sizes(*PARAMS), same_type(*PARAMS), single_element(X, T)),
    error_bound=error_bound,
    examples=(
        Example({X: f32([[[[1, 2]]]]), M: f32([[[[0, 0]]]]), V: f32([[[[0, 0]]]]),
                 G: f32([[[[2, -4]]]]), T: ONE},
                {OX: f32([[[[0.5, 2.5]]]]), OM: f32([[[[1, -2]]]]), OV: f32([[[[1, 4]]]])},
                HYPER, "T = 1, Beta1 0.5, Beta2 0.75: M = G / 2, V = G^2 / 4, "
                "Alpha = sqrt(0.25) / 0.5 = 1, X -= 0.5 M / sqrt(V) = 0.5 sign(G)"),
        Example({X: f32([[[[1]]]]), M: f32([[[[1]]]]), V: f32([[[[1]]]]),
                 G: f32([[[[1]]]]), T: ONE * 2},
                {OX: f32([[[[1 - 0.5 * np.sqrt(1 - 0.5625) / 0.75]]]]), OM: f32([[[[1]]]]),
                 OV: f32([[[[1]]]])}, HYPER,
                "T = 2: Alpha = sqrt(1 - 0.75^2) / (1 - 0.5^2)"),
        Example({X: np.float16([[[[1]]]]), M: np.float16([[[[0]]]]), V: np.float16([[[[0]]]]),
                 G: np.float16([[[[1]]]]), T: np.float16([[[[1]]]])},
                {OX: np.float16([[[[0.5]]]]), OM: np.float16([[[[0.5]]]]),
                 OV: np.float16([[[[0.25]]]])}, HYPER, "FLOAT16 (computed in float32)"),
    ),
    module=__name__))

"""DML_OPERATOR_BATCH_NORMALIZATION:
Output = FusedActivation(Scale * ((Input - Mean) / sqrt(Variance + Epsilon)) + Bias).

Mean, Variance, Scale and Bias have the input's DimensionCount and broadcast to it (each
size equal or 1), the page's rule. Spatial is accepted and ignored: the page deprecates it
from FL 4_0 ("has no effect"), and the broadcast rule already says which dimensions are
per-element. Float32 arithmetic (FLOAT16 too, rounded once). Tolerance (``error_bound``):
8 u (|Scale| (|Input| + |Mean|) / sqrt(Variance + Epsilon)) + 2 u |Bias|, u = 2^-24: a few
roundings of the subtraction, the square root, the division and the products.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_sizes, same_type, sizes_of
from ._normalization import U, broadcastable

IN, M, V, S, B, OUT = ("InputTensor", "MeanTensor", "VarianceTensor", "ScaleTensor",
                       "BiasTensor", "OutputTensor")


def batch_normalization(InputTensor, MeanTensor, VarianceTensor, ScaleTensor, BiasTensor, *,
                        Spatial, Epsilon, ctx):
    x, m, v, s, b = (ctx.upcast(t) for t in (InputTensor, MeanTensor, VarianceTensor,
                                              ScaleTensor, BiasTensor))
    return s * ((x - m) / jnp.sqrt(v + jnp.asarray(np.float32(Epsilon), x.dtype))) + b


def batch_normalization_reference(InputTensor, MeanTensor, VarianceTensor, ScaleTensor,
                                  BiasTensor, *, Spatial, Epsilon, ctx):
    x, m, v, s, b = (np.asarray(t, np.float64) for t in (InputTensor, MeanTensor,
                                                          VarianceTensor, ScaleTensor,
                                                          BiasTensor))
    return s * ((x - m) / np.sqrt(v + float(np.float32(Epsilon)))) + b


def error_bound(inputs, spec, dtype):
    x, m, v, s, b = (np.asarray(inputs[f], np.float64) for f in (IN, M, V, S, B))
    root = np.sqrt(v + float(np.float32(spec.attr["Epsilon"])))
    return 8 * U * np.abs(s) * (np.abs(x) + np.abs(m)) / root + 2 * U * np.abs(b)


f32 = np.float32
X = f32([[[[1, 2]], [[3, 4]]]])  # { 1, 2, 1, 2 }: two channels
PER_CHANNEL = {M: f32([[[[1]], [[3]]]]), V: f32([[[[4]], [[0.25]]]]), S: f32([[[[1]], [[2]]]]),
               B: f32([[[[0]], [[-1]]]])}
register(OperatorDef(
    "DML_OPERATOR_BATCH_NORMALIZATION", batch_normalization, batch_normalization_reference,
    output_sizes=sizes_of(IN, OUT),
    rules=(broadcastable(M, V, S, B), same_sizes(IN, OUT), same_type(IN, M, V, S, B, OUT)),
    error_bound=error_bound, ulp={"FLOAT32": 0, "FLOAT16": 0}, examples=(
        Example({IN: X, **PER_CHANNEL}, {OUT: f32([[[[0, 0.5]], [[-1, 3]]]])},
                {"Spatial": 1, "Epsilon": 0.0},
                "per channel: (x - 1) / 2; 2 (x - 3) / 0.5 - 1"),
        Example({IN: X, **PER_CHANNEL}, {OUT: f32([[[[0, 0.5]], [[0, 3]]]])},
                {"Spatial": 1, "Epsilon": 0.0, "FusedActivation": "RELU"},
                "FusedActivation RELU"),
        Example({IN: f32([[1, 5]]), M: f32([[1, 1]]), V: f32([[3, 15]]), S: f32([[1, 1]]),
                 B: f32([[0, 0]])}, {OUT: f32([[0, 1]])}, {"Spatial": 0, "Epsilon": 1.0},
                "2-D (FL 3_1), per element: (5 - 1) / sqrt(15 + 1)"),
    ), module=__name__))

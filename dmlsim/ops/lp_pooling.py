"""LP_POOLING and LP_POOLING1 (FL 6_2, with Dilations): the Lp norm (sum |x|^P)^(1/P) of each
sliding window (geometry: ``_pooling``), padding taps adding nothing.

P is at least 1 (the pages: "typically 1 or 2"); P 0 is E_INVALIDARG. P 1 is the sum of
|x|, P 2 a correctly rounded square root of the sum of squares. FLOAT16 accumulates in
float32 and rounds once. Tolerance (``error_bound``): the sum of n terms within
(n + 2 + 2P) u of itself (u = 2^-24; |x|^P rounded), divided by P through the root, plus 4 u.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_type
from ._ieee import correctly_rounded
from ._pool_reduce import window_sum
from ._pooling import output_shape, reference_windows, window_attrs, window_sizes

IN, OUT = "InputTensor", "OutputTensor"
U = 2.0 ** -24


def lp(x, a, p, ctx):
    x = ctx.upcast(x)
    total = window_sum(jnp.abs(x) ** p if p != 1 else jnp.abs(x), a)
    if p == 1:
        return total
    if p == 2:
        return correctly_rounded(jnp.sqrt)(total)
    return total ** (1.0 / p)


def lp_reference(x, a, p):
    x = np.asarray(x)
    y = np.zeros(output_shape(x, a))
    for o, items, _ in reference_windows(x, a):
        y[o] = sum(abs(float(v)) ** p for _, v in items) ** (1.0 / p)
    return y


def error_bound(inputs, spec, dtype):
    a, p = spec.attr, spec.attr["P"]
    n = int(np.prod(a["WindowSize"]))
    y = lp_reference(np.abs(np.asarray(inputs[IN], np.float64)), a, p)
    return y * (((n + 2) * U + 2 * p * U) / p + 4 * U)


def p_rule(spec, check):
    if spec.attr["P"] < 1:
        check.fail(f"P is {spec.attr['P']}; it must be at least 1")


def lp_pooling(InputTensor, *, DimensionCount, Strides, WindowSize, StartPadding, EndPadding,
               P, ctx):
    return lp(InputTensor, window_attrs(locals()), P, ctx)


def lp_pooling_reference(InputTensor, *, DimensionCount, Strides, WindowSize, StartPadding,
                         EndPadding, P, ctx):
    return lp_reference(InputTensor, window_attrs(locals()), P)


def lp_pooling1(InputTensor, *, DimensionCount, Strides, WindowSize, StartPadding, EndPadding,
                Dilations, P, ctx):
    return lp(InputTensor, window_attrs(locals(), Dilations=Dilations), P, ctx)


def lp_pooling1_reference(InputTensor, *, DimensionCount, Strides, WindowSize, StartPadding,
                          EndPadding, Dilations, P, ctx):
    return lp_reference(InputTensor, window_attrs(locals(), Dilations=Dilations), P)


f32 = np.float32
W2 = {"DimensionCount": 2, "Strides": (2, 2), "WindowSize": (2, 2), "StartPadding": (0, 0),
      "EndPadding": (0, 0)}


def _register(name, kernel, reference, rules, examples):
    register(OperatorDef(f"DML_OPERATOR_{name}", kernel, reference, output_sizes=window_sizes,
                         rules=(same_type(IN, OUT),) + rules, error_bound=error_bound,
                         ulp={"FLOAT32": 0, "FLOAT16": 0}, examples=examples,
                         module=__name__))


_register("LP_POOLING", lp_pooling, lp_pooling_reference, (p_rule,), (
    Example({IN: f32([[[[3, -4], [0, 0]]]])}, {OUT: f32([[[[5]]]])}, {**W2, "P": 2},
            "P 2: sqrt(9 + 16) = 5"),
    Example({IN: f32([[[[3, -4], [1, 0]]]])}, {OUT: f32([[[[8]]]])}, {**W2, "P": 1},
            "P 1: |3| + |-4| + |1|"),
))
_register("LP_POOLING1", lp_pooling1, lp_pooling1_reference, (p_rule,), (
    Example({IN: f32([[[[3, 9, -4, 9]]]])}, {OUT: f32([[[[5, 9 * 2 ** 0.5]]]])},
            {**W2, "Strides": (1, 1), "WindowSize": (1, 2), "Dilations": (1, 2), "P": 2},
            "Dilations (1, 2): sqrt(3^2 + 4^2), sqrt(9^2 + 9^2)"),
))

"""AVERAGE_POOLING and AVERAGE_POOLING1 (FL 6_2, with Dilations): the mean of each sliding
window (geometry: ``_pooling``).

IncludePadding counts the window's padding taps in the divisor (they add 0); otherwise the
divisor is the number of input elements in the window. Where the pages are silent: a window
holding only padding is E_INVALIDARG (``_pooling``). FLOAT16 accumulates in float32 and
rounds once; the division is correctly rounded. Tolerance (``error_bound``): the window sum
of n terms is within (n + 2) u sum |x| (u = 2^-24), plus the division's rounding.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_type
from ._ieee import correctly_rounded
from ._pool_reduce import valid_counts, window_sum
from ._pooling import output_shape, reference_windows, window_attrs, window_sizes

IN, OUT = "InputTensor", "OutputTensor"
U = 2.0 ** -24


def average(x, a, include_padding, ctx):
    x = ctx.upcast(x)
    total = window_sum(x, a)
    count = np.prod(a["WindowSize"]) if include_padding else valid_counts(x.shape, a)
    return correctly_rounded(lambda s, n: s / n)(total, jnp.asarray(count, x.dtype))


def average_reference(x, a, include_padding):
    x = np.asarray(x)
    y = np.zeros(output_shape(x, a))
    for o, items, taps_ in reference_windows(x, a):
        vals = [float(v) for _, v in items]
        y[o] = sum(vals) / (taps_ if include_padding else len(vals))
    return y


def error_bound(inputs, spec, dtype):
    x = np.abs(np.asarray(inputs[IN], np.float64))
    n = int(np.prod(spec.attr["WindowSize"]))
    return (n + 3) * U * average_reference(x, spec.attr, spec.attr["IncludePadding"])


def average_pooling(InputTensor, *, DimensionCount, Strides, WindowSize, StartPadding,
                    EndPadding, IncludePadding, ctx):
    return average(InputTensor, window_attrs(locals()), IncludePadding, ctx)


def average_pooling_reference(InputTensor, *, DimensionCount, Strides, WindowSize,
                              StartPadding, EndPadding, IncludePadding, ctx):
    return average_reference(InputTensor, window_attrs(locals()), IncludePadding)


def average_pooling1(InputTensor, *, DimensionCount, Strides, WindowSize, StartPadding,
                     EndPadding, Dilations, IncludePadding, ctx):
    return average(InputTensor, window_attrs(locals(), Dilations=Dilations), IncludePadding, ctx)


def average_pooling1_reference(InputTensor, *, DimensionCount, Strides, WindowSize,
                               StartPadding, EndPadding, Dilations, IncludePadding, ctx):
    return average_reference(InputTensor, window_attrs(locals(), Dilations=Dilations),
                             IncludePadding)


f32 = np.float32
X = f32(np.arange(1, 17).reshape(1, 1, 4, 4))
W2 = {"DimensionCount": 2, "Strides": (2, 2), "WindowSize": (2, 2), "StartPadding": (0, 0),
      "EndPadding": (0, 0)}
PAD = {**W2, "Strides": (1, 1), "StartPadding": (1, 1), "EndPadding": (0, 0)}


def _register(name, kernel, reference, rules, examples):
    register(OperatorDef(f"DML_OPERATOR_{name}", kernel, reference, output_sizes=window_sizes,
                         rules=(same_type(IN, OUT),) + rules, error_bound=error_bound,
                         ulp={"FLOAT32": 0, "FLOAT16": 0}, examples=examples,
                         module=__name__))


_register("AVERAGE_POOLING", average_pooling, average_pooling_reference, (), (
    Example({IN: X}, {OUT: f32([[[[3.5, 5.5], [11.5, 13.5]]]])}, {**W2, "IncludePadding": 0},
            "2x2 windows, stride 2: (1 + 2 + 5 + 6) / 4 = 3.5"),
    Example({IN: f32([[[[4, 8], [12, 16]]]])}, {OUT: f32([[[[1, 3], [4, 10]]]])},
            {**PAD, "IncludePadding": 1}, "IncludePadding: padding counts, 4 / 4 = 1"),
    Example({IN: f32([[[[4, 8], [12, 16]]]])}, {OUT: f32([[[[4, 6], [8, 10]]]])},
            {**PAD, "IncludePadding": 0}, "without: 4 / 1, (4 + 8) / 2"),
    Example({IN: np.float16([[[[2048, 1, 1, 0]]]])}, {OUT: np.float16([[[[512.5]]]])},
            {**W2, "Strides": (1, 1), "WindowSize": (1, 4), "IncludePadding": 0},
            "FLOAT16 sums in float32: (2048 + 1 + 1) / 4 = 512.5"),
))
_register("AVERAGE_POOLING1", average_pooling1, average_pooling1_reference, (), (
    Example({IN: X}, {OUT: f32([[[[6, 7], [10, 11]]]])},
            {**W2, "Strides": (1, 1), "Dilations": (2, 2), "IncludePadding": 0},
            "Dilations 2: (1 + 3 + 9 + 11) / 4 = 6"),
))

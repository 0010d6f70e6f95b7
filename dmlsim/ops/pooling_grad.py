"""DML_OPERATOR_AVERAGE_POOLING_GRAD and DML_OPERATOR_MAX_POOLING_GRAD (FL 3_0): the
backpropagation of average and max pooling (window geometry: ``_pooling``).

- AVERAGE_POOLING_GRAD: each InputGradient element (one per forward output window) is divided
  by that window's divisor (its input elements, or all WindowSize taps with IncludePadding)
  and added to every input element of the window (the page's example: 1/4 of each of
  [[1, 2], [3, 4]] spread over 2x2 windows). OutputGradient has the forward input's Sizes,
  which the desc states (the forward output sizes of it must be InputGradient's).
- MAX_POOLING_GRAD: each InputGradient element goes to the element of its window of
  InputTensor that MAX_POOLING2 picks (the largest; on a tie the lowest logical index, the
  page's rule; NaN loses, ``_max_pool``); gradients meeting at one element are summed; the
  rest is 0. OutputGradient has InputTensor's Sizes.
FLOAT16 accumulates in float32 and rounds once.
"""
from types import SimpleNamespace

import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, Sizes, register, same_type, sizes_of
from ._max_pool import max_pool, max_pool_reference
from ._pooling import reference_windows, taps, window_attrs, window_sizes

X, DY, DX = "InputTensor", "InputGradientTensor", "OutputGradientTensor"


def average_pooling_grad(InputGradientTensor, *, DimensionCount, Strides, WindowSize,
                         StartPadding, EndPadding, IncludePadding, ctx):
    a = window_attrs(locals())
    g = ctx.upcast(InputGradientTensor)
    shape = ctx.outputs[DX].sizes
    zeros = jnp.zeros(shape, g.dtype)
    windows = list(taps(zeros, a, 0))
    count = float(np.prod(WindowSize)) if IncludePadding else \
        sum(valid.astype(g.dtype) for _, _, valid in windows)
    share = g / count
    pad = [(0, 0)] * 2 + list(zip(StartPadding, EndPadding))
    dx = jnp.pad(zeros, pad)
    for t, _, _ in windows:
        start = list(t)
        idx = (slice(None), slice(None)) + tuple(
            slice(s, s + (n - 1) * st + 1, st) for s, n, st in zip(start, g.shape[2:], Strides))
        dx = dx.at[idx].add(share)
    crop = tuple(slice(p, p + n) for p, n in zip(StartPadding, shape[2:]))
    return dx[(slice(None), slice(None)) + crop]


def average_pooling_grad_reference(InputGradientTensor, *, DimensionCount, Strides, WindowSize,
                                   StartPadding, EndPadding, IncludePadding, ctx):
    a = window_attrs(locals())
    g = np.asarray(InputGradientTensor, np.float64)
    dx = np.zeros(ctx.outputs[DX].sizes)
    flat = dx.reshape(-1)
    for o, items, taps_ in reference_windows(dx, a):
        for i, _ in items:
            flat[i] += g[o] / (taps_ if IncludePadding else len(items))
    return dx


def max_pooling_grad(InputTensor, InputGradientTensor, *, DimensionCount, Strides, WindowSize,
                     StartPadding, EndPadding, Dilations, ctx):
    a = window_attrs(locals(), Dilations=Dilations)
    g = ctx.upcast(InputGradientTensor)
    _, idx = max_pool(InputTensor, a)
    dx = jnp.zeros(int(np.prod(InputTensor.shape)), g.dtype).at[idx.reshape(-1)].add(
        g.reshape(-1))
    return dx.reshape(InputTensor.shape)


def max_pooling_grad_reference(InputTensor, InputGradientTensor, *, DimensionCount, Strides,
                               WindowSize, StartPadding, EndPadding, Dilations, ctx):
    a = window_attrs(locals(), Dilations=Dilations)
    x = np.asarray(InputTensor)
    _, idx = max_pool_reference(x, a)
    dx = np.zeros(x.size)
    np.add.at(dx, idx.reshape(-1), np.asarray(InputGradientTensor, np.float64).reshape(-1))
    return dx.reshape(x.shape)


def given_sizes(spec, check):
    """AVERAGE_POOLING_GRAD's output: the forward input's Sizes, which only the desc knows."""
    if spec.tensor.get(DX) is None:
        check.fail("OutputGradientTensor's Sizes (the forward input's) are the desc's; give its "
                   "tensor desc")
    return {DX: Sizes(spec.tensor[DX].sizes, "the forward input (OutputGradientTensor)")}


def forward_sizes(field):
    """Rule: the forward pooling of ``field``'s Sizes gives InputGradientTensor's Sizes."""
    def rule(spec, check):
        if spec.tensor.get(field) is None:  # an output still to be inferred
            return
        fwd = SimpleNamespace(attr=spec.attr, tensor={"InputTensor": spec.tensor[field]})
        want = window_sizes(fwd, check)["OutputTensor"]
        got = spec.tensor[DY].sizes
        if tuple(got) != tuple(want):
            check.fail(f"InputGradientTensor.Sizes is {list(got)} but the forward pooling of "
                       f"{field}.Sizes {list(spec.tensor[field].sizes)} gives {list(want)}")
    return rule


f32 = np.float32
W2 = {"DimensionCount": 2, "Strides": (1, 1), "WindowSize": (2, 2), "StartPadding": (0, 0),
      "EndPadding": (0, 0)}
register(OperatorDef(
    "DML_OPERATOR_AVERAGE_POOLING_GRAD", average_pooling_grad, average_pooling_grad_reference,
    output_sizes=given_sizes, rules=(same_type(DY, DX), forward_sizes(DX)),
    ulp={"FLOAT32": 1, "FLOAT16": 1},
    examples=(
        Example({DY: f32([[[[1, 2], [3, 4]]]])},
                {DX: f32([[[[0.25, 0.75, 0.5], [1, 2.5, 1.5], [0.75, 1.75, 1]]]])},
                {**W2, "IncludePadding": False}, "the page's example"),
        Example({DY: f32([[[[4, 4], [4, 4]]]])}, {DX: f32([[[[9, 3], [3, 1]]]])},
                {**W2, "StartPadding": (1, 1), "IncludePadding": False},
                "padding 1 at the start: windows of 1, 2, 2 and 4 elements; 4 + 2 + 2 + 1 = 9"),
        Example({DY: f32([[[[4, 4], [4, 4]]]])}, {DX: f32([[[[4, 2], [2, 1]]]])},
                {**W2, "StartPadding": (1, 1), "IncludePadding": True},
                "IncludePadding: every window divides by 4"),
    ), module=__name__))
register(OperatorDef(
    "DML_OPERATOR_MAX_POOLING_GRAD", max_pooling_grad, max_pooling_grad_reference,
    output_sizes=sizes_of(X, DX), rules=(same_type(X, DY, DX), forward_sizes(X)),
    ulp={"FLOAT32": 0, "FLOAT16": 0},
    examples=(
        Example({X: f32([[[[1, 2, 3], [2, 4, 2], [5, 6, 7]]]]), DY: f32([[[[1, 2], [4, 5]]]])},
                {DX: f32([[[[0, 0, 0], [0, 3, 0], [0, 4, 5]]]])},
                {**W2, "Dilations": (1, 1)}, "the page's example: 1 + 2 meet at the 4"),
        Example({X: f32([[[[7, 7], [7, 7]]]]), DY: f32([[[[3]]]])},
                {DX: f32([[[[3, 0], [0, 0]]]])}, {**W2, "Dilations": (1, 1)},
                "a tie: the lowest logical index wins"),
        Example({X: f32([[[[1, 0, 9], [0, 0, 0], [2, 0, 3]]]]), DY: f32([[[[1]]]])},
                {DX: f32([[[[0, 0, 1], [0, 0, 0], [0, 0, 0]]]])},
                {**W2, "Dilations": (2, 2)}, "Dilations 2: the window reads the corners"),
    ), module=__name__))

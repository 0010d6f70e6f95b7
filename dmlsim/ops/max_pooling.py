"""MAX_POOLING, MAX_POOLING1 (FL 2_0, optional OutputIndicesTensor) and MAX_POOLING2 (FL 2_1,
with Dilations): the largest element of each sliding window (geometry: ``_pooling``).

OutputIndicesTensor (UINT32, or UINT64 from FL 5_0) holds each maximum's index into
InputTensor read as one contiguous array (batch and channel included, row-major); of equal
values the first in the window's row-major order wins (the pages). Padding taps never win.
Where the pages are silent: NaN loses to every number, as HLSL's max ignores it (an all-NaN
window gives NaN and its first index); -0.0 and +0.0 are equal, so the first is kept; a
window holding only padding is E_INVALIDARG. Values are copied bit for bit, integers too.
"""
import jax.numpy as jnp
import numpy as np

from .._core import dtypes
from .._core.registry import Example, OperatorDef, register, same_type
from ._pooling import output_shape, reference_windows, taps, window_attrs, window_sizes

IN, OUT, IDX = "InputTensor", "OutputTensor", "OutputIndicesTensor"


def max_pool(x, a):
    """(maxima, int64 flat input indices) (JAX)."""
    best = idx = None
    plane = np.cumprod((1,) + x.shape[::-1])[::-1][1:]  # row-major element strides
    nc = (jnp.arange(x.shape[0]) * plane[0])[:, None] + (jnp.arange(x.shape[1]) * plane[1])
    dil = a.get("Dilations") or (1,) * a["DimensionCount"]
    grids = jnp.meshgrid(*[jnp.arange(o) for o in output_shape(x, a)[2:]], indexing="ij")
    for t, v, valid in taps(x, a, 0):
        pos = sum((g * a["Strides"][d] + t[d] * dil[d] - a["StartPadding"][d]) * plane[2 + d]
                  for d, g in enumerate(grids))
        here = jnp.broadcast_to(nc.reshape(nc.shape + (1,) * len(grids)) + pos, v.shape)
        if best is None:  # the first tap: may be padding, so start from "nothing yet"
            have = jnp.broadcast_to(valid, v.shape)
            best, idx = v, here
            continue
        nan_best = jnp.isnan(best) if jnp.issubdtype(v.dtype, jnp.floating) else False
        wins = valid & (~have | (v > best) | (nan_best & (v == v)))
        best, idx = jnp.where(wins, v, best), jnp.where(wins, here, idx)
        have = have | valid
    return best, idx.astype(jnp.int64)


def max_pool_reference(x, a):
    x = np.asarray(x)
    shape = output_shape(x, a)
    y, ind = np.zeros(shape, x.dtype), np.zeros(shape, np.int64)
    for o, items, _ in reference_windows(x, a):
        numbers = [(i, v) for i, v in items if v == v]  # NaN loses to every number
        if numbers:
            top = max(v for _, v in numbers)
            first = next(i for i, v in numbers if v == top)  # -0.0 == +0.0: the first
        else:
            first = items[0][0]
        y[o], ind[o] = x.reshape(-1)[first], first
    return y, ind


def max_pooling(InputTensor, *, DimensionCount, Strides, WindowSize, StartPadding, EndPadding,
                ctx):
    return max_pool(InputTensor, window_attrs(locals()))[0]


def max_pooling_reference(InputTensor, *, DimensionCount, Strides, WindowSize, StartPadding,
                          EndPadding, ctx):
    return max_pool_reference(InputTensor, window_attrs(locals()))[0]


def max_pooling1(InputTensor, *, DimensionCount, Strides, WindowSize, StartPadding, EndPadding,
                 ctx):
    return max_pool(InputTensor, window_attrs(locals()))


def max_pooling1_reference(InputTensor, *, DimensionCount, Strides, WindowSize, StartPadding,
                           EndPadding, ctx):
    return max_pool_reference(InputTensor, window_attrs(locals()))


def max_pooling2(InputTensor, *, DimensionCount, Strides, WindowSize, StartPadding, EndPadding,
                 Dilations, ctx):
    return max_pool(InputTensor, window_attrs(locals(), Dilations=Dilations))


def max_pooling2_reference(InputTensor, *, DimensionCount, Strides, WindowSize, StartPadding,
                           EndPadding, Dilations, ctx):
    return max_pool_reference(InputTensor, window_attrs(locals(), Dilations=Dilations))


def _sizes(spec, check):
    return window_sizes(spec, check, (OUT, IDX) if IDX in spec.tensor else (OUT,))


def _types(spec):
    return {OUT: spec.tensor[IN].data_type, IDX: dtypes.UINT32}


f32, u32 = np.float32, np.uint32
X = f32([[[[1, 5, 2, 0], [3, 4, 8, 7], [6, 6, 1, 9], [0, 2, 3, 3]]]])
W2 = {"DimensionCount": 2, "Strides": (2, 2), "WindowSize": (2, 2), "StartPadding": (0, 0),
      "EndPadding": (0, 0)}
TIES = f32([[[[2, 2], [np.nan, 2]]]])


def _register(name, kernel, reference, examples):
    register(OperatorDef(f"DML_OPERATOR_{name}", kernel, reference, output_sizes=_sizes,
                         rules=(same_type(IN, OUT),), output_types=_types, examples=examples,
                         module=__name__))


_register("MAX_POOLING", max_pooling, max_pooling_reference, (
    Example({IN: X}, {OUT: f32([[[[5, 8], [6, 9]]]])}, W2, "2x2 windows, stride 2"),
    Example({IN: np.int8([[[[-128, -7], [-9, -100]]]])}, {OUT: np.int8([[[[-7]]]])}, W2,
            "INT8 (FL 3_0)"),
))
_register("MAX_POOLING1", max_pooling1, max_pooling1_reference, (
    Example({IN: X}, {OUT: f32([[[[5, 8], [6, 9]]]]), IDX: u32([[[[1, 6], [8, 11]]]])}, W2,
            "indices into the input as one array: 6 and 6 tie, the first (8) wins"),
    Example({IN: TIES}, {OUT: f32([[[[2]]]]), IDX: u32([[[[0]]]])}, W2,
            "equal values: the first; NaN never wins over a number"),
    Example({IN: f32([[[[1, 2]], [[3, 4]]]])}, {OUT: f32([[[[2]], [[4]]]]),
                                             IDX: np.uint64([[[[1]], [[3]]]])},
            {**W2, "Strides": (1, 1), "WindowSize": (1, 2)},
            "channel 1's index counts channel 0's elements; UINT64 indices (FL 5_0)"),
))
_register("MAX_POOLING2", max_pooling2, max_pooling2_reference, (
    Example({IN: X}, {OUT: f32([[[[6, 9], [8, 7]]]]), IDX: u32([[[[8, 11], [6, 7]]]])},
            {**W2, "Strides": (1, 1), "Dilations": (2, 2)},
            "Dilations 2: the window {1, 2, 6, 1} gives 6 (index 8), {5, 0, 6, 9} 9 (11)"),
    Example({IN: f32([[[[-5, -3, -4]]]])}, {OUT: f32([[[[-5, -3]]]]), IDX: u32([[[[0, 1]]]])},
            {**W2, "Strides": (1, 2), "WindowSize": (1, 2), "StartPadding": (0, 1),
             "Dilations": (1, 1)}, "a padding tap never wins, even over negative values"),
))

"""MAX_POOLING, MAX_POOLING1 (FL 2_0, optional OutputIndicesTensor) and MAX_POOLING2 (FL 2_1,
with Dilations): the largest element of each sliding window (geometry: ``_pooling``).

OutputIndicesTensor (UINT32, or UINT64 from FL 5_0) holds each maximum's index into
InputTensor read as one contiguous array (batch and channel included, row-major); of equal
values the first in the window's row-major order wins (the pages). Padding taps never win.
Where the pages are silent: NaN loses to every number, as HLSL's max ignores it (an all-NaN
window gives NaN and its first index); -0.0 and +0.0 are equal, so the first is kept; a
window of only padding is E_INVALIDARG. Values are copied bit for bit.
"""
import numpy as np

from .._core import dtypes
from .._core.registry import Example, OperatorDef, register, same_type
from ._max_pool import max_pool, max_pool_reference, max_values
from ._pooling import window_attrs, window_sizes

IN, OUT, IDX = "InputTensor", "OutputTensor", "OutputIndicesTensor"


def max_pooling(InputTensor, *, DimensionCount, Strides, WindowSize, StartPadding, EndPadding,
                ctx):
    return max_values(InputTensor, window_attrs(locals()))


def _indexed(x, a, ctx):
    """(maxima, indices), or the maxima alone when OutputIndicesTensor is not in the desc."""
    if ctx.outputs.get(IDX) is None:
        return max_values(x, a), None
    return max_pool(x, a)


def max_pooling_reference(InputTensor, *, DimensionCount, Strides, WindowSize, StartPadding,
                          EndPadding, ctx):
    return max_pool_reference(InputTensor, window_attrs(locals()))[0]


def max_pooling1(InputTensor, *, DimensionCount, Strides, WindowSize, StartPadding, EndPadding,
                 ctx):
    return _indexed(InputTensor, window_attrs(locals()), ctx)


def max_pooling1_reference(InputTensor, *, DimensionCount, Strides, WindowSize, StartPadding,
                           EndPadding, ctx):
    return max_pool_reference(InputTensor, window_attrs(locals()))


def max_pooling2(InputTensor, *, DimensionCount, Strides, WindowSize, StartPadding, EndPadding,
                 Dilations, ctx):
    return _indexed(InputTensor, window_attrs(locals(), Dilations=Dilations), ctx)


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

"""SLICE and SLICE1: copy a strided window out of a tensor.

- SLICE (FL 1_0): OutputTensor[o] = InputTensor[Offsets + Strides * o]; the slice's Sizes
  must equal OutputTensor.Sizes and every element read must be inside the input.
- SLICE1 (FL 2_1): an input window (InputWindowOffsets, InputWindowSizes) read with
  InputWindowStrides; a negative stride starts at the window's end (reversal). The window may
  not be empty or leave the input; 1 <= OutputSizes[i] <= 1 + (WindowSize[i] - 1) / |Stride[i]|.

The gradient is in ``slice_grad``, the window rules in ``_slices``. Values are copied bit
for bit. SLICE1 needs no shape rule beyond the bounds check: its
output Sizes may be any count of reachable elements, so descs built by dmlsim take the largest.
"""
import numpy as np

from .._core.registry import Example, OperatorDef, Sizes, register, same_type
from ._movement import dimension_count, from_bits, to_bits
from ._slices import largest, read_window, starts_of, window

IN, OUT = "InputTensor", "OutputTensor"
OFF, SIZ, STR = "InputWindowOffsets", "InputWindowSizes", "InputWindowStrides"


# ---- SLICE ----------------------------------------------------------------------------------

def slice_(InputTensor, *, Offsets, Sizes, Strides, ctx):
    return from_bits(read_window(to_bits(InputTensor), Offsets, Strides, Sizes),
                     InputTensor.dtype)


def slice_reference(InputTensor, *, Offsets, Sizes, Strides, ctx):
    x = np.asarray(InputTensor)
    return x[tuple(slice(o, o + st * (n - 1) + 1, st) for o, st, n in zip(Offsets, Strides, Sizes))]


def slice_sizes(spec, check):
    a = spec.attr
    spans = [st * (n - 1) + 1 for st, n in zip(a["Strides"], a["Sizes"])]
    window(spec, check, IN, a["Offsets"], spans, a["Strides"], [None] * len(spans))
    return {OUT: Sizes(a["Sizes"], "Sizes")}


# ---- SLICE1 ---------------------------------------------------------------------------------

def slice1(InputTensor, *, InputWindowOffsets, InputWindowSizes, InputWindowStrides, ctx):
    starts = starts_of(InputWindowOffsets, InputWindowSizes, InputWindowStrides)
    y = read_window(to_bits(InputTensor), starts, InputWindowStrides, ctx.outputs[OUT].sizes)
    return from_bits(y, InputTensor.dtype)


def slice1_reference(InputTensor, *, InputWindowOffsets, InputWindowSizes, InputWindowStrides,
                     ctx):
    x, out = np.asarray(InputTensor), ctx.outputs[OUT].sizes
    y = np.empty(out, x.dtype)
    for o in np.ndindex(*out):  # the page's pseudo-code, element by element
        src = [off + (s - 1 if st < 0 else 0) + st * c for off, s, st, c in
               zip(InputWindowOffsets, InputWindowSizes, InputWindowStrides, o)]
        y[o] = x[tuple(src)]
    return y


def slice1_sizes(spec, check):
    a, t = spec.attr, spec.tensor.get(OUT)
    want = list(t.sizes) if t is not None else largest(a[SIZ], a[STR])
    window(spec, check, IN, a[OFF], a[SIZ], a[STR], want)
    return {OUT: Sizes(want, "the input window")}


WINDOW = dimension_count(OFF, SIZ, STR)
f32 = np.float32
PAGE = f32(np.arange(1, 17).reshape(1, 1, 4, 4))

register(OperatorDef(
    "DML_OPERATOR_SLICE", slice_, slice_reference, output_sizes=slice_sizes,
    rules=(dimension_count("Offsets", "Sizes", "Strides"), same_type(IN, OUT)), examples=(
        Example({IN: PAGE}, {OUT: f32([[[[7, 8], [11, 12], [15, 16]]]])},
                {"Offsets": (0, 0, 1, 2), "Sizes": (1, 1, 3, 2), "Strides": (1, 1, 1, 1)},
                "the page's example 1: a contiguous slice"),
        Example({IN: PAGE}, {OUT: f32([[[[5, 8], [13, 16]]]])},
                {"Offsets": (0, 0, 1, 0), "Sizes": (1, 1, 2, 2), "Strides": (1, 1, 2, 3)},
                "the page's example 2: a strided slice"),
    ), module=__name__))
register(OperatorDef(
    "DML_OPERATOR_SLICE1", slice1, slice1_reference, output_sizes=slice1_sizes,
    rules=(WINDOW, same_type(IN, OUT)), examples=(
        Example({IN: PAGE}, {OUT: f32([[[[2, 4], [10, 12]]]])},
                {OFF: (0, 0, 0, 1), SIZ: (1, 1, 4, 3), STR: (1, 1, 2, 2)},
                "the page's example 1: positive strides"),
        Example({IN: PAGE}, {OUT: f32([[[[14, 16], [6, 8]]]])},
                {OFF: (0, 0, 0, 1), SIZ: (1, 1, 4, 3), STR: (1, 1, -2, 2)},
                "the page's example 2: a negative stride starts at the window's end"),
        Example({IN: np.array([1, -0.0, np.nan, 4], f32)},
                {OUT: np.array([4, np.nan, -0.0, 1], f32)},
                {OFF: (0,), SIZ: (4,), STR: (-1,)}, "1-D reversal (FL 3_0), bits kept"),
    ), module=__name__))

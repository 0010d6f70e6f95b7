"""SLICE, SLICE1 and SLICE_GRAD: copy a strided window out of a tensor, and back.

- SLICE (FL 1_0): OutputTensor[o] = InputTensor[Offsets + Strides * o]; the slice's Sizes
  must equal OutputTensor.Sizes and every element read must be inside the input.
- SLICE1 (FL 2_1): an input window (InputWindowOffsets, InputWindowSizes) read with
  InputWindowStrides; a negative stride starts at the window's end (reversal). The window may
  not be empty or leave the input; 1 <= OutputSizes[i] <= 1 + (WindowSize[i] - 1) / |Stride[i]|.
- SLICE_GRAD (FL 3_0): the gradient of SLICE1: OutputGradientTensor has the forward input's
  sizes, the sliced elements come from InputGradientTensor, all others are 0.

Strides of 0 are rejected for all three (SLICE1's page: "Strides may not be 0"; SLICE_GRAD
needs them non-zero; SLICE's strides are UINT and a 0 would read one element repeatedly,
which the page's bounds wording does not allow for). Values are copied bit for bit. SLICE1
and SLICE_GRAD need no shape rule beyond the bounds check: their output Sizes may be any
count of reachable elements, so descs built by dmlsim take the largest.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, Sizes, register, same_type
from ._movement import dimension_count, from_bits, take, to_bits

IN, OUT, DY, DX = "InputTensor", "OutputTensor", "InputGradientTensor", "OutputGradientTensor"
OFF, SIZ, STR = "InputWindowOffsets", "InputWindowSizes", "InputWindowStrides"


def _starts(offsets, sizes, strides):
    return [o + (s - 1 if st < 0 else 0) for o, s, st in zip(offsets, sizes, strides)]


def _indices(starts, strides, out_sizes):
    """Open-mesh index arrays of the elements a slice reads."""
    return np.ix_(*[np.arange(n) * st + s for s, st, n in zip(starts, strides, out_sizes)])


def _window(spec, check, in_field, offsets, sizes, strides, out_sizes):
    t = spec.tensor[in_field]
    for i, (o, s, st, n) in enumerate(zip(offsets, sizes, strides, out_sizes)):
        if st == 0:
            check.fail(f"the stride of dimension {i} is 0; strides may not be 0")
        if s == 0:
            check.fail(f"the window of dimension {i} is empty (size 0)")
        if o + s > t.sizes[i]:
            check.fail(f"the window of dimension {i} is [{o}, {o + s}), past {in_field}.Sizes[{i}] "
                       f"= {t.sizes[i]}; out-of-bounds reads are not permitted")
        if n is not None and not 1 <= n <= 1 + (s - 1) // abs(st):
            check.fail(f"dimension {i} copies {n} elements, but the window of size {s} with "
                       f"stride {st} holds at most {1 + (s - 1) // abs(st)}")


# ---- SLICE ----------------------------------------------------------------------------------

def slice_(InputTensor, *, Offsets, Sizes, Strides, ctx):
    idx = _indices(Offsets, Strides, Sizes)
    return from_bits(take(to_bits(InputTensor), idx), InputTensor.dtype)


def slice_reference(InputTensor, *, Offsets, Sizes, Strides, ctx):
    x = np.asarray(InputTensor)
    return x[tuple(slice(o, o + st * (n - 1) + 1, st) for o, st, n in zip(Offsets, Strides, Sizes))]


def slice_sizes(spec, check):
    a = spec.attr
    spans = [st * (n - 1) + 1 for st, n in zip(a["Strides"], a["Sizes"])]
    _window(spec, check, IN, a["Offsets"], spans, a["Strides"], [None] * len(spans))
    return {OUT: Sizes(a["Sizes"], "Sizes")}


# ---- SLICE1 ---------------------------------------------------------------------------------

def slice1(InputTensor, *, InputWindowOffsets, InputWindowSizes, InputWindowStrides, ctx):
    starts = _starts(InputWindowOffsets, InputWindowSizes, InputWindowStrides)
    idx = _indices(starts, InputWindowStrides, ctx.outputs[OUT].sizes)
    return from_bits(take(to_bits(InputTensor), idx), InputTensor.dtype)


def slice1_reference(InputTensor, *, InputWindowOffsets, InputWindowSizes, InputWindowStrides,
                     ctx):
    x, out = np.asarray(InputTensor), ctx.outputs[OUT].sizes
    y = np.empty(out, x.dtype)
    for o in np.ndindex(*out):  # the page's pseudo-code, element by element
        src = [off + (s - 1 if st < 0 else 0) + st * c for off, s, st, c in
               zip(InputWindowOffsets, InputWindowSizes, InputWindowStrides, o)]
        y[o] = x[tuple(src)]
    return y


def _largest(sizes, strides):
    return [1 + (s - 1) // abs(st) if st else 1 for s, st in zip(sizes, strides)]


def slice1_sizes(spec, check):
    a, t = spec.attr, spec.tensor.get(OUT)
    want = list(t.sizes) if t is not None else _largest(a[SIZ], a[STR])
    _window(spec, check, IN, a[OFF], a[SIZ], a[STR], want)
    return {OUT: Sizes(want, "the input window")}


# ---- SLICE_GRAD -----------------------------------------------------------------------------

def slice_grad(InputGradientTensor, *, InputWindowOffsets, InputWindowSizes, InputWindowStrides,
               ctx):
    dy = to_bits(InputGradientTensor)
    starts = _starts(InputWindowOffsets, InputWindowSizes, InputWindowStrides)
    idx = _indices(starts, InputWindowStrides, dy.shape)
    zero = jnp.zeros(ctx.outputs[DX].sizes, dy.dtype)
    return from_bits(zero.at[tuple(jnp.asarray(i) for i in idx)].set(dy), ctx.out_dtype(DX))


def slice_grad_reference(InputGradientTensor, *, InputWindowOffsets, InputWindowSizes,
                         InputWindowStrides, ctx):
    dy = np.asarray(InputGradientTensor)
    dx = np.zeros(ctx.outputs[DX].sizes, dy.dtype)
    for o in np.ndindex(*dy.shape):
        dst = [off + (s - 1 if st < 0 else 0) + st * c for off, s, st, c in
               zip(InputWindowOffsets, InputWindowSizes, InputWindowStrides, o)]
        dx[tuple(dst)] = dy[o]
    return dx


def slice_grad_sizes(spec, check):
    """OutputGradientTensor is the forward input: its Sizes come from the desc; the window
    must fit in it and InputGradientTensor must be a valid slice of it."""
    a, out = spec.attr, spec.tensor.get(DX)
    if out is None:
        check.fail("OutputGradientTensor's Sizes (the forward input's) cannot be inferred; "
                   "give its tensor desc")
    _window(spec, check, DX, a[OFF], a[SIZ], a[STR], spec.tensor[DY].sizes)
    return {DX: Sizes(out.sizes, "the forward input (OutputGradientTensor)")}


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
register(OperatorDef(
    "DML_OPERATOR_SLICE_GRAD", slice_grad, slice_grad_reference, output_sizes=slice_grad_sizes,
    rules=(dimension_count(OFF, SIZ, STR, tensors=(DY, DX)), same_type(DY, DX)),
    output_types=lambda spec: {DX: spec.tensor[DY].data_type}, examples=(
        Example({DY: f32([[1, 3], [9, 11]])}, {DX: f32([[1, 0, 3, 0], [0] * 4, [9, 0, 11, 0],
                                                       [0] * 4])},
                {OFF: (0, 0), SIZ: (4, 4), STR: (2, 2)},
                "the page's example: sliced elements back in place, others 0"),
        Example({DY: np.array([[7, 8]], np.int32)},
                {DX: np.array([[0, 0, 0], [8, 0, 7]], np.int32)},
                {OFF: (1, 0), SIZ: (1, 3), STR: (1, -2)}, "a negative stride"),
    ), module=__name__))

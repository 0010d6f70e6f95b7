"""SLICE_GRAD (FL 3_0): the gradient of a forward slice.

OutputGradientTensor has the forward input's sizes (its desc must be given: nothing else
says them); the elements the forward slice read come from InputGradientTensor, all others are 0.
InputGradientTensor's Sizes must be a valid forward output of that window (``_slices``).
Values are copied bit for bit.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, Sizes, register, same_type
from ._movement import dimension_count, from_bits, to_bits
from ._slices import place_window, starts_of, window

DY, DX = "InputGradientTensor", "OutputGradientTensor"
OFF, SIZ, STR = "InputWindowOffsets", "InputWindowSizes", "InputWindowStrides"


def slice_grad(InputGradientTensor, *, InputWindowOffsets, InputWindowSizes, InputWindowStrides,
               ctx):
    dy = to_bits(InputGradientTensor)
    starts = starts_of(InputWindowOffsets, InputWindowSizes, InputWindowStrides)
    dx = place_window(dy, starts, InputWindowStrides, ctx.outputs[DX].sizes,
                      jnp.zeros((), dy.dtype))
    return from_bits(dx, ctx.out_dtype(DX))


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
    window(spec, check, DX, a[OFF], a[SIZ], a[STR], spec.tensor[DY].sizes)
    return {DX: Sizes(out.sizes, "the forward input (OutputGradientTensor)")}


f32 = np.float32
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

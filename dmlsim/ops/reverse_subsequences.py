"""DML_OPERATOR_REVERSE_SUBSEQUENCES (FL 2_1): reverse the first SequenceLengths[...]
elements of each sequence along Axis, copying the rest.

SequenceLengthsTensor has InputTensor's Sizes except along Axis, where it is 1; a length
beyond the axis is clamped to it (the page); lengths 0 and 1 change nothing. OutputTensor
has InputTensor's Sizes and DataType; all the same DimensionCount. Bits are copied.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_type, sizes_of
from ._movement import axis_in_range, from_bits, to_bits

IN, LEN, OUT = "InputTensor", "SequenceLengthsTensor", "OutputTensor"


def reverse_subsequences(InputTensor, SequenceLengthsTensor, *, Axis, ctx):
    x = to_bits(InputTensor)
    n = x.shape[Axis]
    lengths = jnp.minimum(SequenceLengthsTensor, n).astype(jnp.int64)
    shape = [1] * x.ndim
    shape[Axis] = n
    pos = jnp.arange(n, dtype=jnp.int64).reshape(shape)
    src = jnp.where(pos < lengths, lengths - 1 - pos, pos)
    src = jnp.broadcast_to(src, x.shape)
    return from_bits(jnp.take_along_axis(x, src, axis=Axis), InputTensor.dtype)


def reverse_subsequences_reference(InputTensor, SequenceLengthsTensor, *, Axis, ctx):
    x, lengths = np.asarray(InputTensor), np.asarray(SequenceLengthsTensor)
    y = x.copy()
    for o in np.ndindex(*lengths.shape):
        n = min(int(lengths[o]), x.shape[Axis])
        line = list(o)
        line[Axis] = slice(0, n)
        y[tuple(line)] = x[tuple(line)][::-1] if n else x[tuple(line)]
    return y


def lengths_shape(spec, check):
    x, lens, axis = spec.tensor[IN], spec.tensor[LEN], spec.attr["Axis"]
    want = list(x.sizes)
    want[axis] = 1
    if list(lens.sizes) != want:
        check.fail(f"SequenceLengthsTensor.Sizes is {list(lens.sizes)}; it must be InputTensor's "
                   f"with 1 along Axis: {want}")


f32 = np.float32
X = f32([[[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]]])
register(OperatorDef(
    "DML_OPERATOR_REVERSE_SUBSEQUENCES", reverse_subsequences, reverse_subsequences_reference,
    output_sizes=sizes_of(IN, OUT), rules=(axis_in_range(), lengths_shape, same_type(IN, OUT)),
    examples=(
        Example({IN: X, LEN: np.uint32([[[[2], [4], [3]]]])},
                {OUT: f32([[[[2, 1, 3, 4], [8, 7, 6, 5], [11, 10, 9, 12]]]])}, {"Axis": 3},
                "the page's example 1"),
        Example({IN: X, LEN: np.uint32([[[[2, 3, 1, 0]]]])},
                {OUT: f32([[[[5, 10, 3, 4], [1, 6, 7, 8], [9, 2, 11, 12]]]])}, {"Axis": 2},
                "the page's example 2: lengths 1 and 0 change nothing"),
        Example({IN: np.int16([[1, 2, 3]]), LEN: np.uint32([[7]])},
                {OUT: np.int16([[3, 2, 1]])}, {"Axis": 1}, "a length past the axis is clamped"),
    ), module=__name__))

"""DML_OPERATOR_ONE_HOT (FL 2_0): one-hot sequences along Axis of the output.

IndicesTensor has OutputTensor's Sizes except along Axis, where its size is 1; each index
says where its sequence gets OnValue, every other element OffValue. ValuesTensor holds at
least two elements: element 0 is OffValue, element 1 (in row-major order, i.e. "the 1st
element along the fastest-changing dimension of size > 1") OnValue. Negative indices (signed
types, FL 3_0) count from the end of the sequence; an index outside the sequence is ignored
and the whole sequence is OffValue (the page's example 4). All three tensors have the same
DimensionCount; OutputTensor and ValuesTensor the same DataType. Values keep their bits.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, Sizes, register, same_type
from ._movement import axis_in_range, from_bits, to_bits

IDX, VAL, OUT = "IndicesTensor", "ValuesTensor", "OutputTensor"


def one_hot(IndicesTensor, ValuesTensor, *, Axis, ctx):
    out = ctx.outputs[OUT].sizes
    n = out[Axis]
    v = to_bits(ValuesTensor).reshape(-1)
    i = IndicesTensor.astype(jnp.int64) if not jnp.issubdtype(
        IndicesTensor.dtype, jnp.unsignedinteger) else jnp.minimum(IndicesTensor, n).astype(
        jnp.int64)
    i = jnp.where(i < 0, i + n, i)  # out of range stays out of range: never equal below
    shape = [1] * len(out)
    shape[Axis] = n
    hot = jnp.arange(n, dtype=jnp.int64).reshape(shape) == i
    return from_bits(jnp.where(hot, v[1], v[0]), ValuesTensor.dtype)


def one_hot_reference(IndicesTensor, ValuesTensor, *, Axis, ctx):
    out = ctx.outputs[OUT].sizes
    ind, vals = np.asarray(IndicesTensor), np.asarray(ValuesTensor).reshape(-1)
    off, on = vals[0], vals[1]
    y = np.empty(out, vals.dtype)
    for o in np.ndindex(*out):
        src = list(o)
        src[Axis] = 0
        i, n = int(ind[tuple(src)]), out[Axis]
        i = i + n if i < 0 else i
        y[o] = on if i == o[Axis] else off
    return y


def one_hot_sizes(spec, check):
    ind, out, axis = spec.tensor[IDX], spec.tensor.get(OUT), spec.attr["Axis"]
    if ind.sizes[axis] != 1:
        check.fail(f"IndicesTensor.Sizes[{axis}] (Axis) is {ind.sizes[axis]}; it must be 1")
    if spec.tensor[VAL].count < 2:
        check.fail("ValuesTensor must hold at least two elements (OffValue, OnValue)")
    if out is None:
        check.fail("OutputTensor's size along Axis (the sequence length) is the desc's; give "
                   "its tensor desc")
    want = list(ind.sizes)
    want[axis] = out.sizes[axis] if len(out.sizes) == len(want) else want[axis]
    return {OUT: Sizes(want, "IndicesTensor (and OutputTensor's sequence length)")}


f32, u32 = np.float32, np.uint32
register(OperatorDef(
    "DML_OPERATOR_ONE_HOT", one_hot, one_hot_reference, output_sizes=one_hot_sizes,
    rules=(axis_in_range(tensor=IDX), same_type(VAL, OUT)), examples=(
        Example({IDX: u32([[[[0], [3], [2]]]]), VAL: f32([[[[0, 1]]]])},
                {OUT: f32([[[[1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]]]])}, {"Axis": 3},
                "the page's example 1"),
        Example({IDX: u32([[[[0, 2, 1, 0]]]]), VAL: f32([[[[0, 1]]]])},
                {OUT: f32([[[[1, 0, 0, 1], [0, 0, 1, 0], [0, 1, 0, 0]]]])}, {"Axis": 2},
                "the page's example 2: another axis"),
        Example({IDX: u32([[[[0], [3], [2]]]]), VAL: f32([[[[4], [2], [9]]]])},
                {OUT: f32([[[[2, 4, 4, 4], [4, 4, 4, 2], [4, 4, 2, 4]]]])}, {"Axis": 3},
                "the page's example 3: OffValue 4, OnValue 2"),
        Example({IDX: np.int32([[[[-3], [100], [3]]]]), VAL: f32([[[[0, 1]]]])},
                {OUT: f32([[[[0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]]]])}, {"Axis": 3},
                "the page's example 4: negative and out-of-bounds indices"),
    ), module=__name__))

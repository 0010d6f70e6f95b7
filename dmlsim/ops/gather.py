"""DML_OPERATOR_GATHER: output[...] = input[..., indices[...], ...] along Axis.

IndicesTensor, InputTensor and OutputTensor have the same DimensionCount; the last
IndexDimensions sizes of IndicesTensor are its index array (the leading ones must be 1).
OutputTensor.Sizes = InputTensor.Sizes[0..Axis] ++ the index array's sizes ++
InputTensor.Sizes[Axis+1..], right-aligned to DimensionCount (leading 1s dropped or added;
original rank + IndexDimensions - 1 may not exceed DimensionCount). Negative and invalid
indices as ``_indexing`` says (clamped reads). Values are copied bit for bit.

The page's example 3 gives IndexDimensions 2 for a {1, 2} index array into a {3, 2} input,
which its own rule forbids (2 + 2 - 1 > 2); dmlsim's example uses IndexDimensions 1, which
gives the page's output.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, Sizes, register, same_type
from ._indexing import normalize, normalize_one, right_aligned
from ._movement import axis_in_range, from_bits, to_bits

IN, IDX, OUT = "InputTensor", "IndicesTensor", "OutputTensor"


def gather(InputTensor, IndicesTensor, *, Axis, IndexDimensions, ctx):
    x = to_bits(InputTensor)
    shape = IndicesTensor.shape[IndicesTensor.ndim - IndexDimensions:]
    idx = normalize(IndicesTensor.reshape(shape), x.shape[Axis])
    y = jnp.take(x, idx, axis=Axis, mode="clip")  # normalize() clamped them: no fill mask
    return from_bits(y.reshape(ctx.outputs[OUT].sizes), InputTensor.dtype)


def gather_reference(InputTensor, IndicesTensor, *, Axis, IndexDimensions, ctx):
    x, ind = np.asarray(InputTensor), np.asarray(IndicesTensor)
    ind = ind.reshape(ind.shape[ind.ndim - IndexDimensions:])
    full = x.shape[:Axis] + ind.shape + x.shape[Axis + 1:]
    y = np.empty(full, x.dtype)
    for o in np.ndindex(*full):
        i = normalize_one(ind[o[Axis:Axis + ind.ndim]], x.shape[Axis])
        y[o] = x[o[:Axis] + (i,) + o[Axis + ind.ndim:]]
    return y.reshape(ctx.outputs[OUT].sizes)


def gather_sizes(spec, check):
    x, ind = spec.tensor[IN], spec.tensor[IDX]
    axis, nd = spec.attr["Axis"], spec.attr["IndexDimensions"]
    if not 0 <= nd <= len(ind.sizes) or any(s != 1 for s in ind.sizes[:len(ind.sizes) - nd]):
        check.fail(f"IndexDimensions is {nd}; the IndicesTensor.Sizes {list(ind.sizes)} outside "
                   "the last IndexDimensions must be 1")
    full = x.sizes[:axis] + ind.sizes[len(ind.sizes) - nd:] + x.sizes[axis + 1:]
    return {OUT: Sizes(right_aligned(full, len(x.sizes), check, "the gathered output"),
                       "InputTensor, IndicesTensor and Axis")}


def same_dimension_count(spec, check):
    n = len(spec.tensor[IN].sizes)
    for f in (IDX, OUT):
        t = spec.tensor.get(f)
        if t is not None and len(t.sizes) != n:
            check.fail(f"{f}.DimensionCount is {len(t.sizes)} but InputTensor.DimensionCount is "
                       f"{n}; they must match")


f32, u32 = np.float32, np.uint32
register(OperatorDef(
    "DML_OPERATOR_GATHER", gather, gather_reference, output_sizes=gather_sizes,
    rules=(axis_in_range(), same_dimension_count, same_type(IN, OUT)),
    output_types=lambda spec: {OUT: spec.tensor[IN].data_type}, examples=(
        Example({IN: f32([11, 12, 13, 14]), IDX: u32([3, 1, 3, 0, 2])},
                {OUT: f32([14, 12, 14, 11, 13])}, {"Axis": 0, "IndexDimensions": 1},
                "the page's example 1: 1-D remapping"),
        Example({IN: f32([[1, 2], [3, 4], [5, 6]]), IDX: u32([[0, 1, 1, 2]])},
                {OUT: f32([[1, 2], [3, 4], [3, 4], [5, 6]])}, {"Axis": 0, "IndexDimensions": 1},
                "the page's example 2: concatenate rows"),
        Example({IN: f32([[1, 2], [3, 4], [5, 6]]), IDX: u32([[1, 0]])},
                {OUT: f32([[2, 1], [4, 3], [6, 5]])}, {"Axis": 1, "IndexDimensions": 1},
                "the page's example 3 (IndexDimensions 1): swap columns"),
        Example({IN: f32([[[1, 2, 3], [4, 5, 6], [7, 8, 9]]]), IDX: u32([[[0, 2]]])},
                {OUT: f32([[[1, 3]], [[4, 6]], [[7, 9]]])}, {"Axis": 2, "IndexDimensions": 2},
                "the page's example 4: nested indices"),
        Example({IN: f32([[[1, 2], [3, 4], [5, 6]]]), IDX: u32([[[0, 1], [1, 2]]])},
                {OUT: f32([[[1, 2], [3, 4]], [[3, 4], [5, 6]]])},
                {"Axis": 1, "IndexDimensions": 2}, "the page's example 5"),
        Example({IN: f32([10, np.nan, 30]), IDX: np.int64([-1, -3, 7, -9])},
                {OUT: f32([30, 10, 30, 10])}, {"Axis": 0, "IndexDimensions": 1},
                "negative indices count from the end; invalid ones are clamped"),
    ), module=__name__))

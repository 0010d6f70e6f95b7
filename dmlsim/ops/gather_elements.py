"""DML_OPERATOR_GATHER_ELEMENTS (FL 2_1): output[i, j, ...] = input[..., index[i, j, ...], ...]
with the index replacing the coordinate of Axis.

IndicesTensor has InputTensor's Sizes in every dimension but Axis; OutputTensor has
IndicesTensor's Sizes and InputTensor's DataType; all three the same DimensionCount.
Negative and invalid indices as ``_indexing`` says (clamped reads). Values are copied bit
for bit.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, Sizes, register, same_type
from ._indexing import normalize, normalize_one
from ._movement import axis_in_range, from_bits, to_bits

IN, IDX, OUT = "InputTensor", "IndicesTensor", "OutputTensor"


def gather_elements(InputTensor, IndicesTensor, *, Axis, ctx):
    x = to_bits(InputTensor)
    idx = normalize(IndicesTensor, x.shape[Axis])
    return from_bits(jnp.take_along_axis(x, idx, axis=Axis), InputTensor.dtype)


def gather_elements_reference(InputTensor, IndicesTensor, *, Axis, ctx):
    x, ind = np.asarray(InputTensor), np.asarray(IndicesTensor)
    y = np.empty(ind.shape, x.dtype)
    for o in np.ndindex(*ind.shape):
        src = list(o)
        src[Axis] = normalize_one(ind[o], x.shape[Axis])
        y[o] = x[tuple(src)]
    return y


def gather_elements_sizes(spec, check):
    x, ind, axis = spec.tensor[IN], spec.tensor[IDX], spec.attr["Axis"]
    if len(ind.sizes) != len(x.sizes):
        check.fail(f"IndicesTensor.DimensionCount is {len(ind.sizes)} but InputTensor's is "
                   f"{len(x.sizes)}; they must match")
    for d, (a, b) in enumerate(zip(ind.sizes, x.sizes)):
        if d != axis and a != b:
            check.fail(f"IndicesTensor.Sizes {list(ind.sizes)} must match InputTensor.Sizes "
                       f"{list(x.sizes)} in every dimension but Axis {axis}")
    return {OUT: Sizes(ind.sizes, "IndicesTensor")}


register(OperatorDef(
    "DML_OPERATOR_GATHER_ELEMENTS", gather_elements, gather_elements_reference,
    output_sizes=gather_elements_sizes, rules=(axis_in_range(), same_type(IN, OUT)),
    output_types=lambda spec: {OUT: spec.tensor[IN].data_type}, examples=(
        Example({IN: np.float32([[1, 2, 3], [4, 5, 6], [7, 8, 9]]),
                 IDX: np.uint32([[1, 2, 0], [2, 0, 0]])},
                {OUT: np.float32([[4, 8, 3], [7, 2, 3]])}, {"Axis": 0}, "the page's example"),
        Example({IN: np.int64([[1, 2**62]]), IDX: np.int32([[-1, 0, 5]])},
                {OUT: np.int64([[2**62, 1, 2**62]])}, {"Axis": 1},
                "negative from the end; 5 is clamped to the last element"),
    ), module=__name__))

"""DML_OPERATOR_SCATTER_ELEMENTS (DML_OPERATOR_SCATTER is the same value): output = input,
then output[..., index[i, j, ...], ...] = updates[i, j, ...] with the index replacing the
coordinate of Axis.

IndicesTensor and UpdatesTensor have the same Sizes, InputTensor's in every dimension but
Axis; OutputTensor has InputTensor's Sizes and DataType; all four the same DimensionCount.
Where two updates hit one element the pages give "no guarantee of which last write wins":
dmlsim lets the last in row-major order of UpdatesTensor win (``_indexing.last_wins``), on
every backend. Negative and invalid indices as ``_indexing`` says (clamped). Bits are copied.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import (Example, OperatorDef, register, same_sizes, same_type,
                              sizes_of)
from ._indexing import last_wins, normalize, normalize_one, reference_scatter
from ._movement import axis_in_range, from_bits, to_bits

IN, IDX, UPD, OUT = "InputTensor", "IndicesTensor", "UpdatesTensor", "OutputTensor"


def scatter_elements(InputTensor, IndicesTensor, UpdatesTensor, *, Axis, ctx):
    x, u = to_bits(InputTensor), to_bits(UpdatesTensor)
    coords = list(jnp.indices(IndicesTensor.shape))
    coords[Axis] = normalize(IndicesTensor, x.shape[Axis])
    target = jnp.ravel_multi_index(tuple(coords), x.shape, mode="clip").reshape(-1)
    win = last_wins(x.size, target, u.size)
    flat = jnp.where(win >= 0, u.reshape(-1)[jnp.maximum(win, 0)], x.reshape(-1))
    return from_bits(flat.reshape(x.shape), InputTensor.dtype)


def scatter_elements_reference(InputTensor, IndicesTensor, UpdatesTensor, *, Axis, ctx):
    x, ind, upd = (np.asarray(a) for a in (InputTensor, IndicesTensor, UpdatesTensor))
    writes = []
    for o in np.ndindex(*ind.shape):
        dst = list(o)
        dst[Axis] = normalize_one(ind[o], x.shape[Axis])
        writes.append((int(np.ravel_multi_index(dst, x.shape)), upd[o]))
    return reference_scatter(x, writes)


def indices_shape(spec, check):
    x, ind, axis = spec.tensor[IN], spec.tensor[IDX], spec.attr["Axis"]
    if len(ind.sizes) != len(x.sizes):
        check.fail(f"IndicesTensor.DimensionCount is {len(ind.sizes)} but InputTensor's is "
                   f"{len(x.sizes)}; they must match")
    for d, (a, b) in enumerate(zip(ind.sizes, x.sizes)):
        if d != axis and a > b:
            check.fail(f"IndicesTensor.Sizes {list(ind.sizes)} exceeds InputTensor.Sizes "
                       f"{list(x.sizes)} in dimension {d}, which is not Axis {axis}")


f32, u32 = np.float32, np.uint32
register(OperatorDef(
    "DML_OPERATOR_SCATTER_ELEMENTS", scatter_elements, scatter_elements_reference,
    output_sizes=sizes_of(IN, OUT),
    rules=(axis_in_range(), same_sizes(IDX, UPD), same_type(IN, UPD, OUT), indices_shape),
    examples=(
        Example({IN: f32([0, 1, 2, 3, 4]), IDX: u32([3, 1, 2, 0]), UPD: f32([5, 6, 7, 8])},
                {OUT: f32([8, 6, 7, 5, 4])}, {"Axis": 0},
                "the page's example 1, without its duplicate index"),
        Example({IN: f32(np.zeros((3, 3))), IDX: u32([[1, 0, 2], [0, 2, 1]]),
                 UPD: f32([[10, 11, 12], [20, 21, 22]])},
                {OUT: f32([[20, 11, 0], [10, 0, 22], [0, 21, 12]])}, {"Axis": 0},
                "the page's example 2 (its InputTensor is {3, 3})"),
        Example({IN: f32([0, 1, 2, 3, 4]), IDX: u32([3, 1, 3, 0]), UPD: f32([5, 6, 7, 8])},
                {OUT: f32([8, 6, 2, 7, 4])}, {"Axis": 0},
                "the page's example 1: index 3 twice, the later update (7) wins"),
        Example({IN: np.int64([1, 2, 3]), IDX: np.int32([-1, 9]), UPD: np.int64([-5, 2**62])},
                {OUT: np.int64([1, 2, 2**62])}, {"Axis": 0},
                "-1 is the last element; 9 is clamped to it too, and comes later"),
    ), module=__name__))

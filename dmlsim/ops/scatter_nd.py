"""DML_OPERATOR_SCATTER_ND (FL 2_1): output = input, then output[indices[...]] = updates[...]
with each index a tuple of coordinates into the input's leading dimensions.

The last InputDimensionCount / IndicesDimensionCount sizes are the meaningful ones (the
leading ones must be 1). With k the tuple size (the index array's last size), UpdatesTensor
has the index array's other sizes ++ the input's sizes after the first k, right-aligned
(the pages' formula, as for GATHER_ND, written as its example reads). OutputTensor has the
input's Sizes and DataType. Duplicates: the last update in row-major order wins (see
``scatter_elements``). Negative and invalid indices as ``_indexing`` says. Bits are copied.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_type, sizes_of
from ._indexing import last_wins, meaningful, normalize, normalize_one, reference_scatter, \
    right_aligned
from ._movement import from_bits, to_bits

IN, IDX, UPD, OUT = "InputTensor", "IndicesTensor", "UpdatesTensor", "OutputTensor"


def scatter_nd(InputTensor, IndicesTensor, UpdatesTensor, *, InputDimensionCount,
               IndicesDimensionCount, ctx):
    x = to_bits(InputTensor)
    xm = x.reshape(x.shape[x.ndim - InputDimensionCount:])
    ind = IndicesTensor.reshape(IndicesTensor.shape[IndicesTensor.ndim - IndicesDimensionCount:])
    k, mid, rest = ind.shape[-1], ind.shape[:-1], xm.shape[ind.shape[-1]:]
    coords = [normalize(ind[..., j], xm.shape[j]) for j in range(k)]
    coords = [c.reshape(mid + (1,) * len(rest)) for c in coords]
    coords += [jnp.arange(n).reshape((n,) + (1,) * (len(rest) - 1 - i))
               for i, n in enumerate(rest)]
    coords = jnp.broadcast_arrays(*coords)
    target = jnp.ravel_multi_index(tuple(coords), xm.shape, mode="clip").reshape(-1)
    u = to_bits(UpdatesTensor).reshape(-1)
    win = last_wins(xm.size, target, u.size)
    flat = jnp.where(win >= 0, u[jnp.maximum(win, 0)], xm.reshape(-1))
    return from_bits(flat.reshape(x.shape), InputTensor.dtype)


def scatter_nd_reference(InputTensor, IndicesTensor, UpdatesTensor, *, InputDimensionCount,
                         IndicesDimensionCount, ctx):
    x = np.asarray(InputTensor)
    xm = x.reshape(x.shape[x.ndim - InputDimensionCount:])
    ind = np.asarray(IndicesTensor)
    ind = ind.reshape(ind.shape[ind.ndim - IndicesDimensionCount:])
    k = ind.shape[-1]
    upd = np.asarray(UpdatesTensor).reshape(ind.shape[:-1] + xm.shape[k:])
    writes = []
    for o in np.ndindex(*upd.shape):
        head = o[:ind.ndim - 1]
        tup = [normalize_one(v, xm.shape[j]) for j, v in enumerate(ind[head])]
        writes.append((int(np.ravel_multi_index(tup + list(o[ind.ndim - 1:]), xm.shape)),
                       upd[o]))
    return reference_scatter(xm, writes).reshape(x.shape)


def updates_shape(spec, check):
    x, ind, upd = spec.tensor[IN], spec.tensor[IDX], spec.tensor[UPD]
    xm = meaningful(x.sizes, spec.attr["InputDimensionCount"], check, IN, "InputDimensionCount")
    im = meaningful(ind.sizes, spec.attr["IndicesDimensionCount"], check, IDX,
                    "IndicesDimensionCount")
    if im[-1] > len(xm):
        check.fail(f"index tuples of {im[-1]} coordinates exceed InputTensor's {len(xm)} "
                   "meaningful dimensions")
    want = right_aligned(im[:-1] + xm[im[-1]:], len(x.sizes), check, "UpdatesTensor")
    if list(upd.sizes) != want:
        check.fail(f"UpdatesTensor.Sizes is {list(upd.sizes)} but IndicesTensor and InputTensor "
                   f"give {want}")


f32 = np.float32
register(OperatorDef(
    "DML_OPERATOR_SCATTER_ND", scatter_nd, scatter_nd_reference, output_sizes=sizes_of(IN, OUT),
    rules=(same_type(IN, UPD, OUT), updates_shape), examples=(
        Example({IN: f32([1, 2, 3, 4, 5, 6, 7, 8]), IDX: np.uint32([[4], [3], [1], [7]]),
                 UPD: f32([9, 10, 11, 12])}, {OUT: f32([1, 11, 3, 10, 9, 6, 7, 12])},
                {"InputDimensionCount": 1, "IndicesDimensionCount": 2},
                "the page's example (its indices typed UINT32)"),
        Example({IN: f32(np.zeros((3, 2))), IDX: np.int32([[-1], [0], [2]]),
                 UPD: f32([[1, 2], [3, 4], [5, 6]])}, {OUT: f32([[3, 4], [0, 0], [5, 6]])},
                {"InputDimensionCount": 2, "IndicesDimensionCount": 2},
                "rows: -1 is row 2, then row 2 again: the later update wins"),
    ), module=__name__))

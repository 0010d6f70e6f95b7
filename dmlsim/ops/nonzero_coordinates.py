"""DML_OPERATOR_NONZERO_COORDINATES (FL 3_0): the coordinates of the non-zero elements.

OutputCountTensor (UINT32, every size 1) gets the count; OutputCoordinatesTensor ({1, 1, M,
N}, or {1, 1, 1, M, N} for 5-D, UINT32; from FL 4_0 any DimensionCount: the count's sizes all
1, the coordinates' {..., 1, M, N}, as ONNX Runtime's DML provider binds {1} and {M, rank}) gets
one row per non-zero element in ascending element order, M the input's element count and N at least its effective rank (DimensionCount
without leading 1s) and at most its DimensionCount: each row is the last N coordinates.
+0.0 and -0.0 are zero; NaN is not. The rows past the count are "undefined": dmlsim writes 0.
"""
import jax.numpy as jnp
import numpy as np

from .._core import dtypes
from .._core.registry import Example, OperatorDef, Sizes, register

IN, CNT, COORD = "InputTensor", "OutputCountTensor", "OutputCoordinatesTensor"
FL_4_0 = 0x4000  # from here the support tables take any ranks (1-8 count, 2-8 coordinates)


def nonzero_coordinates(InputTensor, *, ctx):
    x = InputTensor
    nz = (x != 0).reshape(-1)
    m, n = ctx.outputs[COORD].sizes[-2:]
    (flat,) = jnp.nonzero(nz, size=m, fill_value=-1)
    coords = jnp.stack(jnp.unravel_index(jnp.maximum(flat, 0), x.shape), axis=-1)[:, x.ndim - n:]
    coords = jnp.where((flat >= 0)[:, None], coords, 0).astype(jnp.uint32)
    count = jnp.sum(nz, dtype=jnp.uint32)
    return (count.reshape(ctx.outputs[CNT].sizes),
            coords.reshape(ctx.outputs[COORD].sizes))


def nonzero_coordinates_reference(InputTensor, *, ctx):
    x = np.asarray(InputTensor)
    m, n = ctx.outputs[COORD].sizes[-2:]
    rows = [o[x.ndim - n:] for o in np.ndindex(*x.shape) if x[o] != 0 or x[o] != x[o]]
    coords = np.zeros((m, n), np.uint32)
    coords[:len(rows)] = np.array(rows, np.uint32).reshape(len(rows), n)
    return (np.full(ctx.outputs[CNT].sizes, len(rows), np.uint32),
            coords.reshape(ctx.outputs[COORD].sizes))


def nonzero_sizes(spec, check):
    t, given = spec.tensor[IN], spec.tensor.get(COORD)
    sizes = list(t.sizes)
    rank = len(sizes)
    while sizes and sizes[0] == 1:
        sizes.pop(0)
    n = given.sizes[-1] if given is not None else max(len(sizes), 1)
    if not len(sizes) <= n <= rank:
        check.fail(f"OutputCoordinatesTensor's last size N is {n}; it must be between the "
                   f"input's effective rank {len(sizes)} and its DimensionCount {rank}")
    if check.level >= FL_4_0:  # the tables decouple the ranks (ORT binds {1} and {M, rank})
        cnt = spec.tensor.get(CNT)
        count = list(cnt.sizes) if cnt is not None and set(cnt.sizes) == {1} else [1] * rank
        lead = [1] * (len(given.sizes) - 2) if given is not None else [1] * (rank - 2)
        return {CNT: Sizes(count, "sizes all 1 (any DimensionCount from FL 4_0)"),
                COORD: Sizes(lead + [t.count, n], "InputTensor (M elements) and N, after "
                             "leading 1s (any DimensionCount 2-8 from FL 4_0)")}
    lead = [1] * (rank - 2)
    return {CNT: Sizes([1] * rank, "InputTensor's DimensionCount"),
            COORD: Sizes(lead + [t.count, n], "InputTensor (M elements) and N")}


register(OperatorDef(
    "DML_OPERATOR_NONZERO_COORDINATES", nonzero_coordinates, nonzero_coordinates_reference,
    output_sizes=nonzero_sizes, output_types=lambda spec: {CNT: dtypes.UINT32,
                                                           COORD: dtypes.UINT32},
    examples=(
        Example({IN: np.float32([[[[1, 0, 0, 2], [-0.0, 3.5, 0, -5.2]]]])},
                {CNT: np.uint32([[[[4]]]]),
                 COORD: np.uint32([[[[0, 0, 0], [0, 0, 3], [0, 1, 1], [0, 1, 3], [0, 0, 0],
                                     [0, 0, 0], [0, 0, 0], [0, 0, 0]]]])},
                note="the page's example (N = 3): -0.0 is zero; the undefined rows are 0"),
        Example({IN: np.int8([[[[0, -1], [np.int8(7), 0]]]])},
                {CNT: np.uint32([[[[2]]]]), COORD: np.uint32([[[[0, 1], [1, 0], [0, 0], [0, 0]]]])},
                note="N = 2, the effective rank"),
    ), module=__name__))

"""GATHER_ND and GATHER_ND1: output[batch, ...] = input[batch, indices[batch, ...], ...],
each index a tuple of coordinates into the input's leading (non-batch) dimensions.

The last InputDimensionCount / IndicesDimensionCount sizes are the meaningful ones (the
leading ones must be 1). The index array's last size k is the tuple size. OutputTensor's
Sizes are the batch sizes ++ the index array's other sizes ++ the input's sizes after the
batch and the k indexed dimensions, right-aligned with leading 1s (ONNX GatherND). GATHER_ND
has no batch dimensions; GATHER_ND1 (FL 3_0) has BatchDimensionCount of them, shared by
input and indices. The pages' formula for the trailing input sizes starts at
DimensionCount - k; their example (and ONNX) start after the indexed dimensions, which
dmlsim follows. Negative and invalid indices as ``_indexing`` says. Bits are copied.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, Sizes, register, same_type
from ._indexing import meaningful, normalize, normalize_one, right_aligned
from ._movement import from_bits, to_bits

IN, IDX, OUT = "InputTensor", "IndicesTensor", "OutputTensor"


def _gather(x, ind, in_dims, idx_dims, b, out_sizes):
    u = to_bits(x)
    u = u.reshape(u.shape[u.ndim - in_dims:])
    ind = ind.reshape(ind.shape[ind.ndim - idx_dims:])
    k, mid = ind.shape[-1], ind.shape[b:-1]
    grids = [jnp.arange(n).reshape((n,) + (1,) * (b - 1 - i + len(mid)))
             for i, n in enumerate(u.shape[:b])]
    coords = [normalize(ind[..., j], u.shape[b + j]) for j in range(k)]
    return from_bits(u[tuple(grids + coords)].reshape(out_sizes), x.dtype)


def _reference(x, ind, in_dims, idx_dims, b, out_sizes):
    x, ind = np.asarray(x), np.asarray(ind)
    x = x.reshape(x.shape[x.ndim - in_dims:])
    ind = ind.reshape(ind.shape[ind.ndim - idx_dims:])
    k = ind.shape[-1]
    full = ind.shape[:-1] + x.shape[b + k:]
    y = np.empty(full, x.dtype)
    for o in np.ndindex(*full):
        head = o[:ind.ndim - 1]
        tup = [normalize_one(v, x.shape[b + j]) for j, v in enumerate(ind[head])]
        y[o] = x[head[:b] + tuple(tup) + o[ind.ndim - 1:]]
    return y.reshape(out_sizes)


def _sizes(spec, check, b):
    x, ind = spec.tensor[IN], spec.tensor[IDX]
    xm = meaningful(x.sizes, spec.attr["InputDimensionCount"], check, IN, "InputDimensionCount")
    im = meaningful(ind.sizes, spec.attr["IndicesDimensionCount"], check, IDX,
                    "IndicesDimensionCount")
    k = im[-1]
    if not 0 <= b < min(len(xm), len(im)):
        check.fail(f"BatchDimensionCount is {b}; it must be below the meaningful dimension "
                   f"counts {len(xm)} and {len(im)}")
    if xm[:b] != im[:b]:
        check.fail(f"the batch sizes differ: InputTensor {list(xm[:b])}, IndicesTensor "
                   f"{list(im[:b])}")
    if b + k > len(xm):
        check.fail(f"index tuples of {k} coordinates exceed InputTensor's {len(xm) - b} "
                   "non-batch meaningful dimensions")
    full = im[:-1] + xm[b + k:]
    return {OUT: Sizes(right_aligned(full, len(x.sizes), check, "the gathered output"),
                       "InputTensor and IndicesTensor")}


def gather_nd(InputTensor, IndicesTensor, *, InputDimensionCount, IndicesDimensionCount, ctx):
    return _gather(InputTensor, IndicesTensor, InputDimensionCount, IndicesDimensionCount, 0,
                   ctx.outputs[OUT].sizes)


def gather_nd_reference(InputTensor, IndicesTensor, *, InputDimensionCount,
                        IndicesDimensionCount, ctx):
    return _reference(InputTensor, IndicesTensor, InputDimensionCount, IndicesDimensionCount,
                      0, ctx.outputs[OUT].sizes)


def gather_nd1(InputTensor, IndicesTensor, *, InputDimensionCount, IndicesDimensionCount,
               BatchDimensionCount, ctx):
    return _gather(InputTensor, IndicesTensor, InputDimensionCount, IndicesDimensionCount,
                   BatchDimensionCount, ctx.outputs[OUT].sizes)


def gather_nd1_reference(InputTensor, IndicesTensor, *, InputDimensionCount,
                         IndicesDimensionCount, BatchDimensionCount, ctx):
    return _reference(InputTensor, IndicesTensor, InputDimensionCount, IndicesDimensionCount,
                      BatchDimensionCount, ctx.outputs[OUT].sizes)


f32, u32 = np.float32, np.uint32
EX1 = Example({IN: f32([[0, 1], [2, 3]]), IDX: u32([[1], [0]])}, {OUT: f32([[2, 3], [0, 1]])},
              {"InputDimensionCount": 2, "IndicesDimensionCount": 2},
              "the page's example 1: 1-D remapping")
RULES = (same_type(IN, OUT),)
OUT_TYPE = {"output_types": lambda spec: {OUT: spec.tensor[IN].data_type}}
register(OperatorDef(
    "DML_OPERATOR_GATHER_ND", gather_nd, gather_nd_reference,
    output_sizes=lambda spec, check: _sizes(spec, check, 0), rules=RULES, **OUT_TYPE, examples=(
        EX1,
        Example({IN: f32(np.arange(8).reshape(1, 2, 2, 2)), IDX: u32([[[[0, 1], [1, 0]]]])},
                {OUT: f32([[[[2, 3], [4, 5]]]])},
                {"InputDimensionCount": 3, "IndicesDimensionCount": 2},
                "the page's example 2: 2-D remapping"),
        Example({IN: np.int8([[1, 2], [3, 4]]), IDX: np.int64([[-1, -2], [0, 9]])},
                {OUT: np.int8([[3, 2]])},
                {"InputDimensionCount": 2, "IndicesDimensionCount": 2},
                "2-coordinate tuples: (-1, -2) is (1, 0); (0, 9) is clamped to (0, 1)"),
    ), module=__name__))
register(OperatorDef(
    "DML_OPERATOR_GATHER_ND1", gather_nd1, gather_nd1_reference,
    output_sizes=lambda spec, check: _sizes(spec, check, spec.attr["BatchDimensionCount"]),
    rules=RULES, **OUT_TYPE, examples=(
        Example(EX1.inputs, EX1.outputs, {**EX1.attrs, "BatchDimensionCount": 0}, EX1.note),
        Example({IN: f32(np.arange(12).reshape(1, 3, 2, 2)),
                 IDX: u32([[[[0, 0], [1, 1]], [[1, 1], [0, 0]], [[0, 1], [1, 0]]]])},
                {OUT: f32([[[[0, 3], [7, 4], [9, 10]]]])},
                {"InputDimensionCount": 3, "IndicesDimensionCount": 3,
                 "BatchDimensionCount": 1}, "the page's example 2: one batch dimension"),
    ), module=__name__))

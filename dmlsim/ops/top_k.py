"""TOP_K (FL 2_0) and TOP_K1 (FL 2_1): the K largest (or smallest) elements of each
sequence along Axis, with their indices.

OutputValueTensor and OutputIndexTensor have the input's sizes with Sizes[Axis] = K. TOP_K,
and TOP_K1 with AxisDirection DECREASING, give the K largest in decreasing order; TOP_K1 with
INCREASING gives the K smallest in increasing order. Equal values keep ascending element
order whatever the direction (the pages). K must be greater than 0 and less than the
sequence length (the pages say "less than", so K equal to the length is rejected). Where the
pages are silent: NaN is larger than every number and -0.0 ties +0.0 (``_ordering``), and
values are copied bit for bit. OutputIndexTensor is UINT32 (or UINT64 from FL 5_0).
"""
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core import dtypes
from .._core.registry import Example, OperatorDef, Sizes, register, same_type
from ._movement import axis_in_range, from_bits, to_bits
from ._ordering import DECREASING, INCREASING, direction_rule, reference_key, sort_key

IN, VAL, IDX = "InputTensor", "OutputValueTensor", "OutputIndexTensor"


def top_k(x, axis, k, largest):
    """(values, int64 indices) of the ``k`` largest/smallest along ``axis`` (JAX)."""
    seq = jnp.moveaxis(x, axis, -1)
    key = sort_key(seq)
    order = lax.broadcasted_iota(jnp.int64, seq.shape, seq.ndim - 1)
    _, idx = lax.sort((~key if largest else key, order), dimension=seq.ndim - 1,
                      is_stable=True, num_keys=1)  # stable: ties keep ascending index
    idx = idx[..., :k]
    vals = from_bits(jnp.take_along_axis(to_bits(seq), idx, axis=-1), x.dtype)
    return jnp.moveaxis(vals, -1, axis), jnp.moveaxis(idx, -1, axis)


def top_k_reference(x, axis, k, largest):
    """The same over Python tuples: sorted by (order key, index)."""
    x = np.asarray(x)
    seq = np.moveaxis(x, axis, -1)
    rows = seq.reshape(-1, seq.shape[-1])
    idx = np.empty((rows.shape[0], k), np.int64)
    for r, row in enumerate(rows):
        keys = [reference_key(v) for v in row]
        flip = -1 if largest else 1
        ranked = sorted(range(len(row)), key=lambda i: (flip * keys[i][0], flip * keys[i][1], i))
        idx[r] = ranked[:k]
    vals = np.take_along_axis(rows, idx, axis=-1)
    shape = seq.shape[:-1] + (k,)
    return (np.moveaxis(vals.reshape(shape), -1, axis),
            np.moveaxis(idx.reshape(shape), -1, axis))


def top_k_sizes(spec, check):
    axis_in_range()(spec, check)
    t, a = spec.tensor[IN], spec.attr
    n = t.sizes[a["Axis"]]
    if not 0 < a["K"] < n:
        check.fail(f"K is {a['K']}; it must be greater than 0 and less than InputTensor.Sizes"
                   f"[{a['Axis']}] = {n}")
    sizes = [a["K"] if d == a["Axis"] else s for d, s in enumerate(t.sizes)]
    return {VAL: Sizes(sizes, "InputTensor, Axis and K"),
            IDX: Sizes(sizes, "InputTensor, Axis and K")}


def _types(spec):
    return {VAL: spec.tensor[IN].data_type, IDX: dtypes.UINT32}


def _register(name, kernel, reference, rules, examples):
    register(OperatorDef(f"DML_OPERATOR_{name}", kernel, reference, output_sizes=top_k_sizes,
                         rules=(same_type(IN, VAL),) + rules, output_types=_types,
                         examples=examples, module=__name__))


def _k(InputTensor, *, Axis, K, ctx):
    return top_k(InputTensor, Axis, K, True)


def _k_ref(InputTensor, *, Axis, K, ctx):
    return top_k_reference(InputTensor, Axis, K, True)


def _k1(InputTensor, *, Axis, K, AxisDirection, ctx):
    return top_k(InputTensor, Axis, K, AxisDirection == DECREASING)


def _k1_ref(InputTensor, *, Axis, K, AxisDirection, ctx):
    return top_k_reference(InputTensor, Axis, K, AxisDirection == DECREASING)


X = np.float32([[[[0, 1, 10, 11], [3, 2, 9, 8], [4, 5, 6, 7]]]])
TIED = np.float32([[[[1, 2, 2, 3], [3, 4, 5, 5], [6, 6, 6, 6]]]])
u32, f32 = np.uint32, np.float32
PAGE = (
    Example({IN: X}, {VAL: f32([[[[11, 10], [9, 8], [7, 6]]]]),
                      IDX: u32([[[[3, 2], [2, 3], [3, 2]]]])}, {"Axis": 3, "K": 2},
            "the pages' example 1"),
    Example({IN: X}, {VAL: f32([[[[4, 5, 10, 11], [3, 2, 9, 8]]]]),
                      IDX: u32([[[[2, 2, 0, 0], [1, 1, 1, 1]]]])}, {"Axis": 2, "K": 2},
            "the pages' example 2: a different axis"),
    Example({IN: TIED}, {VAL: f32([[[[3, 2, 2], [5, 5, 4], [6, 6, 6]]]]),
                         IDX: u32([[[[3, 1, 2], [2, 3, 1], [0, 1, 2]]]])}, {"Axis": 3, "K": 3},
            "the pages' example 3: ties in ascending index order"),
)
_register("TOP_K", _k, _k_ref, (), PAGE + (
    Example({IN: f32([1, np.nan, 3, -np.inf])}, {VAL: f32([np.nan, 3]), IDX: u32([1, 2])},
            {"Axis": 0, "K": 2}, "NaN is the largest"),
    Example({IN: np.int8([-128, 127, 0, 127])}, {VAL: np.int8([127, 127, 0]),
                                                 IDX: np.uint64([1, 3, 2])},
            {"Axis": 0, "K": 3}, "INT8 values and a UINT64 index tensor (FL 5_0)"),
))
_register("TOP_K1", _k1, _k1_ref, (direction_rule,), tuple(
    Example(e.inputs, e.outputs, {**e.attrs, "AxisDirection": DECREASING}, e.note)
    for e in PAGE) + (
    Example({IN: TIED}, {VAL: f32([[[[1, 2, 2], [3, 4, 5], [6, 6, 6]]]]),
                         IDX: u32([[[[0, 1, 2], [0, 1, 2], [0, 1, 2]]]])},
            {"Axis": 3, "K": 3, "AxisDirection": INCREASING},
            "TOP_K1's example 4: INCREASING gives the smallest, ascending"),
    Example({IN: f32([0.0, -0.0, np.nan, -1])}, {VAL: f32([-1, 0.0, -0.0]),
                                                 IDX: u32([3, 0, 1])},
            {"Axis": 0, "K": 3, "AxisDirection": INCREASING}, "-0.0 ties +0.0; NaN last"),
))

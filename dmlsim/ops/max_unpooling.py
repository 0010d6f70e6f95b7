"""DML_OPERATOR_MAX_UNPOOLING (FL 2_0): the inverse of a max pooling. OutputTensor starts as
zeros; each InputTensor element is written at IndicesTensor's index into OutputTensor read
as one contiguous array (the page). InputTensor and IndicesTensor have the same Sizes;
OutputTensor's Sizes are the desc's (the pooled-from input's), with the same batch and
channel counts.

Where the page is silent: an index past the end of OutputTensor is ignored (nothing is
written); of several elements with one index the last in row-major order wins (as dmlsim's
scatters do). Values are copied bit for bit.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, Sizes, register, same_sizes, same_type
from ._indexing import last_wins
from ._movement import from_bits, to_bits

IN, IDX, OUT = "InputTensor", "IndicesTensor", "OutputTensor"


def max_unpooling(InputTensor, IndicesTensor, *, ctx):
    out = ctx.outputs[OUT]
    n = int(np.prod(out.sizes))
    u = to_bits(InputTensor).reshape(-1)
    raw = IndicesTensor.reshape(-1)  # unsigned: compare before any signed conversion
    idx = jnp.where(raw < jnp.asarray(n, raw.dtype), raw.astype(jnp.int64), n)  # n: dropped
    win = last_wins(n, idx, u.shape[0])  # per output element, the last input writing it
    y = jnp.where(win >= 0, u[jnp.maximum(win, 0)], jnp.zeros((), u.dtype))
    return from_bits(y.reshape(out.sizes), InputTensor.dtype)


def max_unpooling_reference(InputTensor, IndicesTensor, *, ctx):
    x, ind = np.asarray(InputTensor).reshape(-1), np.asarray(IndicesTensor).reshape(-1)
    out = ctx.outputs[OUT]
    y = np.zeros(int(np.prod(out.sizes)), x.dtype)
    for v, i in zip(x, ind):
        if int(i) < y.size:
            y[int(i)] = v
    return y.reshape(out.sizes)


def unpooling_sizes(spec, check):
    x, out = spec.tensor[IN], spec.tensor.get(OUT)
    if out is None:
        check.fail("OutputTensor's Sizes (the pooled-from tensor's) are the desc's; give its "
                   "tensor desc")
    if out.sizes[:2] != x.sizes[:2]:
        check.fail(f"OutputTensor.Sizes {list(out.sizes)} must have InputTensor's batch and "
                   f"channel counts {list(x.sizes[:2])}")
    return {OUT: Sizes(out.sizes, "OutputTensor")}


f32, u32 = np.float32, np.uint32
register(OperatorDef(
    "DML_OPERATOR_MAX_UNPOOLING", max_unpooling, max_unpooling_reference,
    output_sizes=unpooling_sizes, rules=(same_sizes(IN, IDX), same_type(IN, OUT)),
    output_types=lambda spec: {OUT: spec.tensor[IN].data_type}, examples=(
        Example({IN: f32([[[[5, 8], [6, 9]]]]), IDX: u32([[[[1, 6], [8, 11]]]])},
                {OUT: f32([[[[0, 5, 0, 0], [0, 0, 8, 0], [6, 0, 0, 9], [0, 0, 0, 0]]]])}, {},
                "MAX_POOLING1's example inverted: the maxima back in place, zeros elsewhere"),
        Example({IN: np.int8([[[[1, 2, 3]]]]), IDX: np.uint64([[[[2, 2, 99]]]])},
                {OUT: np.int8([[[[0, 0, 2, 0]]]])}, {},
                "index 2 twice: the last wins; 99 is past the end and ignored"),
    ), module=__name__))

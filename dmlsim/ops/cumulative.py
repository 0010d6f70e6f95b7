"""CUMULATIVE_SUMMATION (FL 2_1) and CUMULATIVE_PRODUCT (FL 3_1): the running sum or product
along Axis.

OutputTensor[..., i, ...] is the sum (product) of the elements at or before i along Axis,
"before" meaning lower indices for AxisDirection INCREASING and higher for DECREASING. With
HasExclusiveSum (HasExclusiveProduct) the element itself is left out: the first output is
0 (1) and the last total is written nowhere. OutputTensor has the input's sizes and type
and may alias it (in-place). Where the pages are silent: integers wrap in the tensor type;
floats accumulate in float32 (FLOAT16 too, rounded once) in any association, within
``error_bound`` of the float64 reference: (n + 2) u times the running sum of |x| for sums,
(n + 1) u times the running product of |x| for products, n the number of terms.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_sizes, same_type, sizes_of
from ._movement import axis_in_range
from ._ordering import DECREASING, INCREASING, direction_rule

IN, OUT = "InputTensor", "OutputTensor"


def scan(x, axis, direction, exclusive, fn, identity):
    """The running ``fn`` (a cumulative NumPy/JAX function) of ``x`` along ``axis``."""
    xp = jnp if hasattr(x, "at") else np
    if direction == DECREASING:
        x = xp.flip(x, axis)
    if exclusive:
        first = xp.full_like(xp.take(x, xp.arange(1), axis=axis), identity)
        x = xp.concatenate([first, xp.take(x, xp.arange(x.shape[axis] - 1), axis=axis)], axis)
    y = fn(x, axis=axis, dtype=x.dtype)
    return xp.flip(y, axis) if direction == DECREASING else y


def _exact(x):
    """The reference's values: Python ints (wrapped afterwards) or float64."""
    return x.astype(object) if x.dtype.kind in "iu" else x.astype(np.float64)


def _wrapped(y, dtype):
    if dtype.kind not in "iu":
        return y
    bits = 8 * dtype.itemsize
    flat = [int(v) % (1 << bits) for v in np.asarray(y).reshape(-1)]
    return np.array(flat, np.uint64).astype(dtype).reshape(np.shape(y))


def _bound(fn, slack):
    def error_bound(inputs, spec, dtype):
        x, a = np.abs(np.asarray(inputs[IN], np.float64)), spec.attr
        n = x.shape[a["Axis"]]
        return (n + slack) * 2.0 ** -24 * scan(x, a["Axis"], a["AxisDirection"], False, fn, 0)
    return error_bound


def _reference(x, axis, direction, exclusive, fn, identity):
    x = np.asarray(x)
    return _wrapped(scan(_exact(x), axis, direction, exclusive, fn, identity), x.dtype)


def cumulative_summation(InputTensor, *, Axis, AxisDirection, HasExclusiveSum, ctx):
    return scan(ctx.upcast(InputTensor), Axis, AxisDirection, HasExclusiveSum, jnp.cumsum, 0)


def cumulative_summation_reference(InputTensor, *, Axis, AxisDirection, HasExclusiveSum, ctx):
    return _reference(InputTensor, Axis, AxisDirection, HasExclusiveSum, np.cumsum, 0)


def cumulative_product(InputTensor, *, Axis, AxisDirection, HasExclusiveProduct, ctx):
    return scan(ctx.upcast(InputTensor), Axis, AxisDirection, HasExclusiveProduct, jnp.cumprod,
                1)


def cumulative_product_reference(InputTensor, *, Axis, AxisDirection, HasExclusiveProduct,
                                 ctx):
    return _reference(InputTensor, Axis, AxisDirection, HasExclusiveProduct, np.cumprod, 1)


def _register(name, kernel, reference, bound, examples):
    register(OperatorDef(
        f"DML_OPERATOR_{name}", kernel, reference, output_sizes=sizes_of(IN, OUT),
        rules=(axis_in_range(), direction_rule, same_sizes(IN, OUT), same_type(IN, OUT)),
        error_bound=bound, examples=examples, module=__name__))


X = np.float32([[[[2, 1, 3, 5], [3, 8, 7, 3], [9, 6, 2, 4]]]])
f32 = np.float32


def _page(flag, rows):
    """The pages' four examples: (Axis, AxisDirection, exclusive, expected)."""
    return tuple(Example({IN: X}, {OUT: f32(out)}, {"Axis": ax, "AxisDirection": d, flag: ex},
                         f"the page's example {i + 1}")
                 for i, (ax, d, ex, out) in enumerate(rows))


_register("CUMULATIVE_SUMMATION", cumulative_summation, cumulative_summation_reference,
          _bound(np.cumsum, 2), _page("HasExclusiveSum", (
    (3, INCREASING, 0, [[[[2, 3, 6, 11], [3, 11, 18, 21], [9, 15, 17, 21]]]]),
    (3, INCREASING, 1, [[[[0, 2, 3, 6], [0, 3, 11, 18], [0, 9, 15, 17]]]]),
    (3, DECREASING, 0, [[[[11, 9, 8, 5], [21, 18, 10, 3], [21, 12, 6, 4]]]]),
    (2, INCREASING, 0, [[[[2, 1, 3, 5], [5, 9, 10, 8], [14, 15, 12, 12]]]]),
)) + (
    Example({IN: np.int32([2**31 - 1, 1, 1])}, {OUT: np.int32([2**31 - 1, -2**31, -2**31 + 1])},
            {"Axis": 0, "AxisDirection": INCREASING, "HasExclusiveSum": 0}, "INT32 wraps"),
    Example({IN: np.uint32([5, 1, 2])}, {OUT: np.uint32([3, 2, 0])},
            {"Axis": 0, "AxisDirection": DECREASING, "HasExclusiveSum": 1},
            "exclusive and decreasing: 0 at the end"),
))
_register("CUMULATIVE_PRODUCT", cumulative_product, cumulative_product_reference,
          _bound(np.cumprod, 1), _page("HasExclusiveProduct", (
        (3, INCREASING, 0, [[[[2, 2, 6, 30], [3, 24, 168, 504], [9, 54, 108, 432]]]]),
        (3, INCREASING, 1, [[[[1, 2, 2, 6], [1, 3, 24, 168], [1, 9, 54, 108]]]]),
        (3, DECREASING, 0, [[[[30, 15, 15, 5], [504, 168, 21, 3], [432, 48, 8, 4]]]]),
        (2, INCREASING, 0, [[[[2, 1, 3, 5], [6, 8, 21, 15], [54, 48, 42, 60]]]]),
    )) + (
    Example({IN: np.uint32([2**16, 2**16, 3])}, {OUT: np.uint32([2**16, 0, 0])},
            {"Axis": 0, "AxisDirection": INCREASING, "HasExclusiveProduct": 0}, "UINT32 wraps"),
))

"""DML_OPERATOR_REDUCE: one reduction function over Axes, keeping the DimensionCount.

Functions (DML_REDUCE_FUNCTION) and the support table each selects (the spec's
``condition``): ARGMAX, ARGMIN (integer output; as the ARGMAX/ARGMIN operators with
AxisDirection INCREASING: the first extreme, NaN the largest, row-major over several axes);
AVERAGE, L1 (|x| summed), L2 (sqrt of the sum of squares), LOG_SUM (ln of the sum),
LOG_SUM_EXP (ln sum exp, shifted by the maximum: the same function without overflow), MAX,
MIN, MULTIPLY, SUM, SUM_SQUARE. Output: the reduced axes 1, the input's DataType (ARGMAX/MIN: int).

Where the page is silent: MAX and MIN ignore NaN as HLSL's max/min do (ELEMENT_WISE_MAX's
choice; all-NaN gives NaN) and +0.0 > -0.0; integer SUM, MULTIPLY, L1 and SUM_SQUARE wrap in
the tensor type (|INT_MIN| wraps to INT_MIN). Floats accumulate in float32 (FLOAT16 too,
rounded once; with ALLOW_HALF_PRECISION_COMPUTATION FLOAT16 sums add in FLOAT16 in a GPU
shader's order on every backend, ``_half.half_sum``): within ``error_bound`` of the float64
reference ((n + 2) u sum |terms|, n the reduction length)."""
import jax.numpy as jnp
import numpy as np

from .._core import dtypes
from .._core.registry import Example, OperatorDef, register
from ._half import half_sum
from ._ieee import correctly_rounded, fmax, fmin
from ._ordering import arg_extreme, fold, reduced_sizes, reference_arg_extreme
from ._reference import ref_max, ref_min
from .._schema.members import members

IN, OUT = "InputTensor", "OutputTensor"
NAMES = ("ARGMAX", "ARGMIN", "AVERAGE", "L1", "L2", "LOG_SUM", "LOG_SUM_EXP", "MAX", "MIN",
         "MULTIPLY", "SUM", "SUM_SQUARE")
ARGMAX, ARGMIN, AVERAGE, L1, L2, LOG_SUM, LOG_SUM_EXP, MAX, MIN, MULTIPLY, SUM, SUM_SQUARE = \
    members("DML_REDUCE_FUNCTION", " ".join(NAMES))


def reduce(InputTensor, *, Function, Axes, ctx):
    f, axes = Function, tuple(sorted(Axes))
    if f in (ARGMAX, ARGMIN):
        return arg_extreme(InputTensor, axes, f == ARGMAX, False)
    x = ctx.upcast(InputTensor)
    if f in (MAX, MIN):
        return fold(fmax if f == MAX else fmin, x, axes)
    total = dict(keepdims=True, axis=axes, dtype=x.dtype)
    if f == MULTIPLY:
        return jnp.prod(x, **total)
    if f == LOG_SUM_EXP:
        m = jnp.max(x, axis=axes, keepdims=True)
        m = jnp.where(jnp.isfinite(m), m, jnp.zeros_like(m))
        return m + jnp.log(jnp.sum(jnp.exp(x - m), **total))
    terms = jnp.abs(x) if f == L1 else x * x if f in (L2, SUM_SQUARE) else x
    s = half_sum(terms, axes) if x.dtype == np.float16 else jnp.sum(terms, **total)
    if f == AVERAGE:
        n = int(np.prod([x.shape[a] for a in axes]))
        return correctly_rounded(lambda v: v / jnp.asarray(n, v.dtype))(s)
    if f == L2:
        return correctly_rounded(jnp.sqrt)(s)
    return jnp.log(s) if f == LOG_SUM else s


def reduce_reference(InputTensor, *, Function, Axes, ctx):
    f, x = Function, np.asarray(InputTensor)
    if f in (ARGMAX, ARGMIN):
        return reference_arg_extreme(x, Axes, f == ARGMAX, False)
    exact = x.dtype.kind in "iu"
    v = x.astype(object) if exact else x.astype(np.float64)
    axes = tuple(sorted(Axes))
    if f in (MAX, MIN):  # a left fold with HLSL's NaN-ignoring max/min
        out = fold(ref_max if f == MAX else ref_min, v, axes)
        return np.asarray(out).astype(x.dtype) if exact else out
    terms = {L1: np.abs(v), L2: v * v, SUM_SQUARE: v * v, LOG_SUM_EXP: None}.get(f, v)
    if f == MULTIPLY:
        out = np.prod(v, axis=axes, keepdims=True)
    elif f == LOG_SUM_EXP:
        m = np.max(v, axis=axes, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0)
        out = m + np.log(np.sum(np.exp(v - m), axis=axes, keepdims=True))
    else:
        out = np.sum(terms, axis=axes, keepdims=True)
    if exact:  # wrap to the type
        bits = 8 * x.dtype.itemsize
        flat = [int(t) % (1 << bits) for t in np.asarray(out).reshape(-1)]
        return np.array(flat, np.uint64).astype(x.dtype).reshape(np.shape(out))
    n = int(np.prod([x.shape[a] for a in axes]))
    return {AVERAGE: out / n, L2: np.sqrt(out), LOG_SUM: np.log(out)}.get(f, out)


def error_bound(inputs, spec, dtype):
    x, f, axes = np.asarray(inputs[IN], np.float64), spec.attr["Function"], spec.attr["Axes"]
    n, u, ax = int(np.prod([x.shape[a] for a in axes])), 2.0 ** -24, np.abs(x)
    if f in (ARGMAX, ARGMIN, MAX, MIN):
        return np.zeros(1)
    if f == MULTIPLY:
        return (n + 1) * u * np.prod(ax, axis=axes, keepdims=True)
    if f == LOG_SUM_EXP:
        m = np.max(x, axis=axes, keepdims=True)
        return (n + 8) * u * (1 + np.abs(np.where(np.isfinite(m), m, 0)))
    terms = x * x if f in (L2, SUM_SQUARE) else ax
    s = (n + 2) * u * np.sum(terms, axis=axes, keepdims=True)
    if f == AVERAGE:
        return s / n
    if f == L2:
        return s / np.maximum(np.sqrt(np.sum(terms, axis=axes, keepdims=True)), 1e-300)
    if f == LOG_SUM:
        with np.errstate(all="ignore"):
            return s / np.abs(np.sum(x, axis=axes, keepdims=True)) + 4 * u
    return s


def condition(spec, cond: str) -> bool:
    """Does the support table headed ``cond`` ("MIN and MAX") apply to spec's Function?"""
    names = cond.replace(" and ", ", ").replace(",,", ",").split(", ")
    return NAMES[spec.attr["Function"]] in [n.strip() for n in names]


def function_rule(spec, check):
    if spec.attr["Function"] not in range(12):
        check.fail(f"Function is {spec.attr['Function']}, which is not a DML_REDUCE_FUNCTION")
    if spec.attr["Function"] not in (ARGMAX, ARGMIN) and spec.tensor.get(OUT) is not None and \
            spec.tensor[OUT].data_type != spec.tensor[IN].data_type:
        check.fail("OutputTensor.DataType must match InputTensor.DataType except for ARGMAX and "
                   "ARGMIN")


def _types(spec):
    arg = spec.attr["Function"] in (ARGMAX, ARGMIN)
    return {OUT: dtypes.UINT32 if arg else spec.tensor[IN].data_type}


X = np.float32([[1, 2, 3], [3, 0, 4], [2, 4, 2]])
f32 = np.float32
register(OperatorDef(
    "DML_OPERATOR_REDUCE", reduce, reduce_reference, output_sizes=reduced_sizes,
    rules=(function_rule,), condition=condition, output_types=_types, error_bound=error_bound,
    examples=(
        Example({IN: X}, {OUT: f32([[6, 6, 9]])}, {"Function": SUM, "Axes": (0,)},
                "the page's example 1: columns"),
        Example({IN: X}, {OUT: f32([[6], [7], [8]])}, {"Function": SUM, "Axes": (1,)},
                "the page's example 2: rows"),
        Example({IN: X}, {OUT: f32([[21]])}, {"Function": SUM, "Axes": (0, 1)},
                "the page's example 3: everything"),
        Example({IN: X}, {OUT: f32([[2, 2, 3]])}, {"Function": AVERAGE, "Axes": (0,)}),
        Example({IN: f32([[3, -4]])}, {OUT: f32([[5]])}, {"Function": L2, "Axes": (1,)}),
        Example({IN: f32([np.nan, -1, 2])}, {OUT: f32([2])}, {"Function": MAX, "Axes": (0,)},
                "MAX ignores NaN (HLSL max)"),
        Example({IN: np.int32([2**30, 2**30, 2**30, 2**30])}, {OUT: np.int32([0])},
                {"Function": SUM, "Axes": (0,)}, "INT32 sums wrap: 2^32 is 0"),
        Example({IN: np.uint32([[7, 9], [9, 1]])}, {OUT: np.uint32([[1, 0]])},
                {"Function": ARGMAX, "Axes": (0,)}, "ARGMAX: the first maximum"),
        Example({IN: f32([1000, 1000])}, {OUT: f32([1000 + np.log(2)])},
                {"Function": LOG_SUM_EXP, "Axes": (0,)}, "LOG_SUM_EXP does not overflow"),
    ), module=__name__))

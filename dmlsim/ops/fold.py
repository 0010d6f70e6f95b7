"""DML_OPERATOR_FOLD (FL 6_4): combine sliding local blocks into a tensor, summing overlaps.

InputTensor { N, C * prod(WindowSizes), BlockCount } -> OutputTensor { N, C, *spatial }: the
inverse layout of UNFOLD (see ``unfold`` and ``_windows``), values that overlap added. The
output's spatial sizes are the desc's; the shape rule checks InputTensor against them.
Sums are in the compute type (float32 for FLOAT16; integers wrap), in no particular order:
within (prod(WindowSizes) + 1) u sum |x| of the float64 reference (``error_bound``).
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, Sizes, register
from ._windows import ARRAYS, IN, OUT, check_window, pairs, positions


def fold(InputTensor, *, WindowSizes, Strides, Dilations, StartPadding, EndPadding, ctx):
    a = dict(WindowSizes=WindowSizes, Strides=Strides, Dilations=Dilations,
             StartPadding=StartPadding, EndPadding=EndPadding)
    out = ctx.outputs[OUT]
    x = ctx.upcast(InputTensor)
    n, c = out.sizes[:2]
    vals = x.reshape(n, c, int(np.prod(WindowSizes)), x.shape[-1])
    padded = [s + p0 + p1 for s, p0, p1 in zip(out.sizes[2:], StartPadding, EndPadding)]
    acc = jnp.zeros((n, c, *padded), x.dtype)
    pos = positions(out.sizes[2:], a)
    acc = acc.at[(slice(None), slice(None)) + tuple(jnp.asarray(p) for p in pos)].add(vals)
    return acc[(slice(None), slice(None)) + tuple(slice(p0, p0 + s) for s, p0 in
                                                  zip(out.sizes[2:], StartPadding))]


def _fold_exact(x, sizes, a):
    """The sum as Python numbers (exact for integers, float64 for floats)."""
    exact = x.dtype.kind in "iu"
    y = np.zeros(sizes, object if exact else np.float64)
    k = int(np.prod(a["WindowSizes"]))
    cells = list(pairs(sizes[2:], a))
    for n, c in np.ndindex(*sizes[:2]):
        for wi, bi, dst in cells:
            if all(0 <= s < m for s, m in zip(dst, sizes[2:])):
                v = x[n, c * k + wi, bi]
                y[(n, c) + tuple(dst)] += int(v) if exact else float(v)
    if exact:  # integers wrap
        bits = 8 * x.dtype.itemsize
        return np.array([int(v) % (1 << bits) for v in y.reshape(-1)],
                        np.uint64).astype(x.dtype).reshape(y.shape)
    return y


def fold_reference(InputTensor, *, WindowSizes, Strides, Dilations, StartPadding, EndPadding,
                   ctx):
    a = dict(WindowSizes=WindowSizes, Strides=Strides, Dilations=Dilations,
             StartPadding=StartPadding, EndPadding=EndPadding)
    return _fold_exact(np.asarray(InputTensor), ctx.outputs[OUT].sizes, a)


def fold_bound(inputs, spec, dtype):
    a = {f: spec.attr[f] for f in ARRAYS}
    total = _fold_exact(np.abs(np.asarray(inputs[IN], np.float64)), spec.tensor[OUT].sizes, a)
    return (int(np.prod(a["WindowSizes"])) + 1) * 2.0 ** -24 * total


def fold_sizes(spec, check):
    t, out, nd = spec.tensor[IN], spec.tensor.get(OUT), spec.attr["DimensionCount"]
    if out is None:
        check.fail("OutputTensor's spatial Sizes are the desc's; give its tensor desc")
    if len(out.sizes) != nd + 2 or len(t.sizes) != 3:
        check.fail(f"InputTensor must be {{N, C * prod(WindowSizes), BlockCount}} and "
                   f"OutputTensor {{N, C, spatial}} with DimensionCount = {nd} spatial dimensions")
    bs = check_window(spec, check, out.sizes[2:])
    want = (out.sizes[0], out.sizes[1] * int(np.prod(spec.attr["WindowSizes"])),
            int(np.prod(bs)))
    if tuple(t.sizes) != want:
        check.fail(f"InputTensor.Sizes is {list(t.sizes)} but OutputTensor and the window give "
                   f"{list(want)}")
    return {OUT: Sizes(out.sizes, "OutputTensor")}


f32 = np.float32
WIN = {"WindowSizes": (3, 3), "Strides": (1, 1), "Dilations": (1, 1)}
register(OperatorDef(
    "DML_OPERATOR_FOLD", fold, fold_reference, output_sizes=fold_sizes, error_bound=fold_bound,
    ulp={"FLOAT32": 0}, examples=(
        Example({IN: f32(np.arange(36).reshape(1, 9, 4))},
                {OUT: f32([[[[0, 5, 13, 9], [14, 38, 54, 32], [38, 86, 102, 56],
                             [26, 57, 65, 35]]]])},
                {**WIN, "StartPadding": (0, 0), "EndPadding": (0, 0)}, "the page's example 1"),
        Example({IN: f32(np.arange(72).reshape(1, 9, 8))},
                {OUT: f32([[[[26, 70, 102, 60], [78, 183, 231, 129], [84, 195, 243, 135],
                             [82, 182, 214, 116]]]])},
                {**WIN, "StartPadding": (1, 0), "EndPadding": (1, 0)},
                "the page's example 2: padded"),
    ), module=__name__))

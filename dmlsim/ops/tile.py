"""DML_OPERATOR_TILE: repeat the input Repeats[i] times along each dimension i.

OutputTensor.Sizes[i] = InputTensor.Sizes[i] * Repeats[i]; RepeatsCount equals the input's
DimensionCount and every repeat is larger than 0 (the page), else E_INVALIDARG. The page's
constraints name only the DataType, but OutputTensor "must have the same DimensionCount as
the input tensor" (its member text): both are checked. Values are copied bit for bit.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, Sizes, register, same_type
from ._movement import dimension_count, from_bits, to_bits

IN, OUT = "InputTensor", "OutputTensor"


def tile(InputTensor, *, Repeats, ctx):
    return from_bits(jnp.tile(to_bits(InputTensor), Repeats), InputTensor.dtype)


def tile_reference(InputTensor, *, Repeats, ctx):
    x = np.asarray(InputTensor)
    out = np.empty([n * r for n, r in zip(x.shape, Repeats)], x.dtype)
    for o in np.ndindex(*out.shape):
        out[o] = x[tuple(c % n for c, n in zip(o, x.shape))]
    return out


def tile_sizes(spec, check):
    reps, t = spec.attr["Repeats"], spec.tensor[IN]
    for i, r in enumerate(reps):
        if r < 1:
            check.fail(f"Repeats[{i}] is {r}; values must be larger than 0")
    return {OUT: Sizes([n * r for n, r in zip(t.sizes, reps)], "InputTensor and Repeats")}


register(OperatorDef(
    "DML_OPERATOR_TILE", tile, tile_reference, output_sizes=tile_sizes,
    rules=(dimension_count("Repeats", field="RepeatsCount"), same_type(IN, OUT)),
    examples=(
        Example({IN: np.float32([[[[1, 2, 3], [4, 5, 6]]]])},
                {OUT: np.tile(np.float32([[[[1, 2, 3], [4, 5, 6]]]]), (1, 1, 3, 3))},
                {"Repeats": (1, 1, 3, 3)}, "the page's example"),
        Example({IN: np.array([np.nan, -0.0], np.float16)},
                {OUT: np.array([np.nan, -0.0, np.nan, -0.0], np.float16)}, {"Repeats": (2,)},
                "1-D (FL 3_1), bits kept"),
    ),
    module=__name__))

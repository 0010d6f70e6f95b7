"""DIAGONAL_MATRIX (FL 2_0) and DIAGONAL_MATRIX1 (FL 5_1): identity-like matrices.

The last two dimensions are { Height, Width } (need not be square); leading ones are batches.
- DIAGONAL_MATRIX: OutputTensor[y, x] = Value if y + Offset == x else 0. Value is a FLOAT
  converted to the tensor type "as a C cast" (10.6 becomes 10 for integers).
- DIAGONAL_MATRIX1: with topX = x - y, Value goes where (End >= Begin) ^ (topX >= Begin) ^
  (topX < End) (a band, or its complement when inverted); elsewhere InputTensor, or 0
  without one. ValueDataType must equal OutputTensor.DataType.
The page's first DIAGONAL_MATRIX1 example writes Value 7 but shows 1s; dmlsim follows the
pseudo-code (its example uses Value 1). Values keep their bits.
"""
import jax.numpy as jnp
import numpy as np

from .._core import dtypes
from .._core.registry import Example, OperatorDef, Sizes, register, same_type
from ._movement import bits_scalar, from_bits, tensor_type_value, to_bits
from ._scalar import scalar_type_rule, scalar_value

IN, OUT = "InputTensor", "OutputTensor"


def _mask(sizes, begin, end):
    h, w = sizes[-2:]
    top = np.arange(w)[None, :] - np.arange(h)[:, None]
    return (end >= begin) ^ (top >= begin) ^ (top < end)


def diagonal_matrix(*, Offset, Value, ctx):
    out = ctx.outputs[OUT]
    bits = bits_scalar(tensor_type_value(Value, out.data_type), out.np_dtype)
    m = jnp.asarray(_mask(out.sizes, Offset, Offset + 1))
    u = jnp.where(m, bits, jnp.zeros((), bits.dtype))
    return from_bits(jnp.broadcast_to(u, out.sizes), out.np_dtype)


def diagonal_matrix_reference(*, Offset, Value, ctx):
    out = ctx.outputs[OUT]
    v = tensor_type_value(Value, out.data_type)
    y = np.zeros(out.sizes, out.np_dtype)
    for o in np.ndindex(*out.sizes):
        if o[-2] + Offset == o[-1]:
            y[o] = v
    return y


def diagonal_matrix1(InputTensor, *, ValueDataType, Value, DiagonalFillBegin, DiagonalFillEnd,
                     ctx):
    out = ctx.outputs[OUT]
    bits = bits_scalar(scalar_value(Value, ValueDataType), out.np_dtype)
    base = jnp.zeros(out.sizes, bits.dtype) if InputTensor is None else to_bits(InputTensor)
    m = jnp.asarray(_mask(out.sizes, DiagonalFillBegin, DiagonalFillEnd))
    return from_bits(jnp.where(m, bits, base), out.np_dtype)


def diagonal_matrix1_reference(InputTensor, *, ValueDataType, Value, DiagonalFillBegin,
                               DiagonalFillEnd, ctx):
    out = ctx.outputs[OUT]
    v = scalar_value(Value, ValueDataType)
    y = np.zeros(out.sizes, out.np_dtype) if InputTensor is None else np.array(InputTensor)
    b, e = DiagonalFillBegin, DiagonalFillEnd
    for o in np.ndindex(*out.sizes):
        top = o[-1] - o[-2]
        inside = b <= top < e if e >= b else not (e <= top < b)
        if inside:
            y[o] = v
    return y


def _given(spec, check):
    out = spec.tensor.get(OUT)
    src = spec.tensor.get(IN)
    if out is None and src is None:
        check.fail("OutputTensor's Sizes are the desc's; give its tensor desc")
    sizes = (src or out).sizes
    if len(sizes) < 2:
        check.fail(f"OutputTensor has {len(sizes)} dimension; the last two are the matrix")
    return {OUT: Sizes(sizes, "InputTensor" if src is not None else "OutputTensor")}


f32 = np.float32
X = f32([[4, 7, 3, 7, 9], [1, 2, 8, 6, 9], [9, 4, 1, 8, 7], [4, 3, 4, 2, 4]])
V1 = {"ValueDataType": dtypes.FLOAT32}
register(OperatorDef(
    "DML_OPERATOR_DIAGONAL_MATRIX", diagonal_matrix, diagonal_matrix_reference,
    output_sizes=_given, output_types=lambda spec: {OUT: spec.tensor[OUT].data_type},
    examples=(
        Example({}, {OUT: np.eye(3, dtype=f32)[None, None]}, {"Offset": 0, "Value": 1.0},
                "the page's identity"),
        Example({}, {OUT: np.eye(3, k=1, dtype=f32)[None, None]}, {"Offset": 1, "Value": 1.0},
                "Offset 1: shifted right/up"),
        Example({}, {OUT: np.eye(3, 2, k=-1, dtype=f32)[None, None]},
                {"Offset": -1, "Value": 1.0}, "Offset -1 on {1, 1, 3, 2}: shifted left/down"),
        Example({}, {OUT: np.zeros((1, 1, 3, 2), f32)}, {"Offset": -3, "Value": 1.0},
                "Offset -3: all zero"),
        Example({}, {OUT: np.eye(2, dtype=np.int32) * 10}, {"Offset": 0, "Value": 10.6},
                "10.6 becomes 10 for an integer tensor"),
    ), module=__name__))
register(OperatorDef(
    "DML_OPERATOR_DIAGONAL_MATRIX1", diagonal_matrix1, diagonal_matrix1_reference,
    output_sizes=_given, rules=(same_type(IN, OUT), scalar_type_rule("ValueDataType", OUT)),
    output_types=lambda spec: {OUT: spec.attr["ValueDataType"]}, examples=(
        Example({IN: None}, {OUT: np.eye(4, 5, dtype=f32)},
                {**V1, "Value": f32(1), "DiagonalFillBegin": 0, "DiagonalFillEnd": 1},
                "the identity (the page writes Value 7 but shows 1s)"),
        Example({IN: None},
                {OUT: 7 * (np.eye(4, 5) + np.eye(4, 5, 1) + np.eye(4, 5, 2)).astype(f32)},
                {**V1, "Value": f32(7), "DiagonalFillBegin": 0, "DiagonalFillEnd": 3},
                "a 3-wide band"),
        Example({IN: X}, {OUT: np.triu(X, 1)},
                {**V1, "Value": f32(0), "DiagonalFillBegin": -2**31, "DiagonalFillEnd": 1},
                "keep the strictly upper triangle"),
        Example({IN: X}, {OUT: np.eye(4, 5, dtype=f32) * X},
                {**V1, "Value": f32(0), "DiagonalFillBegin": 1, "DiagonalFillEnd": 0},
                "inverted bounds: keep only the diagonal"),
    ), module=__name__))

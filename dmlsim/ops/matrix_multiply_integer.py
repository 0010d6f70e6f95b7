"""DML_OPERATOR_MATRIX_MULTIPLY_INTEGER: Output = (A - AZeroPoint) x (B - BZeroPoint), INT32.

A is { [BatchCount], [ChannelCount], M, K }, B { .., K, N }, the output { .., M, N } (2 to 4
dimensions from FL 4_0, exactly 4 before; A, B and the output share one DimensionCount); one
independent product per batch and channel. A and its zero point share one type (INT8 or
UINT8), as do B and its zero point. The zero points are per tensor or per row of A
({ [1], [1], AZeroPointCount, [1] }, the count 1 or M) and per tensor or per column of B
({ [1], [1], [1], BZeroPointCount }, the count 1 or N); from FL 5_2 they may have fewer
dimensions (missing leading ones are 1).

Where the page is silent: each difference is exact (at most 255 in magnitude) and every
product and partial sum is accumulated in 32-bit two's-complement arithmetic, so a sum beyond
INT32 wraps as 32-bit hardware accumulators do (the exact result modulo 2^32); the batch
dimensions of A and B must equal each other (broadcast with zero strides, not smaller Sizes).
"""
import jax.numpy as jnp
import numpy as np

from .._core import dtypes
from .._core.registry import Example, OperatorDef, register, same_type
from ._quantize import along, along_reference, per_axis, same_dimension_count
from .gemm import product_sizes

A, AZP, B, BZP, OUT = "ATensor", "AZeroPointTensor", "BTensor", "BZeroPointTensor", \
    "OutputTensor"


def matrix_multiply_integer(ATensor, AZeroPointTensor, BTensor, BZeroPointTensor, *, ctx):
    a, b = jnp.asarray(ATensor).astype(jnp.int32), jnp.asarray(BTensor).astype(jnp.int32)
    if AZeroPointTensor is not None:
        a = a - along(AZeroPointTensor, a.ndim, -2)
    if BZeroPointTensor is not None:
        b = b - along(BZeroPointTensor, b.ndim, -1)
    return jnp.matmul(a, b, preferred_element_type=jnp.int32)  # int32 sums wrap mod 2^32


def exact_sums(ATensor, AZeroPointTensor, BTensor, BZeroPointTensor):
    """The products of the differences as exact Python integers (NumPy ``object``)."""
    a = np.asarray(ATensor).astype(object)
    b = np.asarray(BTensor).astype(object)
    if AZeroPointTensor is not None:
        a = a - along_reference(AZeroPointTensor, a.ndim, -2, object)
    if BZeroPointTensor is not None:
        b = b - along_reference(BZeroPointTensor, b.ndim, -1, object)
    return np.einsum("...mk,...kn->...mn", a, b)


def wrap32(exact):
    """Exact integers reduced modulo 2^32 into INT32's range (int64 array)."""
    wrapped = np.vectorize(lambda v: (int(v) + 2**31) % 2**32 - 2**31, otypes=[np.int64])
    return wrapped(exact).astype(np.int64)


def matrix_multiply_integer_reference(ATensor, AZeroPointTensor, BTensor, BZeroPointTensor, *,
                                      ctx):
    """Exact Python-integer sums, then reduced modulo 2^32 into INT32."""
    return wrap32(exact_sums(ATensor, AZeroPointTensor, BTensor, BZeroPointTensor))


def output_sizes(spec, check):
    a, b = spec.tensor[A], spec.tensor[B]
    return {OUT: product_sizes(check, a, b, a.sizes[-2], a.sizes[-1], b.sizes[-2], b.sizes[-1])}


i8, u8 = np.int8, np.uint8
register(OperatorDef(
    "DML_OPERATOR_MATRIX_MULTIPLY_INTEGER", matrix_multiply_integer,
    matrix_multiply_integer_reference, output_sizes=output_sizes,
    rules=(same_dimension_count(A, B, OUT), same_type(A, AZP), same_type(B, BZP),
           per_axis(AZP, A, -2, "M (per row)"), per_axis(BZP, B, -1, "N (per column)")),
    output_types=lambda spec: {OUT: dtypes.BY_SHORT_NAME["INT32"]},
    examples=(
        Example({A: u8([[[[1, 2], [3, 4]]]]), B: i8([[[[1, -1], [2, 0]]]])},
                {OUT: np.int32([[[[5, -1], [11, -3]]]])}, {},
                "no zero points: [1 2; 3 4] x [1 -1; 2 0]"),
        Example({A: u8([[[[130, 131], [128, 128]]]]), AZP: u8([[[[128]]]]),
                 B: u8([[[[10], [20]]]]), BZP: u8([[[[10]]]])},
                {OUT: np.int32([[[[30], [0]]]])}, {},
                "per-tensor zero points 128 and 10: [2 3; 0 0] x [0; 10]"),
        Example({A: i8([[1, 1], [1, 1]]), AZP: i8([[0], [1]]), B: i8([[2, 3], [4, 5]]),
                 BZP: i8([[1, 0]])}, {OUT: np.int32([[4, 8], [0, 0]])}, {},
                "2-D (FL 4_0); per-row A zero points [0; 1], per-column B zero points [1 0]"),
    ),
    module=__name__))

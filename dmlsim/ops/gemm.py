"""DML_OPERATOR_GEMM: Output = FusedActivation(Alpha * TransA(A) x TransB(B) + Beta * C).

Sizes are { [BatchCount], [ChannelCount], M, K } for A (K, M with TransA), { .., K, N } for B
(N, K with TransB) and { .., M, N } for C and the output: one independent M x K by K x N
product per batch and channel (2 to 4 dimensions from FL 4_0, exactly 4 before). A, B, C and
the output share one DataType and DimensionCount; C has the output's Sizes (broadcast a bias
through zero strides). Beta is ignored without C ("Values default to 0").

Where the page is silent: the batch dimensions of A and B must equal the output's (DirectML
broadcasts through strides, not Sizes); TransA/TransB other than NONE (0) and TRANSPOSE (1)
are E_INVALIDARG. FLOAT32 computes in float32 arithmetic (``Precision.HIGHEST``: no TF32 or
bf16 passes on GPUs); FLOAT16 accumulates in float32 and rounds once, unless
ALLOW_HALF_PRECISION_COMPUTATION: its products are exact in float32, so the FLOAT16 operands
go to a float32-accumulating product as they are (tensor cores on GPUs). Alpha scales the
product, then Beta * C is added.

Tolerance: a dot product of length K summed in float32 is within (K + 2) u sum_k |a_k b_k|
of the exact value (u = 2^-24, the worst case of any summation order), plus the final
rounding to the output type: ``error_bound`` below, checked against the float64 reference.
"""
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core.registry import Example, OperatorDef, Sizes, register, same_sizes, same_type
from .._schema.members import members

A, B, C, OUT = "ATensor", "BTensor", "CTensor", "OutputTensor"
NONE, TRANSPOSE = members("DML_MATRIX_TRANSFORM", "NONE TRANSPOSE")


def gemm(ATensor, BTensor, CTensor, *, TransA, TransB, Alpha, Beta, ctx):
    a, b = ctx.product_operand(ATensor), ctx.product_operand(BTensor)
    if TransA == TRANSPOSE:
        a = jnp.swapaxes(a, -1, -2)
    if TransB == TRANSPOSE:
        b = jnp.swapaxes(b, -1, -2)
    y = jnp.matmul(a, b, precision=lax.Precision.HIGHEST,
                   preferred_element_type=ctx.compute_type(a.dtype))
    y = y * jnp.asarray(np.float32(Alpha), y.dtype)
    if CTensor is not None:
        y = y + jnp.asarray(np.float32(Beta), y.dtype) * ctx.upcast(CTensor)
    return y


def gemm_reference(ATensor, BTensor, CTensor, *, TransA, TransB, Alpha, Beta, ctx):
    a, b = np.asarray(ATensor, np.float64), np.asarray(BTensor, np.float64)
    a = np.swapaxes(a, -1, -2) if TransA == TRANSPOSE else a
    b = np.swapaxes(b, -1, -2) if TransB == TRANSPOSE else b
    y = float(np.float32(Alpha)) * np.einsum("...mk,...kn->...mn", a, b)
    if CTensor is not None:
        y = y + float(np.float32(Beta)) * np.asarray(CTensor, np.float64)
    return y


def error_bound(inputs, spec, dtype):
    """(K + 2) u sum_k |Alpha a_k b_k| + u |Beta c|, u the float32 unit roundoff."""
    attrs = spec.attr
    a, b = np.abs(np.asarray(inputs[A], np.float64)), np.abs(np.asarray(inputs[B], np.float64))
    a = np.swapaxes(a, -1, -2) if attrs["TransA"] == TRANSPOSE else a
    b = np.swapaxes(b, -1, -2) if attrs["TransB"] == TRANSPOSE else b
    k = a.shape[-1]
    u = 2.0 ** -24
    bound = (k + 2) * u * abs(float(np.float32(attrs["Alpha"]))) * \
        np.einsum("...mk,...kn->...mn", a, b)
    if inputs.get(C) is not None:
        bound = bound + 2 * u * abs(float(np.float32(attrs["Beta"]))) * \
            np.abs(np.asarray(inputs[C], np.float64))
    return bound


def gemm_sizes(spec, check):
    """{ batch.., M, N } from A { batch.., M, K } and B { batch.., K, N } (transposed as
    TransA/TransB say); K and the batch sizes must agree."""
    a, b = spec.tensor[A], spec.tensor[B]
    ta, tb = spec.attr["TransA"], spec.attr["TransB"]
    m, ka = (a.sizes[-1], a.sizes[-2]) if ta == TRANSPOSE else (a.sizes[-2], a.sizes[-1])
    kb, n = (b.sizes[-1], b.sizes[-2]) if tb == TRANSPOSE else (b.sizes[-2], b.sizes[-1])
    return {OUT: product_sizes(check, a, b, m, ka, kb, n, f" (TransA {ta}, TransB {tb})")}


def product_sizes(check, a, b, m, ka, kb, n, note=""):
    """{ batch.., M, N } of a batched product of ATensor ``a`` and BTensor ``b``: K and the
    batch sizes must agree (shared with the integer products)."""
    if ka != kb:
        check.fail(f"ATensor.Sizes {list(a.sizes)} gives K = {ka} but BTensor.Sizes "
                   f"{list(b.sizes)} gives K = {kb}{note}")
    if a.sizes[:-2] != b.sizes[:-2]:
        check.fail(f"ATensor.Sizes {list(a.sizes)} and BTensor.Sizes {list(b.sizes)} differ in "
                   "the batch dimensions; broadcast with zero strides, not smaller Sizes")
    return Sizes(a.sizes[:-2] + (m, n), "ATensor and BTensor")


def transforms(spec, check):
    for name in ("TransA", "TransB"):
        if spec.attr[name] not in (NONE, TRANSPOSE):
            check.fail(f"{name} is {spec.attr[name]}, which is not a DML_MATRIX_TRANSFORM "
                       "(0 NONE, 1 TRANSPOSE)")


def same_dimension_count(spec, check):
    present = [(n, spec.tensor[n]) for n in (A, B, C, OUT) if spec.tensor.get(n) is not None]
    for n, t in present[1:]:
        if len(t.sizes) != len(present[0][1].sizes):
            check.fail(f"{n}.DimensionCount is {len(t.sizes)} but ATensor.DimensionCount is "
                       f"{len(present[0][1].sizes)}; they must match")


f32 = np.float32
_A = f32([[1, 2, 3], [4, 5, 6]])
_B = f32([[1, 0], [0, 1], [2, -1]])

register(OperatorDef(
    "DML_OPERATOR_GEMM", gemm, gemm_reference, output_sizes=gemm_sizes,
    rules=(transforms, same_dimension_count, same_type(A, B, C, OUT), same_sizes(C, OUT)),
    output_types=lambda spec: {OUT: spec.tensor[A].data_type},
    ulp={"FLOAT32": 0, "FLOAT16": 0}, error_bound=error_bound,
    examples=(
        Example({A: _A[None, None], B: _B[None, None]}, {OUT: f32([[[[7, -1], [16, -1]]]])},
                {"Alpha": 1.0}, "{1,1,2,3} x {1,1,3,2}: [1 2 3; 4 5 6] x [1 0; 0 1; 2 -1]"),
        Example({A: _A.T.copy(), B: _B.T.copy(), C: f32([[10, 20], [30, 40]])},
                {OUT: f32([[24, 18], [62, 38]])},
                {"TransA": TRANSPOSE, "TransB": TRANSPOSE, "Alpha": 2.0, "Beta": 1.0},
                "2-D (FL 4_0), both transposed: 2 * A x B + C"),
        Example({A: _A, B: _B, C: f32([[100, -100], [100, -100]])},
                {OUT: f32([[107, 0], [116, 0]])},
                {"Alpha": 1.0, "Beta": 1.0, "FusedActivation": "RELU"},
                "C broadcast from one row by a zero stride; FusedActivation RELU",
                strides={C: (0, 1)}),
        Example({A: np.float16([[1, 1, 1]]), B: np.float16([[2048], [1], [1]])},
                {OUT: np.float16([[2050]])}, {"Alpha": 1.0},
                "FLOAT16 accumulates in float32 and rounds once: 2048 + 1 + 1 = 2050 (in float16 "
                "steps 2048 + 1 would round back to 2048)"),
        Example({A: _A, B: _B}, {OUT: f32([[7, -1], [16, -1]])}, {"Alpha": 1.0, "Beta": 5.0},
                "without C, Beta is ignored", owned=(B,)),
    ),
    module=__name__))

"""The bitwise operators, one table row each, on each element's native encoding.

    BIT_AND  a & b      BIT_OR  a | b      BIT_XOR  a ^ b      BIT_NOT  ~x
    BIT_COUNT  the number of bits set to 1 (population count)

"The tensor data type is ignored except for determining the width of each element": from
FL 4_1 float tensors are accepted and their IEEE bits are operated on (BIT_NOT of +0.0f is
the bits 0xFFFFFFFF, a NaN). AND/OR/XOR/NOT: inputs and output share one DataType.
BIT_COUNT's output is UINT8 or UINT32 whatever the input type (at most 64 fits both).
"""
import numpy as np
from jax import lax

from .._core.dtypes import UNSIGNED_OF_SIZE
from .._core.registry import Example, OperatorDef, register, same_sizes, same_type

A, B, IN, OUT = "ATensor", "BTensor", "InputTensor", "OutputTensor"
U8, U32 = np.uint8, np.uint32


def bits(x):
    """The raw bits of ``x`` as the unsigned type of its width (JAX or NumPy)."""
    u = UNSIGNED_OF_SIZE[np.dtype(x.dtype).itemsize]
    return x.view(u) if isinstance(x, np.ndarray) else lax.bitcast_convert_type(x, u)


def _as(u, dtype):
    return u.view(dtype) if isinstance(u, np.ndarray) else lax.bitcast_convert_type(u, dtype)


def _binary(suffix, f, examples):
    def kernel(inputs, spec, ctx):
        a = inputs[A]
        return {OUT: _as(f(bits(a), bits(inputs[B])), a.dtype)}

    def reference(inputs, spec):
        a = np.asarray(inputs[A])
        return {OUT: _as(f(bits(a), bits(np.asarray(inputs[B]))), a.dtype)}

    register(OperatorDef(f"DML_OPERATOR_ELEMENT_WISE_BIT_{suffix}", kernel, reference,
                         (same_sizes(A, B, OUT), same_type(A, B, OUT)), examples,
                         module=__name__))


def _unary(suffix, f, rules, examples):
    def kernel(inputs, spec, ctx):
        return {OUT: f(inputs[IN], spec.tensor[OUT].np_dtype)}

    def reference(inputs, spec):
        return {OUT: f(np.asarray(inputs[IN]), spec.tensor[OUT].np_dtype)}

    register(OperatorDef(f"DML_OPERATOR_ELEMENT_WISE_BIT_{suffix}", kernel, reference,
                         (same_sizes(IN, OUT), *rules), examples, module=__name__))


def _popcount(x, out_dtype):
    u = bits(x)
    n = np.bitwise_count(u) if isinstance(u, np.ndarray) else lax.population_count(u)
    return n.astype(out_dtype)


def _ex(a, b, out, dtype=U8, note=""):
    return Example({A: np.array(a, dtype), B: np.array(b, dtype)}, {OUT: np.array(out, dtype)},
                   note=note)


_binary("AND", lambda a, b: a & b, (
    _ex([0b1100, 0xFF, 0], [0b1010, 0x0F, 0xFF], [0b1000, 0x0F, 0]),
    _ex([0xFFFFFFFF, 0x80000001], [0x12345678, 0x00000001], [0x12345678, 1], U32),
    _ex([-1.5, 3.0], [-np.inf, np.inf], [-1.0, 2.0], np.float32,
        note="float bits: -1.5f is 0xBFC00000 and -inf 0xFF800000, AND is 0xBF800000 = -1.0f; "
             "3.0f 0x40400000 & inf 0x7F800000 is 0x40000000 = 2.0f"),
))
_binary("OR", lambda a, b: a | b, (
    _ex([0b1100, 0x80, 0], [0b1010, 0x01, 0], [0b1110, 0x81, 0]),
    _ex([0.0, 1.0], [-0.0, 0.0], [-0.0, 1.0], np.float32,
        note="+0.0f | -0.0f sets the sign bit: -0.0f"),
))
_binary("XOR", lambda a, b: a ^ b, (
    _ex([0b1100, 0xFF, 0x5A], [0b1010, 0xFF, 0xA5], [0b0110, 0, 0xFF]),
    _ex([-1, 2**63 - 1], [2**63 - 1, -1], [-2**63, -2**63], np.int64,
        note="0xFFFF...FF ^ 0x7FFF...FF = 0x8000...00 (INT64 min)"),
))
_unary("NOT", lambda x, out_dtype: _as(~bits(x), x.dtype), (same_type(IN, OUT),), (
    Example({IN: np.array([[0, 128], [42, 255]], U8)}, {OUT: np.array([[255, 127], [213, 0]], U8)},
            note="the page's example"),
    Example({IN: np.array([0, -1, 127], np.int8)}, {OUT: np.array([-1, 0, -128], np.int8)}),
    Example({IN: np.array([0.0, -2.0], np.float16)},
            {OUT: np.array([0xFFFF, 0x3FFF], np.uint16).view(np.float16)},
            note="FLOAT16 bits: ~0x0000 = 0xFFFF (a NaN), ~0xC000 = 0x3FFF (1.9990234375)"),
))
_unary("COUNT", _popcount, (), (
    Example({IN: np.array([[0, 123], [456, 789]], U32)}, {OUT: np.array([[0, 6], [4, 5]], U32)},
            note="the page's example"),
    Example({IN: np.array([-1, -2**63, 0], np.int64)}, {OUT: np.array([64, 1, 0], U8)}),
    Example({IN: np.array([1.0, -0.0, np.inf], np.float32)}, {OUT: np.array([7, 1, 8], U8)},
            note="float bits: 1.0f = 0x3F800000 (7 ones), -0.0f = 0x80000000, "
                 "inf = 0x7F800000 (8 ones)"),
))

"""The bitwise operators, one table row each: BIT_AND, BIT_OR, BIT_XOR, BIT_NOT, BIT_COUNT.

    BIT_AND  a & b      BIT_OR  a | b      BIT_XOR  a ^ b      BIT_NOT  ~x
    BIT_COUNT  the number of bits set to 1 (population count)

"The tensor data type is ignored except for determining the width of each element": from
FL 4_1 float tensors are accepted and their IEEE bits are operated on (BIT_NOT of +0.0f is
the bits 0xFFFFFFFF, a NaN). AND/OR/XOR/NOT: inputs and output share one DataType.
BIT_COUNT's output is UINT8 or UINT32 whatever the input type (at most 64 fits both).
The references work on each element's bits as a Python integer.
"""
import operator

import numpy as np
from jax import lax

from .._core import dtypes
from .._core.dtypes import UNSIGNED_OF_SIZE
from .._core.registry import (Example, OperatorDef, register, same_sizes, same_type,
                              sizes_of)

A, B, IN, OUT = "ATensor", "BTensor", "InputTensor", "OutputTensor"
U8, U32 = np.uint8, np.uint32


def _bits(x):
    return lax.bitcast_convert_type(x, UNSIGNED_OF_SIZE[np.dtype(x.dtype).itemsize])


def _py_bits(x):
    """The elements of NumPy array ``x`` as Python ints of their raw bits."""
    x = np.ascontiguousarray(x)
    return [int(v) for v in x.reshape(-1).view(UNSIGNED_OF_SIZE[x.dtype.itemsize])]


def _from_bits(values, like):
    u = UNSIGNED_OF_SIZE[like.dtype.itemsize]
    return np.array(values, u).view(like.dtype).reshape(like.shape)


def _binary(suffix, jax_op, py_op, examples):
    def kernel(ATensor, BTensor, *, ctx):
        return lax.bitcast_convert_type(jax_op(_bits(ATensor), _bits(BTensor)), ATensor.dtype)

    def reference(ATensor, BTensor, *, ctx):
        a = np.asarray(ATensor)
        return _from_bits([py_op(p, q) for p, q in zip(_py_bits(a), _py_bits(BTensor))], a)

    register(OperatorDef(f"DML_OPERATOR_ELEMENT_WISE_BIT_{suffix}", kernel, reference,
                         output_sizes=sizes_of(A, OUT),
                         rules=(same_sizes(A, B), same_type(A, B, OUT)), examples=examples,
                         module=__name__))


def bit_not(InputTensor, *, ctx):
    return lax.bitcast_convert_type(~_bits(InputTensor), InputTensor.dtype)


def bit_not_reference(InputTensor, *, ctx):
    x = np.asarray(InputTensor)
    mask = (1 << (8 * x.dtype.itemsize)) - 1
    return _from_bits([v ^ mask for v in _py_bits(x)], x)


def bit_count(InputTensor, *, ctx):
    return lax.population_count(_bits(InputTensor)).astype(ctx.out_dtype())


def bit_count_reference(InputTensor, *, ctx):
    x = np.asarray(InputTensor)
    return np.array([bin(v).count("1") for v in _py_bits(x)], ctx.out_dtype()).reshape(x.shape)


def _ex(a, b, out, dtype=U8, note=""):
    return Example({A: np.array(a, dtype), B: np.array(b, dtype)}, {OUT: np.array(out, dtype)},
                   note=note)


_binary("AND", lambda a, b: a & b, operator.and_, (
    _ex([0b1100, 0xFF, 0], [0b1010, 0x0F, 0xFF], [0b1000, 0x0F, 0]),
    _ex([0xFFFFFFFF, 0x80000001], [0x12345678, 0x00000001], [0x12345678, 1], U32),
    _ex([-1.5, 3.0], [-np.inf, np.inf], [-1.0, 2.0], np.float32,
        note="float bits: -1.5f is 0xBFC00000 and -inf 0xFF800000, AND is 0xBF800000 = -1.0f; "
             "3.0f 0x40400000 & inf 0x7F800000 is 0x40000000 = 2.0f"),
))
_binary("OR", lambda a, b: a | b, operator.or_, (
    _ex([0b1100, 0x80, 0], [0b1010, 0x01, 0], [0b1110, 0x81, 0]),
    _ex([0.0, 1.0], [-0.0, 0.0], [-0.0, 1.0], np.float32,
        note="+0.0f | -0.0f sets the sign bit: -0.0f"),
))
_binary("XOR", lambda a, b: a ^ b, operator.xor, (
    _ex([0b1100, 0xFF, 0x5A], [0b1010, 0xFF, 0xA5], [0b0110, 0, 0xFF]),
    _ex([-1, 2**63 - 1], [2**63 - 1, -1], [-2**63, -2**63], np.int64,
        note="0xFFFF...FF ^ 0x7FFF...FF = 0x8000...00 (INT64 min)"),
))
register(OperatorDef(
    "DML_OPERATOR_ELEMENT_WISE_BIT_NOT", bit_not, bit_not_reference,
    output_sizes=sizes_of(IN, OUT), rules=(same_type(IN, OUT),), module=__name__, examples=(
        Example({IN: np.array([[0, 128], [42, 255]], U8)},
                {OUT: np.array([[255, 127], [213, 0]], U8)}, note="the page's example"),
        Example({IN: np.array([0, -1, 127], np.int8)}, {OUT: np.array([-1, 0, -128], np.int8)}),
        Example({IN: np.array([0.0, -2.0], np.float16)},
                {OUT: np.array([0xFFFF, 0x3FFF], np.uint16).view(np.float16)},
                note="FLOAT16 bits: ~0x0000 = 0xFFFF (a NaN), ~0xC000 = 0x3FFF (1.9990234375)"),
    )))
register(OperatorDef(
    "DML_OPERATOR_ELEMENT_WISE_BIT_COUNT", bit_count, bit_count_reference,
    output_sizes=sizes_of(IN, OUT), output_types=lambda spec: {OUT: dtypes.UINT8},
    module=__name__, examples=(
        Example({IN: np.array([[0, 123], [456, 789]], U32)},
                {OUT: np.array([[0, 6], [4, 5]], U32)}, note="the page's example"),
        Example({IN: np.array([-1, -2**63, 0], np.int64)}, {OUT: np.array([64, 1, 0], U8)}),
        Example({IN: np.array([1.0, -0.0, np.inf], np.float32)}, {OUT: np.array([7, 1, 8], U8)},
                note="float bits: 1.0f = 0x3F800000 (7 ones), -0.0f = 0x80000000, "
                     "inf = 0x7F800000 (8 ones)"),
    )))

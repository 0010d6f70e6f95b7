"""The boolean logical operators LOGICAL_AND, LOGICAL_OR, LOGICAL_XOR and LOGICAL_NOT, one
table row each: 1 for true, 0 for false.

    LOGICAL_AND  f(a, b) = (a && b)
    LOGICAL_OR   f(a, b) = (a || b)
    LOGICAL_XOR  f(a, b) = (!!a) != (!!b)
    LOGICAL_NOT  f(x) = !x

Inputs and output share one DataType (UINT8 or UINT32; UINT32 only before FL 2_0). As in C,
any non-zero element is true (2 && 4 is 1), and the result is always 0 or 1.
"""
import numpy as np

from .._core.registry import Example, same_type
from ._elementwise import IN, OUT, binary, unary

A, B = "ATensor", "BTensor"
U8, U32 = np.uint8, np.uint32


def _ab(a, b, out, dtype=U8, note=""):
    return Example({A: np.array(a, dtype), B: np.array(b, dtype)}, {OUT: np.array(out, dtype)},
                   note=note)


# name, f on booleans, examples
_BINARY = (
    ("AND", lambda p, q: p & q, (
        _ab([0, 0, 1, 1], [0, 1, 0, 1], [0, 0, 0, 1]),
        _ab([2, 255, 0], [4, 1, 7], [1, 1, 0], note="non-zero is true: 2 && 4 is 1"),
        _ab([[0x80000000, 0]], [[0xFFFFFFFF, 1]], [[1, 0]], U32))),
    ("OR", lambda p, q: p | q, (
        _ab([0, 0, 1, 1], [0, 1, 0, 1], [0, 1, 1, 1]),
        _ab([0, 200, 0], [0, 0, 0x10000], [0, 1, 1], U32, note="non-zero is true"))),
    ("XOR", lambda p, q: p != q, (
        _ab([0, 0, 1, 1], [0, 1, 0, 1], [0, 1, 1, 0]),
        _ab([2, 3, 0], [4, 0, 0], [0, 1, 0], note="(!!2) != (!!4) is 0: 2 XOR 4 is not 6"))),
)


def _register(suffix, f, examples):
    binary(f"DML_OPERATOR_ELEMENT_WISE_LOGICAL_{suffix}",
           lambda a, b: f(a != 0, b != 0),
           lambda a, b: f(np.asarray(a) != 0, np.asarray(b) != 0).astype(np.float64),
           examples=examples)


for _row in _BINARY:
    _register(*_row)

unary(
    "DML_OPERATOR_ELEMENT_WISE_LOGICAL_NOT",
    lambda x, attrs: x == 0,
    lambda x, attrs: (x == 0).astype(np.float64),
    rules=(same_type(IN, OUT),),
    examples=(
        Example({IN: np.array([0, 1, 2, 255], U8)}, {OUT: np.array([1, 0, 0, 0], U8)},
                note="!x of any non-zero is 0"),
        Example({IN: np.array([[0, 0xFFFFFFFF]], U32)}, {OUT: np.array([[1, 0]], U32)}),
    ),
)

"""The original SOFTMAX, LOG_SOFTMAX and HARDMAX (FL 1_0): "2-D" operators.

InputTensor must have an *effective rank* of at most 2 (its DimensionCount without leftmost
sizes of 1: {1, 1, BatchCount, Width} is {BatchCount, Width}); CreateOperator rejects a larger
one with E_INVALIDARG. Each row (the last dimension) is one softmax:

- SOFTMAX: f(x_i) = exp(x_i) / sum_j exp(x_j)
- LOG_SOFTMAX: f(x_i) = ln(exp(x_i) / sum_j exp(x_j))
- HARDMAX: 1 for the first occurrence of the largest value of the row, 0 for the others (ties:
  the lowest index wins, as the page says).

Where the pages are silent: the sums are shifted by the row's maximum (the same function, no
overflow), a NaN in a row makes the whole row NaN (HARDMAX: the first NaN counts as the
maximum, as ARGMAX over IEEE order with NaN on top), and equal infinities share the mass
like equal values. The *1 operators (FL 5_1) take the axes explicitly
(``activation_softmax1``).

Tolerance: float32 cannot hold x - max exactly, and exp turns its rounding (half an ULP of
|x - max|) into a relative error of |x - max| / 2 ULP; below x - max = -104 exp underflows, so
up to ~52 ULP plus the sum's and exp's own few: 64 ULP for FLOAT32 (measured: 33 on
uniform(-30, 30) rows). FLOAT16 computes in float32 and rounds once: 1 ULP. HARDMAX is exact.
"""
import math

import numpy as np

from .._core.registry import Example
from ._activation import axes_activation, effective_rank_at_most_2
from ._softmax import (hardmax, hardmax_reference, log_softmax, log_softmax_reference, softmax,
                       softmax_reference)
from ._elementwise import IN, OUT

ULP = {"FLOAT32": 64, "FLOAT16": 1}
RANK_2 = effective_rank_at_most_2
f32a = np.float32
E = math.e


def _rows(attrs, ndim):
    return (ndim - 1,)


axes_activation(
    "DML_OPERATOR_ACTIVATION_SOFTMAX", softmax, softmax_reference, _rows, (RANK_2,), ulp=ULP,
    examples=(
        Example({IN: f32a([[[[0, 0, 0, 0], [5, 5, 5, 5]]]])},
                {OUT: f32a([[[[0.25] * 4, [0.25] * 4]]])}, note="{1, 1, 2, 4}: two rows"),
        Example({IN: f32a([1, 2, 3])},
                {OUT: f32a([1 / (1 + E + E * E), E / (1 + E + E * E), E * E / (1 + E + E * E)])}),
        Example({IN: np.float16([[1000, 0], [-np.inf, 3]])}, {OUT: np.float16([[1, 0], [0, 1]])},
                note="shifted by the row's max: no overflow"),
    ),
)

axes_activation(
    "DML_OPERATOR_ACTIVATION_LOG_SOFTMAX", log_softmax, log_softmax_reference, _rows, (RANK_2,),
    ulp=ULP,
    examples=(
        Example({IN: f32a([[[[3, 3], [1, 1 + math.log(3)]]]])},
                {OUT: f32a([[[[-math.log(2), -math.log(2)], [-math.log(4), math.log(0.75)]]]])}),
        Example({IN: f32a([[0, -30], [100, 100]])},
                {OUT: f32a([[-math.log1p(math.exp(-30)), -30 - math.log1p(math.exp(-30))],
                            [-math.log(2), -math.log(2)]])}, note="no cancellation near 0"),
    ),
)

axes_activation(
    "DML_OPERATOR_ACTIVATION_HARDMAX", hardmax, hardmax_reference, _rows, (RANK_2,),
    examples=(
        Example({IN: f32a([[[[3, 1, 3], [-1, -2, -1]]]])}, {OUT: f32a([[[[1, 0, 0], [1, 0, 0]]]])},
                note="ties: the first maximum gets 1"),
        Example({IN: np.float16([[0.5, 7, -np.inf, 7.5]])}, {OUT: np.float16([[0, 0, 0, 1]])}),
        Example({IN: f32a([2, np.nan, 9])}, {OUT: f32a([0, 1, 0])}, note="NaN counts as the max"),
    ),
)

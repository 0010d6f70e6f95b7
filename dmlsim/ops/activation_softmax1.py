"""SOFTMAX1, LOG_SOFTMAX1, HARDMAX1 (FL 5_1): the softmax family over explicit axes.

Each group of elements that share their coordinates outside ``Axes`` is one softmax (the sum,
or the argmax, reduces over all the listed axes together):

- SOFTMAX1: f(x_i) = exp(x_i) / sum over the group of exp(x_j)
- LOG_SOFTMAX1: f(x_i) = ln(exp(x_i) / sum over the group of exp(x_j))
- HARDMAX1: 1 at the first maximum of the group, 0 elsewhere. "First" is DML_REDUCE's ARGMAX
  with DML_AXIS_DIRECTION_INCREASING: the lowest row-major index over the reduced axes taken
  in increasing dimension order, whatever order Axes lists them in.

With AxisCount 1 and Axes {DimensionCount - 1} they equal SOFTMAX, LOG_SOFTMAX and HARDMAX,
without their effective-rank limit.

Rules (the pages: values in [0, DimensionCount - 1]; where silent, as DML_REDUCE): AxisCount
must be at least 1 and an axis may not be listed twice, else E_INVALIDARG. NaN, infinities
and tolerances as in ``activation_softmax``. Note: the LOG_SOFTMAX1 page's examples are
HARDMAX1's (copied from that page); the formula is followed.
"""
import math

import numpy as np

from .._core.registry import Example
from ._activation import axes_activation, check_axes
from ._softmax import (hardmax, hardmax_reference, log_softmax, log_softmax_reference, softmax,
                       softmax_reference)
from ._elementwise import IN, OUT

ULP = {"FLOAT32": 64, "FLOAT16": 1}
f32a = np.float32
PAGE_INPUT = f32a([[[12, 0], [-101, 11]], [[3, 234], [0, -101]]])
LN2, LN3 = math.log(2), math.log(3)


def _axes(attrs, ndim):
    return tuple(attrs["Axes"])


axes_activation(
    "DML_OPERATOR_ACTIVATION_SOFTMAX1", softmax, softmax_reference, _axes, (check_axes,), ulp=ULP,
    examples=(
        Example({IN: f32a([[[1, 5], [1, 5]], [[1, 5], [1, 5]]])},
                {OUT: f32a([[[0.25, 0.25], [0.25, 0.25]], [[0.25, 0.25], [0.25, 0.25]]])},
                {"Axes": (0, 1)}, "groups over dims 0 and 1: four equal values each"),
        Example({IN: f32a([[0, LN3], [-7, -7]])}, {OUT: f32a([[0.25, 0.75], [0.5, 0.5]])},
                {"Axes": (1,)}),
        Example({IN: np.float16([[0, 0, 0], [0, 0, 0]])},
                {OUT: np.float16([[1 / 6] * 3, [1 / 6] * 3])}, {"Axes": (1, 0)},
                "the order of Axes does not matter"),
    ),
)

axes_activation(
    "DML_OPERATOR_ACTIVATION_LOG_SOFTMAX1", log_softmax, log_softmax_reference, _axes,
    (check_axes,), ulp=ULP,
    examples=(
        Example({IN: f32a([[[0, 0], [8, 8]], [[0, 0], [8, 8]]])},
                {OUT: f32a([[[-LN2, -LN2], [-LN2, -LN2]], [[-LN2, -LN2], [-LN2, -LN2]]])},
                {"Axes": (0,)}),
        Example({IN: f32a([[1, 1 + LN3], [5, 5]])},
                {OUT: f32a([[-math.log(4), math.log(0.75)], [-LN2, -LN2]])}, {"Axes": (1,)}),
    ),
)

axes_activation(
    "DML_OPERATOR_ACTIVATION_HARDMAX1", hardmax, hardmax_reference, _axes, (check_axes,),
    examples=(
        Example({IN: PAGE_INPUT}, {OUT: f32a([[[1, 0], [0, 1]], [[1, 1], [0, 0]]])}, {"Axes": (1,)},
                "the page's example 1"),
        Example({IN: PAGE_INPUT}, {OUT: f32a([[[1, 0], [0, 1]], [[0, 1], [1, 0]]])}, {"Axes": (0,)},
                "the page's example 2"),
        Example({IN: PAGE_INPUT}, {OUT: f32a([[[0, 0], [0, 1]], [[0, 1], [0, 0]]])},
                {"Axes": (0, 2)}, "the page's example 3"),
        Example({IN: np.float16([[5, 1], [5, 5]])}, {OUT: np.float16([[1, 0], [0, 0]])},
                {"Axes": (1, 0)}, "a tie over both axes: the first in row-major order wins"),
    ),
)

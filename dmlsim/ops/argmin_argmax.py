"""ARGMIN and ARGMAX (FL 3_0): the index of the smallest / largest element over Axes.

The output keeps the input's DimensionCount with the reduced Axes of size 1; an index over
several axes is row-major over them in increasing axis order (the ARGMAX page's example 3:
7 for the whole {3, 3} tensor). AxisDirection picks the tie: INCREASING the first such
element, DECREASING the last. Where the pages are silent: NaN counts as larger than every
number (ARGMAX finds the first NaN, ARGMIN skips NaN unless all are NaN), -0.0 ties +0.0
(see ``_ordering``). The output is an integer type of the table (UINT32, INT32, 64-bit).
"""
import numpy as np

from .._core import dtypes
from .._core.registry import Example, OperatorDef, register
from ._ordering import (DECREASING, INCREASING, arg_extreme, direction_rule, reduced_sizes,
                        reference_arg_extreme)

IN, OUT = "InputTensor", "OutputTensor"


def _register(name, largest, examples):
    def kernel(InputTensor, *, Axes, AxisDirection, ctx):
        return arg_extreme(InputTensor, Axes, largest, AxisDirection == DECREASING)

    def reference(InputTensor, *, Axes, AxisDirection, ctx):
        return reference_arg_extreme(InputTensor, Axes, largest, AxisDirection == DECREASING)

    register(OperatorDef(f"DML_OPERATOR_{name}", kernel, reference, output_sizes=reduced_sizes,
                         rules=(direction_rule,), output_types=lambda spec: {OUT: dtypes.UINT32},
                         examples=examples, module=__name__))


X = np.float32([[1, 2, 3], [3, 0, 4], [2, 5, 2]])
TIES = np.float32([[2, 5], [1, 5], [1, 7]])
u32 = np.uint32
_register("ARGMAX", True, (
    Example({IN: X}, {OUT: u32([[1, 2, 1]])}, {"Axes": (0,), "AxisDirection": INCREASING},
            "the page's example 1: columns"),
    Example({IN: X}, {OUT: u32([[2], [2], [1]])}, {"Axes": (1,), "AxisDirection": INCREASING},
            "the page's example 2: rows"),
    Example({IN: X}, {OUT: u32([[7]])}, {"Axes": (0, 1), "AxisDirection": INCREASING},
            "the page's example 3: the whole tensor, row-major"),
    Example({IN: np.float32([3, 2, 1, 2, 3])}, {OUT: np.int64([4])},
            {"Axes": (0,), "AxisDirection": DECREASING}, "DECREASING: the last maximum"),
    Example({IN: np.float32([1, np.nan, 5, np.nan])}, {OUT: u32([1])},
            {"Axes": (0,), "AxisDirection": INCREASING}, "NaN is larger than any number"),
))
_register("ARGMIN", False, (
    Example({IN: TIES}, {OUT: u32([[1, 0]])}, {"Axes": (0,), "AxisDirection": INCREASING},
            "columns: ties go to the first minimum"),
    Example({IN: TIES}, {OUT: u32([[2, 1]])}, {"Axes": (0,), "AxisDirection": DECREASING},
            "DECREASING: the last minimum"),
    Example({IN: np.int8([[5, -3], [-3, 9]])}, {OUT: np.int32([[1]])},
            {"Axes": (0, 1), "AxisDirection": INCREASING}, "row-major over both axes"),
    Example({IN: np.float32([np.nan, 0.0, -0.0])}, {OUT: u32([1])},
            {"Axes": (0,), "AxisDirection": INCREASING}, "-0.0 ties +0.0; NaN is not small"),
))

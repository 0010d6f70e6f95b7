"""DML_OPERATOR_ELEMENT_WISE_IF: f(cond, a, b) = a if cond != 0, else b.

Any non-zero ConditionTensor element (not only 1) selects ATensor. ConditionTensor is UINT8;
ATensor, BTensor and OutputTensor share one DataType; all four have the same DimensionCount
and Sizes. The selected element is copied bit for bit (NaN payloads, -0.0, denormals).
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_sizes, same_type, sizes_of

C, A, B, OUT = "ConditionTensor", "ATensor", "BTensor", "OutputTensor"


def element_wise_if(ConditionTensor, ATensor, BTensor, *, ctx):
    return jnp.where(ConditionTensor != 0, ATensor, BTensor)


def element_wise_if_reference(ConditionTensor, ATensor, BTensor, *, ctx):
    flat = [a if c else b for c, a, b in zip(np.ravel(ConditionTensor), np.ravel(ATensor),
                                              np.ravel(BTensor))]
    return np.array(flat, np.asarray(ATensor).dtype).reshape(np.shape(ATensor))


register(OperatorDef(
    "DML_OPERATOR_ELEMENT_WISE_IF", element_wise_if, element_wise_if_reference,
    output_sizes=sizes_of(A, OUT),
    rules=(same_sizes(C, A, B), same_type(A, B, OUT)),
    output_types=lambda spec: {OUT: spec.tensor[A].data_type},
    examples=(
        Example({C: np.array([3, 0, 1, 255], np.uint8), A: np.array([1, 2, 3, 4], np.uint8),
                 B: np.array([9, 8, 7, 6], np.uint8)}, {OUT: np.array([1, 8, 3, 4], np.uint8)},
                note="3 and 255 are true, like 1"),
        Example({C: np.array([[1, 0], [1, 1]], np.uint8),
                 A: np.array([[1, 2], [3, 4]], np.float16),
                 B: np.array([[9, 8], [7, 6]], np.float16)},
                {OUT: np.array([[1, 8], [3, 4]], np.float16)}, note="the page's example"),
        Example({C: np.array([2, 255, 0, 128], np.uint8),
                 A: np.array([-0.0, np.nan, 1.0, np.inf], np.float32),
                 B: np.array([5.0, 5.0, -np.inf, 5.0], np.float32)},
                {OUT: np.array([-0.0, np.nan, -np.inf, np.inf], np.float32)},
                note="any non-zero condition (2, 255, 128) selects A"),
        Example({C: np.array([0, 7], np.uint8), A: np.array([1, -2**63], np.int64),
                 B: np.array([2**63 - 1, 0], np.int64)},
                {OUT: np.array([2**63 - 1, -2**63], np.int64)}),
    ),
    module=__name__))

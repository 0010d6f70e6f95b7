"""The ReLU family: RELU, LEAKY_RELU, THRESHOLDED_RELU, PARAMETERIZED_RELU, RELU_GRAD.

- RELU: f(x) = max(0, x). INT32/INT16/INT8 from FL 5_1. Where the page is silent: NaN stays
  NaN (max propagates NaN) and -0.0 gives +0.0 (the 0 operand).
- LEAKY_RELU: f(x) = x if x >= 0, else Alpha * x.
- THRESHOLDED_RELU: f(x) = x if x > Alpha, else 0 (NaN compares false: 0).
- PARAMETERIZED_RELU: f(x, slope) = x if x >= 0, else slope * x. SlopeTensor has the same
  Sizes as InputTensor (the page's constraint); broadcasting a per-channel slope is done as in
  DirectML, with zero strides in SlopeTensor's desc. Integer types (FL 5_1) multiply in the
  tensor's type and wrap.
- RELU_GRAD: OutputGradientTensor = InputTensor > 0 ? InputGradientTensor : 0, so the gradient
  at x == 0 (and at -0.0 and NaN) is 0, as the page's strict comparison says.

Alpha is a C FLOAT: rounded to float32 first. FLOAT16 computes in float32 and rounds once, so
a product may round twice (float32, then float16): 1 ULP for FLOAT16; FLOAT32 is exact.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_sizes, same_type, sizes_of
from ._activation import const, f32, float_unary, quiet
from ._elementwise import IN, OUT, unary, upcast

SLOPE, DY, DX = "SlopeTensor", "InputGradientTensor", "OutputGradientTensor"
f32a, i8 = np.float32, np.int8


def _relu(x, attrs):
    return jnp.where(x > 0, x, jnp.where(jnp.isnan(x), x, jnp.zeros_like(x)))


unary(
    "DML_OPERATOR_ACTIVATION_RELU", _relu,
    quiet(lambda x, a: np.where(x > 0, x, np.where(np.isnan(x), x, 0.0))),
    rules=(same_type(IN, OUT),),
    examples=(
        Example({IN: f32a([[-2, -0.5, 0], [1.5, 3, np.inf]])},
                {OUT: f32a([[0, 0, 0], [1.5, 3, np.inf]])}),
        Example({IN: i8([-128, -1, 0, 5, 127])}, {OUT: i8([0, 0, 0, 5, 127])},
                note="INT8 (FL 5_1)"),
        Example({IN: np.float16([np.nan, -np.inf, 65504])}, {OUT: np.float16([np.nan, 0, 65504])},
                note="NaN stays NaN"),
    ),
)

float_unary(
    "DML_OPERATOR_ACTIVATION_LEAKY_RELU",
    lambda x, a: jnp.where(x >= 0, x, const(a, "Alpha", x) * x),
    lambda x, a: np.where(x >= 0, x, f32(a, "Alpha") * x),
    ulp={"FLOAT16": 1},
    examples=(
        Example({IN: f32a([-4, -1, 0, 2, -np.inf])}, {OUT: f32a([-1, -0.25, 0, 2, -np.inf])},
                {"Alpha": 0.25}),
        Example({IN: np.float16([-3, 7])}, {OUT: np.float16([-0.375, 7])}, {"Alpha": 0.125}),
    ),
)

float_unary(
    "DML_OPERATOR_ACTIVATION_THRESHOLDED_RELU",
    lambda x, a: jnp.where(x > const(a, "Alpha", x), x, jnp.zeros_like(x)),
    lambda x, a: np.where(x > f32(a, "Alpha"), x, 0.0),
    examples=(
        Example({IN: f32a([0.5, 1.0, 1.5, -3, np.nan])}, {OUT: f32a([0, 0, 1.5, 0, 0])},
                {"Alpha": 1.0}, "x == Alpha is not above the threshold; NaN compares false"),
        Example({IN: np.float16([-2, -1, 4])}, {OUT: np.float16([0, -1, 4])}, {"Alpha": -1.5}),
    ),
)


def parameterized_relu(InputTensor, SlopeTensor, *, ctx):
    x, s = upcast(InputTensor, ctx), upcast(SlopeTensor, ctx)
    return jnp.where(x >= 0, x, s * x)


def parameterized_relu_reference(InputTensor, SlopeTensor, *, ctx):
    x, s = np.asarray(InputTensor), np.asarray(SlopeTensor)
    if np.issubdtype(x.dtype, np.integer):  # the tensor's own type: the product wraps
        prod = (x.astype(np.int64) * s.astype(np.int64)).astype(x.dtype)
        return np.where(x >= 0, x, prod).astype(np.float64)
    x, s = x.astype(np.float64), s.astype(np.float64)
    return np.where(x >= 0, x, s * x)


register(OperatorDef(
    "DML_OPERATOR_ACTIVATION_PARAMETERIZED_RELU", parameterized_relu,
    parameterized_relu_reference, output_sizes=sizes_of(IN, OUT), module=__name__,
    ulp={"FLOAT16": 1}, rules=(same_sizes(IN, SLOPE), same_type(IN, SLOPE, OUT)),
    examples=(
        Example({IN: f32a([[-2, 3], [-4, 0]]), SLOPE: f32a([[0.5, 0.5], [0.25, 2]])},
                {OUT: f32a([[-1, 3], [-1, 0]])}),
        Example({IN: np.int16([-3, 5, -100]), SLOPE: np.int16([2, 9, 400])},
                {OUT: np.int16([-6, 5, 25536])}, note="INT16 wraps: -100 * 400 = -40000 = 25536"),
    ),
))


def relu_grad(InputTensor, InputGradientTensor, *, ctx):
    return jnp.where(InputTensor > 0, InputGradientTensor, jnp.zeros_like(InputGradientTensor))


def relu_grad_reference(InputTensor, InputGradientTensor, *, ctx):
    x = np.asarray(InputTensor, np.float64)
    return np.where(x > 0, np.asarray(InputGradientTensor, np.float64), 0.0)


register(OperatorDef(
    "DML_OPERATOR_ACTIVATION_RELU_GRAD", relu_grad, relu_grad_reference,
    output_sizes=sizes_of(IN, DX), module=__name__,
    rules=(same_sizes(IN, DY), same_type(IN, DY, DX)),
    examples=(
        Example({IN: f32a([-1, 0, -0.0, 1e-30, 2, np.nan]), DY: f32a([5, 6, 7, 8, 9, 10])},
                {DX: f32a([0, 0, 0, 8, 9, 0])}, note="the gradient at 0 (and NaN) is 0"),
        Example({IN: i8([-5, 0, 3]), DY: i8([1, 2, -128])}, {DX: i8([0, 0, -128])},
                note="INT8 (FL 5_1)"),
    ),
))

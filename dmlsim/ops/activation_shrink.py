"""DML_OPERATOR_ACTIVATION_SHRINK: x - Bias if x > Threshold, x + Bias if x < -Threshold,
else 0. Integer tensors (FL 5_1) compute in float64 and convert back by truncation with
saturation (see ``_elementwise``)."""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, same_type
from ._elementwise import IN, OUT, unary


def _kernel(x, attrs):
    bias = jnp.asarray(attrs["Bias"], x.dtype)
    thr = jnp.asarray(attrs["Threshold"], x.dtype)
    return jnp.where(x > thr, x - bias, jnp.where(x < -thr, x + bias, jnp.zeros_like(x)))


def _reference(x, attrs):
    b, t = attrs["Bias"], attrs["Threshold"]
    return np.where(x > t, x - b, np.where(x < -t, x + b, 0.0))


unary(
    "DML_OPERATOR_ACTIVATION_SHRINK", _kernel, _reference, rules=(same_type(IN, OUT),),
    int_via_float=True,
    examples=(
        Example({IN: np.array([-2.0, -0.5, 0.0, 0.5, 2.0], np.float32)},
                {OUT: np.array([-1.5, 0.0, 0.0, 0.0, 1.5], np.float32)},
                {"Bias": 0.5, "Threshold": 1.0}),
        Example({IN: np.array([-10, 0, 10], np.int8)}, {OUT: np.array([-7, 0, 7], np.int8)},
                {"Bias": 3.0, "Threshold": 5.0}),
    ),
)

"""DML_OPERATOR_LP_NORMALIZATION: each element divided by the Lp norm of its sequence along
Axis, Output = Input / max(||Input||_P, Epsilon), P 1 or 2 (the page: "either 1 or 2").

The page names Epsilon only as "to avoid division by zero"; dmlsim takes the norm's
maximum with it (a zero sequence gives zeros), as PyTorch's normalize and OpenVINO's "max"
mode do. Axis is below the DimensionCount. Float32 arithmetic (FLOAT16 too, rounded once).
Tolerance (``error_bound``): |Output| ((n + 4) u), n the sequence length, u = 2^-24.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_sizes, same_type, sizes_of
from ._ieee import correctly_rounded
from ._movement import axis_in_range
from ._normalization import U

IN, OUT = "InputTensor", "OutputTensor"


def lp_normalization(InputTensor, *, Axis, Epsilon, P, ctx):
    x = ctx.upcast(InputTensor)
    if P == 1:
        norm = jnp.sum(jnp.abs(x), axis=Axis, keepdims=True)
    else:
        norm = correctly_rounded(jnp.sqrt)(jnp.sum(x * x, axis=Axis, keepdims=True))
    norm = jnp.maximum(norm, jnp.asarray(np.float32(Epsilon), x.dtype))
    return correctly_rounded(lambda a, b: a / b)(x, norm)


def lp_normalization_reference(InputTensor, *, Axis, Epsilon, P, ctx):
    x = np.asarray(InputTensor, np.float64)
    norm = (np.abs(x) ** P).sum(axis=Axis, keepdims=True) ** (1.0 / P)
    return x / np.maximum(norm, float(np.float32(Epsilon)))


def error_bound(inputs, spec, dtype):
    y = np.abs(lp_normalization_reference(inputs[IN], ctx=None, **spec.attr))
    return y * (np.asarray(inputs[IN]).shape[spec.attr["Axis"]] + 4) * U


def p_rule(spec, check):
    if spec.attr["P"] not in (1, 2):
        check.fail(f"P is {spec.attr['P']}; it must be 1 or 2")


f32 = np.float32
register(OperatorDef(
    "DML_OPERATOR_LP_NORMALIZATION", lp_normalization, lp_normalization_reference,
    output_sizes=sizes_of(IN, OUT),
    rules=(axis_in_range(), p_rule, same_sizes(IN, OUT), same_type(IN, OUT)),
    error_bound=error_bound, ulp={"FLOAT32": 0, "FLOAT16": 0}, examples=(
        Example({IN: f32([[3, 4], [0, 0]])}, {OUT: f32([[0.6, 0.8], [0, 0]])},
                {"Axis": 1, "Epsilon": 1e-5, "P": 2}, "P 2 along rows: 3 / 5, 4 / 5; a zero row"),
        Example({IN: f32([[1, -3]])}, {OUT: f32([[0.25, -0.75]])},
                {"Axis": 1, "Epsilon": 1e-5, "P": 1}, "P 1: x / (|1| + |-3|)"),
    ), module=__name__))

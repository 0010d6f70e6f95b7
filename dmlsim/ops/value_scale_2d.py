"""DML_OPERATOR_VALUE_SCALE_2D: Output = Scale * Input + Bias[channel].

InputTensor and OutputTensor are { BatchCount, ChannelCount, Height, Width } with the same
DataType and Sizes (FLOAT32, FLOAT16). ChannelCount (the size of Bias) must be 1 or 3 and
equal the input's channel dimension. Scale and Bias are C FLOATs (rounded to float32); the
product and the sum round once each in float32 (FLOAT16 computes in float32 and rounds once
more when stored): 1 ULP from the float64 reference.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, register, same_type, sizes_of

IN, OUT = "InputTensor", "OutputTensor"


def value_scale_2d(InputTensor, *, Scale, Bias, ctx):
    x = ctx.upcast(InputTensor)
    bias = jnp.asarray(np.float32(Bias), x.dtype).reshape(1, -1, 1, 1)
    return jnp.asarray(np.float32(Scale), x.dtype) * x + bias


def value_scale_2d_reference(InputTensor, *, Scale, Bias, ctx):
    x = np.asarray(InputTensor, np.float64)
    out = np.empty(x.shape)
    for c in range(x.shape[1]):
        out[:, c] = float(np.float32(Scale)) * x[:, c] + float(np.float32(Bias[c]))
    return out


def channels(spec, check):
    count, bias, t = spec.attr["ChannelCount"], spec.attr["Bias"], spec.tensor[IN]
    if count not in (1, 3):
        check.fail(f"ChannelCount is {count}; it must be 1 or 3")
    if bias is None or len(bias) != count:
        check.fail(f"Bias has {0 if bias is None else len(bias)} values but ChannelCount is "
                   f"{count}")
    if t.sizes[1] != count:
        check.fail(f"ChannelCount is {count} but InputTensor.Sizes[1] is {t.sizes[1]}; they must "
                   "match")


register(OperatorDef(
    "DML_OPERATOR_VALUE_SCALE_2D", value_scale_2d, value_scale_2d_reference,
    output_sizes=sizes_of(IN, OUT), rules=(same_type(IN, OUT), channels),
    ulp={"FLOAT32": 1, "FLOAT16": 1},
    examples=(
        Example({IN: np.float32(np.arange(12).reshape(1, 3, 2, 2))},
                {OUT: np.float32(np.arange(12).reshape(1, 3, 2, 2)) * 2 +
                 np.float32([10, 20, 30]).reshape(1, 3, 1, 1)},
                {"Scale": 2.0, "Bias": (10.0, 20.0, 30.0)}, "a bias per channel (RGB)"),
        Example({IN: np.float16([[[[1, 2]]]])}, {OUT: np.float16([[[[-0.5, 0.0]]]])},
                {"Scale": 0.5, "Bias": (-1.0,)}, "one channel, FLOAT16"),
    ),
    module=__name__))

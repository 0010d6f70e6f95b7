"""DML_OPERATOR_LOCAL_RESPONSE_NORMALIZATION:
Output = Input / (Bias + (Alpha / LocalSize) * sum(Input^2 over the local region))^Beta.

The local region of an element spans LocalSize elements along the channels (CrossChannel)
or LocalSize x LocalSize along Height and Width (otherwise), from floor((LocalSize - 1) / 2)
before the element to ceil((LocalSize - 1) / 2) after it (ONNX's LRN window; the page gives
no offsets); elements past the edges add nothing. The divisor is Alpha / LocalSize in both
modes, as the page's formula writes it. LocalSize is at least 1 (the page). Float32
arithmetic (FLOAT16 too, rounded once). Tolerance (``error_bound``): |Output| ((n + 2) u Beta
+ 8 u), n the region's size, u = 2^-24: the sum's error through the power, and the power
(examples: 2 ULP; a GPU's float32 power and division are not correctly rounded).
"""
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core.registry import Example, OperatorDef, register, same_sizes, same_type, sizes_of
from ._normalization import U

IN, OUT = "InputTensor", "OutputTensor"


def _window(cross, size):
    lo, hi = (size - 1) // 2, size // 2
    win = (1, size, 1, 1) if cross else (1, 1, size, size)
    pad = ((0, 0), (lo, hi), (0, 0), (0, 0)) if cross else ((0, 0), (0, 0), (lo, hi), (lo, hi))
    return win, pad


def local_response_normalization(InputTensor, *, CrossChannel, LocalSize, Alpha, Beta, Bias,
                                 ctx):
    x = ctx.upcast(InputTensor)
    win, pad = _window(CrossChannel, LocalSize)
    total = lax.reduce_window(x * x, jnp.zeros((), x.dtype), lax.add, win, (1, 1, 1, 1), pad)
    f = lambda v: jnp.asarray(np.float32(v), x.dtype)  # noqa: E731
    return x / (f(Bias) + f(Alpha) / f(LocalSize) * total) ** f(Beta)


def local_response_normalization_reference(InputTensor, *, CrossChannel, LocalSize, Alpha,
                                           Beta, Bias, ctx):
    x = np.asarray(InputTensor, np.float64)
    win, pad = _window(CrossChannel, LocalSize)
    sq = np.pad(x * x, pad)
    total = np.zeros_like(x)
    for t in np.ndindex(*win):  # every offset of the window, summed
        total += sq[tuple(slice(o, o + n) for o, n in zip(t, x.shape))]
    a, b, k = (float(np.float32(v)) for v in (Alpha, Beta, Bias))
    return x / (k + a / LocalSize * total) ** b


def error_bound(inputs, spec, dtype):
    a = spec.attr
    y = np.abs(local_response_normalization_reference(inputs[IN], ctx=None, **a))
    n = a["LocalSize"] * (1 if a["CrossChannel"] else a["LocalSize"])
    return y * ((n + 2) * U * abs(float(np.float32(a["Beta"]))) + 8 * U)


def size_rule(spec, check):
    if spec.attr["LocalSize"] < 1:
        check.fail(f"LocalSize is {spec.attr['LocalSize']}; it must be at least 1")


f32 = np.float32
X = f32([[[[1]], [[2]], [[3]]]])  # three channels
register(OperatorDef(
    "DML_OPERATOR_LOCAL_RESPONSE_NORMALIZATION", local_response_normalization,
    local_response_normalization_reference, output_sizes=sizes_of(IN, OUT),
    rules=(size_rule, same_sizes(IN, OUT), same_type(IN, OUT)), error_bound=error_bound,
    ulp={"FLOAT32": 2, "FLOAT16": 1}, examples=(
        Example({IN: X}, {OUT: f32([[[[1 / 6]], [[2 / 15]], [[3 / 14]]]])},
                {"CrossChannel": 1, "LocalSize": 3, "Alpha": 3.0, "Beta": 1.0, "Bias": 1.0},
                "across channels, size 3: 1 / (1 + 1 + 4), 2 / (1 + 14), 3 / (1 + 13)"),
        Example({IN: f32([[[[1, 2], [2, 0]]]])}, {OUT: f32([[[[0.1, 0.4], [0.4, 0]]]])},
                {"CrossChannel": 0, "LocalSize": 2, "Alpha": 2.0, "Beta": 1.0, "Bias": 1.0},
                "within a channel, 2x2 from the element on: 1 / (1 + (1 + 4 + 4 + 0)); at (0, 1)"
                " only {2, 0} is inside: 2 / (1 + 4)"),
        Example({IN: f32([[[[2]], [[2]]]])}, {OUT: f32([[[[2 / 9 ** 0.75]], [[2 / 5 ** 0.75]]]])},
                {"CrossChannel": 1, "LocalSize": 2, "Alpha": 2.0, "Beta": 0.75, "Bias": 1.0},
                "Beta 0.75, size 2 (a channel and the next): 2 / (1 + 8)^0.75, 2 / (1 + 4)^0.75"),
    ), module=__name__))

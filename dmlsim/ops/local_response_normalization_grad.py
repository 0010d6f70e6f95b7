"""DML_OPERATOR_LOCAL_RESPONSE_NORMALIZATION_GRAD (FL 3_1): the gradient of local response
normalization (same window, ``local_response_normalization``) with respect to its input.

The page gives no formula; with d = Bias + (Alpha / LocalSize) S, S the window sum of
Input^2 and Output = Input d^-Beta, it is

    OutputGradient[i] = InputGradient[i] d[i]^-Beta
        - 2 (Alpha / LocalSize) Beta Input[i] sum_j InputGradient[j] Input[j] d[j]^(-Beta-1)

over the elements j whose window holds i (the window mirrored: for an even LocalSize its
longer side swaps). All three tensors have one DataType and Sizes { N, C, H, W }. Float32
arithmetic (FLOAT16 upcast, rounded once). Tolerance (``error_bound``): (n + 8) u of the
two terms' magnitudes, n the window's size; examples within 4 ULP (float32 powers are not
correctly rounded).
"""
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core.registry import Example, OperatorDef, register, same_sizes, same_type, sizes_of
from ._normalization import U
from .local_response_normalization import _window, size_rule

X, DY, DX = "InputTensor", "InputGradientTensor", "OutputGradientTensor"


def _mirrored(pad):
    return tuple((hi, lo) for lo, hi in pad)


def local_response_normalization_grad(InputTensor, InputGradientTensor, *, CrossChannel,
                                      LocalSize, Alpha, Beta, Bias, ctx):
    x, dy = ctx.upcast(InputTensor), ctx.upcast(InputGradientTensor)
    f = lambda v: jnp.asarray(np.float32(v), x.dtype)  # noqa: E731
    win, pad = _window(CrossChannel, LocalSize)
    zero, ones = jnp.zeros((), x.dtype), (1, 1, 1, 1)
    d = f(Bias) + f(Alpha) / f(LocalSize) * lax.reduce_window(x * x, zero, lax.add, win, ones,
                                                              pad)
    back = lax.reduce_window(dy * x * d ** (-f(Beta) - 1), zero, lax.add, win, ones,
                             _mirrored(pad))
    return dy * d ** -f(Beta) - 2 * f(Alpha) / f(LocalSize) * f(Beta) * x * back


def _terms(x, dy, cross, size, alpha, beta, bias):
    """float64 (direct term, back term) by explicit window offsets (NumPy)."""
    win, pad = _window(cross, size)
    a, b, k = (float(np.float32(v)) for v in (alpha, beta, bias))
    sq, total = np.pad(x * x, pad), np.zeros_like(x)
    for t in np.ndindex(*win):
        total += sq[tuple(slice(o, o + n) for o, n in zip(t, x.shape))]
    d = k + a / size * total
    direct = dy * d ** -b
    back = np.zeros_like(x)
    src = np.pad(dy * x * d ** (-b - 1), _mirrored(pad))
    for t in np.ndindex(*win):  # offset t reads j = i + t - hi: every j whose window holds i
        back += src[tuple(slice(o, o + n) for o, n in zip(t, x.shape))]
    return direct, 2 * a / size * b * x * back


def local_response_normalization_grad_reference(InputTensor, InputGradientTensor, *,
                                                CrossChannel, LocalSize, Alpha, Beta, Bias,
                                                ctx):
    x, dy = np.asarray(InputTensor, np.float64), np.asarray(InputGradientTensor, np.float64)
    direct, back = _terms(x, dy, CrossChannel, LocalSize, Alpha, Beta, Bias)
    return direct - back


def error_bound(inputs, spec, dtype):
    a = spec.attr
    x, dy = np.asarray(inputs[X], np.float64), np.asarray(inputs[DY], np.float64)
    direct, back = _terms(np.abs(x), np.abs(dy), a["CrossChannel"], a["LocalSize"],
                          a["Alpha"], abs(a["Beta"]), a["Bias"])
    n = a["LocalSize"] * (1 if a["CrossChannel"] else a["LocalSize"])
    return (n + 8) * U * (np.abs(direct) + np.abs(back))


f32 = np.float32
register(OperatorDef(
    "DML_OPERATOR_LOCAL_RESPONSE_NORMALIZATION_GRAD", local_response_normalization_grad,
    local_response_normalization_grad_reference, output_sizes=sizes_of(X, DX),
    rules=(same_sizes(X, DY, DX), same_type(X, DY, DX), size_rule), error_bound=error_bound,
    ulp={"FLOAT32": 4, "FLOAT16": 1}, examples=(
        Example({X: f32([[[[1]], [[0]]]]), DY: f32([[[[1]], [[1]]]])},
                {DX: f32([[[[0]], [[1]]]])},
                {"CrossChannel": 1, "LocalSize": 1, "Alpha": 1.0, "Beta": 1.0, "Bias": 1.0},
                "LocalSize 1: y = x / (1 + x^2), y' = (1 - x^2) / (1 + x^2)^2: 0 at 1, 1 at 0"),
        Example({X: f32([[[[1]], [[2]]]]), DY: f32([[[[1]], [[1]]]])},
                {DX: f32([[[[1 / 9]], [[-52 / 225]]]])},
                {"CrossChannel": 1, "LocalSize": 2, "Alpha": 2.0, "Beta": 1.0, "Bias": 1.0},
                "LocalSize 2 across channels (window: the element and the next): d = [6, 5]; "
                "1/6 - 2/36 and -4/36 + 1/5 - 8/25"),
    ),
    module=__name__))

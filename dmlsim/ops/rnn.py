"""DML_OPERATOR_RNN: one layer of a simple recurrent network,
H_t = f(X_t W^T + H_(t-1) R^T + Wb + Rb), FORWARD, BACKWARD or BIDIRECTIONAL, with optional
bias, initial state and per-batch sequence lengths (layouts, lengths and tolerance:
``_recurrent``). ActivationDescs holds f, one per direction (any DML_OPERATOR_ACTIVATION_*,
tensors NULL, checked like fused activations). The page's equations are images; these are
ONNX's RNN equations, which ONNX Runtime lowers to this operator.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, register
from ._recurrent import (activation, activation_reference, directions, lengths, mm, operands,
                         out_field,
                         recurrent_bound, recurrent_sizes, reference_direction, run_direction)

X, W, R, B, H0, SEQ = ("InputTensor", "WeightTensor", "RecurrenceTensor", "BiasTensor",
                       "HiddenInitTensor", "SequenceLengthsTensor")
OUTS = ("OutputSequenceTensor", "OutputSingleTensor")


def rnn(InputTensor, WeightTensor, RecurrenceTensor, BiasTensor, HiddenInitTensor,
        SequenceLengthsTensor, *, ActivationDescs, Direction, ctx):
    x, w, r, b, h0 = operands(InputTensor, WeightTensor, RecurrenceTensor, BiasTensor,
                               HiddenInitTensor, jnp, ctx.upcast)
    hidden = w.shape[1]
    lens = lengths(SequenceLengthsTensor, x.shape[0], x.shape[1])
    seqs, finals = [], []
    for d, reverse in enumerate(directions(Direction)):
        f = activation(ActivationDescs[d], ctx, out_field(ctx))
        xw = mm(x, w[d].T) + b[d, :hidden] + b[d, hidden:]
        out, (h,) = run_direction(xw, lambda s, xt, d=d, f=f: (f(xt + mm(s[0], r[d].T)),),
                                  (h0[d],), lens, reverse)
        seqs.append(out)
        finals.append(h)
    return jnp.stack(seqs, 1), jnp.stack(finals, 0)[None]


def rnn_reference(InputTensor, WeightTensor, RecurrenceTensor, BiasTensor, HiddenInitTensor,
                  SequenceLengthsTensor, *, ActivationDescs, Direction, ctx):
    f64 = lambda t: np.asarray(t, np.float64)  # noqa: E731
    x, w, r, b, h0 = operands(InputTensor, WeightTensor, RecurrenceTensor, BiasTensor,
                               HiddenInitTensor, np, f64)
    hidden, steps, batch = w.shape[1], x.shape[0], x.shape[1]
    lens = [steps] * batch if SequenceLengthsTensor is None else \
        [min(int(v), steps) for v in np.asarray(SequenceLengthsTensor).reshape(-1)]
    seqs, finals = [], []
    for d, reverse in enumerate(directions(Direction)):
        f = activation_reference(ActivationDescs[d], ctx, out_field(ctx))
        xw = np.einsum("tbi,hi->tbh", x, w[d]) + b[d, :hidden] + b[d, hidden:]
        out, (h,) = reference_direction(
            xw, lambda s, xt, _, d=d, f=f: (f(xt + r[d] @ s[0]),), (h0[d],), lens, reverse)
        seqs.append(out)
        finals.append(h)
    return np.stack(seqs, 1), np.stack(finals, 0)[None]


def rnn_sizes(spec, check):
    return recurrent_sizes(spec, check, 1, 1, OUTS)


TANH = {"Type": "ACTIVATION_TANH"}
IDENT = {"Type": "ACTIVATION_IDENTITY"}
f32 = np.float32
XS = f32([[[[1], [2]], [[3], [0]]]])  # T 2, B 2, I 1
ONE = f32([[[[1]]]])  # W and R: H 1
SEQ_OUT = f32([[[[1], [2]]], [[[3.5], [1]]]])
register(OperatorDef(
    "DML_OPERATOR_RNN", rnn, rnn_reference, output_sizes=rnn_sizes,
    error_bound=recurrent_bound(OUTS), ulp={"FLOAT32": 8, "FLOAT16": 1}, examples=(
        Example({X: XS, W: ONE, R: f32([[[[0.5]]]])},
                {OUTS[0]: SEQ_OUT, OUTS[1]: f32([[[[3.5], [1]]]])},
                {"ActivationDescs": [IDENT], "Direction": 0},
                "identity f, two batch entries: h1 = x1, h2 = x2 + 0.5 h1"),
        Example({X: XS, W: ONE, R: f32([[[[0.5]]]])},
                {OUTS[0]: f32([[[[2.5], [2]]], [[[3], [0]]]]), OUTS[1]: f32([[[[2.5], [2]]]])},
                {"ActivationDescs": [IDENT], "Direction": 1},
                "BACKWARD: t = 1 first, then h0 = x0 + 0.5 x1"),
        Example({X: XS, W: ONE, R: f32([[[[0.5]]]]), SEQ: np.uint32([[[[1, 2]]]])},
                {OUTS[0]: f32([[[[1], [2]]], [[[0], [1]]]]), OUTS[1]: f32([[[[1], [1]]]])},
                {"ActivationDescs": [IDENT], "Direction": 0},
                "SequenceLengths {1, 2}: entry 0 stops after t = 0 (output 0 after)"),
        Example(
            {X: XS, W: np.concatenate([ONE, ONE], 1), R: f32([[[[0.5]], [[0.5]]]])},
            {OUTS[0]: np.concatenate([SEQ_OUT, f32([[[[2.5], [2]]], [[[3], [0]]]])], 1),
             OUTS[1]: f32([[[[3.5], [1]]], [[[2.5], [2]]]])},
            {"ActivationDescs": [IDENT, IDENT], "Direction": 2},
            "BIDIRECTIONAL: forward and backward, one per direction"),
        Example({X: f32([[[[0.5]]]]), W: f32([[[[2]]]]), R: ONE, B: f32([[[[0.25, 0.25]]]]),
                 H0: f32([[[[-1]]]])}, {OUTS[0]: f32([[[[np.tanh(0.5)]]]]),
                                       OUTS[1]: f32([[[[np.tanh(0.5)]]]])},
                {"ActivationDescs": [TANH], "Direction": 0},
                "tanh(x W + h0 R + Wb + Rb) = tanh(1 - 1 + 0.5)"),
    ), module=__name__))

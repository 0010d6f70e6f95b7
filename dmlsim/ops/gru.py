"""DML_OPERATOR_GRU: one layer of a gated recurrent unit, gates z, r, h in that order in W, R
and B (the page), FORWARD, BACKWARD or BIDIRECTIONAL (layouts, lengths and tolerance:
``_recurrent``). ONNX's GRU equations (the page's are images; ONNX Runtime lowers GRU to
this operator), f and g the ActivationDescs of each direction:

    z = f(X Wz^T + H Rz^T + Wbz + Rbz)       r = f(X Wr^T + H Rr^T + Wbr + Rbr)
    h~ = g(X Wh^T + (r * H) Rh^T + Rbh + Wbh)          LinearBeforeReset FALSE
    h~ = g(X Wh^T + r * (H Rh^T + Rbh) + Wbh)          LinearBeforeReset TRUE
    H' = (1 - z) * h~ + z * H
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


def _cell(h, xw, r, rb, f, g, lbr, dot):
    n = h.shape[-1]
    hz, hr = dot(h, r[:n]) + rb[:n], dot(h, r[n:2 * n]) + rb[n:2 * n]
    z, rr = f(xw[..., :n] + hz), f(xw[..., n:2 * n] + hr)
    if lbr:
        hh = g(xw[..., 2 * n:] + rr * (dot(h, r[2 * n:]) + rb[2 * n:]))
    else:
        hh = g(xw[..., 2 * n:] + dot(rr * h, r[2 * n:]) + rb[2 * n:])
    return (1 - z) * hh + z * h


def gru(InputTensor, WeightTensor, RecurrenceTensor, BiasTensor, HiddenInitTensor,
        SequenceLengthsTensor, *, ActivationDescs, Direction, LinearBeforeReset, ctx):
    x, w, r, b, h0 = operands(InputTensor, WeightTensor, RecurrenceTensor, BiasTensor,
                               HiddenInitTensor, jnp, ctx.upcast)
    g3 = w.shape[1]
    lens = lengths(SequenceLengthsTensor, x.shape[0], x.shape[1])
    seqs, finals = [], []
    for d, reverse in enumerate(directions(Direction)):
        f, g = (activation(ActivationDescs[2 * d + i], ctx, out_field(ctx)) for i in (0, 1))
        xw = mm(x, w[d].T) + b[d, :g3]

        def step(s, xt, d=d, f=f, g=g):
            return (_cell(s[0], xt, r[d], b[d, g3:], f, g, LinearBeforeReset,
                          lambda a, m: mm(a, m.T)),)
        out, (h,) = run_direction(xw, step, (h0[d],), lens, reverse)
        seqs.append(out)
        finals.append(h)
    return jnp.stack(seqs, 1), jnp.stack(finals, 0)[None]


def gru_reference(InputTensor, WeightTensor, RecurrenceTensor, BiasTensor, HiddenInitTensor,
                  SequenceLengthsTensor, *, ActivationDescs, Direction, LinearBeforeReset, ctx):
    f64 = lambda t: np.asarray(t, np.float64)  # noqa: E731
    x, w, r, b, h0 = operands(InputTensor, WeightTensor, RecurrenceTensor, BiasTensor,
                               HiddenInitTensor, np, f64)
    g3, steps, batch = w.shape[1], x.shape[0], x.shape[1]
    lens = [steps] * batch if SequenceLengthsTensor is None else \
        [min(int(v), steps) for v in np.asarray(SequenceLengthsTensor).reshape(-1)]
    seqs, finals = [], []
    for d, reverse in enumerate(directions(Direction)):
        f, g = (activation_reference(ActivationDescs[2 * d + i], ctx, out_field(ctx))
                for i in (0, 1))
        xw = np.einsum("tbi,gi->tbg", x, w[d]) + b[d, :g3]

        def step(s, xt, _, d=d, f=f, g=g):
            return (_cell(s[0], xt, r[d], b[d, g3:], f, g, LinearBeforeReset,
                          lambda a, m: m @ a),)
        out, (h,) = reference_direction(xw, step, (h0[d],), lens, reverse)
        seqs.append(out)
        finals.append(h)
    return np.stack(seqs, 1), np.stack(finals, 0)[None]


def gru_sizes(spec, check):
    return recurrent_sizes(spec, check, 3, 2, OUTS)


SIG, TANH = {"Type": "ACTIVATION_SIGMOID"}, {"Type": "ACTIVATION_TANH"}
IDENT = {"Type": "ACTIVATION_IDENTITY"}
f32 = np.float32
# H 1, I 1: W = (Wz, Wr, Wh) = (0, 0, 1), R = (0, 0, 1): z = r = f(0) = 1/2 with SIGMOID
WZ = f32([[[[0], [0], [1]]]])
RZ = f32([[[[0], [0], [1]]]])
BH = f32([[[[0, 0, 0, 0, 0, 2]]]])  # Wb z r h, then Rb z r h: Rbh = 2
register(OperatorDef(
    "DML_OPERATOR_GRU", gru, gru_reference, output_sizes=gru_sizes,
    error_bound=recurrent_bound(OUTS), ulp={"FLOAT32": 8, "FLOAT16": 1}, examples=(
        Example({X: f32([[[[2]]]]), W: WZ, R: RZ, B: BH, H0: f32([[[[4]]]])},
                {OUTS[0]: f32([[[[5]]]]), OUTS[1]: f32([[[[5]]]])},
                {"ActivationDescs": [SIG, IDENT], "Direction": 0, "LinearBeforeReset": 0},
                "z = r = 1/2; h~ = 2 + (r h) 1 + Rbh = 6; h = h~ / 2 + h / 2 = 5"),
        Example({X: f32([[[[2]]]]), W: WZ, R: RZ, B: BH, H0: f32([[[[4]]]])},
                {OUTS[0]: f32([[[[4.5]]]]), OUTS[1]: f32([[[[4.5]]]])},
                {"ActivationDescs": [SIG, IDENT], "Direction": 0, "LinearBeforeReset": 1},
                "LinearBeforeReset: h~ = 2 + r (h 1 + Rbh) = 5; h = 4.5"),
    ), module=__name__))

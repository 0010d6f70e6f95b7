"""DML_OPERATOR_LSTM: one layer of a long short-term memory network, gates i, o, f, c in that
order in W, R and B and peepholes i, o, f in P (the page), FORWARD, BACKWARD or
BIDIRECTIONAL (layouts, lengths and tolerance: ``_recurrent``). ONNX's LSTM equations (the
page's are images; ONNX Runtime lowers LSTM to this operator), f, g and h the three
ActivationDescs of each direction:

    i = f(X Wi^T + H Ri^T + Pi * C + Wbi + Rbi)
    f' = f(X Wf^T + H Rf^T + Pf * C + Wbf + Rbf), or 1 - i with CoupleInputForget
    C' = f' * C + i * g(X Wc^T + H Rc^T + Wbc + Rbc)
    o = f(X Wo^T + H Ro^T + Po * C' + Wbo + Rbo)        H' = o * h(C')

With UseClipThreshold, every activation's input is clipped to [-ClipThreshold,
ClipThreshold] first ("applied to the input of activations", the page), h's included.
OutputCellSingleTensor holds the last C.
"""
import jax.numpy as jnp
import numpy as np

from .._core.registry import Example, OperatorDef, register
from ._recurrent import (activation, activation_reference, directions, lengths, mm, operands,
                         out_field, recurrent_bound, recurrent_sizes, reference_direction,
                         run_direction)

X, W, R, B, H0, C0, SEQ, P = ("InputTensor", "WeightTensor", "RecurrenceTensor", "BiasTensor",
                              "HiddenInitTensor", "CellMemInitTensor", "SequenceLengthsTensor",
                              "PeepholeTensor")
OUTS = ("OutputSequenceTensor", "OutputSingleTensor", "OutputCellSingleTensor")


def _cell(state, xw, r, rb, p, acts, clip, couple, dot, xp):
    h, c = state
    n = h.shape[-1]
    lim = (lambda v: xp.clip(v, -clip, clip)) if clip is not None else (lambda v: v)
    f, g, hh = (lambda v, a=a: a(lim(v)) for a in acts)
    pre = xw + dot(h, r) + rb
    gi, go, gf, gc = (pre[..., k * n:(k + 1) * n] for k in range(4))
    i = f(gi + p[:n] * c)
    fg = 1 - i if couple else f(gf + p[2 * n:] * c)
    c2 = fg * c + i * g(gc)
    o = f(go + p[n:2 * n] * c2)
    return o * hh(c2), c2


def _prepare(ins, ctx, xp, cast):
    x, w, r, b, h0 = operands(*ins[:5], xp, cast)
    d, n, batch = w.shape[0], r.shape[-1], x.shape[1]
    c0 = cast(ins[5])[0] if ins[5] is not None else xp.zeros((d, batch, n), x.dtype)
    p = cast(ins[6])[0, 0] if ins[6] is not None else xp.zeros((d, 3 * n), x.dtype)
    return x, w, r, b, h0, c0, p


def lstm(InputTensor, WeightTensor, RecurrenceTensor, BiasTensor, HiddenInitTensor,
         CellMemInitTensor, SequenceLengthsTensor, PeepholeTensor, *, ActivationDescs,
         Direction, ClipThreshold, UseClipThreshold, CoupleInputForget, ctx):
    x, w, r, b, h0, c0, p = _prepare((InputTensor, WeightTensor, RecurrenceTensor, BiasTensor,
                                      HiddenInitTensor, CellMemInitTensor, PeepholeTensor),
                                     ctx, jnp, ctx.upcast)
    g4 = w.shape[1]
    clip = jnp.asarray(np.float32(ClipThreshold), x.dtype) if UseClipThreshold else None
    lens = lengths(SequenceLengthsTensor, x.shape[0], x.shape[1])
    seqs, hs, cs = [], [], []
    for d, reverse in enumerate(directions(Direction)):
        acts = [activation(ActivationDescs[3 * d + k], ctx, out_field(ctx)) for k in range(3)]
        xw = mm(x, w[d].T) + b[d, :g4]

        def step(s, xt, d=d, acts=acts):
            return _cell(s, xt, r[d].T, b[d, g4:], p[d], acts, clip, CoupleInputForget, mm, jnp)
        out, (h, c) = run_direction(xw, step, (h0[d], c0[d]), lens, reverse)
        seqs.append(out)
        hs.append(h)
        cs.append(c)
    return jnp.stack(seqs, 1), jnp.stack(hs, 0)[None], jnp.stack(cs, 0)[None]


def lstm_reference(InputTensor, WeightTensor, RecurrenceTensor, BiasTensor, HiddenInitTensor,
                   CellMemInitTensor, SequenceLengthsTensor, PeepholeTensor, *, ActivationDescs,
                   Direction, ClipThreshold, UseClipThreshold, CoupleInputForget, ctx):
    f64 = lambda t: np.asarray(t, np.float64)  # noqa: E731
    x, w, r, b, h0, c0, p = _prepare((InputTensor, WeightTensor, RecurrenceTensor, BiasTensor,
                                      HiddenInitTensor, CellMemInitTensor, PeepholeTensor),
                                     ctx, np, f64)
    g4, steps, batch = w.shape[1], x.shape[0], x.shape[1]
    clip = float(np.float32(ClipThreshold)) if UseClipThreshold else None
    lens = [steps] * batch if SequenceLengthsTensor is None else \
        [min(int(v), steps) for v in np.asarray(SequenceLengthsTensor).reshape(-1)]
    seqs, hs, cs = [], [], []
    for d, reverse in enumerate(directions(Direction)):
        acts = [activation_reference(ActivationDescs[3 * d + k], ctx, out_field(ctx))
                for k in range(3)]
        xw = np.einsum("tbi,gi->tbg", x, w[d]) + b[d, :g4]

        def step(s, xt, _, d=d, acts=acts):
            return _cell(s, xt, r[d], b[d, g4:], p[d], acts, clip, CoupleInputForget,
                         lambda a, m: m @ a, np)
        out, (h, c) = reference_direction(xw, step, (h0[d], c0[d]), lens, reverse)
        seqs.append(out)
        hs.append(h)
        cs.append(c)
    return np.stack(seqs, 1), np.stack(hs, 0)[None], np.stack(cs, 0)[None]


def lstm_sizes(spec, check):
    return recurrent_sizes(spec, check, 4, 3, OUTS, ("HiddenInitTensor", "CellMemInitTensor"))


IDENT = {"Type": "ACTIVATION_IDENTITY"}
f32 = np.float32
ONES4 = f32([[[[1], [1], [1], [1]]]])  # W: every gate's x weight 1 (H 1, I 1)
ZERO4 = np.zeros((1, 1, 4, 1), f32)
register(OperatorDef(
    "DML_OPERATOR_LSTM", lstm, lstm_reference, output_sizes=lstm_sizes,
    error_bound=recurrent_bound(OUTS), ulp={"FLOAT32": 8, "FLOAT16": 1}, examples=(
        Example({X: f32([[[[2]]]]), W: ONES4, R: ZERO4, C0: f32([[[[3]]]])},
                {OUTS[0]: f32([[[[20]]]]), OUTS[1]: f32([[[[20]]]]),
                 OUTS[2]: f32([[[[10]]]])},
                {"ActivationDescs": [IDENT] * 3, "Direction": 0, "ClipThreshold": 0.0,
                 "UseClipThreshold": 0, "CoupleInputForget": 0},
                "identity activations: i = o = f = g = 2; C = 2 * 3 + 2 * 2 = 10; H = 2 * 10"),
        Example({X: f32([[[[2]]]]), W: ONES4, R: ZERO4, C0: f32([[[[3]]]])},
                {OUTS[0]: f32([[[[2]]]]), OUTS[1]: f32([[[[2]]]]),
                 OUTS[2]: f32([[[[1]]]])},
                {"ActivationDescs": [IDENT] * 3, "Direction": 0, "ClipThreshold": 0.0,
                 "UseClipThreshold": 0, "CoupleInputForget": 1},
                "CoupleInputForget: f = 1 - i = -1; C = -3 + 4 = 1; H = o * C = 2"),
        Example({X: f32([[[[2]]]]), W: ONES4, R: ZERO4, C0: f32([[[[3]]]])},
                {OUTS[0]: f32([[[[2.25]]]]), OUTS[1]: f32([[[[2.25]]]]),
                 OUTS[2]: f32([[[[6.75]]]])},
                {"ActivationDescs": [IDENT] * 3, "Direction": 0, "ClipThreshold": 1.5,
                 "UseClipThreshold": 1, "CoupleInputForget": 0},
                "clip 1.5 at every activation's input: gates 1.5; C = 4.5 + 2.25; H = 1.5 h(1.5)"),
    ), module=__name__))

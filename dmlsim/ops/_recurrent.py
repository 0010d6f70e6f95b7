"""The recurrence shared by RNN, LSTM and GRU: tensor layouts and checks, the direction and
sequence-length handling (JAX ``lax.scan``; and a float64 reference stepping in Python),
and the activations of ActivationDescs (applied by the registry's activation kernels).

Layouts (the pages): X { 1, seq_length T, batch B, input I }; W { 1, D, G * H, I };
R { 1, D, G * H, H }; B { 1, 1, D, 2 * G * H } (the W biases then the R biases); initial
states { 1, D, B, H }; SequenceLengthsTensor { 1, 1, 1, B } (UINT32); OutputSequenceTensor
{ T, D, B, H }; OutputSingle { 1, D, B, H }. D is 2 for BIDIRECTIONAL, 1 otherwise; G the
gate count (RNN 1, GRU 3, LSTM 4).

Sequence lengths (where the pages are silent, as ONNX defines them): batch entry b runs
L_b steps; FORWARD steps t = 0 .. L_b - 1, BACKWARD (and the second direction) steps
t = L_b - 1 .. 0; OutputSequenceTensor is 0 at t >= L_b; OutputSingle holds the state after
the last step (the initial state when L_b is 0). A length above T is clamped to T (a
dispatch cannot fail on data).

Tolerance (``recurrent_bound``): 4 T (T + 1) (I + H + 8) u, absolute, for every output
(u = 2^-24): per step a dot product of I + H terms and a few activation roundings, carried
through T steps, on states of magnitude up to T + 1 (an LSTM cell sums at most T terms of
magnitude 1).
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core.registry import Sizes, apply_fused, apply_fused_reference, loop
from .._schema.members import members

FORWARD, BACKWARD, BIDIRECTIONAL = members(
    "DML_RECURRENT_NETWORK_DIRECTION", "FORWARD BACKWARD BIDIRECTIONAL")
HIGHEST = lax.Precision.HIGHEST


def directions(direction):
    return {FORWARD: (False,), BACKWARD: (True,), BIDIRECTIONAL: (False, True)}[direction]


def recurrent_sizes(spec, check, gates, acts_per_direction, outputs, states=("HiddenInitTensor",)):
    t, a = spec.tensor, spec.attr
    if a["Direction"] not in (FORWARD, BACKWARD, BIDIRECTIONAL):
        check.fail(f"Direction is {a['Direction']}, which is not a DML_RECURRENT_NETWORK_"
                   "DIRECTION (0 FORWARD, 1 BACKWARD, 2 BIDIRECTIONAL)")
    d = len(directions(a["Direction"]))
    x, w = t["InputTensor"].sizes, t["WeightTensor"].sizes
    if x[0] != 1:
        check.fail(f"InputTensor.Sizes is {list(x)}; it must be {{1, seq_length, batch_size, "
                   "input_size}")
    _, steps, batch, inputs = x
    if w[0] != 1 or w[1] != d or w[2] % gates or w[3] != inputs:
        check.fail(f"WeightTensor.Sizes is {list(w)}; it must be {{1, {d} (directions), "
                   f"{gates} * hidden_size, {inputs} (input_size)}}")
    h = w[2] // gates
    want = {"RecurrenceTensor": (1, d, gates * h, h), "BiasTensor": (1, 1, d, 2 * gates * h),
            "SequenceLengthsTensor": (1, 1, 1, batch), "PeepholeTensor": (1, 1, d, 3 * h)}
    want.update({s: (1, d, batch, h) for s in states})
    for f, sizes in want.items():
        if t.get(f) is not None and t[f].sizes != sizes:
            check.fail(f"{f}.Sizes is {list(t[f].sizes)}; it must be {list(sizes)}")
    n = len(a["ActivationDescs"] or ())
    if n != acts_per_direction * d:
        check.fail(f"ActivationDescCount is {n}; {spec.short_name} needs {acts_per_direction} "
                   f"activation(s) per direction, {acts_per_direction * d} for Direction "
                   f"{a['Direction']}")
    sizes = {"OutputSequenceTensor": (steps, d, batch, h)}
    sizes.update({o: (1, d, batch, h) for o in outputs if o != "OutputSequenceTensor"})
    return {o: Sizes(sizes[o], "InputTensor and WeightTensor") for o in outputs}


def operands(x, w, r, b, h0, xp, cast):
    """(x { T, B, I }, W { D, G H, I }, R, biases { D, 2 G H }, h0 { D, B, H }) in the
    compute type, absent biases and states 0."""
    x, w, r = cast(x)[0], cast(w)[0], cast(r)[0]
    d, gh, h = w.shape[0], w.shape[1], r.shape[-1]
    b = cast(b)[0, 0] if b is not None else xp.zeros((d, 2 * gh), x.dtype)
    h0 = cast(h0)[0] if h0 is not None else xp.zeros((d, x.shape[1], h), x.dtype)
    return x, w, r, b, h0


def lengths(seq, steps, batch):
    if seq is None:
        return jnp.full((batch,), steps, jnp.int32)
    return jnp.minimum(seq.reshape(-1).astype(jnp.int32), steps)


def run_direction(xw, step, init, lens, reverse):
    """Scan ``step(state, xw_t) -> state`` over xw { T, B, .. }; state[0] is the hidden
    state { B, H }. Returns (outputs { T, B, H } in t order, final state)."""
    steps = xw.shape[0]
    k = jnp.arange(steps)[:, None]
    idx = jnp.where(k < lens[None, :], lens[None, :] - 1 - k, k) if reverse else \
        jnp.broadcast_to(k, (steps, lens.shape[0]))
    seq = jnp.take_along_axis(xw, idx[:, :, None], axis=0) if reverse else xw

    def body(state, inp):
        x_t, valid = inp
        new = step(state, x_t)
        kept = tuple(jnp.where(valid[:, None], n, s) for n, s in zip(new, state))
        return kept, jnp.where(valid[:, None], new[0], jnp.zeros((), new[0].dtype))

    final, outs = loop(lax.scan, body, init, (seq, k < lens[None, :]))
    if reverse:
        outs = jnp.take_along_axis(outs, idx[:, :, None], axis=0)
        outs = jnp.where((k < lens[None, :])[:, :, None], outs, jnp.zeros((), outs.dtype))
    return outs, final


def reference_direction(xw, step, init, lens, reverse):
    """The same in float64, one batch entry and one step at a time."""
    steps, batch = xw.shape[:2]
    outs = np.zeros((steps, batch, init[0].shape[-1]))
    finals = [list(s) for s in init]
    for b in range(batch):
        state = tuple(s[b] for s in init)
        order = range(lens[b] - 1, -1, -1) if reverse else range(lens[b])
        for t in order:
            state = step(state, xw[t, b], b)
            outs[t, b] = state[0]
        for i, s in enumerate(state):
            finals[i][b] = s
    return outs, tuple(np.array(f) for f in finals)


def activation(sub, ctx, field):
    return lambda v: apply_fused(v, sub, ctx, field)


def activation_reference(sub, ctx, field):
    return lambda v: apply_fused_reference(v, sub, ctx, field)


def out_field(ctx):
    """An output of the operator that is bound (the activations' context)."""
    return next((f for f in ("OutputSequenceTensor", "OutputSingleTensor")
                 if ctx.outputs.get(f) is not None), "OutputSequenceTensor")


def mm(a, b):
    return jnp.matmul(a, b, precision=HIGHEST, preferred_element_type=a.dtype)


def recurrent_bound(outputs):
    """``error_bound`` for the recurrent operators: a bound per output field."""
    def error_bound(inputs, spec, dtype):
        x = spec.tensor["InputTensor"].sizes
        steps, i, h = x[1], x[3], spec.tensor["RecurrenceTensor"].sizes[3]
        return {o: 4 * steps * (steps + 1) * (i + h + 8) * 2.0 ** -24 for o in outputs}
    return error_bound

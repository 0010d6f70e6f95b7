"""ONNX's RNN, GRU and LSTM onto DML_OPERATOR_RNN / GRU / LSTM, as the DML provider maps them.

DML's recurrent operators take ONNX's tensors with one more leading dimension and ONNX's gate
orders (RNN: one gate; GRU: z, r, h; LSTM: i, o, f, c and peepholes i, o, f): X [T, B, I]
is read as { 1, T, B, I }, W [D, G*H, I] as { 1, D, G*H, I }, R [D, G*H, H] as
{ 1, D, G*H, H }, B [D, 2*G*H] as { 1, 1, D, 2*G*H } (zeros when absent), initial_h / c
[D, B, H] as { 1, D, B, H }, P [D, 3*H] as { 1, 1, D, 3*H }, sequence_lens (INT32) cast
to the UINT32 { 1, 1, 1, B } DML takes. Y [T, D, B, H] is OutputSequenceTensor as is, Y_h
and Y_c [D, B, H] the single outputs. ``layout`` 1 (batch first: X [B, T, I], Y [B, T, D,
H], states [B, D, H]) is read and written through permuted strides.

Attributes: ``direction`` forward / reverse / bidirectional -> FORWARD / BACKWARD /
BIDIRECTIONAL; ``activations`` (ONNX's names; defaults Tanh, Sigmoid + Tanh, Sigmoid + Tanh
+ Tanh per direction) become ActivationDescs, consuming ``activation_alpha`` /
``activation_beta`` in order as ONNX says; ``clip`` -> UseClipThreshold + ClipThreshold;
``input_forget`` -> CoupleInputForget; ``linear_before_reset`` -> LinearBeforeReset.
"""
from __future__ import annotations

import numpy as np

from .._api import public as dml
from . import dmlx_functions as F
from .dmlx_graph import Reinterpret
from .onnx_lower import Value, fail, packed_strides
from .onnx_rules import X
from .onnx_rules_nn import _text
from .run import operator_desc

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
DEFAULTS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"]}
# ONNX activation -> (DML activation, the parameters it takes from alpha / beta, defaults)
ACTS = {"Relu": ("RELU", ()), "Tanh": ("TANH", ()), "Sigmoid": ("SIGMOID", ()),
        "Softsign": ("SOFTSIGN", ()), "Softplus": ("SOFTPLUS", ()),
        "Affine": ("LINEAR", (("Alpha", 1.0), ("Beta", 0.0))),
        "LeakyRelu": ("LEAKY_RELU", (("Alpha", 0.01),)),
        "ThresholdedRelu": ("THRESHOLDED_RELU", (("Alpha", 1.0),)),
        "ScaledTanh": ("SCALED_TANH", (("Alpha", 1.0), ("Beta", 1.0))),
        "HardSigmoid": ("HARD_SIGMOID", (("Alpha", 0.2), ("Beta", 0.5))),
        "Elu": ("ELU", (("Alpha", 1.0),))}
DIRECTIONS = {"forward": 0, "reverse": 1, "bidirectional": 2}


def _activations(L, node, kind, attrs, dirs):
    names = [n.decode() if isinstance(n, bytes) else n for n in attrs.get("activations", [])]
    names = names or DEFAULTS[kind] * dirs
    alphas, betas = list(attrs.get("activation_alpha", [])), list(attrs.get("activation_beta", []))
    descs = []
    for name in names:
        if name not in ACTS:
            fail(dml.E_NOTIMPL, f"{L.label(node)}: activation {name} has no DML activation")
        dml_name, params = ACTS[name]
        values = {}
        for field, default in params:
            source = alphas if field == "Alpha" else betas
            values[field] = float(source.pop(0)) if source else default
        if dml_name == "SOFTPLUS":
            values["Steepness"] = 1.0
        descs.append(operator_desc("ACTIVATION_" + dml_name, **values))
    return descs


def _batch_first(shape, order):
    """Sizes and strides reading a packed tensor of ``shape`` in dimension ``order``."""
    strides = packed_strides(shape)
    return [shape[k] for k in order], [strides[k] for k in order]


def _rule(kind):
    def rule(L, node, ins, attrs, act):
        ins = list(ins) + [None] * (8 - len(ins))
        x, w, r, b, seq, h0 = ins[:6]
        c0, p = (ins[6], ins[7]) if kind == "LSTM" else (None, None)
        direction = DIRECTIONS.get(_text(attrs, "direction", "forward"))
        if direction is None:
            fail(dml.E_INVALIDARG, f"{L.label(node)}: direction {attrs['direction']!r}")
        d, g = 2 if direction == 2 else 1, GATES[kind]
        hidden = int(w.shape[1]) // g
        batch_first = int(attrs.get("layout", 0)) == 1
        t_, b_, i_ = (x.shape[1], x.shape[0], x.shape[2]) if batch_first else x.shape
        if batch_first:
            sizes, strides = _batch_first(list(x.shape), [1, 0, 2])
            ex = L.view(x, [1] + sizes, [0] + strides, name=node.input[0])
        else:
            ex = L.view(x, [1, t_, b_, i_], name=node.input[0])

        def state(v, name):
            if v is None:
                return None
            if batch_first:
                sizes, strides = _batch_first(list(v.shape), [1, 0, 2])
                return L.view(v, [1] + sizes, [0] + strides, name=name)
            return L.view(v, [1, d, b_, hidden], name=name)

        if b is None:
            b = Value((d, 2 * g * hidden), x.dtype, np.zeros((d, 2 * g * hidden), x.dtype), None)
        args = [ex, L.view(w, [1, d, g * hidden, i_], name=node.input[1]),
                L.view(r, [1, d, g * hidden, hidden], name=node.input[2]),
                L.view(b, [1, 1, d, 2 * g * hidden], name="B"),
                state(h0, "initial_h")]
        if kind == "LSTM":
            args.append(state(c0, "initial_c"))
        args.append(None if seq is None else F.Cast(L.view(seq, [1, 1, 1, b_], name="lens"),
                                                    dml.DML_TENSOR_DATA_TYPE_UINT32))
        extra = {"ActivationDescs": _activations(L, node, kind, attrs, d),
                 "Direction": direction}
        if kind == "LSTM":
            args.append(None if p is None else L.view(p, [1, 1, d, 3 * hidden], name="P"))
            clip = attrs.get("clip")
            extra.update(UseClipThreshold=int(clip is not None),
                         ClipThreshold=float(clip) if clip is not None else 0.0,
                         CoupleInputForget=int(attrs.get("input_forget", 0)))
        if kind == "GRU":
            extra["LinearBeforeReset"] = int(attrs.get("linear_before_reset", 0))
        outs = X[kind.capitalize()](*args, **extra)
        y = outs[0]
        result = [_sequence(L, y, t_, d, b_, hidden, x.dtype, batch_first)]
        for single in outs[1:]:
            result.append(_single(L, single, d, b_, hidden, x.dtype, batch_first))
        return result[:len(node.output)]
    return rule


def _sequence(L, y, t_, d, b_, hidden, dtype, batch_first):
    """Y: { T, D, B, H } as is, or as [B, T, D, H] (an identity through permuted strides)."""
    if not batch_first:
        return L.new(y, (t_, d, b_, hidden), dtype)
    sizes, strides = _batch_first([t_, d, b_, hidden], [2, 0, 1, 3])
    return L.new(X["Identity"](Reinterpret(y, sizes, strides)), tuple(sizes), dtype)


def _single(L, v, d, b_, hidden, dtype, batch_first):
    if not batch_first:
        return L.new(v, (d, b_, hidden), dtype)
    sizes, strides = _batch_first([1, d, b_, hidden], [0, 2, 1, 3])
    return L.new(X["Identity"](Reinterpret(v, sizes, strides)), (b_, d, hidden), dtype)


RULES = {kind: _rule(kind) for kind in GATES}

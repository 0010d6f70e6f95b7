"""RNN, GRU and LSTM with random weights against their float64 step-by-step references:
every direction, sequence lengths, initial states, biases, peepholes, clip, coupled gates,
LinearBeforeReset, FLOAT16; and ActivationDescs checked like fused activations."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

import dmlsim as dml

from reference_rig import run_against_reference

T, B, I, H = 5, 3, 4, 3
SIG, TANH = {"Type": "ACTIVATION_SIGMOID"}, {"Type": "ACTIVATION_TANH"}
RELU = {"Type": "ACTIVATION_RELU"}


def _inputs(kind, gates, direction, dtype, seq, key):
    rng = np.random.default_rng(zlib.crc32(repr(key).encode()))
    d = 2 if direction == 2 else 1
    r = lambda *s: (rng.standard_normal(s) * 0.5).astype(dtype)  # noqa: E731
    ins = {"InputTensor": r(1, T, B, I), "WeightTensor": r(1, d, gates * H, I),
           "RecurrenceTensor": r(1, d, gates * H, H), "BiasTensor": r(1, 1, d, 2 * gates * H),
           "HiddenInitTensor": r(1, d, B, H),
           "SequenceLengthsTensor": np.uint32([[[[5, 2, 0]]]]) if seq else None}
    if kind == "LSTM":
        ins = {**ins, "CellMemInitTensor": r(1, d, B, H), "PeepholeTensor": r(1, 1, d, 3 * H)}
        order = ("InputTensor", "WeightTensor", "RecurrenceTensor", "BiasTensor",
                 "HiddenInitTensor", "CellMemInitTensor", "SequenceLengthsTensor",
                 "PeepholeTensor")
        ins = {k: ins[k] for k in order}
    return ins, d


def _outputs(kind, d, dtype):
    z = lambda *s: np.zeros(s, dtype)  # noqa: E731
    out = {"OutputSequenceTensor": z(T, d, B, H), "OutputSingleTensor": z(1, d, B, H)}
    if kind == "LSTM":
        out["OutputCellSingleTensor"] = z(1, d, B, H)
    return out


DTYPES = pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["FLOAT32", "FLOAT16"])
DIRS = pytest.mark.parametrize("direction", [0, 1, 2], ids=["forward", "backward", "bidi"])
SEQ = pytest.mark.parametrize("seq", [False, True], ids=["full", "lengths"])


@DTYPES
@DIRS
@SEQ
def test_rnn(direction, seq, dtype):
    ins, d = _inputs("RNN", 1, direction, dtype, seq, ("rnn", direction, seq))
    run_against_reference("RNN", ins, {"ActivationDescs": [TANH, RELU][:d], "Direction":
                                       direction}, outputs=_outputs("RNN", d, dtype))


@DTYPES
@DIRS
@SEQ
@pytest.mark.parametrize("lbr", [0, 1])
def test_gru(direction, seq, lbr, dtype):
    ins, d = _inputs("GRU", 3, direction, dtype, seq, ("gru", direction, seq, lbr))
    run_against_reference("GRU", ins, {"ActivationDescs": [SIG, TANH] * d, "Direction": direction,
                                       "LinearBeforeReset": lbr},
                          outputs=_outputs("GRU", d, dtype))


@DTYPES
@DIRS
@SEQ
@pytest.mark.parametrize("clip,couple", [(0, 0), (1, 0), (0, 1)], ids=["plain", "clip",
                                                                       "coupled"])
def test_lstm(direction, seq, clip, couple, dtype):
    ins, d = _inputs("LSTM", 4, direction, dtype, seq, ("lstm", direction, seq, clip, couple))
    run_against_reference("LSTM", ins, {"ActivationDescs": [SIG, TANH, TANH] * d,
                                        "Direction": direction, "ClipThreshold": 0.75,
                                        "UseClipThreshold": clip, "CoupleInputForget": couple},
                          outputs=_outputs("LSTM", d, dtype))


def test_activation_descs_are_checked_like_fused_activations():
    ins, _ = _inputs("RNN", 1, 0, np.float32, False, "bad")
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    dev = dml.DMLCreateDevice(d3d, 0)
    cases = [
        ([TANH, TANH], "ActivationDescCount is 2; RNN needs 1 activation(s) per direction, 1 for "
         "Direction 0"),
        ([{"Type": "ELEMENT_WISE_ADD"}], "ActivationDescs[0] is DML_OPERATOR_ELEMENT_WISE_ADD, "
         "which is not an activation (DML_OPERATOR_ACTIVATION_*)"),
        ([dml.operator_desc("ACTIVATION_TANH", InputTensor=np.zeros(2, np.float32))],
         "ActivationDescs[0] (DML_OPERATOR_ACTIVATION_TANH): InputTensor must be NULL in a fused "
         "activation desc; the fused operator supplies the tensors"),
        ([{"Type": "ACTIVATION_SOFTPLUS", "Steepness": 0.0}],
         "ActivationDescs[0]: DML_OPERATOR_ACTIVATION_SOFTPLUS: Steepness"),
    ]
    for acts, message in cases:
        desc = dml.operator_desc("RNN", **{k: v for k, v in ins.items() if v is not None},
                                 **_outputs("RNN", 1, np.float32), ActivationDescs=acts,
                                 Direction=0)
        with pytest.raises(dml.HResultError) as info:
            dev.CreateOperator(desc)
        assert info.value.message.startswith(f"DML_OPERATOR_RNN: {message}"), info.value.message

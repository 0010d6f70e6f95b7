"""CONVOLUTION over many geometries against the tap-by-tap float64 reference (``_conv``),
within the float32 accumulation bound of ``dmlsim/ops/convolution.py``: 1 to 3 spatial
dimensions, strides, dilations, asymmetric padding, OutputPadding, groups and depthwise,
both directions and modes, bias and fused activations, FLOAT16, NHWC inputs through strides;
a precision case that a TF32 pass would fail; and the page's rules broken once."""
from __future__ import annotations

import zlib

import jax
import numpy as np
import pytest

import dmlsim as dml

from reference_rig import run_against_reference

# (name, input sizes, filter sizes, attributes beyond the defaults)
GEOMETRIES = [
    ("3x3 same", (2, 3, 7, 6), (4, 3, 3, 3), dict(StartPadding=(1, 1), EndPadding=(1, 1))),
    ("1x1", (1, 8, 5, 5), (6, 8, 1, 1), {}),
    ("stride 2, asymmetric pad", (1, 2, 9, 8), (3, 2, 3, 2),
     dict(Strides=(2, 2), StartPadding=(1, 0), EndPadding=(2, 1))),
    ("dilation 2x3", (1, 2, 10, 11), (2, 2, 3, 3), dict(Dilations=(2, 3))),
    ("groups 2", (1, 4, 6, 6), (6, 2, 3, 3), dict(GroupCount=2)),
    ("depthwise", (2, 5, 6, 7), (5, 1, 3, 3), dict(GroupCount=5, StartPadding=(1, 1),
                                                  EndPadding=(1, 1))),
    # depthwise is a sum over taps (_conv_forms.depthwise): multipliers, strides,
    # dilations, flipped filters, 1-D and 3-D, OutputPadding
    ("depthwise x2, stride 2, dilated, CONVOLUTION", (1, 3, 9, 8), (6, 1, 3, 2),
     dict(GroupCount=3, Strides=(2, 1), Dilations=(1, 2), StartPadding=(2, 0),
          EndPadding=(0, 1), Mode=0)),
    ("depthwise 1-D", (2, 4, 13), (4, 1, 5), dict(GroupCount=4, Strides=(2,),
                                                 StartPadding=(2,), EndPadding=(2,))),
    ("depthwise 3-D, OutputPadding", (1, 2, 4, 5, 3), (2, 1, 2, 2, 2),
     dict(GroupCount=2, StartPadding=(1, 0, 1), OutputPadding=(1, 0, 2))),
    # 1x1 is a product over channels (_conv_forms.pointwise)
    ("1x1 groups 2, stride 2, padded", (2, 4, 7, 6), (6, 2, 1, 1),
     dict(GroupCount=2, Strides=(2, 3), StartPadding=(1, 0), EndPadding=(0, 2))),
    ("1x1 1-D, OutputPadding", (1, 3, 9), (5, 3, 1), dict(OutputPadding=(2,))),
    ("CONVOLUTION mode", (1, 2, 5, 6), (3, 2, 2, 3), dict(Mode=0)),
    ("1-D", (2, 3, 17), (4, 3, 5), dict(Strides=(3,), StartPadding=(2,))),
    ("3-D", (1, 2, 5, 4, 6), (3, 2, 2, 3, 2), dict(StartPadding=(1, 0, 1),
                                                   EndPadding=(0, 1, 1))),
    ("OutputPadding", (1, 1, 4, 4), (2, 1, 2, 2), dict(OutputPadding=(1, 2))),
    ("BACKWARD", (1, 3, 4, 5), (3, 2, 3, 3), dict(Direction=1, Strides=(2, 2))),
    ("BACKWARD padded, dilated", (2, 2, 5, 4), (2, 3, 3, 2),
     dict(Direction=1, Strides=(2, 3), Dilations=(2, 1), StartPadding=(1, 2),
          EndPadding=(2, 0))),
    ("BACKWARD groups, CONVOLUTION", (1, 4, 3, 3), (4, 3, 2, 2),
     dict(Direction=1, Mode=0, GroupCount=2, Strides=(2, 1), OutputPadding=(1, 0))),
    ("BACKWARD 1-D", (1, 2, 6), (2, 2, 4), dict(Direction=1, Strides=(3,), StartPadding=(1,))),
]


def _attrs(nd, extra):
    a = {"Mode": 1, "Direction": 0, "DimensionCount": nd, "Strides": (1,) * nd,
         "Dilations": (1,) * nd, "StartPadding": (0,) * nd, "EndPadding": (0,) * nd,
         "OutputPadding": (0,) * nd, "GroupCount": 1}
    a.update(extra)
    return a


def _inputs(rng, xs, ws, dtype, m):
    """Input, filter and a bias of ``m`` output channels."""
    return {"InputTensor": rng.standard_normal(xs).astype(dtype),
            "FilterTensor": rng.standard_normal(ws).astype(dtype),
            "BiasTensor": rng.standard_normal((1, m) + (1,) * (len(xs) - 2)).astype(dtype)}


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["FLOAT32", "FLOAT16"])
@pytest.mark.parametrize("name,xs,ws,extra", GEOMETRIES, ids=[g[0] for g in GEOMETRIES])
def test_convolution_matches_the_reference(name, xs, ws, extra, dtype):
    rng = np.random.default_rng(zlib.crc32(f"{name}-{np.dtype(dtype).name}".encode()))
    a = _attrs(len(xs) - 2, extra)
    m = ws[0] if a["Direction"] == 0 else ws[1] * a["GroupCount"]  # BACKWARD: {C, M / G, k..}
    ins = _inputs(rng, xs, ws, dtype, m)
    run_against_reference("CONVOLUTION", ins, a)


def test_fused_activation_and_nhwc_input_through_strides():
    rng = np.random.default_rng(5)
    n, c, h, w = 2, 3, 5, 4
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    nhwc = (h * w * c, 1, w * c, c)  # element strides of an NHWC buffer, NCHW logical order
    ins = {"InputTensor": x, "FilterTensor": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
           "BiasTensor": None}
    a = {**_attrs(2, dict(StartPadding=(1, 1), EndPadding=(1, 1))),
         "FusedActivation": {"Type": "LEAKY_RELU", "Alpha": 0.1}}
    got = run_against_reference("CONVOLUTION", ins, a, strides={"InputTensor": nhwc})
    assert (np.asarray(got["OutputTensor"]) < 0).any()  # LEAKY_RELU keeps negatives, scaled


def test_float32_convolution_is_far_from_a_tf32_pass():
    """Inputs 1 + j 2^-12 and a filter of ones, 576 terms per output: in float32 every partial
    sum is exact, but a GPU's convolution algorithm may transform the data (Winograd), so
    dmlsim's result must be within 2^-10 (16 float32 ULP at 576) of the exact sums. A TF32
    pass rounds each input to 1 or 1 + 2^-10 first, an error of about 0.1 here; on a GPU
    the test checks that JAX's default precision shows it, so the bound would catch TF32."""
    rng = np.random.default_rng(11)
    x = (1 + rng.integers(0, 4, (1, 64, 8, 8)) * 2.0 ** -12).astype(np.float32)
    w = np.ones((8, 64, 3, 3), np.float32)
    desc = dml.operator_desc("CONVOLUTION", InputTensor=x, FilterTensor=w, **_attrs(2, {}))
    got = np.asarray(dml.run(desc, x, w, None)).astype(np.float64)
    sums = np.zeros((6, 6))
    for i in range(3):
        for j in range(3):
            sums += x[0, :, i:i + 6, j:j + 6].astype(np.float64).sum(axis=0)
    assert np.abs(got[0] - sums).max() <= 2.0 ** -10
    if jax.devices()[0].platform == "gpu":
        raw = np.asarray(jax.jit(lambda a, b: jax.lax.conv_general_dilated(
            a, b, (1, 1), "VALID"))(x, w)).astype(np.float64)
        assert np.abs(raw[0] - sums).max() > 2.0 ** -10, "the default precision was as exact"


BAD = [
    (dict(DimensionCount=1, Strides=(1,), Dilations=(1,), StartPadding=(0,), EndPadding=(0,),
          OutputPadding=(0,)),
     "DimensionCount is 1 but InputTensor.DimensionCount is 4; it must be "
     "InputTensor.DimensionCount - 2 = 2"),
    (dict(GroupCount=2), "GroupCount is 2; it must be at least 1 and divide the input channel "
     "count 3"),
    (dict(Strides=(1, 0)), "Strides[1] is 0; it must be at least 1"),
    (dict(Mode=2), "Mode is 2, which is not a DML_CONVOLUTION_MODE (0 CONVOLUTION, 1 "
     "CROSS_CORRELATION)"),
    (dict(Direction=5), "Direction is 5, which is not a DML_CONVOLUTION_DIRECTION (0 FORWARD, 1 "
     "BACKWARD)"),
    (dict(StartPadding=(0, 0, 0)), "DimensionCount is 2 but StartPadding has 3 entries"),
]


@pytest.mark.parametrize("change,message", BAD, ids=[m.split(" ")[0] for _, m in BAD])
def test_broken_rules_name_the_field(change, message):
    x, w = np.zeros((1, 3, 4, 4), np.float32), np.zeros((2, 3, 3, 3), np.float32)
    a = {**_attrs(2, {}), **change}
    desc = dml.operator_desc("CONVOLUTION", InputTensor=x, FilterTensor=w,
                             OutputTensor=np.zeros((1, 2, 2, 2), np.float32), **a)
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    with pytest.raises(dml.HResultError) as info:
        dml.DMLCreateDevice(d3d, 0).CreateOperator(desc)
    assert info.value.hresult == dml.E_INVALIDARG
    assert info.value.message == f"DML_OPERATOR_CONVOLUTION: {message}"


def test_wrong_filter_bias_and_output_sizes():
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    dev = dml.DMLCreateDevice(d3d, 0)
    x, z = np.zeros((1, 3, 4, 4), np.float32), np.zeros
    cases = [
        (dict(FilterTensor=z((2, 2, 3, 3), np.float32), OutputTensor=z((1, 2, 2, 2), np.float32)),
         "FilterTensor.Sizes [2, 2, 3, 3] must be {M, C / GroupCount = 3, k..} with M a multiple "
         "of GroupCount 1 (FORWARD)"),
        (dict(FilterTensor=z((2, 3, 3, 3), np.float32), BiasTensor=z((1, 3, 1, 1), np.float32),
              OutputTensor=z((1, 2, 2, 2), np.float32)),
         "BiasTensor.Sizes is [1, 3, 1, 1]; it must be [1, 2, 1, 1]"),
        (dict(FilterTensor=z((2, 3, 3, 3), np.float32), OutputTensor=z((1, 2, 3, 3), np.float32)),
         "OutputTensor.Sizes is [1,2,3,3] but InputTensor, FilterTensor and the window arrays "
         "give [1,2,2,2]"),
    ]
    for fields, message in cases:
        desc = dml.operator_desc("CONVOLUTION", InputTensor=x, **fields, **_attrs(2, {}))
        with pytest.raises(dml.HResultError) as info:
            dev.CreateOperator(desc)
        assert info.value.message == f"DML_OPERATOR_CONVOLUTION: {message}"


@pytest.mark.parametrize("mode,want", [("CROSS_CORRELATION", [21, 32]), ("CONVOLUTION", [12, 23])])
def test_the_public_mode_constants_pick_the_orientation(mode, want):
    """DML_CONVOLUTION_MODE_CONVOLUTION is 0 and flips the filter; CROSS_CORRELATION (1) uses
    it as given: x = [1, 2, 3], w = [1, 10]."""
    x, w = np.float32([[[1, 2, 3]]]), np.float32([[[1, 10]]])
    a = _attrs(1, {"Mode": getattr(dml, "DML_CONVOLUTION_MODE_" + mode)})
    got = dml.run(dml.operator_desc("CONVOLUTION", InputTensor=x, FilterTensor=w, **a), x, w,
                  None)
    assert got.ravel().tolist() == want


def test_large_cpu_convolutions_run_as_xlas_own(monkeypatch):
    """A CPU program with a CONVOLUTION of at least 2^29 products compiles with YNNPACK's
    convolution fusion off (``_conv_cpu.cpu_options``: XLA's own convolutions use every core,
    YNNPACK's one) and its other library fusions (dots, reductions) kept; a smaller one compiles
    as XLA's default (a GPU program takes none of these). Both through one operator and through
    a compiled graph (an ONNX Conv), and the large one's values stay within the convolution's
    error bound of a float64 reference."""
    import onnx
    from onnx import TensorProto, helper

    import dmlsim.onnx as donnx
    from dmlsim._core import steps
    from dmlsim.ops._conv_cpu import CPU_OPTIONS
    seen = []
    real = steps.compiler_options
    monkeypatch.setattr(steps, "compiler_options", lambda plan: seen.append(real(plan)) or
                        seen[-1])
    rng = np.random.default_rng(5)
    w = rng.standard_normal((128, 64, 3, 3)).astype(np.float32)
    results = {}
    for batch in (2, 1):  # 2 x 128 x 62 x 62 x 576 = 567 M products; half of it is 283 M
        x = rng.standard_normal((batch, 64, 64, 64)).astype(np.float32)
        seen.clear()
        desc = dml.operator_desc("CONVOLUTION", InputTensor=x, FilterTensor=w, DimensionCount=2,
                                 Mode=dml.DML_CONVOLUTION_MODE_CROSS_CORRELATION,
                                 Direction=dml.DML_CONVOLUTION_DIRECTION_FORWARD,
                                 Strides=[1, 1], Dilations=[1, 1], StartPadding=[0, 0],
                                 EndPadding=[0, 0], OutputPadding=[0, 0], GroupCount=1)
        y = dml.run(desc, x, w, None)
        graph = helper.make_graph(
            [helper.make_node("Conv", ["x", "w"], ["y"])], "conv",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape)],
            [onnx.numpy_helper.from_array(w, "w")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        (z,) = donnx.InferenceSession(model.SerializeToString()).run(None, {"x": x})
        results[batch] = [o for o in seen if o is not None]
        if batch == 2:  # the first 8 output channels against float64 tap sums
            taps = [np.einsum("nchw,oc->nohw", x[:, :, i:i + 62, j:j + 62].astype(np.float64),
                              w[:8, :, i, j].astype(np.float64)) for i in range(3)
                    for j in range(3)]
            want = np.sum(taps, axis=0)
            bound = 580 * 2.0 ** -24 * np.sum(np.abs(taps), axis=0) + 1e-30
            assert np.all(np.abs(y[:, :8] - want) <= bound)
            assert np.all(np.abs(z[:, :8] - want) <= bound)
    if jax.default_backend() == "cpu":
        assert results[2] and all(o == CPU_OPTIONS for o in results[2])  # operator and graph
        assert results[1] == []
    else:  # a GPU's programs take the GPU's options (steps.compiler_options), none of the CPU's
        assert results[1] and all(not set(o) & set(CPU_OPTIONS) for o in results[1] + results[2])

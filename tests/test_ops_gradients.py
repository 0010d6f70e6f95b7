"""The gradient operators, each checked a second way (the registry's tests compare every
kernel with its float64 NumPy reference): against ``jax.vjp`` of dmlsim's own forward kernel
(the forward operator's registered kernel, called on float64 arrays), or, where the forward
is a loop JAX cannot differentiate (ROI_ALIGN1), against its Jacobian built column by column
from the forward operator run through the faithful path. A training loop of ADAM_OPTIMIZER
feeds its moments back for three steps and is compared with Adam written out in NumPy.
Tolerance: float32 results within 2^-18 relative (a few float32 roundings of sums of at
most 64 terms) of the float64 vjp."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import dmlsim as dml
from dmlsim._core import registry
from dmlsim._core.registry import KernelContext
from dmlsim._core.tensor import TensorSpec

REG = registry.load_all()
RTOL = 2.0 ** -18


def _ctx(**outputs):
    """A float64 kernel context whose outputs have the given sizes."""
    return KernelContext(0, 0x6400, {k: TensorSpec(dml.DML_TENSOR_DATA_TYPE_FLOAT64, tuple(v))
                                     for k, v in outputs.items()})


def _vjp(name, inputs, attrs, wrt, cotangent, **outputs):
    """vjp of the forward operator ``name``'s kernel w.r.t. the inputs named in ``wrt``."""
    kernel, fields = REG[name].kernel, REG[name].inputs
    ctx = _ctx(**outputs)

    def f(*vals):
        args = dict(inputs, **dict(zip(wrt, vals)))
        out = kernel(*[args.get(k) for k in fields], **attrs, ctx=ctx)
        return out[0] if isinstance(out, tuple) else out
    primals = [jnp.asarray(inputs[k], jnp.float64) for k in wrt]
    return jax.vjp(f, *primals)[1](jnp.asarray(cotangent, jnp.float64))


def _close(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * np.abs(want).max())


def _grad_desc(name, **fields):
    return dml.operator_desc(name, **fields)


RNG = np.random.default_rng(2026)
W33 = {"DimensionCount": 2, "Strides": (2, 1), "WindowSize": (3, 2), "StartPadding": (1, 0),
       "EndPadding": (1, 1)}


@pytest.mark.parametrize("include", [False, True])
def test_average_pooling_grad_is_the_vjp_of_average_pooling(include):
    x = RNG.normal(size=(2, 3, 5, 6)).astype(np.float32)
    a = {**W33, "IncludePadding": int(include)}
    fwd = dml.run(dml.operator_desc("AVERAGE_POOLING", InputTensor=x, **a), x)
    dy = RNG.normal(size=fwd.shape).astype(np.float32)
    got = dml.run(_grad_desc("AVERAGE_POOLING_GRAD", InputGradientTensor=dy,
                             OutputGradientTensor=np.zeros_like(x), **a), dy)
    (want,) = _vjp("DML_OPERATOR_AVERAGE_POOLING", {"InputTensor": x}, a, ["InputTensor"], dy,
                   OutputTensor=fwd.shape)
    _close(got, want)


def test_max_pooling_grad_is_the_vjp_of_max_pooling2():
    x = RNG.permutation(2 * 3 * 5 * 6).reshape(2, 3, 5, 6).astype(np.float32)  # no ties
    a = {**W33, "Dilations": (1, 2)}
    desc = dml.operator_desc("MAX_POOLING2", InputTensor=x, **a)
    fwd = dml.run(desc, x)[0]
    dy = RNG.normal(size=fwd.shape).astype(np.float32)
    got = dml.run(_grad_desc("MAX_POOLING_GRAD", InputTensor=x, InputGradientTensor=dy, **a),
                  x, dy)
    (want,) = _vjp("DML_OPERATOR_MAX_POOLING2", {"InputTensor": x}, a, ["InputTensor"], dy,
                   OutputTensor=fwd.shape, OutputIndicesTensor=fwd.shape)
    _close(got, want)


def test_batch_normalization_grad_is_the_vjp_of_batch_normalization():
    x = RNG.normal(size=(3, 4, 2, 5)).astype(np.float32)
    per = (1, 4, 1, 1)
    m, s = RNG.normal(size=per).astype(np.float32), RNG.normal(size=per).astype(np.float32)
    v = RNG.uniform(0.5, 2, per).astype(np.float32)
    b = RNG.normal(size=per).astype(np.float32)
    dy = RNG.normal(size=x.shape).astype(np.float32)
    dx, ds, db = dml.run(_grad_desc(
        "BATCH_NORMALIZATION_GRAD", InputTensor=x, InputGradientTensor=dy, MeanTensor=m,
        VarianceTensor=v, ScaleTensor=s, Epsilon=0.01), x, dy, m, v, s)
    want = _vjp("DML_OPERATOR_BATCH_NORMALIZATION", {"InputTensor": x, "MeanTensor": m,
                                                      "VarianceTensor": v, "ScaleTensor": s,
                                                      "BiasTensor": b},
                {"Spatial": 1, "Epsilon": 0.01}, ["InputTensor", "ScaleTensor", "BiasTensor"],
                dy, OutputTensor=x.shape)
    for got, w in zip((dx, ds, db), want):
        _close(got, w)


def test_batch_normalization_training_grad_is_the_vjp_of_batch_normalization_training():
    x = RNG.normal(size=(4, 3, 2, 2)).astype(np.float32)
    per = (1, 3, 1, 1)
    s, b = RNG.normal(size=per).astype(np.float32), RNG.normal(size=per).astype(np.float32)
    _, mean, var = dml.run(dml.operator_desc("BATCH_NORMALIZATION_TRAINING", InputTensor=x,
                                             ScaleTensor=s, BiasTensor=b, Epsilon=0.001),
                           x, s, b, None)
    dy = RNG.normal(size=x.shape).astype(np.float32)
    dx, ds, db = dml.run(_grad_desc(
        "BATCH_NORMALIZATION_TRAINING_GRAD", InputTensor=x, InputGradientTensor=dy,
        MeanTensor=mean, VarianceTensor=var, ScaleTensor=s, Epsilon=0.001),
        x, dy, mean, var, s)
    want = _vjp("DML_OPERATOR_BATCH_NORMALIZATION_TRAINING",
                {"InputTensor": x, "ScaleTensor": s, "BiasTensor": b}, {"Epsilon": 0.001},
                ["InputTensor", "ScaleTensor", "BiasTensor"], dy, OutputTensor=x.shape,
                OutputMeanTensor=per, OutputVarianceTensor=per)
    for got, w in zip((dx, ds, db), want):
        _close(got, w)


@pytest.mark.parametrize("cross,size", [(1, 3), (1, 2), (0, 2), (0, 3)])
def test_local_response_normalization_grad_is_the_vjp(cross, size):
    x = RNG.normal(size=(2, 5, 4, 3)).astype(np.float32)
    a = {"CrossChannel": cross, "LocalSize": size, "Alpha": 0.3, "Beta": 0.75, "Bias": 1.5}
    dy = RNG.normal(size=x.shape).astype(np.float32)
    got = dml.run(_grad_desc("LOCAL_RESPONSE_NORMALIZATION_GRAD", InputTensor=x,
                             InputGradientTensor=dy, **a), x, dy)
    (want,) = _vjp("DML_OPERATOR_LOCAL_RESPONSE_NORMALIZATION", {"InputTensor": x}, a,
                   ["InputTensor"], dy, OutputTensor=x.shape)
    _close(got, want)


@pytest.mark.parametrize("mode", [0, 1], ids=["nearest", "linear"])
def test_resample_grad_is_the_vjp_of_resample1(mode):
    x = RNG.normal(size=(1, 2, 4, 5)).astype(np.float32)
    a = {"InterpolationMode": mode, "Scales": (1.0, 1.0, 1.75, 0.6),
         "InputPixelOffsets": (0.5, 0.5, 0.5, 0.25), "OutputPixelOffsets": (-0.5, -0.5, -0.5,
                                                                             0.1)}
    fwd = dml.run(dml.operator_desc("RESAMPLE1", InputTensor=x, **a), x)
    dy = RNG.normal(size=fwd.shape).astype(np.float32)
    got = dml.run(_grad_desc("RESAMPLE_GRAD", InputGradientTensor=dy, DimensionCount=4,
                             OutputGradientTensor=np.zeros_like(x), **a), dy)
    (want,) = _vjp("DML_OPERATOR_RESAMPLE1", {"InputTensor": x}, a, ["InputTensor"], dy,
                   OutputTensor=fwd.shape)
    _close(got, want)


@pytest.mark.parametrize("reduction", [2, 7], ids=["average", "max"])
def test_roi_align_grad_is_the_transposed_jacobian_of_roi_align1(reduction):
    """ROI_ALIGN1's sample loop has a dynamic trip count, which jax.vjp cannot differentiate:
    its Jacobian is taken column by column instead, by central differences of dmlsim's
    ROI_ALIGN1 kernel run in float64 (step 1e-6; normal inputs, so no MAX ties)."""
    rng = np.random.default_rng(17 + reduction)
    x = rng.normal(size=(2, 1, 4, 5)).astype(np.float32)
    rois = np.float32([[0.3, 0.2, 3.7, 3.1], [1, 0.5, 4.5, 2.5]])
    batch = np.uint32([1, 0])
    a = {"ReductionFunction": reduction, "InterpolationMode": 1, "SpatialScaleX": 1.0,
         "SpatialScaleY": 1.0, "InputPixelOffset": 0.5, "OutputPixelOffset": -0.5,
         "MinimumSamplesPerOutput": 1, "MaximumSamplesPerOutput": 3, "AlignRegionsToCorners": 0}
    kernel, ctx = REG["DML_OPERATOR_ROI_ALIGN1"].kernel, _ctx(OutputTensor=(2, 1, 2, 3))

    traced = jax.jit(lambda inp: kernel(inp, jnp.asarray(rois), jnp.asarray(batch), **a,
                                        OutOfBoundsInputValue=0.0, ctx=ctx))

    def forward(inp):  # jitted once: 2 x 40 evaluations of one compiled program
        return np.asarray(traced(jnp.asarray(inp, jnp.float64)))
    dy = rng.normal(size=(2, 1, 2, 3)).astype(np.float32)
    got, roi_grad = dml.run(_grad_desc(
        "ROI_ALIGN_GRAD", InputTensor=x, InputGradientTensor=dy, ROITensor=rois,
        BatchIndicesTensor=batch, OutputGradientTensor=np.zeros_like(x), **a), x, dy, rois,
        batch)
    assert roi_grad is None  # OutputROIGradientTensor not given
    want = np.zeros(x.size)
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = 1e-6
        e = e.reshape(x.shape)
        col = (forward(x.astype(np.float64) + e) - forward(x.astype(np.float64) - e)) / 2e-6
        want[k] = float((col * dy).sum())
    _close(got.reshape(-1), want)


def test_adam_optimizer_three_steps_feeding_the_moments_back():
    rng = np.random.default_rng(9)
    shape = (1, 2, 3, 4)
    x = rng.normal(size=shape).astype(np.float32)
    m = np.zeros(shape, np.float32)
    v = np.zeros(shape, np.float32)
    hyper = {"LearningRate": 0.01, "Beta1": 0.9, "Beta2": 0.999, "Epsilon": 1e-7}
    xr, mr, vr = (a.astype(np.float64) for a in (x, m, v))
    for step in (1, 2, 3):
        g = rng.normal(size=shape).astype(np.float32)
        t = np.full((1, 1, 1, 1), step, np.float32)
        desc = dml.operator_desc("ADAM_OPTIMIZER", InputParametersTensor=x,
                                 InputFirstMomentTensor=m, InputSecondMomentTensor=v,
                                 GradientTensor=g, TrainingStepTensor=t, **hyper)
        x, m, v = dml.run(desc, x, m, v, g, t)
        b1, b2 = float(np.float32(0.9)), float(np.float32(0.999))
        mr = b1 * mr + (1 - b1) * g
        vr = b2 * vr + (1 - b2) * g.astype(np.float64) ** 2
        alpha = np.sqrt(1 - b2 ** step) / (1 - b1 ** step)
        xr = xr - float(np.float32(0.01)) * alpha * mr / (np.sqrt(vr) + float(np.float32(1e-7)))
    np.testing.assert_allclose(x, xr, rtol=1e-5)
    np.testing.assert_allclose(m, mr, rtol=1e-5)
    np.testing.assert_allclose(v, vr, rtol=1e-5)


def test_roi_align_grad_needs_at_least_one_output():
    x = np.zeros((1, 1, 4, 4), np.float32)
    desc = dml.operator_desc("ROI_ALIGN_GRAD", InputTensor=x, InputGradientTensor=np.zeros(
        (1, 1, 1, 1), np.float32), ROITensor=np.float32([[0, 0, 4, 4]]),
        BatchIndicesTensor=np.uint32([0]), OutputGradientTensor=x, ReductionFunction=2,
        InterpolationMode=1, SpatialScaleX=1.0, SpatialScaleY=1.0, InputPixelOffset=0.5,
        OutputPixelOffset=-0.5, MinimumSamplesPerOutput=1, MaximumSamplesPerOutput=1,
        AlignRegionsToCorners=0)
    desc.Desc.OutputGradientTensor = None
    device = dml.DMLCreateDevice(dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0), 0)
    with pytest.raises(dml.HResultError) as e:
        device.CreateOperator(desc)
    assert e.value.hresult == dml.E_INVALIDARG
    assert "OutputGradientTensor and OutputROIGradientTensor are both null" in e.value.message

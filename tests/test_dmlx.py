"""dmlsim.dmlx: DirectMLX's graph builder. Values against float64 NumPy; layouts against the
TensorPolicy formulas of the DirectMLX guide page; mistakes against their exact messages."""
import numpy as np
import pytest

import dmlsim as dml
from dmlsim import dmlx
from dmlsim._core import registry

F32, F16, U32 = (dml.DML_TENSOR_DATA_TYPE_FLOAT32, dml.DML_TENSOR_DATA_TYPE_FLOAT16,
                 dml.DML_TENSOR_DATA_TYPE_UINT32)


@pytest.fixture(scope="module")
def device():
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    return dml.DMLCreateDevice(d3d, dml.DML_CREATE_DEVICE_FLAG_NONE)


def _input(graph, index, sizes, data_type=F32, flags=0):
    return dmlx.InputTensor(graph, index, dmlx.TensorDesc(data_type, flags, sizes))


def test_every_implemented_operator_has_a_function():
    names = {dmlx.dmlx_name(n) for n in registry.names()}
    assert names <= set(dmlx.FUNCTIONS)
    assert {"Add", "ActivationRelu", "Convolution", "Gemm", "TopK", "Equals", "IsNaN",
            "GatherND1", "MaxPooling2", "Upsample2D"} <= set(dmlx.FUNCTIONS)


def test_quadratic_formula_of_the_guide_page(device):
    """The guide page's example, with its operator overloads."""
    g = dmlx.Graph(device)
    a, b, c = (_input(g, i, [1, 2, 3, 4]) for i in range(3))
    x1 = -b + dmlx.Sqrt(b * b - 4 * a * c) / (2 * a)
    x2 = -b - dmlx.Sqrt(b * b - 4 * a * c) / (2 * a)
    op = g.Compile(dml.DML_EXECUTION_FLAG_NONE, [x1, x2])
    assert isinstance(op, dml.IDMLCompiledOperator)
    rng = np.random.default_rng(0)
    av = rng.uniform(1, 2, (1, 2, 3, 4)).astype(np.float32)
    bv = rng.uniform(4, 5, (1, 2, 3, 4)).astype(np.float32)
    cv = rng.uniform(-1, 1, (1, 2, 3, 4)).astype(np.float32)
    got1, got2 = g.compile([x1, x2])(av, bv, cv)
    A, B, C = (v.astype(np.float64) for v in (av, bv, cv))
    root = np.sqrt(B * B - 4 * A * C) / (2 * A)
    np.testing.assert_allclose(got1, -B + root, rtol=0, atol=1e-5)
    np.testing.assert_allclose(got2, -B - root, rtol=0, atol=1e-5)


def test_scalar_overloads_are_identity_with_scale_bias(device):
    g = dmlx.Graph(device)
    x = _input(g, 0, [1, 1, 1, 4])
    exprs = [x + 2.0, x - 2.0, x * 3.0, x / 4.0, 2.0 - x, 8.0 / x, -x, 3.0 * x]
    v = np.array([1, 2, 4, 8], np.float32).reshape(1, 1, 1, 4)
    got = g.compile(exprs)(v)
    want = [v + 2, v - 2, v * 3, v / 4, 2 - v, 8 / v, -v, 3 * v]
    for gv, w in zip(got, want):
        np.testing.assert_array_equal(gv, w.astype(np.float32))
    assert [e.node.name for e in exprs] == ["Identity"] * 8
    assert (x + x).node.name == "Add"


def test_elementwise_sizes_must_match_and_reinterpret_broadcasts(device):
    g = dmlx.Graph(device)
    a = _input(g, 0, [1, 3, 4, 4])
    b = _input(g, 1, [1, 3, 1, 4])
    with pytest.raises(dml.HResultError) as e:
        dmlx.Add(a, b)
    assert e.value.hresult == dml.E_INVALIDARG
    assert e.value.message == ("dmlx.Add: ATensor sizes [1, 3, 4, 4] and BTensor sizes "
                               "[1, 3, 1, 4] differ; use Reinterpret with zero strides to "
                               "broadcast")
    wide = dmlx.Reinterpret(b, [1, 3, 4, 4], [12, 4, 0, 1])
    y = a + wide
    av = np.arange(48, dtype=np.float32).reshape(1, 3, 4, 4)
    bv = np.arange(12, dtype=np.float32).reshape(1, 3, 1, 4) * 100
    np.testing.assert_array_equal(g.compile([y])(av, bv), av + bv)


def test_create_operator_errors_carry_the_function_name(device):
    g = dmlx.Graph(device)
    x = _input(g, 0, [1, 2, 5, 5])
    w = _input(g, 1, [4, 3, 3, 3])  # 3 input channels, the input has 2
    with pytest.raises(dml.HResultError) as e:
        dmlx.Convolution(x, w)
    assert e.value.hresult == dml.E_INVALIDARG
    assert e.value.message.startswith("dmlx.Convolution: DML_OPERATOR_CONVOLUTION: ")
    with pytest.raises(dml.HResultError) as e:
        dmlx.ActivationElu(x, bogus=1.0)
    assert e.value.message.startswith("dmlx.ActivationElu: no input or attribute 'bogus'")


def _conv_reference(x, w, b):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    out = np.zeros((n, m, h - kh + 1, wd - kw + 1))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,mc->nmhw", x[:, :, i:i + out.shape[2], j:j + out.shape[3]],
                             w[:, :, i, j])
    return np.maximum(out + b.reshape(1, m, 1, 1), 0)


@pytest.mark.parametrize("policy", ["Default", "InterleavedChannel"])
def test_convolution_with_bias_and_fused_relu_in_both_policies(device, policy):
    g = dmlx.Graph(device, getattr(dmlx.TensorPolicy, policy)())
    x = _input(g, 0, [2, 3, 6, 5])
    w = _input(g, 1, [4, 3, 3, 3], flags=dml.DML_TENSOR_FLAG_OWNED_BY_DML)
    b = _input(g, 2, [1, 4, 1, 1], flags=dml.DML_TENSOR_FLAG_OWNED_BY_DML)
    y = dmlx.ConvolutionBuilder(x, w, b).FusedActivation(dmlx.FusedActivation.Relu()).Build()
    d = y.GetOutputDesc()
    assert d.sizes == [2, 4, 4, 3]
    assert d.strides == ([48, 1, 12, 4] if policy == "InterleavedChannel" else None)
    rng = np.random.default_rng(1)
    xv = rng.standard_normal((2, 3, 6, 5)).astype(np.float32)
    wv = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    bv = rng.standard_normal((1, 4, 1, 1)).astype(np.float32)
    got = g.compile([y])(xv, wv, bv)
    want = _conv_reference(*(v.astype(np.float64) for v in (xv, wv, bv)))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)


def test_interleaved_channel_strides_are_nhwc():
    d = dmlx.TensorDesc(F32, [2, 3, 4, 5], dmlx.TensorPolicy.InterleavedChannel())
    assert d.strides == [60, 1, 15, 3]
    assert d.totalTensorSizeInBytes == 2 * 3 * 4 * 5 * 4


def test_max_pooling_returns_values_and_indices(device):
    g = dmlx.Graph(device)
    x = _input(g, 0, [1, 1, 4, 4])
    values, indices = dmlx.MaxPooling(x, [2, 2], [2, 2])
    assert indices is None and values.GetOutputDesc().sizes == [1, 1, 2, 2]
    values, indices = dmlx.MaxPoolingBuilder(x, [2, 2]).Strides([2, 2]).OutputIndices(
        True).Build()
    assert indices.GetOutputDesc().dataType == U32
    xv = np.array([[3, 1, 0, 9], [2, 8, 7, 4], [5, 5, 1, 1], [6, 0, 2, 3]],
                  np.float32).reshape(1, 1, 4, 4)
    v, i = g.compile([values, indices])(xv)
    np.testing.assert_array_equal(v.ravel(), [8, 9, 6, 3])
    np.testing.assert_array_equal(i.ravel(), [5, 3, 12, 15])  # flattened input positions


def test_reduce_defaults_to_every_axis_and_argmax_to_uint32(device):
    g = dmlx.Graph(device)
    x = _input(g, 0, [1, 2, 3, 4])
    s = dmlx.Reduce(x, dml.DML_REDUCE_FUNCTION_SUM)
    am = dmlx.Reduce(x, dml.DML_REDUCE_FUNCTION_ARGMAX, [3])
    assert s.GetOutputDesc().sizes == [1, 1, 1, 1]
    assert am.GetOutputDesc().dataType == U32 and am.GetOutputDesc().sizes == [1, 2, 3, 1]
    xv = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)
    sv, av = g.compile([s, am])(xv)
    assert sv.ravel()[0] == 276.0
    np.testing.assert_array_equal(av.ravel(), [3] * 6)


def test_top_k_follows_its_axis(device):
    g = dmlx.Graph(device)
    x = _input(g, 0, [1, 1, 5, 2])
    values, indices = dmlx.TopK(x, 2, 2)
    assert values.GetOutputDesc().sizes == [1, 1, 2, 2]  # DirectMLX would say [1, 1, 5, 2]
    xv = np.array([[1, 9], [7, 2], [3, 3], [8, 0], [5, 4]], np.float32).reshape(1, 1, 5, 2)
    v, i = g.compile([values, indices])(xv)
    np.testing.assert_array_equal(v.reshape(2, 2), [[8, 9], [7, 4]])
    np.testing.assert_array_equal(i.reshape(2, 2), [[3, 0], [1, 4]])


def test_slice_split_join_and_fill(device):
    g = dmlx.Graph(device)
    x = _input(g, 0, [1, 1, 2, 6])
    rev = dmlx.Slice(x, [0, 0, 0, 0], [1, 1, 2, 6], [1, 1, 1, -2])
    assert rev.GetOutputDesc().sizes == [1, 1, 2, 3]
    left, right = dmlx.Split(x, 3, [2, 4])
    back = dmlx.Join([right, left], 3)
    seq = dmlx.FillValueSequence(g, [1, 1, 1, 4], dml.DML_TENSOR_DATA_TYPE_INT32, 5, -2)
    xv = np.arange(12, dtype=np.float32).reshape(1, 1, 2, 6)
    r, j, s = g.compile([rev, back, seq])(xv)
    np.testing.assert_array_equal(r.reshape(2, 3), [[5, 3, 1], [11, 9, 7]])
    np.testing.assert_array_equal(j, np.concatenate([xv[..., 2:], xv[..., :2]], axis=3))
    np.testing.assert_array_equal(s.ravel(), [5, 3, 1, -1])
    assert s.dtype == np.int32


def test_constant_data_and_pruning(device):
    g = dmlx.Graph(device)
    x = _input(g, 0, [1, 1, 1, 4])
    k = dmlx.ConstantData(g, np.array([1, 2, 3, 4], np.float32),
                          dmlx.TensorDesc(F32, [1, 1, 1, 4]))
    unused = dmlx.Exp(x)
    y = x * k
    assert unused.node in g.nodes
    compiled = g.compile([y])  # Exp is left out: its unconnected output would be refused
    np.testing.assert_array_equal(compiled(np.full((1, 1, 1, 4), 2, np.float32)).ravel(),
                                  [2, 4, 6, 8])
    with pytest.raises(dml.HResultError) as e:
        dmlx.ConstantData(g, b"\0" * 4, dmlx.TensorDesc(F32, [1, 1, 1, 4]))
    assert e.value.message == ("dmlx.ConstantData: data holds 4 bytes but the desc's "
                               "TotalTensorSizeInBytes is 16")


def test_an_output_that_is_an_input_is_refused(device):
    g = dmlx.Graph(device)
    x = _input(g, 0, [1, 1, 1, 4])
    with pytest.raises(dml.HResultError) as e:
        g.Compile(0, [x])
    assert e.value.message == ("dmlx.Graph.Compile: outputs[0] is graph input 0 itself; a graph "
                               "output must come from an operator (wrap it in dmlx.Identity)")


def test_name_scopes_name_the_nodes(device):
    g = dmlx.Graph(device)
    x = _input(g, 0, [1, 1, 1, 4])
    with dmlx.NameScope(g, "block1"):
        with dmlx.NameScope(g, "inner"):
            y = dmlx.ActivationRelu(x)
    assert y.node.name == "block1_inner_ActivationRelu"


def test_fused_activation_factories_have_directmlx_defaults():
    F = dmlx.FusedActivation
    assert F.LeakyRelu().params == {"Alpha": 0.01}
    assert F.Elu().params == {"Alpha": 1.0}
    assert F.HardSigmoid().params == {"Alpha": 0.2, "Beta": 0.5}
    assert F.ScaledElu().params == {"Alpha": 1.67326319217681884765625,
                                    "Gamma": 1.05070102214813232421875}
    assert F.ScaledTanh().params == {"Alpha": 1.0, "Beta": 0.5}
    assert F.Softplus().params == {"Steepness": 1.0}
    assert F.Shrink().params == {"Bias": 0.0, "Threshold": 0.5}
    assert F.None_().AsDml() is None
    assert F.Relu().AsDml().Type == dml.DML_OPERATOR_ACTIVATION_RELU


def test_gemm_builder_and_float16(device):
    g = dmlx.Graph(device)
    a = _input(g, 0, [1, 1, 2, 3], F16)
    b = _input(g, 1, [1, 1, 4, 3], F16)
    c = _input(g, 2, [1, 1, 2, 4], F16)
    y = dmlx.GemmBuilder(a, b).C(c).TransB(dml.DML_MATRIX_TRANSFORM_TRANSPOSE).Alpha(
        0.5).FusedActivation(dmlx.FusedActivation.LeakyRelu(0.25)).Build()
    rng = np.random.default_rng(3)
    av, bv, cv = (rng.standard_normal(s).astype(np.float16)
                  for s in ((1, 1, 2, 3), (1, 1, 4, 3), (1, 1, 2, 4)))
    got = g.compile([y])(av, bv, cv)
    r = 0.5 * av.astype(np.float64)[0, 0] @ bv.astype(np.float64)[0, 0].T + cv[0, 0]
    want = np.where(r < 0, 0.25 * r, r).astype(np.float16)  # one rounding of the f32 value
    assert got.dtype == np.float16
    np.testing.assert_allclose(got[0, 0].astype(np.float64), want.astype(np.float64),
                               rtol=2 ** -10, atol=2 ** -14)


def test_signature_defaults_and_generic_functions(device):
    g = dmlx.Graph(device)
    x = _input(g, 0, [1, 1, 1, 4])
    lo = dmlx.Clip(x, -1.0, 1.0)
    elu = dmlx.ActivationElu(x)
    eq = dmlx.Equals(x, lo)
    xv = np.array([-3, -0.5, 0.5, 3], np.float32).reshape(1, 1, 1, 4)
    c, e, q = g.compile([lo, elu, eq])(xv)
    np.testing.assert_array_equal(c.ravel(), [-1, -0.5, 0.5, 1])
    np.testing.assert_allclose(e.ravel(), np.where(xv < 0, np.expm1(xv.astype(np.float64)),
                                                   xv).ravel(), rtol=1e-6, atol=1e-7)
    assert q.dtype == np.uint8 and q.ravel().tolist() == [0, 1, 1, 0]


def test_the_small_cnn_example_agrees_with_its_reference(capsys):
    """examples/small_cnn.py: raw CompileGraph and dmlx, FLOAT32/FLOAT16, NCHW/NHWC, within
    its tolerances of the float64 reference and bit-identical to each other."""
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / "small_cnn.py"
    spec = importlib.util.spec_from_file_location("small_cnn", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main()
    assert capsys.readouterr().out.count(" ok") == 8


def test_a_compiled_callable_is_initialized_once_and_runs_again(device):
    """Calling graph.compile(...) twice with new arrays (a training loop) executes the same
    prepared list: the operator is initialized once (a second initialization would remove
    the device), and OWNED_BY_DML inputs keep the values of the first call."""
    g = dmlx.Graph(device)
    x = _input(g, 0, [1, 1, 2, 2])
    w = _input(g, 1, [1, 1, 2, 2], flags=dml.DML_TENSOR_FLAG_OWNED_BY_DML)
    run = g.compile([x * w])
    one, two = np.float32([[[[1, 2], [3, 4]]]]), np.float32([[[[2, 2], [2, 2]]]])
    np.testing.assert_array_equal(run(one, two), one * two)
    np.testing.assert_array_equal(run(two, one), two * two)  # w is the first call's
    np.testing.assert_array_equal(run(one, None), one * two)


def test_the_training_loop_example_fits_least_squares(capsys):
    """examples/train_linear_adam.py: GEMM, REDUCE and ADAM_OPTIMIZER in one graph, 400 steps
    fed back; every step against float64 NumPy and its fit against least squares."""
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / "train_linear_adam.py"
    spec = importlib.util.spec_from_file_location("train_linear_adam", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main()
    assert "ok: every step matches" in capsys.readouterr().out

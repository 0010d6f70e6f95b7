"""Pooling over many window geometries against the float64 references that walk every
output position (``dmlsim/ops/_pooling.py``): strides, asymmetric padding, dilations, 3-D
windows, IncludePadding, P 1..3, MAX_POOLING's indices (and its integer types, exact), and
the rules broken once."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

import dmlsim as dml

from reference_rig import run_against_reference

# (name, input sizes, window attributes)
GEOMETRIES = [
    ("3x3 s1 same", (2, 3, 6, 7), dict(WindowSize=(3, 3), Strides=(1, 1), StartPadding=(1, 1),
                                       EndPadding=(1, 1))),
    ("2x2 s2", (1, 2, 8, 6), dict(WindowSize=(2, 2), Strides=(2, 2))),
    ("3x2 s(2,1) asymmetric", (1, 2, 9, 5), dict(WindowSize=(3, 2), Strides=(2, 1),
                                                 StartPadding=(2, 0), EndPadding=(0, 1))),
    ("3-D", (1, 2, 4, 5, 3), dict(WindowSize=(2, 3, 2), Strides=(1, 2, 1),
                                  StartPadding=(1, 1, 0), EndPadding=(0, 1, 1))),
    ("global", (2, 4, 5, 5), dict(WindowSize=(5, 5), Strides=(1, 1))),
]
# past _pool_reduce.TAPS_MAX taps: one reduce_window instead of a slice per tap
MANY = [("9x8 many taps", (1, 2, 12, 13), dict(WindowSize=(9, 8), Strides=(2, 3),
                                               StartPadding=(2, 1), EndPadding=(1, 3))),
        ("global 10x12", (2, 3, 10, 12), dict(WindowSize=(10, 12)))]
ALL = GEOMETRIES + MANY
DILATED = [("dilated", (1, 2, 9, 8), dict(WindowSize=(2, 3), Strides=(1, 2), Dilations=(3, 2),
                                          StartPadding=(1, 0), EndPadding=(0, 2)))]


def _attrs(nd, extra, dilations=False):
    a = {"DimensionCount": nd, "Strides": (1,) * nd, "StartPadding": (0,) * nd,
         "EndPadding": (0,) * nd}
    if dilations:
        a["Dilations"] = (1,) * nd
    a.update(extra)
    return a


def _x(name, xs, dtype):
    rng = np.random.default_rng(zlib.crc32(f"{name}{np.dtype(dtype).name}".encode()))
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(xs).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, xs, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["FLOAT32", "FLOAT16"])
@pytest.mark.parametrize("include", [0, 1], ids=["exclude", "include"])
@pytest.mark.parametrize("name,xs,extra", GEOMETRIES + DILATED,
                         ids=[g[0] for g in GEOMETRIES + DILATED])
def test_average_pooling(name, xs, extra, include, dtype):
    _average(name, xs, extra, include, dtype)


@pytest.mark.parametrize("include", [0, 1], ids=["exclude", "include"])
@pytest.mark.parametrize("name,xs,extra", MANY, ids=[g[0] for g in MANY])
def test_average_and_lp_pooling_of_many_taps(name, xs, extra, include):
    _average(name, xs, extra, include, np.float32)
    test_lp_pooling(name, xs, extra, 2 + include)


def _average(name, xs, extra, include, dtype):
    op = "AVERAGE_POOLING1" if "Dilations" in extra else "AVERAGE_POOLING"
    a = {**_attrs(len(xs) - 2, extra, op.endswith("1")), "IncludePadding": include}
    run_against_reference(op, {"InputTensor": _x(name, xs, dtype)}, a)


@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("name,xs,extra", GEOMETRIES + DILATED,
                         ids=[g[0] for g in GEOMETRIES + DILATED])
def test_lp_pooling(name, xs, extra, p):
    op = "LP_POOLING1" if "Dilations" in extra else "LP_POOLING"
    a = {**_attrs(len(xs) - 2, extra, op.endswith("1")), "P": p}
    run_against_reference(op, {"InputTensor": _x(name, xs, np.float32)}, a)


@pytest.mark.parametrize("dtype,name,xs,extra", [
    (d, *g) for g in GEOMETRIES + DILATED for d in (np.float32, np.float16, np.int8, np.uint8,
                                                    np.int64, np.uint32)] + [
    (d, *g) for g in MANY for d in (np.float32, np.int8)],
    ids=lambda v: v if isinstance(v, str) else np.dtype(v).name if isinstance(v, type) else None)
def test_max_pooling_values_and_indices(name, xs, extra, dtype):
    a = _attrs(len(xs) - 2, extra, True)
    x = _x(name, xs, dtype)
    got = run_against_reference("MAX_POOLING2", {"InputTensor": x}, a,
                                outputs={"OutputIndicesTensor": _indices(xs, a)})
    idx = np.asarray(got["OutputIndicesTensor"]).astype(np.int64)
    assert np.array_equal(x.reshape(-1)[idx].view(f"u{x.itemsize}"),
                          np.asarray(got["OutputTensor"]).view(f"u{x.itemsize}"))


def _indices(xs, a):
    """A UINT32 OutputIndicesTensor of the pages' output sizes (an optional output)."""
    dil = a.get("Dilations") or (1,) * a["DimensionCount"]
    out = [(n + a["StartPadding"][d] + a["EndPadding"][d] - (a["WindowSize"][d] - 1) * dil[d]
            - 1) // a["Strides"][d] + 1 for d, n in enumerate(xs[2:])]
    return np.zeros(tuple(xs[:2]) + tuple(out), np.uint32)


def test_max_pooling_ties_pick_the_first_and_nan_loses():
    x = np.float32([[[[np.nan, -0.0, 0.0, np.nan], [3, 3, np.nan, np.nan]]]])
    a = {**_attrs(2, dict(WindowSize=(2, 2), Strides=(2, 2))), "Dilations": (1, 1)}
    got = run_against_reference("MAX_POOLING2", {"InputTensor": x}, a,
                                outputs={"OutputIndicesTensor": _indices(x.shape, a)})
    assert got["OutputIndicesTensor"].tolist() == [[[[4, 2]]]]
    y = np.asarray(got["OutputTensor"])
    assert y[0, 0, 0, 0] == 3 and np.signbit(y[0, 0, 0, 1]) == np.False_  # +0.0, index 2


@pytest.mark.parametrize("indexed", [True, False], ids=["indexed", "maxima alone"])
def test_many_tap_windows_keep_the_tie_and_nan_rules(indexed):
    """A window of 81 taps reduces in an order XLA picks; its total order (padding below NaN
    below numbers, equals by index) still gives the first of -0.0 and +0.0 and lets NaN lose."""
    x = np.full((1, 2, 9, 10), np.nan, np.float32)
    x[0, 0, 4, 7], x[0, 0, 6, 2] = -0.0, 0.0      # the first zero is -0.0, at 4 * 10 + 7 = 47
    x[0, 1, 2, 3], x[0, 1, 5, 5] = -7.0, -7.0     # equal maxima: the first, 90 + 23 = 113
    a = _attrs(2, dict(WindowSize=(9, 9), Strides=(1, 1), StartPadding=(0, 0),
                       EndPadding=(0, 0)), True)
    outs = {"OutputIndicesTensor": _indices(x.shape, a)} if indexed else None
    got = run_against_reference("MAX_POOLING2", {"InputTensor": x}, a, outputs=outs)
    y = np.asarray(got["OutputTensor"])
    assert np.signbit(y[0, 0, 0, 0]) and y[0, 0, 0, 0] == 0  # -0.0 (window at column 0)
    assert y[0, 0, 0, 1] == 0 and np.signbit(y[0, 0, 0, 1])  # still -0.0 first at column 1
    assert y[0, 1].ravel().tolist() == [-7.0, -7.0]
    if indexed:
        assert got["OutputIndicesTensor"].ravel().tolist() == [47, 47, 113, 113]
    only_nan = np.full((1, 1, 9, 9), np.nan, np.float32)
    got = run_against_reference("MAX_POOLING2", {"InputTensor": only_nan}, a, outputs={
        "OutputIndicesTensor": _indices(only_nan.shape, a)})
    assert np.isnan(got["OutputTensor"]).all() and got["OutputIndicesTensor"].ravel()[0] == 0


BAD = [
    ("AVERAGE_POOLING", dict(WindowSize=(2, 0), IncludePadding=0),
     "WindowSize[1] is 0; it must be at least 1"),
    ("MAX_POOLING", dict(WindowSize=(2, 2), StartPadding=(2, 0)),
     "the padding of spatial dimension 0 (2, 0) is not smaller than the window (2): a window "
     "would hold only padding"),
    ("LP_POOLING", dict(WindowSize=(2, 2), P=0), "P is 0; it must be at least 1"),
    ("MAX_POOLING", dict(WindowSize=(5, 2)), "the window of spatial dimension 0 (5 elements, "
     "dilated) is larger than the padded input (4)"),
]


@pytest.mark.parametrize("op,change,message", BAD, ids=[f"{o}-{i}" for i, (o, _, _) in
                                                       enumerate(BAD)])
def test_broken_rules(op, change, message):
    a = {**_attrs(2, {}), **change}
    desc = dml.operator_desc(op, InputTensor=np.zeros((1, 1, 4, 4), np.float32),
                             OutputTensor=np.zeros((1, 1, 2, 2), np.float32), **a)
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    with pytest.raises(dml.HResultError) as info:
        dml.DMLCreateDevice(d3d, 0).CreateOperator(desc)
    assert info.value.message == f"DML_OPERATOR_{op}: {message}"


@pytest.mark.parametrize("dtype,name,xs,extra", [
    (np.float32, *g) for g in ALL + DILATED + [
        ("3x2 s(2,1) pad", (2, 3, 7, 6), dict(WindowSize=(3, 2), Strides=(2, 1),
                                              StartPadding=(2, 1), EndPadding=(1, 1)))]] + [
    (np.int8, *GEOMETRIES[2])], ids=lambda v: v if isinstance(v, str) else
    np.dtype(v).name if isinstance(v, type) else None)
def test_maxima_alone_equal_the_indexed_maxima_with_nans_and_padding(dtype, name, xs, extra):
    """Without OutputIndicesTensor the kernel takes a cheaper path (padding reads NaN or the
    type's minimum; one spatial dimension at a time): it must give the same bits as the
    indexed one, which walks every tap, on every geometry, with NaNs and signed zeros."""
    x = _x("nan" + name, xs, dtype)
    if dtype == np.float32:
        rng = np.random.default_rng(len(name))
        x[rng.random(xs) < 0.3] = np.nan
        zeros = rng.random(xs) < 0.3
        x[zeros] = np.where(rng.random(xs) < 0.5, 0.0, -0.0)[zeros]
    a = _attrs(len(xs) - 2, extra, True)
    plain = run_against_reference("MAX_POOLING2", {"InputTensor": x}, a)["OutputTensor"]
    indexed = run_against_reference("MAX_POOLING2", {"InputTensor": x}, a,
                                    outputs={"OutputIndicesTensor": _indices(x.shape, a)})
    u = f"u{x.itemsize}"
    assert np.array_equal(np.asarray(plain).view(u), np.asarray(indexed["OutputTensor"]).view(u))


@pytest.mark.parametrize("xs,extra", [
    ((2, 8, 256, 256), dict(WindowSize=(3, 3), Strides=(2, 2), StartPadding=(1, 1),
                            EndPadding=(1, 1))),
    ((1, 4, 64, 64, 64), dict(WindowSize=(2, 3, 2), Strides=(2, 1, 2), StartPadding=(0, 1, 1),
                              EndPadding=(1, 1, 0)))], ids=["2-D", "3-D"])
def test_large_maxima_alone_run_channels_last_on_a_cpu_with_the_same_bits(xs, extra):
    """On a CPU the maxima of an input of 2^20 elements or more are taken channels last
    (``_max_pool.max_values``: XLA's CPU convolutions around it keep NHWC); the bits are those
    of the indexed walk over every tap, NaNs and signed zeros included."""
    import jax

    from dmlsim.ops._max_pool import max_pool, max_values
    rng = np.random.default_rng(9)
    x = rng.standard_normal(xs).astype(np.float32)
    x[rng.random(xs) < 0.2] = np.nan
    zeros = rng.random(xs) < 0.2
    x[zeros] = np.where(rng.random(xs) < 0.5, 0.0, -0.0)[zeros]
    a = _attrs(len(xs) - 2, extra, True)
    plain = np.asarray(jax.jit(lambda v: max_values(v, a))(x))
    walked = np.asarray(jax.jit(lambda v: max_pool(v, a)[0])(x))
    assert np.array_equal(plain.view(np.uint32), walked.view(np.uint32))
    transposes = str(jax.make_jaxpr(lambda v: max_values(v, a))(x)).count("transpose")
    assert transposes == (2 if jax.default_backend() == "cpu" else 0)

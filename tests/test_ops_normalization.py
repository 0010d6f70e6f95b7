"""Normalization operators over several shapes, axes and parameters against their float64
references, within the tolerances their modules state (FLOAT32 and FLOAT16)."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from reference_rig import run_against_reference


def _checked(*args, **kwargs):
    """run_against_reference, and its OutputTensor was compared with the reference."""
    got = run_against_reference(*args, **kwargs)
    assert "OutputTensor" in got, sorted(got)
    return got


DTYPES = pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["FLOAT32", "FLOAT16"])


def _rng(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


@DTYPES
@pytest.mark.parametrize("shape,param", [((2, 3, 4, 5), (1, 3, 1, 1)), ((2, 3, 4, 5), (1, 3, 4, 5)),
                                         ((3, 4), (1, 4)), ((1, 2, 2, 3, 3), (1, 2, 1, 1, 1))])
def test_batch_normalization(shape, param, dtype):
    r = _rng("bn", shape, param, np.dtype(dtype).name)
    ins = {"InputTensor": r.standard_normal(shape).astype(dtype),
           "MeanTensor": r.standard_normal(param).astype(dtype),
           "VarianceTensor": r.uniform(0.1, 2, param).astype(dtype),
           "ScaleTensor": r.standard_normal(param).astype(dtype),
           "BiasTensor": r.standard_normal(param).astype(dtype)}
    _checked("BATCH_NORMALIZATION", ins, {"Spatial": 1, "Epsilon": 1e-5})


@DTYPES
@pytest.mark.parametrize("axes", [(1,), (2, 3), (1, 2, 3), (0, 3)])
@pytest.mark.parametrize("use_mean,use_var", [(1, 1), (0, 1), (1, 0)])
def test_mean_variance_normalization2(axes, use_mean, use_var, dtype):
    r = _rng("mvn", axes, use_mean, use_var, np.dtype(dtype).name)
    shape = (2, 3, 4, 5)
    ins = {"InputTensor": (r.standard_normal(shape) * 3 + 1).astype(dtype),
           "ScaleTensor": r.standard_normal((1, 3, 1, 5)).astype(dtype),
           "BiasTensor": r.standard_normal((1, 1, 4, 1)).astype(dtype)}
    _checked("MEAN_VARIANCE_NORMALIZATION2", ins,
                          {"Axes": axes, "UseMean": use_mean, "UseVariance": use_var,
                           "Epsilon": 1e-5})


@pytest.mark.parametrize("cross", [0, 1])
def test_mean_variance_normalization_cross_channel(cross):
    r = _rng("mvn0", cross)
    ins = {"InputTensor": r.standard_normal((2, 3, 4, 4)).astype(np.float32),
           "ScaleTensor": None, "BiasTensor": None}
    _checked("MEAN_VARIANCE_NORMALIZATION", ins,
                          {"CrossChannel": cross, "NormalizeVariance": 1, "Epsilon": 1e-5})


@DTYPES
@pytest.mark.parametrize("cross", [0, 1])
@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_local_response_normalization(cross, size, dtype):
    r = _rng("lrn", cross, size, np.dtype(dtype).name)
    ins = {"InputTensor": r.standard_normal((2, 6, 5, 4)).astype(dtype)}
    _checked("LOCAL_RESPONSE_NORMALIZATION", ins,
                          {"CrossChannel": cross, "LocalSize": size, "Alpha": 1e-2,
                           "Beta": 0.75, "Bias": 1.0})


@DTYPES
@pytest.mark.parametrize("axis", [0, 1, 3])
@pytest.mark.parametrize("p", [1, 2])
def test_lp_normalization(axis, p, dtype):
    r = _rng("lpn", axis, p, np.dtype(dtype).name)
    ins = {"InputTensor": r.standard_normal((3, 4, 2, 5)).astype(dtype)}
    _checked("LP_NORMALIZATION", ins, {"Axis": axis, "Epsilon": 1e-5, "P": p})

"""A Stable-Diffusion-style pipeline as Olive's DirectML sample lays it out
(tests/models/diffusion, tools/make_tiny_diffusion.py): the UNet and VAE decoder fused for
DirectML (GroupNorm, Gelu; FLOAT16) run through DML operators, and agree with their unoptimized
FLOAT twins on ONNX Runtime's CPU provider (which has no kernel for the fused GroupNorm, nor
FLOAT16 Sqrt, so it cannot run the fused files themselves); the VAE's twin agrees on the same file;
``examples/tiny_diffusion.py`` makes the image ONNX Runtime makes.

Tolerances: FLOAT16 storage between nodes (one rounding, 2^-11 relative, per node, through some
60 nodes of the UNet) against a FLOAT computation: 2e-2 of the output's largest magnitude for
one UNet step and one VAE decode, 3e-2 absolute for the image after two DDIM steps (values in
[0, 1]); the FLOAT twins on the same file: 1e-4 of the largest magnitude."""
import functools
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import dmlsim.onnx as donnx

ort = pytest.importorskip("onnxruntime")

ROOT = Path(__file__).resolve().parents[1]
OPTIMIZED = ROOT / "tests" / "models" / "diffusion" / "optimized" / "tiny-sd"
UNOPTIMIZED = ROOT / "tests" / "models" / "diffusion" / "unoptimized" / "tiny-sd"
CPU = functools.partial(ort.InferenceSession, providers=["CPUExecutionProvider"])


@functools.lru_cache(maxsize=None)
def _dml(path):
    """One dmlsim session per file for the module: each model is compiled once."""
    return donnx.InferenceSession(path)


def _feeds(dtype):
    rng = np.random.default_rng(1)
    return {"unet": {"sample": rng.standard_normal((1, 4, 8, 8)).astype(dtype),
                     "timestep": np.array([500], np.int64),
                     "encoder_hidden_states": rng.standard_normal((1, 7, 8)).astype(dtype)},
            "vae_decoder": {"latent_sample": rng.standard_normal((1, 4, 8, 8)).astype(dtype)}}


def _scaled_error(got, want):
    return np.abs(got.astype(np.float64) - want).max() / np.abs(want).max()


@pytest.mark.parametrize("part", ["unet", "vae_decoder"])
def test_the_fused_float16_models_match_their_float_twins(part):
    session = _dml(str(OPTIMIZED / part / "model.onnx"))
    ops = {r.op_type for r in session.placement().rows}
    assert "GroupNorm" in ops  # the fused contrib operator, lowered as the DML provider does
    assert all(r.device != "CPU" for r in session.placement().rows)
    (got,) = session.run(None, _feeds(np.float16)[part])
    (want,) = CPU(str(UNOPTIMIZED / part / "model.onnx")).run(None, _feeds(np.float32)[part])
    assert got.dtype == np.float16 and got.shape == want.shape
    assert _scaled_error(got, want) < 2e-2


def test_the_float_twin_matches_onnx_runtime_on_the_same_file():
    part = "vae_decoder"  # the UNet's FLOAT twin is the same kinds of nodes, larger
    path = str(UNOPTIMIZED / part / "model.onnx")
    (got,) = donnx.InferenceSession(path).run(None, _feeds(np.float32)[part])
    (want,) = CPU(path).run(None, _feeds(np.float32)[part])
    assert _scaled_error(got, want) < 1e-4


def test_the_example_makes_the_image_onnx_runtime_makes():
    spec = importlib.util.spec_from_file_location("tiny_diffusion",
                                                  ROOT / "examples" / "tiny_diffusion.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    ours = example.generate(OPTIMIZED, steps=2, session=_dml)
    theirs = example.generate(UNOPTIMIZED, steps=2, session=CPU)
    assert ours.shape == theirs.shape == (1, 3, 16, 16)
    assert np.abs(ours - theirs).max() < 3e-2 and 0.05 < ours.std()  # an image, not a constant

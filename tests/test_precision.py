"""FLOAT32 matrix products compute in float32, on every backend (TF32 and bf16 passes round
the operands to 10 or 7 mantissa bits first).

1. Random operands, K = 1024: within the float32 accumulation bound of the float64 product,
   |error| <= (K + 2) u sum|a b| (u = 2^-24), element by element.
2. Operands 1 + j 2^-12 (j in 0..3) times 1: float32 sums them exactly (every partial sum
   below 2^11 is a multiple of 2^-12), while a TF32 pass rounds each to 1 or 1 + 2^-10, an
   error near 2^-12 of the result. dmlsim's GEMM must be exact; on a GPU the test also shows
   that JAX's default precision there is not, so the test would catch TF32.
Run it on the H200 with the device tool (README, "GPU")."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import dmlsim as dml

K = 1024


def _gemm(a, b):
    desc = dml.operator_desc("GEMM", ATensor=a, BTensor=b, TransA=0, TransB=0, Alpha=1.0,
                             Beta=0.0)
    return np.asarray(dml.run(desc, a, b, None))


def test_gemm_float32_is_within_the_float32_accumulation_bound():
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((256, K), np.float32), rng.standard_normal((K, 192), np.float32)
    got = _gemm(a, b).astype(np.float64)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    worst, bound = float(np.max(np.abs(got - exact) / scale)), (K + 2) * 2.0 ** -24
    assert worst <= bound, f"GEMM: relative error {worst:.3g} > {bound:.3g} on " \
                           f"{jax.devices()[0].platform}"


def test_gemm_keeps_the_bits_a_tf32_pass_drops():
    rng = np.random.default_rng(3)
    a = (1 + rng.integers(0, 4, (64, K)) * 2.0 ** -12).astype(np.float32)
    b = np.ones((K, 64), np.float32)
    exact = a.astype(np.float64).sum(axis=1, keepdims=True) * np.ones((1, 64))
    got = _gemm(a, b)
    assert np.array_equal(got.astype(np.float64), exact), "GEMM lost mantissa bits of A"
    raw = np.asarray(jax.jit(jnp.matmul)(a, b)).astype(np.float64)  # the backend's default
    if jax.devices()[0].platform == "gpu":
        assert not np.array_equal(raw, exact), "JAX's default GPU precision was exact here, so " \
                                               "this test would not catch TF32"

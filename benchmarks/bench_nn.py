"""Benchmark f: neural-network operators, dmlsim vs the same computation in raw jax.jit at the
same precision (float32 products at Precision.HIGHEST: what DirectML computes), in one run.

    GEMM            M = N = K = 1024 .. 8192 (CPU: 256 .. 1024), FLOAT32 and FLOAT16
    CONVOLUTION     ResNet-style layers, batch 32 (CPU: 2): 3x3 64->64 at 56x56 (pad 1),
                    1x1 256->64 at 56x56, depthwise 3x3 on 256 channels at 28x28
    ATTENTION       MULTIHEAD_ATTENTION, batch 1, 16 heads of 64, sequence 512 .. 4096
                    (CPU: 128 .. 256), FLOAT16
    POOL + NORM     MAX_POOLING 3x3 stride 2 and BATCH_NORMALIZATION on 32 x 64 x 112 x 112

Each row: µs per operation for both, TFLOP/s (or GB/s for pooling and normalization), the
device's peak next to it (H200: 67 TFLOP/s FP32 without tensor cores, 989 FP16 dense with
them; 4.8 TB/s HBM), and raw / dmlsim (target on the H200: >= 0.9 for the large shapes).
Small cases are checked against raw JAX before they are timed.

    python benchmarks/bench_nn.py [--quick] [--json out.json]
"""
from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from _rig import Rig, machine, print_table, time_against_raw, write_json

import dmlsim as dml

HI = lax.Precision.HIGHEST
PEAK = {"FLOAT32": 67e12, "FLOAT16": 989e12, "bytes": 4.8e12}


def _t(shape, dtype=np.float32):
    return dml.tensor_desc(np.dtype(dtype), sizes=list(shape))


def _rand(shape, dtype, rng):
    return rng.standard_normal(shape).astype(dtype)


def gemm_case(n, dtype):
    desc = dml.operator_desc("GEMM", ATensor=_t((n, n), dtype), BTensor=_t((n, n), dtype),
                             OutputTensor=_t((n, n), dtype), Alpha=1.0, Beta=0.0)
    raw = lambda a, b: jnp.matmul(a, b, precision=HI,  # noqa: E731
                                  preferred_element_type=jnp.float32).astype(a.dtype)
    return desc, [(n, n), (n, n), None], raw, 2.0 * n ** 3


def conv_case(n, c, m, hw, k, groups, pad):
    x, w = (n, c, hw, hw), (m, c // groups, k, k)
    attrs = dict(Mode=1, Direction=0, DimensionCount=2, Strides=(1, 1), Dilations=(1, 1),
                 StartPadding=(pad, pad), EndPadding=(pad, pad), OutputPadding=(0, 0),
                 GroupCount=groups)
    desc = dml.operator_desc("CONVOLUTION", InputTensor=_t(x), FilterTensor=_t(w),
                             OutputTensor=_t((n, m, hw, hw)), **attrs)
    raw = lambda a, b: lax.conv_general_dilated(  # noqa: E731
        a, b, (1, 1), [(pad, pad)] * 2, dimension_numbers=("NCHW", "OIHW", "NCHW"),
        feature_group_count=groups, precision=HI)
    return desc, [x, w, None], raw, 2.0 * n * m * hw * hw * (c // groups) * k * k


def mha_case(s, heads=16, hs=64, dtype=np.float16):
    shape = (1, s, heads * hs)
    fields = {f: _t(shape, dtype) for f in ("QueryTensor", "KeyTensor", "ValueTensor")}
    desc = dml.operator_desc("MULTIHEAD_ATTENTION", **fields, OutputTensor=_t(shape, dtype),
                             Scale=1 / hs ** 0.5, MaskFilterValue=-10000.0, HeadCount=heads,
                             MaskType=0)

    def raw(q, k, v):  # FLOAT16 operands, float32 accumulation and softmax, as dmlsim
        q, k, v = (x.reshape(1, s, heads, hs).transpose(0, 2, 1, 3) for x in (q, k, v))
        scores = jnp.einsum("bhsd,bhld->bhsl", q, k, precision=HI,
                            preferred_element_type=jnp.float32)
        p = jax.nn.softmax(scores / hs ** 0.5, -1)
        o = jnp.einsum("bhsl,bhld->bhsd", p, v.astype(jnp.float32), precision=HI)
        return o.transpose(0, 2, 1, 3).reshape(shape).astype(dtype)
    return desc, [shape, shape, shape] + [None] * 8, raw, 4.0 * heads * s * s * hs


def pool_case(n, c, hw):
    x = (n, c, hw, hw)
    out = (n, c, (hw + 2 - 3) // 2 + 1, (hw + 2 - 3) // 2 + 1)
    desc = dml.operator_desc("MAX_POOLING", InputTensor=_t(x), OutputTensor=_t(out),
                             DimensionCount=2, Strides=(2, 2), WindowSize=(3, 3),
                             StartPadding=(1, 1), EndPadding=(1, 1))
    raw = lambda a: lax.reduce_window(a, -jnp.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2),  # noqa
                                      ((0, 0), (0, 0), (1, 1), (1, 1)))
    return desc, [x], raw, 4.0 * (np.prod(x) + np.prod(out))


def norm_case(n, c, hw):
    x, p = (n, c, hw, hw), (1, c, 1, 1)
    desc = dml.operator_desc("BATCH_NORMALIZATION", **{f: _t(s) for f, s in (
        ("InputTensor", x), ("MeanTensor", p), ("VarianceTensor", p), ("ScaleTensor", p),
        ("BiasTensor", p), ("OutputTensor", x))}, Spatial=1, Epsilon=1e-5)
    raw = lambda a, m, v, s, b: s * ((a - m) / jnp.sqrt(v + 1e-5)) + b  # noqa: E731
    return desc, [x, p, p, p, p], raw, 8.0 * np.prod(x)


def run_case(rig, name, case, dtype, k, repeats, rng, check):
    desc, shapes, raw, work = case
    arrays = [None if s is None else _rand(s, dtype, rng) for s in shapes]
    if name == "BATCH_NORMALIZATION":
        arrays[2] = np.abs(arrays[2]) + np.float32(0.5)

    def close(got, want):
        tol = 2e-2 if dtype == np.float16 else 2e-4
        assert np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol,
                           atol=tol * max(1.0, float(np.abs(want).max()))), f"f: {name}"
    t_d, t_r = time_against_raw(rig, desc, arrays, raw, k, repeats, close if check else None,
                                upload=True, outputs=3 if name.startswith("MULTI") else 1)
    bytes_kind = name in ("MAX_POOLING", "BATCH_NORMALIZATION")
    peak = PEAK["bytes"] if bytes_kind else PEAK[np.dtype(dtype).name.replace("float", "FLOAT")]
    return {"op": name, "dtype": np.dtype(dtype).name, "work": work, "bytes_kind": bytes_kind,
            "dmlsim_us": t_d * 1e6, "raw_us": t_r * 1e6, "dmlsim_rate": work / t_d,
            "raw_rate": work / t_r, "peak": peak, "ratio_raw_over_dmlsim": t_r / t_d}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    gpu = jax.devices()[0].platform != "cpu"
    rig, rng, rows = Rig(), np.random.default_rng(0), []
    sizes = (1024, 2048, 4096, 8192) if gpu else ((256, 512) if args.quick else (256, 512, 1024))
    batch = 32 if gpu else 2
    cases = [(f"GEMM {n}", "GEMM", gemm_case(n, dt), dt) for n in sizes
             for dt in (np.float32, np.float16)]
    cases += [(label, "CONVOLUTION", conv_case(batch, *cfg), np.float32) for label, cfg in (
        ("conv 3x3 64->64 56x56", (64, 64, 56, 3, 1, 1)),
        ("conv 1x1 256->64 56x56", (256, 64, 56, 1, 1, 0)),
        ("depthwise 3x3 256 28x28", (256, 256, 28, 3, 256, 1)))]
    seqs = (512, 1024, 2048, 4096) if gpu else (128, 256)
    cases += [(f"MHA seq {s}", "MULTIHEAD_ATTENTION", mha_case(s), np.float16) for s in seqs]
    hw = 112 if gpu else 28
    cases += [(f"max pool 3x3 s2 {batch}x64x{hw}", "MAX_POOLING", pool_case(batch, 64, hw),
               np.float32),
              (f"batch norm {batch}x64x{hw}", "BATCH_NORMALIZATION", norm_case(batch, 64, hw),
               np.float32)]
    for label, name, case, dt in cases:
        k = 5 if args.quick else 20
        row = run_case(rig, name, case, dt, k, 3 if args.quick else 5, rng,
                       check=case[3] < 2e10)
        rows.append({"case": label, **row})
    print_table("f. neural-network operators (raw jax.jit at the same precision)",
                ["case", "dtype", "dmlsim µs", "raw µs", "dmlsim rate", "raw rate",
                 "dmlsim % of peak", "raw/dmlsim"],
                [[r["case"], r["dtype"], f"{r['dmlsim_us']:.0f}", f"{r['raw_us']:.0f}",
                  _rate(r["dmlsim_rate"], r["bytes_kind"]), _rate(r["raw_rate"], r["bytes_kind"]),
                  f"{100 * r['dmlsim_rate'] / r['peak']:.0f}%" if gpu else "-",
                  f"{r['ratio_raw_over_dmlsim']:.2f}"] for r in rows])
    payload = {"machine": machine(), "f_nn": rows}
    write_json(args.json, payload)
    return payload


def _rate(v, bytes_kind):
    return f"{v / 1e9:.0f} GB/s" if bytes_kind else f"{v / 1e12:.2f} TFLOP/s"


if __name__ == "__main__":
    main()

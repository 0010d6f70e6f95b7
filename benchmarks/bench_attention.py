"""Attention speed: MULTIHEAD_ATTENTION (FLOAT16, batch 1, 16 heads of 64) against cuDNN's fused
kernel and XLA's own attention, measured side by side.

    python benchmarks/bench_attention.py [--quick] [--json out.json]

Rows per sequence length: dmlsim with DML's default flags (float32 scores and softmax, one
rounding: the unfused form), dmlsim with ALLOW_HALF_PRECISION_COMPUTATION (on a GPU the fused
cuDNN kernel, ``dmlsim/ops/_attention_fused.py``), and the baseline
``jax.nn.dot_product_attention(..., implementation="cudnn")`` (on the CPU, XLA's). Ratios are
baseline time over dmlsim time (1.0 = as fast). The half-precision row is checked against a
float64 reference within FLOAT16 tolerances before it is timed.
"""
from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np

import dmlsim as dml
from _rig import Rig, machine, print_table, time_against_raw, write_json

HEADS, HS = 16, 64


def _case(s):
    shape = (1, s, HEADS * HS)
    t = dml.tensor_desc(np.float16, shape)
    desc = dml.operator_desc("MULTIHEAD_ATTENTION", QueryTensor=t, KeyTensor=t, ValueTensor=t,
                             OutputTensor=t, Scale=1 / HS ** 0.5, MaskFilterValue=-10000.0,
                             HeadCount=HEADS, MaskType=0)
    impl = "cudnn" if jax.devices()[0].platform == "gpu" else "xla"

    def baseline(q, k, v):  # XLA's CPU dot takes no FLOAT16 operands: float32 there
        q, k, v = (x.reshape(1, s, HEADS, HS).astype(jnp.float16 if impl == "cudnn" else
                                                    jnp.float32) for x in (q, k, v))
        return jax.nn.dot_product_attention(q, k, v, scale=1 / HS ** 0.5, implementation=impl
                                            ).reshape(shape).astype(jnp.float16)
    return desc, shape, baseline, impl


def _reference(q, k, v, s):
    q, k, v = (x.astype(np.float64).reshape(s, HEADS, HS).transpose(1, 0, 2) for x in (q, k, v))
    z = np.einsum("hsd,hld->hsl", q, k) / HS ** 0.5
    p = np.exp(z - z.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("hsl,hld->hsd", p, v).transpose(1, 0, 2).reshape(1, s, HEADS * HS)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    gpu = jax.devices()[0].platform == "gpu"
    seqs = (2048, 4096, 8192) if gpu else ((256,) if args.quick else (256, 512))
    rig, rng, rows = Rig(), np.random.default_rng(0), []
    for s in seqs:
        desc, shape, baseline, impl = _case(s)
        arrays = [rng.standard_normal(shape).astype(np.float16) for _ in range(3)] + [None] * 8
        want = _reference(*arrays[:3], s)

        def check(got, _):
            err = np.abs(got.astype(np.float64) - want).max()
            assert err <= 4e-3 * max(1.0, np.abs(want).max()), f"seq {s}: max error {err}"
        work = 4.0 * HEADS * s * s * HS
        for label, flags in (("default", 0),
                             ("half", dml.DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION)):
            t_d, t_b = time_against_raw(rig, desc, arrays, baseline, 5 if args.quick else 20,
                                        3 if args.quick else 5, check, outputs=3, flags=flags)
            rows.append({"seq": s, "flags": label, "baseline": impl, "dmlsim_us": t_d * 1e6,
                         "baseline_us": t_b * 1e6, "dmlsim_tflops": work / t_d / 1e12,
                         "baseline_tflops": work / t_b / 1e12, "ratio": t_b / t_d})
    print_table("attention: MULTIHEAD_ATTENTION FLOAT16 against jax.nn.dot_product_attention",
                ["seq", "dmlsim flags", "baseline", "dmlsim µs", "baseline µs", "dmlsim TFLOP/s",
                 "baseline TFLOP/s", "baseline/dmlsim"],
                [[r["seq"], r["flags"], r["baseline"], f"{r['dmlsim_us']:.0f}",
                  f"{r['baseline_us']:.0f}", f"{r['dmlsim_tflops']:.1f}",
                  f"{r['baseline_tflops']:.1f}", f"{r['ratio']:.2f}"] for r in rows])
    write_json(args.json, {"machine": machine(), "attention": rows})
    return rows


if __name__ == "__main__":
    main()

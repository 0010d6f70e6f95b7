"""Benchmark e: data-movement and reduction throughput, dmlsim vs raw jax.jit.

Six operators over FLOAT32 tensors of n = 2^20 .. 2^28 elements (2^24 on the CPU), each
against the jitted JAX expression a JAX user would write, measured side by side in one run:

    SLICE          [n/1024, 1024] -> [:, 256:768]          x[:, 256:768]
    JOIN           two [n/2048, 1024] -> [n/1024, 1024]     jnp.concatenate((a, b), 0)
    GATHER         [n/1024, 1024], rows by a permutation   jnp.take(x, idx, axis=0)
    TILE           [n/2048, 1024] repeated (2, 1)          jnp.tile(x, (2, 1))
    PADDING        [n/1024, 1024], 1 on each side, 0.0     jnp.pad(x, 1)
    REDUCE (SUM)   [n/1024, 1024] over axis 1              jnp.sum(x, 1, keepdims=True)

dmlsim executes a closed list holding the one dispatch K times (ExecuteCommandLists +
Signal each, one wait); raw JAX calls the jitted function K times. Bytes per operation are
the bytes read plus the bytes written. Reported: µs per operation, GB/s for both and the
ratio raw time / dmlsim time (target on the H200: >= 0.9 at 2^26 and above). Results at
2^20 and 2^22 are compared with raw JAX bit for bit (REDUCE: within 1e-5 relative, the two
programs may sum in different orders) before timing.

    python benchmarks/bench_data.py [--quick] [--max-log2 28] [--json out.json]
"""
from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np

from _rig import Rig, machine, print_table, time_against_raw, write_json

import dmlsim as dml

W = 1024


def _t(shape, dtype=np.float32):
    return dml.tensor_desc(np.dtype(dtype), sizes=list(shape))


def cases(n):
    """name -> (desc fields, input arrays as (shape, dtype) makers, raw function)."""
    rows, half = n // W, n // (2 * W)
    sum_fn = dml.DML_REDUCE_FUNCTION_SUM
    return {
        "SLICE": (dict(InputTensor=_t((rows, W)), OutputTensor=_t((rows, W // 2)),
                       Offsets=[0, W // 4], Sizes=[rows, W // 2], Strides=[1, 1]),
                  [(rows, W)], lambda x: x[:, W // 4: 3 * W // 4]),
        "JOIN": (dict(InputTensors=[_t((half, W)), _t((half, W))],
                      OutputTensor=_t((rows, W)), Axis=0),
                 [(half, W), (half, W)], lambda a, b: jnp.concatenate((a, b), 0)),
        "GATHER": (dict(InputTensor=_t((1, 1, rows, W)),
                        IndicesTensor=_t((1, 1, 1, rows), np.int32),
                        OutputTensor=_t((1, 1, rows, W)), Axis=2, IndexDimensions=1),
                   [(rows, W), "perm"], lambda x, i: jnp.take(x, i, axis=0)),
        "TILE": (dict(InputTensor=_t((half, W)), OutputTensor=_t((rows, W)), Repeats=[2, 1]),
                 [(half, W)], lambda x: jnp.tile(x, (2, 1))),
        "PADDING": (dict(InputTensor=_t((rows, W)), OutputTensor=_t((rows + 2, W + 2)),
                         PaddingMode=0, PaddingValue=0.0, StartPadding=[1, 1],
                         EndPadding=[1, 1]),
                    [(rows, W)], lambda x: jnp.pad(x, 1)),
        "REDUCE": (dict(InputTensor=_t((rows, W)), OutputTensor=_t((rows, 1)),
                        Function=sum_fn, Axes=[1]),
                   [(rows, W)], lambda x: jnp.sum(x, 1, keepdims=True)),
    }


def _inputs(specs, rows, rng, real):
    out = []
    for s in specs:
        if s == "perm":
            out.append(rng.permutation(rows).astype(np.int32) if real else
                       np.arange(rows, dtype=np.int32)[::-1].copy())
        else:
            out.append(rng.standard_normal(s, dtype=np.float32) if real else
                       np.zeros(s, np.float32))
    return out


def one(rig, name, n, k, repeats, rng):
    fields, specs, raw = cases(n)[name]
    check = n <= 1 << 22
    arrays = _inputs(specs, n // W, rng, check)

    def same(got, want):
        ok = np.allclose(got, want, rtol=1e-5, atol=1e-4) if name == "REDUCE" else \
            np.array_equal(got.view(np.uint32), want.view(np.uint32))
        assert ok, f"e: {name} at {n}: dmlsim and raw JAX disagree"

    per_d, per_r = time_against_raw(rig, dml.operator_desc(name, **fields), arrays, raw, k,
                                    repeats, same, upload=check)
    out = fields["OutputTensor"].Desc
    nbytes = sum(a.nbytes for a in arrays) + out.TotalTensorSizeInBytes
    return {"op": name, "log2": int(np.log2(n)), "elements": n, "calls": k, "bytes": nbytes,
            "dmlsim_us": per_d * 1e6, "raw_us": per_r * 1e6,
            "dmlsim_GBps": nbytes / per_d / 1e9, "raw_GBps": nbytes / per_r / 1e9,
            "ratio_raw_over_dmlsim": per_r / per_d, "checked": check}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--max-log2", type=int, default=None)
    ap.add_argument("--ops", default=",".join(cases(1 << 20)))
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    gpu = jax.devices()[0].platform != "cpu"
    top = args.max_log2 or (28 if gpu else 24)
    if args.quick and not gpu:
        top = min(top, 22)
    rig, rng, rows = Rig(), np.random.default_rng(0), []
    for lg in range(20, top + 1, 2):
        n = 1 << lg
        k = max(10, min(50, (1 << 30) // (4 * n) * (1 if args.quick else 4))) if gpu else \
            max(3, min(30, (1 << 25) // n))
        for name in args.ops.split(","):
            rows.append(one(rig, name, n, k, 3 if args.quick else 5, rng))
    print_table("e. data movement and reductions, FLOAT32 (bytes read + written)",
                ["operator", "elements", "dmlsim µs", "raw µs", "dmlsim GB/s", "raw GB/s",
                 "raw/dmlsim"],
                [[r["op"], f"2^{r['log2']}", f"{r['dmlsim_us']:.1f}", f"{r['raw_us']:.1f}",
                  f"{r['dmlsim_GBps']:.1f}", f"{r['raw_GBps']:.1f}",
                  f"{r['ratio_raw_over_dmlsim']:.2f}"] for r in rows])
    payload = {"machine": machine(), "e_data": rows}
    write_json(args.json, payload)
    return payload


if __name__ == "__main__":
    main()

"""Benchmark c: large element-wise throughput, dmlsim vs raw jax.jit.

FLOAT32 ELEMENT_WISE_MULTIPLY (out = a * b) over 2^20 .. 2^28 elements: dmlsim executes a
closed list holding the one dispatch K times (ExecuteCommandLists + Signal each, one wait);
raw JAX calls ``jax.jit(lambda a, b: a * b)`` K times. Bytes moved per operation are
3 * 4 * n (two reads, one write). Reported: time per operation, GB/s for both, the ratio
raw time / dmlsim time (target >= 0.95 on the H200) and the bandwidth as a fraction of the
device's memory bandwidth (the H200's nominal 4.8 TB/s; on CPU a measured NumPy copy).

    python benchmarks/bench_throughput.py [--quick] [--max-log2 28] [--json out.json]
"""
from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

from _rig import Rig, machine, print_table, write_json

H200_BANDWIDTH = 4.8e12  # bytes/s, NVIDIA's figure for the H200's HBM3e


def reference_bandwidth():
    """(bytes/s, what it is) of the device's memory."""
    d = jax.devices()[0]
    if d.platform == "gpu" and "H200" in getattr(d, "device_kind", ""):
        return H200_BANDWIDTH, "H200 nominal HBM3e bandwidth"
    if d.platform == "cpu":
        src = np.ones(1 << 26, np.float32)
        dst = np.empty_like(src)
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            np.copyto(dst, src)
            best = min(best, time.perf_counter() - t0)
        return 2 * src.nbytes / best, "measured NumPy copy (read + write), one thread"
    return None, "unknown"


def one_size(rig, n, k, repeats):
    c = rig.compile("ELEMENT_WISE_MULTIPLY", [n])
    a, b, o = (rig.buffer(4 * n) for _ in range(3))
    check = n <= 1 << 24
    xa = np.linspace(-1, 1, n, dtype=np.float32) if check else None
    if check:
        rig.upload(a, xa)
        rig.upload(b, np.full(n, 3, np.float32))
    table = rig.table(c, [a, b], [o])
    cl = rig.command_list()
    rig.recorder.RecordDispatch(cl, c, table)
    cl.Close()

    def dmlsim_run():
        rig.execute_times(cl, k)

    f = jax.jit(lambda x, y: x * y)
    ja = jnp.asarray(xa) if check else jnp.zeros(n, jnp.float32)
    jb = jnp.full(n, 3, jnp.float32)

    def raw_run():
        for _ in range(k):
            r = f(ja, jb)
        r.block_until_ready()

    for fn in (dmlsim_run, raw_run):
        fn()
    t_d = t_r = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        dmlsim_run()
        t_d = min(t_d, time.perf_counter() - t0)
        t0 = time.perf_counter()
        raw_run()
        t_r = min(t_r, time.perf_counter() - t0)
    if check:
        got = rig.download(o)[:n]
        assert np.array_equal(got, np.asarray(f(ja, jb))), "c: dmlsim and raw JAX disagree"
    del ja, jb
    for m in (a, b, o):
        m._core.memory.array = None  # free the device memory before the next size
    per_d, per_r = t_d / k, t_r / k
    nbytes = 3 * 4 * n
    return {"log2": int(np.log2(n)), "elements": n, "calls": k, "dmlsim_us": per_d * 1e6,
            "raw_us": per_r * 1e6, "dmlsim_GBps": nbytes / per_d / 1e9,
            "raw_GBps": nbytes / per_r / 1e9, "ratio_raw_over_dmlsim": per_r / per_d,
            "checked": check}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--max-log2", type=int, default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    gpu = jax.devices()[0].platform != "cpu"
    top = args.max_log2 or (28 if gpu else 24)
    if args.quick and not gpu:
        top = min(top, 22)
    rig = Rig()
    bw, bw_what = reference_bandwidth()
    rows = []
    for lg in range(20, top + 1, 2):
        n = 1 << lg
        k = max(10, min(50, (1 << 30) // (4 * n) * (1 if args.quick else 4))) if gpu else \
            max(3, min(50, (1 << 26) // n))
        rows.append(one_size(rig, n, k, 3 if args.quick else 5))
    bw_txt = f"{bw / 1e9:.0f} GB/s ({bw_what})" if bw else bw_what
    print_table(f"c. element-wise throughput, FLOAT32 a*b (memory bandwidth: {bw_txt})",
                ["elements", "dmlsim µs", "raw µs", "dmlsim GB/s", "raw GB/s",
                 "raw/dmlsim", "dmlsim % of bandwidth"],
                [[f"2^{r['log2']}", f"{r['dmlsim_us']:.1f}", f"{r['raw_us']:.1f}",
                  f"{r['dmlsim_GBps']:.1f}", f"{r['raw_GBps']:.1f}",
                  f"{r['ratio_raw_over_dmlsim']:.2f}",
                  f"{100 * r['dmlsim_GBps'] * 1e9 / bw:.0f}%" if bw else "-"] for r in rows])
    payload = {"machine": machine(), "bandwidth_Bps": bw, "bandwidth_source": bw_what,
               "c_throughput": rows}
    write_json(args.json, payload)
    return payload


if __name__ == "__main__":
    main()

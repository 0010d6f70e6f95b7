"""Benchmarks a and b: per-dispatch overhead, and a command list of 100 dependent dispatches.

a. One small ELEMENT_WISE_MULTIPLY dispatch recorded once and executed N times
   (ExecuteCommandLists + Signal each time, one fence wait at the end) vs N calls of the same
   function through raw ``jax.jit``. Reported: microseconds per execution and the ratio
   dmlsim / raw (target <= 1.5).
a2. CreateOperator and CompileOperator of a desc already compiled on the device (target for
   CompileOperator: under 1 ms; the compiled programs are shared, so nothing is re-jitted).
b. One command list of 100 dependent ELEMENT_WISE_ADD dispatches (x <- x + c, ping-ponging
   between two buffers, a UAV barrier after each), executed with one Signal, vs 100 dependent
   raw jitted calls. Reported: the speed-up raw / dmlsim (target >= 10).

Both are also run with whole-list compilation off (the per-record path, which the debug
layer uses) for comparison. Results are checked against the raw JAX results.

    python benchmarks/bench_dispatch.py [--quick] [--json out.json]
"""
from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

import dmlsim as dml

from _rig import Rig, interleaved, machine, print_table, raw_chain, us, write_json


def per_dispatch(rig, n_elems, n_calls, repeats):
    c = rig.compile("ELEMENT_WISE_MULTIPLY", [n_elems])
    a, b, o = (rig.buffer(4 * n_elems) for _ in range(3))
    xa = np.linspace(-2, 2, n_elems, dtype=np.float32)
    xb = np.full(n_elems, 3, np.float32)
    rig.upload(a, xa)
    rig.upload(b, xb)
    table = rig.table(c, [a, b], [o])
    cl = rig.command_list()
    rig.recorder.RecordDispatch(cl, c, table)
    cl.Close()

    def dmlsim_run():
        rig.execute_times(cl, n_calls)

    def dmlsim_per_record():
        rig.execute_times_per_record(cl, n_calls)

    f = jax.jit(lambda x, y: x * y)
    ja, jb = jnp.asarray(xa), jnp.asarray(xb)

    def raw_run():
        for _ in range(n_calls):
            r = f(ja, jb)
        r.block_until_ready()

    t_list, t_rec, t_raw = interleaved([dmlsim_run, dmlsim_per_record, raw_run], repeats)
    got = rig.download(o)[:n_elems]
    assert np.array_equal(got, np.asarray(f(ja, jb))), "a: dmlsim and raw JAX disagree"
    return {"elements": n_elems, "calls": n_calls,
            "dmlsim_us": t_list / n_calls * 1e6, "dmlsim_per_record_us": t_rec / n_calls * 1e6,
            "raw_us": t_raw / n_calls * 1e6, "ratio": t_list / t_raw,
            "ratio_per_record": t_rec / t_raw}


def compile_cached(rig, n_calls=200):
    import _rig
    t = _rig.tensor([1, 2, 3, 4])

    def desc():
        return dml.DML_OPERATOR_DESC(dml.DML_OPERATOR_ELEMENT_WISE_ADD,
                                     dml.DML_ELEMENT_WISE_ADD_OPERATOR_DESC(t, t, t))
    first = rig.dev.CompileOperator(rig.dev.CreateOperator(desc()), 0)
    t0 = time.perf_counter()
    for _ in range(n_calls):
        op = rig.dev.CreateOperator(desc())
    t1 = time.perf_counter()
    for _ in range(n_calls):
        again = rig.dev.CompileOperator(op, 0)
    t2 = time.perf_counter()
    assert again._core.signature == first._core.signature  # one program per desc (plan cache)
    return {"create_operator_us": (t1 - t0) / n_calls * 1e6,
            "compile_operator_cached_us": (t2 - t1) / n_calls * 1e6}


def dependent_list(rig, n_elems, n_dispatch, n_runs, repeats):
    c = rig.compile("ELEMENT_WISE_ADD", [n_elems])
    x, y, k = (rig.buffer(4 * n_elems) for _ in range(3))
    x0 = np.linspace(0, 1, n_elems, dtype=np.float32)
    rig.upload(x, x0)
    rig.upload(k, np.ones(n_elems, np.float32))
    t_xy = rig.table(c, [x, k], [y])
    t_yx = rig.table(c, [y, k], [x])
    cl = rig.command_list()
    for i in range(n_dispatch):
        rig.recorder.RecordDispatch(cl, c, t_xy if i % 2 == 0 else t_yx)
        cl.ResourceBarrier([dml.CD3DX12_RESOURCE_BARRIER.UAV(None)])
    cl.Close()
    result = y if n_dispatch % 2 else x

    def dmlsim_run():
        rig.execute_times(cl, n_runs)

    def dmlsim_per_record():
        rig.execute_times_per_record(cl, n_runs)

    f = jax.jit(lambda p, q: p + q)
    jx, jk = jnp.asarray(x0), jnp.ones(n_elems, jnp.float32)

    def raw_run():
        return raw_chain(f, jx, jk, n_dispatch, n_runs)

    t_list, t_rec, t_raw = interleaved([dmlsim_run, dmlsim_per_record, raw_run], repeats)
    # Check one execution of the list against the raw chain.
    rig.upload(x, x0)
    rig.execute_times(cl, 1)
    v = jx
    for _ in range(n_dispatch):
        v = f(v, jk)
    assert np.array_equal(rig.download(result)[:n_elems], np.asarray(v)), \
        "b: dmlsim and raw JAX disagree"
    return {"elements": n_elems, "dispatches": n_dispatch, "runs": n_runs,
            "dmlsim_us": t_list / n_runs * 1e6, "dmlsim_per_record_us": t_rec / n_runs * 1e6,
            "raw_us": t_raw / n_runs * 1e6, "speedup": t_raw / t_list,
            "speedup_per_record": t_raw / t_rec}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    rig = Rig()
    n_calls, repeats = (500, 5) if args.quick else (3000, 7)
    a_rows = [per_dispatch(rig, n, n_calls, repeats) for n in (16, 4096)]
    print_table("a. per-dispatch overhead (µs per ExecuteCommandLists + Signal; raw: per jitted "
                "call)",
                ["elements", "dmlsim", "raw jax.jit", "ratio", "per-record path", "ratio"],
                [[r["elements"], us(r["dmlsim_us"] / 1e6), us(r["raw_us"] / 1e6),
                  f"{r['ratio']:.2f}", us(r["dmlsim_per_record_us"] / 1e6),
                  f"{r['ratio_per_record']:.2f}"] for r in a_rows])
    comp = compile_cached(rig)
    print(f"\na2. CreateOperator {comp['create_operator_us']:.0f} µs; CompileOperator of a desc "
          f"already compiled: {comp['compile_operator_cached_us']:.0f} µs (target < 1000)")
    n_runs = 20 if args.quick else 100
    b_rows = [dependent_list(rig, n, 100, n_runs, repeats) for n in (16, 4096)]
    print_table("b. 100 dependent dispatches with UAV barriers (µs per list; raw: 100 calls)",
                ["elements", "dmlsim list", "raw 100 calls", "speed-up", "per-record path",
                 "speed-up"],
                [[r["elements"], us(r["dmlsim_us"] / 1e6), us(r["raw_us"] / 1e6),
                  f"{r['speedup']:.1f}x", us(r["dmlsim_per_record_us"] / 1e6),
                  f"{r['speedup_per_record']:.2f}x"] for r in b_rows])
    payload = {"machine": machine(), "a_per_dispatch": a_rows, "a2_compile": comp,
               "b_dependent_list": b_rows}
    write_json(args.json, payload)
    return payload


if __name__ == "__main__":
    main()

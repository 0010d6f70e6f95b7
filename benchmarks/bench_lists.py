"""Benchmark h: command lists that write a new buffer per dispatch (issue "Speed, round 2").

One list of N dependent ELEMENT_WISE_ADD dispatches, x_{i+1} = x_i + c, each writing its own
buffer (N + 1 buffers), a UAV barrier after each, executed with one Signal, against N
dependent calls of the same function through raw ``jax.jit``. Reported per N and size:
- compile: the wall time of the execution that compiles the whole-list program (the second
  execution of a structure; the first runs record by record), minus a warm execution;
- the warm time per list and per raw chain, and the speed-up raw / dmlsim (target >= 10).
Every buffer of the list is checked against the raw chain, bit for bit.

    python benchmarks/bench_lists.py [--quick] [--sizes 10,100,1000] [--json out.json]
"""
from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

import dmlsim as dml

from _rig import Rig, interleaved, machine, print_table, raw_chain, us, write_json


def chain_list(rig, n_elems, n_dispatch, n_runs, repeats):
    c = rig.compile("ELEMENT_WISE_ADD", [n_elems])
    bufs = [rig.buffer(4 * n_elems) for _ in range(n_dispatch + 1)]
    k = rig.buffer(4 * n_elems)
    x0 = np.linspace(0, 1, n_elems, dtype=np.float32)
    rig.upload(bufs[0], x0)
    rig.upload(k, np.full(n_elems, 0.1, np.float32))
    tables = [rig.table(c, [bufs[i], k], [bufs[i + 1]]) for i in range(n_dispatch)]
    cl = rig.command_list()
    for t in tables:
        rig.recorder.RecordDispatch(cl, c, t)
        cl.ResourceBarrier([dml.CD3DX12_RESOURCE_BARRIER.UAV(None)])
    cl.Close()

    t0 = time.perf_counter()
    rig.execute_times(cl, 1)  # record by record (a structure's first execution)
    t1 = time.perf_counter()
    rig.execute_times(cl, 1)  # compiles the whole-list program
    t2 = time.perf_counter()
    rig.execute_times(cl, 1)
    t3 = time.perf_counter()
    compile_s = (t2 - t1) - (t3 - t2)

    f = jax.jit(lambda p, q: p + q)
    jx, jk = jnp.asarray(x0), jnp.full(n_elems, 0.1, jnp.float32)

    def dmlsim_run():
        rig.execute_times(cl, n_runs)

    def raw_run():
        raw_chain(f, jx, jk, n_dispatch, n_runs)

    t_list, t_raw = interleaved([dmlsim_run, raw_run], repeats)
    v = jx
    for i in range(n_dispatch):
        v = f(v, jk)
        if i in (0, n_dispatch // 2, n_dispatch - 1):
            got = rig.download(bufs[i + 1])[:n_elems]
            assert np.array_equal(got, np.asarray(v)), f"h: buffer {i + 1} disagrees"
    return {"elements": n_elems, "dispatches": n_dispatch, "runs": n_runs,
            "first_s": t1 - t0, "compile_s": compile_s,
            "dmlsim_us": t_list / n_runs * 1e6, "raw_us": t_raw / n_runs * 1e6,
            "speedup": t_raw / t_list}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sizes", default="10,100,1000", help="list lengths")
    ap.add_argument("--elements", default="16,4096")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    lengths = [int(s) for s in args.sizes.split(",")]
    elements = [int(s) for s in args.elements.split(",")]
    rig = Rig(heap_size=8 * sum(lengths) * len(elements) + 256)  # tables are never reused
    repeats = 3 if args.quick else 7
    rows = []
    for n in elements:
        for length in lengths:
            runs = max(2, (200 if not args.quick else 40) // length)
            rows.append(chain_list(rig, n, length, runs, repeats))
    print_table("h. N dependent dispatches, each writing its own buffer, UAV barriers "
                "(µs per list; raw: N calls)",
                ["elements", "N", "first (per-record) s", "compile s", "dmlsim list",
                 "raw N calls", "speed-up"],
                [[r["elements"], r["dispatches"], f"{r['first_s']:.2f}",
                  f"{r['compile_s']:.2f}", us(r["dmlsim_us"] / 1e6), us(r["raw_us"] / 1e6),
                  f"{r['speedup']:.1f}x"] for r in rows])
    payload = {"machine": machine(), "h_chain_lists": rows}
    write_json(args.json, payload)
    return payload


if __name__ == "__main__":
    main()

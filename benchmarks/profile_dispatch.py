"""Where the time of one small execution goes (benchmark a, taken apart).

Times, per call, for a 16-element FLOAT32 multiply: raw ``jax.jit`` (fresh output); raw with
the output buffer donated (what dmlsim's program does); dmlsim's compiled program called
directly; ExecuteCommandLists alone; Signal alone; ExecuteCommandLists + Signal. The
differences are dmlsim's Python overhead (API shells, queue, fence bookkeeping).

    python benchmarks/profile_dispatch.py [--json out.json]
"""
from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

from _rig import Rig, machine, print_table, write_json


def per_call(fn, n, repeats=7):
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        last = None
        for _ in range(n):
            last = fn()
        if last is not None:
            jax.block_until_ready(last)
        best = min(best, (time.perf_counter() - t0) / n)
    return best * 1e6


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=None)
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args(argv)
    n, calls = 16, args.calls
    rig = Rig()
    c = rig.compile("ELEMENT_WISE_MULTIPLY", [n])
    a, b, o = (rig.buffer(4 * n) for _ in range(3))
    table = rig.table(c, [a, b], [o])
    cl = rig.command_list()
    rig.recorder.RecordDispatch(cl, c, table)
    cl.Close()
    queue, fence = rig.queue, rig.fence
    for _ in range(2):
        rig.submit(cl, close=False)
    rig.wait()
    plan = cl._core.compiled.last_plan
    x, y = jnp.ones(n, jnp.float32), jnp.ones(n, jnp.float32)
    f = jax.jit(lambda p, q: p * q)
    g = jax.jit(lambda p, q, out: p * q, donate_argnums=2)
    state = {"out": jnp.zeros(n, jnp.float32)}

    def donated():
        state["out"] = g(x, y, state["out"])
        return state["out"]

    def program():
        res = plan.fn(*[plan.mems[j].array for j in plan.own])
        for j, arr in zip(plan.written, res):
            plan.mems[j].array = arr
        return res[0]

    def execute():
        queue.ExecuteCommandLists([cl])

    def signal():
        rig.value += 1
        queue.Signal(fence, rig.value)

    def both():
        execute()
        signal()

    rows = [("raw jax.jit (fresh output)", per_call(lambda: f(x, y), calls)),
            ("raw jax.jit, output donated", per_call(donated, calls)),
            ("dmlsim program called directly", per_call(program, calls)),
            ("ExecuteCommandLists", per_call(execute, calls)),
            ("Signal", per_call(signal, calls)),
            ("ExecuteCommandLists + Signal", per_call(both, calls))]
    rig.wait()
    print_table(f"where one small execution's time goes (µs per call, {n} elements, "
                f"{jax.devices()[0].platform})", ["what", "µs"],
                [[w, f"{t:.1f}"] for w, t in rows])
    payload = {"machine": machine(), "profile_us": dict(rows)}
    write_json(args.json, payload)
    return payload


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()

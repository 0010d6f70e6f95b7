"""Memory of one device fed many distinct buffer sizes and operator shapes (issue 26).

    python benchmarks/bench_core_memory.py [--shapes 1000] [--json out.json]

Each step creates buffers of a new size, compiles ELEMENT_WISE_IDENTITY for a new shape,
uploads, dispatches and reads back (the first execution of each list runs record by record:
several new one-record programs per shape). Prints the process's RSS every 100 shapes, the
device's plan-cache size and programs traced: the cache is bounded (plancache.CAPACITY), so
RSS levels off once it is full. tests/test_core_state.py asserts a smaller version.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import numpy as np  # noqa: E402

from _rig import machine, write_json  # noqa: E402


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", type=int, default=1000)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    from test_core_state import _run_once  # the test's own step: upload, IDENTITY, readback
    from helpers import Env
    env = Env()
    plans = env.d3d._core.plans
    rows, t0 = [], time.perf_counter()
    _run_once(env, 4)
    gc.collect()
    start = _rss_mib()
    for i in range(1, args.shapes + 1):
        _run_once(env, 4 * i + 4)
        if i % 100 == 0 or i == args.shapes:
            gc.collect()
            rows.append({"shapes": i, "rss_mib": _rss_mib(), "growth_mib": _rss_mib() - start,
                         "programs": len(plans), "traced": plans.counts["traced"],
                         "seconds": time.perf_counter() - t0})
            r = rows[-1]
            print(f"{i:5d} shapes: RSS {r['rss_mib']:.0f} MiB (+{r['growth_mib']:.0f}), "
                  f"{r['programs']} programs cached of {r['traced']} traced, "
                  f"{r['seconds']:.0f} s", flush=True)
    write_json(args.json, {"machine": machine(), "rows": rows, "capacity": plans.capacity})
    return rows


if __name__ == "__main__":
    main()

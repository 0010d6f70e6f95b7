"""Run every benchmark in one process and write their JSON.

    python benchmarks/run_all.py [--quick] [--gpu] [--out DIR]

a/a2/b: bench_dispatch.py; c: bench_throughput.py; e: bench_data.py; f: bench_nn.py; d:
bench_onnx.py (CPU only; skipped with --gpu or when onnxruntime is not installed).
``--gpu`` insists that JAX's default device is a GPU. ``--quick`` runs in under a minute on
a 2-core CPU. JSON goes to ``DIR/{dispatch,throughput,data,nn,onnx,all}.json`` (default
DIR: benchmarks/results).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    ap.add_argument("--max-log2", default=None)
    args = ap.parse_args(argv)
    import jax
    platform = jax.devices()[0].platform
    if args.gpu and platform != "gpu":
        raise SystemExit(f"run_all: --gpu but JAX's default device is {jax.devices()[0]}")
    import bench_data
    import bench_dispatch
    import bench_throughput
    from _rig import machine, write_json
    q = ["--quick"] if args.quick else []
    out = lambda name: ["--json", os.path.join(args.out, f"{name}.json")]  # noqa: E731
    t0 = time.perf_counter()
    results = {"machine": machine(), "command": " ".join(["python"] + sys.argv)}
    results["dispatch"] = bench_dispatch.main(q + out("dispatch"))
    extra = ["--max-log2", args.max_log2] if args.max_log2 else []
    results["throughput"] = bench_throughput.main(q + extra + out("throughput"))
    results["data"] = bench_data.main(q + extra + out("data"))
    if args.gpu or platform != "cpu":
        print("\nd. skipped: the ONNX Runtime comparison runs on the CPU")
    else:
        try:
            import onnxruntime  # noqa: F401
        except ImportError:
            print("\nd. skipped: pip install onnxruntime onnx (or .[bench])")
        else:
            import bench_onnx
            results["onnx"] = bench_onnx.main(q + out("onnx"))
    results["seconds"] = time.perf_counter() - t0
    write_json(os.path.join(args.out, "all.json"), results)
    print(f"run_all: {results['seconds']:.0f} s")


if __name__ == "__main__":
    main()

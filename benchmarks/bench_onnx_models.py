"""Benchmark g: whole ONNX models through dmlsim.onnx against ONNX Runtime's CPU provider.

The models of ``examples/onnx_models.py`` (MLP, CNN, transformer block) at several batch
sizes. One *run* is one inference as an application does it: ``session.run(None, {"x": x})``
on both sides (dmlsim: write the mapped UPLOAD buffer, execute the prepared command list, wait
on the fence, read the READBACK buffer). Time per run is the median of N after a warm-up, both
measured side by side in this process; the ratio is dmlsim / ORT (below 1: dmlsim is faster).
Outputs are compared with each other (the largest absolute difference is printed).

    pip install -e ".[bench]"
    python benchmarks/bench_onnx_models.py [--quick] [--json out.json]
"""
from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

import dmlsim.onnx as donnx

from _rig import machine, print_table, write_json

_spec = importlib.util.spec_from_file_location(
    "onnx_models", Path(__file__).resolve().parents[1] / "examples" / "onnx_models.py")
models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(models)


def median_time(fn, n):
    fn()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--json")
    a = p.parse_args()
    batches = (1, 8) if a.quick else (1, 8, 64)
    n = 10 if a.quick else 30
    rows, results = [], []
    for name, build in models.MODELS.items():
        for batch in batches:
            model, shape = build(batch)
            x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
            ours = donnx.prepare(model)
            theirs = ort.InferenceSession(model.SerializeToString(),
                                          providers=["CPUExecutionProvider"])
            diff = float(np.abs(ours.run(None, {"x": x})[0] -
                                theirs.run(None, {"x": x})[0]).max())
            t_ours = median_time(lambda: ours.run(None, {"x": x}), n)
            t_ort = median_time(lambda: theirs.run(None, {"x": x}), n)
            rows.append((name, batch, f"{t_ours * 1e3:.3f}", f"{t_ort * 1e3:.3f}",
                         f"{t_ours / t_ort:.2f}", f"{diff:.1e}"))
            results.append({"model": name, "batch": batch, "dmlsim_ms": t_ours * 1e3,
                            "ort_ms": t_ort * 1e3, "ratio": t_ours / t_ort, "max_diff": diff})
    print_table("g. ONNX models: dmlsim.onnx vs ONNX Runtime CPU (ms per run; ratio = dmlsim/ORT)",
                ("model", "batch", "dmlsim ms", "ORT ms", "ratio", "max |diff|"), rows)
    write_json(a.json, {"machine": machine(), "results": results})


if __name__ == "__main__":
    main()

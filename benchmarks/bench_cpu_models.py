"""Benchmark o: whole models' steady state through dmlsim.onnx against ONNX Runtime's CPU
provider, side by side in one process.

The models of benchmark n (the examples' CNN and transformer block, resnet18 batch 8 and
all-MiniLM-L6-v2 at 128 tokens when torch and torchvision are installed, PaddleOCR's det, rec
and cls from the ``rapidocr-onnxruntime`` 1.4.4 wheel's models folder, ``--paddle DIR`` or the
installed package). One run is ``session.run(None, feeds)`` with host arrays on both sides.
ORT runs with its default graph optimizations and ``session.intra_op.allow_spinning`` off (its
threads otherwise spin between runs and take the cores from whichever contender runs next).
Each model's two sessions are timed in alternating rounds of 5 runs (``--rounds``, after a
warm-up), and each side's median round is reported, so that a shared machine's load falls on
both alike. The outputs are compared (largest absolute difference).

    python benchmarks/bench_cpu_models.py [--paddle DIR] [--rounds 9] [--json out.json]
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import onnxruntime as ort

import dmlsim.onnx as donnx
from _rig import interleaved_median, machine, print_table, write_json
from bench_first_inference import _models


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paddle", default=None, help="the folder of PaddleOCR's ONNX models")
    ap.add_argument("--rounds", type=int, default=9,
                    help="alternating rounds of 5 runs per side (the median is reported)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    rows, records = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, feeds in _models(Path(tmp), args.paddle):
            ours = donnx.InferenceSession(str(path))
            if list(feeds) == ["x"]:  # the model's one input, by its own name
                feeds = {ours.get_inputs()[0].name: feeds["x"]}
            opts = ort.SessionOptions()
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            theirs = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
            got, want = ours.run(None, feeds)[0], theirs.run(None, feeds)[0]
            diff = float(np.max(np.abs(got.astype(np.float64) - want)))
            t = interleaved_median({"dmlsim": lambda: ours.run(None, feeds),
                                    "ort": lambda: theirs.run(None, feeds)}, rounds=args.rounds)
            ratio = t["dmlsim"] / t["ort"]
            rows.append([name, f"{t['dmlsim'] * 1e3:.1f}", f"{t['ort'] * 1e3:.1f}",
                         f"{ratio:.2f}", f"{diff:.1e}"])
            records.append({"model": name, "dmlsim_ms": t["dmlsim"] * 1e3,
                            "ort_ms": t["ort"] * 1e3, "ratio": ratio, "max_abs_diff": diff})
            print(rows[-1], flush=True)
    print_table("o. whole models on the CPU: dmlsim.onnx against ONNX Runtime, alternating",
                ["model", "dmlsim ms", "ORT ms", "dmlsim/ORT", "max diff"], rows)
    write_json(args.json, {"machine": machine(), "rows": records})


if __name__ == "__main__":
    main()

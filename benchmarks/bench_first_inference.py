"""Benchmark n: the first inference of whole ONNX models, in a new process and in the next one.

For each model a fresh process makes a ``dmlsim.onnx.InferenceSession`` (``prepare``), times
its first ``run`` (lowering onto DML operators, CompileGraph, the initializer, tracing and XLA's
compilation of the one program), its second run and the steady state (median of 10); then a
second process with the same cache directory times its first run again (dmlsim's programs by
structure and JAX's persistent cache serve it: ``DMLSIM_CACHE_DIR``). ONNX Runtime's CPU
provider is timed the same way in the first process (session, first run, steady). Every
process starts with an empty cache directory of its own for the first dmlsim process.

Models: the CNN and transformer block of ``examples/onnx_models.py``; torchvision's resnet18
(batch 8) and all-MiniLM-L6-v2 (``_minilm.py``, batch 1, 128 tokens, two inputs) when torch
and torchvision are installed; PaddleOCR's det, rec and cls models when the
``rapidocr-onnxruntime`` wheel's models are found (``--paddle DIR``, or the installed package:
``pip download --no-deps rapidocr-onnxruntime==1.4.4`` and unzip it, the models ship in it).

    python benchmarks/bench_first_inference.py [--paddle DIR] [--json out.json]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _rig import machine, print_table, write_json

HERE = Path(__file__).resolve().parent
PADDLE = {"det": ("ch_PP-OCRv4_det_infer.onnx", (1, 3, 480, 640)),
          "rec": ("ch_PP-OCRv4_rec_infer.onnx", (1, 3, 48, 320)),
          "cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", (6, 3, 48, 192))}


def _child(path, feeds_path, with_ort):
    """One process: prepare, run 1, run 2, steady (and ORT's); prints one JSON line."""
    with np.load(feeds_path) as f:
        feeds = dict(f)
    t = time.perf_counter()
    import dmlsim.onnx as donnx
    s = donnx.InferenceSession(path)
    out = {"prepare": time.perf_counter() - t}
    for k in ("run1", "run2"):
        t = time.perf_counter()
        y = s.run(None, feeds)
        out[k] = time.perf_counter() - t
    out["steady"] = _median(lambda: s.run(None, feeds))
    if with_ort:
        import onnxruntime as ort
        t = time.perf_counter()
        r = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        out["ort_session"] = time.perf_counter() - t
        t = time.perf_counter()
        want = r.run(None, feeds)
        out["ort_run1"] = time.perf_counter() - t
        out["ort_steady"] = _median(lambda: r.run(None, feeds))
        out["max_abs_diff"] = max(float(np.max(np.abs(a - b))) for a, b in zip(y, want))
    print(json.dumps(out))


def _median(fn, n=10):
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


def _spawn(path, feeds, cache, with_ort):
    env = dict(os.environ, DMLSIM_CACHE_DIR=cache, DMLSIM_COMPILATION_CACHE="1")
    code = [sys.executable, __file__, "--child", str(path), str(feeds)] + \
        (["--ort"] if with_ort else [])
    out = subprocess.run(code, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _image(shape):
    return {"x": np.random.default_rng(0).standard_normal(shape).astype(np.float32)}


def _models(tmp, paddle):
    """(name, ONNX file, feeds by input name; "x" stands for the model's one input)."""
    spec = importlib.util.spec_from_file_location("onnx_models", HERE.parent / "examples" /
                                                  "onnx_models.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    for name, make in (("cnn", m.cnn), ("transformer", m.transformer)):
        model, shape = make()
        path = tmp / f"{name}.onnx"
        path.write_bytes(model.SerializeToString())
        yield name, path, _image(shape)
    try:
        import torch
        import torchvision
    except ImportError:
        print("resnet18: torch and torchvision are not installed; skipped")
    else:
        path = tmp / "resnet18.onnx"
        torch.onnx.export(torchvision.models.resnet18().eval(), torch.zeros(8, 3, 224, 224),
                          str(path), dynamo=False)
        yield "resnet18 b8", path, _image((8, 3, 224, 224))
        import _minilm
        path = tmp / "minilm.onnx"
        path.write_bytes(_minilm.onnx_bytes(_minilm.model()))
        yield "all-MiniLM-L6-v2 b1 s128", path, _minilm.feeds(1, 128)
    if paddle is None:
        found = importlib.util.find_spec("rapidocr_onnxruntime")
        paddle = Path(found.submodule_search_locations[0]) / "models" if found else None
    if paddle is None or not Path(paddle).is_dir():
        print("PaddleOCR: no rapidocr-onnxruntime models (--paddle DIR); skipped")
        return
    for name, (file, shape) in PADDLE.items():
        yield f"PaddleOCR {name}", Path(paddle) / file, _image(shape)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paddle", default=None, help="the folder of PaddleOCR's ONNX models")
    ap.add_argument("--json", default=None)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--ort", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        _child(args.child[0], args.child[1], args.ort)
        return
    rows, results = [], []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name, path, feeds in _models(tmp, args.paddle):
            cache = str(tmp / f"cache-{len(rows)}")
            if list(feeds) == ["x"]:  # the model's one input, by its own name
                import onnx
                feeds = {onnx.load(str(path), load_external_data=False).graph.input[0].name:
                         feeds["x"]}
            np.savez(tmp / "feeds.npz", **feeds)
            first = _spawn(path, tmp / "feeds.npz", cache, True)
            again = _spawn(path, tmp / "feeds.npz", cache, False)
            r = dict(model=name, **first, next_process_run1=again["run1"])
            results.append(r)
            rows.append([name, f"{r['prepare']:.2f}", f"{r['run1']:.2f}", f"{r['run2'] * 1e3:.1f}",
                         f"{r['next_process_run1']:.2f}", f"{r['steady'] * 1e3:.2f}",
                         f"{r['ort_session'] + r['ort_run1']:.2f}",
                         f"{r['ort_steady'] * 1e3:.2f}", f"{r['steady'] / r['ort_steady']:.1f}",
                         f"{r['max_abs_diff']:.1e}"])
    print_table("n. first inference (s: seconds, ms: milliseconds; steady: median of 10)",
                ["model", "prepare s", "run 1 s", "run 2 ms", "next process run 1 s",
                 "steady ms", "ORT session + run 1 s", "ORT steady ms", "steady dmlsim/ORT",
                 "max |diff|"], rows)
    if args.json:
        write_json(args.json, {"machine": machine(), "rows": results})


if __name__ == "__main__":
    main()

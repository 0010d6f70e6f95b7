"""Benchmark m: torchvision's resnet18 through dmlsim.onnx against PyTorch on the same GPU.

The model is exported with ``torch.onnx.export`` (random weights, eval mode) and run by a
``dmlsim.onnx.InferenceSession`` (one run = upload, execute, wait, readback, as an application
does) and by PyTorch eager (TF32 off, so FLOAT32 is float32 on both sides) and
``torch.compile``, side by side in one process; the FLOAT16 rows run the model converted to
half on both sides (dmlsim with and without ALLOW_HALF_PRECISION_COMPUTATION). Outputs are
compared before timing. Needs torch, torchvision and onnx (the H200 machines have them).

    python benchmarks/bench_torch_models.py [--batch 8] [--json out.json]
"""
from __future__ import annotations

import argparse
import io

import numpy as np
import torch
import torchvision

import dmlsim as dml
import dmlsim.onnx as donnx
from _rig import best_of, machine, print_table, write_json


def _median_ms(fn, n=30):
    return 1e3 * best_of(fn, n)[1]  # (min, median) after a warm-up


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    rows = []
    for dtype in (torch.float32, torch.float16):
        model = torchvision.models.resnet18().eval().to(dtype)
        x = torch.randn(args.batch, 3, 224, 224, dtype=dtype)
        buf = io.BytesIO()
        torch.onnx.export(model, (x,), buf, input_names=["x"], output_names=["y"],
                          opset_version=17, dynamo=False)
        gpu_model, gx = model.to(dev), x.to(dev)
        compiled = torch.compile(gpu_model)

        def eager():
            with torch.no_grad():
                y = gpu_model(gx)
            torch.cuda.synchronize() if dev == "cuda" else None
            return y

        def comp():
            with torch.no_grad():
                y = compiled(gx)
            torch.cuda.synchronize() if dev == "cuda" else None
            return y
        want = eager().float().cpu().numpy()
        flag_sets = [0] if dtype == torch.float32 else \
            [0, dml.DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION]
        t_eager, t_comp = _median_ms(eager), _median_ms(comp)
        for flags in flag_sets:
            opts = donnx.SessionOptions()
            opts.execution_flags = flags
            session = donnx.InferenceSession(buf.getvalue(), opts)
            xn = x.numpy()
            got = session.run(None, {"x": xn})[0].astype(np.float32)
            err = float(np.abs(got - want).max() / max(1.0, np.abs(want).max()))
            t_d = _median_ms(lambda: session.run(None, {"x": xn}))
            rows.append({"dtype": str(dtype).split(".")[-1], "flags": flags, "batch": args.batch,
                         "dmlsim_ms": t_d, "eager_ms": t_eager, "compile_ms": t_comp,
                         "eager_over_dmlsim": t_eager / t_d, "compile_over_dmlsim": t_comp / t_d,
                         "max_rel_diff": err})
    print_table(f"m. resnet18 batch {args.batch}: dmlsim.onnx against PyTorch on the same device",
                ["dtype", "dmlsim flags", "dmlsim ms", "eager ms", "compile ms",
                 "eager/dmlsim", "compile/dmlsim", "max rel diff"],
                [[r["dtype"], "half" if r["flags"] else "default", f"{r['dmlsim_ms']:.2f}",
                  f"{r['eager_ms']:.2f}", f"{r['compile_ms']:.2f}",
                  f"{r['eager_over_dmlsim']:.2f}", f"{r['compile_over_dmlsim']:.2f}",
                  f"{r['max_rel_diff']:.1e}"] for r in rows])
    write_json(args.json, {"machine": machine(), "torch_models": rows})
    return rows


if __name__ == "__main__":
    main()

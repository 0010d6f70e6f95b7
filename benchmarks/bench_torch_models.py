"""Benchmark m: torchvision's resnet18 and all-MiniLM-L6-v2 through dmlsim.onnx against
PyTorch on the same GPU.

Each model is exported with ``torch.onnx.export`` (random weights, eval mode; MiniLM is
``_minilm.py``'s plain-PyTorch BERT of that shape) and run by a
``dmlsim.onnx.InferenceSession`` -- ``run`` (upload, execute, wait, readback, as an application
does with host arrays) and ``run_with_iobinding`` (ORT's IOBinding: inputs on the device, the
outputs left there, the run waited for, which is what PyTorch's timing measures) -- and by
PyTorch eager (TF32 off, so FLOAT32 is float32 on both sides) and
``torch.compile``, side by side in one process; the FLOAT16 rows run the model converted to
half on both sides (dmlsim with and without ALLOW_HALF_PRECISION_COMPUTATION). Outputs are
compared before timing; then all of a model's contenders (PyTorch eager, torch.compile, each
session's ``run`` and IOBinding run) are timed in alternating rounds of 5 calls, and each
contender's median round is reported, so that a shared machine's changing load falls on all
of them alike. Needs torch, torchvision and onnx (the H200 machines have them).

    python benchmarks/bench_torch_models.py [--batch 8] [--minilm 32x128] [--models resnet18,minilm]
                                            [--rounds 9] [--json out.json]
"""
from __future__ import annotations

import argparse
import io

import numpy as np
import torch
import torchvision

import _minilm
import dmlsim as dml
import dmlsim.onnx as donnx
from _rig import interleaved_median, machine, print_table, write_json


def _resnet18(dtype, batch):
    model = torchvision.models.resnet18().eval().to(dtype)
    x = torch.randn(batch, 3, 224, 224, dtype=dtype)
    buf = io.BytesIO()
    torch.onnx.export(model, (x,), buf, input_names=["x"], output_names=["y"],
                      opset_version=17, dynamo=False)
    return model, {"x": x.numpy()}, buf.getvalue()


def _minilm_model(dtype, shape):
    model = _minilm.model(dtype)
    return model, _minilm.feeds(*shape), _minilm.onnx_bytes(model)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=8, help="resnet18's batch")
    ap.add_argument("--minilm", default="32x128", help="MiniLM's batch x sequence")
    ap.add_argument("--models", default="resnet18,minilm")
    ap.add_argument("--rounds", type=int, default=9,
                    help="alternating rounds of 5 calls per contender (the median is reported)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    shape = tuple(int(v) for v in args.minilm.split("x"))
    makers = {"resnet18": lambda dt: _resnet18(dt, args.batch),
              "minilm": lambda dt: _minilm_model(dt, shape)}
    sizes = {"resnet18": f"b{args.batch}", "minilm": f"b{shape[0]} s{shape[1]}"}
    rows = []
    for name in args.models.split(","):
        for dtype in (torch.float32, torch.float16):
            model, feeds, onnx_bytes = makers[name](dtype)
            gpu_model = model.to(dev)
            gx = [torch.from_numpy(v).to(dev) for v in feeds.values()]
            compiled = torch.compile(gpu_model)

            def timed(m):
                def run():
                    with torch.no_grad():
                        y = m(*gx)
                    torch.cuda.synchronize() if dev == "cuda" else None
                    return y
                return run
            eager, comp = timed(gpu_model), timed(compiled)
            want = eager().float().cpu().numpy()
            flag_sets = [0] if dtype == torch.float32 else \
                [0, dml.DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION]
            sessions, timed_fns = [], {"eager": eager, "compile": comp}
            for flags in flag_sets:
                opts = donnx.SessionOptions()
                opts.execution_flags = flags
                session = donnx.InferenceSession(onnx_bytes, opts)
                got = session.run(None, feeds)[0].astype(np.float32)
                err = float(np.abs(got - want).max() / max(1.0, np.abs(want).max()))
                # ORT's IOBinding, as PyTorch's timing runs: inputs already on the device, the
                # outputs left there, the run waited for
                binding = session.io_binding()
                for n, v in feeds.items():
                    binding.bind_ortvalue_input(n, donnx.OrtValue.ortvalue_from_numpy(v, "dml"))
                for n in session.output_names:
                    binding.bind_output(n, "dml")

                def bound(session=session, binding=binding):
                    session.run_with_iobinding(binding)
                    binding.synchronize_outputs()
                bound()
                io_err = float(np.abs(binding.copy_outputs_to_cpu()[0].astype(np.float32) -
                                      got).max())
                assert io_err == 0.0, "IOBinding's result differs from run's"
                timed_fns[("run", flags)] = lambda s=session: s.run(None, feeds)
                timed_fns[("bound", flags)] = bound
                sessions.append((flags, err))
            # all of one model's contenders timed in alternating rounds (the machines are shared)
            t = {k: 1e3 * v for k, v in interleaved_median(timed_fns, args.rounds).items()}
            t_eager, t_comp = t["eager"], t["compile"]
            for flags, err in sessions:
                t_d, t_io = t[("run", flags)], t[("bound", flags)]
                rows.append({"model": name, "size": sizes[name],
                             "dtype": str(dtype).split(".")[-1], "flags": flags,
                             "dmlsim_ms": t_d, "iobinding_ms": t_io, "eager_ms": t_eager,
                             "compile_ms": t_comp, "eager_over_dmlsim": t_eager / t_d,
                             "eager_over_iobinding": t_eager / t_io,
                             "compile_over_dmlsim": t_comp / t_d,
                             "compile_over_iobinding": t_comp / t_io, "max_rel_diff": err})
    print_table("m. whole models: dmlsim.onnx against PyTorch on the same device",
                ["model", "size", "dtype", "dmlsim flags", "run ms", "iobinding ms", "eager ms",
                 "compile ms", "eager/run", "eager/iobinding", "compile/iobinding",
                 "max rel diff"],
                [[r["model"], r["size"], r["dtype"], "half" if r["flags"] else "default",
                  f"{r['dmlsim_ms']:.2f}", f"{r['iobinding_ms']:.2f}", f"{r['eager_ms']:.2f}",
                  f"{r['compile_ms']:.2f}", f"{r['eager_over_dmlsim']:.2f}",
                  f"{r['eager_over_iobinding']:.2f}", f"{r['compile_over_iobinding']:.2f}",
                  f"{r['max_rel_diff']:.1e}"] for r in rows])
    write_json(args.json, {"machine": machine(), "torch_models": rows})
    return rows


if __name__ == "__main__":
    main()

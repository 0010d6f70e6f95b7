"""Benchmark g: whole ONNX models through dmlsim.onnx against ONNX Runtime's CPU provider.

The models of ``examples/onnx_models.py`` (MLP, CNN, transformer block) and a depthwise-separable
(MobileNet-style) stack at several batch sizes. One *run* is one inference as an application does it: ``session.run(None, {"x": x})``
on both sides (dmlsim: write the mapped UPLOAD buffer, execute the prepared command list, wait
on the fence, read the READBACK buffer). Time per run is the median of N after a warm-up, both
measured side by side in this process; the ratio is dmlsim / ORT (below 1: dmlsim is faster).
Outputs are compared with each other (the largest absolute difference is printed). For the
MLP and the CNN the same forward pass written by hand in JAX (``jax.jit``, float32 at
Precision.HIGHEST, weights resident, the input passed as a NumPy array and the result read back)
is timed too: the floor any JAX-based runtime starts from (raw JAX / ORT).

    pip install -e ".[bench]"
    python benchmarks/bench_onnx_models.py [--quick] [--json out.json]
"""
from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import onnxruntime as ort
from jax import lax
from onnx import TensorProto, helper, numpy_helper

import dmlsim.onnx as donnx

from _rig import best_of, machine, print_table, write_json

_spec = importlib.util.spec_from_file_location(
    "onnx_models", Path(__file__).resolve().parents[1] / "examples" / "onnx_models.py")
models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(models)


P = lax.Precision.HIGHEST


def _mlp(x, w):
    h = jnp.maximum(jnp.dot(x, w["w1"], precision=P) + w["b1"], 0)
    return jax.nn.softmax(jnp.dot(h, w["w2"], precision=P) + w["b2"], axis=1)


def _cnn(x, w):
    def ch(v):
        return v[None, :, None, None]
    a = lax.conv_general_dilated(x, w["w1"], (1, 1), ((1, 1), (1, 1)), precision=P) + ch(w["c1"])
    b = (a - ch(w["mean"])) / jnp.sqrt(ch(w["var"]) + 1e-5) * ch(w["scale"]) + ch(w["bias"])
    d = lax.reduce_window(jnp.maximum(b, 0), -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2),
                          "VALID")
    e = jnp.maximum(lax.conv_general_dilated(d, w["w2"], (2, 2), ((1, 1), (1, 1)),
                                             precision=P), 0)
    z = jnp.dot(e.mean(axis=(2, 3)), w["w3"], precision=P) + w["b3"]
    return jax.nn.softmax(z, axis=-1)


RAW = {"mlp": _mlp, "cnn": _cnn}  # the others have no hand-written twin


def separable(batch, blocks=4, c=32, hw=56):
    """MobileNet-style blocks: depthwise 3x3 convolution, Clip(0, 6), pointwise 1x1
    convolution, Relu (the depthwise-heavy kind of model, as PaddleOCR's classifier)."""
    rng = np.random.default_rng(1)
    nodes, inits, v = [], [], "x"
    for k in range(blocks):
        dw = numpy_helper.from_array((rng.standard_normal((c, 1, 3, 3)) * 0.3).astype(
            np.float32), f"dw{k}")
        pw = numpy_helper.from_array((rng.standard_normal((c, c, 1, 1)) * 0.2).astype(
            np.float32), f"pw{k}")
        lo, hi = (numpy_helper.from_array(np.array(b, np.float32), f"{n}{k}")
                  for n, b in (("lo", 0.0), ("hi", 6.0)))
        inits += [dw, pw, lo, hi]
        nodes += [helper.make_node("Conv", [v, f"dw{k}"], [f"d{k}"], group=c, pads=[1] * 4),
                  helper.make_node("Clip", [f"d{k}", f"lo{k}", f"hi{k}"], [f"c{k}"]),
                  helper.make_node("Conv", [f"c{k}", f"pw{k}"], [f"p{k}"]),
                  helper.make_node("Relu", [f"p{k}"], [f"r{k}"])]
        v = f"r{k}"
    shape = (batch, c, hw, hw)
    g = helper.make_graph(nodes, "separable", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, list(shape))], [helper.make_tensor_value_info(
            v, TensorProto.FLOAT, list(shape))], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m, shape


def raw_runner(name, model):
    """The hand-written JAX forward pass of ``name`` over ``model``'s weights, or None."""
    if name not in RAW:
        return None
    fn = jax.jit(RAW[name])
    w = {i.name: jnp.asarray(numpy_helper.to_array(i)) for i in model.graph.initializer}
    return lambda x: np.asarray(fn(x, w))


def median_time(fn, n):
    return best_of(fn, n)[1]  # (min, median) after a warm-up


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--json")
    a = p.parse_args()
    batches = (1, 8) if a.quick else (1, 8, 64)
    n = 10 if a.quick else 30
    rows, results = [], []
    for name, build in {**models.MODELS, "separable": separable}.items():
        for batch in batches:
            model, shape = build(batch)
            x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
            ours = donnx.prepare(model)
            theirs = ort.InferenceSession(model.SerializeToString(),
                                          providers=["CPUExecutionProvider"])
            want = theirs.run(None, {"x": x})[0]
            diff = float(np.abs(ours.run(None, {"x": x})[0] - want).max())
            raw = raw_runner(name, model)
            if raw is not None:
                assert np.allclose(raw(x), want, rtol=1e-4, atol=1e-5), name
            t_ours = median_time(lambda: ours.run(None, {"x": x}), n)
            t_ort = median_time(lambda: theirs.run(None, {"x": x}), n)
            t_raw = median_time(lambda: raw(x), n) if raw is not None else None
            rows.append((name, batch, f"{t_ours * 1e3:.3f}", f"{t_ort * 1e3:.3f}",
                         f"{t_ours / t_ort:.2f}",
                         "-" if t_raw is None else f"{t_raw * 1e3:.3f}",
                         "-" if t_raw is None else f"{t_raw / t_ort:.2f}", f"{diff:.1e}"))
            results.append({"model": name, "batch": batch, "dmlsim_ms": t_ours * 1e3,
                            "ort_ms": t_ort * 1e3, "ratio": t_ours / t_ort, "max_diff": diff,
                            "raw_jax_ms": None if t_raw is None else t_raw * 1e3,
                            "raw_over_ort": None if t_raw is None else t_raw / t_ort})
    print_table("g. ONNX models: dmlsim.onnx vs ONNX Runtime CPU (ms per run; ratio = dmlsim/ORT)",
                ("model", "batch", "dmlsim ms", "ORT ms", "ratio", "raw JAX ms", "raw/ORT",
                 "max |diff|"), rows)
    write_json(a.json, {"machine": machine(), "results": results})


if __name__ == "__main__":
    main()

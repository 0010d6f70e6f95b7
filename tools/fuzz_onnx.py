"""Fuzz dmlsim.onnx with broken models: byte flips of serialized models (truncated, foreign
bytes, a one-byte corruption) and field mutations (attributes set to odd values, op types
swapped, inputs renamed or removed, initializer values and input dimensions changed, attributes
added) of the example models (an MLP, a CNN, a transformer block with symbolic dimensions). The
property: ``InferenceSession`` and ``run`` return or raise HResultError, nothing else, and no
case hangs (each is timed; a case over ``--limit`` seconds counts as a hang).

    python tools/fuzz_onnx.py [--cases 10000] [--seed 0]    # the long profile; the suite runs
                                                              # a short one
"""
from __future__ import annotations

import argparse
import importlib.util
import time
import traceback
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

import dmlsim as dml
import dmlsim.onnx as donnx

_spec = importlib.util.spec_from_file_location(
    "onnx_models", Path(__file__).resolve().parents[1] / "examples" / "onnx_models.py")
_models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_models)

OPS = ["Relu", "Add", "MatMul", "Reshape", "Transpose", "Softmax", "Conv", "Gemm", "Concat",
       "Slice", "Gather", "Unsqueeze", "LayerNormalization", "MaxPool", "Cast", "Split",
       "ReduceMean", "Einsum", "If"]


def seeds():
    """(model, feeds) of the example models."""
    return [(_models.mlp()[0], {"x": np.ones((8, 16), np.float32)}),
            (_models.cnn()[0], {"x": np.ones((2, 3, 16, 16), np.float32)}),
            (_models.dynamic_transformer(), {"x": np.ones((1, 3, 32), np.float32)})]


def flip_bytes(model, rng) -> bytes:
    data = bytearray(model.SerializeToString())
    kind = rng.integers(3)
    if kind == 0:    # truncated
        return bytes(data[:rng.integers(len(data))])
    for _ in range(rng.integers(1, 4)):
        data[rng.integers(len(data))] = rng.integers(256)
    return bytes(data)


def mutate_fields(model, rng):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    node = g.node[rng.integers(len(g.node))]
    what = rng.integers(7)
    if what == 0 and node.attribute:
        a = node.attribute[rng.integers(len(node.attribute))]
        if a.type == onnx.AttributeProto.INT:
            a.i = int(rng.integers(-5, 10))
        elif a.type == onnx.AttributeProto.INTS and len(a.ints):
            a.ints[rng.integers(len(a.ints))] = int(rng.integers(-5, 10))
        elif a.type == onnx.AttributeProto.FLOAT:
            a.f = float(rng.standard_normal() * 10)
    elif what == 1:
        node.op_type = OPS[rng.integers(len(OPS))]
    elif what == 2 and len(node.input):
        node.input[rng.integers(len(node.input))] = \
            ["x", "", "nope", g.node[0].output[0]][rng.integers(4)]
    elif what == 3 and len(g.initializer):
        init = g.initializer[rng.integers(len(g.initializer))]
        arr = numpy_helper.to_array(init).copy()
        flat = arr.reshape(-1)
        if flat.size:
            flat[rng.integers(flat.size)] = -1 if flat.dtype.kind in "iu" else np.nan
        init.CopyFrom(numpy_helper.from_array(arr, init.name))
    elif what == 4:
        dims = g.input[0].type.tensor_type.shape.dim
        dims[rng.integers(len(dims))].dim_value = int(rng.integers(-1, 5))
    elif what == 5 and len(node.input):
        del node.input[int(rng.integers(len(node.input)))]
    elif what == 6:
        name = ["axis", "perm", "kernel_shape", "pads"][rng.integers(4)]
        value = int(rng.integers(-3, 4)) if rng.integers(2) else \
            [int(v) for v in rng.integers(-2, 4, 3)]
        node.attribute.add().CopyFrom(onnx.helper.make_attribute(name, value))
    return m


def run(cases: int, seed: int = 0, limit: float = 60.0, progress: bool = True) -> dict:
    rng = np.random.default_rng(seed)
    base = seeds()
    tally = {"cases": 0, "ran": 0, "hresult": 0, "bad": [], "hangs": []}
    steps = range(cases)
    if progress:
        from tqdm import tqdm
        steps = tqdm(steps, desc="broken ONNX models")
    for i in steps:
        model, feeds = base[rng.integers(len(base))]
        broken = flip_bytes(model, rng) if i % 2 else mutate_fields(model, rng)
        start = time.perf_counter()
        try:
            donnx.InferenceSession(broken).run(None, feeds)
            tally["ran"] += 1
        except dml.HResultError:
            tally["hresult"] += 1
        except Exception:  # noqa: BLE001 -- what the fuzz looks for
            tally["bad"].append((i, traceback.format_exc(limit=-3)))
        if time.perf_counter() - start > limit:
            tally["hangs"].append(i)
        tally["cases"] += 1
    return tally


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=10000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=float, default=60.0, help="seconds a case may take")
    args = p.parse_args(argv)
    t = run(args.cases, args.seed, args.limit)
    print(f"{t['cases']} broken models: {t['ran']} ran, {t['hresult']} HResultError, "
          f"{len(t['bad'])} other exceptions, {len(t['hangs'])} hangs")
    for i, text in t["bad"][:5]:
        print(f"--- case {i}\n{text}")
    return 1 if t["bad"] or t["hangs"] else 0


if __name__ == "__main__":
    raise SystemExit(main())

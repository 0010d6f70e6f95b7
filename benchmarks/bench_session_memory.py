"""Memory of a long-running dmlsim.onnx session fed ever new input lengths: a [seq, 8] MatMul +
Relu model with a symbolic ``seq``, run once at each length 1..N through a plan cache of 8, the
process's resident memory printed as it goes (issue 22's "1,000 lengths" figure). Not part of
the test suite (tests/test_onnx_session.py checks 50 lengths).

    python benchmarks/bench_session_memory.py [--lengths 1000] [--bound 8]
"""
import argparse
import gc
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import dmlsim.onnx as donnx


def _rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2 ** 20


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lengths", type=int, default=1000)
    p.add_argument("--bound", type=int, default=8)
    args = p.parse_args(argv)
    w = numpy_helper.from_array(np.ones((8, 8), np.float32), "w")
    vi = helper.make_tensor_value_info
    model = helper.make_model(helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])],
        "m", [vi("x", TensorProto.FLOAT, ["seq", 8])], [vi("y", TensorProto.FLOAT, ["seq", 8])],
        [w]), ir_version=10)
    opts = donnx.SessionOptions()
    opts.plan_cache_size = args.bound
    session, start, base = donnx.InferenceSession(model, opts), time.time(), None
    marks = {10, 100, 250, 500, 750, args.lengths}
    for n in range(1, args.lengths + 1):
        session.run(None, {"x": np.ones((n, 8), np.float32)})
        if n in marks:
            gc.collect()
            rss = _rss_mib()
            base = base if base is not None else rss
            print(f"length {n:5d}: {rss:6.0f} MiB resident (+{rss - base:.0f} since length 10), "
                  f"{time.time() - start:.0f} s, {session.plan_cache_info()}", flush=True)


if __name__ == "__main__":
    main()

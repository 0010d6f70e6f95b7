"""Write the ONNX backend node tests that ``tests/test_onnx.py`` runs (the names in
``tests/onnx_node_tests.txt``) to ``tests/models/onnx_node_tests.npz``: what ONNX's own
``backend-test-tools generate-data`` writes per node test (``model.onnx``, then
``input_<i>.pb`` and ``output_<i>.pb`` TensorProtos of its one data set), as the bytes of
entries ``<test>/model.onnx``, ``<test>/input_<i>.pb``, ``<test>/output_<i>.pb``, with
``cases.json`` (each test's tolerances, the onnx version that made them).

The onnx wheel no longer ships that data, and making it means running every node test's
Python expectation (about 1,900 of them, 9.5 s of CPU), which each pytest worker did while
collecting. Run again after upgrading onnx or changing the list::

    python tools/make_onnx_node_data.py [--out tests/models/onnx_node_tests.npz]
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.test.loader import load_model_tests

ROOT = Path(__file__).resolve().parents[1]


def _tensor(value, name) -> bytes:
    if isinstance(value, onnx.TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(np.asarray(value), name).SerializeToString()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "tests" / "models" / "onnx_node_tests.npz"))
    args = ap.parse_args(argv)
    names = (ROOT / "tests" / "onnx_node_tests.txt").read_text().split()
    cases = {c.name: c for c in load_model_tests(kind="node") if c.name in set(names)}
    missing = sorted(set(names) - set(cases))
    if missing:
        raise SystemExit(f"onnx {onnx.__version__} has no node tests {missing}")
    entries, tolerances = {}, {}
    for name in names:
        case = cases[name]
        entries[f"{name}/model.onnx"] = case.model.SerializeToString()
        (inputs, outputs), = case.data_sets  # one data set each
        graph = case.model.graph
        for kind, values, infos in (("input", inputs, graph.input),
                                    ("output", outputs, graph.output)):
            for i, (value, info) in enumerate(zip(values, infos)):
                if not info.type.HasField("tensor_type"):
                    raise SystemExit(f"{name}: {kind} {i} is not a tensor")
                entries[f"{name}/{kind}_{i}.pb"] = _tensor(value, info.name)
        tolerances[name] = {"rtol": case.rtol, "atol": case.atol}
    entries["cases.json"] = json.dumps({"onnx": onnx.__version__, "tolerances": tolerances},
                                       indent=1, sort_keys=True).encode()
    np.savez_compressed(args.out, **{k: np.frombuffer(v, np.uint8) for k, v in entries.items()})
    print(f"wrote {len(names)} node tests to {args.out}")


if __name__ == "__main__":
    main()

"""Run ONNX's backend tests (the models and data shipped with the ``onnx`` package: the node,
simple, pytorch-converted and pytorch-operator kinds, all of them; "real" needs downloads) through ``dmlsim.onnx.Backend`` and report pass / fail with the reason, as the backend test
runner would judge them (rtol 1e-3, atol 1e-7; bit-exact for integers), and for each pass where
it ran: wholly on DML, or with nodes on the CPU (ONNX Runtime's partitioning: the placement's
reasons are printed with ``--placement``).

    python tools/onnx_conformance.py [--filter REGEX] [--failures] [--placement] [--lowered]
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import warnings

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.test.runner import load_model_tests

import dmlsim as dml
import dmlsim.onnx as donnx


def _load(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def lowered_cases(pattern=None):
    """(case, op types) of the node tests whose every node has a lowering."""
    supported = set(donnx.supported_operators()) | {"Constant"}
    out = []
    for case in load_model_tests(kind="node"):
        if pattern and not re.search(pattern, case.name):
            continue
        model = _model(case)
        ops = {n.op_type for n in model.graph.node}
        if ops <= supported and not any(n.domain not in ("", "ai.onnx")
                                        for n in model.graph.node):
            out.append((case, ops))
    return out


def _model(case):
    return case.model if case.model is not None else \
        onnx.load(os.path.join(case.model_dir, "model.onnx"))


def _data_sets(case):
    def arr(x):
        return numpy_helper.to_array(x) if isinstance(x, onnx.TensorProto) else np.asarray(x)
    if case.data_sets is not None:
        return [([arr(x) for x in i], [arr(x) for x in o]) for i, o in case.data_sets]
    out = []
    for data in sorted(glob.glob(os.path.join(case.model_dir, "test_data_set_*"))):
        def files(kind):
            return [_load(p) for p in sorted(glob.glob(os.path.join(data, f"{kind}_*.pb")),
                                             key=lambda p: int(p.rsplit("_", 1)[1][:-3]))]
        out.append((files("input"), files("output")))
    return out


KINDS = ("node", "simple", "pytorch-converted", "pytorch-operator")  # "real" downloads models


def all_cases(pattern=None):
    return [(case, None) for kind in KINDS for case in load_model_tests(kind=kind)
            if not pattern or re.search(pattern, case.name)]


def run_case(case, placement=None) -> str | None:
    """None if the case passes, else the reason; ``placement`` (a list) receives the CPU
    rows of the last plan."""
    try:
        rep = donnx.Backend.prepare(_model(case))
    except dml.HResultError as e:
        return f"{dml.hresult_name(e.hresult)} at prepare: {e.message}"
    try:
        data = _data_sets(case)
    except (ValueError, TypeError) as e:
        return f"test data that is not tensors (sequences or optionals): {e}"
    for ins, want in data:
        try:
            got = rep.run(ins)
        except dml.HResultError as e:
            return f"{dml.hresult_name(e.hresult)} at run: {e.message}"
        except Exception as e:  # noqa: BLE001 -- reported: a bug to fix
            return f"BUG at run: {type(e).__name__}: {e}"
        for g, w in zip(got, want):
            if g.shape != w.shape:
                return f"shape {g.shape}, expected {w.shape}"
            if w.dtype.kind == "V" and w.dtype.itemsize <= 2:  # ml_dtypes' bfloat16 / float8
                g, w = g.astype(np.float32), w.astype(np.float32)
            if w.dtype.kind in "fc":
                if not np.allclose(g.astype(np.float64), w.astype(np.float64), rtol=case.rtol,
                                   atol=case.atol, equal_nan=True):
                    return f"values differ (max |diff| {np.nanmax(np.abs(g - w))})"
            elif not np.array_equal(g, w):
                return "values differ"
    if placement is not None and rep.session.last_plan is not None:
        placement.extend(r for r in rep.session.placement().rows if r.device == "CPU")
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--filter")
    p.add_argument("--failures", action="store_true", help="print only failures")
    p.add_argument("--placement", action="store_true", help="print the CPU nodes of passes")
    p.add_argument("--lowered", action="store_true",
                   help="only the tests whose every operator has a lowering")
    a = p.parse_args()
    warnings.simplefilter("ignore")
    passed = failed = on_dml = 0
    cases = lowered_cases(a.filter) if a.lowered else all_cases(a.filter)
    for case, _ in cases:
        cpu: list = []
        why = run_case(case, cpu)
        if why is None:
            passed += 1
            on_dml += not cpu
            if not a.failures:
                where = "DML" if not cpu else f"CPU x{len(cpu)}"
                print(f"PASS {case.name} [{where}]")
                if a.placement:
                    for r in cpu:
                        print(f"    {r.op_type}: {r.reason[:200]}")
        else:
            failed += 1
            print(f"FAIL {case.name}: {why[:300]}")
    print(f"{passed} passed ({on_dml} wholly on DML, {passed - on_dml} with CPU nodes), "
          f"{failed} failed of {passed + failed} backend tests")


if __name__ == "__main__":
    main()

"""The feature-level history (the spec's guide page, kept in tools/spec/), change by change:
every change is listed in docs/operators.md with what dmlsim does and the tests that cover it
(``tools/fl_history.py``), the page agrees with operators.json, an added operator is refused
one level below its own, and the changes no other test covers are tested here."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import numpy as np
import pytest

import dmlsim as dml
from dmlsim._core import registry
from dmlsim._schema.operators_generated import OPERATORS

from helpers import FEATURE_LEVELS, example_desc, feature_level

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import fl_history  # noqa: E402

CHANGES = fl_history.changes()
REGISTRY = registry.load_all()


def _level(name: str) -> int:
    return int(name[0]) << 12 | int(name[2]) << 8


def test_every_change_is_listed_with_tests_that_exist():
    """Each bullet of the page has what dmlsim does and at least one covering test (driver
    optimizations excepted, which change nothing observable); every test named exists; every
    phrase in SPECIAL matches exactly one change."""
    assert len(CHANGES) > 200 and {c.level for c in CHANGES} == {
        "6_4", "6_3", "6_2", "6_1", "6_0", "5_2", "5_1", "5_0", "4_1", "4_0", "3_1", "3_0",
        "2_1", "2_0"}
    defined: dict = {}
    for c in CHANGES:
        assert c.handling, f"{c.level}: no entry in fl_history.SPECIAL for {c.text!r}"
        assert c.tests or "nothing to observe" in c.handling, c.text
        for ref in c.tests:
            path, _, name = ref.partition("::")
            assert (ROOT / path).exists(), ref
            if name:
                if path not in defined:
                    tree = ast.parse((ROOT / path).read_text())
                    defined[path] = {n.name for n in ast.walk(tree)
                                     if isinstance(n, ast.FunctionDef)}
                assert name in defined[path], f"{ref} does not exist"
    for phrase in fl_history.SPECIAL:
        assert sum(phrase in c.text for c in CHANGES) == 1, phrase


def test_the_page_and_operators_json_agree():
    """An added operator's ``introduced`` is the level that adds it; an extended operator's
    page has a table starting at that level, except where PAGE_SILENT says it has none."""
    silent = set()
    for c in CHANGES:
        for op in c.operators:
            assert op in OPERATORS, f"{c.level}: {op} is not a DML_OPERATOR_TYPE"
            if c.kind == "added":
                assert OPERATORS[op]["introduced"] == _level(c.level), (c.level, op)
            elif c.kind == "extended" and not any(
                    b["feature_level"] == _level(c.level) for b in OPERATORS[op]["support"]):
                silent.add((c.level, op))
    assert silent == set(fl_history.PAGE_SILENT)


ADDED = [(c.level, op) for c in CHANGES if c.kind == "added" for op in c.operators
         if op in REGISTRY and REGISTRY[op].examples]


@pytest.mark.parametrize("level,op", ADDED, ids=[f"{lv}-{op[13:]}" for lv, op in ADDED])
def test_added_operators_are_refused_one_level_below(level, op):
    below = max(v for v in FEATURE_LEVELS if v < _level(level))
    ex = REGISTRY[op].examples[0]
    desc = example_desc(op, ex.inputs, ex.outputs, ex.attrs, ex.owned, ex.strides)[0]
    with feature_level(below):
        dev = dml.DMLCreateDevice(dml.D3D12CreateDevice(None))
    with pytest.raises(dml.HResultError) as e:
        dev.CreateOperator(desc)
    assert e.value.hresult == dml.E_INVALIDARG
    assert str(e.value).startswith(f"{op}: introduced in DML_FEATURE_LEVEL_{level}")


def _at(level: str):
    with feature_level(_level(level)):
        return dml.DMLCreateDevice(dml.D3D12CreateDevice(None))


A = np.array([[[[1, 2], [3, 4]]]], np.float32)


def _gemm(activation):
    return dml.operator_desc("GEMM", ATensor=A, BTensor=A, Alpha=1.0, FusedActivation=activation)


def test_gemm_fuses_softmax_from_6_1():
    """6_1: "DML_OPERATOR_GEMM. FusedActivation now supports ACTIVATION_SOFTMAX and
    ACTIVATION_SOFTMAX1" — GEMM only, from 6_1; the rows of A @ A soft-maxed."""
    mm = A[0, 0].astype(np.float64) @ A[0, 0]
    e = np.exp(mm - mm.max(axis=1, keepdims=True))
    want = (e / e.sum(axis=1, keepdims=True)).reshape(A.shape)
    for activation in ("ACTIVATION_SOFTMAX", {"Type": "ACTIVATION_SOFTMAX1", "Axes": [3]}):
        with pytest.raises(dml.HResultError) as err:
            _at("6_0").CreateOperator(_gemm(activation))
        assert "can be fused from DML_FEATURE_LEVEL_6_1" in str(err.value)
        _at("6_1").CreateOperator(_gemm(activation))
        with feature_level(0x6100):
            got = dml.run(_gemm(activation), A, A, None)
        np.testing.assert_allclose(got, want, rtol=2e-6)
    add = dml.operator_desc("ELEMENT_WISE_ADD1", ATensor=A, BTensor=A,
                            FusedActivation="ACTIVATION_SOFTMAX")
    with pytest.raises(dml.HResultError) as err:
        _at("6_4").CreateOperator(add)
    assert "ACTIVATION_SOFTMAX1 only into GEMM" in str(err.value)


def test_clip_fuses_from_6_0():
    """6_0: "Added DML_OPERATOR_ELEMENT_WISE_CLIP operator to the supported fused activation
    list" — before 6_0 a fused CLIP is E_INVALIDARG."""
    clip = {"Type": "ELEMENT_WISE_CLIP", "Min": 0.0, "Max": 9.0}
    with pytest.raises(dml.HResultError) as err:
        _at("5_2").CreateOperator(_gemm(clip))
    assert err.value.hresult == dml.E_INVALIDARG
    assert "ELEMENT_WISE_CLIP, which can be fused from DML_FEATURE_LEVEL_6_0" in str(err.value)
    _at("6_0").CreateOperator(_gemm(clip))
    with feature_level(0x6000):
        got = dml.run(_gemm(clip), A, A, None)
    assert got.reshape(-1).tolist() == [7.0, 9.0, 9.0, 9.0]  # min(A @ A, 9)


@pytest.mark.parametrize("op,attrs", [("MEAN_VARIANCE_NORMALIZATION", {"CrossChannel": False}),
                                      ("MEAN_VARIANCE_NORMALIZATION1", {"Axes": [2, 3]})])
def test_mvn_scale_and_bias_apart_from_5_2(op, attrs):
    """5_2: "ScaleTensor and BiasTensor can be null independent of each other"; before, one
    without the other is E_INVALIDARG."""
    x = np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2)
    scale = np.full((1, 2, 1, 1), 2.0, np.float32)
    desc = dml.operator_desc(op, InputTensor=x, ScaleTensor=scale, OutputTensor=x,
                             NormalizeVariance=True, Epsilon=0.0, **attrs)
    with pytest.raises(dml.HResultError) as err:
        _at("5_1").CreateOperator(desc)
    assert "DML_FEATURE_LEVEL_5_2" in str(err.value)
    _at("5_2").CreateOperator(desc)
    with feature_level(0x5200):
        got = dml.run(desc, x, scale, None)
    # each 2x2 plane [a, a+1, a+2, a+3] normalized: (v - mean) / std * 2
    plane = (np.arange(4) - 1.5) / np.sqrt(1.25) * 2
    np.testing.assert_allclose(got.reshape(2, 4), np.stack([plane, plane]), rtol=1e-6)


@pytest.mark.parametrize("level", ["1_0", "2_0"])
def test_the_api_is_there_at_every_level(level):
    """2_1 added IDMLDevice1 and CompileGraph to DirectML; dmlsim is DirectML 1.15's API at
    every feature level (levels gate operators, data types and ranks), so a 1_0 device
    compiles a graph."""
    dev = _at(level).QueryInterface(dml.IDMLDevice1)
    x = np.ones((1, 1, 2, 2), np.float32)
    op = dev.CreateOperator(dml.operator_desc("ELEMENT_WISE_IDENTITY", InputTensor=x,
                                              OutputTensor=x))
    node = dml.DML_GRAPH_NODE_DESC(dml.DML_GRAPH_NODE_TYPE_OPERATOR,
                                   dml.DML_OPERATOR_GRAPH_NODE_DESC(op, "copy"))
    graph = dml.DML_GRAPH_DESC(1, 1, 1, [node], 1, [dml.DML_GRAPH_EDGE_DESC(
        dml.DML_GRAPH_EDGE_TYPE_INPUT, dml.DML_INPUT_GRAPH_EDGE_DESC(0, 0, 0))], 1,
        [dml.DML_GRAPH_EDGE_DESC(dml.DML_GRAPH_EDGE_TYPE_OUTPUT,
                                 dml.DML_OUTPUT_GRAPH_EDGE_DESC(0, 0, 0))], 0, [])
    assert isinstance(dev.CompileGraph(graph, 0), dml.IDMLCompiledOperator)

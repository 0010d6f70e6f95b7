"""Every registered operator's worked examples, through the whole faithful path.

For each ``OperatorDef.examples`` entry, the program docs/operators.md prints for it runs, and
its ``dmlsim.run`` does what a DirectML program does:
CreateOperator, CompileOperator, an operator initializer, a binding table, uploads,
RecordDispatch, ExecuteCommandLists, a fence wait and a readback. The result must equal the
example's expected outputs exactly: same dtype and shape, identical bits for integer and bool
outputs; for floats NaN exactly where expected and identical bits elsewhere (so -0.0 is not
0.0), unless ``OperatorDef.ulp`` grants a tolerance for that data type.

The cases are parametrized from the registry, so a newly registered operator is picked up
without touching this file.
"""
from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import dmlsim as dml
from dmlsim._core import registry
from dmlsim._schema.operators_generated import OPERATORS

from helpers import (MAX_LEVEL, assert_bits_equal, assert_float_close, example_desc, feature_level,
                     tolerance)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import gen_op_docs  # noqa: E402

REGISTRY = registry.load_all()
OPS_DIR = Path(dml.__file__).parent / "ops"
CASES = [(name, i) for name in sorted(REGISTRY) for i in range(len(REGISTRY[name].examples))]


def _ids(case):
    name, i = case
    return f"{name.replace('DML_OPERATOR_', '')}-{i}"


def compare(opdef, got, want, what):
    got = np.asarray(got)
    if np.issubdtype(want.dtype, np.floating):
        short = want.dtype.name.upper()  # FLOAT16, FLOAT32, FLOAT64
        assert_float_close(got, want, tolerance(opdef, short, 0), what)
    else:
        assert_bits_equal(got, want, what)


@pytest.fixture(autouse=True, scope="module")
def _max_level():
    with feature_level(MAX_LEVEL):
        yield


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_example_through_faithful_path(case):
    """The example as docs/operators.md prints it (``gen_op_docs.example_code``: a
    ``dml.operator_desc`` + ``dml.run`` program, so every program on that page runs here),
    executed as printed; ``out`` must hold the example's expected outputs (a flat expected
    array is compared in the shape the operator gives)."""
    name, index = case
    opdef = REGISTRY[name]
    example = opdef.examples[index]
    scope: dict = {}
    exec(gen_op_docs.example_code(OPERATORS[name], example), scope)
    results = scope["out"] if isinstance(scope["out"], list) else [scope["out"]]
    expected = []
    for field in OPERATORS[name]["outputs"]:
        value = example.outputs.get(field)
        expected += list(value) if isinstance(value, list) else [value]
    assert len(results) == len(expected)
    for k, (got, want) in enumerate(zip(results, expected)):
        if want is None:
            continue
        want = np.asarray(want)
        if want.shape != np.shape(got) and want.size == np.size(got):
            want = want.reshape(np.shape(got))
        note = example.note or "no note"
        compare(opdef, got, want, f"{name} example {index} ({note}) output {k}")


def _view_strides(x, broadcast):
    """Element strides reading ``x`` from a non-contiguous buffer: column-major with a gap
    of one element per dimension, or (``broadcast``) 0 along the dimensions where ``x`` is
    constant and row-major elsewhere; None where no such view differs from the plain one."""
    x = np.asarray(x)
    if x.ndim == 0 or x.size < 2 or x.dtype == object:
        return None
    if not broadcast:
        strides, step = [0] * x.ndim, 2
        for d in range(x.ndim):
            strides[d] = step
            step *= x.shape[d] + 1
        return strides
    b = x.view(f"u{x.dtype.itemsize}") if x.dtype.kind in "fiu" else x  # -0.0 is not 0.0
    same = [d for d in range(x.ndim) if x.shape[d] > 1 and
            np.array_equal(np.broadcast_to(np.take(b, [0], axis=d), b.shape), b)]
    if not same:
        return None
    strides, step = [0] * x.ndim, 1
    for d in reversed(range(x.ndim)):
        strides[d] = 0 if d in same else step
        step *= 1 if d in same else x.shape[d]
    return strides


def _view_cases():
    """Per operator: the first example with a strided view, and the first with a broadcast."""
    cases = []
    for name in sorted(REGISTRY):
        for broadcast in (False, True):
            for index, ex in enumerate(REGISTRY[name].examples):
                if ex.strides or ex.owned:
                    continue
                views = {f: _view_strides(v, broadcast) for f, v in ex.inputs.items()
                         if v is not None and not isinstance(v, (list, tuple))}
                views = {f: v for f, v in views.items() if v is not None}
                if views:
                    cases.append((name, index, "broadcast" if broadcast else "strided", views))
                    break
    return cases


VIEW_CASES = _view_cases()


@pytest.mark.parametrize("name,index,kind,views", VIEW_CASES,
                         ids=[f"{n.replace('DML_OPERATOR_', '')}-{k}" for n, _, k, _ in VIEW_CASES])
def test_example_reads_strided_and_broadcast_inputs(name, index, kind, views):
    """The first example with its inputs read through strided (column-major, gapped) or
    zero-stride views of the same values gives the same outputs: kernels see logical
    elements, never the buffer layout."""
    opdef = REGISTRY[name]
    ex = opdef.examples[index]
    desc, arrays, expected = example_desc(name, ex.inputs, ex.outputs, ex.attrs,
                                          strides=views)
    for f, st in views.items():
        b = getattr(desc.Desc, f).Desc
        assert list(b.Strides) == st, f"{name}: {f} is not the {kind} view"
    result = dml.run(desc, *arrays)
    results = result if isinstance(result, list) else [result]
    for k, (got, want) in enumerate(zip(results, expected)):
        if want is not None:
            compare(opdef, got, want, f"{name} example {index} with {kind} {sorted(views)}")


def test_view_cases_cover_every_operator_with_tensor_inputs():
    named = {n for n, *_ in VIEW_CASES}
    with_inputs = {n for n, op in REGISTRY.items()
                   if any(_view_strides(v, False) is not None for ex in op.examples
                          for v in ex.inputs.values()
                          if v is not None and not isinstance(v, (list, tuple)))}
    assert with_inputs - named == set()
    assert len(named) > 100


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_operator_has_examples_and_reference(name):
    opdef = REGISTRY[name]
    assert opdef.examples, f"{name} has no Example"
    assert callable(opdef.reference), f"{name} has no float64 NumPy reference"
    assert callable(opdef.kernel)
    assert name in OPERATORS, f"{name} is not a DML_OPERATOR_TYPE of the spec"
    assert opdef.module.startswith("dmlsim.ops."), opdef.module


def test_registry_is_discovered_not_listed():
    """Operators are registered just by living in dmlsim/ops; the public list is the
    registry's."""
    assert [n for n, _ in dml.supported_operators()] == sorted(REGISTRY)
    assert {op.module for op in REGISTRY.values()} == {
        f"dmlsim.ops.{p.stem}" for p in OPS_DIR.glob("*.py") if not p.stem.startswith("_")}


def test_compare_catches_a_wrong_sign_of_zero():
    """The comparison used above is strict: -0.0 is not 0.0 and NaN must be where expected."""
    opdef = REGISTRY["DML_OPERATOR_ELEMENT_WISE_ADD"]
    with pytest.raises(AssertionError):
        compare(opdef, np.float32([0.0]), np.float32([-0.0]), "zero")
    with pytest.raises(AssertionError):
        compare(opdef, np.float32([1.0]), np.float32([np.nan]), "nan")
    with pytest.raises(AssertionError):
        compare(opdef, np.int8([1]), np.uint8([1]), "dtype")
    compare(opdef, np.float32([np.nan, -0.0]), np.float32([np.nan, -0.0]), "equal")


def test_every_registered_operator_is_in_the_spec_with_its_feature_level():
    listed = dict(dml.supported_operators())
    for name, level in listed.items():
        assert name in OPERATORS, f"{name} is not a DML_OPERATOR_TYPE of the spec"
        assert level == OPERATORS[name]["introduced"], name
    assert listed["DML_OPERATOR_ELEMENT_WISE_ADD"] == dml.DML_FEATURE_LEVEL_1_0
    assert listed["DML_OPERATOR_ELEMENT_WISE_IS_INFINITY"] == dml.DML_FEATURE_LEVEL_2_1
    assert listed["DML_OPERATOR_ACTIVATION_GELU"] == dml.DML_FEATURE_LEVEL_5_1


def _mentioned(module_name: str, doc: str) -> set:
    """Operator types named in the first paragraph of an ops module's docstring (short names
    take the module's family prefix: ELEMENT_WISE_ for element_wise_*, ...)."""
    first = doc.strip().split("\n\n")[0]
    family = {"element": "ELEMENT_WISE_", "activation": "ACTIVATION_"}.get(
        module_name.split("_")[0], "")
    names = set()
    for token in re.findall(r"[A-Z][A-Z0-9_]*[A-Z0-9]", first):
        token = token.removeprefix("DML_OPERATOR_")
        for candidate in ("DML_OPERATOR_" + token, f"DML_OPERATOR_{family}{token}"):
            if candidate in OPERATORS:
                names.add(candidate)
                break
    return names


@pytest.mark.parametrize("path", sorted(p for p in OPS_DIR.glob("*.py")
                                        if not p.stem.startswith("_")), ids=lambda p: p.stem)
def test_every_operator_module_registers_what_its_docstring_names(path):
    module = importlib.import_module(f"dmlsim.ops.{path.stem}")
    registered = {n for n, op in REGISTRY.items() if op.module == module.__name__}
    assert registered, f"{path.name} registers no operator"
    assert _mentioned(path.stem, module.__doc__ or "") == registered, (
        f"{path.name}: the docstring's first paragraph names "
        f"{sorted(_mentioned(path.stem, module.__doc__ or ''))}, the module registers "
        f"{sorted(registered)}")

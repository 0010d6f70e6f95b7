"""Every registered operator's worked examples, through the whole faithful path.

For each ``OperatorDef.examples`` entry, ``dmlsim.run`` does what a DirectML program does:
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
from pathlib import Path

import numpy as np
import pytest

import dmlsim as dml
from dmlsim._core import registry
from dmlsim._schema.operators_generated import OPERATORS

from helpers import (MAX_LEVEL, assert_bits_equal, assert_float_close, example_desc, feature_level,
                     tolerance)

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
    name, index = case
    opdef = REGISTRY[name]
    example = opdef.examples[index]
    desc, arrays, expected = example_desc(name, example.inputs, example.outputs,
                                         example.attrs, example.owned, example.strides)
    result = dml.run(desc, *arrays)
    results = result if isinstance(result, list) else [result]
    assert len(results) == len(expected)
    for k, (got, want) in enumerate(zip(results, expected)):
        if want is None:
            continue
        note = example.note or "no note"
        compare(opdef, got, want, f"{name} example {index} ({note}) output {k}")


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

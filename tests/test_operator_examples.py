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

import numpy as np
import pytest

import dmlsim as dml
from dmlsim._core import registry
from dmlsim._schema.operators_generated import OPERATORS

from helpers import (MAX_LEVEL, assert_bits_equal, assert_float_close, example_desc, feature_level,
                     tolerance)

REGISTRY = registry.load_all()
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
                                         example.attrs)
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
    """The six seed operators are registered just by living in dmlsim/ops."""
    seeds = {"ELEMENT_WISE_MULTIPLY", "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL",
             "ELEMENT_WISE_IS_INFINITY", "ACTIVATION_SHRINK", "ELEMENT_WISE_IDENTITY",
             "ELEMENT_WISE_ADD"}
    assert {"DML_OPERATOR_" + s for s in seeds} <= set(REGISTRY)
    assert [n for n, _ in dml.supported_operators()] == sorted(REGISTRY)


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


def test_supported_operators_are_every_element_wise_and_activation_type():
    """Issue 3's list: all 65 ELEMENT_WISE_* and 27 ACTIVATION_* types, each with the feature
    level operators.json gives for it (e.g. ADD 1_0, IS_INFINITY 2_1, GELU 5_1)."""
    listed = dict(dml.supported_operators())
    family = {n for n in OPERATORS
              if n.startswith(("DML_OPERATOR_ELEMENT_WISE_", "DML_OPERATOR_ACTIVATION_"))}
    assert len(family) == 92
    assert set(listed) == family
    assert all(listed[n] == OPERATORS[n]["introduced"] for n in listed)
    assert listed["DML_OPERATOR_ELEMENT_WISE_ADD"] == dml.DML_FEATURE_LEVEL_1_0
    assert listed["DML_OPERATOR_ELEMENT_WISE_IS_INFINITY"] == dml.DML_FEATURE_LEVEL_2_1
    assert listed["DML_OPERATOR_ACTIVATION_GELU"] == dml.DML_FEATURE_LEVEL_5_1

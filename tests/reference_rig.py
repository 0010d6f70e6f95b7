"""One operator case against its float64 reference, for the hand-picked geometries of the
per-family test files (tests/test_operator_reference.py derives one shape per operator;
convolutions, pooling and the like need many)."""
from __future__ import annotations

import numpy as np

import dmlsim as dml
from dmlsim._core import registry, validation
from dmlsim._schema.operators_generated import OPERATORS

from helpers import MAX_LEVEL
from test_operator_reference import compare_output

REGISTRY = registry.load_all()
BY_VALUE = {s["value"]: s for s in OPERATORS.values()}


def run_against_reference(name, inputs: dict, attrs: dict, strides=None, outputs=None,
                          flags=0):
    """Run ``name`` on ``inputs`` (field -> array or None) with ``attrs`` through
    ``dmlsim.run``; compare every output with the reference (``error_bound`` for the first
    when the operator has one). Returns the compared outputs by field; fails when a required
    output was produced without a reference to compare it with (or not produced at all)."""
    name = name if name.startswith("DML_OPERATOR_") else "DML_OPERATOR_" + name
    opdef, schema = REGISTRY[name], OPERATORS[name]
    fields = {}
    for f, v in inputs.items():
        if v is None:
            continue
        st = (strides or {}).get(f)
        fields[f] = dml.tensor_desc(np.asarray(v), strides=st) if st else np.asarray(v)
    fields.update(outputs or {})
    fields.update(attrs)
    desc = dml.operator_desc(name, **fields)
    flat = [inputs.get(f) for f in schema["inputs"]]
    result = dml.run(desc, *flat, flags=flags)
    results = result if isinstance(result, list) else [result]
    spec = validation.operator_desc(desc, BY_VALUE)
    ctx = registry.KernelContext.of(spec, flags, MAX_LEVEL)
    with np.errstate(all="ignore"):
        ref = dict(zip(schema["outputs"], opdef.run_reference(dict(inputs), spec, ctx)))
    got = dict(zip(schema["outputs"], results))
    optional = {f["name"] for f in schema["fields"] if f.get("optional")}
    compared = {}
    for i, field in enumerate(schema["outputs"]):
        if got.get(field) is None or ref.get(field) is None:
            assert field in optional and got.get(field) is None, \
                f"{name}: {field} has no output or no reference to check it against"
            continue
        bound = opdef.error_bound(dict(inputs), spec, np.asarray(got[field]).dtype) \
            if opdef.error_bound is not None else None
        if isinstance(bound, dict):  # a bound per output field
            bound = bound.get(field)
        elif i:  # one bound: the first output's
            bound = None
        compare_output(opdef, field, got[field], ref[field], f"{name} {field}", False, bound)
        compared[field] = got[field]
    assert compared, f"{name}: no output was compared"
    return compared

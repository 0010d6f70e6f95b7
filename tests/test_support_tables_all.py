"""Every registered operator's tensor-support tables: the data-type cells and the
dimension-count limits, at the feature levels where its table changes.

test_support_tables.py walks the six seed operators cell by cell at every level. Here every
other registered operator gets the same data-type check from its first worked example that
fits the table (its shapes are consistent by construction), at each level where one of its
"DML_FEATURE_LEVEL_x_y and above" blocks starts and at the level just below the next block:
- every data type a row lists is accepted, with the tensors whose rows list the same types
  changed together (the operators require them to match);
- every other DML_TENSOR_DATA_TYPE value is rejected with E_INVALIDARG naming the operator,
  the tensor field and the type;
- a DimensionCount one past either end of a row's range is rejected naming the field and
  DimensionCount (the accepted edges need shape-consistent descs; the examples and the
  reference test cover the shapes an operator's rules allow).

The block is chosen here from the spec (the "x_y and above" rule), independently of dmlsim's
validation; for conditional tables (REDUCE's per-Function tables) by the operator's
``condition`` with the example's attributes.
"""
from __future__ import annotations

import copy

import pytest

import dmlsim as dml
from dmlsim._core import registry, validation
from dmlsim._schema.operators_generated import OPERATORS

from helpers import FEATURE_LEVELS, example_desc, feature_level
from test_support_tables import ALL_TYPES, SEEDS

REGISTRY = registry.load_all()
BY_VALUE = {s["value"]: s for s in OPERATORS.values()}
OPS = sorted(n for n in REGISTRY if n.replace("DML_OPERATOR_", "") not in SEEDS)


def _levels(schema):
    """The levels where a block starts, the level just below each later start, and 6_4."""
    starts = sorted({b["feature_level"] for b in schema["support"]} | {schema["introduced"]})
    out = set()
    for s in starts:
        out.add(max(s, schema["introduced"]))
        below = [lv for lv in FEATURE_LEVELS if lv < s]
        if below and below[-1] >= schema["introduced"]:
            out.add(below[-1])
    out.add(max(FEATURE_LEVELS))
    return sorted(lv for lv in out if lv in FEATURE_LEVELS)


def _block(schema, level, spec, opdef):
    blocks = schema["support"]
    if opdef.condition is not None:
        blocks = [b for b in blocks if b.get("condition") is None
                  or opdef.condition(spec, b["condition"])]
    usable = [b for b in blocks if b["feature_level"] <= level]
    return max(usable, key=lambda b: b["feature_level"]) if usable else \
        min(blocks, key=lambda b: b["feature_level"])


def _tensors(desc):
    """{field: [DML_BUFFER_TENSOR_DESC, ...]} of an operator desc's tensors (arrays listed)."""
    out = {}
    for f in OPERATORS[BY_VALUE[int(desc.Type)]["name"]]["fields"]:
        if f["kind"] not in ("input_tensor", "output_tensor"):
            continue
        v = getattr(desc.Desc, f["name"])
        items = v if isinstance(v, (list, tuple)) else [v]
        out[f["name"]] = [t.Desc for t in items if t is not None]
    return out


def _retype(buffers, data_type):
    for b in buffers:
        b.DataType = data_type
        b.TotalTensorSizeInBytes = dml.DMLCalcBufferTensorSize(
            data_type, b.DimensionCount, b.Sizes, b.Strides)


def _type_attributes(name):
    """Attribute fields holding a DML_TENSOR_DATA_TYPE (ValueDataType, MinMaxDataType...):
    the operators require them to match the output's type, so they follow it."""
    return [f["name"] for f in OPERATORS[name]["fields"]
            if f["kind"] == "attribute" and f["name"].endswith("DataType")]


def _retyped(name, desc, fields, data_type):
    trial = copy.deepcopy(desc)
    tensors = _tensors(trial)
    for f in fields:
        _retype(tensors[f], data_type)
    first_out = OPERATORS[name]["outputs"][0]
    if first_out in fields:
        for a in _type_attributes(name):
            setattr(trial.Desc, a, data_type)
    return trial


def _baseline(name, level, dev):
    """(desc, rows) from the first example that, with each tensor at a type its row lists,
    CreateOperator accepts at ``level``: its shapes and attributes are consistent."""
    opdef, schema = REGISTRY[name], OPERATORS[name]
    for ex in opdef.examples:
        try:
            desc, _, _ = example_desc(name, ex.inputs, ex.outputs, ex.attrs)
        except dml.HResultError:
            continue
        block = _block(schema, level, validation.operator_desc(desc, BY_VALUE), opdef)
        tensors = _tensors(desc)
        rows = {r["name"]: r for r in block["tensors"] if tensors.get(r["name"])}
        for field, row in rows.items():
            t = dml.DML_TENSOR_DATA_TYPE(tensors[field][0].DataType).name[21:]
            if row["types"] and t not in row["types"]:
                desc = _retyped(name, desc, [field], ALL_TYPES[row["types"][0]])
        try:
            dev.CreateOperator(desc)
        except dml.HResultError:
            continue
        return desc, rows
    return None, None


def _kind(data_type):
    return "float" if dml.DML_TENSOR_DATA_TYPE(data_type).name[21:].startswith("FLOAT") else "int"


def _taken_by_a_role(name, dev, wide, t, error):
    """Whether a listed type refused by the retyping above is still taken, where a row
    covers tensors of different roles:
    - an array whose elements have different roles (QUANTIZE's QuantizationTensors are
      [Scale, ZeroPoint]: floats for the scale, integers for the zero point) takes ``t``
      in the elements of t's kind: some example, retyped so, is accepted."""
    kind = "float" if t.startswith("FLOAT") else "int"
    for ex in REGISTRY[name].examples:
        try:
            desc, _, _ = example_desc(name, ex.inputs, ex.outputs, ex.attrs)
        except dml.HResultError:
            continue
        trial = copy.deepcopy(desc)
        tensors = _tensors(trial)
        for f in wide:
            items = tensors[f]
            _retype([b for b in items if len(items) == 1 or _kind(b.DataType) == kind],
                    ALL_TYPES[t])
        try:
            dev.CreateOperator(trial)
            return True
        except dml.HResultError:
            continue
    return False


def _rejected(dev, desc, name, field, what):
    with pytest.raises(dml.HResultError) as info:
        dev.CreateOperator(desc)
    assert info.value.hresult == dml.E_INVALIDARG, f"{what}: {info.value}"
    msg = str(info.value)
    assert msg.startswith(name) and f"{field}" in msg, f"{what}: {msg}"
    return msg


CASES = [(n, lv) for n in OPS for lv in _levels(OPERATORS[n])]


@pytest.fixture(scope="module")
def devices():
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    out = {}
    for level in FEATURE_LEVELS:
        with feature_level(level):
            out[level] = dml.DMLCreateDevice(d3d, dml.DML_CREATE_DEVICE_FLAG_NONE)
    return out


@pytest.mark.parametrize("name", OPS, ids=[n.replace("DML_OPERATOR_", "") for n in OPS])
def test_support_table_data_types(devices, name):
    checked, levels = 0, []
    for level in _levels(OPERATORS[name]):
        dev = devices[level]
        base, rows = _baseline(name, level, dev)
        if base is None:
            continue
        levels.append(level)
        for field, row in rows.items():
            group = [f for f, r in rows.items() if r["types"] == row["types"]]
            for t in row["types"]:
                try:
                    dev.CreateOperator(_retyped(name, base, group, ALL_TYPES[t]))
                except dml.HResultError:
                    # an operator rule may tie rows with different lists together (the
                    # scale of ELEMENT_WISE_QUANTIZE_LINEAR follows a float input): every
                    # row that lists t takes it
                    wide = [f for f, r in rows.items() if t in r["types"]]
                    try:
                        dev.CreateOperator(_retyped(name, base, wide, ALL_TYPES[t]))
                    except dml.HResultError as e:
                        if not _taken_by_a_role(name, dev, wide, t, e):
                            pytest.fail(f"{name} at {level:04X}: {wide} as {t} (listed) "
                                        f"refused: {e}")
                checked += 1
            for t, value in ALL_TYPES.items():
                if t in row["types"] or not row["types"]:  # FOLD, UNFOLD: no type list
                    continue
                trial = copy.deepcopy(base)
                _retype(_tensors(trial)[field][:1], value)
                msg = _rejected(dev, trial, name, field, f"{field} {t} at {level:04X}")
                assert f"DML_TENSOR_DATA_TYPE_{t}" in msg, msg
                checked += 1
            for dims in (row["dims_min"] - 1, row["dims_max"] + 1):
                if dims < 1:
                    continue
                trial = copy.deepcopy(base)
                b = _tensors(trial)[field][0]
                b.DimensionCount, b.Sizes, b.Strides = dims, [1] * dims, None
                b.TotalTensorSizeInBytes = dml.DMLCalcBufferTensorSize(b.DataType, dims, b.Sizes,
                                                                       None)
                msg = _rejected(dev, trial, name, field, f"{field} {dims}-D at {level:04X}")
                assert "DimensionCount" in msg, msg
                checked += 1
    assert checked and max(FEATURE_LEVELS) in levels, (
        f"{name}: checked at {[f'{lv:04X}' for lv in levels]}; no example fits the 6_4 table")

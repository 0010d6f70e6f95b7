"""The six seed operators' tensor-support tables, cell by cell, at every feature level.

For each DML_FEATURE_LEVEL value (0x1000..0x6400) a DirectML device emulates that level, and
only CreateOperator runs (no execution). The applicable table is the operator page's
"DML_FEATURE_LEVEL_x_y and above" block with the highest level not above the device's.
- Every data type the table lists for a tensor is accepted (tensors whose rows list the same
  types change together, since the operators require them to match).
- Both ends of the dimension-count range are accepted.
- Every other DML_TENSOR_DATA_TYPE value (and the invalid 0 and 14), and the dimension counts
  just outside the range, are rejected with E_INVALIDARG, and the message names the operator
  and the tensor field.
- An operator introduced after the device's level is rejected with E_INVALIDARG naming the
  operator and the level it was introduced in.

The expected cells are read from the spec (shared/spec/operators.json, through the generated
OPERATORS table) and the block is chosen here, independently of dmlsim's validation code.
"""
from __future__ import annotations

import pytest

import dmlsim as dml
from dmlsim._schema.operators_generated import DESC_STRUCTS, OPERATORS

from helpers import FEATURE_LEVELS, feature_level

SEEDS = ("ELEMENT_WISE_MULTIPLY", "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL",
         "ELEMENT_WISE_IS_INFINITY", "ACTIVATION_SHRINK", "ELEMENT_WISE_IDENTITY",
         "ELEMENT_WISE_ADD")
ALL_TYPES = {m.name.replace("DML_TENSOR_DATA_TYPE_", ""): int(m) for m in dml.DML_TENSOR_DATA_TYPE
             if m.name != "DML_TENSOR_DATA_TYPE_UNKNOWN"}
ATTRS = {"ELEMENT_WISE_IS_INFINITY": {"InfinityMode": 0},
         "ACTIVATION_SHRINK": {"Bias": 0.5, "Threshold": 1.0}}


def _tensor(type_name, dims):
    dt = ALL_TYPES[type_name] if isinstance(type_name, str) else int(type_name)
    sizes = [1] * max(0, dims - 2) + [2, 3][-dims:] if dims else []
    b = dml.DML_BUFFER_TENSOR_DESC(dt, dml.DML_TENSOR_FLAG_NONE, dims, sizes, None)
    b.TotalTensorSizeInBytes = dml.DMLCalcBufferTensorSize(dt, dims, sizes, None) if dims else 0
    return dml.DML_TENSOR_DESC(dml.DML_TENSOR_TYPE_BUFFER, b)


def _desc(name, cells):
    """DML_OPERATOR_DESC with ``cells[field] = (type name or value, dims)``."""
    full = "DML_OPERATOR_" + name
    desc = DESC_STRUCTS[full]()
    for field, (t, dims) in cells.items():
        setattr(desc, field, _tensor(t, dims))
    for key, value in ATTRS.get(name, {}).items():
        setattr(desc, key, value)
    return dml.DML_OPERATOR_DESC(OPERATORS[full]["value"], desc)


def applicable_block(schema, level):
    blocks = [b for b in schema["support"] if b["feature_level"] <= level]
    if not blocks:  # the op exists at ``level`` but its first table is headed later
        return min(schema["support"], key=lambda b: b["feature_level"])
    return max(blocks, key=lambda b: b["feature_level"])


def baseline(block):
    """Every tensor at its row's first type and smallest dimension count."""
    return {r["name"]: (r["types"][0], r["dims_min"]) for r in block["tensors"]}


@pytest.fixture(scope="module")
def devices():
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    out = {}
    for level in FEATURE_LEVELS:
        with feature_level(level):
            out[level] = dml.DMLCreateDevice(d3d, dml.DML_CREATE_DEVICE_FLAG_NONE)
    return out


def _rejected(dev, desc, name, field, what):
    with pytest.raises(dml.HResultError) as info:
        dev.CreateOperator(desc)
    err = info.value
    assert err.hresult == dml.E_INVALIDARG, f"{what}: {err}"
    msg = str(err)
    assert msg.startswith(f"DML_OPERATOR_{name}"), f"{what}: message does not name the op: {msg}"
    assert f"{field}." in msg, f"{what}: message does not name {field}: {msg}"
    return msg


CASES = [(name, level) for name in SEEDS for level in FEATURE_LEVELS]


@pytest.mark.parametrize("name,level", CASES, ids=[f"{n}-{lv:04X}" for n, lv in CASES])
def test_support_table_cells(devices, name, level):
    dev = devices[level]
    schema = OPERATORS["DML_OPERATOR_" + name]
    if schema["introduced"] > level:
        first = min(schema["support"], key=lambda b: b["feature_level"])
        with pytest.raises(dml.HResultError) as info:
            dev.CreateOperator(_desc(name, baseline(first)))
        assert info.value.hresult == dml.E_INVALIDARG
        msg = str(info.value)
        assert msg.startswith(f"DML_OPERATOR_{name}") and "introduced" in msg, msg
        major, minor = schema["introduced"] >> 12, (schema["introduced"] >> 8) & 0xF
        assert f"DML_FEATURE_LEVEL_{major}_{minor}" in msg, msg
        return
    block = applicable_block(schema, level)
    rows = {r["name"]: r for r in block["tensors"]}
    base = baseline(block)
    dev.CreateOperator(_desc(name, base))  # the baseline itself is accepted
    checked = 0
    for field, row in rows.items():
        group = [f for f, r in rows.items() if r["types"] == row["types"]]
        for t in row["types"]:  # accepted cells
            cells = dict(base)
            cells.update({f: (t, base[f][1]) for f in group})
            dev.CreateOperator(_desc(name, cells))
            checked += 1
        for t, value in list(ALL_TYPES.items()) + [("UNKNOWN", 0), ("INVALID", 14)]:
            if t in row["types"]:
                continue
            cells = dict(base)
            cells[field] = (value, base[field][1])
            msg = _rejected(dev, _desc(name, cells), name, field, f"{field} {t} at {level:04X}")
            if t in ALL_TYPES:
                assert f"DML_TENSOR_DATA_TYPE_{t}" in msg, msg
            checked += 1
        lo, hi = row["dims_min"], row["dims_max"]
        for dims in (lo, hi):  # both edges accepted, every tensor at once
            dev.CreateOperator(_desc(name, {f: (base[f][0], dims) for f in rows}))
            checked += 1
        for dims in (lo - 1, hi + 1):
            cells = dict(base)
            cells[field] = (base[field][0], dims)
            _rejected(dev, _desc(name, cells), name, field, f"{field} {dims}D at {level:04X}")
            checked += 1
    assert checked >= len(rows) * 14


def test_block_choice_spot_checks():
    """The tables as the pages print them (a reader can check these against the op pages)."""
    add = OPERATORS["DML_OPERATOR_ELEMENT_WISE_ADD"]
    assert applicable_block(add, 0x1000)["tensors"][0]["types"] == ["FLOAT32", "FLOAT16"]
    assert (applicable_block(add, 0x2000)["tensors"][0]["dims_min"],
            applicable_block(add, 0x2000)["tensors"][0]["dims_max"]) == (4, 5)
    assert "INT8" not in applicable_block(add, 0x5000)["tensors"][0]["types"]
    assert "INT8" in applicable_block(add, 0x5100)["tensors"][0]["types"]
    ident = OPERATORS["DML_OPERATOR_ELEMENT_WISE_IDENTITY"]
    assert "FLOAT64" in applicable_block(ident, 0x4100)["tensors"][0]["types"]
    assert "FLOAT64" not in applicable_block(ident, 0x4000)["tensors"][0]["types"]
    isinf = OPERATORS["DML_OPERATOR_ELEMENT_WISE_IS_INFINITY"]
    assert applicable_block(isinf, 0x2100)["tensors"][1]["types"] == ["UINT8"]
    assert applicable_block(isinf, 0x2100)["tensors"][0]["dims_max"] == 4


def test_identity_float64_at_4_1_but_not_4_0(devices):
    """ELEMENT_WISE_IDENTITY: FLOAT64 appears in the 'DML_FEATURE_LEVEL_4_1 and above' table."""
    desc = _desc("ELEMENT_WISE_IDENTITY", {"InputTensor": ("FLOAT64", 2),
                                            "OutputTensor": ("FLOAT64", 2)})
    devices[0x4100].CreateOperator(desc)
    _rejected(devices[0x4000], desc, "ELEMENT_WISE_IDENTITY", "InputTensor", "FLOAT64 at 4_0")

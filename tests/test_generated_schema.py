"""The generated schema modules are current with the spec, and a few spot facts hold.

The spec's two JSON files the generator reads are kept in the repository (``tools/spec/*.gz``,
their SHA-256 below), so the check runs in a clean clone; where the team's shared spec folder
is beside the checkout, the copies must equal it.
"""
from __future__ import annotations

import gzip
import hashlib
import importlib.util
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_SPEC = REPO_ROOT.parent / "shared" / "spec"
SPEC_COPY = REPO_ROOT / "tools" / "spec"
SPEC_SHA256 = {  # of the spec files the generated modules were made from
    "api.json": "380996814d7b8fc4711ee7a6a8597976ea65e4eb2343b18133833c012b271275",
    "operators.json": "56b01033be9cd1c155b6f2bcc225c1505747bb8f1133703aac465cef9625605b",
}
SCHEMA_DIR = REPO_ROOT / "dmlsim" / "_schema"
GENERATED = ("enums_generated.py", "structs_generated.py", "operators_generated.py")


def _spec_copy(into: Path) -> Path:
    """The repository's copy of the spec JSON, unpacked into ``into``; checked by hash."""
    into.mkdir(exist_ok=True)
    for name, digest in SPEC_SHA256.items():
        data = gzip.decompress((SPEC_COPY / f"{name}.gz").read_bytes())
        assert hashlib.sha256(data).hexdigest() == digest, f"tools/spec/{name}.gz changed"
        (into / name).write_bytes(data)
    return into


def test_the_spec_copy_is_the_shared_spec_where_that_is_present(tmp_path):
    spec = _spec_copy(tmp_path / "spec")
    for name in SPEC_SHA256:
        shared = SHARED_SPEC / name
        if shared.is_file():  # the team's machines; a clean clone has only the copy
            assert shared.read_bytes() == (spec / name).read_bytes(), \
                f"../shared/spec/{name} changed: refresh tools/spec/{name}.gz and SPEC_SHA256"


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_schema", REPO_ROOT / "tools" / "gen_schema.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", GENERATED)
def test_generated_files_are_current(tmp_path, name):
    spec = _spec_copy(tmp_path / "spec")
    gen = _load_generator()
    assert gen.main(["--spec", str(spec), "--out", str(tmp_path)]) == 0
    fresh = (tmp_path / name).read_bytes()
    committed = (SCHEMA_DIR / name).read_bytes()
    assert fresh == committed, (
        f"dmlsim/_schema/{name} is stale; rerun `python tools/gen_schema.py`")


def test_operator_table_facts():
    from dmlsim._schema import operators_generated as ops

    assert len(ops.OPERATORS) == 177
    assert len(ops.DESC_STRUCTS) == 177
    assert "DML_OPERATOR_INVALID" not in ops.OPERATORS
    mul = ops.OPERATORS["DML_OPERATOR_ELEMENT_WISE_MULTIPLY"]
    assert mul["value"] == 24
    assert mul["introduced"] == 0x1000
    assert mul["inputs"] == ["ATensor", "BTensor"]
    assert mul["outputs"] == ["OutputTensor"]
    assert mul["desc_struct"] == "DML_ELEMENT_WISE_MULTIPLY_OPERATOR_DESC"
    assert ops.DESC_STRUCTS["DML_OPERATOR_ELEMENT_WISE_MULTIPLY"] is \
        ops.DML_ELEMENT_WISE_MULTIPLY_OPERATOR_DESC
    # Support blocks run from the highest feature level down (REDUCE restarts per condition).
    levels = [b["feature_level"] for b in mul["support"]]
    assert levels == sorted(levels, reverse=True)
    reduce_conditions = {b["condition"] for b in ops.OPERATORS["DML_OPERATOR_REDUCE"]["support"]}
    assert "ARGMIN and ARGMAX" in reduce_conditions


def test_scatter_alias():
    from dmlsim._schema import operators_generated as ops

    assert ops.DML_SCATTER_ELEMENTS_OPERATOR_DESC is ops.DML_SCATTER_OPERATOR_DESC
    assert ops.DESC_STRUCTS["DML_OPERATOR_SCATTER_ELEMENTS"] is ops.DML_SCATTER_OPERATOR_DESC


def test_enum_and_constant_facts():
    from dmlsim._schema import enums_generated as en

    assert en.DML_TENSOR_DATA_TYPE_FLOAT32 == 1
    assert en.DML_TENSOR_DATA_TYPE.DML_TENSOR_DATA_TYPE_FLOAT32 is en.DML_TENSOR_DATA_TYPE_FLOAT32
    assert en.DML_TEMPORARY_BUFFER_ALIGNMENT == 256
    assert en.DML_TARGET_VERSION == 0x6400
    assert en.DML_TENSOR_FLAG_NONE == 0
    assert en.ELEMENT_SIZE_BITS[en.DML_TENSOR_DATA_TYPE_FLOAT16] == 16
    assert en.FEATURE_LEVELS[0] == 0x1000 and en.FEATURE_LEVELS[-1] == 0x6400
    assert en.ENUM_VALUE_INTRODUCED["DML_TENSOR_DATA_TYPE_UINT4"] == 0x6300
    assert en.DML_OPERATOR_SCATTER == en.DML_OPERATOR_SCATTER_ELEMENTS


def test_desc_struct_fields_and_defaults():
    from dmlsim._schema import operators_generated as ops
    from dmlsim._schema.struct import DML_SCALAR_UNION

    assert ops.DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC.field_names() == (
        "InputTensor", "OutputTensor", "ScaleBias")
    clip = ops.DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC()
    assert isinstance(clip.Min, DML_SCALAR_UNION)
    assert isinstance(clip.Max, DML_SCALAR_UNION)
    assert clip.InputTensor is None


def test_generated_structs():
    from dmlsim._schema import structs_generated as st
    from dmlsim._schema.struct import DML_SCALAR_UNION

    assert st.DML_SCALAR_UNION is DML_SCALAR_UNION
    desc = st.DML_BUFFER_TENSOR_DESC()
    assert desc.Sizes is None and desc.TotalTensorSizeInBytes == 0
    assert st.DML_SCALE_BIAS().Scale == 0.0

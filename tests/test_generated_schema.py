"""The generated schema modules are current with the spec, and a few spot facts hold."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SPEC = REPO_ROOT.parent / "shared" / "spec"
SCHEMA_DIR = REPO_ROOT / "dmlsim" / "_schema"
GENERATED = ("enums_generated.py", "structs_generated.py", "operators_generated.py")


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_schema", REPO_ROOT / "tools" / "gen_schema.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", GENERATED)
def test_generated_files_are_current(tmp_path, name):
    if not (SPEC / "api.json").is_file() or not (SPEC / "operators.json").is_file():
        pytest.skip(f"spec folder {SPEC} is absent")
    gen = _load_generator()
    assert gen.main(["--spec", str(SPEC), "--out", str(tmp_path)]) == 0
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

"""DxDispatch models in every form DxDispatch's C++ parser accepts (issue: 'DxDispatch models as
DxDispatch's parser reads them'). Each model is written out here, with the values a reader can
check by hand."""
import json

import numpy as np
import pytest

from dmlsim import cli
from dmlsim._pythonic import dxdispatch
from dmlsim._pythonic.dxdispatch_parse import ModelError, strip_jsonc


def _t(dt, sizes, **kw):
    return dict({"DataType": dt, "Sizes": sizes}, **kw)


def _run(tmp_path, model, text=None):
    path = tmp_path / "model.json"
    path.write_text(text if text is not None else json.dumps(model))
    printed = []
    result = dxdispatch.run_model(dxdispatch.load(path), out=printed.append,
                                  output_dir=tmp_path)
    return result, printed


def _buf(dt, values):
    return {"initialValuesDataType": dt, "initialValues": values}


def _zeros(dt, n):
    return _buf(dt, {"valueCount": n, "value": 0})


def test_comments_trailing_commas_and_nested_fused_activations(tmp_path):
    text = """{
      // DxDispatch's parser takes comments and trailing commas
      "resources": {
        "A": {"initialValuesDataType": "FLOAT32", "initialValues": [1, -2, 3, -4],},
        "B": {"initialValuesDataType": "FLOAT32", "initialValues": [1, 1, 1, 1]},
        "Out": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 4, "value": 0}},
        "Out2": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 4, "value": 0}}
      },
      "dispatchables": {
        /* fields inline */
        "add": {"type": "DML_OPERATOR_ELEMENT_WISE_ADD1", "desc": {
          "ATensor": {"DataType": "FLOAT32", "Sizes": [4]},
          "BTensor": {"DataType": "FLOAT32", "Sizes": [4]},
          "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4]},
          "FusedActivation": {"Type": "DML_OPERATOR_ACTIVATION_LEAKY_RELU", "Alpha": 0.5}}},
        "add2": {"type": "ELEMENT_WISE_ADD1", "executionFlags": "DISABLE_META_COMMANDS", "desc": {
          "ATensor": {"Type": "DML_TENSOR_TYPE_BUFFER",
                      "Desc": {"DataType": "FLOAT32", "Sizes": [4]}},
          "BTensor": {"DataType": "DML_TENSOR_DATA_TYPE_FLOAT32", "Sizes": [4]},
          "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4]},
          "FusedActivation": {"Type": "ACTIVATION_RELU", "Desc": {}},
        }},
      },
      "commands": [
        {"type": "dispatch", "dispatchable": "add",
         "bindings": {"ATensor": "A", "BTensor": "B", "OutputTensor": "Out"}},
        {"type": "dispatch", "dispatchable": "add2",
         "bindings": {"ATensor": "A", "BTensor": "B", "OutputTensor": "Out2"}},
        {"type": "print", "resource": "Out"},
      ],
    }"""
    result, printed = _run(tmp_path, None, text)
    assert result["Out"].tolist() == [2, -0.5, 4, -1.5]   # leaky relu 0.5 of a + b
    assert result["Out2"].tolist() == [2, 0, 4, 0]
    assert printed == ["Resource 'Out': 2, -0.5, 4, -1.5"]


def test_strip_jsonc_keeps_strings():
    assert json.loads(strip_jsonc('{"a": "// not a comment, ]", /* x */ "b": [1,],}')) == \
        {"a": "// not a comment, ]", "b": [1]}


def test_scalar_unions_as_numbers_typed_by_their_sibling(tmp_path):
    model = {
        "resources": {"H": _zeros("FLOAT16", 2), "S": _zeros("INT32", 4)},
        "dispatchables": {
            "fill": {"type": "DML_OPERATOR_FILL_VALUE_CONSTANT", "desc": {
                "OutputTensor": _t("FLOAT16", [2]), "ValueDataType": "FLOAT16", "Value": 1.5}},
            "seq": {"type": "DML_OPERATOR_FILL_VALUE_SEQUENCE", "desc": {
                "OutputTensor": _t("INT32", [4]), "ValueDataType": "DML_TENSOR_DATA_TYPE_INT32",
                "ValueStart": -2, "ValueDelta": {"Int32": 3}}}},
        "commands": [
            {"type": "dispatch", "dispatchable": "fill", "bindings": {"OutputTensor": "H"}},
            {"type": "dispatch", "dispatchable": "seq", "bindings": {"OutputTensor": "S"}}]}
    result, _ = _run(tmp_path, model)
    assert result["H"].view(np.uint16).tolist() == [0x3E00, 0x3E00]  # the half's bits of 1.5
    assert result["S"].tolist() == [-2, 1, 4, 7]


def test_initializers_every_form(tmp_path):
    np.save(tmp_path / "w.npy", np.array([[7, -8], [9, 10]], np.int16))
    (tmp_path / "raw.dat").write_bytes(np.array([5, 6, 7], np.uint32).tobytes())
    model = {
        "resources": {
            "F": _buf("FLOAT32", [1.5, "nan", "inf", "-inf"]),
            "Seq": _buf("UINT8", {"valueCount": 4, "valueStart": 250, "valueDelta": 3}),
            "HalfSeq": _buf("FLOAT16", {"valueCount": 3, "valueStart": 1, "valueDelta": 0.5}),
            "Npy": {"initialValues": {"sourcePath": "w.npy"}},
            "Dat": _buf("UINT32", {"sourcePath": "raw.dat"}),
            "Mixed": {"initialValues": [{"type": "UINT32", "value": 42},
                                        {"type": "FLOAT32", "value": 0.5}]},
            "Pad": dict(_buf("UINT16", [1, 2]), sizeInBytes=12, initialValuesOffsetInBytes=4)},
        "dispatchables": {}, "commands": []}
    result, _ = _run(tmp_path, model)
    f = result["F"]
    assert f[0] == 1.5 and np.isnan(f[1]) and f[2] == np.inf and f[3] == -np.inf
    assert result["Seq"].tolist() == [250, 253, 0, 3]        # value += delta, wrapping in UINT8
    assert result["HalfSeq"].tolist() == [1, 1.5, 2, 0]      # 6 bytes rounded up to 8
    assert result["Npy"].dtype == np.int16 and result["Npy"].tolist() == [7, -8, 9, 10]
    assert result["Dat"].tolist() == [5, 6, 7]               # raw bytes, typed by the field
    mixed = result["Mixed"].tobytes()
    assert mixed[:4] == np.uint32(42).tobytes() and mixed[4:8] == np.float32(0.5).tobytes()
    assert result["Pad"].tolist() == [0, 0, 1, 2, 0, 0]


def test_owned_by_dml_bound_from_the_dispatchable_and_element_offsets(tmp_path):
    owned = {"Flags": "DML_TENSOR_FLAG_OWNED_BY_DML"}
    model = {
        "resources": {"A": _buf("FLOAT32", [1, 2, 3, 4, 5, 6]), "W": _buf("FLOAT32", [10, 20]),
                      "Out": _zeros("FLOAT32", 4), "Tail": _zeros("FLOAT32", 2)},
        "dispatchables": {
            "gemm": {"type": "DML_OPERATOR_GEMM", "bindings": {"BTensor": "W"}, "desc": {
                "ATensor": _t("FLOAT32", [1, 1, 2, 1]), "BTensor": _t("FLOAT32", [1, 1, 1, 2],
                                                                      **owned),
                "OutputTensor": _t("FLOAT32", [1, 1, 2, 2]), "TransA": "NONE",
                "TransB": "DML_MATRIX_TRANSFORM_NONE", "Alpha": 1, "Beta": 0}},
            "copy": {"type": "DML_OPERATOR_ELEMENT_WISE_IDENTITY", "desc": {
                "InputTensor": _t("FLOAT32", [2]), "OutputTensor": _t("FLOAT32", [2])}}},
        "commands": [
            {"type": "dispatch", "dispatchable": "gemm",
             "bindings": {"ATensor": {"name": "A", "elementOffset": 4}, "OutputTensor": "Out"}},
            {"type": "dispatch", "dispatchable": "copy",
             "bindings": {"InputTensor": {"name": "A", "elementOffset": 1,
                                          "elementSizeInBytes": 16},
                          "OutputTensor": "Tail"}}]}
    result, _ = _run(tmp_path, model)
    assert result["Out"].tolist() == [50, 100, 60, 120]  # A[4:6] as a column, times W
    assert result["Tail"].tolist() == [5, 6]    # offset 1 x 16 bytes = element 4


def test_compile_graph_dispatchables_match_compile_op(tmp_path):
    def gemm(compile_type):
        return {"type": "DML_OPERATOR_GEMM", "dmlCompileType": compile_type,
                "executionFlags": ["DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE"], "desc": {
                    "ATensor": _t("FLOAT32", [1, 1, 2, 2]), "BTensor": _t("FLOAT32", [1, 1, 2, 2]),
                    "OutputTensor": _t("FLOAT32", [1, 1, 2, 2]), "TransA": 0, "TransB": 1,
                    "Alpha": 2, "Beta": 0}}
    model = {
        "resources": {"A": _buf("FLOAT32", [1, 2, 3, 4]), "B": _buf("FLOAT32", [1, 0, 0, 1]),
                      "Op": _zeros("FLOAT32", 4), "Graph": _zeros("FLOAT32", 4)},
        "dispatchables": {"op": gemm("DmlCompileOp"), "graph": gemm("DmlCompileGraph")},
        "commands": [
            {"type": "dispatch", "dispatchable": "op",
             "bindings": {"ATensor": "A", "BTensor": "B", "OutputTensor": "Op"}},
            {"type": "Dispatch", "dispatchable": "graph",
             "bindings": {"ATensor": "A", "BTensor": "B", "OutputTensor": "Graph"}}]}
    result, _ = _run(tmp_path, model)
    assert result["Op"].tolist() == [2, 4, 6, 8]  # 2 A B^T, B the identity; C absent
    assert result["Graph"].tolist() == result["Op"].tolist()


def test_write_file_and_print_formatting(tmp_path):
    model = {
        "resources": {"F": _buf("FLOAT32", [0.1, 1e38, "inf", "nan", -2.5, 1234567]),
                      "I": _buf("INT32", [-3, 7]), "H": _buf("FLOAT16", [0.25, 65504])},
        "dispatchables": {},
        "commands": [{"type": "print", "resource": "F"}, {"type": "print", "resource": "I"},
                     {"type": "print", "resource": "H"},
                     {"type": "writeFile", "resource": "I", "targetPath": "i.npy",
                      "dimensions": [1, 2]},
                     {"type": "writeFile", "resource": "F", "targetPath": "f.bin"}]}
    _, printed = _run(tmp_path, model)
    assert printed[:3] == ["Resource 'F': 0.1, 1e+38, inf, nan, -2.5, 1.23457e+06",
                           "Resource 'I': -3, 7", "Resource 'H': 0.25, 65504"]
    assert printed[3] == f"Resource 'I' written to '{tmp_path / 'i.npy'}'"
    saved = np.load(tmp_path / "i.npy")
    assert saved.dtype == np.int32 and saved.tolist() == [[-3, 7]]
    raw = np.frombuffer((tmp_path / "f.bin").read_bytes(), np.float32)
    assert raw[0] == np.float32(0.1) and raw.size == 6


def test_verbose_print_is_one_element_per_line(tmp_path):
    """DxDispatch's Executor (``"verbose": true``): ``[index] value (0xHEX)`` per element, the
    index right-aligned to the widest one, the hex space-padded to two digits per byte."""
    model = {
        "resources": {"F": _buf("FLOAT32", [1.0, -0.0, 0.1] + [0.0] * 8),
                      "H": _buf("FLOAT16", [1.0, 65504]), "U": _buf("UINT8", [5, 255])},
        "dispatchables": {},
        "commands": [{"type": "print", "resource": "F", "verbose": True},
                     {"type": "print", "resource": "H", "verbose": True},
                     {"type": "print", "resource": "U", "verbose": True}]}
    _, printed = _run(tmp_path, model)
    assert printed[0].splitlines()[:4] == [
        "Resource 'F':", "[ 0] 1 (0x3F800000)", "[ 1] -0 (0x80000000)", "[ 2] 0.1 (0x3DCCCCCD)"]
    assert printed[0].splitlines()[-1] == "[10] 0 (0x       0)" and printed[0].endswith("\n")
    assert printed[1] == "Resource 'H':\n[0] 1 (0x3C00)\n[1] 65504 (0x7BFF)\n"
    assert printed[2] == "Resource 'U':\n[0] 5 (0x 5)\n[1] 255 (0xFF)\n"


@pytest.mark.parametrize("kind,what", [("hlsl", "HLSL compute shaders"),
                                       ("tensorRT", "not a DirectML operator")])
def test_dispatchables_dmlsim_cannot_run_are_named(tmp_path, kind, what):
    model = {"dispatchables": {"d": {"type": kind, "sourcePath": "x"}}, "commands": []}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    with pytest.raises(ModelError) as e:
        dxdispatch.load(path)
    assert str(e.value) == (f"dispatchable 'd': type '{kind}' is not supported by dmlsim "
                            f"({what}); dmlsim runs DirectML operator, ONNX and "
                            "dmlSerializedGraph dispatchables")


@pytest.mark.parametrize("resource,message", [
    (_buf("UINT8", [1, 300]), "300 is out of range for uint8"),
    (_buf("FLOAT32", {"valueCount": 2, "value": 1, "valueStart": 0}),
     "initialValues may contain a value, valueStart, or sourcePath, but they are mutually "
     "exclusive."),
    ({"initialValues": {"valueCount": 2, "value": 1}}, "Field 'initialValuesDataType' is "
     "required."),
    (dict(_buf("FLOAT32", [1, 2]), sizeInBytes=4), "resource 'R': the buffer size (4 bytes) is "
     "too small for the initialValues (8 bytes) at offset 0 bytes."),
])
def test_bad_initializers_are_refused_with_the_parsers_reasons(tmp_path, resource, message):
    with pytest.raises(ModelError) as e:
        _run(tmp_path, {"resources": {"R": resource}, "dispatchables": {}, "commands": []})
    assert str(e.value) == message


def test_cli_reports_model_errors(tmp_path, capsys):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"dispatchables": {}, "commands": [{"type": "print"}]}))
    assert cli.main(["dispatch", str(path)]) == 1
    assert "dmlsim dispatch: the model is malformed at commands/0: 'resource' is a required " \
        "property" in capsys.readouterr().err


def test_the_schema_validator_is_built_once_and_still_names_the_mistake(tmp_path, monkeypatch):
    """jsonschema.validate re-checked the schema on every load (0.3 s of a 0.9 s run); the
    validator is now built once per process, and a bad model still fails with its message."""
    import jsonschema
    assert dxdispatch._validator() is dxdispatch._validator()
    checks = []
    monkeypatch.setattr(jsonschema.validators.validator_for(
        json.loads(dxdispatch._SCHEMA.read_text())), "check_schema",
        classmethod(lambda cls, s: checks.append(1)))
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"resources": {}, "dispatchables": {}, "commands": [{"type": 7}]}))
    for _ in range(2):
        with pytest.raises(jsonschema.ValidationError):
            dxdispatch.load(str(path))
    assert checks == []  # the schema was not checked again


def _add_model(dispatchable, bindings=None):
    return {"resources": {"A": _buf("FLOAT32", [1, 2, 3, 4]), "B": _buf("FLOAT32", [1, 1, 1, 1]),
                          "Out": _zeros("FLOAT32", 4)},
            "dispatchables": {"add": dispatchable},
            "commands": [{"type": "dispatch", "dispatchable": "add", "bindings": bindings or
                          {"ATensor": "A", "BTensor": "B", "OutputTensor": "Out"}}]}


_ADD_FIELDS = {"ATensor": _t("FLOAT32", [4]), "BTensor": _t("FLOAT32", [4]),
               "OutputTensor": _t("FLOAT32", [4])}


@pytest.mark.parametrize("form", ["desc", "Desc", "inline"])
def test_a_desc_under_desc_capital_desc_or_inline(tmp_path, form):
    """Guide.md writes "Desc"; DxDispatch's ParseDmlOperatorDesc falls back to the dispatchable
    object itself when it has neither."""
    d = {"type": "ELEMENT_WISE_ADD"}
    d.update(_ADD_FIELDS if form == "inline" else {form: _ADD_FIELDS})
    result, _ = _run(tmp_path, _add_model(d))
    assert result["Out"].tolist() == [2, 3, 4, 5]


def test_a_bind_point_given_the_wrong_number_of_resources_is_named(tmp_path):
    model = _add_model({"type": "ELEMENT_WISE_ADD", "desc": _ADD_FIELDS},
                       {"ATensor": ["A", "B"], "BTensor": "B", "OutputTensor": "Out"})
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model))
    with pytest.raises(ModelError, match=r"^Bind point 'ATensor' requires 1 resources, but 2 "
                                         r"were bound\.$"):
        dxdispatch.load(path)
    assert cli.main(["dispatch", str(path)]) == 1  # refused before any work: no device removed


@pytest.mark.parametrize("where", ["initializer", "writeFile"])
def test_images_are_refused_by_name(tmp_path, where):
    """DxDispatch converts images with WIC (Windows only); dmlsim names the file instead of
    reading a JPEG's bytes as FLOAT32."""
    model = _add_model({"type": "ELEMENT_WISE_ADD", "desc": _ADD_FIELDS})
    if where == "initializer":
        (tmp_path / "cat.jpg").write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
        model["resources"]["A"] = {"initialValuesDataType": "FLOAT32",
                                   "initialValues": {"sourcePath": "cat.jpg"}}
    else:
        model["commands"].append({"type": "writeFile", "resource": "Out",
                                  "targetPath": "out.png"})
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model))
    with pytest.raises(ModelError, match=r"(cat\.jpg|out\.png)' is an image: .*WIC"):
        dxdispatch.run_model(dxdispatch.load(path), out=lambda s: None, output_dir=tmp_path)

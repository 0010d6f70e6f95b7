"""DxDispatch's ONNX dispatchables (``"type": "onnx"``): the two samples with the outputs
DxDispatch's own CMakeLists ``model_test`` expects, free-dimension overrides from the JSON, an
``.onnx`` file given in place of a model, and DxDispatch's binding rules as errors."""
import json
import shutil
from pathlib import Path

import pytest

from dmlsim import cli
from dmlsim._pythonic import dxdispatch
from dmlsim._pythonic.dxdispatch_parse import ModelError

MODELS = Path(__file__).with_name("models")


@pytest.mark.parametrize("name, expected", [
    ("onnx_gemm", "Resource 'Out': 22, 28, 34, 40, 46, 60, 74, 88, 70, 92, 114, 136"),
    ("onnx_dynamic_shapes", "Resource 'deferredY': 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12"),
])
def test_dxdispatch_model_test_outputs(name, expected, capsys):
    assert cli.main(["dispatch", str(MODELS / f"{name}.json")]) == 0
    assert expected in capsys.readouterr().out


def test_dynamic_shapes_print_what_each_dispatch_wrote():
    printed = []
    dxdispatch.run_model(dxdispatch.load(MODELS / "onnx_dynamic_shapes.json"), printed.append)
    assert printed == ["Resource 'c': 1, 2, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0",
                       "Resource 'c': 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12",
                       "Resource 'deferredY': 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12"]


def _model(tmp_path, dispatchable, bindings, resources=None):
    shutil.copy(MODELS / "onnx_dynamic_shapes.onnx", tmp_path / "concat.onnx")
    model = {"resources": resources or {
                 "a": {"initialValuesDataType": "FLOAT32", "initialValues": [1, 2, 3, 4, 5, 6]},
                 "b": {"initialValuesDataType": "FLOAT32", "initialValues": [7, 8, 9, 10, 11, 12]},
                 "c": {"initialValuesDataType": "FLOAT32",
                       "initialValues": {"valueCount": 12, "value": 0}}},
             "dispatchables": {"concat": {"type": "onnx", "sourcePath": "concat.onnx",
                                          **dispatchable}},
             "commands": [{"type": "dispatch", "dispatchable": "concat", "bindings": bindings},
                          {"type": "print", "resource": "c"}]}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    return dxdispatch.load(path)


def test_free_dimension_name_overrides_fix_the_shapes_without_binding_shapes(tmp_path):
    printed = []
    model = _model(tmp_path, {"freeDimensionNameOverrides": {"N": 2},
                              "graphOptimizationLevel": 0},
                   {"x0": "a", "x1": "b", "y": "c"})
    dxdispatch.run_model(model, printed.append)
    assert printed == ["Resource 'c': 1, 2, 3, 4, 7, 8, 9, 10, 0, 0, 0, 0"]


def test_unbound_inputs_with_free_dimensions_are_read_with_size_1(tmp_path):
    printed = []
    dxdispatch.run_model(_model(tmp_path, {}, {"y": "c"}), printed.append)
    assert printed == ["Resource 'c': 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0"]  # zeros, [2, 2]


@pytest.mark.parametrize("bindings, words", [
    ({"x0": ["a", "b"], "x1": "b", "y": "c"}, "must map to a single binding source"),
    ({"x0": {"name": "a", "elementOffset": 1}, "x1": "b", "y": "c"}, "do not support binding"),
    ({"x0": "a", "x1": "b", "z": "c"}, "'z' is not an input or output of the ONNX model"),
    ({"x0": {"name": "a", "shape": [4, 2]}, "x1": "b", "y": "c"}, "needs 32 bytes"),
    ({"x0": "a", "x1": "nope", "y": "c"}, "no resource named 'nope'"),
])
def test_binding_errors_name_the_tensor_or_resource(tmp_path, bindings, words):
    with pytest.raises(ModelError) as e:
        dxdispatch.run_model(_model(tmp_path, {}, bindings), lambda s: None)
    assert words in str(e.value)


def test_an_onnx_file_in_place_of_a_model_and_bad_sources(tmp_path, capsys):
    assert cli.main(["dispatch", str(MODELS / "onnx_gemm.onnx")]) == 0
    (tmp_path / "broken.onnx").write_bytes(b"not a model")
    assert cli.main(["dispatch", str(tmp_path / "broken.onnx")]) == 1
    assert "is not an ONNX model" in capsys.readouterr().err
    with pytest.raises(ModelError) as e:
        dxdispatch.run_model(_model(tmp_path, {"freeDimensionNameOverrides": {"N": 0}}, {}),
                             lambda s: None)
    assert "dim_value is 0" in str(e.value)


def test_a_deferred_resource_bound_to_a_dml_operator_is_refused(tmp_path):
    model = json.loads("".join(
        line for line in (MODELS / "dml_element_wise_add.json").read_text().splitlines(True)
        if not line.lstrip().startswith("//")))
    first = next(iter(model["resources"]))
    model["resources"][first] = {"initialValuesDataType": "FLOAT32",
                                 "initialValues": "deferred"}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    with pytest.raises(ModelError) as e:
        dxdispatch.run_model(dxdispatch.load(path), lambda s: None)
    assert f"resource '{first}' is deferred" in str(e.value)
    model["resources"][first]["initialValues"] = "later"
    path.write_text(json.dumps(model))
    with pytest.raises(ModelError) as e:
        dxdispatch.run_model(dxdispatch.load(path), lambda s: None)
    assert "only supports deferred" in str(e.value)

"""DxDispatch models in tests/models run through dmlsim's faithful path; the CLI works.

Each model carries an ``expected`` block (ignored by DxDispatch's schema, which allows extra
keys) with the values a reader can check by hand from the model's resources and formula.
"""
import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from dmlsim import cli
from dmlsim._pythonic import dxdispatch

MODELS = sorted(Path(__file__).with_name("models").glob("*.json"))


@pytest.mark.parametrize("path", MODELS, ids=[p.stem for p in MODELS])
def test_model_runs_and_matches_expected(path):
    model = dxdispatch.load(path)
    printed = []
    result = dxdispatch.run_model(model, out=printed.append)
    for name, values in model["expected"].items():
        got = result[name][:len(values)]
        np.testing.assert_array_equal(got, np.array(values, dtype=got.dtype))
    assert len(printed) == sum(c["type"] == "print" for c in model["commands"])


def test_model_schema_rejects_a_command_without_dispatchable(tmp_path):
    bad = json.loads(MODELS[0].read_text())
    del bad["commands"][0]["dispatchable"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, json.loads(dxdispatch._SCHEMA.read_text()))


def test_cli_dispatch_prints_the_resource(capsys):
    assert cli.main(["dispatch", str(Path(__file__).with_name("models") /
                                     "dml_element_wise_add.json")]) == 0
    assert "Resource 'Out': 6, 10, -2" in capsys.readouterr().out  # C++ ostream formatting


def test_cli_ops_lists_every_operator_type_with_its_level(capsys):
    assert cli.main(["ops", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 177
    add = next(r for r in rows if r["operator"] == "DML_OPERATOR_ELEMENT_WISE_ADD")
    assert add == {"operator": "DML_OPERATOR_ELEMENT_WISE_ADD", "value": 4, "introduced": "1_0",
                   "implemented": True, "in_place": True}


def test_cli_ops_feature_level_filter(capsys):
    cli.main(["ops", "--json", "--feature-level", "1_0"])
    rows = json.loads(capsys.readouterr().out)
    assert rows and all(r["introduced"] == "1_0" for r in rows)
    assert not any(r["operator"].endswith("LOGICAL_LESS_THAN_OR_EQUAL") for r in rows)


def test_cli_info(capsys):
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert "feature_level: DML_FEATURE_LEVEL_6_4" in out and "jax_enable_x64: True" in out


def test_cli_reports_hresult_errors(tmp_path, capsys):
    model = json.loads(MODELS[0].read_text())
    model["dispatchables"] = {"x": {"type": "DML_OPERATOR_CONVOLUTION", "desc": {}}}
    model["commands"] = []
    p = tmp_path / "m.json"
    p.write_text(json.dumps(model))
    assert cli.main(["dispatch", str(p)]) == 1
    assert "DML_OPERATOR_CONVOLUTION: InputTensor is null but the tensor is required " \
        "[E_INVALIDARG]" in capsys.readouterr().err


def test_ops_piped_into_a_reader_that_has_left_prints_no_traceback():
    """`dmlsim ops | true`: the reader is gone before the first line (dmlsim takes a second to
    import), and the closed pipe ends the command quietly."""
    import subprocess
    import sys
    code = ("import sys; from dmlsim.cli import main; sys.exit(main(['ops']))")
    proc = subprocess.run(f'"{sys.executable}" -c "{code}" | true', shell=True,
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr

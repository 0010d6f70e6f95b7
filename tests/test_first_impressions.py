"""What a new user trips on first (issue 29): an operator or field name mistyped is an
HResultError with the close match, lowercase names work, ``python -m dmlsim`` and
``--version`` answer."""
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import dmlsim as dml


def test_operator_names_are_case_blind_and_typos_get_the_close_match():
    a = np.float32([1, 2, 3])
    desc = dml.operator_desc("element_wise_add", ATensor=a, BTensor=a, OutputTensor=a)
    np.testing.assert_array_equal(dml.run(desc, a, a), 2 * a)
    with pytest.raises(dml.HResultError) as e:
        dml.operator_desc("GEM", ATensor=a)
    assert e.value.hresult == dml.E_INVALIDARG
    assert e.value.message == "operator_desc: no operator 'GEM'; did you mean GEMM?"
    with pytest.raises(dml.HResultError) as e:
        dml.operator_desc("ELEMENT_WISE_ADD", Atensor=a)
    assert "has no field 'Atensor'; did you mean 'ATensor'?" in e.value.message
    with pytest.raises(dml.HResultError):
        dml.operator_desc(None)


def test_python_dash_m_and_version():
    out = subprocess.run([sys.executable, "-m", "dmlsim", "--version"], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == f"dmlsim {dml.__version__}"


@pytest.mark.parametrize("level", ["9_9", "abc", None, 1.5, True])
def test_set_feature_level_refuses_what_is_not_a_level(level):
    with pytest.raises(dml.HResultError) as e:
        dml.set_feature_level(level)
    assert e.value.hresult == dml.E_INVALIDARG and "set_feature_level: " in e.value.message


def test_session_arguments_are_checked():
    import dmlsim.onnx as donnx
    from onnx import helper
    x = helper.make_tensor_value_info("x", 1, [2])
    model = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                                                [x], [helper.make_tensor_value_info("y", 1, [2])]),
                              ir_version=10)
    opts = donnx.SessionOptions()
    opts.plan_cache_size = 0
    for kwargs, words in (({"bogus": 1}, "unknown keyword argument 'bogus'"),
                          ({"sess_options": opts}, "plan_cache_size is 0"),
                          ({"sess_options": "fast"}, "sess_options is a str"),
                          ({"feature_level": "9_9"}, "0x9900 is outside")):
        with pytest.raises(dml.HResultError) as e:
            donnx.InferenceSession(model, **kwargs)
        assert e.value.hresult == dml.E_INVALIDARG and words in e.value.message


def test_an_array_of_the_wrong_shape_names_the_input_and_the_sizes():
    """A compiled dmlx graph (and every prepared runner: sessions, dmlsim.run_compiled) given
    an array that does not fit says which input and what sizes it needed, instead of NumPy's
    broadcast error; a shape that broadcasts is still taken."""
    from dmlsim import dmlx
    dev = dml.DMLCreateDevice(dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0), 0)
    g = dmlx.Graph(dev)
    a = dmlx.InputTensor(g, 0, dmlx.TensorDesc(dml.DML_TENSOR_DATA_TYPE_FLOAT32, 0, [1, 1, 2, 3]))
    f = g.compile([a * 2.0])
    for bad in (np.ones((1, 1, 3, 2), np.float32), np.ones(5, np.float32)):
        with pytest.raises(dml.HResultError) as err:
            f(bad)
        assert err.value.hresult == dml.E_INVALIDARG
        assert err.value.message == (f"input 0: an array of shape {bad.shape} does not fit the "
                                     "tensor's sizes [1, 1, 2, 3] (give that shape, or one that "
                                     "broadcasts to it)")
    np.testing.assert_array_equal(f(np.float32(3)), np.full((1, 1, 2, 3), 6, np.float32))
    np.testing.assert_array_equal(f(np.ones((1, 1, 2, 3), np.float32)),
                                  np.full((1, 1, 2, 3), 2, np.float32))


def test_cli_input_mistakes_are_one_line_and_exit_2_before_any_lowering(tmp_path, capsys):
    """``run`` / ``compare``: a missing model or input file, an .npy without a name, a name the
    model does not have: one line on stderr, exit status 2, nothing lowered. A .npz feeds each
    of its arrays by name."""
    from dmlsim import cli
    model = "tests/models/onnx_gemm.onnx"  # inputs A0, B0, A1, B1
    np.save(tmp_path / "x.npy", np.ones((3, 2), np.float32))
    np.savez(tmp_path / "two.npz", a=np.ones(2), b=np.ones(3))
    cases = {
        f"nope={tmp_path / 'x.npy'}": "'nope' is not an input; inputs: A0, B0, A1, B1",
        f"A0={tmp_path / 'missing.npy'}": "no such file",
        str(tmp_path / "x.npy"): "give NAME=FILE.npy",
        f"A0={tmp_path / 'two.npz'}": "holds 2 arrays (a, b)",
    }
    for command in ("run", "compare"):
        for item, says in cases.items():
            assert cli.main([command, model, "--input", item]) == 2
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1 and err[0].startswith(f"dmlsim {command}: ") and says in err[0]
    assert cli.main(["run", str(tmp_path / "none.onnx")]) == 2
    assert "none.onnx: no such file or folder" in capsys.readouterr().err


def test_cli_takes_a_npz_of_every_input(tmp_path, capsys):
    import onnxruntime as ort
    from dmlsim import cli
    model = "tests/models/onnx_gemm.onnx"
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds = {a.name: rng.standard_normal([d if isinstance(d, int) else 1 for d in a.shape])
             .astype(np.float32) for a in sess.get_inputs()}
    np.savez(tmp_path / "in.npz", **feeds)
    assert cli.main(["run", model, "--input", str(tmp_path / "in.npz"),
                     "--output", str(tmp_path)]) == 0
    for a, want in zip(sess.get_outputs(), sess.run(None, feeds)):
        np.testing.assert_allclose(np.load(tmp_path / f"{a.name}.npy"), want, rtol=1e-5,
                                   atol=1e-6)


def test_a_normal_install_carries_what_dmlsim_hello_and_type_checkers_need(tmp_path):
    """The wheel (what ``pip install .`` installs) holds the HelloDirectML program that
    ``dmlsim hello`` runs, dmlx's type stub and the py.typed marker, and nothing of the
    checkout beside the package (tests, tools, examples)."""
    root = Path(__file__).resolve().parent.parent
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                    str(tmp_path), str(root)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("dmlsim-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"dmlsim/examples/hello_directml.py", "dmlsim/dmlx.pyi", "dmlsim/py.typed",
            "dmlsim/_pythonic/dxdispatch_schema.json"} <= names
    assert not any(n.split("/")[0] in ("tests", "tools", "examples", "benchmarks")
                   for n in names)

"""The public calling surface is typed (``py.typed`` ships with the package): mypy checks the
public modules (the faithful layer's interfaces and structs, ``dmlsim.run``) and a small
client program written against them."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PUBLIC = ["dmlsim/__init__.py", "dmlsim/_api", "dmlsim/_pythonic/run.py", "dmlsim/_schema"]
CLIENT = '''
import numpy as np
import dmlsim as dml

d3d: dml.ID3D12Device = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
device: dml.IDMLDevice1 = dml.DMLCreateDevice(d3d, dml.DML_CREATE_DEVICE_FLAG_NONE)
desc = dml.DML_BUFFER_TENSOR_DESC()
desc.Sizes = [1, 2]
size: int = dml.DMLCalcBufferTensorSize(dml.DML_TENSOR_DATA_TYPE_FLOAT32, 2, [1, 2], None)
fence: dml.ID3D12Fence = d3d.CreateFence(0, dml.D3D12_FENCE_FLAG_NONE)
value: int = fence.GetCompletedValue()
out = dml.run(dml.operator_desc("ELEMENT_WISE_ADD", ATensor=np.ones(2, np.float32),
                                BTensor=np.ones(2, np.float32)), np.ones(2), np.ones(2))
'''
BAD_CLIENT = '''
import dmlsim as dml
d3d = dml.D3D12CreateDevice(None)
fence = d3d.CreateFence(0, 0)
name: str = fence.GetCompletedValue()
desc = dml.DML_ELEMENT_WISE_ADD_OPERATOR_DESC()
desc.ATensr = None
'''


def _mypy(*args):
    api = pytest.importorskip("mypy.api")
    return api.run(["--config-file", str(ROOT / "pyproject.toml"), *args])


def test_py_typed_marker_ships():
    assert (ROOT / "dmlsim" / "py.typed").exists()


def test_mypy_checks_the_public_modules_and_clients(tmp_path):
    """One run: the public modules and a correct client pass; a client with a wrong type and
    a misspelt struct field gets exactly those two errors."""
    good, bad = tmp_path / "client.py", tmp_path / "bad.py"
    good.write_text(CLIENT)
    bad.write_text(BAD_CLIENT)
    out, err, status = _mypy("--cache-dir", str(tmp_path / "cache"),
                             *[str(ROOT / p) for p in PUBLIC], str(good), str(bad))
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert all(line.startswith(str(bad)) for line in errors), out + err
    assert len(errors) == 2, out
    assert 'Incompatible types in assignment (expression has type "int"' in errors[0]
    assert '"DML_ELEMENT_WISE_ADD_OPERATOR_DESC" has no attribute "ATensr"' in errors[1]


USER_SCRIPT = '''
import numpy as np
import dmlsim as dml
from dmlsim import dmlx

out = dml.run(dml.operator_desc("ELEMENT_WISE_ADD", ATensor=np.ones(2, np.float32),
                                BTensor=np.ones(2, np.float32)), np.ones(2), np.ones(2))
assert isinstance(out, np.ndarray)
total: float = float(out.sum())
device = dml.DMLCreateDevice(dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0), 0)
graph = dmlx.Graph(device)
x = dmlx.InputTensor(graph, 0, dmlx.TensorDesc(dml.DML_TENSOR_DATA_TYPE_FLOAT32, [1, 1, 4, 4]))
y: dmlx.Expression = dmlx.Sqrt(x) + dmlx.Add(x, x)
halves: list[dmlx.Expression] = dmlx.Split(x, 2, [2, 2])
wrong: str = dmlx.Identity(x)
'''

# The README's mypy.ini for a project using dmlsim (its "Type checking" lines).
MYPY_INI = """[mypy]
[mypy-jax.*,jaxlib.*]
follow_imports = skip
"""


def test_a_users_script_type_checks_against_the_installed_package(tmp_path):
    """mypy run on a script in a folder of its own (not the checkout), as a user runs it after
    the README's ``pip install -e .``, with the README's ``mypy.ini`` (mypy does not follow
    dmlsim into JAX: 5 s instead of 15 on the 2-core CPU, the same report): it finds dmlsim,
    sees dmlx's operator functions (the generated stub) and ``run``'s result type, and
    reports the one wrong line."""
    pytest.importorskip("mypy.api")
    script = tmp_path / "script.py"
    script.write_text(USER_SCRIPT)
    (tmp_path / "mypy.ini").write_text(MYPY_INI)
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "script.py"],
                          cwd=tmp_path, capture_output=True, text=True, env=env)
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1, done.stdout + done.stderr
    assert errors[0].startswith("script.py:15: error: Incompatible types in assignment "
                                '(expression has type "Expression"'), errors


def test_dmlx_stub_is_current(tmp_path):
    out = tmp_path / "dmlx.pyi"
    subprocess.run([sys.executable, str(ROOT / "tools" / "gen_dmlx_stub.py"), "--out", str(out)],
                   check=True)
    assert out.read_text() == (ROOT / "dmlsim" / "dmlx.pyi").read_text(), \
        "run: python tools/gen_dmlx_stub.py"

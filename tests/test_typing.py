"""The public calling surface is typed (``py.typed`` ships with the package): mypy checks the
public modules (the faithful layer's interfaces and structs, ``dmlsim.run``) and a small
client program written against them."""
from __future__ import annotations

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

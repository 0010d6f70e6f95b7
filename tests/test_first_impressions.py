"""What a new user trips on first (issue 29): an operator or field name mistyped is an
HResultError with the close match, lowercase names work, ``python -m dmlsim`` and
``--version`` answer."""
import subprocess
import sys

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

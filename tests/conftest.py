"""Make the repository root importable (``import dmlsim``) when pytest is run as ``pytest``,
and make sure the tests exercise this checkout, not another installed copy of dmlsim."""
import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)


def pytest_sessionstart(session):
    import dmlsim
    here = Path(dmlsim.__file__).resolve().parent.parent
    assert str(here) == _ROOT, (f"the tests import dmlsim from {here}, not from this checkout "
                                f"({_ROOT}): run `pip install -e .` here")

"""Make the repository root importable (``import dmlsim``) when pytest is run as ``pytest``,
and make sure the tests exercise this checkout, not another installed copy of dmlsim."""
import gc
import os
import sys
from pathlib import Path

# JAX's persistent compilation cache (on by default for users) stays off in the tests unless
# asked for (DMLSIM_COMPILATION_CACHE=1 in the environment): a test must not depend on what an
# earlier run left in a user's cache directory. Subprocesses inherit the setting.
os.environ.setdefault("DMLSIM_COMPILATION_CACHE", "0")

_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)


def pytest_sessionstart(session):
    import dmlsim
    here = Path(dmlsim.__file__).resolve().parent.parent
    assert str(here) == _ROOT, (f"the tests import dmlsim from {here}, not from this checkout "
                                f"({_ROOT}): run `pip install -e .` here")


def pytest_sessionfinish(session):
    """After the last test pytest's cleanup runs ``gc.collect()`` five times, and pytest-xdist
    (execnet) interrupts a worker's main thread when it takes too long to end; a
    KeyboardInterrupt landing in a garbage-collection callback (JAX's, hypothesis's) was
    printed as a stray PytestUnraisableExceptionWarning after a green run. So: collect once
    here, freeze what is left (the later collections then have nothing to scan, and end fast)
    and drop the callbacks, which nothing needs after the session."""
    gc.collect()
    gc.freeze()
    gc.callbacks.clear()

"""Make the repository root importable (``import dmlsim``) when pytest is run as ``pytest``."""
import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

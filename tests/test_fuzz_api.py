"""The API fuzz of tools/fuzz_api.py at a short profile: generated calls (integers past UINT64,
NaN, None, strings, lists, objects of the wrong interface) raise HResultError or nothing, and a
failed non-void call leaves the device as it was. The long profile (100,000 cases) is run with
``python tools/fuzz_api.py``."""
import importlib.util
from pathlib import Path


def test_generated_calls_raise_only_hresult_errors():
    path = Path(__file__).resolve().parent.parent / "tools" / "fuzz_api.py"
    spec = importlib.util.spec_from_file_location("fuzz_api", path)
    fuzz = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fuzz)
    tally = fuzz.run(400, progress=False)
    assert tally["cases"] == 400
    assert tally["bad"] == []

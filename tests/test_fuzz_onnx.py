"""The broken-model fuzz of tools/fuzz_onnx.py at a short profile: byte flips, truncations and
field mutations of the example models make InferenceSession / run raise HResultError or run,
never another exception, and no case takes a minute. The long profile (10,000 cases) is run
with ``python tools/fuzz_onnx.py``."""
import importlib.util
from pathlib import Path


def test_broken_models_raise_only_hresult_errors():
    path = Path(__file__).resolve().parent.parent / "tools" / "fuzz_onnx.py"
    spec = importlib.util.spec_from_file_location("fuzz_onnx", path)
    fuzz = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fuzz)
    tally = fuzz.run(28, seed=11, progress=False)
    assert tally["cases"] == 28 and tally["bad"] == [] and tally["hangs"] == []
    assert tally["hresult"] > 10 and tally["ran"] > 10  # both kinds of outcome happen

"""Docs stay true: the generated operator reference is current (its example programs run in
test_operator_examples), every notebook runs, the API reference resolves and a notebook error
fails the docs build."""
import ast
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_operator_reference_is_current(tmp_path):
    out = tmp_path / "operators.md"
    subprocess.run([sys.executable, str(ROOT / "tools" / "gen_op_docs.py"), "--out", str(out)],
                   check=True)
    committed = (ROOT / "docs" / "operators.md").read_text()
    assert out.read_text() == committed, "run: python tools/gen_op_docs.py"


@pytest.mark.parametrize("nb", sorted((ROOT / "notebooks").glob("*.ipynb")),
                         ids=lambda p: p.stem)
def test_notebook_runs(nb, monkeypatch, tmp_path):
    """Executes the notebook's code cells in order; every cell's own asserts must hold. It runs
    in a folder of its own, as the docs build runs its copy in docs/notebooks/, so a notebook
    that reaches for files by a path relative to notebooks/ fails here as it would there."""
    cells = json.loads(nb.read_text())["cells"]
    monkeypatch.chdir(tmp_path)
    scope = {"__name__": "__notebook__"}
    for cell in cells:
        if cell["cell_type"] == "code":
            exec(compile("".join(cell["source"]), f"{nb.name}", "exec"), scope)


def test_docs_build_fails_on_a_notebook_error():
    """docs/conf.py tells myst-nb to fail the build when a notebook cell raises (its default
    only warns, which let a broken notebook ship)."""
    tree = ast.parse((ROOT / "docs" / "conf.py").read_text())
    settings = {t.id: ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                for t in n.targets if isinstance(t, ast.Name) and isinstance(n.value, ast.Constant)}
    assert settings.get("nb_execution_raise_on_error") is True
    assert settings.get("nb_execution_mode") in ("auto", "force", "cache")


def test_api_reference_page_resolves():
    """docs/api.md's autodoc targets all import and carry a docstring, and the page covers
    run, operator_desc, dmlx, onnx and trace; the index links it."""
    page = (ROOT / "docs" / "api.md").read_text()
    targets = re.findall(r"^\.\. auto(?:function|class|module):: (\S+)", page, re.M)
    for required in ("dmlsim.run", "dmlsim.operator_desc", "dmlsim.dmlx.Graph",
                     "dmlsim.onnx.InferenceSession", "dmlsim.trace"):
        assert required in targets
    for target in targets:
        module, _, name = target.rpartition(".")
        obj = getattr(importlib.import_module(module), name)
        assert (obj.__doc__ or "").strip(), f"{target} has no docstring"
    assert "\napi\n" in (ROOT / "docs" / "index.md").read_text()

"""Docs stay true: the generated operator reference is current, and every notebook runs."""
import json
import os
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
def test_notebook_runs(nb, monkeypatch):
    """Executes the notebook's code cells in order, in the notebooks/ folder (as Jupyter
    would); every cell's own asserts must hold."""
    cells = json.loads(nb.read_text())["cells"]
    monkeypatch.chdir(nb.parent)
    scope = {"__name__": "__notebook__"}
    for cell in cells:
        if cell["cell_type"] == "code":
            exec(compile("".join(cell["source"]), f"{nb.name}", "exec"), scope)

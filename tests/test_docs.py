"""Docs stay true: the generated operator reference is current and its examples run, every
notebook runs, the API reference resolves and a notebook error fails the docs build."""
import ast
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dmlsim._core import registry
from dmlsim._schema.operators_generated import OPERATORS
from test_operator_examples import compare

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import gen_op_docs  # noqa: E402


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


def _reference_cases():
    reg = registry.load_all()
    return [(name, i) for name in sorted(reg) for i in range(len(reg[name].examples))]


@pytest.mark.parametrize("case", _reference_cases(),
                         ids=lambda c: f"{c[0].replace('DML_OPERATOR_', '')}-{c[1]}")
def test_operator_reference_example_code_runs(case):
    """Each example in docs/operators.md is a dml.run program; run as printed, ``out`` holds
    the example's expected outputs (the page is current: test_operator_reference_is_current)."""
    name, index = case
    opdef = registry.load_all()[name]
    example = opdef.examples[index]
    scope: dict = {}
    exec(gen_op_docs.example_code(OPERATORS[name], example), scope)
    got = scope["out"] if isinstance(scope["out"], list) else [scope["out"]]
    want = []
    for field in OPERATORS[name]["outputs"]:
        value = example.outputs.get(field)
        want += list(value) if isinstance(value, list) else [value]
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        if w is not None:
            w = np.asarray(w)
            compare(opdef, g, w.reshape(np.shape(g)) if w.size == np.size(g) else w,
                    f"{name} docs example {index} output {k}")


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

"""Layout rules of DESIGN.md section 4: the core never imports the API layer, the public
module only re-exports, and files stay small."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "dmlsim"
CORE = sorted((PKG / "_core").glob("*.py"))
HAND_WRITTEN = sorted(p for p in PKG.rglob("*.py")
                      if not p.name.endswith("_generated.py") and "__pycache__" not in p.parts)
OPS = sorted((PKG / "ops").glob("*.py"))


def _imports(path: Path):
    return _imports_in(path.read_text(), str(path))


def _imports_in(source: str, filename="<probe>"):
    """Every module name an import statement names (relative ones with their dots)."""
    tree = ast.parse(source, filename)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            yield base
            for alias in node.names:  # "from .. import _api"
                yield f"{base}.{alias.name}" if base else alias.name


@pytest.mark.parametrize("path", CORE, ids=[p.name for p in CORE])
def test_core_never_imports_the_api_layer(path):
    for name in _imports(path):
        assert not _touches_api(name), f"dmlsim/_core/{path.name} imports {name}"


def _touches_api(name):
    parts = name.replace(".", " ").split()
    return "_api" in parts or "_pythonic" in parts


def test_import_scan_sees_relative_imports():
    """The scan above would catch each spelling of an import of the API layer."""
    for src in ("from .._api import d3d12", "from .. import _pythonic", "import dmlsim._api.dml",
                "from dmlsim._api.dml import IDMLDevice"):
        assert any(_touches_api(n) for n in _imports_in(src)), src
    assert not any(_touches_api(n) for n in _imports_in("from . import api_helpers, runtime"))


def test_public_init_only_reexports():
    tree = ast.parse((PKG / "__init__.py").read_text())
    for node in tree.body:
        assert not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)), \
            f"dmlsim/__init__.py defines {node.name} (line {node.lineno}); define it in a " \
            "private module and re-export it"


@pytest.mark.parametrize("path", OPS, ids=[p.name for p in OPS])
def test_operator_modules_are_small(path):
    n = len(path.read_text().splitlines())
    assert n < 150, f"dmlsim/ops/{path.name} has {n} lines (limit 150)"


@pytest.mark.parametrize("path", HAND_WRITTEN, ids=[str(p.relative_to(PKG)) for p in HAND_WRITTEN])
def test_hand_written_modules_are_small(path):
    n = len(path.read_text().splitlines())
    assert n < 600, f"dmlsim/{path.relative_to(PKG)} has {n} lines (limit 600)"

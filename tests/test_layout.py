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


# ---- the import graph -------------------------------------------------------------------------

# The core's layers, lowest first: a module imports only core modules of a lower layer
# (resources <- commands <- dml <- listcompile <- queue, with the leaf modules below).
CORE_LAYERS = (
    ("config", "hresult", "dtypes", "observer", "sync"),
    ("tensor", "memory", "packed4"),
    ("resources", "views", "validation", "registry"),
    ("commands", "layout"),
    ("binding",),
    ("dml",),
    ("graph_rules",),
    ("graph", "listcompile"),
    ("queue",),
)
LAYER_OF = {m: i for i, layer in enumerate(CORE_LAYERS) for m in layer}
# The pythonic layer uses public names (dmlsim._api.public), the neutral schema layer and the
# core's neutral helpers; its notebook reprs and trace read core objects to show them
# (DESIGN.md section 4).
PYTHONIC_MAY_IMPORT = ("dmlsim._api.public", "dmlsim._schema", "dmlsim._core.dtypes",
                       "dmlsim._core.config", "dmlsim._pythonic")
PYTHONIC_INTERNALS = ("reprs.py", "trace.py")


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in HAND_WRITTEN + sorted(PKG.rglob("*_generated.py"))}


def _resolve(importer: str, path: Path, node) -> list:
    """Absolute dmlsim module names one import statement names (modules that exist)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            base = importer.split(".") if path.name == "__init__.py" else importer.split(".")[:-1]
            base = base[:len(base) - node.level + 1]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        subs = [f"{prefix}.{a.name}" for a in node.names if f"{prefix}.{a.name}" in MODULES]
        names = subs or [prefix]  # "from . import config" imports the module, not the package
    return [n for n in names if n in MODULES]


def _graph(local_only=False):
    """{module: {(imported module, is the import inside a function?)}} over dmlsim."""
    graph = {}
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(), str(path))
        top = set(id(n) for n in tree.body)
        edges = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _resolve(name, path, node):
                    edges.add((target, id(node) not in top))
        graph[name] = edges
    return graph


GRAPH = _graph()


def test_no_import_cycles_even_through_function_local_imports():
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for target, _ in GRAPH.get(m, ()):
            if target == m or target.startswith(m + ".") and m.endswith("__init__"):
                continue
            if state.get(target) == "open":
                cycle = stack[stack.index(target):] + [target]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target)
        stack.pop()
        state[m] = "done"
    for m in sorted(GRAPH):
        if m not in state:
            visit(m)


def test_the_cycle_check_would_see_a_function_local_cycle():
    graph = {"a": {("b", False)}, "b": {("a", True)}}
    saved = dict(GRAPH)
    GRAPH.clear()
    GRAPH.update(graph)
    try:
        with pytest.raises(AssertionError, match="a -> b -> a"):
            test_no_import_cycles_even_through_function_local_imports()
    finally:
        GRAPH.clear()
        GRAPH.update(saved)


@pytest.mark.parametrize("path", CORE, ids=[p.name for p in CORE])
def test_core_modules_import_only_lower_layers(path):
    name = _module_name(path)
    short = name.rsplit(".", 1)[-1]
    if short == "__init__" or name == "dmlsim._core":
        return
    assert short in LAYER_OF, f"dmlsim/_core/{path.name} is in no layer of CORE_LAYERS"
    for target, local in GRAPH[name]:
        assert not local, f"dmlsim/_core/{path.name} imports {target} inside a function"
        if target.startswith("dmlsim._core."):
            other = target.rsplit(".", 1)[-1]
            assert LAYER_OF[other] < LAYER_OF[short], (
                f"dmlsim/_core/{path.name} (layer {LAYER_OF[short]}) imports {other} (layer "
                f"{LAYER_OF[other]}); a module imports only lower layers")
        else:
            assert target.startswith("dmlsim._schema"), \
                f"dmlsim/_core/{path.name} imports {target}"


PYTHONIC = sorted((PKG / "_pythonic").glob("*.py"))


@pytest.mark.parametrize("path", PYTHONIC, ids=[p.name for p in PYTHONIC])
def test_pythonic_layer_uses_public_names(path):
    if path.name in PYTHONIC_INTERNALS or path.name == "__init__.py":
        return
    for target, _ in GRAPH[_module_name(path)]:
        assert target.startswith(PYTHONIC_MAY_IMPORT), \
            f"dmlsim/_pythonic/{path.name} imports {target}; use dmlsim._api.public"
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            assert node.attr != "_core", \
                f"dmlsim/_pythonic/{path.name}:{node.lineno} reaches into ._core"


def test_every_command_record_type_has_one_row_in_each_per_type_table():
    """Replay handler, list-compile steps, debug check and repr: one row per record type."""
    from dmlsim._core import listcompile
    from dmlsim._core.commands import HANDLERS, RECORD_TYPES
    from dmlsim._debug.tracker import CHECKS
    from dmlsim._pythonic.reprs import RECORD_TEXT
    names = sorted(t.__name__ for t in RECORD_TYPES)
    assert names == ["Barrier", "CopyRegion", "DmlDispatch", "SetHeaps"]
    tables = {"commands.HANDLERS": HANDLERS, "listcompile.PREPARE": listcompile.PREPARE,
              "listcompile.BUILD": listcompile.BUILD, "tracker.CHECKS": CHECKS,
              "reprs.RECORD_TEXT": RECORD_TEXT}
    for label, table in tables.items():
        missing = sorted(t.__name__ for t in RECORD_TYPES if t not in table)
        extra = sorted(getattr(t, "__name__", str(t)) for t in table if t not in RECORD_TYPES)
        assert not missing and not extra, f"{label}: missing rows {missing}, extra {extra}"


def test_every_c_named_definition_of_the_api_layer_is_public():
    """A class or function the faithful layer defines under a C name (D3D12_*, DML_*, DXGI_*,
    CD3DX12_*, ID3D12*, IDML*, Win32 names in capitals) is in its module's ``__all__`` and
    so in ``dmlsim``: a refactor that drops one from ``__all__`` breaks ported programs."""
    import importlib
    import inspect

    import dmlsim
    prefixes = ("D3D12", "DML", "DXGI", "CD3DX12", "ID3D12", "IDML", "Create", "Close", "Wait")
    missing = []
    for path in sorted((PKG / "_api").glob("*.py")):
        mod = importlib.import_module(f"dmlsim._api.{path.stem}")
        for name, obj in vars(mod).items():
            if not name.startswith(prefixes) or getattr(obj, "__module__", None) != mod.__name__:
                continue
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and not hasattr(dmlsim, name):
                missing.append(f"{path.stem}.{name}")
    assert missing == []

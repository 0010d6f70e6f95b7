"""Layout rules (docs/architecture.md): the core never imports the API layer, the public
module only re-exports, and files stay small."""
from __future__ import annotations

import ast
import gc
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
# (resources <- steps <- commands <- dml <- execute <- queue, with the leaf modules below).
CORE_LAYERS = (
    ("hresult", "diskcache"),
    ("config", "dtypes", "observer", "sync"),
    ("tensor", "memory", "packed4", "plancache"),
    ("resources", "views", "validation", "registry"),
    ("typed_views",),
    ("steps", "layout"),
    ("commands",),
    ("binding",),
    ("dml",),
    ("graph_rules",),
    ("graph", "execute"),
    ("queue",),
)
LAYER_OF = {m: i for i, layer in enumerate(CORE_LAYERS) for m in layer}
# The pythonic layer uses public names (dmlsim._api.public), the neutral schema layer and the
# core's neutral helpers; its notebook reprs and trace read core objects to show them
# (docs/architecture.md).
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


def test_a_record_kind_is_one_class_and_its_steps():
    """Executing a record and executing a whole list build the same steps from one method per
    record kind (Record.build), so no per-kind table can miss a row: every kind defines build
    (or inherits a no-op) in the class itself, and the debug layer's checks and the notebook
    reprs fall back to a generic row for a kind they do not know."""
    from dmlsim._core.commands import Record, record_types
    from dmlsim._debug.tracker import CHECKS
    from dmlsim._pythonic.reprs import RECORD_TEXT, record_text
    kinds = record_types()
    assert sorted(t.__name__ for t in kinds) == ["Barrier", "CopyRegion", "DmlDispatch",
                                                  "SetHeaps"]
    for kind in kinds:
        assert "build" in vars(kind) or kind.build is Record.build, kind
    for table in (CHECKS, RECORD_TEXT):
        assert set(table) <= set(kinds)

    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Marker(Record):  # a new kind: nothing else to edit
        label: str

    assert Marker in record_types()
    assert record_text(Marker("x")) == "Marker label='x'"
    del Marker
    gc.collect()  # the kind is gone with its class (__subclasses__ holds weak references)
    assert len(record_types()) == 4


# ---- state, enums and failures of the core (issue 26) ------------------------------------------

# Module-level objects of the core that are mutable on purpose, and why. Anything else a core
# module binds at module level must never change after import: a device owns its state.
ALLOWED_STATE = {
    ("config", "settings"): "the process's settings (like jax.config): strict mode, feature "
                            "level, list compilation, the active trace",
    ("sync", "LOCK"): "the object model's lock (D3D12 objects are free-threaded)",
    ("sync", "CONDITION"): "waits on that lock",
    ("registry", "_REGISTRY"): "the operator registry, filled once from dmlsim/ops",
    ("registry", "_LOCK"): "guards that one filling",
    ("registry", "_LOADED"): "whether it happened",
    ("resources", "_va"): "GPU virtual addresses: process-unique, as D3D12's; holds nothing",
    ("resources", "_heap_ids"): "descriptor heap handles: process-unique; holds nothing",
    ("steps", "@functools.lru_cache(maxsize=16) _cpu_option_known"):
        "whether the installed jaxlib takes an XLA option: a fact of the process, bounded",
    ("typed_views", "@functools.lru_cache(maxsize=64) _typed_program"):
        "the typed-weights reader of a set of views: a pure function of them, bounded",
    ("typed_views", "@functools.lru_cache(maxsize=64) _typed_reader"):
        "the typed-weights reader of one view shape: a pure function of it, bounded",
}
_MUTATORS = {"append", "add", "update", "pop", "clear", "setdefault", "discard", "remove",
             "extend", "insert", "popitem", "move_to_end"}
_STATEFUL_CALLS = {"set", "dict", "list", "OrderedDict", "defaultdict", "deque", "count",
                   "WeakValueDictionary", "WeakKeyDictionary", "WeakSet", "Lock", "RLock",
                   "Condition"}


def _state_findings(name, tree):
    """(what, line) for every piece of module- or class-level mutable state in one module."""
    module_names = {t.id: n.lineno for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                    if isinstance(t, ast.Name)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            found += [(g, node.lineno) for g in node.names]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node in tree.body:
            for dec in node.decorator_list:
                text = ast.unparse(dec)
                if "cache" in text:  # functools.lru_cache / cache on a module function
                    found.append((f"@{text} {node.name}", node.lineno))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in _MUTATORS and isinstance(node.func.value, ast.Name) and \
                node.func.value.id in module_names:
            found.append((node.func.value.id, node.lineno))
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and \
                        t.value.id in module_names:
                    found.append((t.value.id, node.lineno))
    stateful = lambda v: isinstance(v, (ast.List, ast.Set, ast.Dict)) and not \
        (getattr(v, "elts", None) or getattr(v, "keys", None)) or \
        isinstance(v, ast.Call) and (getattr(v.func, "id", None) or
                                     getattr(v.func, "attr", None)) in _STATEFUL_CALLS  # noqa
    for n in tree.body:
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None and stateful(n.value):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            found += [(ast.unparse(t), n.lineno) for t in targets]
        if isinstance(n, ast.ClassDef):
            for m in n.body:
                if isinstance(m, (ast.Assign, ast.AnnAssign)) and m.value is not None and \
                        stateful(m.value):
                    found.append((f"{n.name}.{ast.unparse(m.targets[0] if isinstance(m, ast.Assign) else m.target)}", m.lineno))
    return [(what, line) for what, line in found if (name, what) not in ALLOWED_STATE]


@pytest.mark.parametrize("path", CORE, ids=[p.name for p in CORE])
def test_no_mutable_module_or_class_state_in_the_core(path):
    found = _state_findings(path.stem, ast.parse(path.read_text()))
    assert found == [], f"dmlsim/_core/{path.name}: mutable state at module or class level " \
        f"{found}; a device owns its state (or add it to ALLOWED_STATE with the reason)"


def test_the_state_scan_would_see_each_kind_of_state():
    src = """
import functools
_CACHE: dict = {}
_SEEN = set()
COUNTS = {"a": 0}
TABLE = {1: "x"}
class Q:
    blocked: set = set()
@functools.lru_cache(maxsize=32)
def f(x):
    return x
def g():
    global TRACE
    COUNTS["a"] += 1
"""
    found = sorted(w for w, _ in _state_findings("probe", ast.parse(src)))
    assert found == sorted(["_CACHE", "_SEEN", "Q.blocked", "@functools.lru_cache(maxsize=32) f",
                            "TRACE", "COUNTS"])


# Numbers a module of the core or the API binds at module level: limits and sizes, not enum
# values (an enum value comes from dmlsim/_schema, never retyped).
ALLOWED_NUMBERS = {"MAX_FEATURE_LEVEL", "MAX_PLANS_PER_LIST", "ALIGN", "CAPACITY", "INFINITE",
                   "BACKLOG", "DESCRIPTOR_INCREMENT", "_GPU_BIT", "GROUP_MAX_BYTES", "UINT32_MAX",
                   "D3D12_INFO_QUEUE_DEFAULT_MESSAGE_COUNT_LIMIT", "UINT64_LIMIT",
                   "MAX_SHADER_VISIBLE_DESCRIPTORS", "DESCRIPTOR_BYTES", "WAIT_OBJECT_0",
                   "WAIT_TIMEOUT", "WAIT_FAILED",
                   "M0", "M1", "W0", "W1"}  # Philox's multipliers and Weyl constants
ENUM_USERS = sorted(p for p in HAND_WRITTEN if p.parent.name in ("_core", "_api", "ops")
                    and p.name != "hresult.py")


def _shadow_enums(tree):
    def intish(v):
        if isinstance(v, ast.Constant):
            return type(v.value) is int
        if isinstance(v, ast.Tuple):
            return bool(v.elts) and all(intish(e) for e in v.elts)
        if isinstance(v, ast.Call):
            return getattr(v.func, "id", None) == "range"
        return isinstance(v, ast.BinOp) and intish(v.left) and intish(v.right)
    for n in tree.body:
        if isinstance(n, ast.Assign) and intish(n.value):
            names = [e.id for t in n.targets
                     for e in (t.elts if isinstance(t, ast.Tuple) else [t]) if isinstance(e, ast.Name)]
            bad = [x for x in names if x not in ALLOWED_NUMBERS]
            if bad and len(names) > 1 or bad and "DML" in bad[0] or bad and "D3D12" in bad[0]:
                yield ", ".join(bad), n.lineno


@pytest.mark.parametrize("path", ENUM_USERS, ids=[str(p.relative_to(PKG)) for p in ENUM_USERS])
def test_no_shadow_enums(path):
    """Enum values come from dmlsim/_schema (enums_generated, d3d12_enums; ``members`` gives
    short local names): no tuple of numbers standing for an enum's members."""
    found = list(_shadow_enums(ast.parse(path.read_text())))
    assert found == [], f"dmlsim/{path.relative_to(PKG)}: enum values typed as numbers {found}"


API = sorted((PKG / "_api").glob("*.py"))
_ENUM_FIELDS = {"Flags", "Type", "Dimension", "Format", "Layout", "HeapType", "DataType"}


@pytest.mark.parametrize("path", API, ids=[p.name for p in API])
def test_no_bare_number_enum_comparisons_in_the_api(path):
    """``desc.Type`` / ``.Flags`` / ``.Dimension`` ... are compared with schema enum members,
    never bare numbers (0 excepted: "no flags")."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.Compare, ast.BinOp)):
            left = node.left
            rights = node.comparators if isinstance(node, ast.Compare) else [node.right]
            if isinstance(left, ast.Attribute) and left.attr in _ENUM_FIELDS:
                for r in rights:
                    nums = [e for e in (r.elts if isinstance(r, ast.Tuple) else [r])
                            if isinstance(e, ast.Constant) and type(e.value) is int and e.value]
                    if nums:
                        found.append((ast.unparse(node), node.lineno))
    assert found == [], f"dmlsim/_api/{path.name}: enum fields compared with numbers {found}"


def test_one_exception_type_below_the_shells():
    """The core (and the operator modules) raise only its Misuse (``fail``/``Misuse``/the
    helpers that make one): no other exception class is defined or raised there."""
    allowed = {"Misuse", "fail", "misuse", "fault", "HResultError", "InvalidArgError",
               "NotImplementedHResult", "DeviceRemovedError", "NoInterfaceError"}
    # A malformed operator module fails the import (or its first kernel call): a defect of
    # dmlsim's own code, never a user's mistake.
    definition_errors = {"registry.py": {"TypeError", "RuntimeError"}}
    found = []
    for path in CORE + OPS:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and path.name != "hresult.py" and any(
                    "Exception" in ast.unparse(b) or "Error" in ast.unparse(b)
                    for b in node.bases):
                found.append((path.name, node.lineno, f"class {node.name}"))
            if isinstance(node, ast.Raise) and node.exc is not None:
                exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                name = exc.attr if isinstance(exc, ast.Attribute) else getattr(exc, "id", None)
                if name not in allowed | definition_errors.get(path.name, set()) and \
                        not isinstance(node.exc, ast.Name):  # a bare re-raise of a caught one
                    found.append((path.name, node.lineno, ast.unparse(node)[:60]))
    assert found == [], found


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

"""dmlsim: DirectML without Windows.

Everything a DirectML C++ program names is importable from here, spelled as in DirectML.h,
d3d12.h and d3dx12.h (docs/calling_convention.md has the calling convention)::

    import dmlsim as dml
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    device = dml.DMLCreateDevice(d3d, dml.DML_CREATE_DEVICE_FLAG_DEBUG)

64-bit types: importing dmlsim turns on ``jax_enable_x64`` (INT64/UINT64/FLOAT64 tensors must be
exact); set ``DMLSIM_X64=0`` before import to keep JAX's setting (64-bit tensors are then
refused). Feature level: ``DMLSIM_FEATURE_LEVEL=5_1`` or ``dmlsim.set_feature_level("5_1")``.
Strict mode: ``DMLSIM_STRICT=1`` or ``dmlsim.set_strict(True)``. Compiled programs: importing
dmlsim turns on its store of programs by structure in ``~/.cache/dmlsim/programs`` and JAX's
persistent compilation cache in ``~/.cache/dmlsim/jax`` (or both in ``DMLSIM_CACHE_DIR``; JAX's
only where JAX has no cache directory yet); ``DMLSIM_COMPILATION_CACHE=0`` leaves both off.
"""
from ._core import config as _config

_config.enable_x64()
_config.enable_compilation_cache()

from ._api.public import *  # noqa: E402,F401,F403
from ._pythonic.run import run, run_compiled, tensor_desc, operator_desc  # noqa: E402,F401
from ._pythonic.trace import trace, Trace, TraceEvent  # noqa: E402,F401
from ._pythonic.dml_graph_file import (  # noqa: E402,F401
    SerializedGraph, read_serialized_graph, write_serialized_graph)
from ._pythonic import reprs as _reprs  # noqa: E402,F401  (attaches notebook reprs)

__version__ = "0.1.0"

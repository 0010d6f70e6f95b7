"""dmlsim: DirectML without Windows.

Everything a DirectML C++ program names is importable from here, spelled as in DirectML.h,
d3d12.h and d3dx12.h (see DESIGN.md section 1 for the calling convention)::

    import dmlsim as dml
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    device = dml.DMLCreateDevice(d3d, dml.DML_CREATE_DEVICE_FLAG_DEBUG)

64-bit types: importing dmlsim turns on ``jax_enable_x64`` (INT64/UINT64/FLOAT64 tensors must be
exact); set ``DMLSIM_X64=0`` before import to keep JAX's setting (64-bit tensors are then
refused). Feature level: ``DMLSIM_FEATURE_LEVEL=5_1`` or ``dmlsim.set_feature_level("5_1")``.
Strict mode: ``DMLSIM_STRICT=1`` or ``dmlsim.set_strict(True)``.
"""
from ._core import config as _config

_config.enable_x64()

from ._schema.enums_generated import *  # noqa: E402,F401,F403
from ._schema.structs_generated import *  # noqa: E402,F401,F403
from ._schema.operators_generated import *  # noqa: E402,F401,F403
from ._schema.struct import DML_SCALAR_UNION  # noqa: E402,F401
from ._core.hresult import (  # noqa: E402,F401
    S_OK, S_FALSE, E_NOTIMPL, E_NOINTERFACE, E_POINTER, E_FAIL, E_OUTOFMEMORY, E_INVALIDARG,
    DXGI_ERROR_INVALID_CALL, DXGI_ERROR_NOT_FOUND, DXGI_ERROR_DEVICE_REMOVED,
    DXGI_ERROR_DEVICE_HUNG, DXGI_ERROR_DEVICE_RESET, DXGI_ERROR_UNSUPPORTED,
    DXGI_ERROR_MORE_DATA, DXGI_ERROR_DRIVER_INTERNAL_ERROR, SUCCEEDED, FAILED, HResultError,
    InvalidArgError, NotImplementedHResult, DeviceRemovedError, NoInterfaceError, hresult_name)
from ._core.config import set_strict, set_feature_level  # noqa: E402,F401
from ._api.d3d12_types import *  # noqa: E402,F401,F403
from ._api.d3d12 import *  # noqa: E402,F401,F403
from ._api.d3dx12 import *  # noqa: E402,F401,F403
from ._api.win32 import *  # noqa: E402,F401,F403
from ._api.dml import *  # noqa: E402,F401,F403
from ._api.info_queue import *  # noqa: E402,F401,F403
from ._api.catalog import supported_operators, info  # noqa: E402,F401
from ._pythonic.run import run, tensor_desc, operator_desc  # noqa: E402,F401
from ._pythonic.trace import trace, Trace, TraceEvent  # noqa: E402,F401
from ._pythonic import reprs as _reprs  # noqa: E402,F401  (attaches notebook reprs)

__version__ = "0.1.0"

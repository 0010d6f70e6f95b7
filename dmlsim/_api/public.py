"""Every public name of dmlsim's faithful layer in one namespace, spelled as in the C headers.

``dmlsim/__init__`` re-exports this module; the pythonic layer imports it (``from .._api import
public as dml``) so that it uses public names only without importing the package it is part
of.
"""
from .._schema.enums_generated import *  # noqa: F401,F403
from .._schema.structs_generated import *  # noqa: F401,F403
from .._schema.operators_generated import *  # noqa: F401,F403
from .._schema.struct import DML_SCALAR_UNION  # noqa: F401
from .._core.hresult import (  # noqa: F401
    S_OK, S_FALSE, E_NOTIMPL, E_NOINTERFACE, E_POINTER, E_FAIL, E_OUTOFMEMORY, E_INVALIDARG,
    DXGI_ERROR_INVALID_CALL, DXGI_ERROR_NOT_FOUND, DXGI_ERROR_DEVICE_REMOVED,
    DXGI_ERROR_DEVICE_HUNG, DXGI_ERROR_DEVICE_RESET, DXGI_ERROR_UNSUPPORTED,
    DXGI_ERROR_MORE_DATA, DXGI_ERROR_DRIVER_INTERNAL_ERROR, SUCCEEDED, FAILED, HResultError,
    InvalidArgError, NotImplementedHResult, DeviceRemovedError, NoInterfaceError, hresult_name)
from .._core.config import set_strict  # noqa: F401
from .._schema.d3d12_enums import *  # noqa: F401,F403
from .d3d12_types import *  # noqa: F401,F403
from .d3d12 import *  # noqa: F401,F403
from .d3dx12 import *  # noqa: F401,F403
from .win32 import *  # noqa: F401,F403
from .dml import *  # noqa: F401,F403
from .info_queue import *  # noqa: F401,F403
from .interop import (  # noqa: F401
    buffer_words, lend_resource, resource_array, set_resource_array)
from .catalog import (  # noqa: F401
    supported_operators, info, infer_outputs, operator_desc_of, set_feature_level,
    set_wait_timeout)

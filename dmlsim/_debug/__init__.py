"""dmlsim's debug layer: the checks of the D3D12 and DirectML debug layers, as observers on the
runtime (``Device.observers``), reporting through an ID3D12InfoQueue-like store.

Switches, as on Windows:
- ``D3D12GetDebugInterface().EnableDebugLayer()`` before ``D3D12CreateDevice``: the D3D12
  layer (states, barriers, copies, Map/Unmap against fences, ExecuteCommandLists misuse,
  recording errors, leaks) and the ID3D12InfoQueue (``d3d.QueryInterface(ID3D12InfoQueue)``);
- ``DMLCreateDevice(d3d, DML_CREATE_DEVICE_FLAG_DEBUG)``: the DirectML layer (Bind*,
  RecordDispatch, UAV barriers, descriptors, aliasing, initialization, never-written reads).
With neither, no observer is installed and nothing here runs.

Output channel: every message stored in the info queue is also logged on the Python logger
``dmlsim.debug`` in the D3D12 format (``D3D12 ERROR: <text> [ EXECUTION ERROR #538:
INVALID_SUBRESOURCE_STATE ]``) at the matching level (ERROR, WARNING, ...). With no logging
configured, Python prints WARNING and above to stderr; ``ID3D12InfoQueue.SetMuteDebugOutput``
stops the printing (messages are still stored), ``IDMLDebugDevice.SetMuteDebugOutput`` stops
DirectML's messages altogether. With DirectML's flag alone, DirectML's messages are only logged,
as ``[DIRECTML ERROR]: <text>``.

The message catalogue is :mod:`.catalog` (and docs/debug_messages.md, generated from it).
"""
from .catalog import BY_ID, BY_NAME, ENTRIES  # noqa: F401
from .layer import DebugLayer, install  # noqa: F401
from .sink import D3D12DebugBreak, Filter, Message, MessageStore, format_line  # noqa: F401

"""The debug layer proper: one observer per D3D12 device (``Device.observers``).

It is installed when the device is created with the D3D12 debug layer enabled
(``D3D12GetDebugInterface().EnableDebugLayer()`` first), or when a DirectML device is created
on it with ``DML_CREATE_DEVICE_FLAG_DEBUG``. Checks on D3D12 work (copies, barriers, Map/Unmap,
ExecuteCommandLists misuse, recording errors, leaks) run when the D3D12 layer is on; checks on
DirectML work (Bind*, RecordDispatch, dispatch records) when the DirectML device that owns the
work has the debug flag; device removal is reported when either is on. Without either switch
no observer is installed and ``Device.notify`` loops over an empty list.
"""
from __future__ import annotations

import weakref

from .._core.hresult import hresult_name
from .._core.observer import Observer
from . import catalog as C, names
from .sink import Message, MessageStore, log_directml
from .tracker import Tracker


class DebugLayer(Observer):
    def __init__(self, device):
        self.device = device
        self.d3d_on = bool(device.debug)
        self.store = MessageStore() if self.d3d_on else None
        self.dml_devices = weakref.WeakSet()
        self.tracker = Tracker(self)
        self.api = {}  # interface shells created on demand (info queue, debug device)

    # ---- output --------------------------------------------------------------------------
    def emit(self, name: str, text: str, dml=None) -> None:
        """Produce message ``name`` (a catalogue name) with ``text``; ``dml``: the DirectML
        device it comes from (IDMLDebugDevice::SetMuteDebugOutput silences those)."""
        if dml is not None and getattr(self.device, "mute_debug_output", False):
            return
        e = C.BY_NAME[name]
        m = Message(e.category, e.severity, e.id, text)
        if self.store is not None:
            self.store.add(m)
        else:
            log_directml(m)

    def any_dml_debug(self) -> bool:
        return any(d.debug for d in self.dml_devices)

    # ---- record-time events --------------------------------------------------------------
    def dml_debug_device(self, *, device):
        self.dml_devices.add(device)
        if not self.d3d_on:
            self.emit("DML_D3D12_DEBUG_LAYER_NOT_ENABLED",
                      "DMLCreateDevice: enable the D3D debug layer for enhanced validation with "
                      "DML_CREATE_DEVICE_FLAG_DEBUG (D3D12GetDebugInterface().EnableDebugLayer() "
                      "before D3D12CreateDevice); without it there is no ID3D12InfoQueue and the "
                      "D3D12 checks are off.", dml=device)

    def dml_misuse(self, *, method, message, hresult, device, message_id, table=None,
                   cmd_list=None, dispatchable=None):
        if device is None or not device.debug:
            return
        rest = message[len(method) + 2:] if message.startswith(method + ": ") else message
        parts = []
        if cmd_list is not None:
            parts.append(names.obj(cmd_list, "command list"))
        if dispatchable is not None:
            parts.append(names.dispatchable(dispatchable))
        if table is not None:
            owner = "" if dispatchable is not None else \
                f" of {names.dispatchable(table.dispatchable)}"
            parts.append(names.table(table) + owner)
        if message_id == "DML_DESCRIPTOR_HEAP_NOT_SET" and table is not None and \
                cmd_list is not None:
            have = ", ".join(names.heap(h) for h in cmd_list.heaps)
            rest = (f"the binding table points into {names.heap(table.heap)}, but "
                    + (f"the command list has {have} set" if have else
                       "no descriptor heap is set on the command list")
                    + "; call ID3D12GraphicsCommandList::SetDescriptorHeaps with the binding "
                      "table's heap before RecordDispatch")
        context = ", ".join(parts)
        self.emit(message_id, f"{method}: {context}: {rest}" if context else f"{method}: {rest}",
                  dml=device)

    def dml_error(self, *, device, method, message, hresult):
        """An HRESULT method of a debug DirectML device failed (the caller gets the raise)."""
        if device.debug:
            self.emit("DML_INVALID_ARGUMENT", f"{message} ({hresult_name(hresult)})", dml=device)

    def list_error(self, *, cmd_list, message, message_id):
        if not self.d3d_on:
            return
        method, _, rest = message.partition(": ")
        self.emit(message_id, f"{method}: {names.obj(cmd_list, 'command list')}: {rest}")

    def queue_misuse(self, *, message, message_id):
        if self.d3d_on:
            self.emit(message_id, message)

    def device_removed(self, *, reason, message, device=None):
        hr = hresult_name(reason)
        if device is not None:  # a DirectML device
            if device.debug or self.d3d_on:
                self.emit("DEVICE_REMOVAL_PROCESS_AT_FAULT",
                          f"{message} -> DirectML device removal has been triggered ({hr}): "
                          f"IDMLDevice::GetDeviceRemovedReason returns {hr} from now on for "
                          f"{names.obj(device, 'DirectML device')}; the ID3D12Device is not "
                          "removed.", dml=device)
        elif self.d3d_on or self.any_dml_debug():
            self.emit("DEVICE_REMOVAL_PROCESS_AT_FAULT",
                      f"{message} -> device removal has been triggered ({hr}): "
                      f"GetDeviceRemovedReason returns {hr} from now on for "
                      f"{names.obj(self.device, 'ID3D12Device')} and every DirectML device "
                      "created on it.")

    def record_dispatch(self, *, cmd_list, record, table):
        self.tracker.recorded(record, table)

    def resource_created(self, *, buffer):
        self.tracker.created(buffer)

    # ---- execution and synchronisation ---------------------------------------------------
    def execute_list(self, *, queue, cmd_list, first):
        self.tracker.execute_list(queue, cmd_list, first)

    def queue_signal(self, *, queue, fence, value):
        self.tracker.queue_signal(queue, fence, value)

    def queue_wait(self, *, queue, fence, value):
        self.tracker.queue_wait(queue, fence, value)

    def fence_wait(self, *, fence, value):
        self.tracker.cpu_waited(fence)

    def map(self, *, buffer, read_range=None):
        if self.d3d_on:
            self.tracker.cpu_access(buffer, read_range, write=False)

    def unmap(self, *, buffer, written_range=None):
        if self.d3d_on:
            self.tracker.cpu_access(buffer, written_range, write=True)


def install(device) -> DebugLayer:
    """The debug layer of core ``device``, installing it on first use."""
    layer = getattr(device, "debug_layer", None)
    if layer is None:
        layer = device.debug_layer = DebugLayer(device)
        device.observers.append(layer)
    return layer

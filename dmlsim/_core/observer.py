"""Observers of the runtime: the debug layer (and tests) watch a device through these.

:class:`Observer` has one no-op method per event; an observer overrides the ones it needs.
A device keeps its observers in an :class:`Observers` list, whose methods of the same names
call every observer in turn, so the runtime says ``dev.observers.map(buffer=b)`` and a
misspelt event is an AttributeError, not a silently ignored string. With no observer
attached (no debug layer) the runtime's ``if dev.observers:`` guards cost one truth test.
"""
from __future__ import annotations


class Observer:
    """Events of one D3D12 device. Keyword arguments only; the defaults do nothing."""

    # ---- DirectML ---------------------------------------------------------------------------
    def dml_debug_device(self, *, device) -> None:
        """A DirectML device with DML_CREATE_DEVICE_FLAG_DEBUG was created on this device."""

    def dml_misuse(self, *, method, message, hresult, device, message_id, table=None,
                   cmd_list=None, dispatchable=None) -> None:
        """A void DirectML method was misused (``message_id``: a debug catalogue name)."""

    def dml_error(self, *, device, method, message, hresult) -> None:
        """An HRESULT method of a DirectML device failed."""

    def record_dispatch(self, *, cmd_list, record, table) -> None:
        """IDMLCommandRecorder::RecordDispatch appended ``record``."""

    # ---- D3D12 recording ---------------------------------------------------------------------
    def resource_created(self, *, buffer) -> None:
        """A committed buffer was created."""

    def list_error(self, *, cmd_list, message, message_id) -> None:
        """A command-list recording error (sticky; Close fails)."""

    def queue_misuse(self, *, message, message_id) -> None:
        """ExecuteCommandLists was called with a list it cannot run."""

    # ---- execution and synchronisation --------------------------------------------------------
    def execute_list(self, *, queue, cmd_list, first) -> None:
        """``queue`` is about to run ``cmd_list`` (``first``: of its ExecuteCommandLists call)."""

    def queue_signal(self, *, queue, fence, value) -> None:
        """``queue`` processes a Signal."""

    def queue_wait(self, *, queue, fence, value) -> None:
        """``queue`` passes a Wait."""

    def fence_wait(self, *, fence, value) -> None:
        """The CPU observed ``fence`` at ``value`` (GetCompletedValue, a wait)."""

    def map(self, *, buffer, read_range) -> None:
        """ID3D12Resource::Map of an UPLOAD/READBACK buffer."""

    def unmap(self, *, buffer, written_range) -> None:
        """ID3D12Resource::Unmap."""

    def device_removed(self, *, reason, message, device=None) -> None:
        """The D3D12 device (``device`` None) or a DirectML device was removed."""


EVENTS = tuple(n for n, v in vars(Observer).items() if callable(v) and not n.startswith("_"))


class Observers(list):
    """The observers of one device; ``observers.event(**info)`` calls each one's ``event``."""


def _fan_out(name):
    def call(self, **info):
        for obs in self:
            getattr(obs, name)(**info)
    call.__name__ = name
    call.__doc__ = getattr(Observer, name).__doc__
    return call


for _name in EVENTS:
    setattr(Observers, _name, _fan_out(_name))

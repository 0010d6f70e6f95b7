"""HRESULT codes and the exception that carries them."""
from __future__ import annotations

from typing import NoReturn

S_OK = 0
S_FALSE = 1


def _h(v: int) -> int:
    return v & 0xFFFFFFFF


E_NOTIMPL = _h(0x80004001)
E_NOINTERFACE = _h(0x80004002)
E_POINTER = _h(0x80004003)
E_FAIL = _h(0x80004005)
E_OUTOFMEMORY = _h(0x8007000E)
E_INVALIDARG = _h(0x80070057)
DXGI_ERROR_INVALID_CALL = _h(0x887A0001)
DXGI_ERROR_NOT_FOUND = _h(0x887A0002)
DXGI_ERROR_DEVICE_REMOVED = _h(0x887A0005)
DXGI_ERROR_DEVICE_HUNG = _h(0x887A0006)
DXGI_ERROR_DEVICE_RESET = _h(0x887A0007)
DXGI_ERROR_UNSUPPORTED = _h(0x887A0004)
DXGI_ERROR_MORE_DATA = _h(0x887A0003)
DXGI_ERROR_DRIVER_INTERNAL_ERROR = _h(0x887A0020)

NAMES = {v: k for k, v in dict(globals()).items()
         if k.startswith(("S_", "E_", "DXGI_ERROR_")) and isinstance(v, int)}


def SUCCEEDED(hr: int) -> bool:
    """True when ``hr`` is a success code (the sign bit is clear), as the C macro."""
    return (int(hr) & 0x80000000) == 0


def FAILED(hr: int) -> bool:
    """True when ``hr`` is a failure code, as the C macro."""
    return not SUCCEEDED(hr)


def hresult_name(hr: int) -> str:
    """The symbolic name of an HRESULT ("E_INVALIDARG"), or its hex form when it has none."""
    hr = _h(int(hr))
    return NAMES.get(hr, f"0x{hr:08X}")


class HResultError(Exception):
    """A failed HRESULT. ``.hresult`` is the code; the message says what was wrong."""

    hresult = E_FAIL

    def __new__(cls, hresult=None, message=""):
        if cls is HResultError and hresult is not None:
            cls = _SUBCLASSES.get(_h(hresult), HResultError)
        return super().__new__(cls)

    def __init__(self, hresult=None, message=""):
        if hresult is not None:
            self.hresult = _h(hresult)
        self.message = message
        super().__init__(f"{message} [{hresult_name(self.hresult)}]" if message
                         else hresult_name(self.hresult))


class InvalidArgError(HResultError, ValueError):
    """E_INVALIDARG: an argument, a desc field or a binding is not what the spec allows."""

    hresult = E_INVALIDARG


class NotImplementedHResult(HResultError, NotImplementedError):
    """E_NOTIMPL: something DirectML has that dmlsim does not implement (the message names it)."""

    hresult = E_NOTIMPL


class DeviceRemovedError(HResultError):
    """DXGI_ERROR_DEVICE_REMOVED: the device was removed (GetDeviceRemovedReason says why)."""

    hresult = DXGI_ERROR_DEVICE_REMOVED


class NoInterfaceError(HResultError, TypeError):
    """E_NOINTERFACE: QueryInterface for an interface the object does not implement."""

    hresult = E_NOINTERFACE


_SUBCLASSES = {E_INVALIDARG: InvalidArgError, E_NOTIMPL: NotImplementedHResult,
               DXGI_ERROR_DEVICE_REMOVED: DeviceRemovedError, E_NOINTERFACE: NoInterfaceError}


FAULT = "EXECUTION_FAULT"  # the message_id of what faults when work executes (device removal)


class Misuse(HResultError):
    """The one exception the core raises: a failed HRESULT with the debug layer's catalogue
    name of the message (``message_id``). The shells' ``guard`` decides what it becomes: the
    method's HRESULT, a device removal (void methods, faults at execution) or a sticky
    recording error, and a debug-layer message. An instance is also the HResultError subclass
    of its code (a Misuse of E_INVALIDARG is an InvalidArgError)."""

    message_id = None

    def __new__(cls, hresult=None, message="", message_id=None):
        if cls is Misuse and hresult is not None:
            cls = _MISUSES.get(_h(hresult), Misuse)
        return Exception.__new__(cls)

    def __init__(self, hresult=None, message="", message_id=None):
        super().__init__(hresult, message)
        if message_id is not None:
            self.message_id = message_id


_MISUSES = {code: type(sub.__name__.replace("Error", "").replace("HResult", "") + "Misuse",
                       (Misuse, sub), {"__module__": __name__})
            for code, sub in _SUBCLASSES.items()}


def fail(hresult: int, message: str, message_id: str | None = None) -> NoReturn:
    """Raise the Misuse for ``hresult`` with ``message`` (and the debug catalogue's
    ``message_id``, when it has one)."""
    raise Misuse(hresult, message, message_id)

"""IUnknown-style behaviour shared by every interface shell."""
from __future__ import annotations

from typing import Any

from .._core.hresult import E_NOINTERFACE, E_INVALIDARG, S_OK, fail


def seq_arg(method: str, args: tuple, what: str = "array"):
    """C's (count, pointer) pair as one Python sequence; a count, if given, is checked."""
    if len(args) == 1:
        seq = args[0]
        return [] if seq is None else (list(seq) if isinstance(seq, (list, tuple)) else [seq])
    if len(args) == 2:
        count, seq = args
        seq = [] if seq is None else (list(seq) if isinstance(seq, (list, tuple)) else [seq])
        if int(count) != len(seq):
            fail(E_INVALIDARG, f"{method}: the count is {count} but the {what} has {len(seq)} "
                               "entries")
        return seq
    if not args:
        return []
    fail(E_INVALIDARG, f"{method}: expected (count, {what}) or ({what}), got {len(args)} "
                       "arguments")


def adopt(device_core, shell):
    """Note ``shell`` among the live children of a core D3D12 device (weakly: for the debug
    layer's leak reports) and return it."""
    device_core.children.add(shell)
    return shell


class IUnknown:
    """Base of every interface shell: QueryInterface, AddRef, Release."""

    _interfaces: tuple = ()

    def QueryInterface(self, interface):
        """Return this object as ``interface`` (a class) if it implements it; E_NOINTERFACE
        otherwise. Mirrors ``QueryInterface(IID_PPV_ARGS(&p))``."""
        if isinstance(interface, type) and isinstance(self, interface):
            return self
        for iface, factory in self._extra_interfaces():
            if interface is iface:
                return factory()
        fail(E_NOINTERFACE, f"{type(self).__name__}::QueryInterface: the object does not "
                            f"implement {getattr(interface, '__name__', interface)}")

    def _extra_interfaces(self):
        return ()

    def As(self, interface):
        """ComPtr::As: the same as QueryInterface."""
        return self.QueryInterface(interface)

    def AddRef(self) -> int:
        self._refs = getattr(self, "_refs", 1) + 1
        return self._refs

    def Release(self) -> int:
        self._refs = getattr(self, "_refs", 1) - 1
        return self._refs


class NamedObject(IUnknown):
    """SetName / private data, shared by D3D12 and DirectML objects (``_core`` holds .name)."""

    _core: Any
    _live_message: str | None = None  # the leak-report message of this kind of object

    def SetName(self, Name):
        self._core.name = str(Name)
        return S_OK

    def GetName(self) -> str:
        """dmlsim addition: the name given with SetName."""
        return self._core.name

    def SetPrivateData(self, guid, data, *rest):
        store = self.__dict__.setdefault("_private", {})
        if rest:  # C form: (guid, dataSize, data)
            size, data = data, rest[0]
            data = bytes(data)[:int(size)]
        if data is None:
            store.pop(str(guid), None)
        else:
            store[str(guid)] = bytes(data)
        return S_OK

    def SetPrivateDataInterface(self, guid, unknown):
        self.__dict__.setdefault("_private", {})[str(guid)] = unknown
        return S_OK

    def GetPrivateData(self, guid):
        """Returns the bytes stored with SetPrivateData (DXGI_ERROR_NOT_FOUND if none)."""
        from .._core.hresult import DXGI_ERROR_NOT_FOUND
        store = self.__dict__.get("_private", {})
        if str(guid) not in store:
            fail(DXGI_ERROR_NOT_FOUND, f"{type(self).__name__}::GetPrivateData: no data for {guid}")
        return store[str(guid)]

    def __repr__(self):
        name = getattr(self._core, "name", "")
        return f"<{type(self).__name__}{' ' + repr(name) if name else ''}>"

"""IUnknown-style behaviour shared by every interface shell, and the guard every public entry
point runs under.

``guard`` (applied to every public method of every shell by ``IUnknown.__init_subclass__``,
and to the public free functions with ``@entry``) holds the object model's lock
(``_core.sync``: D3D12 queues, fences and devices are free-threaded) and turns any exception
that is not an HResultError into E_INVALIDARG (E_POINTER where a required argument is None,
E_OUTOFMEMORY for a MemoryError) naming the method and the arguments, so that nothing else
escapes a public call. In a void method (one whose C form returns nothing: command-list
recording, ExecuteCommandLists, Bind*, RecordDispatch, descriptor creation, Unmap) a failure
cannot be returned: outside strict mode it becomes a recording error (command lists, reported
at Close) or device removal with the message as the reason.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar, cast

from .._core import config, sync
from .._core.hresult import (DXGI_ERROR_DEVICE_REMOVED, DXGI_ERROR_NOT_FOUND, E_INVALIDARG,
                             E_NOINTERFACE,
                             E_OUTOFMEMORY, E_POINTER, S_OK, HResultError, fail)

_NEVER_VOID = frozenset({"QueryInterface", "As", "AddRef", "Release", "SetName", "GetName",
                         "SetPrivateData", "SetPrivateDataInterface", "GetPrivateData",
                         "Close", "Reset", "GetType", "GetDevice"})


def _describe(args, kwargs) -> str:
    parts = [_short(a) for a in args] + [f"{k}={_short(v)}" for k, v in kwargs.items()]
    return ", ".join(parts) or "none"


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _converted(method: str, exc: BaseException, args, kwargs) -> HResultError:
    if isinstance(exc, MemoryError):
        return HResultError(E_OUTOFMEMORY, f"{method}: out of memory ({exc})")
    if isinstance(exc, (AttributeError, TypeError)) and "'NoneType'" in str(exc) and \
            any(a is None for a in list(args) + list(kwargs.values())):
        return HResultError(E_POINTER, f"{method}: a required argument is NULL; arguments: "
                                       f"{_describe(args, kwargs)}")
    return HResultError(E_INVALIDARG, f"{method}: invalid argument ({type(exc).__name__}: "
                                      f"{exc}); arguments: {_describe(args, kwargs)}")


FnT = TypeVar("FnT", bound=Callable[..., Any])


def guard(method: str, fn: FnT, void: bool = False, bound: bool = True,
          reported: bool = False) -> FnT:
    """``fn`` under the lock, with only HResultErrors escaping (see the module docstring): the
    one place where a core Misuse becomes what the caller sees. A void method hands it to its
    object's ``_void_failure`` (device removal, a sticky recording error; a raise in strict
    mode); a ``reported`` HRESULT method also tells its object's ``_report_failure`` (the
    DirectML debug layer prints failed HRESULT calls) before the error is raised."""
    @functools.wraps(fn)
    def entry(*args, **kwargs):
        with sync.LOCK:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 -- the point: nothing else escapes
                if getattr(exc, "passes_guard", False):  # D3D12DebugBreak: break on severity
                    raise
                err = exc if isinstance(exc, HResultError) else \
                    _converted(method, exc, args[1:] if bound else args, kwargs)
                if void:
                    if err.hresult != DXGI_ERROR_DEVICE_REMOVED or config.settings.strict:
                        args[0]._void_failure(method, err, args[1:], kwargs)
                    return None
                if reported:
                    args[0]._report_failure(method, err)
                if err is exc:
                    raise
                raise err from None
    setattr(entry, "__dmlsim_guarded__", True)
    return cast(FnT, entry)


def entry(name: str) -> Callable[[FnT], FnT]:
    """Decorator for public free functions (D3D12CreateDevice, WaitForSingleObject, ...)."""
    def wrap(fn: FnT) -> FnT:
        return guard(name, fn, bound=False)
    return wrap


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
    _void_methods: frozenset | str = frozenset()  # "*": every method outside _NEVER_VOID
    _reported_methods: frozenset = frozenset()  # failures also go to _report_failure

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name, fn in list(vars(cls).items()):
            if name[:1].isupper() and callable(fn) and not isinstance(fn, type) and \
                    not getattr(fn, "__dmlsim_guarded__", False):
                void = name in cls._void_methods or (cls._void_methods == "*" and
                                                    name not in _NEVER_VOID)
                setattr(cls, name, guard(f"{cls.__name__}::{name}", fn, void,
                                         reported=name in cls._reported_methods))

    def _void_failure(self, method: str, err: HResultError, args=(), kwargs=None) -> None:
        """A void method failed: remove the device, with the reason (strict mode: raise)."""
        if config.settings.strict:
            raise err
        core = getattr(self, "_core", None)
        device = core if hasattr(core, "remove") else getattr(core, "device", None)
        if device is not None and hasattr(device, "remove"):
            device.remove(err.hresult, err.message or str(err))
            return
        raise err

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
        store = self.__dict__.get("_private", {})
        if str(guid) not in store:
            fail(DXGI_ERROR_NOT_FOUND, f"{type(self).__name__}::GetPrivateData: no data for {guid}")
        return store[str(guid)]

    def __repr__(self):
        name = getattr(self._core, "name", "")
        return f"<{type(self).__name__}{' ' + repr(name) if name else ''}>"

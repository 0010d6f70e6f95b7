"""The Win32 pieces DirectML samples use: events and waits."""
from __future__ import annotations

from typing import Any

from .._core import queue as Q
from .._core.hresult import S_OK
from .com import entry

INFINITE = Q.INFINITE
WAIT_OBJECT_0 = 0
WAIT_TIMEOUT = 0x102
WAIT_FAILED = 0xFFFFFFFF


class HANDLE:
    """An event handle returned by CreateEvent."""

    def __init__(self, core: Q.Event):
        self._core = core

    def __repr__(self):
        return f"<HANDLE event {'signaled' if self._core.flag else 'nonsignaled'}>"


@entry("CreateEvent")
def CreateEvent(lpEventAttributes: Any = None, bManualReset: bool = True,
                bInitialState: bool = False, lpName: str | None = None) -> HANDLE:
    """CreateEvent(None, True, False, None); every argument is optional."""
    return HANDLE(Q.Event(bool(bManualReset), bool(bInitialState)))


CreateEventW = CreateEventA = CreateEvent


@entry("SetEvent")
def SetEvent(hEvent: HANDLE) -> bool:
    hEvent._core.set()
    return True


@entry("ResetEvent")
def ResetEvent(hEvent: HANDLE) -> bool:
    hEvent._core.reset()
    return True


@entry("WaitForSingleObject")
def WaitForSingleObject(hHandle: HANDLE, dwMilliseconds: int = INFINITE) -> int:
    """WAIT_OBJECT_0 once the event is set (fence completions set it), WAIT_TIMEOUT after
    ``dwMilliseconds``."""
    ev = hHandle._core
    if any(f.device.removed for f, _ in ev.waits):  # removal completes every fence wait
        ev.set()
    if not ev.flag:
        for fence, value in list(ev.waits):
            if fence.wait(value, int(dwMilliseconds)):
                fence.completed_value()
            if ev.flag:
                break
    if not ev.flag:
        return WAIT_TIMEOUT
    for f, v in ev.waits:  # debug layer: the CPU has now waited for this fence value
        if f.device.observers and f.completed >= v:
            f.device.observers.fence_wait(fence=f, value=v)
    ev.waits = [(f, v) for f, v in ev.waits if f.completed < v]
    if not ev.manual_reset:
        ev.flag = False
    return WAIT_OBJECT_0


@entry("WaitForSingleObjectEx")
def WaitForSingleObjectEx(hHandle: HANDLE, dwMilliseconds: int = INFINITE,
                          bAlertable: bool = False) -> int:
    return WaitForSingleObject(hHandle, dwMilliseconds)


@entry("CloseHandle")
def CloseHandle(hObject: Any) -> bool:
    return True


__all__ = ["INFINITE", "WAIT_OBJECT_0", "WAIT_TIMEOUT", "WAIT_FAILED", "HANDLE", "CreateEvent",
           "CreateEventW", "CreateEventA", "SetEvent", "ResetEvent", "WaitForSingleObject",
           "WaitForSingleObjectEx", "CloseHandle", "S_OK"]

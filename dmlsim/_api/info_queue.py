"""d3d12sdklayers.h: ID3D12InfoQueue(1), ID3D12DebugDevice, D3D12_MESSAGE and friends.

``d3d.QueryInterface(ID3D12InfoQueue)`` works on a device created after
``D3D12GetDebugInterface().EnableDebugLayer()`` (E_NOINTERFACE otherwise, as on Windows) and
returns one info queue per device. Messages are D3D12_MESSAGE structs whose ``pDescription`` is
a str. ``SetBreakOnSeverity(D3D12_MESSAGE_SEVERITY_ERROR, True)`` makes the call that produces
such a message raise :class:`D3D12DebugBreak` (where Windows would break into the debugger).
Stored messages are also logged on the ``dmlsim.debug`` logger (``SetMuteDebugOutput(True)``
stops that). The message catalogue is docs/debug_messages.md.

Leaks: ``d3d.QueryInterface(ID3D12DebugDevice).ReportLiveDeviceObjects(flags)`` reports every
object of the device that is still alive: reachable from Python (after a garbage collection)
and not Released to a reference count of 0. The same report is produced when the device's own
``Release()`` brings its reference count to 0.
"""
from __future__ import annotations

import enum
import gc

from .._core.hresult import E_INVALIDARG, E_NOINTERFACE, S_OK, fail
from .._debug import catalog as C, install
from .._debug.sink import D3D12DebugBreak, Filter, Message
from .._schema.struct import Struct
from .com import IUnknown

# Built from the debug catalogue (members are also module constants, below).
D3D12_MESSAGE_CATEGORY = enum.IntEnum("D3D12_MESSAGE_CATEGORY", {  # type: ignore[misc]
    "D3D12_MESSAGE_CATEGORY_" + n: i for i, n in enumerate(C.CATEGORIES)})
D3D12_MESSAGE_SEVERITY = enum.IntEnum("D3D12_MESSAGE_SEVERITY", {  # type: ignore[misc]
    "D3D12_MESSAGE_SEVERITY_" + n: i for i, n in enumerate(C.SEVERITIES)})
D3D12_MESSAGE_ID = enum.IntEnum(  # type: ignore[misc]
    "D3D12_MESSAGE_ID", {"D3D12_MESSAGE_ID_" + e.name: e.id for e in C.ENTRIES})


class D3D12_MESSAGE_CALLBACK_FLAGS(enum.IntFlag):
    D3D12_MESSAGE_CALLBACK_FLAG_NONE = 0
    D3D12_MESSAGE_CALLBACK_IGNORE_FILTERS = 0x1


class D3D12_RLDO_FLAGS(enum.IntFlag):
    D3D12_RLDO_NONE = 0
    D3D12_RLDO_SUMMARY = 0x1
    D3D12_RLDO_DETAIL = 0x2
    D3D12_RLDO_IGNORE_INTERNAL = 0x4


D3D12_INFO_QUEUE_DEFAULT_MESSAGE_COUNT_LIMIT = 1024


class D3D12_MESSAGE(Struct):
    _fields_ = (("Category", "D3D12_MESSAGE_CATEGORY"), ("Severity", "D3D12_MESSAGE_SEVERITY"),
                ("ID", "D3D12_MESSAGE_ID"), ("pDescription", "const char*"),
                ("DescriptionByteLength", "SIZE_T"))


class D3D12_INFO_QUEUE_FILTER_DESC(Struct):
    """Lists may be given with or without their counts (checked when given)."""
    _fields_ = (("NumCategories", "UINT"), ("pCategoryList", "D3D12_MESSAGE_CATEGORY*"),
                ("NumSeverities", "UINT"), ("pSeverityList", "D3D12_MESSAGE_SEVERITY*"),
                ("NumIDs", "UINT"), ("pIDList", "D3D12_MESSAGE_ID*"))


class D3D12_INFO_QUEUE_FILTER(Struct):
    _fields_ = (("AllowList", "D3D12_INFO_QUEUE_FILTER_DESC"),
                ("DenyList", "D3D12_INFO_QUEUE_FILTER_DESC"))


def _enum(cls, value):
    try:
        return cls(int(value))
    except ValueError:
        return int(value)


def _lists(desc, method):
    out = []
    for num, lst in (("NumCategories", "pCategoryList"), ("NumSeverities", "pSeverityList"),
                     ("NumIDs", "pIDList")):
        items = list(getattr(desc, lst) or [])
        n = int(getattr(desc, num) or 0)
        if n and n != len(items):
            fail(E_INVALIDARG, f"{method}: {num} is {n} but {lst} has {len(items)} entries")
        out.append(items)
    return tuple(out)


def _core_filter(f, method) -> Filter:
    if f is None:
        return Filter()
    return Filter(_lists(f.AllowList, method), _lists(f.DenyList, method))


def _api_filter(f: Filter) -> D3D12_INFO_QUEUE_FILTER:
    def desc(sets):
        c, s, i = (sorted(x) for x in sets)
        return D3D12_INFO_QUEUE_FILTER_DESC(
            len(c), [_enum(D3D12_MESSAGE_CATEGORY, x) for x in c] or None,
            len(s), [_enum(D3D12_MESSAGE_SEVERITY, x) for x in s] or None,
            len(i), [_enum(D3D12_MESSAGE_ID, x) for x in i] or None)
    return D3D12_INFO_QUEUE_FILTER(desc(f.allow), desc(f.deny))


def _layer_of(device, iface):
    core = device._core
    if not core.debug:
        fail(E_NOINTERFACE, f"ID3D12Device::QueryInterface: {iface} is available only when the "
                            "D3D12 debug layer is enabled: call D3D12GetDebugInterface()."
                            "EnableDebugLayer() before D3D12CreateDevice")
    return install(core)


class ID3D12InfoQueue(IUnknown):
    """The device's message queue (see the module docstring)."""

    @classmethod
    def of(cls, device):
        """The info queue of ``device`` (one per device)."""
        layer = _layer_of(device, "ID3D12InfoQueue")
        q = layer.api.get("info_queue")
        if q is None:
            q = layer.api["info_queue"] = ID3D12InfoQueue1(device, layer)
        return q

    def __init__(self, device, layer):
        self._device, self._layer, self._store = device, layer, layer.store

    # storage ---------------------------------------------------------------------------
    def SetMessageCountLimit(self, MessageCountLimit):
        """-1 (or any value >= 2**63) means no limit."""
        v = int(MessageCountLimit)
        self._store.limit = -1 if v < 0 or v >= 2**63 else v
        return S_OK

    def GetMessageCountLimit(self):
        return self._store.limit if self._store.limit >= 0 else 0xFFFFFFFFFFFFFFFF

    def ClearStoredMessages(self):
        self._store.clear()

    def GetMessage(self, MessageIndex, *_):
        """The D3D12_MESSAGE at ``MessageIndex`` among the messages the retrieval filter
        allows (the C two-call size query collapses into this one call)."""
        msgs = self._store.retrievable()
        i = int(MessageIndex)
        if not 0 <= i < len(msgs):
            fail(E_INVALIDARG, f"ID3D12InfoQueue::GetMessage: MessageIndex {i} is out of range; "
                               f"{len(msgs)} messages pass the retrieval filter")
        m = msgs[i]
        return D3D12_MESSAGE(_enum(D3D12_MESSAGE_CATEGORY, m.category),
                             _enum(D3D12_MESSAGE_SEVERITY, m.severity),
                             _enum(D3D12_MESSAGE_ID, m.id), m.description,
                             len(m.description.encode()) + 1)

    def GetNumMessagesAllowedByStorageFilter(self):
        return self._store.allowed

    def GetNumMessagesDeniedByStorageFilter(self):
        return self._store.denied

    def GetNumStoredMessages(self):
        return len(self._store.messages)

    def GetNumStoredMessagesAllowedByRetrievalFilter(self):
        return len(self._store.retrievable())

    def GetNumMessagesDiscardedByMessageCountLimit(self):
        return self._store.discarded

    # filters -----------------------------------------------------------------------------
    def _stack(self, which):
        return self._store.storage if which == "Storage" else self._store.retrieval

    def _add(self, which, pFilter):
        self._stack(which).top.add(_core_filter(pFilter, f"ID3D12InfoQueue::Add{which}"
                                                         "FilterEntries"))
        return S_OK

    def _push(self, which, pFilter):
        self._stack(which).push(_core_filter(pFilter, f"ID3D12InfoQueue::Push{which}Filter"))
        return S_OK

    def AddStorageFilterEntries(self, pFilter):
        """Add the filter's allow/deny entries to the filter on top of the storage stack."""
        return self._add("Storage", pFilter)

    def GetStorageFilter(self, *_):
        return _api_filter(self._store.storage.top)

    def ClearStorageFilter(self):
        self._store.storage.stack[-1] = Filter()

    def PushEmptyStorageFilter(self):
        return self._push("Storage", None)

    def PushCopyOfStorageFilter(self):
        self._store.storage.push(self._store.storage.top.copy())
        return S_OK

    def PushStorageFilter(self, pFilter):
        """Push ``pFilter``; only the filter on top of the stack is in effect."""
        return self._push("Storage", pFilter)

    def PopStorageFilter(self):
        self._store.storage.pop()

    def GetStorageFilterStackSize(self):
        return len(self._store.storage.stack)

    def AddRetrievalFilterEntries(self, pFilter):
        return self._add("Retrieval", pFilter)

    def GetRetrievalFilter(self, *_):
        return _api_filter(self._store.retrieval.top)

    def ClearRetrievalFilter(self):
        self._store.retrieval.stack[-1] = Filter()

    def PushEmptyRetrievalFilter(self):
        return self._push("Retrieval", None)

    def PushCopyOfRetrievalFilter(self):
        self._store.retrieval.push(self._store.retrieval.top.copy())
        return S_OK

    def PushRetrievalFilter(self, pFilter):
        return self._push("Retrieval", pFilter)

    def PopRetrievalFilter(self):
        self._store.retrieval.pop()

    def GetRetrievalFilterStackSize(self):
        return len(self._store.retrieval.stack)

    # messages, breaks, output --------------------------------------------------------------
    def AddMessage(self, Category, Severity, ID, pDescription):
        self._store.add(Message(int(Category), int(Severity), int(ID), str(pDescription)))
        return S_OK

    def AddApplicationMessage(self, Severity, pDescription):
        return self.AddMessage(C.APPLICATION_DEFINED, Severity, 1, pDescription)

    def _set_break(self, k, key, bEnable):
        self._store.break_on[k][int(key)] = bool(bEnable)
        return S_OK

    def SetBreakOnCategory(self, Category, bEnable):
        return self._set_break(0, Category, bEnable)

    def SetBreakOnSeverity(self, Severity, bEnable):
        """While set, producing a stored message of ``Severity`` raises D3D12DebugBreak from
        the call that produced it."""
        return self._set_break(1, Severity, bEnable)

    def SetBreakOnID(self, ID, bEnable):
        return self._set_break(2, ID, bEnable)

    def GetBreakOnCategory(self, Category):
        return self._store.break_on[0].get(int(Category), False)

    def GetBreakOnSeverity(self, Severity):
        return self._store.break_on[1].get(int(Severity), False)

    def GetBreakOnID(self, ID):
        return self._store.break_on[2].get(int(ID), False)

    def SetMuteDebugOutput(self, bMute):
        """Stop (or resume) logging messages on ``dmlsim.debug``; they are still stored."""
        self._store.mute_output = bool(bMute)

    def GetMuteDebugOutput(self):
        return self._store.mute_output


class ID3D12InfoQueue1(ID3D12InfoQueue):
    def RegisterMessageCallback(self, CallbackFunc, CallbackFilterFlags=0, pContext=None):
        """``CallbackFunc(Category, Severity, ID, pDescription, pContext)`` for every message
        (that passes the storage filter, unless D3D12_MESSAGE_CALLBACK_IGNORE_FILTERS);
        returns the cookie for UnregisterMessageCallback."""
        if not callable(CallbackFunc):
            fail(E_INVALIDARG, "ID3D12InfoQueue1::RegisterMessageCallback: CallbackFunc is not "
                               "callable")
        store = self._store
        cookie = store.next_cookie
        store.next_cookie += 1

        def call(m):
            CallbackFunc(_enum(D3D12_MESSAGE_CATEGORY, m.category),
                         _enum(D3D12_MESSAGE_SEVERITY, m.severity), _enum(D3D12_MESSAGE_ID, m.id),
                         m.description, pContext)
        store.callbacks[cookie] = (call, bool(int(CallbackFilterFlags) & 1))
        return cookie

    def UnregisterMessageCallback(self, CallbackCookie):
        if self._store.callbacks.pop(int(CallbackCookie), None) is None:
            fail(E_INVALIDARG, f"ID3D12InfoQueue1::UnregisterMessageCallback: no callback has "
                               f"cookie {CallbackCookie}")
        return S_OK


# ---- live objects ----------------------------------------------------------------------------

# Message of each kind of live object, in report order (the device first, DirectML objects
# last); each interface class names its kind in ``_live_message``.
_LIVE_ORDER = ("LIVE_DEVICE", "LIVE_COMMANDQUEUE", "LIVE_COMMANDALLOCATOR", "LIVE_COMMANDLIST12",
               "LIVE_RESOURCE", "LIVE_DESCRIPTORHEAP", "LIVE_MONITOREDFENCE", "DML_LIVE_OBJECT")


def live_objects(device) -> list:
    """Interface objects of ``device`` that are reachable and not Released to 0 (the device
    itself included), the device first, DirectML objects last. The core device keeps a weak
    set of the interface objects made from it; debug interfaces are not in it."""
    gc.collect()  # objects kept only by reference cycles are not leaks
    out = [device] + [o for o in list(device._core.children)
                      if getattr(o, "_live_message", None) in _LIVE_ORDER]
    out = [o for o in out if getattr(o, "_refs", 1) > 0]
    return sorted(out, key=lambda o: (_LIVE_ORDER.index(o._live_message), type(o).__name__,
                                      getattr(getattr(o, "_core", None), "name", "") or ""))


def report_live_objects(device, method: str, flags: int, include_device: bool) -> int:
    layer = install(device._core)
    objs = [o for o in live_objects(device) if include_device or o is not device]
    label = f"ID3D12Device '{device._core.name}'" if device._core.name else \
        f"ID3D12Device at 0x{id(device):X}"
    counts: dict = {}
    for o in objs:
        counts[type(o).__name__] = counts.get(type(o).__name__, 0) + 1
    summary, detail = flags & D3D12_RLDO_FLAGS.D3D12_RLDO_SUMMARY, \
        flags & D3D12_RLDO_FLAGS.D3D12_RLDO_DETAIL
    if summary or not detail:
        what = ", ".join(f"{n} {k}" for k, n in counts.items()) or "none"
        layer.emit("LIVE_OBJECT_SUMMARY", f"{method}: {len(objs)} live objects of {label}: {what}")
    if detail:
        for o in objs:
            core = getattr(o, "_core", None)
            name = getattr(core, "name", "") if core is not None else ""
            layer.emit(o._live_message, f"{method}: Live {type(o).__name__} at 0x{id(o):X}, Name: "
                                    f"{repr(name) if name else '(unnamed)'}, Refcount: "
                                    f"{getattr(o, '_refs', 1)}")
    return len(objs)


class ID3D12DebugDevice(IUnknown):
    """The device's debug interface (D3D12 debug layer only)."""

    @classmethod
    def of(cls, device):
        layer = _layer_of(device, "ID3D12DebugDevice")
        d = layer.api.get("debug_device")
        if d is None:
            d = layer.api["debug_device"] = ID3D12DebugDevice(device)
        return d

    def __init__(self, device):
        self._device = device

    def ReportLiveDeviceObjects(self, Flags=D3D12_RLDO_FLAGS.D3D12_RLDO_DETAIL):
        """One LIVE_OBJECT_SUMMARY (D3D12_RLDO_SUMMARY) and one LIVE_* message per live object
        (D3D12_RLDO_DETAIL) to the info queue."""
        report_live_objects(self._device, "ID3D12DebugDevice::ReportLiveDeviceObjects",
                            int(Flags), include_device=True)
        return S_OK


_ENUMS = (D3D12_MESSAGE_CATEGORY, D3D12_MESSAGE_SEVERITY, D3D12_MESSAGE_ID,
          D3D12_MESSAGE_CALLBACK_FLAGS, D3D12_RLDO_FLAGS)
__all__ = [e.__name__ for e in _ENUMS] + [
    "D3D12_MESSAGE", "D3D12_INFO_QUEUE_FILTER_DESC", "D3D12_INFO_QUEUE_FILTER",
    "D3D12_INFO_QUEUE_DEFAULT_MESSAGE_COUNT_LIMIT", "ID3D12InfoQueue", "ID3D12InfoQueue1",
    "ID3D12DebugDevice", "D3D12DebugBreak"]
for _e in _ENUMS:
    for _n, _m in _e.__members__.items():
        globals()[_n] = _m
        __all__.append(_n)

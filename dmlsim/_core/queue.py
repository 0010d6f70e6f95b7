"""Command queues, fences, events and completion markers.

A queue keeps a timeline of :class:`Execute`, :class:`Signal` and :class:`Wait` items. JAX
dispatch is asynchronous, so replaying a list returns before the kernels finish; fences
complete when the arrays the work produced are ready (:class:`Marker`), in submission order.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from . import config, execute, sync
from .hresult import DXGI_ERROR_DEVICE_REMOVED, DXGI_ERROR_INVALID_CALL, E_FAIL, FAULT, \
    HResultError, fail

INFINITE = 0xFFFFFFFF
# Signals pending on a fence before a Signal looks at the oldest's completion (then every
# BACKLOG signals more): the backlog stays bounded without a device query per Signal.
BACKLOG = 32


# ---- queue items ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Execute:
    """ExecuteCommandLists: what the lists held when they were submitted (``Submitted``)."""
    lists: tuple


class Submitted:
    """A closed command list as it was at ExecuteCommandLists: its records, allocator and
    version. The list may be Reset and re-recorded while this waits behind a fence (legal in
    D3D12: the work lives in the first allocator); what runs is what was submitted. Other
    attributes (name, device, heaps for the debug layer) read through to the list."""

    def __init__(self, cl):
        self.list, self.records, self.allocator = cl, cl.records, cl.allocator
        self.version, self.heaps, self._compiled = cl.version, cl.heaps, cl.compiled

    def __getattr__(self, name):
        return getattr(self.list, name)

    @property
    def compiled(self):  # execute.ListState, shared with the list while it is unchanged
        c = self.list.compiled
        return c if c is not None and c.version == self.version else self._compiled

    @compiled.setter
    def compiled(self, value):
        self._compiled = value
        if self.list.version == self.version:
            self.list.compiled = value


@dataclass(frozen=True)
class Signal:
    fence: "Fence"
    value: int


@dataclass(frozen=True)
class Wait:
    fence: "Fence"
    value: int


# ---- completion ----------------------------------------------------------------------------

class Marker:
    """Completion of work submitted before a point: the arrays that work produced.

    Markers chain (``previous``) so that they complete in submission order; the chain is
    walked iteratively, since thousands of executions may be queued before a wait."""

    def __init__(self, memories, previous=None, queue=None):
        self.items = items = []
        seen = set()  # buffers of one Group share one witness: the group's array
        for mem in memories:
            if mem.host:
                items.extend((mem, a) for a in mem.pending_arrays())
                continue
            w = mem.witness()
            if id(w) not in seen:
                seen.add(id(w))
                items.append((mem, w))
        self.previous = previous
        self.queue = queue
        self.done = False

    def _chain(self):
        """The markers not yet known complete, oldest first."""
        chain, m = [], self
        while m is not None and not m.done:
            chain.append(m)
            m = m.previous
        chain.reverse()
        return chain

    def _finish(self):
        self.done, self.items, self.previous = True, [], None

    def complete(self) -> bool:
        if self.done:
            return True
        for m in self._chain():
            for mem, a in m.items:
                if a.is_deleted():  # donated to later work: that work's result is the witness
                    if not mem.host and not mem.witness().is_ready():
                        return False
                elif not a.is_ready():
                    return False
            m._finish()
        return True

    def block(self) -> None:
        for m in self._chain():
            for mem, a in m.items:
                (mem.witness() if a.is_deleted() and not mem.host else a).block_until_ready()
            m._finish()


class _Queued:
    """An allocator's in-flight entry for lists submitted but still held behind a Wait."""

    def __init__(self, queue, item):
        self.queue, self.item = queue, item

    def complete(self) -> bool:
        return not any(i is self.item for i in self.queue.items)


class Fence:
    def __init__(self, device, initial: int):
        self.device = device
        self.completed = int(initial)
        self.pending: list = []  # [(value, Marker)] in submission order
        self.events: list = []   # [(value, Event)]
        self.name = ""
        self.touched = time.monotonic()  # the last CPU Signal (or creation)

    def completed_value(self) -> int:
        while self.pending and self.pending[0][1].complete():
            value, _ = self.pending.pop(0)
            self.completed = max(self.completed, value)
        self._fire()
        return self.completed

    def signal_from_gpu(self, value: int, marker: Marker) -> None:
        self.pending.append((int(value), marker))
        # Completion is looked at where it is observed (GetCompletedValue, waits); here only
        # for waiting events or a long backlog, so that a Signal costs no device queries.
        if self.events or (len(self.pending) > BACKLOG and len(self.pending) % BACKLOG == 0):
            self.completed_value()

    def signal_from_cpu(self, value: int) -> None:
        # Outstanding GPU signals are overtaken: D3D12 fences take the last value written.
        for _, m in self.pending:
            m.block()
        self.pending.clear()
        self.completed = int(value)
        self.touched = time.monotonic()
        self._fire()
        for q in list(self.device.blocked):
            q.pump()
        sync.wake()

    def _fire(self):
        keep = []
        for value, event in self.events:
            if self.completed >= value:
                event.set()
            else:
                keep.append((value, event))
        self.events = keep

    def will_reach(self, value: int, held=frozenset()) -> bool:
        """Whether submitted work will bring the fence to ``value``: a Signal already made, or
        one queued behind a Wait that can itself be met (``held``: queues already assumed
        stuck, so a cycle of Waits counts as never)."""
        return self.completed >= value or any(v >= value for v, _ in self.pending) or \
            any(q.signals_pending(self, value) and q.can_proceed(held | {q})
                for q in self.device.blocked if q not in held)

    def wait(self, value: int, timeout_ms: int) -> bool:
        """Block (the object model's lock released) until the fence reaches ``value``; False at
        the timeout. A removed device completes every wait, as D3D12 does. An INFINITE wait
        for a value nothing submitted will signal is E_FAIL when no other thread could still
        signal it from the CPU; with other threads alive it is E_FAIL once no CPU Signal has
        touched the fence for ``config.settings.wait_timeout`` seconds (``DMLSIM_WAIT_TIMEOUT``,
        default 60) -- a worker waiting while the thread that would signal is joined on it
        fails instead of hanging."""
        deadline = None if timeout_ms == INFINITE else time.monotonic() + timeout_ms / 1000
        began = time.monotonic()
        while self.completed_value() < value:
            if self.device.removed:
                return True
            entry = next((m for v, m in self.pending if v >= value), None)
            if entry is not None and deadline is None:
                entry.block()
                continue
            if deadline is None and not self.will_reach(value) and sync.others_running() and \
                    time.monotonic() - max(began, self.touched) > config.settings.wait_timeout:
                fail(E_FAIL, f"WaitForSingleObject: fence {self.name or ''} is at "
                             f"{self.completed} and nothing submitted will signal {value}; no "
                             f"thread signalled it from the CPU for "
                             f"{config.settings.wait_timeout:g} s (DMLSIM_WAIT_TIMEOUT)")
            if deadline is None and not self.will_reach(value) and not sync.others_running():
                blocked = self.device.blocked
                stuck = [q.name or "a queue" for q in blocked]
                why = (f"; queues {', '.join(stuck)} wait on each other's fences (a Wait cycle)"
                       if stuck and any(q.signals_pending(self, value) for q in blocked)
                       else "")
                if self.device.observers:
                    self.device.observers.queue_misuse(
                        message=f"fence {self.name or ''} can never reach {value}{why}",
                        message_id="FENCE_WAIT_NEVER_SIGNALED")
                fail(E_FAIL, f"WaitForSingleObject: waiting forever: fence {self.name or ''} is at "
                             f"{self.completed} and nothing submitted will signal {value}{why}")
            if deadline is not None and time.monotonic() >= deadline:
                return False
            sync.pause(0.0005)
        return True


def _buffers(value, depth=0):
    """The buffers a record field names: a buffer, a range of one, or containers of them."""
    if depth > 3 or value is None:
        return
    if hasattr(value, "released") and hasattr(value, "memory"):
        yield value
    elif hasattr(value, "buffer") and hasattr(value, "offset"):
        yield value.buffer
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _buffers(v, depth + 1)


def released_use(cl):
    """The first released buffer ``cl`` copies, transitions or binds (descriptors read now), or
    None. Only looked at while the device has released buffers still referenced."""
    for rec in cl.records:
        fields = [getattr(rec, f) for f in getattr(rec, "__dataclass_fields__", ())]
        if hasattr(rec, "descriptors"):
            fields.append(list(rec.descriptors()))
        for b in _buffers(fields):
            if b.released:
                return b
    return None


class Event:
    """A Win32 event object (CreateEvent)."""

    def __init__(self, manual_reset=True, initial=False):
        self.manual_reset = manual_reset
        self.flag = bool(initial)
        self.waits: list = []  # (fence, value)
        self.lock = threading.Lock()

    def set(self):
        self.flag = True

    def reset(self):
        self.flag = False


# ---- queues --------------------------------------------------------------------------------

class Queue:
    """A command queue: Execute/Signal/Wait items replayed in order; a Wait on a fence value
    not yet reached holds the queue (later items stay queued) until the fence gets there
    (meanwhile it is in its device's ``blocked`` set)."""

    def __init__(self, device, list_type: int, priority=0, flags=0):
        self.device = device
        self.type = list_type
        self.priority = priority
        self.flags = flags
        self.name = ""
        self.items: list = []
        self.touched: set = set()
        self.last_marker = None
        self.open_marker = None  # marker of all work so far, if nothing was submitted since

    def submit(self, item) -> None:
        if not self.items and not isinstance(item, Wait):  # nothing queued ahead: run it now
            self._run(item)
            return
        self.items.append(item)
        if isinstance(item, Execute):  # queued behind a Wait: the allocators are in use already
            for cl in item.lists:
                cl.allocator.in_flight.append(_Queued(self, item))
        self.pump()

    def signals_pending(self, fence, value) -> bool:
        return any(isinstance(i, Signal) and i.fence is fence and i.value >= value
                   for i in self.items)

    def can_proceed(self, held) -> bool:
        """Whether this blocked queue's Wait can be met (see Fence.will_reach)."""
        head = self.items[0] if self.items else None
        return not isinstance(head, Wait) or head.fence.will_reach(head.value, held)

    def pump(self) -> None:
        while self.items:
            item = self.items[0]
            if isinstance(item, Wait):
                fence, value = item.fence, item.value
                if fence.completed_value() < value and not any(
                        v >= value for v, _ in fence.pending):
                    self.device.blocked.add(self)
                    return
            self.items.pop(0)
            self.device.blocked.discard(self)
            self._run(item)

    def _run(self, item, traced=False) -> None:
        hook = config.settings.trace
        if hook is not None and not traced:  # dmlsim.trace() is recording: it calls back
            return hook(self, item, lambda it: self._run(it, True))
        if isinstance(item, Execute):
            self._execute(item.lists)
            return
        observers = self.device.observers
        if isinstance(item, Signal):
            if observers:
                observers.queue_signal(queue=self, fence=item.fence, value=item.value)
            self._signal(item.fence, item.value)
        elif observers:
            observers.queue_wait(queue=self, fence=item.fence, value=item.value)

    def _signal(self, fence, value) -> None:
        marker = self.open_marker or Marker(self.touched, self.last_marker, self)
        self.touched, self.last_marker, self.open_marker = set(), marker, None
        fence.signal_from_gpu(value, marker)
        blocked = self.device.blocked
        if blocked:
            for q in list(blocked):
                if q is not self:
                    q.pump()

    def execute_lists(self, lists) -> None:
        """ExecuteCommandLists: check the lists (a Misuse: DXGI_ERROR_INVALID_CALL, the device
        is removed), run them now when nothing is queued ahead, else queue what they hold now
        (``Submitted``)."""
        m = "ID3D12CommandQueue::ExecuteCommandLists"
        for i, cl in enumerate(lists):
            if cl.open:
                fail(DXGI_ERROR_INVALID_CALL, f"{m}: command list {i} is still open; Close it "
                     "before executing it", "EXECUTECOMMANDLISTS_OPENCOMMANDLIST")
            if cl.error is not None:
                fail(DXGI_ERROR_INVALID_CALL, f"{m}: command list {i} failed to close: "
                     f"{cl.error}", "EXECUTECOMMANDLISTS_FAILEDCOMMANDLIST")
            if cl.type != self.type:
                fail(DXGI_ERROR_INVALID_CALL, f"{m}: command list {i} has type {cl.type} but the "
                     f"queue has type {self.type}", "EXECUTECOMMANDLISTS_COMMANDLISTMISMATCH")
        dev = self.device
        if dev.removed:
            return
        if self.items:
            self.submit(Execute(tuple(Submitted(cl) for cl in lists)))
        elif config.settings.trace is not None:
            self._run(Execute(tuple(lists)))
        else:
            self._execute(lists)

    def signal(self, fence, value) -> None:
        """Signal: now when nothing is queued ahead and no trace or observer watches."""
        if self.items or config.settings.trace is not None or self.device.observers:
            self.submit(Signal(fence, value))
        else:
            self._signal(fence, value)

    def _execute(self, lists) -> None:
        dev = self.device
        self.open_marker = None
        executed = []
        for cl in lists:
            if dev.removed:
                break
            freed = released_use(cl) if dev.released else None
            if freed is not None:
                message = (f"{freed.label()} was released (its last reference: Release returned "
                           "0) but the command list still uses it")
                if dev.observers:
                    dev.observers.queue_misuse(message=message,
                                               message_id="OBJECT_DELETED_WHILE_STILL_IN_USE")
                dev.remove(DXGI_ERROR_DEVICE_REMOVED,
                           f"ID3D12CommandQueue::ExecuteCommandLists: {message}")
                break
            observers = dev.observers
            if observers:  # the debug layer walks the list before it runs, record by record
                observers.execute_list(queue=self, cmd_list=cl, first=not executed)
            try:
                execute.execute(cl, self.touched, dev.plans, whole=not observers)
            except HResultError as err:
                self._fault(err)
            executed.append(cl)
        if executed:
            self._mark(executed)

    def _fault(self, err) -> None:
        """Work faulted at execution: the device is removed with the reason."""
        text = err.message if getattr(err, "message_id", None) == FAULT else str(err)
        self.device.remove(DXGI_ERROR_DEVICE_REMOVED,
                           f"ID3D12CommandQueue::ExecuteCommandLists: {text}")

    def _mark(self, executed) -> None:
        # One marker covers all work of this queue so far (queues complete in order), so it
        # replaces this queue's older marker in an allocator and serves the next Signal.
        marker = self.open_marker = Marker(self.touched, self.last_marker, self)
        for cl in executed:
            fl = cl.allocator.in_flight
            if fl and fl[-1].queue is self:
                fl[-1] = marker
            else:
                fl.append(marker)

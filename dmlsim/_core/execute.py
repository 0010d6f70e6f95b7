"""Executing a closed command list: as one program, or record by record, from one set of steps.

Every record says what it does as typed steps (``Record.build``, steps.py). A list executes
either as the jit of all its records' steps traced into one program (the whole-list path), or
as the jit of each record's steps in turn (the per-record path); both build the same steps, so
they compute the same bytes. Barriers, aliasing, in-place writes and overlapping views keep
exactly the meaning of executing the records one by one (which is what a correctly
synchronized GPU computes). A whole-list launch costs one program call; the buffers it writes
are donated, so nothing is copied.

A list's structure is jitted as one program the second time it executes (from any list of the
same structure; the first execution runs record by record, so one-off lists -- uploads,
initializers, most tests -- cost no extra XLA compile); ``DMLSIM_LIST_COMPILE=first`` compiles
at the first execution, ``0`` never. A list whose only work is one record uses that record's
program (the key is the same).

What selects the whole-list plan: the records (fixed once the list is closed;
``CommandList.version`` bumps on Reset); the descriptors each dispatch reads from its heap *at
execution* (a heap's ``version`` bumps with every descriptor written, so unchanged versions
mean unchanged descriptors: an O(1) check; changed descriptors under DESCRIPTORS_VOLATILE
select, or build, another plan). Programs come from the device's plan cache (steps.PlanCache).

Declined, i.e. left to the per-record path: lists with an operator initializer or a
host-to-host copy; executions that would fault (an operator not initialized yet, a removed
DirectML device, an unbound or too small descriptor): the per-record path then executes the
records before the fault and raises it at the faulting record (the queue removes the device
with its message); a program whose tracing raises. The queue also takes the per-record path
while a debug-layer observer is attached (it wants per-record events).

UPLOAD bytes are program arguments, the NumPy view of the heap's bytes, read by jit's transfer
when the program is called (as a GPU reads an UPLOAD heap while the work runs; no DEFAULT
storage ever aliases UPLOAD bytes). Bytes copied to a READBACK buffer are program outputs
queued on that buffer.
"""
from __future__ import annotations

from . import config
from .plancache import PlanCache
from .steps import Builder, Plan

_MISSING = object()
MAX_PLANS_PER_LIST = 64  # volatile descriptors could otherwise grow a list's cache forever


class ListState:
    """What one recording (list version) of a command list needs to execute: the descriptor
    ranges its dispatches read, its plans (whole-list, by descriptors; per record)."""

    __slots__ = ("version", "traceable", "ranges", "range_index", "range_heaps",
                 "dispatch_range", "ops", "op_set", "last_versions", "last_plan", "plans",
                 "records")

    def __init__(self, version):
        self.version = version
        self.traceable = True
        self.ranges: list = []        # unique (heap, first, stop) descriptor ranges, in order
        self.range_index: dict = {}   # (id(heap), first, count) -> index into ranges
        self.range_heaps: tuple = ()  # the distinct heaps of those ranges
        self.dispatch_range: dict = {}  # record index -> index into ranges
        self.ops: list = []           # distinct dispatchables dispatched
        self.op_set: set = set()
        self.last_versions = None     # the heaps' versions when last_plan was selected
        self.last_plan = None
        self.plans: dict = {}         # descriptors -> whole-list Plan (None: declined)
        self.records: dict = {}       # record index -> (descriptors, its one-record Plan)

    def dispatch(self, i, rec) -> None:
        """Note dispatch record ``i`` (DmlDispatch.note)."""
        d = rec.dispatchable
        if not d.compilable:  # an initializer: the per-record path
            self.traceable = False
        key = (id(rec.heap), rec.gpu_index, rec.count)
        k = self.range_index.get(key)
        if k is None:
            k = self.range_index[key] = len(self.ranges)
            self.ranges.append((rec.heap, rec.gpu_index, rec.gpu_index + rec.count))
        self.dispatch_range[i] = k
        if d not in self.op_set:
            self.op_set.add(d)
            self.ops.append(d)


def prepare(cl) -> ListState:
    st = ListState(cl.version)
    for i, rec in enumerate(cl.records):
        rec.note(st, i)
    st.range_heaps = tuple({id(h): h for h, _, _ in st.ranges}.values())
    return st


def execute(cl, touched: set, cache: PlanCache, whole: bool = True) -> None:
    """Execute closed list ``cl``: its memories written join ``touched``. ``whole``: a whole-
    list program may run it (the debug layer asks for records one by one). Raises the Misuse
    of a fault, after the records before it have executed."""
    st = cl.compiled
    if st is None or st.version != cl.version:
        st = cl.compiled = prepare(cl)
    ready = True
    for d in st.ops:
        if not d.initialized or d.device.removed_reason:
            ready = False
            break
    if whole and ready and st.traceable and config.settings.list_compile != "0":
        plan = st.last_plan
        if plan is not None and (plan.fn is not None or plan.key is None) and \
                _unchanged(st):  # as it ran last time: its program is there (or it needs none)
            plan.launch(cache, touched)
            counts = cache.counts
            counts["compiled"] += 1
            counts["again"] += 1
            return
        if _whole(cl, st, cache, touched):
            return
    for i, rec in enumerate(cl.records):
        descs = rec.descriptors() if rec.reads_descriptors else None
        hit = st.records.get(i) if ready else None
        if hit is not None and (descs is None or hit[0] == descs):
            plan = hit[1]
        else:
            b = Builder()
            rec.build(b, descs)
            plan = b.plan() if b.steps or b.after or b.touched else None  # None: nothing to do
            if b.cacheable:
                st.records[i] = (descs, plan)
        if plan is not None:
            plan.launch(cache, touched)


def _unchanged(st) -> bool:
    """Whether the heaps' versions are those the last plan was selected under."""
    for h, v in zip(st.range_heaps, st.last_versions):
        if h.version != v:
            return False
    return True


def _whole(cl, st, cache, touched) -> bool:
    """Run ``cl`` as one program; False when declined (nothing was done)."""
    versions = tuple(h.version for h in st.range_heaps)
    if versions == st.last_versions:  # selected before, not compiled yet (or declined)
        plan = st.last_plan
    else:
        key = [h.slots[a:b] for h, a, b in st.ranges]
        frozen = tuple(tuple(k) for k in key)
        plan = st.plans.get(frozen, _MISSING)
        if plan is _MISSING:
            if len(st.plans) >= MAX_PLANS_PER_LIST:
                st.plans.clear()
            plan = st.plans[frozen] = _build(cl, st, key, cache)
        st.last_versions, st.last_plan = versions, plan
    if plan is None:
        return False
    if plan.fn is None and plan.key is not None:
        if not plan.eager and not cl.compile_first and cache.get(plan.key) is None and \
                config.settings.list_compile != "first" and cache.first_time(plan.key):
            return False  # executed once: record by record, compiled if it comes again
        try:
            plan.launch(cache, touched)
        except Exception:  # tracing failed before anything ran: the per-record path decides
            st.plans = {k: (None if p is plan else p) for k, p in st.plans.items()}
            st.last_plan = None
            return False
    else:  # a plan of these descriptors compiled before (another selection in between)
        plan.launch(cache, touched)
    cache.counts["compiled"] += 1
    return True


def _build(cl, st, key, cache) -> Plan | None:
    """The whole-list plan of ``cl`` under descriptors ``key``, or None (declined)."""
    b = Builder(whole=True)
    working = 0  # records with steps
    for i, rec in enumerate(cl.records):
        k = st.dispatch_range.get(i)
        n = len(b.steps)
        try:
            if not rec.build(b, None if k is None else key[k]):
                return None
        except Exception:  # a fault: the per-record path executes up to it and reports it
            return None
        working += len(b.steps) > n
    plan = b.plan()
    plan.eager = working <= 1  # its program is that record's own: nothing extra to compile
    return plan

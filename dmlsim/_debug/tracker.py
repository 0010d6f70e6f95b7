"""Execution-time checks: the debug layer walks each command list just before the queue
executes it (the queue then runs it record by record), in submission order.

What it keeps, all keyed weakly so that nothing is kept alive:
- resource states within the current ExecuteCommandLists call (COMMON buffers are promoted on
  first use and decay back afterwards, as D3D12 buffers do);
- a window of dispatch accesses per buffer since the last barrier on it (UAV hazards): lists
  of one ExecuteCommandLists call are not ordered with each other; separate calls on one queue
  are; work on another queue is ordered only through a fence Wait (or a CPU wait) on a value
  signaled after it (vector clocks per queue and for the CPU);
- the bytes ever written per DEFAULT buffer (reads of never-written bytes);
- the GPU accesses to UPLOAD/READBACK buffers the CPU has not waited for (Map/Unmap checks);
- the persistent resource each compiled operator's initializer wrote.
"""
from __future__ import annotations

from weakref import WeakKeyDictionary

from .._core import binding as B
from .._core.commands import ALIASING, TRANSITION, UAV, Barrier, CopyRegion, SetHeaps
from .._core.dml import DmlDispatch
from .._schema.d3d12_enums import D3D12_HEAP_TYPE, D3D12_RESOURCE_STATES as S
from . import names as N

HEAP_DEFAULT = D3D12_HEAP_TYPE.D3D12_HEAP_TYPE_DEFAULT
STATE_COMMON = S.D3D12_RESOURCE_STATE_COMMON
STATE_COPY_DEST = S.D3D12_RESOURCE_STATE_COPY_DEST
STATE_COPY_SOURCE = S.D3D12_RESOURCE_STATE_COPY_SOURCE
STATE_UNORDERED_ACCESS = S.D3D12_RESOURCE_STATE_UNORDERED_ACCESS

ECL = "ID3D12CommandQueue::ExecuteCommandLists"
_MAX = 256  # entries kept per buffer / fence


class _Access:
    __slots__ = ("lo", "hi", "write", "q", "seq", "where", "label", "fenced")

    def __init__(self, lo, hi, write, q, seq, where, label):
        self.lo, self.hi, self.write, self.q, self.seq = lo, hi, write, q, seq
        self.where, self.label, self.fenced = where, label, False


class Tracker:
    def __init__(self, layer):
        self.layer = layer
        self.qids = WeakKeyDictionary()     # queue -> small int
        self.seq: dict = {}                 # qid -> number of its last ExecuteCommandLists
        self.clock: dict = {}               # qid -> {qid: seq known complete before its work}
        self.cpu: dict = {}                 # {qid: seq} the CPU has waited for
        self.signals = WeakKeyDictionary()  # fence -> [(value, snapshot of the clock)]
        self.written = WeakKeyDictionary()  # DEFAULT buffer created under the layer -> Ranges
        self.reported = WeakKeyDictionary()  # buffer -> Ranges reported as never written
        self.uav = WeakKeyDictionary()      # buffer -> [_Access] (dispatch accesses)
        self.host = WeakKeyDictionary()     # UPLOAD/READBACK buffer -> [_Access] (GPU accesses)
        self.persistent = WeakKeyDictionary()  # CompiledOperator -> (buffer, offset, size)
        self.tables = WeakKeyDictionary()   # DmlDispatch record -> its binding table's label
        self.states = WeakKeyDictionary()   # buffer -> (state, promoted) in this ECL call

    # ---- bookkeeping events ---------------------------------------------------------------
    def created(self, buf):
        if buf.heap_type == HEAP_DEFAULT:
            self.written[buf] = N.Ranges()

    def recorded(self, record, table):
        # A label, not the table: tables may be released right after RecordDispatch.
        self.tables[record] = N.table(table)

    def _qid(self, queue) -> int:
        q = self.qids.get(queue)
        if q is None:
            q = self.qids[queue] = len(self.seq) + 1
            self.seq[q] = 0
            self.clock[q] = {}
        return q

    @staticmethod
    def _merge(into: dict, snap: dict) -> None:
        for k, v in snap.items():
            if into.get(k, 0) < v:
                into[k] = v

    def queue_signal(self, queue, fence, value):
        q = self._qid(queue)
        snap = dict(self.clock[q])
        snap[q] = self.seq[q]
        sigs = self.signals.setdefault(fence, [])
        sigs.append((int(value), snap))
        del sigs[:-_MAX]

    def queue_wait(self, queue, fence, value):
        """A queue Wait went through: the fence is at ``value``, or the first GPU signal that
        gets it there is already submitted (the queue waits for that one)."""
        q = self._qid(queue)
        sigs = self.signals.get(fence, ())
        above = [v for v, _ in sigs if v >= int(value)]
        target = max(fence.completed, min(above)) if above else fence.completed
        for v, snap in sigs:
            if v <= target:
                self._merge(self.clock[q], snap)

    def cpu_waited(self, fence):
        """The CPU saw the fence's completed value: every GPU signal up to it is done."""
        for v, snap in self.signals.get(fence, ()):
            if v <= fence.completed:
                self._merge(self.cpu, snap)

    def _done(self, a: _Access, q: int, seq: int) -> bool:
        """Is access ``a`` ordered before the current work (queue ``q``, call ``seq``)?"""
        if a.q == q:
            return a.fenced or a.seq < seq
        return self.clock[q].get(a.q, 0) >= a.seq

    # ---- CPU access (Map / Unmap) ---------------------------------------------------------
    def cpu_access(self, buf, rng, write):
        accesses = self.host.get(buf)
        if not accesses:
            return
        lo, hi = (0, buf.width) if rng is None else (int(rng.Begin), int(rng.End))
        keep = []
        for a in accesses:
            if self.cpu.get(a.q, 0) >= a.seq:
                continue
            keep.append(a)
            if lo < a.hi and a.lo < hi and (a.write or write) and lo < hi:
                what = (f"ID3D12Resource::Unmap: the CPU wrote {N.span(buf, lo, hi)} (the "
                        "written range)" if write else
                        f"ID3D12Resource::Map: the CPU may read {N.span(buf, lo, hi)} (the read "
                        "range)")
                self.layer.emit(
                    "CPU_ACCESS_BEFORE_GPU_COMPLETION",
                    f"{what}, but {a.where} {'writes' if a.write else 'reads'} "
                    f"{N.span(buf, a.lo, a.hi)} on the GPU and the CPU has not waited for that "
                    "work: wait for a fence signaled after it (SetEventOnCompletion + "
                    "WaitForSingleObject, or GetCompletedValue) before touching the buffer.")
        self.host[buf] = keep

    # ---- the walk -------------------------------------------------------------------------
    def execute_list(self, queue, cl, first):
        q = self._qid(queue)
        if first:
            self.seq[q] += 1
            self._merge(self.clock[q], self.cpu)
            self.states = WeakKeyDictionary()
        w = _Walk(self, queue, q, self.seq[q], cl)
        for i, rec in enumerate(cl.records):
            check = CHECKS.get(type(rec))  # a kind without a check here: nothing to track
            if check is not None:
                check(w, i, rec)


class _Walk:
    """One command list being walked."""

    def __init__(self, t: Tracker, queue, q, seq, cl):
        self.t, self.q, self.seq, self.cl = t, q, seq, cl
        self.emit = t.layer.emit
        self.d3d_on = t.layer.d3d_on
        self.here = f"{N.obj(queue, 'command queue')}, {N.obj(cl, 'command list')}"
        self.prefix = f"{ECL}: {self.here}"
        self.initialized: set = set()

    # states ---------------------------------------------------------------------------------
    def state_of(self, b):
        return self.t.states.get(b, (b.state, False))

    def need(self, where, b, need, role, report, dml=None):
        cur, promoted = self.state_of(b)
        ok = cur == need if need != STATE_COPY_SOURCE else bool(cur & STATE_COPY_SOURCE)
        if ok:
            return
        if cur == STATE_COMMON and b.heap_type == HEAP_DEFAULT:
            self.t.states[b] = (need, True)  # implicit promotion; decays after the call
            return
        if not report:
            return
        how = " (promoted from COMMON by an earlier command of this ExecuteCommandLists call)" \
            if promoted else ""
        wanted = N.state(need) + (" or a state promotable to it (D3D12_RESOURCE_STATE_COMMON)"
                                  if need == STATE_UNORDERED_ACCESS else "")
        self.emit("INVALID_SUBRESOURCE_STATE",
                  f"{self.prefix}, {where}: {N.buf(b)} ({role}) is in state {N.state(cur)}{how}, "
                  f"but this command needs {wanted}. Transition it with ResourceBarrier first.",
                  dml=dml)

    # synchronisation ------------------------------------------------------------------------
    def fence_accesses(self, b=None):
        targets = [b] if b is not None else list(self.t.uav.keys())
        for buf in targets:
            for a in self.t.uav.get(buf, ()):
                if a.q == self.q:
                    a.fenced = True

    def barrier(self, i, rec: Barrier):
        if rec.kind == TRANSITION and rec.resource is not None:
            b = rec.resource
            cur, promoted = self.state_of(b)
            if cur != rec.before and self.d3d_on:
                how = "promoted from COMMON by an earlier command of this ExecuteCommandLists " \
                      "call" if promoted else "its state at creation or after the last barrier"
                self.emit("RESOURCE_BARRIER_BEFORE_AFTER_MISMATCH",
                          f"{self.prefix}, command {i} (ResourceBarrier): the transition barrier's "
                          f"StateBefore is {N.state(rec.before)}, but {N.buf(b)} is in "
                          f"{N.state(cur)} at that point ({how}). Set StateBefore to "
                          f"{N.state(cur)}.")
            self.t.states[b] = (rec.after, False)
            self.fence_accesses(b)
        elif rec.kind == UAV:
            self.fence_accesses(rec.resource)
        elif rec.kind == ALIASING:
            if rec.resource is None and rec.resource_after is None:
                self.fence_accesses()
            for b in (rec.resource, rec.resource_after):
                if b is not None:
                    self.fence_accesses(b)

    # memory -------------------------------------------------------------------------------
    def read(self, where, b, lo, hi, label, report, dml=None):
        written = self.t.written.get(b)
        if written is None or lo >= hi:
            return
        reported = self.t.reported.setdefault(b, N.Ranges())
        new = [g for gap in written.gaps(lo, hi) for g in reported.gaps(*gap)]
        if not new or not report:
            return
        for g in new:
            reported.add(*g)
        self.emit("READ_OF_UNWRITTEN_MEMORY",
                  f"{self.prefix}, {where} reads {label} = {N.span(b, lo, hi)}, but bytes "
                  f"{N.join_ranges(new)} of {N.buf(b)} were never written (no copy, dispatch or "
                  "initializer wrote them since the resource was created); they read as zeros.",
                  dml=dml)

    def write(self, where, b, lo, hi, initializing=()):
        written = self.t.written.get(b)
        if written is not None:
            written.add(lo, hi)
        for op, (pb, plo, psize) in list(self.t.persistent.items()):
            if pb is b and lo < plo + psize and plo < hi and op not in initializing:
                del self.t.persistent[op]
                if op.device.debug:
                    self.emit("DML_PERSISTENT_RESOURCE_CHANGED",
                              f"{self.prefix}, {where} writes {N.span(b, lo, hi)}, which overlaps "
                              f"the persistent resource of {N.dispatchable(op)} "
                              f"({N.span(b, plo, plo + psize)}): the OWNED_BY_DML data its "
                              "initializer stored there is overwritten.", dml=op.device)

    def host(self, where, b, lo, hi, write):
        if b.heap_type != HEAP_DEFAULT:
            lst = self.t.host.setdefault(b, [])
            lst.append(_Access(lo, hi, write, self.q, self.seq, where, ""))
            del lst[:-_MAX]

    # commands -----------------------------------------------------------------------------
    def set_heaps(self, i, rec: SetHeaps):
        pass  # a missing heap is reported at RecordDispatch

    def copy(self, i, rec: CopyRegion):
        src, dst, n = rec.src, rec.dst, rec.size
        where = f"command {i} (copy of {n} bytes from {N.buf(src)} to {N.buf(dst)})"
        self.need(where, src, STATE_COPY_SOURCE, "the copy source", self.d3d_on)
        self.need(where, dst, STATE_COPY_DEST, "the copy destination", self.d3d_on)
        self.read(where, src, rec.src_offset, rec.src_offset + n, "the copy source", self.d3d_on)
        self.write(where, dst, rec.dst_offset, rec.dst_offset + n)
        full = f"{self.here}, {where}"
        self.host(full, src, rec.src_offset, rec.src_offset + n, False)
        self.host(full, dst, rec.dst_offset, rec.dst_offset + n, True)

    def dispatch(self, i, rec: DmlDispatch):
        d = rec.dispatchable
        dev = d.device
        on = dev.debug
        descs = list(rec.descriptors())
        table = self.t.tables.get(rec)
        where = f"command {i} (RecordDispatch of {N.dispatchable(d)}" + (
            f" with {table})" if table is not None else ")")
        compiled = d.layout.groups is None  # not an operator initializer
        if on:
            self.check_initialization(where, d, compiled)
            if not d.volatile:
                self.check_descriptors(where, d, rec, descs)
            else:
                self.check_aliasing(where, d, descs)
        accesses = accesses_of(d, descs)
        for b in {id(a[0]): a[0] for a in accesses}.values():
            if b.heap_type == HEAP_DEFAULT:
                labels = [a[4] for a in accesses if a[0] is b]
                self.need(where, b, STATE_UNORDERED_ACCESS, "bound as " + " and ".join(
                    dict.fromkeys(labels)), on, dml=dev)
        if compiled and d.layout.persistent_size and on:
            self.check_persistent(where, d, descs)
        self.hazards(where, accesses, on, dev)
        initializing = d.initializes
        for b, lo, hi, write, label in accesses:
            if not write:
                self.read(where, b, lo, hi, label, on, dml=dev)
        for b, lo, hi, write, label in accesses:
            if write:
                self.write(where, b, lo, hi, initializing)
        full = f"{self.here}, {where}"
        for b, lo, hi, write, label in accesses:
            self.host(full, b, lo, hi, write)
        if not compiled:
            self.register_persistent(d, descs)

    def check_initialization(self, where, d, compiled):
        if compiled:
            if not d.initialized and id(d) not in self.initialized:
                self.emit("DML_OPERATOR_NOT_INITIALIZED",
                          f"{self.prefix}, {where}: the compiled operator executes before an "
                          "operator initializer initialized it; record and execute an "
                          "IDMLOperatorInitializer dispatch for it first.", dml=d.device)
            return
        for op in d.initializes:
            if op.initialized or id(op) in self.initialized:
                self.emit("DML_OPERATOR_INITIALIZED_TWICE",
                          f"{self.prefix}, {where}: {N.dispatchable(op)} was already "
                          "initialized; a compiled operator is initialized exactly once.",
                          dml=d.device)
            self.initialized.add(id(op))

    def check_descriptors(self, where, d, rec, descs):
        labels = d.layout.descriptor_labels()
        changed = []
        for k, (old, new) in enumerate(zip(rec.recorded, descs)):
            if old != new:
                what = labels[k] if k < len(labels) else f"descriptor {k}"
                changed.append(f"{what} was {_desc(old)} when recorded and is {_desc(new)} now")
        if changed:
            flag = "an operator initializer" if d.layout.groups is not None else \
                "compiled without DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE"
            self.emit("DML_DESCRIPTORS_CHANGED_AFTER_RECORD",
                      f"{self.prefix}, {where}: the binding table's descriptors changed after "
                      f"RecordDispatch: {'; '.join(changed)}. The dispatchable is {flag}, so "
                      "every binding must be final before RecordDispatch (use another binding "
                      "table or descriptor range per dispatch, or compile with "
                      "DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE).", dml=d.device)

    def check_aliasing(self, where, d, descs):
        lay = d.layout
        hazard = B.hazards(lay, *lay.split(descs))
        if hazard:
            self.emit("DML_ILLEGAL_ALIASING",
                      f"{self.prefix}, {where}: binding hazard at execution (the operator is "
                      f"DESCRIPTORS_VOLATILE, so it is checked here): {hazard}", dml=d.device)

    def check_persistent(self, where, d, descs):
        p = d.layout.split(descs)[3]
        reg = self.t.persistent.get(d)
        if p is None or reg is None:
            return
        b, off, size = reg
        if p.buffer is not b or p.offset != off:
            self.emit("DML_PERSISTENT_RESOURCE_CHANGED",
                      f"{self.prefix}, {where}: the persistent resource bound at execution is "
                      f"{N.span(p.buffer, p.offset, p.offset + p.size)}, but the operator's "
                      f"initializer wrote its OWNED_BY_DML data to {N.span(b, off, off + size)}; "
                      "bind the same buffer, offset and size as at initialization.",
                      dml=d.device)

    def register_persistent(self, d, descs):
        outs = d.layout.split(descs)[1]
        for op, out in zip(d.initializes, outs):
            if out is not None and op.layout.persistent_size:
                self.t.persistent[op] = (out.buffer, out.offset, op.layout.persistent_size)

    def hazards(self, where, accesses, report, dev):
        uav = self.t.uav
        found: dict = {}  # (earlier access, buffer, range, write) -> slot labels of this dispatch
        for b, lo, hi, write, label in accesses:
            for a in uav.get(b, ()):
                if a.hi <= lo or hi <= a.lo or not (a.write or write) or \
                        self.t._done(a, self.q, self.seq):
                    continue
                found.setdefault((id(a), a, b, lo, hi, write), []).append(label)
        for (_, a, b, lo, hi, write), labels in found.items() if report else ():
            olo, ohi = max(lo, a.lo), min(hi, a.hi)
            self.emit(
                "DML_MISSING_UAV_BARRIER",
                f"{self.prefix}, {where} {'writes' if write else 'reads'} {' and '.join(labels)} = "
                f"{N.span(b, lo, hi)}, and {a.where} {'writes' if a.write else 'reads'} "
                f"{a.label} = {N.span(b, a.lo, a.hi)}, with no UAV, aliasing or "
                f"transition barrier on {N.buf(b)} in between: the dispatches may run "
                f"concurrently and race on {N.span(b, olo, ohi)}. Record "
                "ResourceBarrier(CD3DX12_RESOURCE_BARRIER.UAV(...)) between them.",
                dml=dev)
        mine = f"{self.here}, {where}"
        for b, lo, hi, write, label in accesses:
            lst = [a for a in uav.get(b, ()) if self.t.cpu.get(a.q, 0) < a.seq]
            lst.append(_Access(lo, hi, write, self.q, self.seq, mine, label))
            uav[b] = lst[-_MAX:]


CHECKS = {SetHeaps: _Walk.set_heaps, Barrier: _Walk.barrier, CopyRegion: _Walk.copy,
          DmlDispatch: _Walk.dispatch}  # the record kinds the debug layer tracks


def _desc(x) -> str:
    return "unbound" if x is None else N.span(x.buffer, x.offset, x.offset + x.size)


def accesses_of(d, descs):
    """(buffer, lo, hi, write, slot label) for every byte range dispatch ``d`` touches, from
    the descriptors it reads at execution (its layout says what each one is): tensors span
    TotalTensorSizeInBytes from their offset; an initializer writes each stored tensor into
    the persistent resources; the temporary resource counts as written whole."""
    lay = d.layout
    labels = lay.descriptor_labels()
    ins, outs, temp, persistent = lay.split(descs)
    initializer = lay.groups is not None
    out = []
    for i, (s, x) in enumerate(zip(lay.inputs, ins)):
        if s.spec is None:
            continue
        if s.owned and not initializer:  # read from the persistent resource
            if persistent is not None:
                lo = persistent.offset + s.persistent_at
                out.append((persistent.buffer, lo, lo + s.stored.total_bytes, False,
                            f"{labels[i]} (OWNED_BY_DML, in the persistent resource)"))
            continue
        if x is not None:
            n = s.spec.total_bytes if initializer else min(x.size, s.spec.total_bytes)
            out.append((x.buffer, x.offset, x.offset + n, False, labels[i]))
    for k, (s, x) in enumerate(zip(lay.outputs, outs)):
        label = labels[len(lay.inputs) + k]
        if x is None:
            continue
        if initializer:
            out.extend((x.buffer, x.offset + off, x.offset + off + n, True, label)
                       for off, n in s.writes)
        elif s.spec is not None:
            out.append((x.buffer, x.offset, x.offset + min(x.size, s.spec.total_bytes), True,
                        label))
    if temp is not None:  # scratch: read and written, never read before written
        out.append((temp.buffer, temp.offset, temp.offset + temp.size, True,
                    "the temporary resource"))
    return out

"""Whole-command-list compilation: a closed list runs as one jitted XLA program.

A closed list's records become one function over the storages of every buffer it touches:
copies and dispatches in record order, each a pure step from storages to storages. Barriers,
aliasing, in-place writes and overlapping views therefore keep exactly the meaning of
executing the records one by one (which is what a correctly synchronized GPU computes).
Executing the list costs one program launch; the buffers it writes are donated, so nothing
is copied. The program is jitted the second time its structure executes: the first execution
runs record by record, so one-off lists (uploads, initializers, most tests) cost no extra
XLA compile; ``DMLSIM_LIST_COMPILE=first`` compiles at the first execution.

What selects the program:
- the records (fixed once the list is closed; ``CommandList.version`` bumps on Reset);
- the descriptors each dispatch reads from its heap *at execution*: changed descriptors
  (DESCRIPTORS_VOLATILE) select, or build, another program;
- the storage types and lengths of the buffers (``jax.jit`` retraces on those).
Programs are shared by lists of the same structure (the same commands, offsets, sizes and
tensor descs over buffers in the same roles), so a list recorded again every frame compiles
once. A list whose only work is one dispatch uses that compiled operator's own program (no
extra compile).

Host memory: bytes read from an UPLOAD buffer are program arguments, the NumPy view of the
heap's bytes, which jit's transfer reads when the program is called (it copies them, or on
the CPU may alias them until the program has run: as a GPU reads an UPLOAD heap while the
work runs; writing an UPLOAD buffer that submitted work still reads, before its fence, is a
race D3D12 leaves undefined, and no DEFAULT storage ever aliases UPLOAD bytes). Bytes copied
to a READBACK buffer are program outputs queued on that buffer, as on the per-record path.
Transition barriers update the resources' states at execution.

Declined, i.e. left to the per-record path, which is exact by construction: lists with an
operator initializer or a host-to-host copy or a record type unknown here; executions that
would fault (an operator not initialized yet, a removed DirectML device, an unbound or too
small descriptor): the per-record path then executes the records before the fault and
removes the device with the same message; a program whose tracing raises. The queue also
takes the per-record path while a debug-layer observer is attached (it wants per-record
events). ``DMLSIM_LIST_COMPILE=0`` turns whole-list compilation off.
"""
from __future__ import annotations

import functools
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .commands import Barrier, CopyRegion, ExecutionFault, SetHeaps, TRANSITION
from .dml import DmlDispatch, volatile_hazard
from .dtypes import UNSIGNED_OF_SIZE
from .memory import Group, convert, unit
from .views import apply_dispatch

# DMLSIM_LIST_COMPILE: "0" runs every list record by record; "first" compiles a list's
# structure the first time it executes; the default compiles it the second time it executes
# (from any list), so that work executed once (uploads, initializers, tests) costs no extra
# XLA compile.
_MODE = os.environ.get("DMLSIM_LIST_COMPILE", "1")
enabled = _MODE not in ("0", "false", "False")
eager = _MODE == "first"
_MISSING = object()
# Executions that ran as one compiled program, and those of them the queue's fast path ran
# (run_again): tests count them.
COUNTS = {"compiled": 0, "again": 0}
_SEEN: set = set()  # structures executed once already (per-record)
_PROGRAMS: dict = {}       # structure -> jitted program, shared by lists
_MAX_PROGRAMS = 512
_MAX_PLANS_PER_LIST = 64   # volatile descriptors could otherwise grow a list's cache forever
DISPATCH, COPY, UPLOAD, READBACK = range(4)
# A whole-list program keeps the buffers of up to this many bytes it writes in one Group
# (one argument and one output for all of them: JAX charges each array of a program).
GROUP_MAX_BYTES = 1 << 16


class ListState:
    """What one recording (list version) of a command list needs to execute compiled."""

    __slots__ = ("version", "supported", "ranges", "range_heaps", "dispatch_range",
                 "transitions", "heaps", "ops", "last_versions", "last_plan", "plans")

    def __init__(self, version):
        self.version = version
        self.supported = True
        self.ranges = []          # unique (heap, first, stop) descriptor ranges, in order
        self.range_heaps = ()     # the distinct heaps of those ranges
        self.dispatch_range = {}  # record index -> index into ranges
        self.transitions = []     # (buffer, state after), in record order
        self.heaps = ()
        self.ops = []             # distinct compiled operators dispatched
        self.last_versions = None  # the heaps' versions when last_plan was selected
        self.last_plan = None
        self.plans = {}


class Plan:
    """One compiled execution: the program, the memories it takes, what it writes."""

    __slots__ = ("fn", "mems", "written", "uploads", "readbacks", "touched", "traced", "whole",
                 "steps", "sig", "packed", "starts", "own", "large", "group", "simple")

    def __init__(self, fn, mems, written, uploads, readbacks, touched, steps=None, sig=None,
                 packed=()):
        self.fn, self.mems, self.written = fn, mems, written
        self.uploads, self.readbacks, self.touched = uploads, readbacks, touched
        self.traced = False
        self.whole = steps is not None  # a whole-list program (it takes the opaque zero)
        self.steps, self.sig = steps, sig  # what to jit while fn is None
        # The small buffers it writes live in one Group (memory.Group): one argument, one
        # output. ``own``: the other memories, passed one by one; ``large``: those written.
        self.packed, self.starts = packed, _starts(mems, packed)
        self.own = tuple(j for j in range(len(mems)) if j not in packed)
        self.large = tuple(j for j in written if j not in packed)
        self.group = Group() if packed else None
        # No group, opaque zero, uploads or readbacks: run_again's short loop.
        self.simple = not packed and steps is None and not uploads and not readbacks
        if packed:  # what fence markers watch: the group stands for its members
            grouped = {mems[j] for j in packed}
            self.touched = {m for m in touched if m not in grouped} | {self.group}


# ---- per record type: what preparing a list notes (PREPARE) and what a plan does (BUILD) ----
# One row per command record type (commands.RECORD_TYPES); a test checks that none is missing.

def _prepare_heaps(st, i, rec, seen):
    st.heaps = rec.heaps


def _prepare_barrier(st, i, rec, seen):
    if rec.kind == TRANSITION and rec.resource is not None:
        st.transitions.append((rec.resource, rec.after))


def _prepare_copy(st, i, rec, seen):
    if rec.src.memory.host and rec.dst.memory.host:
        st.supported = False


def _prepare_dispatch(st, i, rec, seen):
    if not rec.dispatchable.compilable:  # an initializer: the per-record path
        st.supported = False
        return
    rng = (rec.heap, rec.gpu_index, rec.gpu_index + rec.count)
    key = (id(rec.heap), rng[1], rng[2])
    if key not in seen:
        seen[key] = len(st.ranges)
        st.ranges.append(rng)
    st.dispatch_range[i] = seen[key]
    if rec.dispatchable not in st.ops:
        st.ops.append(rec.dispatchable)


PREPARE = {SetHeaps: _prepare_heaps, Barrier: _prepare_barrier, CopyRegion: _prepare_copy,
           DmlDispatch: _prepare_dispatch}


def _prepare(cl) -> ListState:
    st = ListState(cl.version)
    seen: dict = {}
    for i, rec in enumerate(cl.records):
        step = PREPARE.get(type(rec))
        if step is None:
            st.supported = False
        else:
            step(st, i, rec, seen)
        if not st.supported:
            break
    st.range_heaps = tuple({id(h): h for h, _, _ in st.ranges}.values())
    return st


def execute(cl, ctx) -> bool:
    """Execute closed list ``cl`` as one program; False when declined (nothing was done)."""
    if not enabled:
        return False
    st = cl.compiled
    if st is None or st.version != cl.version:
        st = cl.compiled = _prepare(cl)
    if not st.supported:
        return False
    for d in st.ops:
        if not d.initialized or d.device.removed_reason:
            return False
    # The descriptors select the plan. A heap's version changes with every descriptor
    # written into it, so unchanged versions mean unchanged descriptors: an O(1) check.
    versions = tuple(h.version for h in st.range_heaps)
    if versions == st.last_versions:
        plan = st.last_plan
    else:
        key = [h.slots[a:b] for h, a, b in st.ranges]
        frozen = tuple(tuple(k) for k in key)
        plan = st.plans.get(frozen, _MISSING)
        if plan is _MISSING:
            if len(st.plans) >= _MAX_PLANS_PER_LIST:
                st.plans.clear()
            plan = st.plans[frozen] = _build(cl, st, key)
        st.last_versions, st.last_plan = versions, plan
    if plan is None:
        return False
    if plan.fn is None and not _compile(plan):
        return False
    if not plan.traced:
        try:
            results = _call(plan)
        except Exception:  # tracing failed before anything ran: the per-record path decides
            st.plans = {k: (None if p is plan else p) for k, p in st.plans.items()}
            st.last_plan = None
            return False
        plan.traced = True
    else:
        results = _call(plan)
    _finish(st, plan, results, ctx.touched)
    ctx.heaps = st.heaps
    return True


def run_again(cl, touched) -> bool:
    """Run ``cl`` as it ran last time, if it can as it is now (the same recording, the heaps'
    versions unchanged, its operators initialized, its program traced), adding what it wrote
    to the set ``touched``; False when it cannot (nothing was done): what the queue's fast
    path (Queue.execute_now) runs without the generic layers."""
    st = cl.compiled
    if not enabled or st is None or st.version != cl.version:
        return False
    plan = st.last_plan
    if plan is None or not plan.traced:
        return False
    for h, v in zip(st.range_heaps, st.last_versions):
        if h.version != v:
            return False
    for d in st.ops:
        if not d.initialized or d.device.removed_reason:
            return False
    if plan.simple and not st.transitions:  # storages in, storages out
        mems = plan.mems
        results = plan.fn(*[mems[j].array for j in plan.own])
        for j, arr in zip(plan.written, results):
            mems[j].array = arr
        touched.update(plan.touched)
        COUNTS["compiled"] += 1
    else:
        _finish(st, plan, _call(plan), touched)
    COUNTS["again"] += 1
    return True


def _call(plan):
    """Launch ``plan``'s program on the memories' current storages and the upload bytes."""
    mems = plan.mems
    args = [mems[j].array for j in plan.own]
    group = plan.group
    if group is not None:
        args.append(group.array if group.intact else _gather(plan))
    if plan.whole:
        args.append(_zero(mems[0].device))
    for mem, off, n, dt in plan.uploads:  # the UPLOAD bytes, read by the program's transfer
        args.append(mem.flush()[off:off + n].view(dt))
    return plan.fn(*args)


def _finish(st, plan, results, touched) -> None:
    """Store ``plan``'s results: new storages, readback bytes, buffer states."""
    mems = plan.mems
    group = plan.group
    if group is not None:
        rejoin = not group.intact
        group.hold(results[0])
        if rejoin:
            for j, at in zip(plan.packed, plan.starts):
                mems[j].join(group, at)
        results = results[1:]
        for j, arr in zip(plan.large, results):
            mems[j].array = arr
        results = results[len(plan.large):]
    else:
        for j, arr in zip(plan.written, results):
            mems[j].array = arr
        results = results[len(plan.written):]
    if plan.readbacks:
        for (mem, off), arr in zip(plan.readbacks, results):
            mem.queue_write(off, arr)
    for buf, after in st.transitions:
        buf.state = after
    touched.update(plan.touched)
    COUNTS["compiled"] += 1


class _Builder:
    """The plan being built: memories by index, program steps, host transfers."""

    def __init__(self, st, key):
        self.st, self.key = st, key
        self.mems, self.index = [], {}
        self.steps, self.uploads, self.readbacks = [], [], []
        self.touched, self.written = set(), set()

    def mem(self, mem) -> int:
        j = self.index.get(id(mem))
        if j is None:
            j = self.index[id(mem)] = len(self.mems)
            self.mems.append(mem)
        return j


def _build_nothing(b, i, rec) -> bool:
    return True  # heaps and barriers: order only, which the program keeps anyway


def _build_copy(b, i, rec) -> bool:
    # Copies move words of at most 4 bytes: a DEFAULT storage is uint32, so wider units
    # would cost the program a relayout instead of a plain copy.
    src, dst = rec.src.memory, rec.dst.memory
    b.touched.add(dst)
    if rec.size <= 0:
        return True
    if src.host:
        k = min(unit(rec.dst_offset, rec.size), 4)
        j = b.mem(dst)
        b.written.add(j)
        b.steps.append((UPLOAD, len(b.uploads), j, rec.dst_offset // k, rec.size // k, k))
        b.uploads.append((src, rec.src_offset, rec.size, UNSIGNED_OF_SIZE[k]))
    elif dst.host:
        k = min(unit(rec.src_offset, rec.size), 4)
        b.steps.append((READBACK, b.mem(src), rec.src_offset // k, rec.size // k, k))
        b.readbacks.append((dst, rec.dst_offset))
    else:
        k = min(unit(rec.dst_offset, rec.src_offset, rec.size), 4)
        s, j = b.mem(src), b.mem(dst)
        b.written.add(j)
        b.steps.append((COPY, j, rec.dst_offset // k, s, rec.src_offset // k, rec.size // k, k))
    return True


def _build_dispatch(b, i, rec) -> bool:
    d = rec.dispatchable
    descs = b.key[b.st.dispatch_range[i]]
    if any(x is not None and x.buffer.memory.host for x in descs) or volatile_hazard(d, descs):
        return False  # the per-record path (and its fault, for a hazard)

    def slot(desc, extra, spec):
        return (b.mem(desc.buffer.memory), desc.offset + extra, spec)
    try:
        views_in, views_out = d.views(descs, slot)
    except ExecutionFault:
        return False
    b.steps.append((DISPATCH, d, views_in, views_out))
    for v in views_out:
        if v is not None:
            b.written.add(v[0])
            b.touched.add(b.mems[v[0]])
    return True


BUILD = {SetHeaps: _build_nothing, Barrier: _build_nothing, CopyRegion: _build_copy,
         DmlDispatch: _build_dispatch}


def _build(cl, st, key):
    """The Plan of ``cl`` under descriptors ``key``, or None to use the per-record path."""
    b = _Builder(st, key)
    for i, rec in enumerate(cl.records):
        if not BUILD[type(rec)](b, i, rec):
            return None
    mems, steps, written = b.mems, b.steps, tuple(sorted(b.written))
    if not steps:  # barriers and heaps only: nothing to launch
        return Plan(_nothing, mems, (), [], [], b.touched)
    if len(steps) == 1 and steps[0][0] == DISPATCH:
        _, d, views_in, views_out = steps[0]
        fn, written = d.program(mems, views_in, views_out)
        return Plan(fn, mems, written, [], [], b.touched)
    packed = tuple(j for j in written if mems[j].words * 4 <= GROUP_MAX_BYTES)
    packed = packed if len(packed) >= 2 else ()
    sig = (tuple(_signature(s) for s in steps), len(mems), written,
           tuple((j, mems[j].words) for j in packed))
    return Plan(_PROGRAMS.get(sig), mems, written, b.uploads, b.readbacks, b.touched, steps, sig,
                packed)


def _starts(mems, packed):
    out, at = [], 0
    for j in packed:
        out.append(at)
        at += mems[j].words
    return tuple(out)


def _compile(plan) -> bool:
    """Jit ``plan``'s program if its structure executed before (or ``eager``); False: run
    this execution record by record."""
    sig = plan.sig
    fn = _PROGRAMS.get(sig)
    if fn is None:
        if not eager and sig not in _SEEN:
            if len(_SEEN) > 4096:
                _SEEN.clear()
            _SEEN.add(sig)
            return False
        if len(_PROGRAMS) >= _MAX_PROGRAMS:
            _PROGRAMS.pop(next(iter(_PROGRAMS)))
        fn = _PROGRAMS[sig] = _jit(plan)
    plan.fn, plan.steps = fn, None
    return True


def _nothing(*args):
    return ()


def _gather(plan):
    """A new array holding ``plan``'s packed storages in its layout, read from wherever they
    are (segments of groups, or arrays of their own): one program, no per-buffer slices."""
    sources, index, spec = [], {}, []
    for j in plan.packed:
        mem = plan.mems[j]
        seg = mem.segment()
        src, at = (seg[0].array, seg[1]) if seg is not None else (mem.array, 0)
        k = index.get(id(src))
        if k is None:
            k = index[id(src)] = len(sources)
            sources.append(src)
        spec.append((k, at, mem.words))
    return _gather_fn(tuple(spec))(*sources)


@functools.lru_cache(maxsize=256)
def _gather_fn(spec):
    @jax.jit
    def gather(*sources):
        return jnp.concatenate([lax.slice(sources[k], (at,), (at + n,)) for k, at, n in spec])
    return gather


_ZEROS: dict = {}


def _zero(device):
    """A uint32 zero resident on ``device``: the opaque operand of views.sealed."""
    z = _ZEROS.get(device)
    if z is None:
        z = _ZEROS[device] = jax.device_put(np.zeros((), np.uint32), device)
    return z


def _signature(step):
    if step[0] == DISPATCH:
        _, d, vin, vout = step
        return (DISPATCH, d.signature, tuple(None if v is None else v[:2] for v in vin),
                tuple(None if v is None else v[:2] for v in vout))
    return step


def _jit(plan):
    """The program of ``plan``: its arguments are the ``own`` storages, the group's array
    (when ``packed``), the opaque zero and the upload payloads; its results the group's new
    array, the ``large`` storages written and the readback bytes."""
    steps, written, packed, own, large = plan.steps, plan.written, plan.packed, plan.own, \
        plan.large
    n_mems = len(plan.mems)
    words = {j: plan.mems[j].words for j in packed}
    starts = plan.starts
    n_in = len(own) + (1 if packed else 0)

    def program(*args):
        zero, payloads = args[n_in], args[n_in + 1:]
        cur = [None] * n_mems
        for j, a in zip(own, args):
            cur[j] = a
        if packed:
            slab = args[len(own)]
            for j, at in zip(packed, starts):
                cur[j] = lax.slice(slab, (at,), (at + words[j],))
        reps = [c.dtype for c in cur]
        outs = []
        for step in steps:
            kind = step[0]
            if kind == DISPATCH:
                apply_dispatch(cur, step[1].kernel_with_seal(zero), step[2], step[3], seal=zero)
            elif kind == COPY:
                _, j, dst_at, s, src_at, n, k = step
                u = UNSIGNED_OF_SIZE[k]
                data = lax.slice(convert(cur[s], u), (src_at,), (src_at + n,))
                cur[j] = lax.dynamic_update_slice(convert(cur[j], u), data, (dst_at,))
            elif kind == UPLOAD:
                _, p, j, dst_at, n, k = step
                cur[j] = lax.dynamic_update_slice(convert(cur[j], UNSIGNED_OF_SIZE[k]),
                                                  payloads[p], (dst_at,))
            else:
                _, s, off, n, k = step
                outs.append(lax.slice(convert(cur[s], UNSIGNED_OF_SIZE[k]), (off,), (off + n,)))
        result = tuple(convert(cur[j], reps[j]) for j in large) + tuple(outs)
        if packed:
            slab = jnp.concatenate([convert(cur[j], np.uint32) for j in packed])
            result = (slab,) + result
        return result

    donate = tuple(k for k, j in enumerate(own) if j in written) + \
        ((len(own),) if packed else ())
    return jax.jit(program, donate_argnums=donate)

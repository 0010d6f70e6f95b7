"""Typed steps and the programs that run them: the one execution core.

Executing a command record is a pure function from the storages it reads to the storages it
writes (JAX's ``apply_primitive`` is the model). A record kind says what it does once, as
steps (``Record.build`` in commands.py and dml.py); executing one record is the jit of its
steps, executing a whole list is the jit of all its records' steps traced into one program.
The two granularities are the same code, so they cannot disagree.

A step is a NamedTuple with ``key`` (what selects its program: no buffers, no descriptors, only
the structure) and ``apply(cur, env)`` (traced: ``cur`` holds the current storage of every
memory the plan touches, by index; ``env`` the program's other operands). Steps name memories
by index into the plan's ``mems`` and views as :class:`View` (memory index, byte offset, spec).
One record's copy offsets are operands (one small device array per plan), so one program
serves every offset; a whole list's are constants of its program. Effects that are not arithmetic on storages (a transition barrier's new state, an
initializer marking its operators initialized, a host-to-host copy) are ``after`` callables
the plan runs once its program has been launched.

Programs live in the device's :class:`PlanCache`: bounded, one key scheme, owned by the device
(nothing outlives the device a user dropped). A key names the steps' structure, the memories'
lengths, the buffers written and grouped, and whether dispatches are sealed from one another;
one key, one trace.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from . import config
from .dtypes import UNSIGNED_OF_SIZE, is_packed4
from .memory import Group, convert, unit
from .typed_views import in_order, typed_views
from .views import apply_dispatch, read_view, write_view

# A plan keeps the buffers of up to this many bytes it writes in one Group (one argument and
# one output for all of them: JAX charges each array of a program), when it has several steps.
GROUP_MAX_BYTES = 1 << 16
MANY_DISPATCHES = 64  # past this many dispatches a GPU program skips multi-output fusion
# OWNED_BY_DML tensors smaller than this stay slices of the storage: copying one costs
# microseconds per run, less than the typed copies' program costs to compile once
TYPED_MIN_BYTES = 1 << 16


class View(NamedTuple):
    """A tensor view: ``spec`` at byte ``offset`` of the plan's memory ``memory``."""
    memory: int
    offset: int
    spec: Any


class Env(NamedTuple):
    """A program's operands besides the storages: copy offsets, upload payloads, readback
    outputs (appended in step order) and the opaque zero that seals dispatches."""
    scalars: Any
    payloads: tuple
    outs: list
    seal: Any
    seal_outputs: bool
    typed: dict  # (memory, byte offset, spec) -> the typed view passed in (Plan.pins)
    shared: bool = False  # a CPU program: graph results stored once (views.sealed_shared)


# ---- steps ---------------------------------------------------------------------------------

def _structural_key(step) -> tuple:
    """The key of a step whose fields are all structure (indices, counts, views): its kind
    and its fields."""
    return (type(step).__name__,) + tuple(step)


class Copy(NamedTuple):
    """``n`` words of ``k`` bytes from memory ``src`` to memory ``dst``; the word offsets are
    operands ``scalars[at]`` (destination) and ``scalars[at + 1]`` (source)."""
    dst: int
    src: int
    n: int
    k: int
    at: int

    key = property(_structural_key)

    def apply(self, cur, env):
        u = UNSIGNED_OF_SIZE[self.k]
        data = lax.dynamic_slice(convert(cur[self.src], u), (env.scalars[self.at + 1],),
                                 (self.n,))
        cur[self.dst] = lax.dynamic_update_slice(convert(cur[self.dst], u), data,
                                                 (env.scalars[self.at],))


class Upload(NamedTuple):
    """Host bytes in: operand ``payloads[payload]`` (``n`` words of ``k`` bytes, read from an
    UPLOAD buffer when the program is launched) written into ``dst`` at ``scalars[at]``."""
    payload: int
    dst: int
    n: int
    k: int
    at: int

    key = property(_structural_key)

    def apply(self, cur, env):
        cur[self.dst] = lax.dynamic_update_slice(
            convert(cur[self.dst], UNSIGNED_OF_SIZE[self.k]), env.payloads[self.payload],
            (env.scalars[self.at],))


class Readback(NamedTuple):
    """Bytes out: ``n`` words of ``k`` bytes of ``src`` from ``scalars[at]``, a program output
    that lands in a READBACK buffer when its bytes are next looked at."""
    src: int
    n: int
    k: int
    at: int

    key = property(_structural_key)

    def apply(self, cur, env):
        env.outs.append(lax.dynamic_slice(convert(cur[self.src], UNSIGNED_OF_SIZE[self.k]),
                                          (env.scalars[self.at],), (self.n,)))


class Dispatch(NamedTuple):
    """A compiled operator's or graph's work: read ``inputs``, run the kernel, write
    ``outputs`` (views, or None for an unbound optional slot). ``owned``: per input, whether
    it is an OWNED_BY_DML tensor read from the persistent resource."""
    dispatchable: Any
    inputs: tuple
    outputs: tuple
    owned: tuple = ()

    @property
    def key(self):
        # An OWNED_BY_DML input's view names its spec: how the persistent resource keeps it
        # (the operator's persistent_layout) is not part of the signature.
        owned = self.owned or (False,) * len(self.inputs)
        return ("dispatch", self.dispatchable.signature,
                tuple(v if o else None if v is None else v[:2]
                      for v, o in zip(self.inputs, owned)),
                tuple(None if v is None else v[:2] for v in self.outputs))

    def apply(self, cur, env):
        d = self.dispatchable
        call = d.kernel_call if env.seal is None else d.kernel_with_seal(env.seal, env.shared)
        apply_dispatch(cur, call, self.inputs, self.outputs,
                       seal=env.seal if env.seal_outputs else None, typed=env.typed)


class Store(NamedTuple):
    """The values of view ``src`` written into view ``dst`` (same sizes and type, other
    strides): how an initializer stores an OWNED_BY_DML tensor in the persistent resource."""
    src: View
    dst: View

    key = property(_structural_key)

    def apply(self, cur, env):
        s, d = self.src, self.dst
        cur[d.memory] = write_view(cur[d.memory], d.spec, d.offset,
                                   read_view(cur[s.memory], s.spec, s.offset))


# ---- building a plan -----------------------------------------------------------------------

class Builder:
    """The steps of one record, or of a whole list, as its records append them."""

    __slots__ = ("whole", "mems", "index", "steps", "scalars", "uploads", "readbacks", "touched",
                 "written", "after", "cacheable")

    def __init__(self, whole=False):
        self.whole = whole  # building a whole list: records refuse what it cannot trace
        self.mems: list = []
        self.index: dict = {}
        self.steps: list = []
        self.scalars: list = []
        self.uploads: list = []    # (host memory, byte offset, bytes, word dtype)
        self.readbacks: list = []  # (host memory, byte offset)
        self.touched: set = set()
        self.written: set = set()
        self.after: list = []      # host effects, run after the launch
        self.cacheable = True      # False: build again at the next execution

    def mem(self, memory) -> int:
        j = self.index.get(id(memory))
        if j is None:
            j = self.index[id(memory)] = len(self.mems)
            self.mems.append(memory)
        return j

    def write(self, j) -> None:
        self.written.add(j)
        self.touched.add(self.mems[j])

    def copy(self, dst, dst_offset, src, src_offset, size) -> None:
        """A copy of ``size`` bytes between memories (device or host)."""
        if size <= 0:
            self.touched.add(dst)
            return
        if src.host and dst.host:
            self.after.append(lambda: _host_copy(dst, dst_offset, src, src_offset, size))
            self.touched.add(dst)
            return
        # Copies move words of at most 4 bytes: a DEFAULT storage is uint32, so wider units
        # would cost the program a relayout instead of a plain copy.
        if src.host:
            k = min(unit(dst_offset, size), 4)
            j = self.mem(dst)
            self.steps.append(Upload(len(self.uploads), j, size // k, k, self._at(dst_offset // k)))
            self.uploads.append((src, src_offset, size, UNSIGNED_OF_SIZE[k]))
            self.write(j)
        elif dst.host:
            k = min(unit(src_offset, size), 4)
            self.steps.append(Readback(self.mem(src), size // k, k, self._at(src_offset // k)))
            self.readbacks.append((dst, dst_offset))
            self.touched.add(dst)
        else:
            k = min(unit(dst_offset, src_offset, size), 4)
            s, j = self.mem(src), self.mem(dst)
            self.steps.append(Copy(j, s, size // k, k, self._at(dst_offset // k, src_offset // k)))
            self.write(j)

    def _at(self, *values) -> int:
        at = len(self.scalars)
        self.scalars.extend(values)
        return at

    def dispatch(self, dispatchable, inputs, outputs, owned=()) -> None:
        self.steps.append(Dispatch(dispatchable, tuple(inputs), tuple(outputs), tuple(owned)))
        for v in outputs:
            if v is not None:
                self.write(v.memory)

    def store(self, src: View, dst: View) -> None:
        self.steps.append(Store(src, dst))
        self.write(dst.memory)

    def plan(self) -> "Plan":
        return Plan(self)


def _host_copy(dst, dst_offset, src, src_offset, size) -> None:
    dst.flush()[dst_offset:dst_offset + size] = src.flush()[src_offset:src_offset + size].copy()


# ---- plans -----------------------------------------------------------------------------------

class Plan:
    """Steps over memories, ready to launch: its program comes from the device's cache."""

    __slots__ = ("mems", "steps", "written", "scalars", "uploads", "readbacks", "touched",
                 "after", "key", "fn", "packed", "starts", "own", "large", "group", "sealed",
                 "scalar_arg", "simple", "eager", "static", "seal_outputs", "dispatches", "pins")

    def __init__(self, b: Builder):
        mems, steps = tuple(b.mems), b.steps
        self.mems, self.steps = mems, tuple(steps)
        self.written = written = tuple(sorted(b.written))
        self.scalars, self.uploads, self.readbacks = tuple(b.scalars), tuple(b.uploads), \
            tuple(b.readbacks)
        self.after = tuple(b.after)
        self.dispatches = dispatches = sum(isinstance(s, Dispatch) for s in steps)
        graphs = any(isinstance(s, Dispatch) and s.dispatchable.seals for s in steps)
        self.sealed = dispatches > 1 or graphs
        packed = tuple(j for j in written if mems[j].words * 4 <= GROUP_MAX_BYTES) \
            if len(steps) > 1 else ()
        self.packed = packed = packed if len(packed) >= 2 else ()
        self.starts = _starts(mems, packed)
        # A whole list's OWNED_BY_DML reads from a persistent resource it does not write come
        # in as typed arrays (typed_views), so the program does not copy each weight out of the
        # storage at every execution; the storage itself comes in only if read otherwise.
        self.pins = pins = _pins(steps, set(written), mems) \
            if b.whole and config.settings.typed_weights else ()
        raw = _raw_reads(steps, {View(j, o, t) for j, vs in pins for o, t, _ in vs}) \
            if pins else None
        pinned = {j for j, _ in pins}
        self.own = tuple(j for j in range(len(mems))
                         if j not in packed and (j not in pinned or j in raw))
        self.large = tuple(j for j in written if j not in packed)
        self.group = Group() if packed else None
        self.touched = b.touched
        if packed:  # what fence markers watch: the group stands for its members
            grouped = {mems[j] for j in packed}
            self.touched = {m for m in b.touched if m not in grouped} | {self.group}
        self.seal_outputs = dispatches > 1
        # A whole list's copy offsets are constants of its program (its structure); one
        # record's are operands, so that one program serves every offset.
        self.static = b.whole
        self.key = (tuple(s.key for s in steps), tuple(m.words for m in mems), written,
                    packed, self.sealed, self.seal_outputs,
                    self.scalars if self.static else len(self.scalars),
                    tuple(j for j in written if mems[j].lent), pins) \
            if steps else None
        self.fn = None
        self.scalar_arg = None
        self.eager = False  # compile at the first execution (execute._whole)
        # storages in, storages out: the launch's short loop
        self.simple = not packed and not self.sealed and (not b.scalars or self.static) and \
            not b.uploads and not b.readbacks and not pins

    def launch(self, cache, touched: set) -> None:
        """Run the program (from the device's PlanCache, jitted now if it has none), store what
        it computed, run the host effects."""
        if self.steps:
            fn = self.fn
            if fn is None:
                fn = self.fn = cache.program(self.key, self.trace)
            if self.simple:  # storages in, storages out
                mems = self.mems
                for j, arr in zip(self.written, fn(*[mems[j].array for j in self.own])):
                    mems[j].array = arr
            else:
                self._store(fn(*self._args(cache)))
        for effect in self.after:
            effect()
        touched.update(self.touched)

    def _args(self, cache):
        mems = self.mems
        args = [mems[j].array for j in self.own]
        for j, views in self.pins:
            args.extend(typed_views(mems[j], views, cache))
        group = self.group
        if group is not None:
            args.append(group.array if group.intact else self._gather(cache))
        if self.sealed:
            args.append(cache.zero(mems[0].device))
        if self.scalars and not self.static:
            if self.scalar_arg is None:
                dt = np.int64 if max(self.scalars) >= 2**31 else np.int32
                self.scalar_arg = jax.device_put(np.array(self.scalars, dt), mems[0].device)
            args.append(self.scalar_arg)
        for mem, off, n, dt in self.uploads:  # the UPLOAD bytes, read by the program's transfer
            args.append(mem.flush()[off:off + n].view(dt))
        return args

    def trace(self) -> Callable:
        """This plan's program (module function ``trace``)."""
        return trace(self)

    def _gather(self, cache):
        """A new array holding the packed storages in this plan's layout, read from wherever
        they are (segments of groups, or arrays of their own): one program."""
        sources, index, layout = [], {}, []
        for j in self.packed:
            mem = self.mems[j]
            seg = mem.segment()
            src, at = (seg[0].array, seg[1]) if seg is not None else (mem.array, 0)
            k = index.get(id(src))
            if k is None:
                k = index[id(src)] = len(sources)
                sources.append(src)
            layout.append((k, at, mem.words))
        layout = tuple(layout)
        key = ("gather", layout, tuple(s.shape[0] for s in sources))
        return cache.program(key, lambda: _gather_program(layout))(*sources)

    def _store(self, results) -> None:
        mems, group = self.mems, self.group
        if group is not None:
            rejoin = not group.intact
            group.hold(results[0])
            if rejoin:
                for j, at in zip(self.packed, self.starts):
                    mems[j].join(group, at)
            results = results[1:]
        for j, arr in zip(self.large, results):
            mems[j].array = arr
        for (mem, off), arr in zip(self.readbacks, results[len(self.large):]):
            mem.queue_write(off, arr)


def _pins(steps, written: set, mems) -> tuple:
    """((memory, ((byte offset, spec, dimension order or None), ...)), ...): the OWNED_BY_DML
    views of at least TYPED_MIN_BYTES that ``steps`` read from device memories they do not
    write; on a CPU, in the order the dispatch asks for (``Dispatchable.cpu_input_orders``)."""
    found: dict = {}
    on_cpu = bool(mems) and getattr(mems[0].device, "platform", "cpu") == "cpu"
    for s in steps:
        if isinstance(s, Dispatch) and s.owned:
            orders = s.dispatchable.cpu_input_orders() if on_cpu else {}
            for i, (v, owned) in enumerate(zip(s.inputs, s.owned)):
                if owned and v.memory not in written and not mems[v.memory].host and \
                        not is_packed4(v.spec.data_type) and \
                        v.spec.total_bytes >= TYPED_MIN_BYTES:
                    order = orders.get(i)
                    found.setdefault(v.memory, {})[(v.offset, v.spec, order)] = None
    return tuple((j, tuple(views)) for j, views in sorted(found.items(), key=lambda f: f[0]))


def _raw_reads(steps, pinned: set) -> set:
    """The memories ``steps`` name other than through the ``pinned`` views."""
    used: set = set()
    for s in steps:
        if isinstance(s, Dispatch):
            used.update(v.memory for v in s.inputs if v is not None and v not in pinned)
            used.update(v.memory for v in s.outputs if v is not None)
        elif isinstance(s, Store):
            used.update((s.src.memory, s.dst.memory))
        elif isinstance(s, Copy):
            used.update((s.dst, s.src))
        elif isinstance(s, Upload):
            used.add(s.dst)
        else:
            used.add(s.src)  # Readback
    return used


def _starts(mems, packed):
    out, at = [], 0
    for j in packed:
        out.append(at)
        at += mems[j].words
    return tuple(out)


def trace(plan: Plan) -> Callable:
    """The program of ``plan``: its arguments are the ``own`` storages, the group's array (when
    ``packed``), the opaque zero (when ``sealed``), the copy offsets and the upload payloads;
    its results the group's new array, the ``large`` storages written and the readback bytes."""
    steps, packed, own, large = plan.steps, plan.packed, plan.own, plan.large
    n_mems, starts = len(plan.mems), plan.starts
    words = {j: plan.mems[j].words for j in packed}
    pinned = tuple((View(j, o, t), order) for j, views in plan.pins for o, t, order in views)
    n_own = len(own) + len(pinned)  # the storages, then the typed views
    n_in = n_own + (1 if packed else 0)
    sealed, seal_outputs = plan.sealed, plan.seal_outputs
    has_scalars = bool(plan.scalars) and not plan.static
    static = plan.scalars if plan.static else None
    on_cpu = _platform(plan) == "cpu"

    def program(*args):
        with jax.disable_jit():
            return _program(*args)

    def _program(*args):
        rest = list(args[n_in:])
        zero = rest.pop(0) if sealed else None
        scalars = rest.pop(0) if has_scalars else static
        cur: list = [None] * n_mems
        for j, a in zip(own, args):
            cur[j] = a
        typed = {v: in_order(a, order) for (v, order), a in zip(pinned, args[len(own):n_own])}
        if packed:
            slab = args[n_own]
            for j, at in zip(packed, starts):
                cur[j] = lax.slice(slab, (at,), (at + words[j],))
        reps = [None if c is None else c.dtype for c in cur]
        env = Env(scalars, tuple(rest), [], zero, seal_outputs, typed, on_cpu)
        for step in steps:
            step.apply(cur, env)
        result = tuple(convert(cur[j], reps[j]) for j in large) + tuple(env.outs)
        if packed:
            result = (jnp.concatenate([convert(cur[j], np.uint32) for j in packed]),) + result
        return result

    donate = tuple(k for k, j in enumerate(own)
                   if j in plan.written and not plan.mems[j].lent) + \
        ((n_own,) if packed else ())
    return jax.jit(program, donate_argnums=donate, compiler_options=compiler_options(plan))


def compiler_options(plan: Plan) -> dict | None:
    """XLA options of ``plan``'s program. On a CPU, those its operators ask for
    (``OperatorDef.cpu_compiler_options``) that this jaxlib knows. On a GPU, a program of more
    than MANY_DISPATCHES dispatches skips XLA's multi-output fusion pass, whose time grows
    faster than the program: a 1,000-dispatch list spent 13.2 of its 14.3 s of HLO passes there
    on the H200 (5.4 s in all without it, a 100-dispatch list 0.9 s instead of 2.1). The
    arithmetic is the same; only how kernels are grouped differs (the 1,000-dispatch list then
    runs in 0.86 ms, not 0.18). A GPU program also launches its kernels one by one, not as
    XLA's command buffers (CUDA graphs): a command buffer starts only once the host has
    launched all of it, while single launches overlap with the kernels they follow. In one
    H200 process, alternating, with the same bits: MiniLM FLOAT16 (half precision allowed)
    2.26 -> 1.80 ms per bound run, FLOAT16 3.30 -> 3.07, FLOAT32 6.12 -> 5.86, resnet18 2-3%.
    And its convolutions are laid out NHWC, cuDNN's fast layout (a profile of resnet18 FLOAT32
    showed cuDNN converting layouts 67 times a run around convolutions left in NCHW): resnet18
    b8 FLOAT16 1.77 -> 1.64 ms, with half precision allowed 1.34 -> 1.18 (alternating, same
    bits), FLOAT32 within 1%."""
    platform = _platform(plan)
    if platform == "cpu":
        options: dict = {}
        for s in plan.steps:
            if isinstance(s, Dispatch):
                options.update(s.dispatchable.cpu_compiler_options())
        return {k: v for k, v in options.items() if _cpu_option_known(k, v)} or None
    if platform != "gpu":
        return None
    options = {"xla_gpu_enable_command_buffer": "", "xla_gpu_force_conv_nhwc": True}
    if plan.dispatches > MANY_DISPATCHES:
        options["xla_disable_hlo_passes"] = "multi_output_fusion"
    return options


def _platform(plan: Plan) -> str | None:
    """The platform of ``plan``'s device ("cpu", "gpu", ...), None for a plan of no memory."""
    return getattr(plan.mems[0].device, "platform", "cpu") if plan.mems else None


@functools.lru_cache(maxsize=16)
def _cpu_option_known(name: str, value) -> bool:
    """Whether this jaxlib's CPU compiler takes the option (an experimental one may go); the
    options are the operators' own constants, a handful, so a small bound holds them all."""
    try:
        cpu = jax.devices("cpu")[0]
        jax.jit(lambda v: v, compiler_options={name: value}).lower(
            jax.device_put(np.float32(0), cpu)).compile()
    except Exception:  # noqa: BLE001 - any refusal means: not this version's option
        return False
    return True


def _gather_program(layout):
    @jax.jit
    def gather(*sources):
        return jnp.concatenate([lax.slice(sources[k], (at,), (at + n,)) for k, at, n in layout])
    return gather

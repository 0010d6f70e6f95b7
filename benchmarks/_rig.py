"""Shared set-up for the benchmarks: a device, queue, fence, descriptor heap and helpers that
build compiled operators, buffers and binding tables through the faithful public API only,
so that what is timed is what a ported DirectML program pays."""
from __future__ import annotations

import json
import os
import platform
import statistics
import time

import numpy as np

import dmlsim as dml

F32 = dml.DML_TENSOR_DATA_TYPE_FLOAT32


def tensor(sizes, dtype=F32):
    b = dml.DML_BUFFER_TENSOR_DESC(dtype, 0, len(sizes), list(sizes), None)
    b.TotalTensorSizeInBytes = dml.DMLCalcBufferTensorSize(dtype, len(sizes), list(sizes), None)
    return dml.DML_TENSOR_DESC(dml.DML_TENSOR_TYPE_BUFFER, b)


class Rig:
    """One D3D12 + DirectML device with a queue, a fence and a big shader-visible heap."""

    def __init__(self, heap_size=4096, debug=False):
        self.d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
        self.dev = dml.DMLCreateDevice(self.d3d, dml.DML_CREATE_DEVICE_FLAG_DEBUG if debug else 0)
        self.queue = self.d3d.CreateCommandQueue(dml.D3D12_COMMAND_QUEUE_DESC(
            dml.D3D12_COMMAND_LIST_TYPE_DIRECT))
        self.fence = self.d3d.CreateFence(0, 0)
        self.value = 0
        self.heap = self.d3d.CreateDescriptorHeap(dml.D3D12_DESCRIPTOR_HEAP_DESC(
            dml.D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV, heap_size,
            dml.D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE))
        self.inc = self.d3d.GetDescriptorHandleIncrementSize(
            dml.D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV)
        self.next_slot = 0
        self.recorder = self.dev.CreateCommandRecorder()

    # ---- objects ------------------------------------------------------------------------
    def buffer(self, size, heap=dml.D3D12_HEAP_TYPE_DEFAULT):
        flags = dml.D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS if heap == 1 else 0
        state = {1: dml.D3D12_RESOURCE_STATE_UNORDERED_ACCESS,
                 2: dml.D3D12_RESOURCE_STATE_GENERIC_READ,
                 3: dml.D3D12_RESOURCE_STATE_COPY_DEST}[heap]
        return self.d3d.CreateCommittedResource(
            dml.CD3DX12_HEAP_PROPERTIES(heap), 0,
            dml.CD3DX12_RESOURCE_DESC.Buffer(max(4, int(size)), flags), state, None)

    def command_list(self):
        """A new open list (with its own allocator) with the heap set."""
        alloc = self.d3d.CreateCommandAllocator(dml.D3D12_COMMAND_LIST_TYPE_DIRECT)
        cl = self.d3d.CreateCommandList(0, dml.D3D12_COMMAND_LIST_TYPE_DIRECT, alloc, None)
        cl.SetDescriptorHeaps([self.heap])
        return cl

    def compile(self, op_name, sizes, flags=0, **attrs):
        """Compile ``op_name`` over FLOAT32 tensors of ``sizes`` and initialize it."""
        from dmlsim._schema.operators_generated import DESC_STRUCTS, OPERATORS
        name = "DML_OPERATOR_" + op_name
        schema = OPERATORS[name]
        t = tensor(sizes)
        desc = DESC_STRUCTS[name]()
        for f in schema["fields"]:
            if f.get("schema_type") == "tensor_desc" and not f.get("optional"):
                setattr(desc, f["name"], t)
        for k, v in attrs.items():
            setattr(desc, k, v)
        op = self.dev.CreateOperator(dml.DML_OPERATOR_DESC(schema["value"], desc))
        compiled = self.dev.CompileOperator(op, flags)
        init = self.dev.CreateOperatorInitializer([compiled])
        table = self.table(init)
        cl = self.command_list()
        self.recorder.RecordDispatch(cl, init, table)
        self.submit(cl)
        self.wait()
        return compiled

    def table(self, dispatchable, inputs=(), outputs=()):
        n = dispatchable.GetBindingProperties().RequiredDescriptorCount
        start = self.next_slot
        self.next_slot += n
        cpu = self.heap.GetCPUDescriptorHandleForHeapStart()
        gpu = self.heap.GetGPUDescriptorHandleForHeapStart()
        t = self.dev.CreateBindingTable(dml.DML_BINDING_TABLE_DESC(
            dispatchable, dml.D3D12_CPU_DESCRIPTOR_HANDLE(cpu.ptr + start * self.inc),
            dml.D3D12_GPU_DESCRIPTOR_HANDLE(gpu.ptr + start * self.inc), n))
        if inputs:
            t.BindInputs([self.binding(b) for b in inputs])
        if outputs:
            t.BindOutputs([self.binding(b) for b in outputs])
        return t

    @staticmethod
    def binding(buf):
        if buf is None:
            return dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_NONE, None)
        return dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER, dml.DML_BUFFER_BINDING(
            buf, 0, buf.GetDesc().Width))

    # ---- execution ----------------------------------------------------------------------
    def submit(self, cl, close=True):
        if close:
            cl.Close()
        self.queue.ExecuteCommandLists([cl])
        self.value += 1
        self.queue.Signal(self.fence, self.value)

    def execute_times(self, cl, times):
        """ExecuteCommandLists + Signal ``times`` times, then one fence wait (benchmark a/b/c)."""
        for _ in range(times):
            self.queue.ExecuteCommandLists([cl])
            self.value += 1
            self.queue.Signal(self.fence, self.value)
        self.wait()

    def execute_times_per_record(self, cl, times):
        """The same with whole-list compilation off (the path the debug layer takes)."""
        from dmlsim._core.config import settings
        old, settings.list_compile = settings.list_compile, "0"
        try:
            self.execute_times(cl, times)
        finally:
            settings.list_compile = old

    def wait(self):
        self.fence.SetEventOnCompletion(self.value, None)
        if self.dev.GetDeviceRemovedReason():
            raise RuntimeError(self.dev._core.removed_message)

    def upload(self, buf, array):
        data = np.ascontiguousarray(array).view(np.uint8).reshape(-1)
        up = self.buffer(data.shape[0], dml.D3D12_HEAP_TYPE_UPLOAD)
        up.Map(0, None)[:data.shape[0]] = data
        cl = self.command_list()
        cl.CopyBufferRegion(buf, 0, up, 0, data.shape[0])
        self.submit(cl)
        self.wait()

    def download(self, buf, dtype=np.float32):
        n = buf.GetDesc().Width
        rb = self.buffer(n, dml.D3D12_HEAP_TYPE_READBACK)
        cl = self.command_list()
        cl.CopyResource(rb, buf)
        self.submit(cl)
        self.wait()
        return rb.Map(0, None).view(dtype).copy()


# ---- one operator against raw JAX ----------------------------------------------------------

def time_against_raw(rig, desc, arrays, raw, k, repeats, check=None, upload=True, outputs=1,
                     flags=0):
    """Compile ``desc``, bind ``arrays`` as its input slots (None: an absent optional one)
    and its first output (of ``outputs`` output slots), and time K executions of a closed
    one-dispatch list against K calls of ``jax.jit(raw)`` on the arrays given, interleaved,
    best of ``repeats``. ``check(got, want)`` (NumPy) runs on the first results when given
    (and ``upload``). ``flags``: the execution flags it is compiled with. Returns (dmlsim s,
    raw s) per call."""
    import jax
    import jax.numpy as jnp
    compiled = rig.dev.CompileOperator(rig.dev.CreateOperator(desc), flags)
    init = rig.dev.CreateOperatorInitializer([compiled])
    cl = rig.command_list()
    rig.recorder.RecordDispatch(cl, init, rig.table(init))
    rig.submit(cl)
    rig.wait()
    ins = [None if a is None else rig.buffer(a.nbytes) for a in arrays]
    if upload:
        for b, a in zip(ins, arrays):
            if a is not None:
                rig.upload(b, a)
    f = jax.jit(raw)
    jins = [jnp.asarray(a) for a in arrays if a is not None]
    want = f(*jins)
    out = rig.buffer(want.size * want.dtype.itemsize)
    table = rig.table(compiled, ins, [out] + [None] * (outputs - 1))
    cl = rig.command_list()
    rig.recorder.RecordDispatch(cl, compiled, table)
    cl.Close()

    def dmlsim_run():
        rig.execute_times(cl, k)

    def raw_run():
        for _ in range(k):
            r = f(*jins)
        r.block_until_ready()

    dmlsim_run()
    raw_run()
    if check is not None and upload:
        got = rig.download(out, np.dtype(want.dtype))[:want.size].reshape(want.shape)
        check(got, np.asarray(want))
    t_d = t_r = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        dmlsim_run()
        t_d = min(t_d, time.perf_counter() - t0)
        t0 = time.perf_counter()
        raw_run()
        t_r = min(t_r, time.perf_counter() - t0)
    jins = want = None  # release the device arrays
    for m in ins + [out]:
        if m is not None:
            m._core.memory.array = None  # free the device memory before the next case
    return t_d / k, t_r / k


# ---- timing and reporting ---------------------------------------------------------------


def interleaved(fns, repeats):
    """Min time of each fn over ``repeats`` interleaved rounds (after a warm-up each)."""
    for f in fns:
        f()
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, f in enumerate(fns):
            t0 = time.perf_counter()
            f()
            best[i] = min(best[i], time.perf_counter() - t0)
    return best


def interleaved_median(fns, rounds=9, per_round=5):
    """Median time per call of each of ``fns`` (a dict), timed in alternating rounds of
    ``per_round`` calls each (after a warm-up each), so that a shared machine's changing load
    falls on all of them alike: the ratios of one run compare like with like."""
    for f in fns.values():
        f()
    times = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            t0 = time.perf_counter()
            for _ in range(per_round):
                f()
            times[k].append((time.perf_counter() - t0) / per_round)
    return {k: statistics.median(v) for k, v in times.items()}


def raw_chain(f, x, c, n_dispatch, n_runs):
    """``n_runs`` times the chain v <- f(v, c), ``n_dispatch`` raw jitted calls from ``x``."""
    for _ in range(n_runs):
        v = x
        for _ in range(n_dispatch):
            v = f(v, c)
    v.block_until_ready()
    return v


def best_of(fn, repeats=5):
    """Minimum wall time (seconds) of ``fn()`` over ``repeats`` runs (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def machine():
    import jax
    d = jax.devices()[0]
    return {"platform": d.platform, "device": getattr(d, "device_kind", d.platform),
            "cpu_count": os.cpu_count(), "python": platform.python_version(),
            "jax": jax.__version__, "date": time.strftime("%Y-%m-%d"),
            "load_average_1min": os.getloadavg()[0]}


def print_table(title, header, rows):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(header)]
    print(f"\n{title}")
    print("| " + " | ".join(str(h).ljust(w) for h, w in zip(header, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |")


def write_json(path, payload):
    if path:
        os.makedirs(os.path.dirname(os.path.abspath(path)) or ".", exist_ok=True)
        with open(path, "w") as f:
            json.dump(payload, f, indent=2)
        print(f"wrote {path}")


def us(seconds):
    return f"{seconds * 1e6:.1f}"

"""Shared test utilities for dmlsim's suites (import with ``from helpers import ...``).

Everything here goes through the faithful API (``dmlsim.*`` C names), so a test that uses
these helpers exercises the same path a ported DirectML program does:

- :func:`feature_level` / :func:`strict_mode`: context managers that set the process-wide
  emulated feature level / strict mode and restore the previous value afterwards;
  :data:`FEATURE_LEVELS` lists every DML_FEATURE_LEVEL value (0x1000..0x6400).
- :class:`Env`: one D3D12 device, one DirectML device, a DIRECT queue, an allocator, an open
  command list and a fence. ``Env.upload`` / ``Env.read`` move bytes through UPLOAD and
  READBACK buffers with CopyBufferRegion; ``Env.compile`` creates, compiles and initializes an
  operator (with its persistent resource); ``Env.dispatch`` binds explicit bindings and records
  the dispatch; ``Env.flush`` closes, executes, signals, waits and reopens the list.
- :func:`binding` / :data:`NONE`: DML_BINDING_DESC builders.
- :func:`bits`, :func:`assert_bits_equal`, :func:`assert_float_close`, :func:`ulp_distance`:
  exact comparisons (bit patterns; NaN positions plus ULP distance for floats).
- Fixtures ``env`` (function scope, fresh devices) and ``shared_env`` (session scope; never
  remove its device) — import them into a test module to use them.
- :func:`ort_optimized`: the model ONNX Runtime's CPU session writes after its basic-level
  rewrites (the reference for dmlsim's copies of them).
"""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import dmlsim as dml
from dmlsim._core import config

FEATURE_LEVELS = tuple(int(v) for v in dml.DML_FEATURE_LEVEL)
MAX_LEVEL = max(FEATURE_LEVELS)

DEFAULT, UPLOAD, READBACK = (dml.D3D12_HEAP_TYPE_DEFAULT, dml.D3D12_HEAP_TYPE_UPLOAD,
                             dml.D3D12_HEAP_TYPE_READBACK)
UAV = dml.D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS
NONE = dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_NONE, None)

UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
NP_OF_DML = {int(getattr(dml, "DML_TENSOR_DATA_TYPE_" + np.dtype(t).name.upper())): t
             for t in (np.float32, np.float16, np.float64, np.uint8, np.uint16, np.uint32,
                       np.uint64, np.int8, np.int16, np.int32, np.int64)}
NP_OF_SHORT = {dml.DML_TENSOR_DATA_TYPE(k).name.replace("DML_TENSOR_DATA_TYPE_", ""): np.dtype(v)
               for k, v in NP_OF_DML.items()}


# ---- process-wide settings ---------------------------------------------------------------

@contextlib.contextmanager
def feature_level(level):
    """Emulate ``level`` for devices created inside the block; restore the old level after."""
    old = config.settings.feature_level
    dml.set_feature_level(level)
    try:
        yield
    finally:
        dml.set_feature_level(old)


@contextlib.contextmanager
def strict_mode(on=True):
    """``dmlsim.set_strict(on)`` inside the block; the previous setting is restored after."""
    old = config.settings.strict
    dml.set_strict(on)
    try:
        yield
    finally:
        dml.set_strict(old)


# ---- comparisons -------------------------------------------------------------------------

def bits(a) -> np.ndarray:
    """The bit patterns of ``a`` as unsigned integers of the same width."""
    a = np.ascontiguousarray(a)
    return a.view(UNSIGNED[a.dtype.itemsize])


def assert_bits_equal(actual, expected, what=""):
    """Same dtype, same shape, same bits in every element."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    bad = bits(actual) != bits(expected)
    if bad.any():
        idx = np.argwhere(bad)[:5].tolist()
        raise AssertionError(f"{what}: {int(bad.sum())} element(s) differ, first at {idx}: "
                             f"got {actual[bad][:5]!r} (bits {bits(actual)[bad][:5]!r}), expected "
                             f"{expected[bad][:5]!r} (bits {bits(expected)[bad][:5]!r})")


def _ordered(a) -> np.ndarray:
    """Floats mapped to integers in value order; -0.0 and +0.0 both map to 0."""
    b = bits(a).astype(np.int64) if a.dtype.itemsize < 8 else bits(a).view(np.int64)
    width = a.dtype.itemsize * 8
    sign = np.int64(1) << np.int64(width - 1) if width < 64 else np.int64(-2**63)
    mag = b & ~sign if width < 64 else b & np.int64(2**63 - 1)
    negative = (b & sign) != 0
    return np.where(negative, -mag, mag)


def ulp_distance(a, b) -> np.ndarray:
    """Distance in units in the last place between same-typed float arrays (Python ints)."""
    a, b = np.asarray(a), np.asarray(b)
    oa, ob = _ordered(a), _ordered(b)
    return np.abs(oa.astype(object) - ob.astype(object)).astype(np.float64)


def assert_float_close(actual, expected, ulp=0, what=""):
    """NaN exactly where expected is NaN; elsewhere at most ``ulp`` ULP apart. With ``ulp=0``
    the bits must be identical, so the sign of zero counts; infinities must match exactly."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    nan_a, nan_e = np.isnan(actual), np.isnan(expected)
    assert (nan_a == nan_e).all(), (f"{what}: NaN positions differ: got {actual[nan_a != nan_e]!r}"
                                    f", expected {expected[nan_a != nan_e]!r}")
    keep = ~nan_e
    a, e = actual[keep], expected[keep]
    if ulp == 0:
        bad = bits(a) != bits(e)
    else:
        inf = np.isinf(e) | np.isinf(a)
        bad = (inf & (a != e)) | (~inf & (ulp_distance(a, e) > ulp))
    if bad.any():
        raise AssertionError(f"{what}: {int(bad.sum())} element(s) off by more than {ulp} ULP: "
                             f"got {a[bad][:5]!r}, expected {e[bad][:5]!r}")


def tolerance(opdef, short_type: str, default: int) -> int:
    """The ULP tolerance for ``short_type`` ('FLOAT32'): OperatorDef.ulp overrides ``default``
    (keys may be 'FLOAT32', 'DML_TENSOR_DATA_TYPE_FLOAT32' or 'float32')."""
    ulp = getattr(opdef, "ulp", None) or {}
    for key in (short_type, "DML_TENSOR_DATA_TYPE_" + short_type, short_type.lower()):
        if key in ulp:
            return int(ulp[key])
    return default


# ---- building descs and bindings ---------------------------------------------------------

def tensor(dtype, sizes, strides=None, flags=0, total=None):
    """DML_TENSOR_DESC of NumPy ``dtype`` and ``sizes`` (``dmlsim.tensor_desc``)."""
    return dml.tensor_desc(np.dtype(dtype), sizes=list(sizes), strides=strides, flags=flags,
                           total_bytes=total)


def binding(buf, offset=0, size=None):
    """DML_BINDING_DESC of type BUFFER over ``buf`` bytes [offset, offset + size)."""
    if size is None:
        size = buf.GetDesc().Width - offset
    return dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER,
                                dml.DML_BUFFER_BINDING(buf, offset, size))


def array_binding(*bufs):
    """DML_BINDING_DESC of type BUFFER_ARRAY; each item a resource, (resource, offset, size)
    or None."""
    items = []
    for b in bufs:
        if b is None:
            items.append(None)
        elif isinstance(b, tuple):
            items.append(dml.DML_BUFFER_BINDING(*b))
        else:
            items.append(dml.DML_BUFFER_BINDING(b, 0, b.GetDesc().Width))
    return dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER_ARRAY,
                                dml.DML_BUFFER_ARRAY_BINDING(len(items), items))


def example_desc(name, inputs: dict, outputs: dict, attrs: dict = None, owned=(), strides=None):
    """(DML_OPERATOR_DESC, flattened input arrays, flattened expected outputs) for operator
    ``name`` from arrays keyed by field name (an Example's shape). Output descs take their
    DataType and Sizes from the ``outputs`` arrays; an output given as None gets the desc the
    operator's shape rule infers (``dmlsim.infer_outputs``) and None as its expected value;
    an expected array whose shape differs from the inferred one is reshaped to it. ``attrs``
    go into the desc as given (``dmlsim.operator_desc`` conventions); ``owned`` input fields
    get DML_TENSOR_FLAG_OWNED_BY_DML; ``strides`` ({field: element strides}) make strided
    descs of the same values. Tensor-array fields take lists; a missing optional tensor is
    None in the flattened lists (its binding slot stays)."""
    from dmlsim._schema.operators_generated import OPERATORS
    schema = OPERATORS[name if name.startswith("DML_OPERATOR_") else "DML_OPERATOR_" + name]
    types = {f["name"]: f.get("schema_type") for f in schema["fields"]}
    strides = strides or {}

    def desc_of(field, value):
        flags = dml.DML_TENSOR_FLAG_OWNED_BY_DML if field in owned else 0
        st = strides.get(field)
        if st is None and not flags:
            return value
        return dml.tensor_desc(value, strides=st, flags=flags)

    fields, flat = {}, {"inputs": [], "outputs": []}
    unknown = set(inputs) - set(schema["inputs"]) | set(outputs) - set(schema["outputs"])
    assert not unknown, f"{schema['name']}: {sorted(unknown)} are not tensor fields"
    for field in schema["inputs"]:
        value = inputs.get(field)
        if types[field] == "tensor_desc_array":
            value = [np.asarray(v) for v in (value or [])]
            fields[field] = value
            flat["inputs"].extend(value)
        else:
            if value is not None:
                fields[field] = desc_of(field, np.asarray(value))
            flat["inputs"].append(None if value is None else np.asarray(value))
    fields.update(attrs or {})
    desc = dml.operator_desc(schema["name"], **fields)  # infers the required outputs
    try:
        inferred = dml.infer_outputs(desc)
    except dml.HResultError:
        inferred = {}
    for field in schema["outputs"]:
        value = outputs.get(field)
        if types[field] == "tensor_desc_array":
            values = [np.asarray(v) for v in (value or [])]
            shapes = [tuple(t.Desc.Sizes) for t in inferred.get(field, [])]
            if len(shapes) != len(values):
                shapes = [v.shape for v in values]
            values = [v.reshape(sh) if v.size == int(np.prod(sh)) else v
                      for v, sh in zip(values, shapes)]
            setattr(desc.Desc, field, [desc_of(field, v) if field in strides else
                                       dml.tensor_desc(v) for v in values])
            flat["outputs"].extend(values)
            continue
        if value is None:
            flat["outputs"].append(None)
            continue
        value = np.asarray(value)
        if field in inferred:
            sizes = tuple(inferred[field].Desc.Sizes)
            if value.shape != sizes and value.size == int(np.prod(sizes)):
                value = value.reshape(sizes)  # the example wrote it flat
        setattr(desc.Desc, field, desc_of(field, value) if field in strides else
                dml.tensor_desc(value))
        flat["outputs"].append(value)
    return desc, flat["inputs"], flat["outputs"]


def as_bytes(data) -> np.ndarray:
    return np.ascontiguousarray(data).reshape(-1).view(np.uint8)


# ---- the environment ---------------------------------------------------------------------

class Env:
    """A D3D12 + DirectML device pair with a DIRECT queue, an open command list and a fence.

    ``level`` (default: the current setting) is the feature level the DirectML device
    emulates; ``dml_flags`` are DML_CREATE_DEVICE_FLAGS.
    """

    def __init__(self, level=None, dml_flags=0):
        self.d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
        with feature_level(level if level is not None else config.settings.feature_level):
            self.dml = dml.DMLCreateDevice(self.d3d, dml_flags)
        self.queue = self.d3d.CreateCommandQueue(
            dml.D3D12_COMMAND_QUEUE_DESC(dml.D3D12_COMMAND_LIST_TYPE_DIRECT))
        self.alloc = self.d3d.CreateCommandAllocator(dml.D3D12_COMMAND_LIST_TYPE_DIRECT)
        self.cl = self.d3d.CreateCommandList(0, dml.D3D12_COMMAND_LIST_TYPE_DIRECT, self.alloc)
        self.fence = self.d3d.CreateFence(0, dml.D3D12_FENCE_FLAG_NONE)
        self.fence_value = 0
        self.recorder = self.dml.CreateCommandRecorder()
        self.keep = []  # upload buffers and heaps that recorded work still uses

    # resources -------------------------------------------------------------------------------
    def buffer(self, size, heap=DEFAULT, flags=None, state=None):
        """A committed buffer: DEFAULT heaps get ALLOW_UNORDERED_ACCESS and start in
        UNORDERED_ACCESS; UPLOAD starts in GENERIC_READ, READBACK in COPY_DEST."""
        if flags is None:
            flags = UAV if heap == DEFAULT else 0
        if state is None:
            state = {DEFAULT: dml.D3D12_RESOURCE_STATE_UNORDERED_ACCESS,
                     UPLOAD: dml.D3D12_RESOURCE_STATE_GENERIC_READ,
                     READBACK: dml.D3D12_RESOURCE_STATE_COPY_DEST}[heap]
        return self.d3d.CreateCommittedResource(
            dml.CD3DX12_HEAP_PROPERTIES(heap), dml.D3D12_HEAP_FLAG_NONE,
            dml.CD3DX12_RESOURCE_DESC.Buffer(size, flags), state, None)

    def upload_buffer(self, data):
        """An UPLOAD buffer holding ``data``'s bytes (at least 4 bytes wide)."""
        raw = as_bytes(data)
        up = self.buffer(max(4, raw.shape[0]), UPLOAD)
        up.Map(0, None)[:raw.shape[0]] = raw
        up.Unmap(0, None)
        return up

    def upload(self, buf, data, offset=0):
        """Record a copy of ``data``'s bytes into ``buf`` at ``offset`` (runs at flush)."""
        raw = as_bytes(data)
        up = self.upload_buffer(raw)
        self.keep.append(up)
        self.cl.CopyBufferRegion(buf, offset, up, 0, raw.shape[0])
        return buf

    def device_buffer(self, data, size=None, offset=0):
        """A DEFAULT (UAV) buffer of ``size`` bytes (default: the data's size rounded to 4)
        holding ``data`` at ``offset``; the upload runs at the next flush."""
        raw = as_bytes(data)
        width = size if size is not None else max(4, (offset + raw.shape[0] + 3) // 4 * 4)
        buf = self.buffer(width)
        if raw.shape[0]:
            self.upload(buf, raw, offset)
        return buf

    def read(self, buf, offset=0, size=None, flush=True) -> np.ndarray:
        """The bytes of ``buf`` [offset, offset + size) as a host uint8 array (flushes)."""
        if size is None:
            size = buf.GetDesc().Width - offset
        rb = self.buffer(size, READBACK)
        self.cl.CopyBufferRegion(rb, 0, buf, offset, size)
        if flush:
            self.flush()
        data = rb.Map(0, None)[:size].copy()
        rb.Unmap(0, None)
        return data

    def read_as(self, buf, dtype, count=None, offset=0):
        dtype = np.dtype(dtype)
        size = None if count is None else count * dtype.itemsize
        raw = self.read(buf, offset, size)
        return raw[:raw.shape[0] // dtype.itemsize * dtype.itemsize].view(dtype)

    # execution ---------------------------------------------------------------------------------
    def submit(self, *lists):
        """Close the env's list (or run ``lists``), execute, signal; returns the fence value."""
        if not lists:
            self.cl.Close()
            lists = (self.cl,)
        self.queue.ExecuteCommandLists(len(lists), list(lists))
        self.fence_value += 1
        self.queue.Signal(self.fence, self.fence_value)
        return self.fence_value

    def flush(self, check=True):
        """Close, execute, wait for the fence, reset allocator and list (open again)."""
        value = self.submit()
        self.fence.SetEventOnCompletion(value, None)
        self.alloc.Reset()
        self.cl.Reset(self.alloc, None)
        self.keep.clear()
        if check:
            self.check()

    def check(self):
        """Fail with the removal message if either device was removed."""
        for dev in (self.dml, self.d3d):
            reason = dev.GetDeviceRemovedReason()
            assert reason == dml.S_OK, (f"device removed ({dml.hresult_name(reason)}): "
                                        f"{dev._core.removed_message}")

    # DirectML --------------------------------------------------------------------------------
    def heap(self, count):
        return self.d3d.CreateDescriptorHeap(dml.D3D12_DESCRIPTOR_HEAP_DESC(
            dml.D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV, max(1, count),
            dml.D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE))

    def table(self, dispatchable, heap=None, start=0):
        """A binding table over a new (or the given) heap, from descriptor ``start``."""
        count = dispatchable.GetBindingProperties().RequiredDescriptorCount
        if heap is None:
            heap = self.heap(start + count)
        inc = self.d3d.GetDescriptorHandleIncrementSize(dml.D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV)
        desc = dml.DML_BINDING_TABLE_DESC(
            dispatchable, dml.CD3DX12_CPU_DESCRIPTOR_HANDLE(
                heap.GetCPUDescriptorHandleForHeapStart(), start, inc),
            dml.CD3DX12_GPU_DESCRIPTOR_HANDLE(heap.GetGPUDescriptorHandleForHeapStart(), start,
                                              inc),
            count)
        return self.dml.CreateBindingTable(desc), heap, desc

    def compile(self, op_desc, flags=dml.DML_EXECUTION_FLAG_NONE, owned=None, initialize=True):
        """CreateOperator + CompileOperator, then (``initialize``) record and run an operator
        initializer. ``owned``: initializer BUFFER_ARRAY items for OWNED_BY_DML inputs (see
        :func:`array_binding`). Returns the compiled operator; ``.persistent`` is its
        persistent buffer (or None)."""
        op = self.dml.CreateOperator(op_desc)
        compiled = self.dml.CompileOperator(op, flags)
        size = compiled.GetBindingProperties().PersistentResourceSize
        persistent = self.buffer(size) if size else None
        compiled._test_persistent = persistent
        if initialize:
            init = self.dml.CreateOperatorInitializer(1, [compiled])
            table, heap, _ = self.table(init)
            if owned is not None:
                table.BindInputs(1, [owned])
            if persistent is not None:
                table.BindOutputs(1, [binding(persistent)])
            self.cl.SetDescriptorHeaps(1, [heap])
            self.recorder.RecordDispatch(self.cl, init, table)
            self.keep.append(heap)
            self.flush()
        return compiled

    def dispatch(self, compiled, inputs, outputs, persistent="auto", flush=True):
        """Bind ``inputs``/``outputs`` (DML_BINDING_DESCs, NONE for unbound) and the persistent
        resource (default: the one :meth:`compile` made), record the dispatch, and flush."""
        table, heap, _ = self.table(compiled)
        table.BindInputs(len(inputs), list(inputs))
        table.BindOutputs(len(outputs), list(outputs))
        if persistent == "auto":
            persistent = getattr(compiled, "_test_persistent", None)
        if persistent is not None:
            table.BindPersistentResource(binding(persistent))
        self.cl.SetDescriptorHeaps(1, [heap])
        self.recorder.RecordDispatch(self.cl, compiled, table)
        self.cl.ResourceBarrier(1, [dml.CD3DX12_RESOURCE_BARRIER.UAV(None)])
        self.keep.append(heap)
        if flush:
            self.flush()
        return table


@pytest.fixture
def env():
    """A fresh Env at the current feature level (its device may be removed by the test)."""
    return Env()


@pytest.fixture(scope="session")
def shared_env():
    """One Env for the session at DML_FEATURE_LEVEL_6_4; tests must not remove its device."""
    e = Env(level=MAX_LEVEL)
    yield e
    e.check()


def llm_feeds(tokens, past=0, buf=None, kv=None, layers=2, kv_heads=2, head_size=16):
    """The feeds of tests/models/genai's decoders (genai_config.json's names): one batch row of
    ``tokens`` after ``past`` positions; the KV cache is ``kv`` ({output name: array} of the
    previous step: present.L.key becomes past_key_values.L.key), else zeros of ``buf``
    positions (0: a growing cache's first step)."""
    t = len(tokens)
    feeds = {"input_ids": np.array([tokens], np.int64),
             "attention_mask": np.ones((1, past + t), np.int64),
             "position_ids": np.arange(past, past + t, dtype=np.int64)[None]}
    for layer in range(layers):
        for name in ("key", "value"):
            feeds[f"past_key_values.{layer}.{name}"] = kv[f"present.{layer}.{name}"] if kv \
                else np.zeros((1, kv_heads, buf or 0, head_size), np.float16)
    return feeds


def ort_optimized(model, tmp_path):
    """``model`` (an onnx ModelProto) as ONNX Runtime optimizes it at ORT_ENABLE_BASIC, read
    back from the file its CPU session writes (``optimized_model_filepath``)."""
    import onnx
    import onnxruntime as ort
    o = ort.SessionOptions()
    o.optimized_model_filepath = str(tmp_path / "opt.onnx")
    o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    o.log_severity_level = 3
    ort.InferenceSession(model.SerializeToString(), o, providers=["CPUExecutionProvider"])
    return onnx.load(str(tmp_path / "opt.onnx"))

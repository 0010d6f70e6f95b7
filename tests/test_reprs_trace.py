"""Notebook reprs (docs/getting_started.md) and dmlsim.trace(): what a person sees must name the
objects, ranges and records the program made; a trace must order queue items as the queues
processed them and export valid Chrome trace-event JSON."""
from __future__ import annotations

import json

import jsonschema
import numpy as np
import pytest

import dmlsim as dml
from dmlsim._core.config import settings
from dmlsim._pythonic.reprs import binding_rows


@pytest.fixture(scope="module")
def d3d():
    return dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)


def _buffer(d3d, name, heap_type, size=16):
    flags = dml.D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS if heap_type == 1 else 0
    state = {1: dml.D3D12_RESOURCE_STATE_COPY_DEST, 2: dml.D3D12_RESOURCE_STATE_GENERIC_READ,
             3: dml.D3D12_RESOURCE_STATE_COPY_DEST}[heap_type]
    r = d3d.CreateCommittedResource(dml.CD3DX12_HEAP_PROPERTIES(heap_type), 0,
                                    dml.CD3DX12_RESOURCE_DESC.Buffer(size, flags), state, None)
    r.SetName(name)
    return r


def _binding(r):
    return dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER, dml.DML_BUFFER_BINDING(r, 16, 16))


@pytest.fixture(scope="module")
def program(d3d):
    """An ELEMENT_WISE_ADD bound into a heap and recorded into a list (nothing executes)."""
    dev = dml.DMLCreateDevice(d3d, dml.DML_CREATE_DEVICE_FLAG_NONE)
    a = np.zeros((2, 2), np.float32)
    desc = dml.operator_desc("ELEMENT_WISE_ADD", ATensor=a, BTensor=a, OutputTensor=a)
    compiled = dev.CompileOperator(dev.CreateOperator(desc), dml.DML_EXECUTION_FLAG_NONE)
    n = compiled.GetBindingProperties().RequiredDescriptorCount
    heap = d3d.CreateDescriptorHeap(dml.D3D12_DESCRIPTOR_HEAP_DESC(
        dml.D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV, n + 1,
        dml.D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE))
    heap.SetName("heap")
    inc = d3d.GetDescriptorHandleIncrementSize(dml.D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV)
    cpu = heap.GetCPUDescriptorHandleForHeapStart() + inc  # the table starts at descriptor 1
    gpu = heap.GetGPUDescriptorHandleForHeapStart() + inc
    table = dev.CreateBindingTable(dml.DML_BINDING_TABLE_DESC(compiled, cpu, gpu, n))
    x, y, out = (_buffer(d3d, name, 1, 32) for name in ("x<&>", "y", "out"))
    up = _buffer(d3d, "up", 2)
    up.Map(0, None)[:] = np.arange(16, dtype=np.uint8)
    table.BindInputs([_binding(x), _binding(y)])
    table.BindOutputs([_binding(out)])
    cl = d3d.CreateCommandList(0, 0, d3d.CreateCommandAllocator(0), None)
    cl.SetName("main")
    cl.SetDescriptorHeaps([heap])
    cl.CopyBufferRegion(x, 16, up, 0, 16)
    cl.ResourceBarrier([dml.CD3DX12_RESOURCE_BARRIER.Transition(
        x, dml.D3D12_RESOURCE_STATE_COPY_DEST, dml.D3D12_RESOURCE_STATE_UNORDERED_ACCESS)])
    cl.ResourceBarrier([dml.CD3DX12_RESOURCE_BARRIER.UAV(None)])
    dev.CreateCommandRecorder().RecordDispatch(cl, compiled, table)
    return dict(dev=dev, desc=desc, compiled=compiled, heap=heap, table=table, x=x, up=up, cl=cl)


def test_resource_repr_shows_heap_state_va_and_upload_bytes(program):
    up, x = program["up"], program["x"]
    assert repr(up) == f"<ID3D12Resource 'up' UPLOAD 16 bytes GENERIC_READ " \
                       f"va=0x{up.GetGPUVirtualAddress():X}>"
    html = up._repr_html_()
    assert "00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f" in html
    xh = x._repr_html_()
    assert "&#x27;x&lt;&amp;&gt;&#x27;" in xh and "x<&>" not in xh  # escaped
    assert "DEFAULT" in xh and "32 bytes" in xh and "COPY_DEST" in xh and "first" not in xh


def test_heap_repr_lists_non_null_descriptors(program):
    assert repr(program["heap"]) == \
        "<ID3D12DescriptorHeap 'heap' CBV_SRV_UAV, 6 descriptors, shader-visible, 3 set>"
    html = program["heap"]._repr_html_()
    # the table starts at descriptor 1: inputs at 1 and 2, the output at 3; bytes [16, 32)
    for slot, name in ((1, "&#x27;x&lt;&amp;&gt;&#x27;"), (2, "&#x27;y&#x27;"),
                       (3, "&#x27;out&#x27;")):
        assert f"<td style='padding:0 6px'>{slot}</td><td style='padding:0 6px'>{name}</td>" \
               f"<td style='padding:0 6px'>[16, 32)</td>" in html
    assert html.count("<tr>") == 4  # header + 3 descriptors


def test_binding_table_repr_names_slots_buffers_ranges_and_tensors(program):
    t = program["table"]
    assert repr(t) == "<IDMLBindingTable for compiled operator DML_OPERATOR_ELEMENT_WISE_ADD: " \
                      "3/5 slots bound>"
    rows = [(r[0], r[1], r[2], r[3] and r[3].buffer.name, r[3] and (r[3].offset, r[3].size))
            for r in binding_rows(t._core)]
    assert rows == [(1, "input", "ATensor", "x<&>", (16, 16)),
                    (2, "input", "BTensor", "y", (16, 16)),
                    (3, "output", "OutputTensor", "out", (16, 16)),
                    (4, "temporary", "", None, None), (5, "persistent", "", None, None)]
    html = t._repr_html_()
    assert html.count("FLOAT32 [2, 2]") == 3 and "[16, 32)" in html
    assert dml.IDMLBindingTable(program["dev"], None)._repr_html_().count("empty") == 1


def test_initializer_table_repr(program, d3d):
    dev, compiled, heap = program["dev"], program["compiled"], program["heap"]
    init = dev.CreateOperatorInitializer([compiled])
    n = init.GetBindingProperties().RequiredDescriptorCount
    t = dev.CreateBindingTable(dml.DML_BINDING_TABLE_DESC(
        init, heap.GetCPUDescriptorHandleForHeapStart(), heap.GetGPUDescriptorHandleForHeapStart(),
        n))
    kinds = [(r[1], r[2]) for r in binding_rows(t._core)]
    assert kinds == [("input", "ELEMENT_WISE_ADD.ATensor"), ("input", "ELEMENT_WISE_ADD.BTensor"),
                     ("persistent output", "ELEMENT_WISE_ADD"), ("temporary", "")]
    assert "operator initializer of DML_OPERATOR_ELEMENT_WISE_ADD: 0/4" in repr(t)


def test_command_list_repr_names_records_and_sticky_error(program, d3d):
    cl = program["cl"]
    html = cl._repr_html_()
    for text in ("SetDescriptorHeaps &#x27;heap&#x27;",
                 "CopyBufferRegion 16 bytes &#x27;up&#x27; -&gt; &#x27;x&lt;&amp;&gt;&#x27;+16",
                 "ResourceBarrier Transition &#x27;x&lt;&amp;&gt;&#x27; COPY_DEST -&gt; "
                 "UNORDERED_ACCESS", "ResourceBarrier UAV<",
                 "RecordDispatch DML_OPERATOR_ELEMENT_WISE_ADD"):
        assert text in html, text
    assert repr(cl) == "<ID3D12GraphicsCommandList 'main' open, 5 records>"
    bad = d3d.CreateCommandList(0, 0, d3d.CreateCommandAllocator(0), None)
    bad.CopyBufferRegion(program["x"], 0, program["x"], 0, 4)
    assert repr(bad) == "<ID3D12GraphicsCommandList open, 0 records, error: ID3D12GraphicsCommand" \
                        "List::CopyBufferRegion: source and destination are the same resource>"


def test_tensor_desc_repr(program):
    t = dml.tensor_desc(np.float16, sizes=[2, 3], strides=[0, 1],
                        flags=dml.DML_TENSOR_FLAG_OWNED_BY_DML)
    html = t._repr_html_()
    # total bytes: elements 0..(1*0 + 2*1) = 3 FLOAT16 = 6 bytes, rounded up to 4: 8
    for text in ("FLOAT16", "[2, 3]", "[0, 1]", "8", "OWNED_BY_DML"):
        assert f"<td style='padding:0 6px'>{text}</td>" in html, text
    packed = program["desc"].Desc.ATensor.Desc._repr_html_()
    assert "packed [2, 1]" in packed and ">16<" in packed and ">NONE<" in packed


# ---- trace --------------------------------------------------------------------------------

CHROME_SCHEMA = {
    "type": "object", "required": ["traceEvents"],
    "properties": {"traceEvents": {"type": "array", "items": {
        "type": "object", "required": ["name", "ph", "pid", "tid", "args"],
        "properties": {"name": {"type": "string"}, "ph": {"enum": ["X", "M"]},
                       "pid": {"type": "integer"}, "tid": {"type": "integer"},
                       "args": {"type": "object"}},
        "if": {"properties": {"ph": {"const": "X"}}},
        "then": {"required": ["ts", "dur"],
                 "properties": {"ts": {"type": "number", "minimum": 0},
                                "dur": {"type": "number", "minimum": 0}}}}}}}


def _copy_list(d3d, name, dst, src):
    cl = d3d.CreateCommandList(0, 0, d3d.CreateCommandAllocator(0), None)
    cl.SetName(name)
    cl.CopyBufferRegion(dst, 0, src, 0, 16)
    cl.Close()
    return cl


@pytest.fixture(scope="module")
def traced(d3d):
    """Queue B waits for queue A's signal, then copies what A uploaded to a readback buffer."""
    qa, qb = (d3d.CreateCommandQueue(dml.D3D12_COMMAND_QUEUE_DESC(0)) for _ in range(2))
    qa.SetName("A")
    qb.SetName("B")
    f, done = d3d.CreateFence(0, 0), d3d.CreateFence(0, 0)
    f.SetName("f")
    up, x, rb = _buffer(d3d, "up", 2), _buffer(d3d, "x", 1), _buffer(d3d, "rb", 3)
    up.Map(0, None)[:] = np.arange(100, 116, dtype=np.uint8)
    la, lb = _copy_list(d3d, "upload", x, up), _copy_list(d3d, "readback", rb, x)
    empty = d3d.CreateCommandList(0, 0, d3d.CreateCommandAllocator(0), None)
    empty.Close()
    qa.ExecuteCommandLists([la])  # before the trace: not recorded
    assert settings.trace is None
    with dml.trace() as t:
        assert settings.trace is not None
        qb.Wait(f, 1)
        qb.ExecuteCommandLists([lb])
        qb.ExecuteCommandLists([empty])
        qb.Signal(done, 1)
        assert t.events == []  # everything on B is held behind the Wait
        qa.ExecuteCommandLists([la])
        qa.Signal(f, 1)
        done.SetEventOnCompletion(1, None)
        f.SetEventOnCompletion(1, None)
    assert settings.trace is None
    n = len(t.events)
    qa.ExecuteCommandLists([la])  # after the trace: not recorded
    qa.Signal(f, 2)
    f.SetEventOnCompletion(2, None)
    assert len(t.events) == n
    return t, rb


def test_trace_orders_items_as_the_queues_processed_them(traced):
    t, rb = traced
    assert [(e.queue, e.kind, e.name) for e in t.events] == [
        ("A", "execute", "ExecuteCommandLists 'upload'"), ("A", "signal", "Signal 'f' 1"),
        ("B", "wait", "Wait 'f' 1"), ("B", "execute", "ExecuteCommandLists 'readback'"),
        ("B", "execute", "ExecuteCommandLists 'list 0'"), ("B", "signal", "Signal 'fence' 1")]
    a_exec, a_sig, b_wait, b_exec, b_empty, _ = t.events
    # A's Signal released B: B's items ran inside A's Signal span
    assert a_sig.start_ns <= b_wait.start_ns <= b_exec.end_ns <= b_empty.end_ns <= a_sig.end_ns
    assert a_exec.args["records"] == [["CopyBufferRegion 16 bytes 'up' -> 'x'"]]
    # the fence waits observed every execution complete ('readback' through the later 'list 0':
    # a queue completes in order)
    for e in (a_exec, b_exec, b_empty):
        assert e.end_ns <= e.complete_ns
    assert b_exec.complete_ns == b_empty.complete_ns
    assert (rb.Map(0, None) == np.arange(100, 116)).all()  # tracing changed nothing


def test_trace_exports_valid_chrome_json(traced, tmp_path):
    t, _ = traced
    path = tmp_path / "trace.json"
    doc = t.to_chrome(path)
    assert json.loads(path.read_text()) == doc
    jsonschema.validate(doc, CHROME_SCHEMA)
    threads = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"]
               if e["name"] == "thread_name"}
    assert sorted(threads.values()) == ["A", "B"]
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert [threads[e["tid"]] for e in xs] == ["A", "A", "B", "B", "B", "B"]
    assert [e["ts"] for e in xs] == sorted(e["ts"] for e in xs)
    assert xs[0]["args"]["observed_complete_us"] >= xs[0]["ts"] + xs[0]["dur"]
    assert xs[1]["args"] == {"fence": "f", "value": 1, "kind": "signal"}


def test_trace_plot(traced):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t, _ = traced
    ax = t.plot()
    assert [tick.get_text() for tick in ax.get_yticklabels()] == ["A", "B"]
    assert len(ax.collections) == len(t.events)  # one bar per item
    assert ax.get_xlabel() == "host time since the trace started (ms)"
    last_ms = (max(max(e.end_ns, e.complete_ns or 0) for e in t.events) - t.t0) / 1e6
    assert last_ms * 0.99 <= ax.get_xlim()[1] <= last_ms * 1.5  # bars in ms, not µs
    plt.close(ax.figure)


def test_operators_and_compiled_graphs_say_what_they_compute():
    from dmlsim import dmlx
    dev = dml.DMLCreateDevice(dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0), 0)
    t = dml.tensor_desc(np.float32, [2, 3])
    op = dev.CreateOperator(dml.DML_OPERATOR_DESC(
        dml.DML_OPERATOR_ELEMENT_WISE_IDENTITY, dml.DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC(t, t)))
    assert repr(op) == ("<IDMLOperator DML_OPERATOR_ELEMENT_WISE_IDENTITY: InputTensor FLOAT32 "
                        "[2, 3] -> OutputTensor FLOAT32 [2, 3]>")
    assert repr(dev.CompileOperator(op, 0)).startswith(
        "<IDMLCompiledOperator DML_OPERATOR_ELEMENT_WISE_IDENTITY, flags 0x0: InputTensor")
    g = dmlx.Graph(dev)
    a = dmlx.InputTensor(g, 0, dmlx.TensorDesc(dml.DML_TENSOR_DATA_TYPE_FLOAT16, 0, [1, 1, 2, 3]))
    assert repr(g.Compile(0, [a * 2.0, a + 1.0])).startswith(
        "<IDMLCompiledOperator compiled graph (2 nodes), flags 0x0: input 0 (graph input 0) "
        "FLOAT16 [1, 1, 2, 3] -> output 0")
    assert repr(g.compile([a * 2.0])) == \
        "<dmlx.Compiled input 0 FLOAT16 [1, 1, 2, 3] -> output 0 FLOAT16 [1, 1, 2, 3]>"


def test_trace_is_exclusive_and_always_switched_off():
    with pytest.raises(ZeroDivisionError):
        with dml.trace():
            with pytest.raises(RuntimeError, match="^dmlsim.trace: another trace"):
                dml.trace().__enter__()
            1 / 0
    assert settings.trace is None

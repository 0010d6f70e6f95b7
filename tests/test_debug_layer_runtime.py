"""The debug layer, continued: CPU/GPU synchronisation, never-written memory, initialization,
binding mistakes, device removal, leaks, the info queue API, the demo and the generated
message catalogue (see tests/test_debug_layer.py for the rest)."""

from __future__ import annotations

from debug_rig import *  # noqa: F401,F403  (the rig, its constants and fixtures)


# ---- 6. CPU access without a fence wait ----------------------------------------------------

def test_map_before_the_fence_wait(rig):
    a = rig.buf("A", state=COPY_DEST)
    rig.upload(a)
    rig.barrier(T.Transition(a, COPY_DEST, COPY_SOURCE))
    rb = rig.buf("readback", heap=READBACK)
    rig.cl.CopyResource(rb, a)
    rig.submit()
    rb.Map(0, None)  # no wait yet
    rb.Unmap(0, dml.D3D12_RANGE(0, 0))
    assert rig.text("CPU_ACCESS_BEFORE_GPU_COMPLETION") == (
        "ID3D12Resource::Map: the CPU may read 'readback' bytes [0, 16) (the read range), but "
        "command queue 'queue', command list 'list', command 2 (copy of 16 bytes from 'A' to "
        "'readback') writes 'readback' bytes [0, 16) on the GPU and the CPU has not waited for "
        "that "
        "work: wait for a fence signaled after it (SetEventOnCompletion + WaitForSingleObject, or "
        "GetCompletedValue) before touching the buffer.")
    rig.iq.ClearStoredMessages()
    event = dml.CreateEvent()
    rig.fence.SetEventOnCompletion(rig.value, event)
    dml.WaitForSingleObject(event, dml.INFINITE)
    rb.Map(0, dml.D3D12_RANGE(0, 16))
    rb.Unmap(0, dml.D3D12_RANGE(0, 0))
    assert rig.ids() == []
    rig.reset()


def test_upload_buffer_rewritten_while_the_gpu_reads_it(rig):
    a = rig.buf("A", state=COPY_DEST)
    up = rig.upload(a)
    rig.submit()
    up.Map(0, dml.D3D12_RANGE(0, 0))  # no read: fine
    up.Unmap(0, dml.D3D12_RANGE(4, 8))  # wrote bytes the copy reads
    assert rig.ids() == ["CPU_ACCESS_BEFORE_GPU_COMPLETION"]
    assert rig.messages()[0].pDescription.startswith(
        "ID3D12Resource::Unmap: the CPU wrote 'upload' bytes [4, 8) (the written range), but "
        "command queue 'queue', command list 'list', command 0 (copy of 16 bytes from 'upload' "
        "to 'A') reads 'upload' bytes [0, 16) on the GPU")
    rig.wait()
    rig.reset()
    rig.iq.ClearStoredMessages()
    up.Map(0, None)
    up.Unmap(0, None)
    assert rig.ids() == []


def test_get_completed_value_counts_as_a_wait(rig):
    rb = rig.buf("readback", heap=READBACK)
    a = rig.buf("A", state=COPY_DEST)
    rig.upload(a)
    rig.barrier(T.Transition(a, COPY_DEST, COPY_SOURCE))
    rig.cl.CopyResource(rb, a)
    rig.submit()
    while rig.fence.GetCompletedValue() < rig.value:
        pass
    rb.Map(0, None)
    rb.Unmap(0, None)
    assert rig.ids() == []
    rig.reset()


# ---- 7. never-written memory ---------------------------------------------------------------

def test_read_of_unwritten_memory_reported_once_per_range(rig):
    a = rig.buf("A", 32)
    rig.upload(a, np.ones(2, np.float32), offset=0)  # bytes [0, 8) only
    rig.barrier(T.Transition(a, COPY_DEST, UAV))  # promoted to COPY_DEST by the copy
    rig.dispatch(rig.id1, [bind(a, 0)], [bind(rig.buf("B"))], "t1")
    rig.dispatch(rig.id2, [bind(a, 0)], [bind(rig.buf("C"))], "t2")  # the same range again
    rig.flush()
    assert rig.ids() == ["READ_OF_UNWRITTEN_MEMORY"]
    m = rig.messages()[0]
    assert m.Severity == dml.D3D12_MESSAGE_SEVERITY_WARNING
    assert m.pDescription == (
        f"{ECL}, command 3 (RecordDispatch of DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled "
        "operator 'id1') with binding table 't1') reads input 0 (InputTensor) = 'A' bytes [0, 16), "
        "but bytes [8, 16) of 'A' were never written (no copy, dispatch or initializer wrote them "
        "since the resource was created); they read as zeros.")
    rig.iq.ClearStoredMessages()
    rig.dispatch(rig.id1, [bind(a, 16)], [bind(rig.buf("D"))], "t3")  # a new range
    rig.flush()
    assert rig.ids() == ["READ_OF_UNWRITTEN_MEMORY"]
    assert "but bytes [16, 32) of 'A' were never written" in rig.messages()[0].pDescription


# ---- 8. initialization ---------------------------------------------------------------------

def test_executed_before_initialization(fresh):
    op = fresh.compile("op", init=False)
    fresh.dispatch(op, [bind(fresh.buf("A"))], [bind(fresh.buf("B"))], "t")
    fresh.execute()
    assert fresh.ids() == ["DML_OPERATOR_NOT_INITIALIZED", "READ_OF_UNWRITTEN_MEMORY",
                           "DEVICE_REMOVAL_PROCESS_AT_FAULT"]
    assert fresh.text("DML_OPERATOR_NOT_INITIALIZED") == (
        f"{ECL}, command 1 (RecordDispatch of DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled "
        "operator 'op') with binding table 't'): the compiled operator executes before an operator "
        "initializer initialized it; record and execute an IDMLOperatorInitializer dispatch for it "
        "first.")
    assert fresh.d3d.GetDeviceRemovedReason() == dml.DXGI_ERROR_DEVICE_REMOVED
    assert fresh.text("DEVICE_REMOVAL_PROCESS_AT_FAULT").startswith(
        "ID3D12CommandQueue::ExecuteCommandLists: DML_OPERATOR_ELEMENT_WISE_IDENTITY: the compiled "
        "operator was executed before an operator initializer initialized it -> device removal "
        "has been triggered (DXGI_ERROR_DEVICE_REMOVED): GetDeviceRemovedReason returns "
        "DXGI_ERROR_DEVICE_REMOVED from now on")


def test_initialized_twice(fresh):
    op = fresh.compile("op")
    fresh.initialize(op, flush=False)
    fresh.execute()
    assert fresh.text("DML_OPERATOR_INITIALIZED_TWICE") == (
        "ID3D12CommandQueue::ExecuteCommandLists: command queue 'queue', command list 'list', "
        "command 1 (RecordDispatch of operator initializer 'init' (of "
        "DML_OPERATOR_ELEMENT_WISE_IDENTITY) with binding table 'init table'): "
        "DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled operator 'op') was already initialized; a "
        "compiled operator is initialized exactly once.")
    assert fresh.d3d.GetDeviceRemovedReason() == dml.DXGI_ERROR_DEVICE_REMOVED


def _owned_add(r):
    owned = dml.tensor_desc(F4, flags=dml.DML_TENSOR_FLAG_OWNED_BY_DML)
    op = r.compile("add", "ELEMENT_WISE_ADD", init=False, ATensor=F4, BTensor=owned,
                   OutputTensor=F4)
    size = op.GetBindingProperties().PersistentResourceSize
    weights, p1, p2 = r.buf("weights", state=COPY_DEST), r.buf("p1", size), r.buf("p2", size)
    r.upload(weights)
    r.barrier(T.Transition(weights, COPY_DEST, UAV))
    arr = dml.DML_BUFFER_ARRAY_BINDING(2, [None, dml.DML_BUFFER_BINDING(weights, 0, 16)])
    r.initialize(op, inputs=[dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER_ARRAY, arr)],
                 outputs=[bind(p1, 0, size)])
    return op, size, p1, p2


def test_persistent_resource_changed(fresh):
    op, size, p1, p2 = _owned_add(fresh)
    a = fresh.buf("A")
    fresh.upload(a)
    fresh.barrier(T.Transition(a, COPY_DEST, UAV))
    fresh.dispatch(op, [bind(a), dml.DML_BINDING_DESC(0, None)], [bind(fresh.buf("B"))], "t",
                   persistent=bind(p2, 0, size))
    fresh.flush()
    assert fresh.text("DML_PERSISTENT_RESOURCE_CHANGED") == (
        f"{ECL}, command 3 (RecordDispatch of DML_OPERATOR_ELEMENT_WISE_ADD (compiled operator "
        f"'add') with binding table 't'): the persistent resource bound at execution is 'p2' "
        f"bytes [0, {size}), but the operator's initializer wrote its OWNED_BY_DML data to 'p1' "
        f"bytes [0, {size}); bind the same buffer, offset and size as at initialization.")
    fresh.iq.ClearStoredMessages()
    fresh.upload(p1)  # overwrite the initializer's data
    fresh.flush()
    assert fresh.ids() == ["DML_PERSISTENT_RESOURCE_CHANGED"]
    assert "which overlaps the persistent resource of DML_OPERATOR_ELEMENT_WISE_ADD (compiled " \
           "operator 'add')" in fresh.messages()[0].pDescription


# ---- 9. binding mistakes -------------------------------------------------------------------

@pytest.mark.parametrize("mistake,expected", [
    ("size", "input 0 (InputTensor): the value of SizeInBytes is too small. 4 was provided, but "
             "16 was expected."),
    ("offset", "input 0 (InputTensor): the value of Offset is misaligned. 4 was provided, but it "
               "must be a multiple of 16."),
    ("count", "2 input bindings were provided, but DML_OPERATOR_ELEMENT_WISE_IDENTITY has 1 "
              "inputs (optional tensors keep their slot: bind DML_BINDING_TYPE_NONE)."),
    ("type", "input 0 (InputTensor): DML_BINDING_TYPE_BUFFER_ARRAY is only for operator "
             "initializers; a compiled operator takes DML_BINDING_TYPE_BUFFER"),
    ("range", "input 0 (InputTensor): the range [0, 32) is past the end of 'A', whose width is 16 "
              "bytes."),
    ("owned", "input 1 (BTensor): the tensor has DML_TENSOR_FLAG_OWNED_BY_DML, so it is bound only "
              "to the operator initializer; bind NONE for execution"),
])
def test_binding_mistakes(fresh, mistake, expected):
    a = fresh.buf("A")
    if mistake == "owned":
        owned = dml.tensor_desc(F4, flags=dml.DML_TENSOR_FLAG_OWNED_BY_DML)
        op = fresh.compile("op", "ELEMENT_WISE_ADD", init=False, ATensor=F4, BTensor=owned,
                           OutputTensor=F4)
        ins = [bind(a), bind(fresh.buf("W"))]
        name = "ELEMENT_WISE_ADD"
    else:
        op = fresh.compile("op", init=False)
        name = "ELEMENT_WISE_IDENTITY"
        ins = {"size": [bind(a, 0, 4)], "offset": [bind(fresh.buf("A32", 32), 4, 16)],
               "count": [bind(a), bind(a)], "range": [bind(a, 0, 32)],
               "type": [dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_BUFFER_ARRAY,
                                             dml.DML_BUFFER_ARRAY_BINDING(1, [None]))]}[mistake]
    t = fresh.table(op, "t")
    t.BindInputs(ins)
    assert fresh.text("DML_INVALID_BINDING") == (
        f"IDMLBindingTable::BindInputs: binding table 't' of DML_OPERATOR_{name} (compiled "
        f"operator 'op'): {expected}")
    assert fresh.dml.GetDeviceRemovedReason() == dml.E_INVALIDARG


def test_missing_binding_at_record(fresh):
    op = fresh.compile("op", init=False)
    t = fresh.table(op, "t")
    t.BindInputs([bind(fresh.buf("A"))])
    fresh.cl.SetDescriptorHeaps(1, [fresh.heap])
    fresh.rec.RecordDispatch(fresh.cl, op, t)
    assert fresh.text("DML_MISSING_BINDING").endswith(
        "binding table 't': required bindings are not set: output 0 (OutputTensor) (bind them "
        "before recording, or compile with DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE)")


# ---- 10. device removal --------------------------------------------------------------------

def test_every_removal_names_its_cause(debug_layer):
    # DirectML misuse: the DirectML device is removed, the D3D12 device is not.
    r = Rig()
    r.table(r.compile("op", init=False), "t").BindOutputs([bind(r.buf("B"), 0, 4)])
    assert r.dml.GetDeviceRemovedReason() == dml.E_INVALIDARG
    assert r.d3d.GetDeviceRemovedReason() == dml.S_OK
    assert r.ids() == ["DML_INVALID_BINDING", "DEVICE_REMOVAL_PROCESS_AT_FAULT"]
    assert r.text("DEVICE_REMOVAL_PROCESS_AT_FAULT").startswith(
        "IDMLBindingTable::BindOutputs: output 0 (OutputTensor): the value of SizeInBytes is too "
        "small. 4 was provided, but 16 was expected. -> DirectML device removal has been triggered "
        "(E_INVALIDARG): IDMLDevice::GetDeviceRemovedReason returns E_INVALIDARG from now on")
    # Executing an open command list removes the D3D12 device.
    r = Rig()
    r.queue.ExecuteCommandLists([r.cl])
    assert r.d3d.GetDeviceRemovedReason() == dml.DXGI_ERROR_INVALID_CALL
    assert r.dml.GetDeviceRemovedReason() == dml.DXGI_ERROR_INVALID_CALL
    assert r.ids() == ["EXECUTECOMMANDLISTS_OPENCOMMANDLIST", "DEVICE_REMOVAL_PROCESS_AT_FAULT"]
    assert r.text("DEVICE_REMOVAL_PROCESS_AT_FAULT") == (
        "ID3D12CommandQueue::ExecuteCommandLists: command list 0 is still open; Close it before "
        "executing it -> device removal has been triggered (DXGI_ERROR_INVALID_CALL): "
        "GetDeviceRemovedReason returns DXGI_ERROR_INVALID_CALL from now on for ID3D12Device "
        f"@0x{id(r.d3d._core):X} and every DirectML device created on it.".replace(
            "ID3D12Device @", "unnamed ID3D12Device @"))
    # A recording error, then executing the failed list.
    r = Rig()
    r.cl.ResourceBarrier(1, [T.Transition(r.buf("A"), COMMON, COMMON)])
    with pytest.raises(dml.HResultError):
        r.cl.Close()
    r.queue.ExecuteCommandLists([r.cl])
    assert r.ids() == ["RESOURCE_BARRIER_MATCHING_STATES", "EXECUTECOMMANDLISTS_FAILEDCOMMANDLIST",
                       "DEVICE_REMOVAL_PROCESS_AT_FAULT"]
    assert r.text("RESOURCE_BARRIER_MATCHING_STATES") == (
        "ID3D12GraphicsCommandList::ResourceBarrier: command list 'list': barrier 0: StateBefore "
        "and StateAfter are both 0x0; a transition must change the state")
    assert len(r.messages("DEVICE_REMOVAL_PROCESS_AT_FAULT")) == 1


# ---- 11. leaks -----------------------------------------------------------------------------

def test_report_live_device_objects(debug_layer):
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    d3d.SetName("dev")
    iq = d3d.QueryInterface(dml.ID3D12InfoQueue)
    kept = Rig.named(d3d.CreateCommittedResource(
        dml.CD3DX12_HEAP_PROPERTIES(1), 0, dml.CD3DX12_RESOURCE_DESC.Buffer(16), COMMON), "kept")
    released = d3d.CreateCommittedResource(dml.CD3DX12_HEAP_PROPERTIES(1), 0,
                                           dml.CD3DX12_RESOURCE_DESC.Buffer(16), COMMON)
    assert released.Release() == 0
    d3d.CreateFence(0, 0)  # dropped at once: collected, not live
    dev = Rig.named(dml.DMLCreateDevice(d3d, 0), "dml")
    d3d.QueryInterface(dml.ID3D12DebugDevice).ReportLiveDeviceObjects(
        dml.D3D12_RLDO_SUMMARY | dml.D3D12_RLDO_DETAIL)
    got = [(catalog.BY_ID[int(iq.GetMessage(i).ID)].name, iq.GetMessage(i).pDescription)
           for i in range(iq.GetNumStoredMessages())]
    assert [n for n, _ in got] == ["LIVE_OBJECT_SUMMARY", "LIVE_DEVICE", "LIVE_RESOURCE",
                                   "DML_LIVE_OBJECT"]
    assert got[0][1] == ("ID3D12DebugDevice::ReportLiveDeviceObjects: 3 live objects of "
                         "ID3D12Device 'dev': 1 ID3D12Device, 1 ID3D12Resource, 1 IDMLDevice1")
    assert got[2][1] == (f"ID3D12DebugDevice::ReportLiveDeviceObjects: Live ID3D12Resource at "
                         f"0x{id(kept):X}, Name: 'kept', Refcount: 1")
    iq.ClearStoredMessages()
    dev.Release()
    assert d3d.Release() == 0  # the final release reports what is still alive
    assert [iq.GetMessage(i).pDescription for i in range(iq.GetNumStoredMessages())] == [
        "ID3D12Device::Release: 1 live objects of ID3D12Device 'dev': 1 ID3D12Resource",
        f"ID3D12Device::Release: Live ID3D12Resource at 0x{id(kept):X}, Name: 'kept', Refcount: 1"]


# ---- the info queue ------------------------------------------------------------------------

def _misuse(rig):
    """A D3D12-layer error that removes nothing: a transition with the wrong StateBefore."""
    a = rig.buf("A", state=COPY_DEST)
    rig.barrier(T.Transition(a, COPY_SOURCE, UAV))
    rig.flush()


def test_message_struct_and_log_format(rig, caplog):
    with caplog.at_level(logging.WARNING, logger="dmlsim.debug"):
        _misuse(rig)
    m = rig.iq.GetMessage(0)
    assert (m.Category, m.Severity, m.ID) == (
        dml.D3D12_MESSAGE_CATEGORY_RESOURCE_MANIPULATION, dml.D3D12_MESSAGE_SEVERITY_ERROR,
        dml.D3D12_MESSAGE_ID_RESOURCE_BARRIER_BEFORE_AFTER_MISMATCH)
    assert m.DescriptionByteLength == len(m.pDescription) + 1
    (record,) = [r for r in caplog.records if r.name == "dmlsim.debug"]
    assert record.levelno == logging.ERROR
    assert record.getMessage() == (f"D3D12 ERROR: {m.pDescription} [ RESOURCE_MANIPULATION "
                                   "ERROR #527: RESOURCE_BARRIER_BEFORE_AFTER_MISMATCH ]")
    with pytest.raises(dml.HResultError):
        rig.iq.GetMessage(1)


def test_storage_filter_mutes_by_id_and_stack(rig, caplog):
    deny = dml.D3D12_INFO_QUEUE_FILTER(DenyList=dml.D3D12_INFO_QUEUE_FILTER_DESC(
        NumIDs=1, pIDList=[dml.D3D12_MESSAGE_ID_RESOURCE_BARRIER_BEFORE_AFTER_MISMATCH]))
    rig.iq.PushStorageFilter(deny)
    assert rig.iq.GetStorageFilterStackSize() == 2
    assert rig.iq.GetStorageFilter().DenyList.pIDList == [
        dml.D3D12_MESSAGE_ID_RESOURCE_BARRIER_BEFORE_AFTER_MISMATCH]
    with caplog.at_level(logging.WARNING, logger="dmlsim.debug"):
        _misuse(rig)
    assert rig.iq.GetNumStoredMessages() == 0 and rig.iq.GetNumMessagesDeniedByStorageFilter() >= 1
    assert not [r for r in caplog.records if r.name == "dmlsim.debug"]
    rig.iq.PopStorageFilter()
    rig.iq.AddStorageFilterEntries(dml.D3D12_INFO_QUEUE_FILTER(
        AllowList=dml.D3D12_INFO_QUEUE_FILTER_DESC(
            pSeverityList=[dml.D3D12_MESSAGE_SEVERITY_WARNING])))
    _misuse(rig)  # an ERROR: not in the allow list
    assert rig.iq.GetNumStoredMessages() == 0
    rig.iq.ClearStorageFilter()
    _misuse(rig)
    assert rig.ids() == ["RESOURCE_BARRIER_BEFORE_AFTER_MISMATCH"]
    with pytest.raises(dml.HResultError):  # counts are checked against the lists
        rig.iq.AddStorageFilterEntries(dml.D3D12_INFO_QUEUE_FILTER(
            DenyList=dml.D3D12_INFO_QUEUE_FILTER_DESC(NumIDs=2, pIDList=[1])))


def test_retrieval_filter_limit_and_application_messages(rig):
    rig.iq.AddApplicationMessage(dml.D3D12_MESSAGE_SEVERITY_INFO, "hello")
    _misuse(rig)
    rig.iq.AddRetrievalFilterEntries(dml.D3D12_INFO_QUEUE_FILTER(
        AllowList=dml.D3D12_INFO_QUEUE_FILTER_DESC(pCategoryList=[
            dml.D3D12_MESSAGE_CATEGORY_APPLICATION_DEFINED])))
    assert rig.iq.GetNumStoredMessages() == 2
    assert rig.iq.GetNumStoredMessagesAllowedByRetrievalFilter() == 1
    m = rig.iq.GetMessage(0)
    assert (m.ID, m.pDescription) == (dml.D3D12_MESSAGE_ID_STRING_FROM_APPLICATION, "hello")
    rig.iq.ClearRetrievalFilter()
    rig.iq.SetMessageCountLimit(1)
    try:
        rig.iq.AddApplicationMessage(dml.D3D12_MESSAGE_SEVERITY_INFO, "last")
        assert rig.iq.GetNumStoredMessages() == 1 and rig.iq.GetMessage(0).pDescription == "last"
        assert rig.iq.GetNumMessagesDiscardedByMessageCountLimit() >= 2
    finally:
        rig.iq.SetMessageCountLimit(-1)


def test_break_on_severity_raises_at_the_call(rig):
    rig.iq.SetBreakOnSeverity(dml.D3D12_MESSAGE_SEVERITY_ERROR, True)
    assert rig.iq.GetBreakOnSeverity(dml.D3D12_MESSAGE_SEVERITY_ERROR)
    a = rig.buf("A", state=COPY_DEST)
    rig.barrier(T.Transition(a, COPY_SOURCE, UAV))
    rig.cl.Close()
    with pytest.raises(dml.D3D12DebugBreak) as e:
        rig.queue.ExecuteCommandLists([rig.cl])
    assert e.value.message.id == dml.D3D12_MESSAGE_ID_RESOURCE_BARRIER_BEFORE_AFTER_MISMATCH
    assert str(e.value).startswith("D3D12 ERROR: ID3D12CommandQueue::ExecuteCommandLists:")
    rig.iq.SetBreakOnSeverity(dml.D3D12_MESSAGE_SEVERITY_ERROR, False)
    rig.iq.AddApplicationMessage(dml.D3D12_MESSAGE_SEVERITY_ERROR, "no break now")


def test_callbacks_and_muting(rig, caplog):
    seen = []
    cookie = rig.iq.RegisterMessageCallback(
        lambda cat, sev, mid, text, ctx: seen.append((mid, ctx)), 0, "ctx")
    rig.iq.SetMuteDebugOutput(True)
    with caplog.at_level(logging.WARNING, logger="dmlsim.debug"):
        _misuse(rig)
    assert seen == [(dml.D3D12_MESSAGE_ID_RESOURCE_BARRIER_BEFORE_AFTER_MISMATCH, "ctx")]
    assert rig.iq.GetNumStoredMessages() == 1  # muted output is still stored
    assert not [r for r in caplog.records if r.name == "dmlsim.debug"]
    rig.iq.UnregisterMessageCallback(cookie)
    with pytest.raises(dml.HResultError):
        rig.iq.UnregisterMessageCallback(cookie)


def test_dml_debug_device_mute(debug_layer):
    r = Rig()
    r.dml.QueryInterface(dml.IDMLDebugDevice).SetMuteDebugOutput(True)
    r.table(r.compile("op", init=False), "t").BindInputs([bind(r.buf("A"), 0, 4)])
    assert r.ids() == []  # DirectML sends nothing to the info queue
    assert r.dml.GetDeviceRemovedReason() == dml.E_INVALIDARG


def test_info_queue_is_a_per_device_singleton(rig):
    assert rig.d3d.QueryInterface(dml.ID3D12InfoQueue) is rig.iq
    assert rig.d3d.QueryInterface(dml.ID3D12InfoQueue1) is rig.iq


# ---- the demo ------------------------------------------------------------------------------

def test_demo_reports_the_three_mistakes_and_the_fix_is_silent(debug_layer):
    import re
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import debug_layer_demo
    finally:
        sys.path.pop(0)
    z, lines = debug_layer_demo.run(fixed=False)
    assert [re.search(r"#\d+: (\w+) \]$", line).group(1) for line in lines] == [
        "INVALID_SUBRESOURCE_STATE", "DML_MISSING_UAV_BARRIER", "CPU_ACCESS_BEFORE_GPU_COMPLETION"]
    z_fixed, lines_fixed = debug_layer_demo.run(fixed=True)
    assert lines_fixed == []
    assert np.all(z == z_fixed) and np.all(z_fixed == np.float32([4, 16, 36, 64]))


# ---- the catalogue docs --------------------------------------------------------------------

def test_message_docs_are_generated_from_the_catalogue():
    import importlib.util
    spec = importlib.util.spec_from_file_location("gen_debug_docs", ROOT / "tools" /
                                                  "gen_debug_docs.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert gen.OUT.read_text() == gen.build(), "run python tools/gen_debug_docs.py"
    for e in catalog.ENTRIES:  # every ID is documented and exported under its C name
        assert f"### {e.id} {e.name}" in gen.OUT.read_text()
        assert getattr(dml, "D3D12_MESSAGE_ID_" + e.name) == e.id


def test_failed_hresult_methods_are_reported_too(rig):
    """DirectML's debug layer prints why CreateOperator failed; so does dmlsim, next to the
    raise (DML_INVALID_ARGUMENT), and only on a debug DirectML device."""
    bad = dml.operator_desc("ELEMENT_WISE_IS_INFINITY", InputTensor=np.zeros(4, np.int8),
                            OutputTensor=np.zeros(4, np.uint8))
    with pytest.raises(dml.HResultError) as raised:
        rig.dml.CreateOperator(bad)
    assert rig.text("DML_INVALID_ARGUMENT") == f"{raised.value.message} (E_INVALIDARG)"
    assert raised.value.message.startswith("DML_OPERATOR_ELEMENT_WISE_IS_INFINITY: "
                                           "InputTensor.DataType is DML_TENSOR_DATA_TYPE_INT8")
    rig.iq.ClearStoredMessages()
    plain = dml.DMLCreateDevice(rig.d3d, dml.DML_CREATE_DEVICE_FLAG_NONE)
    with pytest.raises(dml.HResultError):
        plain.CreateOperator(bad)
    assert rig.iq.GetNumStoredMessages() == 0


def test_a_released_buffer_in_executed_work_is_reported(debug_layer):
    r = Rig()
    src, dst = r.buf("src", heap=UPLOAD, state=dml.D3D12_RESOURCE_STATE_GENERIC_READ), r.buf("dst")
    r.cl.CopyBufferRegion(dst, 0, src, 0, 16)
    assert src.Release() == 0
    r.execute()
    assert "'src' was released" in r.text("OBJECT_DELETED_WHILE_STILL_IN_USE")
    assert r.d3d.GetDeviceRemovedReason() == dml.DXGI_ERROR_DEVICE_REMOVED

"""The debug layer (docs/debug_messages.md): one test per mistake, asserting the message ID and
its text, and the same program without the mistake producing no message.

Most tests share one debug-enabled device pair (``rig``) and clear its info queue first; tests
that remove a device make their own. Buffers are 16 bytes (four FLOAT32) unless a test needs
ranges, so that every dispatch reuses the same compiled programs.
"""

from __future__ import annotations

from debug_rig import *  # noqa: F401,F403  (the rig, its constants and fixtures)


# ---- switches ------------------------------------------------------------------------------

def test_off_installs_nothing_and_has_no_info_queue():
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    dev = dml.DMLCreateDevice(d3d, dml.DML_CREATE_DEVICE_FLAG_NONE)
    assert d3d._core.observers == []
    with pytest.raises(dml.HResultError) as e:
        d3d.QueryInterface(dml.ID3D12InfoQueue)
    assert e.value.hresult == dml.E_NOINTERFACE and "EnableDebugLayer" in str(e.value)
    with pytest.raises(dml.HResultError):
        dev.QueryInterface(dml.IDMLDebugDevice)


def test_directml_flag_alone_logs_directml_format(caplog):
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    with caplog.at_level(logging.WARNING, logger="dmlsim.debug"):
        r = Rig(d3d)
        op = r.compile("op", init=False)
        t = r.table(op, "t")
        t.BindInputs([bind(r.buf("small", 16), 0, 4)])
    lines = [rec.getMessage() for rec in caplog.records if rec.name == "dmlsim.debug"]
    assert lines[0].startswith("[DIRECTML WARNING]: DMLCreateDevice: enable the D3D debug layer")
    assert lines[1] == ("[DIRECTML ERROR]: IDMLBindingTable::BindInputs: binding table 't' of "
                        "DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled operator 'op'): input 0 "
                        "(InputTensor): the value of SizeInBytes is too small. 4 was provided, "
                        "but 16 was expected.")
    with pytest.raises(dml.HResultError):
        d3d.QueryInterface(dml.ID3D12InfoQueue)


def test_hello_directml_with_debug_layers_is_clean(debug_layer, caplog):
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import hello_directml
    finally:
        sys.path.pop(0)
    with caplog.at_level(logging.INFO, logger="dmlsim.debug"):
        _, out = hello_directml.main(debug=True)
    assert np.all(out == np.float32(1.618))
    assert [r.getMessage() for r in caplog.records if r.name == "dmlsim.debug"] == []


# ---- 1. UAV barriers -----------------------------------------------------------------------

def _chain(rig, between=None, out_range=(0, 16), in_range=(0, 16)):
    a, b, c = rig.buf("A", 32), rig.buf("B", 32), rig.buf("C", 32)
    rig.upload(a)
    rig.barrier(T.Transition(a, COPY_DEST, UAV))
    rig.dispatch(rig.id1, [bind(a)], [bind(b, *out_range)], "t1")
    if between is not None:
        rig.barrier(between(b))
    rig.dispatch(rig.id2, [bind(b, *in_range)], [bind(c)], "t2")
    return a, b, c


def test_missing_uav_barrier(rig):
    _chain(rig)
    rig.flush()
    assert rig.text("DML_MISSING_UAV_BARRIER") == (
        f"{ECL}, command 5 (RecordDispatch of DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled "
        "operator 'id2') with binding table 't2') reads input 0 (InputTensor) = 'B' bytes [0, 16), "
        f"and command queue 'queue', command list 'list', command 3 (RecordDispatch of "
        "DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled operator 'id1') with binding table 't1') "
        "writes output 0 (OutputTensor) = 'B' bytes [0, 16), with no UAV, aliasing or transition "
        "barrier on 'B' in between: the dispatches may run concurrently and race on 'B' bytes "
        "[0, 16). Record ResourceBarrier(CD3DX12_RESOURCE_BARRIER.UAV(...)) between them.")


@pytest.mark.parametrize("between", [T.UAV, lambda b: T.UAV(None), lambda b: T.Aliasing(None, None),
                                     lambda b: T.Aliasing(b, None)],
                         ids=["uav", "uav-all", "aliasing-all", "aliasing"])
def test_no_uav_message_with_a_barrier(rig, between):
    _chain(rig, between)
    rig.flush()
    assert rig.ids() == []


def test_no_uav_message_when_ranges_do_not_overlap(rig):
    _chain(rig, out_range=(0, 16), in_range=(16, 16))
    rig.flush()
    assert "DML_MISSING_UAV_BARRIER" not in rig.ids()


def test_uav_hazard_across_lists_of_one_execute_but_not_across_executes(rig):
    a, b = rig.buf("A"), rig.buf("B")
    rig.upload(a)
    rig.barrier(T.Transition(a, COPY_DEST, UAV))
    rig.flush()
    alloc2 = rig.d3d.CreateCommandAllocator(0)
    second = rig.named(rig.d3d.CreateCommandList(0, 0, alloc2), "second")
    rig.dispatch(rig.id1, [bind(a)], [bind(b)], "t1")
    rig.cl.Close()
    t2 = rig.table(rig.id2, "t2")
    t2.BindInputs([bind(b)])
    t2.BindOutputs([bind(a)])
    second.SetDescriptorHeaps(1, [rig.heap])
    rig.rec.RecordDispatch(second, rig.id2, t2)
    second.Close()
    rig.submit(rig.cl, second)
    rig.wait()
    msgs = rig.messages("DML_MISSING_UAV_BARRIER")
    # id2 reads B that id1 writes, and writes A that id1 reads.
    assert len(msgs) == 2
    assert msgs[0].pDescription.startswith(
        "ID3D12CommandQueue::ExecuteCommandLists: command queue 'queue', command list 'second', "
        "command 1 (RecordDispatch of DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled operator "
        "'id2') with binding table 't2') reads input 0 (InputTensor) = 'B' bytes [0, 16), and "
        "command queue 'queue', command list 'list', command 1")
    assert "writes output 0 (OutputTensor) = 'A' bytes [0, 16), and" in msgs[1].pDescription
    rig.iq.ClearStoredMessages()
    rig.submit(second)  # a separate ExecuteCommandLists is ordered after the first
    rig.wait()
    rig.reset()
    assert rig.ids() == []


def test_uav_hazard_across_queues_needs_a_fence_wait(rig):
    a, b = rig.buf("A"), rig.buf("B")
    rig.upload(a)
    rig.barrier(T.Transition(a, COPY_DEST, UAV))
    rig.flush()
    q2 = rig.named(rig.d3d.CreateCommandQueue(dml.D3D12_COMMAND_QUEUE_DESC(0)), "queue2")
    alloc2 = rig.d3d.CreateCommandAllocator(0)
    second = rig.named(rig.d3d.CreateCommandList(0, 0, alloc2), "second")
    t2 = rig.table(rig.id2, "t2")
    t2.BindInputs([bind(b)])
    t2.BindOutputs([bind(rig.buf("C"))])
    second.SetDescriptorHeaps(1, [rig.heap])
    rig.rec.RecordDispatch(second, rig.id2, t2)
    second.Close()
    for waits in (False, True):
        rig.iq.ClearStoredMessages()
        rig.dispatch(rig.id1, [bind(a)], [bind(b)], "t1")
        rig.cl.Close()
        rig.queue.ExecuteCommandLists([rig.cl])
        rig.value += 1
        rig.queue.Signal(rig.fence, rig.value)
        if waits:
            q2.Wait(rig.fence, rig.value)
        q2.ExecuteCommandLists([second])
        assert rig.ids() == ([] if waits else ["DML_MISSING_UAV_BARRIER"])
        if not waits:
            assert "command queue 'queue2', command list 'second', command 1 (RecordDispatch of " \
                   "DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled operator 'id2') with binding " \
                   "table 't2') reads input 0 (InputTensor) = 'B' bytes [0, 16), and command " \
                   "queue " \
                   "'queue', command list 'list'" in rig.messages()[0].pDescription
        rig.wait()
        rig.reset()
        q2.Signal(rig.fence, rig.value + 1)  # the CPU waits for queue2 too before reusing B
        rig.value += 1
        rig.wait()


# ---- 2. resource states --------------------------------------------------------------------

def test_dispatch_needs_unordered_access(rig):
    a = rig.buf("A")
    rig.upload(a)  # COMMON -> promoted to COPY_DEST by the copy
    rig.dispatch(rig.id1, [bind(a)], [bind(rig.buf("B"))], "t1")
    rig.flush()
    assert rig.text("INVALID_SUBRESOURCE_STATE") == (
        f"{ECL}, command 2 (RecordDispatch of DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled "
        "operator 'id1') with binding table 't1'): 'A' (bound as input 0 (InputTensor)) is in "
        "state D3D12_RESOURCE_STATE_COPY_DEST (0x400) (promoted from COMMON by an earlier command "
        "of this "
        "ExecuteCommandLists call), but this command needs D3D12_RESOURCE_STATE_UNORDERED_ACCESS "
        "(0x8) or a state promotable to it (D3D12_RESOURCE_STATE_COMMON). Transition it with "
        "ResourceBarrier first.")


def test_copy_needs_copy_source(rig):
    src = rig.buf("src", state=UAV)
    rig.upload(src)  # copy into a UAV-state buffer: needs COPY_DEST
    rb = rig.buf("readback", heap=READBACK)
    rig.barrier(T.UAV(src))
    rig.cl.CopyResource(rb, src)  # src is UAV, not COPY_SOURCE
    rig.flush()
    msgs = [m.pDescription for m in rig.messages("INVALID_SUBRESOURCE_STATE")]
    assert len(msgs) == 2
    assert msgs[0] == (f"{ECL}, command 0 (copy of 16 bytes from 'upload' to 'src'): 'src' (the "
                       "copy destination) is in state D3D12_RESOURCE_STATE_UNORDERED_ACCESS (0x8), "
                       "but this command needs D3D12_RESOURCE_STATE_COPY_DEST (0x400). Transition "
                       "it with ResourceBarrier first.")
    assert "command 2 (copy of 16 bytes from 'src' to 'readback'): 'src' (the copy source) is in " \
           "state D3D12_RESOURCE_STATE_UNORDERED_ACCESS (0x8), but this command needs " \
           "D3D12_RESOURCE_STATE_COPY_SOURCE (0x800)" in msgs[1]


def test_transition_with_wrong_before_state(rig):
    a = rig.buf("A", state=COPY_DEST)
    rig.barrier(T.Transition(a, COPY_SOURCE, UAV))
    rig.flush()
    assert rig.text("RESOURCE_BARRIER_BEFORE_AFTER_MISMATCH") == (
        f"{ECL}, command 0 (ResourceBarrier): the transition barrier's StateBefore is "
        "D3D12_RESOURCE_STATE_COPY_SOURCE (0x800), but 'A' is in D3D12_RESOURCE_STATE_COPY_DEST "
        "(0x400) at that point (its state at creation or after the last barrier). Set StateBefore "
        "to D3D12_RESOURCE_STATE_COPY_DEST (0x400).")


def test_correct_states_and_promotion_are_silent(rig):
    a, b = rig.buf("A", state=COPY_DEST), rig.buf("B")  # B: COMMON, promoted by the dispatch
    rig.upload(a)
    rig.barrier(T.Transition(a, COPY_DEST, UAV))
    rig.dispatch(rig.id1, [bind(a)], [bind(b)], "t1")
    rig.barrier(T.Transition(b, UAV, COPY_SOURCE))  # from the promoted state
    rb = rig.buf("readback", heap=READBACK)
    rig.cl.CopyResource(rb, b)
    rig.flush()
    assert rig.ids() == []
    assert np.all(rb.Map(0, None).view(np.float32) == 1)
    rb.Unmap(0, dml.D3D12_RANGE(0, 0))


# ---- 3. descriptor heaps -------------------------------------------------------------------

@pytest.mark.parametrize("other_heap", [False, True])
def test_descriptor_heap_not_set(fresh, other_heap):
    op = fresh.compile("op", init=False)
    t = fresh.table(op, "t")
    t.BindInputs([bind(fresh.buf("A"))])
    t.BindOutputs([bind(fresh.buf("B"))])
    if other_heap:
        other = fresh.named(fresh.d3d.CreateDescriptorHeap(dml.D3D12_DESCRIPTOR_HEAP_DESC(0, 4, 1)),
                            "other")
        fresh.cl.SetDescriptorHeaps(1, [other])
    fresh.rec.RecordDispatch(fresh.cl, op, t)
    have = "the command list has descriptor heap 'other' set" if other_heap else \
        "no descriptor heap is set on the command list"
    assert fresh.text("DML_DESCRIPTOR_HEAP_NOT_SET") == (
        "IDMLCommandRecorder::RecordDispatch: command list 'list', "
        "DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled operator 'op'), binding table 't': the "
        f"binding table points into descriptor heap 'heap', but {have}; call "
        "ID3D12GraphicsCommandList::SetDescriptorHeaps with the binding table's heap before "
        "RecordDispatch")
    assert fresh.dml.GetDeviceRemovedReason() == dml.E_INVALIDARG
    assert fresh.d3d.GetDeviceRemovedReason() == dml.S_OK


# ---- 4. descriptors changed after recording ------------------------------------------------

@pytest.mark.parametrize("volatile", [False, True])
def test_descriptors_changed_after_recording(rig, volatile):
    op = rig.id1 if not volatile else getattr(rig, "vol", None)
    if op is None:
        op = rig.vol = rig.compile("vol", flags=dml.DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE)
    a, b, c = rig.buf("A"), rig.buf("B"), rig.buf("C")
    rig.upload(a)
    rig.barrier(T.Transition(a, COPY_DEST, UAV))
    t = rig.dispatch(op, [bind(a)], [bind(b)], "t")
    t.BindOutputs([bind(c)])  # after RecordDispatch
    rig.barrier(T.Transition(c, UAV, COPY_SOURCE))  # C was promoted by the dispatch
    rb = rig.buf("readback", heap=READBACK)
    rig.cl.CopyResource(rb, c)
    rig.flush()
    if volatile:
        assert rig.ids() == []
        assert np.all(rb.Map(0, None).view(np.float32) == 1)  # the late binding took effect
        rb.Unmap(0, dml.D3D12_RANGE(0, 0))
    else:
        assert rig.text("DML_DESCRIPTORS_CHANGED_AFTER_RECORD") == (
            f"{ECL}, command 3 (RecordDispatch of DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled "
            "operator 'id1') with binding table 't'): the binding table's descriptors changed "
            "after RecordDispatch: output 0 (OutputTensor) was 'B' bytes [0, 16) when recorded and "
            "is 'C' bytes [0, 16) now. The dispatchable is compiled without "
            "DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE, so every binding must be final before "
            "RecordDispatch (use another binding table or descriptor range per dispatch, or "
            "compile with DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE).")


# ---- 5. aliasing ---------------------------------------------------------------------------

@pytest.mark.parametrize("case", ["partial", "no-in-place", "temporary"])
def test_illegal_aliasing_at_record(fresh, case):
    a = fresh.buf("A", 32)
    if case == "no-in-place":  # GELU has no in-place support
        op = fresh.compile("op", "ACTIVATION_GELU", init=False)
        ins, outs = [bind(a)], [bind(a)]
    else:
        op = fresh.compile("op", init=False)
        ins, outs = [bind(a, 0)], [bind(a, 16) if case == "partial" else bind(fresh.buf("B"))]
    t = fresh.table(op, "t")
    t.BindInputs(ins)
    t.BindOutputs(outs)
    if case == "partial":
        t.BindOutputs([bind(a, 0, 32)])
    if case == "temporary":
        t.BindTemporaryResource(bind(a, 0, 32))
    fresh.cl.SetDescriptorHeaps(1, [fresh.heap])
    fresh.rec.RecordDispatch(fresh.cl, op, t)
    name = {"partial": "ELEMENT_WISE_IDENTITY", "no-in-place": "ACTIVATION_GELU",
            "temporary": "ELEMENT_WISE_IDENTITY"}[case]
    head = (f"IDMLCommandRecorder::RecordDispatch: command list 'list', DML_OPERATOR_{name} "
            "(compiled operator 'op'), binding table 't': binding hazard: ")
    text = fresh.text("DML_ILLEGAL_ALIASING")
    assert text.startswith(head), text
    assert text[len(head):] == {
        "partial": "input 0 (InputTensor) 'A' bytes [0, 16) and output 0 (OutputTensor) 'A' bytes "
                   "[0, 32) overlap but are not identical; such bindings are never valid",
        "no-in-place": "input 0 (InputTensor) 'A' bytes [0, 16) and output 0 (OutputTensor) 'A' "
                       "bytes [0, 16) alias, but DML_OPERATOR_ACTIVATION_GELU does not support "
                       "in-place execution",
        "temporary": "the temporary resource 'A' bytes [0, 32) overlaps input 0 (InputTensor) 'A' "
                     "bytes [0, 16)"}[case]
    assert fresh.dml.GetDeviceRemovedReason() == dml.E_INVALIDARG


def test_in_place_identical_bindings_are_allowed(rig):
    a = rig.buf("A")
    rig.upload(a)
    rig.barrier(T.Transition(a, COPY_DEST, UAV))
    rig.dispatch(rig.id1, [bind(a)], [bind(a)], "t")
    rig.flush()
    assert rig.ids() == []


def test_illegal_aliasing_of_a_volatile_operator_is_reported_at_execution(debug_layer):
    """Checked when the descriptors are read; the hazard then removes the device, as it would
    at RecordDispatch for an operator without DESCRIPTORS_VOLATILE (its own rig: the shared
    one must stay alive)."""
    rig = Rig()
    op = rig.compile("vol", flags=dml.DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE)
    a = rig.buf("A", 32)
    rig.upload(a, np.ones(8, np.float32))
    rig.barrier(T.Transition(a, COPY_DEST, UAV))
    t = rig.dispatch(op, [bind(a, 0)], [bind(a, 16, 16)], "t")
    t.BindOutputs([bind(a, 0, 32)])  # late: volatile operators are checked at execution
    rig.cl.Close()
    rig.queue.ExecuteCommandLists([rig.cl])
    assert rig.d3d.GetDeviceRemovedReason() != dml.S_OK
    assert rig.text("DML_ILLEGAL_ALIASING") == (
        f"{ECL}, command 3 (RecordDispatch of DML_OPERATOR_ELEMENT_WISE_IDENTITY (compiled "
        "operator 'vol') with binding table 't'): binding hazard at execution (the operator is "
        "DESCRIPTORS_VOLATILE, so it is checked here): input 0 (InputTensor) 'A' bytes [0, 16) and "
        "output 0 (OutputTensor) 'A' bytes [0, 32) overlap but are not identical; such bindings "
        "are never valid")


def test_two_outputs_and_persistent_overlap_rules():
    """The rule binding.hazards applies (at RecordDispatch, and at execution for volatile
    operators) on a layout with two outputs, checked directly."""
    from dmlsim._core.layout import BindingLayout, Slot
    from dmlsim._core.resources import Buffer, Device, Range
    lay = BindingLayout("compiled operator", "DML_OPERATOR_MAX_POOLING1",
                        (Slot("input 0 (InputTensor)", "InputTensor"),),
                        (Slot("output 0 (OutputValueTensor)", "OutputValueTensor"),
                         Slot("output 1 (OutputIndexTensor)", "OutputIndexTensor")))
    x = Buffer(Device(None), 64, DEFAULT, 4, 0)
    x.name = "X"
    outs = [Range(x, 0, 32), Range(x, 16, 32)]
    assert core_binding.hazards(lay, [None], outs, None, None) == (
        "outputs 0 and 1 overlap (output 0 (OutputValueTensor) 'X' bytes [0, 32), output 1 "
        "(OutputIndexTensor) 'X' bytes [16, 48))")
    assert core_binding.hazards(lay, [None], outs[:1] + [None], None, Range(x, 16, 16)) == (
        "the persistent resource 'X' bytes [16, 32) overlaps output 0 (OutputValueTensor) 'X' "
        "bytes [0, 32)")
    assert core_binding.hazards(lay, [None], outs[:1] + [None], Range(x, 32, 32), None) is None

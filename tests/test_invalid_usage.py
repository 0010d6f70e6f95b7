"""Invalid usage, each misuse with its exact answer.

Four kinds, as DirectML and D3D12 answer them:
- HRESULT methods raise HResultError with the exact code; the message starts with the
  operator or method name and says what was wrong; the device stays alive.
- Void DirectML methods (BindInputs, RecordDispatch, ...) do not raise: the device is removed,
  GetDeviceRemovedReason() returns the code, the removal message names the method and the
  problem, and later HRESULT methods return DXGI_ERROR_DEVICE_REMOVED (dml-errors.md). With
  dmlsim.set_strict(True) the same call raises at the call site and removes nothing.
- Command-list recording errors are sticky: Close() fails with E_INVALIDARG naming the
  recorded problem (strict mode: the recording call raises).
- Faults found when the work executes remove the D3D12 device (ExecuteCommandLists).

Every case's docstring cites the reference page (shared/spec/docs) or the D3D12 rule it checks.
A failed call changes no state: see the tests at the end.
"""
from __future__ import annotations

import numpy as np
import pytest

import dmlsim as dml

import misuse_hresult  # noqa: F401  (registers the @hr cases)
import misuse_void  # noqa: F401  (registers the @void/@record/@execution cases)
from helpers import binding, strict_mode, tensor
from misuse import E_INVALIDARG, EXEC, HR, RECORD, VOID, Ctx


# ==== the tests ==============================================================================

def test_at_least_forty_distinct_misuses():
    assert len(HR) + len(VOID) + len(RECORD) + len(EXEC) >= 40
    for p in HR + VOID + RECORD + EXEC:
        fn = p.values[0]
        doc = fn.__doc__ or ""
        assert ".md" in doc or "D3D12" in doc or "DXGI" in doc, \
            f"{fn.__name__}: the docstring cites no rule"


@pytest.mark.parametrize("fn,code,prefix,snippets", HR)
def test_hresult_misuse(fn, code, prefix, snippets):
    c = Ctx()
    with pytest.raises(dml.HResultError) as info:
        fn(c)
    err = info.value
    assert err.hresult == code, f"{dml.hresult_name(err.hresult)}: {err}"
    msg = str(err)
    assert msg.startswith(prefix), msg
    for s in snippets:
        assert s in msg, f"{s!r} not in {msg!r}"
    if code != dml.DXGI_ERROR_DEVICE_REMOVED:  # an HRESULT failure removes nothing
        assert c.dml.GetDeviceRemovedReason() == dml.S_OK
        assert c.d3d.GetDeviceRemovedReason() == dml.S_OK


@pytest.mark.parametrize("strict", [False, True], ids=["removes", "strict"])
@pytest.mark.parametrize("fn,method,snippets,code,device", VOID)
def test_void_misuse(fn, method, snippets, code, device, strict):
    c = Ctx()
    act = fn(c)
    removed_dev = c.dml if device == "dml" else c.d3d
    if strict:
        with strict_mode(True), pytest.raises(dml.HResultError) as info:
            act()
        assert info.value.hresult == code
        msg = str(info.value)
        assert removed_dev.GetDeviceRemovedReason() == dml.S_OK
    else:
        assert act() is None  # a void method returns nothing and raises nothing
        assert removed_dev.GetDeviceRemovedReason() == code
        assert c.dml.GetDeviceRemovedReason() == code  # D3D12 removal removes DirectML too
        msg = removed_dev._core.removed_message
        with pytest.raises(dml.HResultError) as info:
            c.dml.CreateOperator(c.add_desc())
        assert info.value.hresult == dml.DXGI_ERROR_DEVICE_REMOVED
        assert method in str(info.value)  # the later error repeats the cause
    assert msg.startswith(method), msg
    for s in snippets:
        assert s in msg, f"{s!r} not in {msg!r}"


@pytest.mark.parametrize("strict", [False, True], ids=["sticky", "strict"])
@pytest.mark.parametrize("fn,method,snippets", RECORD)
def test_recording_error(fn, method, snippets, strict):
    c = Ctx()
    act = fn(c)
    if strict:
        with strict_mode(True), pytest.raises(dml.HResultError) as info:
            act()
        assert info.value.hresult == E_INVALIDARG
        msg = str(info.value)
        assert c.cl.Close() == dml.S_OK  # nothing was recorded: the list closes cleanly
    else:
        assert act() is None
        with pytest.raises(dml.HResultError) as info:
            c.cl.Close()
        assert info.value.hresult == E_INVALIDARG
        msg = str(info.value)
        assert msg.startswith("ID3D12GraphicsCommandList::Close")
    assert method in msg
    for s in snippets:
        assert s in msg, f"{s!r} not in {msg!r}"
    assert c.d3d.GetDeviceRemovedReason() == dml.S_OK


@pytest.mark.parametrize("fn,snippets", EXEC)
def test_execution_fault_removes_device(fn, snippets):
    c = Ctx()
    fn(c)
    assert c.d3d.GetDeviceRemovedReason() == dml.DXGI_ERROR_DEVICE_REMOVED
    assert c.dml.GetDeviceRemovedReason() == dml.DXGI_ERROR_DEVICE_REMOVED
    msg = c.d3d._core.removed_message
    assert msg.startswith("ID3D12CommandQueue::ExecuteCommandLists"), msg
    for s in snippets:
        assert s in msg, msg
    assert c.fence.GetCompletedValue() == 0xFFFFFFFFFFFFFFFF  # as D3D12 reports after removal
    with pytest.raises(dml.HResultError) as info:  # Signal returns an HRESULT
        c.queue.Signal(c.fence, 1)
    assert info.value.hresult == dml.DXGI_ERROR_DEVICE_REMOVED
    assert str(info.value).startswith("ID3D12CommandQueue::Signal"), str(info.value)


# ==== a failed call changes no state ===========================================================

def _slots(heap):
    return list(heap._core.slots)


@pytest.mark.parametrize("strict", [False, True], ids=["removes", "strict"])
def test_failed_bind_inputs_keeps_previous_descriptors(strict):
    """A rejected BindInputs writes nothing into the heap: the descriptors of the previous
    successful BindInputs stay (in strict mode the table still works)."""
    c = Ctx()
    compiled, a, out = c.initialized_add()
    table, heap, _ = c.table(compiled)
    table.BindInputs(2, [binding(a), binding(a)])
    table.BindOutputs(1, [binding(out)])
    before = _slots(heap)
    with strict_mode(strict):
        if strict:
            with pytest.raises(dml.HResultError):
                table.BindInputs(2, [binding(a, 8, 16), binding(a)])
        else:
            table.BindInputs(2, [binding(a, 8, 16), binding(a)])
    assert _slots(heap) == before
    if strict:
        c.cl.SetDescriptorHeaps(1, [heap])
        c.recorder.RecordDispatch(c.cl, compiled, table)
        c.flush()
        np.testing.assert_array_equal(c.read(out).view(np.float32), [2, 4, 6, 8])
    else:
        # removed: later void calls are no-ops (dml-errors.md) and change nothing either
        table.BindInputs(2, [binding(out), binding(out)])
        assert _slots(heap) == before


def test_failed_create_operator_creates_nothing():
    """CreateOperator fails atomically: it returns no object, removes nothing, and the device
    goes on creating operators."""
    c = Ctx()
    plans = c.dml._core.d3d.plans
    cache = dict(plans.programs)
    with pytest.raises(dml.HResultError):
        c.dml.CreateOperator(c.add_desc(b=tensor(np.float16, [4])))
    assert c.dml.GetDeviceRemovedReason() == dml.S_OK
    assert plans.programs == cache
    assert isinstance(c.dml.CreateOperator(c.add_desc()), dml.IDMLOperator)


def test_failed_create_binding_table_writes_no_descriptor():
    """A rejected CreateBindingTable leaves the heap's descriptors as they were."""
    c = Ctx()
    compiled = c.add()
    table, heap, desc = c.table(compiled)
    table.BindInputs(2, [binding(c.buffer(16)), binding(c.buffer(16))])
    before = _slots(heap)
    desc.SizeInDescriptors = 2
    with pytest.raises(dml.HResultError):
        c.dml.CreateBindingTable(desc)
    assert _slots(heap) == before


@pytest.mark.parametrize("strict", [False, True], ids=["removes", "strict"])
def test_failed_record_dispatch_appends_nothing(strict):
    c = Ctx()
    compiled = c.add()
    table, heap, _ = c.table(compiled)  # no heap set, nothing bound
    before = len(c.cl._core.records)
    with strict_mode(strict):
        try:
            c.recorder.RecordDispatch(c.cl, compiled, table)
        except dml.HResultError:
            assert strict
    assert len(c.cl._core.records) == before


def test_failed_execute_command_lists_runs_nothing():
    """ExecuteCommandLists with a closed list and an open one: the device is removed and the
    closed list's copy never ran (the call is checked before anything is submitted)."""
    c = Ctx()
    dst = c.buffer(16)
    up = c.upload_buffer(np.arange(16, dtype=np.uint8))
    c.cl.CopyBufferRegion(dst, 0, up, 0, 16)
    c.cl.Close()
    alloc2 = c.d3d.CreateCommandAllocator(0)
    open_list = c.d3d.CreateCommandList(0, 0, alloc2)
    c.queue.ExecuteCommandLists(2, [c.cl, open_list])
    assert c.d3d.GetDeviceRemovedReason() == dml.DXGI_ERROR_INVALID_CALL
    assert "command list 1 is still open" in c.d3d._core.removed_message
    assert dst._core.memory.to_numpy().tolist() == [0] * 16


def test_empty_binding_table_becomes_usable_after_reset():
    """nf-directml-idmlbindingtable-reset.md / createbindingtable.md: a null desc makes an empty
    binding table; Reset with a desc gives it a dispatchable and a descriptor range."""
    c = Ctx()
    compiled, a, out = c.initialized_add()
    table = c.dml.CreateBindingTable(None)
    _, heap, desc = c.table(compiled)
    assert table.Reset(desc) == dml.S_OK
    table.BindInputs(2, [binding(a), binding(a)])
    table.BindOutputs(1, [binding(out)])
    c.cl.SetDescriptorHeaps(1, [heap])
    c.recorder.RecordDispatch(c.cl, compiled, table)
    c.flush()
    np.testing.assert_array_equal(c.read(out).view(np.float32), [2, 4, 6, 8])
    assert table.Reset(None) == dml.S_OK

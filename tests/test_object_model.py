"""The DirectML / D3D12 object model: initializers and persistent resources, late binding,
queues, fences and events, feature queries, interfaces, structs and the HelloDirectML port."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import dmlsim as dml

from helpers import (FEATURE_LEVELS, NONE, array_binding, binding, env,  # noqa: F401
                     feature_level, shared_env, tensor)

ROOT = Path(__file__).resolve().parent.parent
OWNED = dml.DML_TENSOR_FLAG_OWNED_BY_DML


def add_desc(dtype=np.float32, sizes=(4,), b_flags=0):
    ta, tb, to = tensor(dtype, sizes), tensor(dtype, sizes, flags=b_flags), tensor(dtype, sizes)
    return dml.DML_OPERATOR_DESC(dml.DML_OPERATOR_ELEMENT_WISE_ADD,
                                 dml.DML_ELEMENT_WISE_ADD_OPERATOR_DESC(ta, tb, to))


# ---- OWNED_BY_DML, the initializer, the persistent resource -----------------------------------

def test_owned_by_dml_initializer_and_persistent_resource(env):
    """BTensor has DML_TENSOR_FLAG_OWNED_BY_DML: it is bound to the initializer in a
    DML_BUFFER_ARRAY_BINDING (from an UPLOAD heap, which BindInputs allows for such tensors),
    copied into the persistent resource, and bound as NONE at execution (BindInputs page)."""
    compiled = env.dml.CompileOperator(env.dml.CreateOperator(add_desc(b_flags=OWNED)), 0)
    props = compiled.GetBindingProperties()
    # README binding policy: 2 inputs + 1 output + temporary + persistent; 16 B -> 256.
    assert (props.RequiredDescriptorCount, props.TemporaryResourceSize,
            props.PersistentResourceSize) == (5, 0, 256)
    init = env.dml.CreateOperatorInitializer(1, [compiled])
    iprops = init.GetBindingProperties()
    assert (iprops.RequiredDescriptorCount, iprops.TemporaryResourceSize,
            iprops.PersistentResourceSize) == (4, 0, 0)

    weights = env.upload_buffer(np.float32([100, 200, 300, 400]))
    persistent = env.buffer(props.PersistentResourceSize)
    table, heap, table_desc = env.table(init)
    table.BindInputs(1, [array_binding(None, weights)])
    table.BindOutputs(1, [binding(persistent)])
    env.cl.SetDescriptorHeaps(1, [heap])
    env.recorder.RecordDispatch(env.cl, init, table)
    env.flush()
    # The weights were copied: changing the source afterwards changes nothing.
    weights.Map(0, None)[:16] = np.float32([-1, -1, -1, -1]).view(np.uint8)

    a = env.device_buffer(np.float32([1, 2, 3, 4]))
    out = env.buffer(16)
    env.dispatch(compiled, [binding(a), NONE], [binding(out)], persistent=persistent)
    np.testing.assert_array_equal(env.read(out).view(np.float32), [101, 202, 303, 404])


def test_initializer_with_no_owned_tensors_accepts_empty_array(env):
    """'If there is nothing to be bound as input for initialization of an operator ... you may
    supply nullptr or an empty DML_BUFFER_ARRAY_BINDING' (BindInputs page)."""
    compiled = env.dml.CompileOperator(env.dml.CreateOperator(add_desc()), 0)
    init = env.dml.CreateOperatorInitializer(1, [compiled])
    table, heap, _ = env.table(init)
    table.BindInputs(1, [array_binding()])
    env.cl.SetDescriptorHeaps(1, [heap])
    env.recorder.RecordDispatch(env.cl, init, table)
    env.flush()
    a = env.device_buffer(np.float32([1, 2, 3, 4]))
    out = env.buffer(16)
    env.dispatch(compiled, [binding(a), binding(a)], [binding(out)])
    np.testing.assert_array_equal(env.read(out).view(np.float32), [2, 4, 6, 8])


def test_empty_initializer_is_a_no_op(env):
    """'An operator initializer can be created with no target operators. Executing such an
    initializer is a no-op.' (CreateOperatorInitializer page)."""
    init = env.dml.CreateOperatorInitializer(0, None)
    props = init.GetBindingProperties()
    assert props.TemporaryResourceSize == 0 and props.PersistentResourceSize == 0
    table, heap, _ = env.table(init)
    env.cl.SetDescriptorHeaps(1, [heap])
    env.recorder.RecordDispatch(env.cl, init, table)
    env.flush()


# ---- late binding ------------------------------------------------------------------------

def test_descriptors_volatile_reads_bindings_at_execution(env):
    """With DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE, 'binding of resources may be deferred
    until the Direct3D 12 command list is submitted' (RecordDispatch page): bind A, record,
    rebind to B, then execute: the dispatch reads B."""
    compiled = env.compile(add_desc(), dml.DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE)
    a = env.device_buffer(np.float32([1, 2, 3, 4]))
    b = env.device_buffer(np.float32([10, 20, 30, 40]))
    out = env.buffer(16)
    env.flush()
    table = env.dispatch(compiled, [binding(a), binding(a)], [binding(out)], flush=False)
    table.BindInputs(2, [binding(b), binding(b)])
    env.flush()
    np.testing.assert_array_equal(env.read(out).view(np.float32), [20, 40, 60, 80])


def test_descriptors_volatile_allows_recording_before_binding(env):
    compiled = env.compile(add_desc(), dml.DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE)
    a = env.device_buffer(np.float32([1, 2, 3, 4]))
    out = env.buffer(16)
    env.flush()
    table, heap, _ = env.table(compiled)
    env.cl.SetDescriptorHeaps(1, [heap])
    env.recorder.RecordDispatch(env.cl, compiled, table)
    table.BindInputs(2, [binding(a), binding(a)])
    table.BindOutputs(1, [binding(out)])
    env.flush()
    np.testing.assert_array_equal(env.read(out).view(np.float32), [2, 4, 6, 8])


# ---- queues, lists, fences, events -----------------------------------------------------------

def test_two_queues_with_wait(env):
    """Queue 2 waits on a fence value that queue 1 signals later: its list runs after queue
    1's, reads what queue 1 wrote, and the fences only move forward."""
    d3d = env.d3d
    compiled = env.compile(add_desc())
    a = env.device_buffer(np.float32([1, 2, 3, 4]))
    mid, out = env.buffer(16), env.buffer(16)
    env.flush()
    # list 1 (queue 1): mid = a + a; list 2 (queue 2): out = mid + mid
    t1, heap1, _ = env.table(compiled)
    t1.BindInputs(2, [binding(a), binding(a)])
    t1.BindOutputs(1, [binding(mid)])
    env.cl.SetDescriptorHeaps(1, [heap1])
    env.recorder.RecordDispatch(env.cl, compiled, t1)
    env.cl.Close()
    queue2 = d3d.CreateCommandQueue(
        dml.D3D12_COMMAND_QUEUE_DESC(dml.D3D12_COMMAND_LIST_TYPE_DIRECT))
    alloc2 = d3d.CreateCommandAllocator(dml.D3D12_COMMAND_LIST_TYPE_DIRECT)
    cl2 = d3d.CreateCommandList(0, dml.D3D12_COMMAND_LIST_TYPE_DIRECT, alloc2)
    t2, heap2, _ = env.table(compiled)
    t2.BindInputs(2, [binding(mid), binding(mid)])
    t2.BindOutputs(1, [binding(out)])
    cl2.SetDescriptorHeaps(1, [heap2])
    env.recorder.RecordDispatch(cl2, compiled, t2)
    cl2.Close()
    fence1 = d3d.CreateFence(0, 0)
    fence2 = d3d.CreateFence(0, 0)

    queue2.Wait(fence1, 1)
    queue2.ExecuteCommandLists(1, [cl2])
    queue2.Signal(fence2, 1)
    assert fence2.GetCompletedValue() == 0  # held by the Wait
    seen = [fence1.GetCompletedValue()]
    env.queue.ExecuteCommandLists(1, [env.cl])
    env.queue.Signal(fence1, 1)
    fence2.SetEventOnCompletion(1, None)
    seen.append(fence1.GetCompletedValue())
    assert seen == [0, 1]
    assert fence2.GetCompletedValue() == 1
    env.alloc.Reset()
    env.cl.Reset(env.alloc, None)
    np.testing.assert_array_equal(env.read(out).view(np.float32), [4, 8, 12, 16])
    assert fence1.GetCompletedValue() == 1 and fence2.GetCompletedValue() == 1


def test_closed_list_executes_twice(env):
    """A closed command list may be submitted again: an in-place a += b list run twice
    gives a + 2b."""
    compiled = env.compile(add_desc())
    a = env.device_buffer(np.float32([1, 2, 3, 4]))
    b = env.device_buffer(np.float32([10, 20, 30, 40]))
    env.flush()
    env.dispatch(compiled, [binding(a), binding(b)], [binding(a)], flush=False)
    env.cl.Close()
    for _ in range(2):
        env.queue.ExecuteCommandLists(1, [env.cl])
    env.fence_value += 1
    env.queue.Signal(env.fence, env.fence_value)
    env.fence.SetEventOnCompletion(env.fence_value, None)
    env.alloc.Reset()
    env.cl.Reset(env.alloc, None)
    np.testing.assert_array_equal(env.read(a).view(np.float32), [21, 42, 63, 84])


def test_allocator_reset_while_in_flight_fails(env):
    """ID3D12CommandAllocator::Reset must not be called while lists recorded with it may still
    execute: a list held behind an unsignalled Wait is in flight, so Reset fails (E_FAIL,
    dmlsim's answer; D3D12's debug layer reports it). After the wait, Reset succeeds."""
    gate = env.d3d.CreateFence(0, 0)
    buf = env.buffer(16)
    env.upload(buf, np.arange(16, dtype=np.uint8))
    env.cl.Close()
    env.queue.Wait(gate, 1)
    env.queue.ExecuteCommandLists(1, [env.cl])
    env.queue.Signal(env.fence, 1)
    with pytest.raises(dml.HResultError) as info:
        env.alloc.Reset()
    assert info.value.hresult == dml.E_FAIL
    assert "ID3D12CommandAllocator::Reset" in str(info.value)
    gate.Signal(1)
    env.fence.SetEventOnCompletion(1, None)
    assert env.alloc.Reset() == dml.S_OK


def test_fence_events_and_waits(env):
    """SetEventOnCompletion(value, None) blocks until the fence reaches value; with an event,
    WaitForSingleObject returns WAIT_OBJECT_0 once it is set and WAIT_TIMEOUT before."""
    fence = env.d3d.CreateFence(5, 0)
    assert fence.GetCompletedValue() == 5
    ev = dml.CreateEvent(None, True, False, None)
    assert fence.SetEventOnCompletion(3, ev) == dml.S_OK  # already reached: set at once
    assert dml.WaitForSingleObject(ev, 0) == dml.WAIT_OBJECT_0
    ev2 = dml.CreateEvent()
    fence.SetEventOnCompletion(7, ev2)
    assert dml.WaitForSingleObject(ev2, 0) == dml.WAIT_TIMEOUT
    fence.Signal(7)  # from the CPU
    assert dml.WaitForSingleObject(ev2, dml.INFINITE) == dml.WAIT_OBJECT_0
    assert dml.WaitForSingleObjectEx(ev2, 0, False) == dml.WAIT_OBJECT_0  # manual reset: stays set
    buf = env.buffer(8)
    env.upload(buf, np.arange(8, dtype=np.uint8))
    env.cl.Close()
    env.queue.ExecuteCommandLists(1, [env.cl])
    env.queue.Signal(fence, 9)
    assert fence.SetEventOnCompletion(9, None) == dml.S_OK
    assert fence.GetCompletedValue() == 9


# ---- feature queries, device creation, interfaces ---------------------------------------------

def test_check_feature_support_feature_levels_per_level():
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    for level in FEATURE_LEVELS:
        with feature_level(level):
            dev = dml.DMLCreateDevice(d3d, 0)
        query = dml.DML_FEATURE_QUERY_FEATURE_LEVELS(len(FEATURE_LEVELS), list(FEATURE_LEVELS))
        data = dev.CheckFeatureSupport(dml.DML_FEATURE_FEATURE_LEVELS, query)
        assert data.MaxSupportedFeatureLevel == level
        # Only values from the request come back (ns-directml-dml_feature_data_feature_levels).
        query = dml.DML_FEATURE_QUERY_FEATURE_LEVELS(2, [0x1000, 0x2000])
        data = dev.CheckFeatureSupport(dml.DML_FEATURE_FEATURE_LEVELS, query)
        assert data.MaxSupportedFeatureLevel == (0x2000 if level >= 0x2000 else 0x1000)


def test_check_feature_support_tensor_data_types_per_level():
    """IsSupported follows the support tables of the implemented operators at the device's
    level: FLOAT32 and FLOAT16 everywhere; FLOAT64 arrives no later than 4_1, where
    ELEMENT_WISE_IDENTITY's table lists it."""
    d3d = dml.D3D12CreateDevice(None)

    def supported(dev, dt):
        q = dml.DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT(dt)
        data = dev.CheckFeatureSupport(dml.DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT, q)
        return bool(data.IsSupported)

    from dmlsim._core import registry
    from dmlsim._schema.operators_generated import OPERATORS
    for level in FEATURE_LEVELS:
        with feature_level(level):
            dev = dml.DMLCreateDevice(d3d)
        for dt in dml.DML_TENSOR_DATA_TYPE:
            short = dt.name.replace("DML_TENSOR_DATA_TYPE_", "")
            expected = False
            for name in registry.names():
                schema = OPERATORS[name]
                blocks = [b for b in schema["support"] if b["feature_level"] <= level]
                if schema["introduced"] <= level and blocks:
                    top = max(b["feature_level"] for b in blocks)
                    expected |= any(short in r["types"] for b in blocks
                                    if b["feature_level"] == top for r in b["tensors"])
            assert supported(dev, dt) == expected, (hex(level), short)
        assert supported(dev, dml.DML_TENSOR_DATA_TYPE_FLOAT32)
        assert supported(dev, dml.DML_TENSOR_DATA_TYPE_FLOAT16)
        if level >= 0x4100:
            assert supported(dev, dml.DML_TENSOR_DATA_TYPE_FLOAT64)


def test_check_feature_support_unknown_feature_is_unsupported():
    """'it returns DXGI_ERROR_UNSUPPORTED if the DML_FEATURE is unrecognized or unsupported'
    (IDMLDevice::CheckFeatureSupport page)."""
    dev = dml.DMLCreateDevice(dml.D3D12CreateDevice(None))
    with pytest.raises(dml.HResultError) as info:
        dev.CheckFeatureSupport(99, None)
    assert info.value.hresult == dml.DXGI_ERROR_UNSUPPORTED


def test_dml_create_device1_minimum_feature_level():
    """'If this version of DirectML doesn't support the minimumFeatureLevel requested, then
    this function will return DXGI_ERROR_UNSUPPORTED' (DMLCreateDevice1 page)."""
    d3d = dml.D3D12CreateDevice(None)
    with feature_level(0x5000):
        dev = dml.DMLCreateDevice1(d3d, 0, dml.DML_FEATURE_LEVEL_5_0)
        q = dml.DML_FEATURE_QUERY_FEATURE_LEVELS(1, [dml.DML_FEATURE_LEVEL_5_0])
        assert dev.CheckFeatureSupport(dml.DML_FEATURE_FEATURE_LEVELS, q).MaxSupportedFeatureLevel \
            == dml.DML_FEATURE_LEVEL_5_0
        with pytest.raises(dml.HResultError) as info:
            dml.DMLCreateDevice1(d3d, 0, dml.DML_FEATURE_LEVEL_5_1)
        assert info.value.hresult == dml.DXGI_ERROR_UNSUPPORTED
    assert dml.DMLCreateDevice1(d3d, 0, dml.DML_FEATURE_LEVEL_6_4) is not None


def test_query_interface():
    d3d = dml.D3D12CreateDevice(None)
    plain = dml.DMLCreateDevice(d3d, dml.DML_CREATE_DEVICE_FLAG_NONE)
    assert plain.QueryInterface(dml.IDMLDevice1) is plain
    assert plain.QueryInterface(dml.IDMLDevice) is plain
    assert plain.As(dml.IDMLDevice1) is plain
    with pytest.raises(dml.HResultError) as info:
        plain.QueryInterface(dml.IDMLDebugDevice)
    assert info.value.hresult == dml.E_NOINTERFACE
    with pytest.raises(dml.HResultError) as info:
        plain.QueryInterface(dml.ID3D12Device)
    assert info.value.hresult == dml.E_NOINTERFACE
    debug = dml.DMLCreateDevice(d3d, dml.DML_CREATE_DEVICE_FLAG_DEBUG)
    dbg = debug.QueryInterface(dml.IDMLDebugDevice)
    assert isinstance(dbg, dml.IDMLDebugDevice)
    assert plain.GetParentDevice() is d3d
    op = plain.CreateOperator(add_desc())
    assert op.GetDevice() is plain
    with pytest.raises(dml.HResultError) as info:
        op.QueryInterface(dml.IDMLCompiledOperator)
    assert info.value.hresult == dml.E_NOINTERFACE


def test_enum_adapters_past_the_last_is_not_found():
    import jax
    factory = dml.CreateDXGIFactory1()
    n = len(jax.devices())
    for i in range(n):
        assert factory.EnumAdapters(i).GetDesc1().Description.startswith("dmlsim adapter")
    with pytest.raises(dml.HResultError) as info:
        factory.EnumAdapters(n)
    assert info.value.hresult == dml.DXGI_ERROR_NOT_FOUND


def test_map_default_heap_is_invalid(shared_env):
    buf = shared_env.buffer(16)
    with pytest.raises(dml.HResultError) as info:
        buf.Map(0, None)
    assert info.value.hresult == dml.E_INVALIDARG
    up = shared_env.buffer(16, dml.D3D12_HEAP_TYPE_UPLOAD)
    mapped = up.Map(0, None)
    assert mapped.dtype == np.uint8 and mapped.shape == (16,)
    mapped[:] = 7
    assert up.Map(0, None)[3] == 7


# ---- structs and unions --------------------------------------------------------------------

def test_scalar_union_members_alias_the_same_bytes():
    u = dml.DML_SCALAR_UNION()
    assert u.Bytes == bytes(8) and u.UInt64 == 0
    u.Float32 = 1.0
    assert u.UInt32 == 0x3F800000
    assert u.Bytes == bytes.fromhex("0000803f00000000")
    u.Int8 = -1  # narrower members leave the upper bytes alone
    assert u.UInt8 == 255 and u.UInt32 == 0x3F8000FF
    u.Float64 = -0.0
    assert u.UInt64 == 0x8000000000000000 and u.Int64 == -2**63
    u.UInt16 = 0x7E01
    assert u.as_type(np.float16).view(np.uint16) == 0x7E01
    with pytest.raises(OverflowError):
        u.UInt8 = 256


def test_struct_defaults_and_positional_construction():
    b = dml.DML_BUFFER_TENSOR_DESC()
    assert (b.DataType, b.Flags, b.DimensionCount, b.Sizes, b.Strides,
            b.TotalTensorSizeInBytes, b.GuaranteedBaseOffsetAlignment) == \
        (0, 0, 0, None, None, 0, 0)
    b = dml.DML_BUFFER_TENSOR_DESC(dml.DML_TENSOR_DATA_TYPE_FLOAT16, 0, 2, [2, 3], None, 12)
    assert (b.DataType, b.DimensionCount, b.Sizes, b.TotalTensorSizeInBytes) == (2, 2, [2, 3], 12)
    sb = dml.DML_SCALE_BIAS(2.0, 1.0)
    assert (sb.Scale, sb.Bias) == (2.0, 1.0)
    assert dml.D3D12_RESOURCE_DESC().SampleDesc.Count == 0  # by-value struct, zeroed
    with pytest.raises(TypeError):
        dml.DML_SCALE_BIAS(1.0, 2.0, 3.0)
    with pytest.raises(TypeError):
        dml.DML_SCALE_BIAS(Scael=1.0)
    with pytest.raises(AttributeError):
        sb.Scael = 1.0
    assert dml.DML_OPERATOR_DESC().Desc is None


def test_descs_are_not_retained(shared_env):
    """'Descs need not outlive the call' (docs/calling_convention.md): mutating
    the desc after CreateOperator changes nothing about the operator."""
    env = shared_env
    t = tensor(np.float32, [4])
    desc = dml.DML_OPERATOR_DESC(dml.DML_OPERATOR_ELEMENT_WISE_IDENTITY,
                                 dml.DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC(t, t, None))
    op = env.dml.CreateOperator(desc)
    t.Desc.Sizes[0] = 1000
    t.Desc.DataType = dml.DML_TENSOR_DATA_TYPE_INT8
    desc.Desc.ScaleBias = dml.DML_SCALE_BIAS(100.0, 100.0)
    desc.Type = dml.DML_OPERATOR_ELEMENT_WISE_ADD
    compiled = env.dml.CompileOperator(op, 0)
    init = env.dml.CreateOperatorInitializer(1, [compiled])
    table, heap, _ = env.table(init)
    env.cl.SetDescriptorHeaps(1, [heap])
    env.recorder.RecordDispatch(env.cl, init, table)
    env.flush()
    assert compiled.GetBindingProperties().RequiredDescriptorCount == 4  # 1 in + 1 out + 2
    src = env.device_buffer(np.float32([1.5, -2, 3, 4]))
    out = env.buffer(16)
    env.dispatch(compiled, [binding(src)], [binding(out)])
    np.testing.assert_array_equal(env.read(out).view(np.float32), [1.5, -2, 3, 4])


def test_hello_directml_output_equals_input(capsys):
    spec = importlib.util.spec_from_file_location("hello_directml",
                                                  ROOT / "examples" / "hello_directml.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    inputs, outputs = mod.main()
    assert outputs.dtype == np.float32 and outputs.shape == (24,)
    np.testing.assert_array_equal(outputs, inputs)
    np.testing.assert_array_equal(outputs, np.float32(1.618))
    printed = capsys.readouterr().out
    assert "input tensor: 1.62" in printed and "output tensor: 1.618000" in printed

"""Issue 30's argument checks: C's UINT parameters refuse negative, non-integral, bool and None
values with E_INVALIDARG naming the method, the parameter and the value (DMLCalcBufferTensorSize
returned -12 for a size of -1), and the two NULL checks where D3D12 answers E_INVALIDARG, not
E_POINTER."""
import numpy as np
import pytest

import dmlsim as dml

F32 = dml.DML_TENSOR_DATA_TYPE_FLOAT32


@pytest.mark.parametrize("args, words", [
    ((F32, 2, [-1, 3]), "sizes[0] is -1"),
    ((F32, 2, [2.0, 3]), "sizes[0] is 2.0"),
    ((F32, 2, np.array([2.0, 3.0])), "sizes[0] is"),
    ((F32, 2, [True, 3]), "sizes[0] is True"),
    ((F32, 2, [2, 1 << 32]), "sizes[1] is 4294967296"),
    ((F32, 3, [2, 3]), "dimensionCount is 3 but sizes has 2 values"),
    ((F32, -1, [2, 3]), "dimensionCount is -1"),
    ((None, 2, [2, 3]), "dataType is None"),
    ((F32, 2, None), "sizes is None"),
    ((F32, 2, [2, 3], [1]), "strides has 1 values for 2 dimensions"),
    ((F32, 2, [2, 3], [3, -1]), "strides[1] is -1"),
])
def test_calc_buffer_tensor_size_refuses_what_is_not_a_uint(args, words):
    with pytest.raises(dml.HResultError) as e:
        dml.DMLCalcBufferTensorSize(*args)
    assert e.value.hresult == dml.E_INVALIDARG
    assert e.value.message.startswith("DMLCalcBufferTensorSize: ") and words in e.value.message


def test_calc_buffer_tensor_size_still_computes_the_page_formula():
    assert dml.DMLCalcBufferTensorSize(F32, 2, [2, 3]) == 24
    assert dml.DMLCalcBufferTensorSize(F32, 2, np.array([2, 3])) == 24
    assert dml.DMLCalcBufferTensorSize(dml.DML_TENSOR_DATA_TYPE_FLOAT16, 2, [3, 3], [0, 1]) == 8
    assert dml.DMLCalcBufferTensorSize(F32, 2, [2, 3, 4]) == 24  # the first dimensionCount
    assert dml.DMLCalcBufferTensorSize(999, 1, [4]) == 0  # the page's helper: unknown type


def test_none_flags_and_heap_type_are_invalid_arguments_as_in_d3d12():
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    dev = dml.DMLCreateDevice(d3d, 0)
    a = np.ones(3, np.float32)
    op = dev.CreateOperator(dml.operator_desc("ELEMENT_WISE_IDENTITY", InputTensor=a,
                                              OutputTensor=a))
    for flags in (None, 1.0, -1):
        with pytest.raises(dml.HResultError) as e:
            dev.CompileOperator(op, flags)
        assert e.value.hresult == dml.E_INVALIDARG and "flags is" in e.value.message
    with pytest.raises(dml.HResultError) as e:
        d3d.CreateCommittedResource(dml.CD3DX12_HEAP_PROPERTIES(None), 0,
                                    dml.CD3DX12_RESOURCE_DESC.Buffer(64), 0, None)
    assert e.value.hresult == dml.E_INVALIDARG
    assert "pHeapProperties.Type is None" in e.value.message
    assert dev.GetDeviceRemovedReason() == dml.S_OK


@pytest.mark.parametrize("value", [None, "0.5", True])
def test_a_float_field_holds_a_number(value):
    """C's {} gives 0.0 (the struct's default); a None, a string or a bool set in a FLOAT
    field is E_INVALIDARG naming it (None used to become NaN: ELU with Alpha=None returned
    NaN, CLIP with Min=None lost its lower bound)."""
    a = np.float32([-2, 0.5, 3])
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    dev = dml.DMLCreateDevice(d3d, 0)
    desc = dml.operator_desc("ACTIVATION_ELU", InputTensor=a, OutputTensor=a)
    desc.Desc.Alpha = value
    with pytest.raises(dml.HResultError) as e:
        dev.CreateOperator(desc)
    assert e.value.hresult == dml.E_INVALIDARG
    assert f"Alpha is {value!r}; a FLOAT is required" in e.value.message
    desc.Desc.Alpha = 0.0  # C's {}: ELU with alpha 0 is ReLU
    np.testing.assert_array_equal(dml.run(desc, a), np.float32([-0.0, 0.5, 3]))


def test_an_integer_field_set_to_none_is_refused_like_a_float_field():
    """An omitted field is C's 0 (the struct's default); an explicit None in an integer or
    enum field names no number: E_INVALIDARG naming the field (REDUCE's Function=None used to
    become ARGMAX, 0)."""
    a = np.zeros((2, 3), np.float32)
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    dev = dml.DMLCreateDevice(d3d, 0)
    desc = dml.operator_desc("REDUCE", InputTensor=a, OutputTensor=np.zeros((2, 1), np.float32),
                             Function=dml.DML_REDUCE_FUNCTION_SUM, Axes=[1])
    desc.Desc.Function = None
    with pytest.raises(dml.HResultError) as e:
        dev.CreateOperator(desc)
    assert e.value.hresult == dml.E_INVALIDARG
    assert "Function is None; a DML_REDUCE_FUNCTION is required (0 is C's default)" in \
        e.value.message
    assert dml.DML_REDUCE_OPERATOR_DESC().Function == 0  # omitted: C's {}


@pytest.mark.parametrize("sizes", [np.array([2.0, 3.0]), [2, 3.0], [True, 3], ["2", 3]])
def test_sizes_are_integers_not_floats_bools_or_strings(sizes):
    """DML_BUFFER_TENSOR_DESC.Sizes is a UINT array: np.array([2., 3.]) was accepted as
    [2, 3]; now it is refused, as every value that is not an integer."""
    b = dml.DML_BUFFER_TENSOR_DESC(F32, 0, 2, sizes, None, 24)
    t = dml.DML_TENSOR_DESC(dml.DML_TENSOR_TYPE_BUFFER, b)
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    dev = dml.DMLCreateDevice(d3d, 0)
    with pytest.raises(dml.HResultError) as e:
        dev.CreateOperator(dml.DML_OPERATOR_DESC(dml.DML_OPERATOR_ELEMENT_WISE_IDENTITY,
                                                 dml.DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC(t, t)))
    assert e.value.hresult == dml.E_INVALIDARG and "InputTensor.Sizes[" in e.value.message \
        and "must be an integer" in e.value.message


def test_a_worker_waiting_forever_while_the_main_thread_joins_it_fails_instead_of_hanging():
    """Issue 30.5: an INFINITE wait nothing submitted can satisfy, from a worker thread, while
    the main thread waits in join(): E_FAIL naming the fence, the value and the value reached,
    once no CPU Signal touched the fence for the wait timeout (set short here). A Signal from
    another thread within the timeout still releases such a wait."""
    import threading
    import time
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    fence = d3d.CreateFence(3, 0)
    fence.SetName("gate")
    errors, done = [], []

    def worker(value):
        try:
            fence.SetEventOnCompletion(value, None)
            done.append(value)
        except dml.HResultError as e:
            errors.append(e)
    old = None
    dml.set_wait_timeout(0.3)
    try:
        t = threading.Thread(target=worker, args=(5,))
        start = time.monotonic()
        t.start()
        t.join(10)
        assert not t.is_alive() and time.monotonic() - start < 5
        (e,) = errors
        assert e.hresult == dml.E_FAIL
        assert "fence gate is at 3 and nothing submitted will signal 5" in e.message
        assert "DMLSIM_WAIT_TIMEOUT" in e.message
        t = threading.Thread(target=worker, args=(4,))
        t.start()
        time.sleep(0.1)
        fence.Signal(4)
        t.join(10)
        assert done == [4] and len(errors) == 1
    finally:
        dml.set_wait_timeout(old or 60)
    for bad in (0, -1, "1", True, None):
        with pytest.raises(dml.HResultError) as e:
            dml.set_wait_timeout(bad)
        assert e.value.hresult == dml.E_INVALIDARG


def test_the_memory_budget_is_cumulative_and_released_memory_returns():
    """Issue 30.4: two buffers that each fit but not together: the second is E_OUTOFMEMORY at
    CreateCommittedResource (naming what is committed and the budget); after the first is
    released (Release to 0, or dropped) the same creation succeeds."""
    import subprocess
    import sys
    code = """
import dmlsim as dml
d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
def buf():
    return d3d.CreateCommittedResource(
        dml.CD3DX12_HEAP_PROPERTIES(dml.D3D12_HEAP_TYPE_DEFAULT), dml.D3D12_HEAP_FLAG_NONE,
        dml.CD3DX12_RESOURCE_DESC.Buffer(600_000), dml.D3D12_RESOURCE_STATE_COMMON, None)
a = buf()
try:
    buf()
    raise SystemExit("no E_OUTOFMEMORY")
except dml.HResultError as e:
    assert e.hresult == dml.E_OUTOFMEMORY, e
    assert "on top of the 600000 bytes committed" in e.message and "1000000" in e.message, e
assert a.Release() == 0
b = buf()            # the released bytes are free again
del b
c = buf()            # and so are a dropped resource's
print("ok")
"""
    env = dict(__import__("os").environ, DMLSIM_MEMORY_BUDGET="1000000")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_work_using_a_released_buffer_removes_the_device_instead_of_reading_freed_memory():
    """Issue 30.3: a copy recorded with a buffer whose last reference was released (Release
    returned 0) and executed afterwards: the device is removed naming the buffer (the debug
    layer's OBJECT_DELETED_WHILE_STILL_IN_USE is in tests/test_debug_layer_runtime.py)."""
    from helpers import Env
    env = Env()
    src = env.upload_buffer(np.arange(4, dtype=np.uint32))
    src.SetName("src")
    dst = env.buffer(16)
    env.cl.CopyBufferRegion(dst, 0, src, 0, 16)
    env.cl.Close()
    assert src.Release() == 0
    env.queue.ExecuteCommandLists([env.cl])
    assert env.d3d.GetDeviceRemovedReason() == dml.DXGI_ERROR_DEVICE_REMOVED
    with pytest.raises(dml.HResultError) as e:
        env.d3d.CreateFence(0, 0).Signal(1)
    assert "'src' was released (its last reference: Release returned 0) but the command " \
           "list still uses it" in e.value.message

"""ORT's IOBinding and OrtValue on dmlsim.onnx sessions: inputs and outputs kept on the device.

The model is built so that every result is exact in float32 (small integers times small
integers, summed): the device-resident run must equal ``run``'s bytes and ONNX Runtime's CPU
provider's, bit for bit."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import dmlsim as dml
import dmlsim.onnx as donnx
from dmlsim.onnx import OrtValue

IR = 10  # an IR version every supported ONNX Runtime reads


def _model(batch="batch"):
    """x [batch, 4] -> MatMul(w [4, 4]) -> Relu -> y; mask = y > 2 (BOOL); z = x + 1."""
    w = numpy_helper.from_array((np.arange(16, dtype=np.float32).reshape(4, 4) % 5) - 2, "w")
    two = numpy_helper.from_array(np.float32(2), "two")
    one = numpy_helper.from_array(np.float32(1), "one")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"]),
             helper.make_node("Greater", ["y", "two"], ["mask"]),
             helper.make_node("Add", ["x", "one"], ["z"])]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 4])
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 4]),
            helper.make_tensor_value_info("mask", TensorProto.BOOL, [batch, 4]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, [batch, 4])]
    return helper.make_model(helper.make_graph(nodes, "io", [x], outs, [w, two, one]),
                             opset_imports=[helper.make_opsetid("", 17)], ir_version=IR)


def _x(rows, seed=0):
    return np.random.default_rng(seed).integers(-3, 4, (rows, 4)).astype(np.float32)


def _same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_inputs_and_outputs_on_the_device_give_run_and_onnx_runtimes_bits():
    m = _model()
    s, ref = donnx.InferenceSession(m), ort.InferenceSession(
        m.SerializeToString(), providers=["CPUExecutionProvider"])
    x = _x(3)
    want = ref.run(None, {"x": x})
    assert all(_same(a, b) for a, b in zip(s.run(None, {"x": x}), want))
    b = s.io_binding()
    b.bind_ortvalue_input("x", OrtValue.ortvalue_from_numpy(x, "dml", 0))
    b.bind_output("y", "dml")
    b.bind_output("mask", "dml")
    b.bind_output("z")  # 'cpu'
    s.run_with_iobinding(b)
    outs = b.get_outputs()
    assert [o.device_name() for o in outs] == ["dml", "dml", "cpu"]
    assert [o.data_type() for o in outs] == ["tensor(float)", "tensor(bool)", "tensor(float)"]
    assert [o.shape() for o in outs] == [[3, 4]] * 3
    assert all(_same(a, b) for a, b in zip(b.copy_outputs_to_cpu(), want))
    # the list it ran reads its own input buffers and copies nothing in or out
    kinds = [type(r).__name__ for r in s.last_plan._device._cl._core.records]
    assert sum("Dispatch" in k for k in kinds) == 1 and not any("Copy" in k for k in kinds)


def test_a_device_output_fed_back_as_the_next_input_and_to_run():
    """A loop that keeps its state on the device (as a KV cache): z = x + 1 fed back as x."""
    s = donnx.InferenceSession(_model())
    b = s.io_binding()
    b.bind_output("z", "dml")
    state = OrtValue.ortvalue_from_numpy(_x(2), "dml")
    host = _x(2)
    for _ in range(4):
        b.bind_ortvalue_input("x", state)
        s.run_with_iobinding(b)
        (state,) = b.get_outputs()
        host = s.run(["z"], {"x": host})[0]
        assert _same(state.numpy(), host)
    # a device OrtValue is a feed of plain run too
    assert _same(s.run(["z"], {"x": state})[0], host + 1)


def test_a_bound_device_input_stays_valid_across_runs_of_any_kind():
    s = donnx.InferenceSession(_model())
    x = OrtValue.ortvalue_from_numpy(_x(2), "dml")
    b = s.io_binding()
    b.bind_ortvalue_input("x", x)
    b.bind_output("y", "dml")
    s.run_with_iobinding(b)
    first = b.copy_outputs_to_cpu()[0]
    s.run(None, {"x": _x(2, seed=5)})  # the host path writes its own buffers
    s.run_with_iobinding(b)
    assert _same(b.copy_outputs_to_cpu()[0], first) and _same(x.numpy(), _x(2))


def test_outputs_land_in_bound_ortvalues_and_shapes_pick_their_plans():
    s = donnx.InferenceSession(_model())
    for rows in (1, 5):  # a dynamic dimension: one plan (and one device list) per signature
        x = _x(rows, seed=rows)
        y_cpu = OrtValue.ortvalue_from_shape_and_type([rows, 4], np.float32)
        z_dev = OrtValue.ortvalue_from_shape_and_type([rows, 4], TensorProto.FLOAT, "dml", 0)
        b = s.io_binding()
        b.bind_cpu_input("x", x)
        b.bind_ortvalue_output("y", y_cpu)
        b.bind_ortvalue_output("z", z_dev)
        s.run_with_iobinding(b)
        got = b.get_outputs()
        assert got[0] is y_cpu and got[1] is z_dev
        want_y, want_z = s.run(["y", "z"], {"x": x})
        assert _same(y_cpu.numpy(), want_y) and _same(z_dev.numpy(), want_z)
    assert s.plan_cache_info().currsize == 2


def _hr(fn, code, *words):
    with pytest.raises(dml.HResultError) as e:
        fn()
    assert e.value.hresult == code, e.value.message
    for w in words:
        assert w in e.value.message
    return e.value.message


def test_misuse_is_named():
    s, other = donnx.InferenceSession(_model()), donnx.InferenceSession(_model())
    x = _x(2)
    b = s.io_binding()
    E = dml.E_INVALIDARG
    _hr(lambda: b.bind_cpu_input("nope", x), E, "bind_cpu_input", "'nope'", "x")
    _hr(lambda: b.bind_cpu_input("x", [1.0]), E, "numpy.ndarray")
    _hr(lambda: b.bind_ortvalue_input("x", x), E, "bind_ortvalue_input", "an OrtValue")
    _hr(lambda: b.bind_output("x"), E, "bind_output", "outputs")
    _hr(lambda: b.bind_output("y", "cuda"), E, "'cuda'", "'dml'")
    _hr(lambda: b.bind_output("y", "dml", 99), E, "device_id is 99")
    _hr(lambda: b.bind_output("y", "cpu", 0, None, [-1, 4]), E, "shape")
    _hr(lambda: b.bind_output("y", buffer_ptr=1 << 20), dml.E_NOTIMPL, "bind_ortvalue_output")
    _hr(lambda: b.bind_input("x", "dml", 0, np.float32, [2, 4], 1 << 20), dml.E_NOTIMPL,
        "bind_ortvalue_input")
    _hr(lambda: OrtValue.ortvalue_from_numpy([1.0], "dml"), E, "numpy_obj is a list")
    _hr(lambda: OrtValue.ortvalue_from_numpy(x, "gpu"), E, "device_type is 'gpu'")
    _hr(lambda: OrtValue.ortvalue_from_numpy(x, "cpu", 1), E, "device_id is 1")
    _hr(lambda: OrtValue.ortvalue_from_shape_and_type([2, 4.0], np.float32), E, "shape")
    _hr(lambda: OrtValue.ortvalue_from_numpy(x, "dml").data_ptr(), dml.E_NOTIMPL, "data_ptr")
    _hr(lambda: OrtValue.ortvalue_from_numpy(x).update_inplace(x[:1]), E, "update_inplace")
    b.bind_ortvalue_input("x", OrtValue.ortvalue_from_numpy(x, "dml"))
    _hr(lambda: s.run_with_iobinding(b), E, "no output is bound")
    _hr(lambda: other.run_with_iobinding(b), E, "not an IOBinding of this session")
    b.bind_ortvalue_output("y", OrtValue.ortvalue_from_shape_and_type([3, 4], np.float32, "dml"))
    _hr(lambda: s.run_with_iobinding(b), E, "output 'y'", "[2, 4]", "[3, 4]")
    b.bind_output("y", "dml", 0, np.float16)
    _hr(lambda: s.run_with_iobinding(b), E, "output 'y'", "float16")
    b.bind_output("y", "dml")
    b.bind_ortvalue_input("x", OrtValue.ortvalue_from_numpy(x.astype(np.float64), "dml"))
    _hr(lambda: s.run_with_iobinding(b), E, "input 'x'", "tensor(double)", "nothing is cast")
    b.bind_ortvalue_input("x", OrtValue.ortvalue_from_numpy(x, "dml"))
    s.run_with_iobinding(b)  # a refused run changed nothing
    assert _same(b.copy_outputs_to_cpu()[0], s.run(["y"], {"x": x})[0])
    b.clear_binding_outputs()
    assert b.get_outputs() == []


def test_the_buffer_interop_under_it_copies_nothing_and_checks_its_arguments():
    """dml.resource_array / set_resource_array / lend_resource: a DEFAULT buffer's bytes are
    one uint32 JAX array, adopted and handed out without copies; a lent buffer written again
    gets a new array and the one handed out keeps its bytes."""
    import jax
    from dmlsim._pythonic.run import _buffer, _submit, device_state
    st = device_state(donnx.InferenceSession(_model()).device)
    d3d = st["d3d"]
    src, dst, up = _buffer(d3d, 12, 1), _buffer(d3d, 12, 1), _buffer(d3d, 12, 2)
    assert dml.buffer_words(12) == 4 and dml.buffer_words(0) == 2
    words = jax.device_put(np.arange(4, dtype=np.uint32) + 7)
    dml.set_resource_array(src, words)
    assert dml.resource_array(src) is words
    dml.lend_resource(dst)
    cl = d3d.CreateCommandList(0, dml.D3D12_COMMAND_LIST_TYPE_DIRECT,
                               d3d.CreateCommandAllocator(dml.D3D12_COMMAND_LIST_TYPE_DIRECT), None)
    cl.CopyBufferRegion(dst, 0, src, 0, 12)
    cl.Close()
    _submit(st, cl)
    first = dml.resource_array(dst)
    assert np.asarray(first)[:3].tolist() == [7, 8, 9]
    dml.set_resource_array(src, jax.device_put(np.full(4, 1, np.uint32)))
    _submit(st, cl)  # written again: a new array; the one handed out is untouched
    assert np.asarray(dml.resource_array(dst))[:3].tolist() == [1, 1, 1]
    assert np.asarray(first)[:3].tolist() == [7, 8, 9]
    E = dml.E_INVALIDARG
    _hr(lambda: dml.resource_array(up), E, "not on a DEFAULT heap")
    _hr(lambda: dml.resource_array(np.zeros(3)), E, "an ID3D12Resource")
    _hr(lambda: dml.set_resource_array(src, np.zeros(4, np.uint32)), E, "4 words")
    _hr(lambda: dml.set_resource_array(src, jax.device_put(np.zeros(3, np.uint32))), E,
        "uint32 [3]", "4 words")
    _hr(lambda: dml.lend_resource(src), E, "was used already")
    _hr(lambda: dml.buffer_words(-1), E, "width is -1")

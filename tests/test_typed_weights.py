"""Whole-list programs read OWNED_BY_DML weights as typed arrays made once per content of the
persistent resource (``steps.typed_views``), not sliced out of its uint32 storage at every
execution; ``DMLSIM_TYPED_WEIGHTS=0`` (``config.settings.typed_weights``) keeps the slicing.
Both give the same bits, and a typed copy follows the persistent resource's bytes."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from onnx import TensorProto, helper, numpy_helper

import dmlsim as dml
import dmlsim.onnx as donnx
from dmlsim._core import config, steps
from dmlsim._core.memory import DeviceMemory
from dmlsim._core.plancache import PlanCache
from dmlsim._core.tensor import TensorSpec
from dmlsim._core.typed_views import in_order


def _model(w, b):
    """y = relu(x @ W + B) with W and B initializers (OWNED_BY_DML in a session)."""
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["m"]), helper.make_node("Add", ["m", "B"], ["s"]),
         helper.make_node("Relu", ["s"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", w.shape[0]])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", w.shape[1]])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _typed_on_and_off(monkeypatch, model, feeds, runs=1):
    """({typed weights on/off: the first output of each of ``runs`` runs of a new session},
    [the views each call of typed_views asked for]); with them off, no call at all."""
    calls = []
    real = steps.typed_views
    monkeypatch.setattr(steps, "typed_views", lambda *a: calls.append(a[1]) or real(*a))
    got = {}
    for typed in (True, False):
        monkeypatch.setattr(config.settings, "typed_weights", typed)
        session = donnx.InferenceSession(model)
        before = len(calls)
        got[typed] = [session.run(None, feeds)[0] for _ in range(runs)]
        assert (len(calls) > before) == typed  # off: no typed views at all
    return got, calls


def test_a_session_reads_its_weights_as_typed_arrays_with_the_same_bits(monkeypatch):
    rng = np.random.default_rng(7)
    w = rng.standard_normal((128, 160)).astype(np.float32)  # 80 KiB
    b = rng.standard_normal(160).astype(np.float32)  # 640 bytes
    x = rng.standard_normal((5, 128)).astype(np.float32)
    got, calls = _typed_on_and_off(monkeypatch, _model(w, b), {"x": x}, runs=3)
    # each run of the typed session asked for W's view; B, under TYPED_MIN_BYTES, stays a slice
    assert {tuple(spec.sizes for _, spec, _ in views) for views in calls} == {((1, 1, 128, 160),)}
    want = np.maximum(x.astype(np.float64) @ w + b, 0)
    for typed, runs in got.items():
        for y in runs:
            np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
            assert y.view(np.uint32).tolist() == got[False][0].view(np.uint32).tolist()


def test_typed_views_follow_the_persistent_resource_bytes():
    """A typed copy is made once per content (``DeviceMemory.stamp``): asked again for the
    same bytes it is the same array; after the storage is written, a new copy. Views of a
    shape that recurs share one reader, whatever their offsets."""
    mem = DeviceMemory(64)
    spec = TensorSpec(dml.DML_TENSOR_DATA_TYPE_FLOAT32, (2, 3), None, 0, 24)
    half = TensorSpec(dml.DML_TENSOR_DATA_TYPE_FLOAT16, (4,), None, 0, 8)
    first = np.arange(16, dtype=np.float32)
    mem.array = jnp.asarray(first.view(np.uint32))
    cache = PlanCache()
    small = TensorSpec(dml.DML_TENSOR_DATA_TYPE_FLOAT32, (2,), None, 0, 8)
    views = ((8, spec, None), (32, half, None), (50, half, None), (40, small, None),
             (48, small, None), (56, small, None))
    got = steps.typed_views(mem, views, cache)
    a, h, h50 = got[:3]
    assert np.asarray(a).tolist() == first[2:8].reshape(2, 3).tolist()
    assert np.asarray(h).view(np.uint16).tolist() == \
        first[8:10].view(np.uint16).tolist()
    assert np.asarray(h50).view(np.uint16).tolist() == \
        first.view(np.uint16)[25:29].tolist()  # a half word in
    assert [np.asarray(g).tolist() for g in got[3:]] == \
        [first[10:12].tolist(), first[12:14].tolist(), first[14:16].tolist()]
    again = steps.typed_views(mem, views, cache)
    # two programs: one reader for the shape that recurs 3 times (SHARED_READER_VIEWS), its
    # offset an argument, and one for the others, their offsets constants
    assert all(x is y for x, y in zip(again, got)) and cache.counts["traced"] == 2
    second = -first
    mem.array = jnp.asarray(second.view(np.uint32))
    (a2,) = steps.typed_views(mem, views[:1], cache)
    assert a2 is not a and np.asarray(a2).tolist() == second[2:8].reshape(2, 3).tolist()
    # a view asked for in a dimension order: its copy is made transposed, and in_order
    # (what the program applies) gives the desc's order back, bit for bit
    (t,) = steps.typed_views(mem, ((8, spec, (1, 0)),), cache)
    assert np.asarray(t).tolist() == second[2:8].reshape(2, 3).T.tolist()
    assert np.asarray(in_order(t, (1, 0))).tobytes() == np.asarray(a2).tobytes()


def test_a_convolutions_filter_is_copied_in_the_layout_the_cpu_convolution_reads(monkeypatch):
    """On a CPU, a 3x3 Conv's OWNED_BY_DML filter (73.7 KB, over TYPED_MIN_BYTES) is copied
    once in HWIO, the order XLA's CPU convolutions read (``_conv_cpu.FILTER_ORDER``), instead
    of transposed at every run; the program transposes it back, which XLA folds. The same
    bits as the session reading it out of the storage at every run (typed weights off); on
    another backend the copy keeps the desc's order."""
    import jax
    rng = np.random.default_rng(8)
    w = rng.standard_normal((64, 32, 3, 3)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "W")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=10).SerializeToString()
    x = rng.standard_normal((1, 32, 8, 8)).astype(np.float32)
    got, calls = _typed_on_and_off(monkeypatch, model, {"x": x})
    want = (2, 3, 1, 0) if jax.default_backend() == "cpu" else None
    assert all([(spec.sizes, order) for _, spec, order in views] == [((64, 32, 3, 3), want)]
               for views in calls)
    assert got[True][0].tobytes() == got[False][0].tobytes()

"""A device owns what its work compiled, within a bound, and lets go of it with the device
(docs/architecture.md, "One execution core").

- The plan cache of a device fed many distinct buffer sizes and operator shapes stays within
  its capacity, and the process's memory stops growing once the cache is full (measured: RSS
  after the second half of the shapes is within a bound of RSS after the first half).
- Dropping the last reference to a device (D3D12 and DirectML, with everything made from them)
  frees it: no module-level cache, queue set or run state keeps it alive.
- Programs are shared: two compilations of one desc, and two CompileGraphs of one graph, run
  one program.
"""
from __future__ import annotations

import gc
import resource
import weakref

import numpy as np

import dmlsim as dml
from dmlsim import dmlx
from dmlsim._core.plancache import PlanCache

from helpers import Env, binding, tensor

F32 = np.float32


def _identity(env, n):
    t = tensor(F32, (n,))
    desc = dml.DML_OPERATOR_DESC(dml.DML_OPERATOR_ELEMENT_WISE_IDENTITY,
                                 dml.DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC(t, t))
    return env.compile(desc)


def _run_once(env, n):
    """Upload n floats, run IDENTITY over them, read them back: new sizes and a new shape."""
    x = np.arange(n, dtype=F32)
    src, dst = env.device_buffer(x), env.buffer(4 * n)
    env.flush()
    env.dispatch(_identity(env, n), [binding(src)], [binding(dst)])
    np.testing.assert_array_equal(env.read_as(dst, F32, n), x)
    env.keep.clear()  # the work is done: the helper need not hold its upload buffers and heaps


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_a_device_fed_changing_shapes_stays_within_its_plan_cache():
    env = Env()
    plans = env.d3d._core.plans
    plans.capacity = 24
    for n in range(1, 41):
        _run_once(env, 8 * n)
        assert len(plans) <= plans.capacity
    gc.collect()
    half = _rss_mib()
    for n in range(41, 81):
        _run_once(env, 8 * n)
    gc.collect()
    assert len(plans) <= plans.capacity and plans.counts["traced"] > plans.capacity
    # peak RSS: 40 more shapes (each a few new programs) grow it by well under 100 MiB
    assert _rss_mib() - half < 60, (half, _rss_mib())
    env.check()


def _dmlx_once(device):
    g = dmlx.Graph(device)
    x = dmlx.InputTensor(g, 0, dmlx.TensorDesc(dml.DML_TENSOR_DATA_TYPE_FLOAT32, 0, [1, 1, 1, 4]))
    out = g.compile([x * 2.0])(np.ones((1, 1, 1, 4), F32))  # run state kept on the device
    np.testing.assert_array_equal(out, np.full((1, 1, 1, 4), 2, F32))


def test_dropping_a_device_frees_it():
    env = Env()
    _run_once(env, 16)
    _dmlx_once(env.dml)
    d3d_core = weakref.ref(env.d3d._core)
    dml_core = weakref.ref(env.dml._core)
    plans = weakref.ref(env.d3d._core.plans)
    env.check()
    del env
    gc.collect()
    assert d3d_core() is None and dml_core() is None and plans() is None


def test_programs_are_shared_by_compilations_of_one_desc_and_one_graph():
    env = Env()
    plans = env.d3d._core.plans
    _run_once(env, 32)
    traced = plans.counts["traced"]
    _run_once(env, 32)  # a second CompileOperator of the same desc, new buffers
    assert plans.counts["traced"] == traced
    env.check()


def test_the_plan_cache_evicts_least_recently_used_first():
    cache = PlanCache(capacity=2)
    made = []
    for key in ("a", "b", "a", "c"):
        cache.program((key,), lambda k=key: made.append(k) or k)
    assert made == ["a", "b", "c"] and list(cache.programs) == [("a",), ("c",)]
    assert cache.first_time(("d",)) and not cache.first_time(("d",))
    assert not cache.first_time(("a",))  # compiled already


def test_a_graph_compiled_again_runs_the_program_it_compiled_before():
    """CompileGraph of a graph already compiled shares its program (the graph's signature is
    its structure, not its identity)."""
    env = Env()
    _dmlx_once(env.dml)
    plans = env.d3d._core.plans
    traced = plans.counts["traced"]
    _dmlx_once(env.dml)  # a new Graph, the same nodes: CompileGraph again
    assert plans.counts["traced"] == traced
